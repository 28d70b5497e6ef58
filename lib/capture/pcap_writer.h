#pragma once
// The file side of a capture: a classic pcap file with nanosecond timestamps
// (magic a1b23c4d in host byte order), link type Ethernet, and the records'
// bytes as CaptureRing encoded them (the one place records are encoded).
// Output goes through a large stdio buffer, so a write is a memcpy, not a
// system call.

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

  // Creates (truncates) `path` and writes the file header, which states the
  // snaplen. False with *error ("cannot open x.pcap for writing: Permission
  // denied").
  bool open(const std::string& path, std::string* error, size_t buffer_bytes = 4u << 20,
            uint32_t snaplen = kPcapWriteSnaplen);
  bool is_open() const { return file_ != nullptr; }

  // Bytes of records encoded by a CaptureRing of the same snaplen, as they are.
  void write_bytes(const void* data, size_t len) {
    if (file_ != nullptr) put(data, len);
  }

  // Hands buffered records to the kernel. False with *error if any write failed.
  bool flush(std::string* error);
  void close();

  uint32_t snaplen() const { return snaplen_; }
  bool failed() const { return failed_; }

 private:
  void put(const void* data, size_t len);

  std::string path_;
  FILE* file_ = nullptr;
  std::unique_ptr<char[]> buffer_;
  uint32_t snaplen_ = kPcapWriteSnaplen;
  bool failed_ = false;
  int saved_errno_ = 0;
};

}  // namespace sluice
