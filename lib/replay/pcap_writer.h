#pragma once
// Writes a classic pcap file with nanosecond timestamps (magic a1b23c4d in
// host byte order), link type Ethernet, snaplen 65535. Output goes through a
// large stdio buffer so that writing a frame is a couple of memcpy calls, not
// a system call. A frame can be written in pieces (one per mbuf segment).

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace sluice {

constexpr uint32_t kPcapWriteSnaplen = 65535;

class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter() { close(); }

  // Creates (truncates) `path` and writes the file header. False with *error
  // ("cannot open x.pcap for writing: Permission denied").
  // Frames are cut to `snaplen` bytes (the record keeps their real length).
  bool open(const std::string& path, std::string* error, size_t buffer_bytes = 4u << 20,
            uint32_t snaplen = kPcapWriteSnaplen);
  bool is_open() const { return file_ != nullptr; }

  // A record of `frame_len` bytes at `ts_ns` (ns since the Unix epoch); its
  // bytes follow with append() calls totalling frame_len. Bytes past the
  // snaplen are dropped (the record says how long the frame was).
  void begin_record(uint64_t ts_ns, uint32_t frame_len);
  void append(const void* data, uint32_t len);
  void write_record(uint64_t ts_ns, const void* data, uint32_t len) {
    begin_record(ts_ns, len);
    append(data, len);
  }

  // Bytes of records already encoded elsewhere (CaptureRing), as they are.
  void write_bytes(const void* data, size_t len) {
    if (file_ != nullptr) put(data, len);
  }

  // Hands buffered records to the kernel. False with *error if any write failed.
  bool flush(std::string* error);
  void close();

  uint64_t records() const { return records_; }
  bool failed() const { return failed_; }

 private:
  void put(const void* data, size_t len);

  std::string path_;
  FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;
  uint32_t capture_left_ = 0;  // bytes of the current record still to be written
  uint32_t snaplen_ = kPcapWriteSnaplen;
  uint64_t records_ = 0;
  bool failed_ = false;
  int saved_errno_ = 0;
};

}  // namespace sluice
