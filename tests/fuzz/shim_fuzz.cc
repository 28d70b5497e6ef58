// libFuzzer target for the 0x88B6 data shim; the check is
// tests/fuzz/shim_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/shim_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> input(data, data + size);
  if (!sluice::check_data_shim(input.empty() ? nullptr : input.data(),
                               static_cast<uint32_t>(size))) {
    std::abort();
  }
  return 0;
}
