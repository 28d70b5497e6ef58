#pragma once
// Hand-assembled frames for the lib/net tests. The checksum here is a plain
// RFC 1071 loop over 16-bit words, written independently of lib/net.

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace sluice::test {

using Bytes = std::vector<uint8_t>;

inline void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v >> 8));
  b.push_back(static_cast<uint8_t>(v));
}

inline void put32(Bytes& b, uint32_t v) {
  put16(b, static_cast<uint16_t>(v >> 16));
  put16(b, static_cast<uint16_t>(v));
}

inline void append(Bytes& b, const Bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

// Plain RFC 1071: sum 16-bit big-endian words in 32 bits, fold carries, invert.
inline uint16_t reference_checksum(const uint8_t* p, unsigned len) {
  uint32_t sum = 0;
  for (unsigned i = 0; i + 1 < len; i += 2) sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Destination 02:00:00:00:00:02, source 02:00:00:00:00:01, then `tags` (each
// a TPID and a TCI), then `ethertype`.
struct Tag {
  uint16_t tpid;
  uint16_t tci;
};
inline Bytes ethernet(uint16_t ethertype, std::initializer_list<Tag> tags = {}) {
  Bytes b = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};
  for (const Tag& t : tags) {
    put16(b, t.tpid);
    put16(b, t.tci);
  }
  put16(b, ethertype);
  return b;
}

// Sluice data shim: upstream queue, shard, detours, inner ethertype.
inline Bytes shim(uint16_t queue, uint8_t shard, uint8_t detours, uint16_t inner) {
  Bytes b;
  put16(b, queue);
  b.push_back(shard);
  b.push_back(detours);
  put16(b, inner);
  return b;
}

struct Ipv4Fields {
  uint8_t tos = 0;
  uint16_t id = 0x1234;
  uint16_t frag = 0x4000;  // DF
  uint8_t ttl = 64;
  uint8_t proto = 17;
  uint32_t src = 0x0A000001;  // 10.0.0.1
  uint32_t dst = 0x0A000102;  // 10.0.1.2
  Bytes options;              // multiple of 4 bytes
  Bytes payload = {0x30, 0x39, 0x00, 0x50, 0x00, 0x0C, 0x00, 0x00, 'a', 'b', 'c', 'd'};
  int total_len_override = -1;
  bool bad_checksum = false;
};

inline Bytes ipv4(const Ipv4Fields& f) {
  Bytes b;
  const unsigned ihl = 20 + static_cast<unsigned>(f.options.size());
  b.push_back(static_cast<uint8_t>(0x40 | ihl / 4));
  b.push_back(f.tos);
  put16(b, f.total_len_override >= 0 ? static_cast<uint16_t>(f.total_len_override)
                                     : static_cast<uint16_t>(ihl + f.payload.size()));
  put16(b, f.id);
  put16(b, f.frag);
  b.push_back(f.ttl);
  b.push_back(f.proto);
  put16(b, 0);
  put32(b, f.src);
  put32(b, f.dst);
  append(b, f.options);
  uint16_t c = reference_checksum(b.data(), ihl);
  if (f.bad_checksum) c ^= 0x0100;
  b[10] = static_cast<uint8_t>(c >> 8);
  b[11] = static_cast<uint8_t>(c);
  append(b, f.payload);
  return b;
}

inline Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes b;
  for (const Bytes& p : parts) append(b, p);
  return b;
}

}  // namespace sluice::test
