#pragma once
// One check of the pcap reader (lib/capture/pcap_reader.h) on arbitrary file
// bytes, shared by the libFuzzer target (pcap_fuzz.cc) and the corpus replay
// in the unit tests. A refused file comes with an error naming it. An
// accepted one has records that tile the file exactly after its 24-byte
// header, each inside the file and no larger than kMaxPcapRecord; written
// again in host byte order with the same resolution, it reads back to the
// same records and frame bytes. Returns false on a violation.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lib/capture/pcap_reader.h"

namespace sluice {

namespace pcap_check_detail {

inline void put32(std::vector<uint8_t>& out, uint32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

}  // namespace pcap_check_detail

// `data` holds exactly `size` bytes (nullptr when size is 0).
inline bool check_pcap_reader(const uint8_t* data, uint32_t size) {
  using pcap_check_detail::put32;
  const std::string name = "fuzz.pcap";
  PcapCapture cap;
  std::string error;
  if (!parse_pcap(std::vector<uint8_t>(data, data + size), name, &cap, &error)) {
    return error.rfind(name, 0) == 0;
  }
  if (!error.empty() || cap.bytes.size() != size) return false;
  if (size != 0 && std::memcmp(cap.bytes.data(), data, size) != 0) return false;
  size_t pos = 24;
  for (const PcapRecord& r : cap.records) {
    if (r.offset != pos + 16 || r.caplen > kMaxPcapRecord) return false;
    if (r.offset > size || size - r.offset < r.caplen) return false;
    pos = r.offset + r.caplen;
  }
  if (pos != size) return false;

  // Write it again in host byte order and read that back.
  const uint64_t unit = cap.nanosecond ? 1 : 1000;
  std::vector<uint8_t> again;
  put32(again, cap.nanosecond ? 0xa1b23c4du : 0xa1b2c3d4u);
  put32(again, 2 | 4u << 16);  // version 2.4
  put32(again, 0);
  put32(again, 0);
  put32(again, cap.snaplen);
  put32(again, kLinkTypeEthernet);
  for (size_t i = 0; i < cap.records.size(); ++i) {
    const PcapRecord& r = cap.records[i];
    const uint64_t sec = r.ts_ns / 1'000'000'000;
    const uint64_t frac = (r.ts_ns % 1'000'000'000) / unit;
    // A fraction field past one second folds into ts_ns; it cannot be
    // written back unless the seconds still fit.
    if (sec > 0xFFFFFFFFu) return true;
    put32(again, static_cast<uint32_t>(sec));
    put32(again, static_cast<uint32_t>(frac));
    put32(again, r.caplen);
    put32(again, r.origlen);
    again.insert(again.end(), cap.frame(i), cap.frame(i) + r.caplen);
  }
  PcapCapture back;
  if (!parse_pcap(std::move(again), name, &back, &error)) return false;
  if (back.records.size() != cap.records.size() || back.nanosecond != cap.nanosecond ||
      back.swapped || back.snaplen != cap.snaplen) {
    return false;
  }
  for (size_t i = 0; i < cap.records.size(); ++i) {
    const PcapRecord& a = cap.records[i];
    const PcapRecord& b = back.records[i];
    if (a.ts_ns != b.ts_ns || a.caplen != b.caplen || a.origlen != b.origlen) return false;
    if (a.caplen != 0 && std::memcmp(cap.frame(i), back.frame(i), a.caplen) != 0) return false;
  }
  return true;
}

}  // namespace sluice
