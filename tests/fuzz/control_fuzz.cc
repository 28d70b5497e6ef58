// libFuzzer target for the control-frame codec (FG_CREDIT, FG_DST_PAUSE,
// FG_SYNC, BFC_*): tests/fuzz/control_codec_check.h.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tests/fuzz/control_codec_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0xFFFF) return 0;
  // An exactly-sized heap copy: any read past the end is an ASan report.
  std::vector<uint8_t> frame(data, data + size);
  if (!sluice::check_control_codec(frame.data(), static_cast<uint32_t>(size))) std::abort();
  return 0;
}
