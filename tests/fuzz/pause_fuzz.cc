// libFuzzer target for the PAUSE / PFC MAC Control codec; the check is
// tests/fuzz/pause_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/pause_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> input(data, data + size);
  if (!sluice::check_pause_codec(input.empty() ? nullptr : input.data(),
                                 static_cast<uint32_t>(size))) {
    std::abort();
  }
  return 0;
}
