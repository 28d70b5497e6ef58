#include "lib/net/mac_addr.h"

#include <cstdio>

namespace sluice {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads a decimal number of at most max_digits digits starting at *pos.
bool parse_decimal(std::string_view text, size_t* pos, unsigned max_digits, uint32_t* value) {
  size_t start = *pos;
  uint32_t v = 0;
  while (*pos < text.size() && *pos - start < max_digits && text[*pos] >= '0' &&
         text[*pos] <= '9') {
    v = v * 10 + static_cast<uint32_t>(text[*pos] - '0');
    ++*pos;
  }
  size_t digits = *pos - start;
  if (digits == 0) return false;
  if (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') return false;  // too long
  if (digits > 1 && text[start] == '0') return false;                              // leading zero
  *value = v;
  return true;
}

}  // namespace

bool parse_mac(std::string_view text, MacAddr* out) {
  if (text.size() != 17) return false;
  char sep = text[2];
  if (sep != ':' && sep != '-') return false;
  MacAddr mac{};
  for (size_t i = 0; i < 6; ++i) {
    int hi = hex_value(text[i * 3]);
    int lo = hex_value(text[i * 3 + 1]);
    if (hi < 0 || lo < 0) return false;
    if (i < 5 && text[i * 3 + 2] != sep) return false;
    mac[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  *out = mac;
  return true;
}

std::string format_mac(const MacAddr& mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

bool parse_ipv4(std::string_view text, uint32_t* out) {
  size_t pos = 0;
  uint32_t addr = 0;
  for (int i = 0; i < 4; ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != '.') return false;
      ++pos;
    }
    uint32_t octet;
    if (!parse_decimal(text, &pos, 3, &octet) || octet > 255) return false;
    addr = addr << 8 | octet;
  }
  if (pos != text.size()) return false;
  *out = addr;
  return true;
}

std::string format_ipv4(uint32_t addr) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xFF, (addr >> 8) & 0xFF,
                addr & 0xFF);
  return buf;
}

bool parse_ipv4_prefix(std::string_view text, Ipv4Prefix* out) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return false;
  uint32_t addr;
  if (!parse_ipv4(text.substr(0, slash), &addr)) return false;
  std::string_view len_text = text.substr(slash + 1);
  size_t pos = 0;
  uint32_t len;
  if (!parse_decimal(len_text, &pos, 2, &len) || pos != len_text.size() || len > 32) return false;
  if ((addr & ~prefix_mask(len)) != 0) return false;
  out->addr = addr;
  out->len = static_cast<uint8_t>(len);
  return true;
}

}  // namespace sluice
