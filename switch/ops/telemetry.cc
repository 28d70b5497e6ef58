#include "switch/ops/telemetry.h"

#include <rte_telemetry.h>

#include <string>

#include "switch/mechanisms/registry.h"

namespace sluice {
namespace {

const Runtime* g_rt = nullptr;  // telemetry callbacks take no context pointer

std::string full_name(uint16_t p) { return g_rt->switch_label(p) + "/" + g_rt->port_label(p); }

void add_port_counters(rte_tel_data* d, uint16_t p) {
  const PortTotals t = g_rt->port_totals(p);
  rte_tel_data_add_dict_u64(d, "rx_packets", t.rx_packets);
  rte_tel_data_add_dict_u64(d, "rx_bytes", t.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", t.tx_packets);
  rte_tel_data_add_dict_u64(d, "tx_bytes", t.tx_bytes);
  rte_tel_data_add_dict_u64(d, "drops", t.total_drops());
  rte_tel_data_add_dict_u64(d, "ecn_marks", t.ecn_marks);
  rte_tel_data_add_dict_u64(d, "queued_bytes", g_rt->ports[p]->tm->queued_bytes());
}

int cmd_ports(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_dict(d);
  for (const auto& p : g_rt->ports) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) return -1;
    rte_tel_data_start_dict(c);
    add_port_counters(c, p->index);
    rte_tel_data_add_dict_container(d, full_name(p->index).c_str(), c, 0);
  }
  return 0;
}

int cmd_port(const char*, const char* params, rte_tel_data* d) {
  if (params == nullptr) return -1;
  for (const auto& p : g_rt->ports) {
    if (full_name(p->index) != params) continue;
    rte_tel_data_start_dict(d);
    add_port_counters(d, p->index);
    const PortTotals t = g_rt->port_totals(p->index);
    for (unsigned r = 0; r < kDropReasonCount; ++r) {
      const std::string key = "drop_" + std::string(drop_reason_name(static_cast<DropReason>(r)));
      rte_tel_data_add_dict_u64(d, key.c_str(), t.drops[r]);
    }
    for (uint16_t q = 0; q < p->tm->num_queues(); ++q) {
      const std::string key = "queue_" + std::to_string(q) + "_bytes";
      rte_tel_data_add_dict_u64(d, key.c_str(), p->tm->depth_bytes(q));
    }
    Modules::each_type([&]<class M>() {
      if constexpr (requires { M::telemetry_port(*g_rt, *p, d); }) M::telemetry_port(*g_rt, *p, d);
    });
    return 0;
  }
  return -1;
}

int cmd_lcores(const char*, const char*, rte_tel_data* d) {
  rte_tel_data_start_dict(d);
  for (const auto& w : g_rt->workers) {
    rte_tel_data* c = rte_tel_data_alloc();
    if (c == nullptr) return -1;
    rte_tel_data_start_dict(c);
    rte_tel_data_add_dict_u64(c, "busy_cycles", w->busy_cycles.get());
    rte_tel_data_add_dict_u64(c, "total_cycles", w->total_cycles.get());
    rte_tel_data_add_dict_u64(c, "ports", w->ports.size());
    rte_tel_data_add_dict_container(d, ("lcore" + std::to_string(w->lcore)).c_str(), c, 0);
  }
  return 0;
}

}  // namespace

void register_telemetry(const Runtime& rt) {
  g_rt = &rt;
  rte_telemetry_register_cmd("/sluice/ports", cmd_ports, "Counters of every port.");
  rte_telemetry_register_cmd("/sluice/port", cmd_port,
                             "One port's counters. Parameter: switch/port");
  rte_telemetry_register_cmd("/sluice/lcores", cmd_lcores, "Worker lcores and their load.");
}

}  // namespace sluice
