#include "switch/runtime/runtime.h"

#include <algorithm>

namespace sluice {

void set_peer_mac(PortRuntime& p, const MacAddr& peer) {
  uint64_t packed = uint64_t{1} << 48;
  for (int i = 0; i < 6; ++i) {
    packed |= uint64_t{peer[i]} << (8 * i);
    p.eth_header[i] = peer[i];
    p.eth_header[6 + i] = p.mac[i];
  }
  p.eth_header[12] = 0x08;  // IPv4
  p.eth_header[13] = 0x00;
  p.eth_header_ready = true;
  p.peer_mac.store(packed, std::memory_order_relaxed);
}

int find_port(const Runtime& rt, const PortRef& ref) {
  for (const auto& p : rt.ports) {
    if (rt.switch_label(p->index) == ref.sw && p->cfg->name == ref.port) return p->index;
  }
  return -1;
}

uint64_t data_path_now_ns(const Runtime& rt, uint64_t real_ns) {
  if (!exact_time(rt) || rt.workers.empty()) return real_ns;
  const uint64_t now = rt.workers.front()->clock_now_ns.get();
  return now != 0 ? now : rt.start_ns;
}

MacAddr unpack_mac(uint64_t packed) {
  MacAddr m;
  for (int i = 0; i < 6; ++i) m[i] = static_cast<uint8_t>(packed >> (8 * i));
  return m;
}

}  // namespace sluice
