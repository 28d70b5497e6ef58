#pragma once
// What sluice tells its user on the terminal and in files: the live per-port
// table, the final summary and its JSON twin.

#include <cstdint>
#include <string>
#include <vector>

#include "switch/runtime/runtime.h"

namespace sluice {

// Per-port figures captured once the workers have stopped.
struct PortFinal {
  PortTotals totals;
  uint64_t queued_at_stop = 0;
  uint64_t in_flight_at_stop = 0;  // on the internal link into this port
};

class LiveTable {
 public:
  explicit LiveTable(const Runtime& rt);
  // Prints one line per port: rates per second of the data path's clock
  // since the previous call (now_ns on that clock), the queue now, drops
  // per second and in total.
  void print(const Runtime& rt, uint64_t now_ns);

 private:
  std::vector<PortTotals> prev_;
  uint64_t prev_ns_ = 0;
};

// The emulator's progress on a terminal (stderr), rewritten in place once
// a second: fabric time reached (of --duration), wall time, transmissions
// per wall second, and the wall time left at the rate so far. Quiet unless
// stderr is a terminal and CI is not set.
class ProgressLine {
 public:
  explicit ProgressLine(const Runtime& rt);
  bool enabled() const { return enabled_; }
  void update(const Runtime& rt, uint64_t wall_ns);
  void finish();

 private:
  bool enabled_ = false;
  bool printed_ = false;
  uint64_t start_wall_ns_ = 0;
  uint64_t next_ns_ = 0;
  uint64_t prev_wall_ns_ = 0, prev_tx_ = 0;
};

void print_summary(const Runtime& rt, const std::vector<PortFinal>& ports, double seconds);
bool write_summary_json(const Runtime& rt, const std::vector<PortFinal>& ports, double seconds,
                        const std::string& path, std::string* error);

// Nanoseconds as seconds with nine decimals, exactly (a negative value as
// -S.NNNNNNNNN): the summary JSON's and the completions file's times.
std::string exact_seconds(int64_t ns);

// L1 bit rate of a port between its first and last transmit, counting the
// shaper's per-frame wire overhead.
double tx_l1_bits_per_second(const PortRuntime& p, const PortTotals& t);

}  // namespace sluice
