#include "lib/common/cpu_steal.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace sluice {

std::optional<uint64_t> parse_cpu_steal_ticks(const std::string& proc_stat, unsigned cpu) {
  std::istringstream in(proc_stat);
  const std::string name = "cpu" + std::to_string(cpu);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first != name) continue;
    // user nice system idle iowait irq softirq steal
    uint64_t v[8];
    for (uint64_t& x : v) {
      if (!(fields >> x)) return std::nullopt;
    }
    return v[7];
  }
  return std::nullopt;
}

std::optional<uint64_t> cpu_steal_ns(unsigned cpu) {
  std::ifstream f("/proc/stat");
  if (!f) return std::nullopt;
  std::stringstream text;
  text << f.rdbuf();
  const auto ticks = parse_cpu_steal_ticks(text.str(), cpu);
  const long hz = sysconf(_SC_CLK_TCK);
  if (!ticks || hz <= 0) return std::nullopt;
  return *ticks * (1'000'000'000 / static_cast<uint64_t>(hz));
}

}  // namespace sluice
