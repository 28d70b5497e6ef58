#pragma once
// What DIBS counts for export (SPEC 4.3: detours per port and the detours a
// packet has taken; docs/mechanisms/dibs.md, "Counters"):
//   - detours per port: packets that entered that port's queue as a detour,
//     counted by the lcore that enqueued them (the port's owner);
//   - detour drops by reason: no port admitted the packet, it had taken
//     max_detours already, or the owner of the chosen port refused it;
//   - a histogram of detours per packet, taken as packets leave the fabric
//     (enqueued toward a host-facing port) with the count they carry.
//
// Histogram buckets, by upper bound: 0, 1, 2, 3, 7, 15, 31, 63, 255. The
// first four are exact because most detoured packets take few detours; then
// powers of two up to the byte's saturation, wide enough for the tails the
// paper reports (packets detoured 20 and 40 times, sections 5.4.4, 5.5.3).
//
// One set per lcore and switch, summed by the scraper. Single writer; no
// allocation after construction.

#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

#include "lib/common/drop_reason.h"
#include "lib/common/relaxed_counter.h"

namespace sluice {

enum class DetourDrop : uint8_t { kNoPort, kMaxDetours, kRefused, kCount };
inline constexpr unsigned kDetourDropCount = static_cast<unsigned>(DetourDrop::kCount);

// The port drop reason a detour drop is counted under (its metric label).
constexpr DropReason drop_reason_of(DetourDrop d) {
  switch (d) {
    case DetourDrop::kNoPort:
      return DropReason::kDetourNoPort;
    case DetourDrop::kMaxDetours:
      return DropReason::kDetourMaxDetours;
    case DetourDrop::kRefused:
      return DropReason::kDetourRefused;
    case DetourDrop::kCount:
      break;
  }
  return DropReason::kCount;
}

inline constexpr unsigned kDetourBuckets = 9;
inline constexpr uint8_t kDetourBucketUpper[kDetourBuckets] = {0, 1, 2, 3, 7, 15, 31, 63, 255};

// The bucket of a packet that has taken `detours`.
constexpr unsigned detour_bucket(uint8_t detours) {
  if (detours < 4) return detours;
  const unsigned b = static_cast<unsigned>(std::bit_width(detours)) + 1;  // 4..7 -> 4
  return b < kDetourBuckets ? b : kDetourBuckets - 1;
}

class DibsCounters {
 public:
  // Room for ports 0..port_count-1 of the switch.
  explicit DibsCounters(uint32_t port_count) : detours_(port_count) {}
  DibsCounters(const DibsCounters&) = delete;
  DibsCounters& operator=(const DibsCounters&) = delete;

  void count_detour(uint16_t port) { detours_[port].add(); }
  void count_drop(DetourDrop why) { drops_[static_cast<unsigned>(why)].add(); }
  void count_exit(uint8_t detours) {
    histogram_[detour_bucket(detours)].add();
    exit_detours_.add(detours);
  }

  uint32_t port_count() const { return static_cast<uint32_t>(detours_.size()); }
  uint64_t detours(uint16_t port) const { return detours_[port].get(); }
  uint64_t drops(DetourDrop why) const { return drops_[static_cast<unsigned>(why)].get(); }
  // Packets that left the fabric in bucket b (not cumulative).
  uint64_t bucket(unsigned b) const { return histogram_[b].get(); }
  // The detours of every packet counted in the histogram, summed.
  uint64_t exit_detours() const { return exit_detours_.get(); }

 private:
  std::vector<RelaxedCounter> detours_;
  RelaxedCounter drops_[kDetourDropCount];
  RelaxedCounter histogram_[kDetourBuckets];
  RelaxedCounter exit_detours_;
};

}  // namespace sluice
