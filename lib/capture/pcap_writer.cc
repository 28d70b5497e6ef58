#include "lib/capture/pcap_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sluice {
namespace {

struct FileHeader {
  uint32_t magic = 0xa1b23c4d;  // nanosecond timestamps
  uint16_t version_major = 2;
  uint16_t version_minor = 4;
  int32_t thiszone = 0;
  uint32_t sigfigs = 0;
  uint32_t snaplen;
  uint32_t link_type = 1;  // Ethernet
};
static_assert(sizeof(FileHeader) == 24);

}  // namespace

bool PcapWriter::open(const std::string& path, std::string* error, size_t buffer_bytes,
                      uint32_t snaplen) {
  close();
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    *error = "cannot open " + path + " for writing: " + std::strerror(errno);
    return false;
  }
  path_ = path;
  buffer_ = std::make_unique<char[]>(buffer_bytes);
  std::setvbuf(file_, buffer_.get(), _IOFBF, buffer_bytes);
  failed_ = false;
  snaplen_ = std::max<uint32_t>(1, std::min(snaplen, kPcapWriteSnaplen));
  FileHeader h;
  h.snaplen = snaplen_;
  put(&h, sizeof h);
  return true;
}

void PcapWriter::put(const void* data, size_t len) {
  if (std::fwrite(data, 1, len, file_) != len && !failed_) {
    failed_ = true;
    saved_errno_ = errno;
  }
}

bool PcapWriter::flush(std::string* error) {
  if (file_ != nullptr && std::fflush(file_) != 0 && !failed_) {
    failed_ = true;
    saved_errno_ = errno;
  }
  if (failed_) {
    *error = "writing " + path_ + " failed: " + std::strerror(saved_errno_);
    return false;
  }
  return true;
}

void PcapWriter::close() {
  if (file_ == nullptr) return;
  std::fclose(file_);  // before the buffer it uses is freed
  file_ = nullptr;
  buffer_.reset();
}

}  // namespace sluice
