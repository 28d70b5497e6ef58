#pragma once
// Time the hypervisor ran something else while a virtual CPU wanted to run
// ("steal", the eighth figure of a cpuN line of /proc/stat, in USER_HZ
// ticks). A worker loop cannot tell a stolen millisecond from a slow one;
// this tells them apart, read before and after a run.

#include <cstdint>
#include <optional>
#include <string>

namespace sluice {

// The steal ticks of `cpu` in a /proc/stat-format text, or nullopt if the
// line is missing or malformed.
std::optional<uint64_t> parse_cpu_steal_ticks(const std::string& proc_stat, unsigned cpu);

// The same, read from /proc/stat and converted to nanoseconds.
std::optional<uint64_t> cpu_steal_ns(unsigned cpu);

}  // namespace sluice
