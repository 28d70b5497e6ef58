// libFuzzer target for the YAML configuration loader; the check is
// tests/fuzz/config_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/config_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 20) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> input(data, data + size);
  if (!sluice::check_config_loader(input.empty() ? nullptr : input.data(),
                                   static_cast<uint32_t>(size))) {
    std::abort();
  }
  return 0;
}
