#pragma once
// Reads a classic pcap file whole into memory, so that replaying it does no
// file I/O. Accepts microsecond (magic a1b2c3d4) and nanosecond (a1b23c4d)
// timestamps in either byte order, version 2.x, link type Ethernet (1) only.
// A record whose captured length is shorter than its original length (a
// snaplen-limited capture) keeps the captured bytes and its wire length
// (wire_len(): what a replay sends; docs/pcap-ports.md, "Snaplen").

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct PcapRecord {
  uint64_t ts_ns = 0;    // capture timestamp, ns since the epoch of the file
  size_t offset = 0;     // of the frame bytes in PcapCapture::bytes
  uint32_t caplen = 0;   // bytes present
  uint32_t origlen = 0;  // length on the wire
  // The frame's length as replayed: its original length, never less than
  // what was captured (a record claiming less is taken at its bytes).
  uint32_t wire_len() const { return origlen > caplen ? origlen : caplen; }
};

struct PcapCapture {
  std::vector<uint8_t> bytes;  // the whole file
  std::vector<PcapRecord> records;
  bool nanosecond = false;  // the file's timestamp resolution
  bool swapped = false;     // written in the other byte order
  uint32_t snaplen = 0;
  const uint8_t* frame(size_t i) const { return bytes.data() + records[i].offset; }
};

constexpr uint32_t kLinkTypeEthernet = 1;
// No sane capture has a larger record; a larger length means a corrupt file.
constexpr uint32_t kMaxPcapRecord = 256 * 1024;

// Parses a pcap image already in memory (takes ownership of `bytes`). `name`
// is used in error messages. Returns false with *error set.
bool parse_pcap(std::vector<uint8_t> bytes, const std::string& name, PcapCapture* out,
                std::string* error);

// Reads and parses the file at `path`; errors such as "cannot open x.pcap:
// No such file or directory", "x.pcap is not a pcap file".
bool read_pcap_file(const std::string& path, PcapCapture* out, std::string* error);

}  // namespace sluice
