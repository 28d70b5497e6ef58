// libFuzzer target for the transport frames of emulated hosts and the
// switch's readers of them (rank, INT stamping); the check is
// tests/fuzz/transport_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/transport_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> input(data, data + size);
  if (!sluice::check_transport_frame(input.empty() ? nullptr : input.data(),
                                     static_cast<uint32_t>(size))) {
    std::abort();
  }
  return 0;
}
