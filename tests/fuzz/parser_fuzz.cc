// libFuzzer target for the ingress parser and the IPv4 rewrites; the check
// is tests/fuzz/parser_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/parser_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> frame(data, data + size);
  if (!sluice::check_parser(frame.empty() ? nullptr : frame.data(), static_cast<uint32_t>(size))) {
    std::abort();
  }
  return 0;
}
