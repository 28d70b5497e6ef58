#include "switch/mechanisms/int/int_module.h"

#include "lib/mechanisms/int/int_stamp.h"
#include "switch/path/worker.h"

namespace sluice {

std::string IntModule::build(Runtime& rt) {
  bool any = false;
  for (const SwitchRuntime& sw : rt.switches) any |= sw.cfg->int_telemetry;
  if (!any) return "";
  auto s = std::make_unique<IntModuleState>();
  s->ports = std::make_unique<IntPort[]>(rt.ports.size());
  for (auto& p : rt.ports) {
    if (rt.switches[p->switch_index].cfg->int_telemetry) p->module[kId] = &s->ports[p->index];
  }
  rt.module_state[kId] = std::move(s);
  return "";
}

void IntModule::depart(PortRuntime& port, const TmPacket& p, uint64_t now) {
  IntPort& ip = *at(port);
  rte_mbuf* m = static_cast<rte_mbuf*>(p.handle);
  uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t l3 = ipv4_offset(frame, m->data_len);
  const IntHop hop{now, ip.tx_bytes, static_cast<uint32_t>(port.tm->queued_bytes()),
                   static_cast<uint32_t>(port.cfg->rate_bps / 1'000'000)};
  ip.tx_bytes += p.bytes;
  if (l3 == 0) return;
  switch (stamp_int(frame + l3, m->data_len - l3, hop)) {
    case IntStamp::kStamped:
      ip.stamped.add();
      return;
    case IntStamp::kFull:
      ip.full.add();
      return;
    case IntStamp::kNotAsked:
      return;
  }
}

void IntModule::summary_port(const Runtime& rt, uint16_t port, JsonFields& f) {
  const IntPort* ip = at(*rt.ports[port]);
  if (ip == nullptr) return;
  f("int_stamped", ip->stamped.get());
  f("int_full", ip->full.get());
}

}  // namespace sluice
