#include "switch/ops/report.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <rte_lcore.h>
#include <rte_mempool.h>

#include "switch/emulator/transport_report.h"
#include "switch/mechanisms/registry.h"
#include "switch/ops/module_reports.h"

namespace sluice {
namespace {

// A port that is no internal link's end has no link lateness.
const LatencyHistogram kNoSamples{};

std::string port_name(const Runtime& rt, uint16_t p) {
  return rt.switch_label(p) + "/" + rt.port_label(p);
}

void json_escape_into(std::string& out, const std::string& s) {
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
}

}  // namespace

double tx_l1_bits_per_second(const PortRuntime& p, const PortTotals& t) {
  const uint64_t first = p.first_tx_ns.load(), last = p.last_tx_ns.load();
  if (last <= first) return 0.0;
  const double bits = 8.0 * (t.tx_bytes + double(p.cfg->wire_overhead_bytes) * t.tx_packets);
  return bits / ((last - first) * 1e-9);
}

LiveTable::LiveTable(const Runtime& rt) : prev_(rt.ports.size()) {}

// now_ns is on the data path's clock (the fabric's in exact time), so
// rates are per second of that clock.
void LiveTable::print(const Runtime& rt, uint64_t now_ns) {
  if (prev_ns_ == 0) prev_ns_ = rt.start_ns;
  const double dt = (now_ns - prev_ns_) * 1e-9;
  std::printf("[%8.4fs] %-14s %10s %9s %10s %9s %11s %10s %12s\n", (now_ns - rt.start_ns) * 1e-9,
              "port", "rx Mpps", "rx Gbps", "tx Mpps", "tx Gbps", "queue KB", "drops/s",
              "drops total");
  for (const auto& p : rt.ports) {
    const PortTotals t = rt.port_totals(p->index);
    const PortTotals& o = prev_[p->index];
    auto rate = [&](uint64_t now, uint64_t before, double scale) {
      return dt > 0 ? (now - before) / dt * scale : 0.0;
    };
    std::printf("            %-14s %10.3f %9.3f %10.3f %9.3f %11.1f %10.0f %12" PRIu64 "\n",
                port_name(rt, p->index).c_str(), rate(t.rx_packets, o.rx_packets, 1e-6),
                rate(t.rx_bytes, o.rx_bytes, 8e-9), rate(t.tx_packets, o.tx_packets, 1e-6),
                rate(t.tx_bytes, o.tx_bytes, 8e-9), p->tm->queued_bytes() / 1000.0,
                rate(t.total_drops(), o.total_drops(), 1.0), t.total_drops());
    prev_[p->index] = t;
  }
  std::fflush(stdout);
  prev_ns_ = now_ns;
}

namespace {

std::string format_bound(uint64_t ns) {
  if (ns == UINT64_MAX) return ">105ms";
  char buf[32];
  if (ns < 1000) {
    std::snprintf(buf, sizeof buf, "<=%" PRIu64 "ns", ns);
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof buf, "<=%.1fus", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "<=%.1fms", ns / 1e6);
  }
  return buf;
}

// Share of the worker's loop time spent in iterations that moved a packet.
double busy_fraction(const WorkerRuntime& w) {
  const uint64_t total = w.total_cycles.get();
  return total == 0 ? 0.0 : double(w.busy_cycles.get()) / double(total);
}

// Exact fabric time: how much of it the run covered, in how much wall
// time, and the work that took (elements handled, port transmissions).
struct ExactFigures {
  uint64_t events = 0, instants = 0, stuck = 0, missed = 0, transmissions = 0;
  uint64_t late_samples = 0, late_ns = 0;  // every shaper, link and replay sample, summed
  double wall_seconds = 0;
};

ExactFigures exact_figures(const Runtime& rt) {
  ExactFigures f;
  for (const auto& w : rt.workers) {
    f.events += w->exact_events.get();
    f.instants += w->exact_instants.get();
    f.stuck += w->exact_stuck.get();
    f.missed += w->exact_missed.get();
    f.wall_seconds = std::max(f.wall_seconds, w->exact_wall_ns.get() * 1e-9);
  }
  for (const auto& p : rt.ports) {
    f.transmissions += rt.port_totals(p->index).tx_packets;
    const LatencyHistogram* replay = p->pcap ? &p->pcap->lateness() : nullptr;
    const LatencyHistogram* shaper = &p->shaper_lateness;
    const LatencyHistogram* link = p->link_lateness;
    for (const LatencyHistogram* h : {shaper, link, replay}) {
      if (h == nullptr) continue;
      f.late_samples += h->total();
      f.late_ns += h->sum_ns();
    }
  }
  return f;
}

void print_clock(const Runtime& rt, double seconds) {
  if (!exact_time(rt)) return;
  const ExactFigures f = exact_figures(rt);
  std::printf(
      "exact fabric time: %.6f s of fabric time in %.3f s of wall time (%.2f wall s per fabric "
      "s); %" PRIu64 " port transmissions (%.2f M per wall second), %" PRIu64
      " elements handled at %" PRIu64 " instants\n",
      seconds, f.wall_seconds, seconds > 0 ? f.wall_seconds / seconds : 0.0, f.transmissions,
      f.wall_seconds > 0 ? f.transmissions / f.wall_seconds * 1e-6 : 0.0, f.events, f.instants);
  if (f.missed != 0)
    std::printf("    CALENDAR MISSES: %" PRIu64
                " times an element had work and no calendar entry for it (a bug; it ran late)\n",
                f.missed);
  if (f.stuck != 0)
    std::printf("    STOPPED EARLY: %" PRIu64
                " elements handled at one instant without time moving on\n",
                kMaxEventsPerInstant);
}

// `seconds` of wall time (loop gaps are the machine's).
void print_workers(const Runtime& rt, double seconds) {
  for (const auto& w : rt.workers) {
    const double busy = 100.0 * busy_fraction(*w);
    const double idle_s = w->idle_loop_ns.get() / 1e9;
    std::printf(
        "worker lcore %u: busy %.1f%%, loop p99 %s, max %.1f us, %.1f gaps/s > 50 us "
        "(%.1f/s of idle passes), %.1f/s > 200 us; %" PRIu64 " page faults, preempted %" PRIu64
        " times, hypervisor steal %.1f ms\n",
        w->lcore, busy, format_bound(quantile_upper_ns(w->loop_gap, 0.99)).c_str(),
        w->loop_gap_max_ns.get() / 1e3, w->loop_gaps_over_50us.get() / seconds,
        idle_s > 0 ? w->idle_loop_gaps_over_50us.get() / idle_s : 0.0,
        w->loop_gaps_over_200us.get() / seconds, w->minor_faults.get() + w->major_faults.get(),
        w->involuntary_switches.get(), w->steal_ns < 0 ? -1.0 : w->steal_ns / 1e6);
  }
}

// Emulation fidelity: how late shaped departures and link deliveries were.
// In exact fabric time every sample is 0 by construction; the sum of all
// of them says so in one line (any other figure is printed per port).
void print_fidelity(const Runtime& rt) {
  std::vector<std::string> lines;
  for (const auto& p : rt.ports) {
    const uint64_t lost = p->tm->shaper_lost_ns();
    char line[256];
    if (lost != 0) {
      std::snprintf(line, sizeof line,
                    "    %-16s shaper lost %.3f ms of transmit time while backlogged (loop too "
                    "late)\n",
                    port_name(rt, p->index).c_str(), lost * 1e-6);
      lines.push_back(line);
    }
    const LatencyHistogram* replay = p->pcap ? &p->pcap->lateness() : nullptr;
    const LatencyHistogram* shaper = &p->shaper_lateness;
    const LatencyHistogram* link = p->link_lateness;
    for (const LatencyHistogram* h : {shaper, link, replay}) {
      if (h == nullptr || h->total() == 0) continue;
      if (exact_time(rt) && h->sum_ns() == 0) continue;
      std::snprintf(line, sizeof line,
                    "    %-16s %-7s n=%-10" PRIu64 " p50 %-10s p99 %-10s p99.9 %-10s\n",
                    port_name(rt, p->index).c_str(),
                    h == shaper   ? "shaper"
                    : h == replay ? "replay"
                                  : "link",
                    h->total(), format_bound(quantile_upper_ns(*h, 0.5)).c_str(),
                    format_bound(quantile_upper_ns(*h, 0.99)).c_str(),
                    format_bound(quantile_upper_ns(*h, 0.999)).c_str());
      lines.push_back(line);
    }
  }
  if (exact_time(rt)) {
    const ExactFigures f = exact_figures(rt);
    std::printf("fidelity: lateness against due time summed over %" PRIu64
                " shaper, link and replay samples: %" PRIu64 " ns\n",
                f.late_samples, f.late_ns);
  }
  if (lines.empty()) return;
  std::printf("fidelity (lateness against due time; bucket upper bounds)\n");
  for (const std::string& l : lines) std::fputs(l.c_str(), stdout);
}

}  // namespace

ProgressLine::ProgressLine(const Runtime& rt) {
  const char* ci = std::getenv("CI");
  enabled_ = exact_time(rt) && isatty(STDERR_FILENO) && (ci == nullptr || ci[0] == '\0');
}

void ProgressLine::update(const Runtime& rt, uint64_t wall_ns) {
  if (!enabled_) return;
  if (start_wall_ns_ == 0) {
    start_wall_ns_ = prev_wall_ns_ = wall_ns;
    next_ns_ = wall_ns + 1'000'000'000;
    return;
  }
  if (wall_ns < next_ns_) return;
  next_ns_ = wall_ns + 1'000'000'000;
  uint64_t tx = 0;
  for (const auto& p : rt.ports) tx += rt.port_totals(p->index).tx_packets;
  const uint64_t fabric_ns = data_path_now_ns(rt, 0) - rt.start_ns;
  const double wall = (wall_ns - start_wall_ns_) * 1e-9;
  const double rate = (tx - prev_tx_) / ((wall_ns - prev_wall_ns_) * 1e-9);
  prev_tx_ = tx;
  prev_wall_ns_ = wall_ns;
  char left[48] = "";
  if (rt.end_ns != UINT64_MAX && fabric_ns > 0) {
    const double total = double(rt.end_ns - rt.start_ns);
    std::snprintf(left, sizeof left, ", about %.0f s left",
                  wall * (total - double(fabric_ns)) / double(fabric_ns));
  }
  char of[32] = "";
  if (rt.end_ns != UINT64_MAX)
    std::snprintf(of, sizeof of, " of %.6g", (rt.end_ns - rt.start_ns) * 1e-6);
  std::fprintf(
      stderr, "\rsluice: fabric time %.6g%s ms in %.0f s of wall time, %.2f M transmissions/s%s   ",
      fabric_ns * 1e-6, of, wall, rate * 1e-6, left);
  std::fflush(stderr);
  printed_ = true;
}

void ProgressLine::finish() {
  if (printed_) std::fputc('\n', stderr);
  printed_ = false;
}

void print_summary(const Runtime& rt, const std::vector<PortFinal>& ports, double seconds) {
  std::printf("sluice summary after %.2f s\n", seconds);
  std::printf("%-16s %14s %14s %12s %10s %10s %12s\n", "port", "rx packets", "tx packets", "drops",
              "ecn marks", "queued", "tx L1 Gbps");
  for (const auto& p : rt.ports) {
    const PortFinal& f = ports[p->index];
    std::printf("%-16s %14" PRIu64 " %14" PRIu64 " %12" PRIu64 " %10" PRIu64 " %10" PRIu64
                " %12.3f\n",
                port_name(rt, p->index).c_str(), f.totals.rx_packets, f.totals.tx_packets,
                f.totals.total_drops(), f.totals.ecn_marks, f.queued_at_stop,
                tx_l1_bits_per_second(*p, f.totals) * 1e-9);
    for (unsigned r = 0; r < kDropReasonCount; ++r) {
      if (f.totals.drops[r] == 0) continue;
      std::printf("    drop %-22s %12" PRIu64 "\n",
                  std::string(drop_reason_name(static_cast<DropReason>(r))).c_str(),
                  f.totals.drops[r]);
    }
    if (f.totals.link_lost != 0)
      std::printf("    lost on the link            %12" PRIu64 "\n", f.totals.link_lost);
    if (p->pcap && p->pcap->oversize_skipped() != 0)
      std::printf("    left out of the replay      %12" PRIu64 " (larger than mbuf_size)\n",
                  p->pcap->oversize_skipped());
    if (p->pcap && p->pcap->capture_dropped() != 0)
      std::printf("    left out of the capture     %12" PRIu64 " (capture writer fell behind)\n",
                  p->pcap->capture_dropped());
  }
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::print_summary(rt); }) M::print_summary(rt);
  });
  print_transport(rt);
  print_fidelity(rt);
  print_clock(rt, seconds);
  // Exact time has no loop gaps to read against the machine's floor.
  if (!exact_time(rt)) print_workers(rt, seconds > 0 ? seconds : 1.0);
  std::fflush(stdout);
}

// Seconds with nine decimals, exactly; a negative value (a run stopped
// before its replay started) as -S.NNNNNNNNN, still a JSON number.
std::string exact_seconds(int64_t ns) {
  char text[64];
  const uint64_t mag = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::snprintf(text, sizeof text, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "",
                mag / 1'000'000'000, mag % 1'000'000'000);
  return text;
}

// The emulated host NIC of a replaying port (docs/pcap-ports.md).
template <typename Field>
void host_nic_fields(const PcapPort& p, Field field) {
  field("host_nic_queues", p.host_nic().queues().num_queues());
  field("host_nic_held_frames", p.host_held_frames());
  field("host_nic_peak_held_frames", p.host_peak_held_frames());
  field("host_nic_full_polls", p.host_full_polls());
  field("host_nic_queue_collisions", p.host_nic().queues().collisions.get());
  field("host_paused_ns", p.host_paused_ns());
  field("host_pause_frames", p.host_pause_frames());
  field("host_bfc_frames", p.host_bfc_frames());
  field("host_bfc_invalid", p.host_nic().bfc_invalid());
  field("host_bfc_paused_queues", p.host_nic().bfc_paused_count());
  field("host_dst_pause_frames", p.host_dst_pause_frames());
  field("host_dst_paused", p.host_nic().dst_paused());
  field("host_dst_pause_overflow", p.host_nic().dst_pause_overflow());
  field("host_invalid_frames", p.host_invalid_frames());
}

// The clock the run kept: real (wall seconds), or exact (fabric seconds,
// elements and instants handled, the calendar's soundness, lateness summed).
std::string clock_json(const Runtime& rt, double seconds) {
  if (!exact_time(rt))
    return "{\"mode\": \"real\", \"wall_seconds\": " + std::to_string(rt.wall_seconds) + "}";
  const ExactFigures f = exact_figures(rt);
  return "{\"mode\": \"exact\", \"fabric_seconds\": " + std::to_string(seconds) +
         ", \"events\": " + std::to_string(f.events) +
         ", \"instants\": " + std::to_string(f.instants) +
         ", \"stopped_stuck\": " + std::to_string(f.stuck) +
         ", \"calendar_misses\": " + std::to_string(f.missed) +
         ", \"lateness_samples\": " + std::to_string(f.late_samples) +
         ", \"lateness_sum_ns\": " + std::to_string(f.late_ns) +
         ", \"transmissions\": " + std::to_string(f.transmissions) +
         ", \"windows\": " + std::to_string(rt.window_sync ? rt.window_sync->windows() : 0) +
         ", \"window_wait_seconds\": " +
         std::to_string(rt.window_sync ? rt.window_sync->wait_ns() / 1e9 : 0.0) +
         ", \"wall_seconds\": " + std::to_string(f.wall_seconds) + "}";
}

// Each worker lcore's loop: how long its iterations took, against which the
// machine's floor (tools/floor) is read.
std::string workers_json(const Runtime& rt) {
  std::string j = "[";
  for (const auto& w : rt.workers) {
    if (j.size() > 1) j += ", ";
    const double busy = busy_fraction(*w);
    j += "{\"lcore\": " + std::to_string(w->lcore) +
         ", \"cpu\": " + std::to_string(rte_lcore_to_cpu_id(static_cast<int>(w->lcore))) +
         ", \"iterations\": " + std::to_string(w->iterations.get()) +
         ", \"busy_fraction\": " + std::to_string(busy) +
         ", \"busy_seconds\": " + std::to_string(double(w->busy_cycles.get()) / double(rt.tsc_hz)) +
         ", \"loop_gap_p99_ns\": " + std::to_string(quantile_upper_ns(w->loop_gap, 0.99)) +
         ", \"loop_gap_p9999_ns\": " + std::to_string(quantile_upper_ns(w->loop_gap, 0.9999)) +
         ", \"loop_gap_max_ns\": " + std::to_string(w->loop_gap_max_ns.get()) +
         ", \"loop_gaps_over_50us\": " + std::to_string(w->loop_gaps_over_50us.get()) +
         ", \"loop_gaps_over_200us\": " + std::to_string(w->loop_gaps_over_200us.get()) +
         ", \"idle_loop_gaps_over_50us\": " + std::to_string(w->idle_loop_gaps_over_50us.get()) +
         ", \"idle_loop_seconds\": " + std::to_string(w->idle_loop_ns.get() / 1e9) +
         ", \"busy_loop_gaps_over_25us\": " + std::to_string(w->busy_loop_gaps_over_25us.get()) +
         ", \"minor_faults\": " + std::to_string(w->minor_faults.get()) +
         ", \"major_faults\": " + std::to_string(w->major_faults.get()) +
         ", \"involuntary_switches\": " + std::to_string(w->involuntary_switches.get()) +
         ", \"voluntary_switches\": " + std::to_string(w->voluntary_switches.get()) +
         ", \"steal_ms\": " + std::to_string(w->steal_ns < 0 ? -1.0 : w->steal_ns / 1e6) + "}";
  }
  return j + "]";
}

// The process's own peak resident set (VmHWM of /proc/self/status): unlike
// getrusage's ru_maxrss it does not include what the parent held when it
// forked this process (Linux folds the pre-exec memory into ru_maxrss).
// -1 where /proc cannot say.
std::string process_json() {
  long long kb = -1;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f) != nullptr)
      if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
    std::fclose(f);
  }
  return "{\"peak_rss_bytes\": " + std::to_string(kb < 0 ? -1 : kb * 1024) + "}";
}

// After drain_and_total: what the traffic managers, rings and links held is
// back in the pool, so in_use is what is still held elsewhere (host NIC
// queues of replaying ports, device rings).
std::string mbuf_pools_json(const Runtime& rt) {
  std::string j = "[";
  for (size_t socket = 0; socket < rt.mbuf_supplies.size(); ++socket) {
    const MbufSupply* supply = rt.mbuf_supplies[socket].get();
    if (supply == nullptr) continue;
    if (j.size() > 1) j += ", ";
    j += "{\"socket\": " + std::to_string(socket) +
         ", \"size\": " + std::to_string(supply->size()) +
         ", \"in_use_after_drain\": " + std::to_string(supply->in_use());
    // Exact time samples the high-water mark of the mbufs its worker uses.
    if (exact_time(rt) && supply == rt.mbufs) {
      uint64_t peak = 0;
      for (const auto& w : rt.workers) peak = std::max(peak, w->mbuf_peak_in_use.get());
      j += ", \"peak_in_use\": " + std::to_string(peak);
    }
    j += "}";
  }
  return j + "]";
}

bool write_summary_json(const Runtime& rt, const std::vector<PortFinal>& ports, double seconds,
                        const std::string& path, std::string* error) {
  // Exact to the nanosecond (a double would round at epoch scale).
  const int64_t epoch_ns = static_cast<int64_t>(rt.replay_start_ns) + rt.realtime_offset_ns;
  std::string j = "{\"duration_seconds\": " + std::to_string(seconds) +
                  ", \"replay_start_epoch_seconds\": " + exact_seconds(epoch_ns) +
                  ", \"replay_origin_capture_seconds\": " +
                  exact_seconds(static_cast<int64_t>(rt.replay_origin_ts_ns)) +
                  ", \"run_end_epoch_seconds\": " +
                  exact_seconds(static_cast<int64_t>(rt.stop_ns) + rt.realtime_offset_ns) +
                  ", \"switches\": [";
  for (const SwitchRuntime& sw : rt.switches) {
    if (sw.index > 0) j += ", ";
    j += "{\"name\": \"";
    json_escape_into(j, sw.cfg->name);
    j += "\", \"ports\": [";
    bool first_port = true;
    for (uint16_t pi : sw.ports) {
      const PortFinal& f = ports[pi];
      const PortTotals& t = f.totals;
      if (!first_port) j += ", ";
      first_port = false;
      j += "{\"name\": \"";
      json_escape_into(j, rt.port_label(pi));
      j += "\"";
      auto field = [&](const char* k, uint64_t v) {
        j += std::string(", \"") + k + "\": " + std::to_string(v);
      };
      field("rx_packets", t.rx_packets);
      field("rx_bytes", t.rx_bytes);
      field("tx_packets", t.tx_packets);
      field("tx_bytes", t.tx_bytes);
      field("tx_generated_packets", t.tx_generated_packets);
      field("rx_consumed_packets", t.rx_consumed_packets);
      field("forwarded_packets", t.forwarded_packets);
      field("ecn_marks", t.ecn_marks);
      field("queued_at_stop", f.queued_at_stop);
      field("link_lost_packets", t.link_lost);
      field("link_in_flight_at_stop", f.in_flight_at_stop);
      JsonFields fields(j);
      Modules::each_type([&]<class M>() {
        if constexpr (requires { M::summary_port(rt, pi, fields); })
          M::summary_port(rt, pi, fields);
      });
      field("control_dropped_packets", rt.ports[pi]->tm->control_dropped.get());
      field("shaper_lost_ns", rt.ports[pi]->tm->shaper_lost_ns());
      const PortRuntime& pr = *rt.ports[pi];
      field("shaper_lateness_p99_ns", quantile_upper_ns(pr.shaper_lateness, 0.99));
      field("shaper_lateness_samples", pr.shaper_lateness.total());
      const LatencyHistogram& link = pr.link_lateness ? *pr.link_lateness : kNoSamples;
      field("link_lateness_p99_ns", quantile_upper_ns(link, 0.99));
      field("link_lateness_samples", link.total());
      if (const FlowQueues* fq = pr.tm->flow_queues()) {
        field("flow_queues_allocated", fq->queues_allocated());
        field("sfq_collisions", fq->collisions());
        field("codel_drops", fq->codel_drops());
        field("codel_marks", fq->codel_marks());
      }
      if (pr.pcap) {
        field("replay_lateness_p99_ns", quantile_upper_ns(pr.pcap->lateness(), 0.99));
        field("replay_lateness_samples", pr.pcap->lateness().total());
        field("capture_dropped_records", pr.pcap->capture_dropped());
        field("replay_max_lateness_ns", pr.pcap->max_lateness_ns());
        field("replay_alloc_failures", pr.pcap->alloc_failures());
        field("replay_oversize_skipped", pr.pcap->oversize_skipped());
        if (pr.pcap->host_nic().enabled()) host_nic_fields(*pr.pcap, field);
      }
      j += ", \"drops\": {";
      bool first_drop = true;
      for (unsigned r = 0; r < kDropReasonCount; ++r) {
        if (t.drops[r] == 0) continue;
        if (!first_drop) j += ", ";
        first_drop = false;
        j += '"';
        j += drop_reason_name(static_cast<DropReason>(r));
        j += "\": ";
        j += std::to_string(t.drops[r]);
      }
      j += "}, \"tx_l1_bits_per_second\": " +
           std::to_string(tx_l1_bits_per_second(*rt.ports[pi], t)) + "}";
    }
    j += "]";
    JsonFields fields(j);
    Modules::each_type([&]<class M>() {
      if constexpr (requires { M::summary_switch(rt, sw, fields); })
        M::summary_switch(rt, sw, fields);
    });
    j += "}";
  }
  j += "]";
  JsonFields fields(j);
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::summary_top(rt, fields); }) M::summary_top(rt, fields);
  });
  if (const std::string t = transport_json(rt); !t.empty()) j += ", \"transport\": " + t;
  j += ", \"clock\": " + clock_json(rt, seconds) + ", \"workers\": " + workers_json(rt) +
       ", \"mbuf_pools\": " + mbuf_pools_json(rt) + ", \"process\": " + process_json() + "}\n";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write " + path;
    return false;
  }
  std::fputs(j.c_str(), f);
  std::fclose(f);
  return true;
}

}  // namespace sluice
