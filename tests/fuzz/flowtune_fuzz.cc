// libFuzzer target for the Flowtune codec (lib/mechanisms/flowtune/flowtune_wire.h).
// The check: tests/fuzz/flowtune_codec_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/flowtune_codec_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;  // more than one UDP datagram holds
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> msg(data, data + size);
  if (!sluice::check_flowtune_codec(msg.data(), static_cast<uint32_t>(size))) std::abort();
  return 0;
}
