#include "lib/capture/pcap_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

namespace sluice {
namespace {

constexpr uint32_t kMagicMicro = 0xa1b2c3d4;
constexpr uint32_t kMagicNano = 0xa1b23c4d;
constexpr uint32_t kMagicPcapng = 0x0a0d0d0a;  // section header block type (palindrome)
constexpr size_t kFileHeader = 24;
constexpr size_t kRecordHeader = 16;

uint32_t load32(const uint8_t* p, bool swapped) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swapped ? __builtin_bswap32(v) : v;
}

uint16_t load16(const uint8_t* p, bool swapped) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return swapped ? __builtin_bswap16(v) : v;
}

// Magic and header fields; false with *error if this is not a pcap we read.
bool parse_header(const std::vector<uint8_t>& b, const std::string& name, PcapCapture* out,
                  std::string* error) {
  if (b.size() < 4) {
    *error = name + " is not a pcap file (" + std::to_string(b.size()) + " bytes)";
    return false;
  }
  const uint32_t magic = load32(b.data(), false);
  if (magic == kMagicPcapng) {
    *error = name + " is a pcapng file; only classic pcap is read (convert it with: editcap -F " +
             "pcap " + name + " out.pcap)";
    return false;
  }
  if (magic == kMagicMicro || magic == kMagicNano) {
    out->swapped = false;
  } else if (magic == __builtin_bswap32(kMagicMicro) || magic == __builtin_bswap32(kMagicNano)) {
    out->swapped = true;
  } else {
    *error = name + " is not a pcap file";
    return false;
  }
  out->nanosecond = load32(b.data(), out->swapped) == kMagicNano;
  if (b.size() < kFileHeader) {
    *error = name + " is truncated (the file header needs 24 bytes)";
    return false;
  }
  const uint16_t major = load16(b.data() + 4, out->swapped);
  const uint16_t minor = load16(b.data() + 6, out->swapped);
  if (major != 2) {
    *error = name + ": unsupported pcap version " + std::to_string(major) + "." +
             std::to_string(minor) + " (expected 2.x)";
    return false;
  }
  out->snaplen = load32(b.data() + 16, out->swapped);
  // The upper bits of the link-type field may carry an FCS length; only the low 16 name the type.
  const uint32_t link_type = load32(b.data() + 20, out->swapped) & 0xFFFF;
  if (link_type != kLinkTypeEthernet) {
    *error = name + ": unsupported link type " + std::to_string(link_type) +
             " (only Ethernet, link type 1, is replayed)";
    return false;
  }
  return true;
}

}  // namespace

bool parse_pcap(std::vector<uint8_t> bytes, const std::string& name, PcapCapture* out,
                std::string* error) {
  *out = PcapCapture{};
  if (!parse_header(bytes, name, out, error)) return false;
  const bool sw = out->swapped;
  const uint64_t frac_ns = out->nanosecond ? 1 : 1000;
  size_t pos = kFileHeader;
  while (pos < bytes.size()) {
    const size_t index = out->records.size();
    if (bytes.size() - pos < kRecordHeader) {
      *error =
          name + ": record " + std::to_string(index) + " is truncated (end of file in its header)";
      return false;
    }
    const uint8_t* h = bytes.data() + pos;
    PcapRecord r;
    r.ts_ns = uint64_t{load32(h, sw)} * 1'000'000'000 + uint64_t{load32(h + 4, sw)} * frac_ns;
    r.caplen = load32(h + 8, sw);
    r.origlen = load32(h + 12, sw);
    r.offset = pos + kRecordHeader;
    if (r.caplen > kMaxPcapRecord) {
      *error = name + ": record " + std::to_string(index) + " claims " + std::to_string(r.caplen) +
               " bytes (corrupt file?)";
      return false;
    }
    if (bytes.size() - r.offset < r.caplen) {
      *error = name + ": record " + std::to_string(index) + " is truncated (" +
               std::to_string(bytes.size() - r.offset) + " of " + std::to_string(r.caplen) +
               " bytes present)";
      return false;
    }
    out->records.push_back(r);
    pos = r.offset + r.caplen;
  }
  out->bytes = std::move(bytes);
  return true;
}

bool read_pcap_file(const std::string& path, PcapCapture* out, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + n);
  const bool failed = std::ferror(f) != 0;
  const int saved = errno;
  std::fclose(f);
  if (failed) {
    *error = "cannot read " + path + ": " + std::strerror(saved);
    return false;
  }
  return parse_pcap(std::move(bytes), path, out, error);
}

}  // namespace sluice
