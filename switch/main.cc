// sluice: a DPDK software switch for datacenter flow-control research.
//   sluice [EAL options] -- --config FILE [--check] [--duration S] ...
// main() validates the configuration, brings up EAL and the ports, launches one
// run-to-completion loop per worker lcore, prints live rates from the main
// lcore, and on SIGINT/SIGTERM (or --duration) stops, drains and summarises.

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_pdump.h>
#include <rte_ring.h>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "lib/common/cpu_steal.h"
#include "lib/config/config_loader.h"
#include "lib/config/memory_estimate.h"
#include "lib/emulator/event_calendar.h"
#include "lib/emulator/hosts/transport_check.h"
#include "lib/emulator/partition.h"
#include "lib/capture/capture_check.h"
#include "switch/ops/capture_writer.h"
#include "switch/ops/cli_options.h"
#include "switch/path/mbuf_meta.h"
#include "switch/runtime/eal_cleanup.h"
#include "switch/runtime/huge_pages.h"
#include "switch/runtime/memory_prefault.h"
#include "switch/ops/metrics_exporter.h"
#include "switch/ops/report.h"
#include "switch/runtime/runtime_builder.h"
#include "switch/ops/telemetry.h"
#include "switch/emulator/transport_report.h"
#include "switch/version.h"
#include "switch/path/worker.h"

namespace sluice {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void on_signal(int sig) { g_signal = sig; }

// EAL's cleanup and its runtime directory (eal_cleanup.h), reporting a
// directory it could not remove.
void cleanup_eal() {
  if (const std::string err = sluice::cleanup_eal(); !err.empty())
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
}

// Splits argv at "--": EAL gets what is before, sluice what is after.
int find_separator(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return i;
  }
  return -1;
}

bool load(const CliOptions& opt, Config* config) {
  ConfigResult r = load_config_file(opt.config_file);
  for (const ConfigError& e : r.errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
  // Accepted, but worth knowing (e.g. TCD with nothing to pause it).
  for (const ConfigError& e : r.notes) std::fprintf(stderr, "note: %s\n", e.to_string().c_str());
  if (!r.ok()) {
    std::fprintf(stderr, "%zu error(s) in %s\n", r.errors.size(), opt.config_file.c_str());
    return false;
  }
  *config = std::move(r.config);
  if (!opt.metrics_address.empty()) config->metrics.address = opt.metrics_address;
  return true;
}

bool all_finished(const Runtime& rt) {
  for (const auto& w : rt.workers) {
    if (!w->finished.load()) return false;
  }
  return true;
}

void run_main_lcore(Runtime& rt, const CliOptions& opt) {
  const TscClock clock(rt.tsc_hz);
  LiveTable table(rt);
  ProgressLine progress(rt);
  const uint64_t interval_ns = static_cast<uint64_t>(opt.stats_interval_seconds * 1e9);
  const uint64_t stop_ns = opt.duration_seconds > 0
                               ? rt.start_ns + static_cast<uint64_t>(opt.duration_seconds * 1e9)
                               : UINT64_MAX;
  uint64_t next_table = clock.now_ns() + interval_ns;
  const bool exact = exact_time(rt);
  while (g_signal == 0) {
    const uint64_t now = clock.now_ns();
    // Exact time: the worker ends the run itself, at its --duration.
    if (exact && all_finished(rt)) break;
    if (!exact && now >= stop_ns) break;
    if (interval_ns > 0 && now >= next_table) {
      // Once a wall-clock interval; the figures on the data path's clock
      // (in exact time the fabric's, which may run faster or slower).
      table.print(rt, data_path_now_ns(rt, now));
      next_table += interval_ns;
    }
    progress.update(rt, now);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  progress.finish();
}

// Frees what is still queued (counted as queued_at_stop, not as a drop) and
// returns the final per-port figures.
std::vector<PortFinal> drain_and_total(Runtime& rt) {
  std::vector<PortFinal> out(rt.ports.size());
  // Packets between lcores were admitted nowhere yet: queued at their egress.
  for (const auto& w : rt.workers) {
    for (rte_ring* r : w->to) {
      void* obj;
      while (r != nullptr && rte_ring_sc_dequeue(r, &obj) == 0) {
        rte_mbuf* m = static_cast<rte_mbuf*>(obj);
        ++out[mbuf_meta_get(m).egress_port].queued_at_stop;
        rte_pktmbuf_free(m);
      }
    }
  }
  // Packets a module holds outside the queues (Floodgate's VOQs) have their
  // egress port chosen.
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::drain_held(rt, nullptr); })
      M::drain_held(rt, [&](uint16_t egress, rte_mbuf* m) {
        ++out[egress].queued_at_stop;
        rte_pktmbuf_free(m);
      });
  });
  // Frames on internal links left one switch and have not reached the next;
  // frames on a capture host's link (its delay, exact time) left the host.
  for (const auto& p : rt.ports) out[p->index].in_flight_at_stop = p->medium->discard_in_flight();
  for (const auto& p : rt.ports) {
    PortFinal& f = out[p->index];
    for (unsigned i = 0; i < p->tx_pending_count; ++i) rte_pktmbuf_free(p->tx_pending[i]);
    f.queued_at_stop += p->tx_pending_count;  // only data packets are left unsent in practice
    p->tx_pending_count = 0;
    p->tm->drain([&](const TmPacket& tp) {
      if ((tp.aux & kTmAuxGenerated) == 0) ++f.queued_at_stop;
      rte_pktmbuf_free(static_cast<rte_mbuf*>(tp.handle));
    });
    f.totals = rt.port_totals(p->index);
  }
  return out;
}

// Every replaying port starts its capture at the same instant, a little after
// the workers start, so hosts' traffic keeps its recorded relative timing.
constexpr uint64_t kReplayLeadNs = 50'000'000;

// Captures far apart in time were not made together; their replay would
// wait that long. Said once, not refused (docs/pcap-ports.md).
constexpr uint64_t kFarApartNs = 60'000'000'000;

void start_replay(Runtime& rt, const TscClock& clock) {
  rt.replay_start_ns = rt.start_ns + kReplayLeadNs;
  uint64_t origin = UINT64_MAX;
  for (const auto& p : rt.ports) {
    if (p->pcap) origin = std::min(origin, p->pcap->first_timestamp_ns());
  }
  rt.replay_origin_ts_ns = origin == UINT64_MAX ? 0 : origin;
  // Captures are stamped on CLOCK_REALTIME's scale. In exact time the
  // machine's clock plays no part: the replay's start is the earliest
  // capture's first timestamp, so a run's captures repeat to the byte
  // (and line up with the workload's own timestamps).
  rt.realtime_offset_ns = exact_time(rt)
                              ? static_cast<int64_t>(rt.replay_origin_ts_ns - rt.replay_start_ns)
                              : realtime_minus_clock_ns(clock);
  for (const auto& p : rt.ports) {
    if (!p->pcap) continue;
    const uint64_t first = p->pcap->first_timestamp_ns();
    if (first != UINT64_MAX && first - rt.replay_origin_ts_ns > kFarApartNs) {
      std::fprintf(stderr,
                   "sluice: %s/%s: its capture starts %.0f s after the earliest one; replay "
                   "keeps that gap (align captures with editcap -t)\n",
                   rt.switch_label(p->index).c_str(), p->cfg->name.c_str(),
                   (first - rt.replay_origin_ts_ns) * 1e-9);
    }
    p->pcap->set_clock_offset(rt.realtime_offset_ns);
    p->pcap->start(rt.replay_start_ns, rt.replay_origin_ts_ns);
  }
}

// Frames a capture port cannot replay (longer than an mbuf holds) are said
// once at start; the summary and metrics count them too.
void report_oversize(const Runtime& rt) {
  for (const auto& p : rt.ports) {
    if (!p->pcap || p->pcap->oversize_skipped() == 0) continue;
    std::fprintf(stderr,
                 "sluice: %s/%s: %" PRIu64 " frame(s) of '%s' (up to %" PRIu32
                 " bytes) are larger than mbuf_size (%" PRIu32
                 " bytes) and left out of the replay; raise mbuf_size to replay them\n",
                 rt.switch_label(p->index).c_str(), p->cfg->name.c_str(),
                 p->pcap->oversize_skipped(), p->pcap->config().rx_path.c_str(),
                 p->pcap->oversize_largest(), rt.config.mbuf_size);
  }
}

// Captures are flushed after the workers stopped; a failed write (disk full)
// makes the run fail.
bool flush_captures(const Runtime& rt) {
  bool ok = true;
  for (const auto& p : rt.ports) {
    std::string err;
    if (p->pcap && !p->pcap->flush(&err)) {
      std::fprintf(stderr, "sluice: %s/%s: %s\n", rt.switch_label(p->index).c_str(),
                   p->cfg->name.c_str(), err.c_str());
      ok = false;
    }
  }
  return ok;
}

// --queue-trace: resolves the port list and gives each worker its trace.
bool setup_queue_trace(Runtime& rt, const CliOptions& opt, std::string* err) {
  if (opt.queue_trace.empty()) return true;
  std::vector<uint16_t> ports;
  size_t start = 0;
  const std::string& list = opt.queue_trace_ports;
  while (start < list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, end - start);
    start = end + 1;
    const size_t slash = name.find('/');
    const int p = slash == std::string::npos
                      ? -1
                      : find_port(rt, PortRef{name.substr(0, slash), name.substr(slash + 1)});
    if (p < 0) {
      *err = "--queue-trace-ports: no port \"" + name + "\" (expected switch/port)";
      return false;
    }
    ports.push_back(static_cast<uint16_t>(p));
  }
  // Below 1 ns the trace would be due at every instant forever.
  const double interval_ns = std::round(opt.queue_trace_interval_seconds * 1e9);
  if (!(interval_ns >= 1 && interval_ns < 1e18) || opt.queue_trace_max_rows < 1) {
    *err = "--queue-trace-interval must be 1 ns or more and --queue-trace-max-rows above 0";
    return false;
  }
  QueueTraceModule::configure(rt, ports, static_cast<uint64_t>(interval_ns),
                              static_cast<size_t>(opt.queue_trace_max_rows));
  return true;
}

int run(int argc, char** argv) {
  const int sep = find_separator(argc, argv);
  const int eal_argc = sep < 0 ? argc : sep;
  std::vector<char*> app_argv = {argv[0]};
  if (sep >= 0) {
    app_argv.insert(app_argv.end(), argv + sep + 1, argv + argc);
  } else {
    // "sluice --version" and "sluice --help" need no "--" (nor EAL).
    for (int i = 1; i < argc; ++i) {
      const std::string_view a = argv[i];
      if (a == "--version" || a == "--help" || a == "-h") {
        app_argv.push_back(argv[i]);
      } else if (is_sluice_option(a)) {
        // EAL would take it (and fail, or ignore it); say where it goes.
        std::fprintf(stderr,
                     "sluice: %s is sluice's option: sluice's options come after \"--\", "
                     "EAL's before it:\n  %s [EAL options] -- --config FILE [options]\n",
                     argv[i], argv[0]);
        return 2;
      }
    }
  }
  CliOptions opt;
  std::string err;
  bool help = false;
  if (!parse_cli(static_cast<int>(app_argv.size()), app_argv.data(), &opt, &err, &help) || help) {
    if (!help) std::fprintf(stderr, "sluice: %s\n", err.c_str());
    std::fputs(cli_usage(), help ? stdout : stderr);
    return help ? 0 : 2;
  }
  if (opt.version) {
    std::printf("sluice %s\n", kVersion);
    return 0;
  }
  auto rt = std::make_unique<Runtime>();
  if (!load(opt, &rt->config)) return 1;
  // Fabric time ends at the calendar's horizon (44 bits of ns from 0; the
  // run starts at kExactEpochNs): a longer run could not be exact.
  const double max_fabric_s = (EventCalendar::kHorizon - kExactEpochNs) * 1e-9;
  if (rt->config.clock.mode == ClockMode::kExact && opt.duration_seconds > max_fabric_s) {
    std::fprintf(stderr,
                 "sluice: --duration %g s: a run in fabric time lasts at most %.0f s (the "
                 "calendar keeps 44 bits of nanoseconds)\n",
                 opt.duration_seconds, max_fabric_s);
    return 2;
  }
  if (opt.check_only) {
    // What start would refuse later, without EAL: captures that do not open.
    const CaptureCheck captures = check_captures(rt->config);
    for (const ConfigError& e : captures.errors)
      std::fprintf(stderr, "%s\n", e.to_string().c_str());
    for (const ConfigError& e : captures.notes)
      std::fprintf(stderr, "note: %s\n", e.to_string().c_str());
    // The transport hosts' flow list: every flow from one host to another.
    std::vector<ConfigError> flow_errors;
    std::vector<FlowListEntry> flows;
    check_transport_flows(rt->config, &flows, &flow_errors);
    for (const ConfigError& e : flow_errors) std::fprintf(stderr, "%s\n", e.to_string().c_str());
    // The emulator on the lcores `workers:` names: whole switches, and no
    // link between lcores shorter than the minimum lookahead.
    std::string partition_error;
    if (rt->config.clock.mode == ClockMode::kExact && rt->config.workers.size() > 1) {
      const std::vector<unsigned> slots = partition_of_workers(rt->config, &partition_error);
      if (partition_error.empty()) {
        const PartitionCheck c = check_partition(rt->config, slots);
        if (!c.error.empty()) partition_error = "workers: " + c.error;
      }
      if (!partition_error.empty())
        std::fprintf(stderr, "%s: %s\n", opt.config_file.c_str(), partition_error.c_str());
    }
    const size_t errors =
        captures.errors.size() + flow_errors.size() + (partition_error.empty() ? 0 : 1);
    if (errors != 0) {
      std::fprintf(stderr, "%zu error(s) in %s\n", errors, opt.config_file.c_str());
      return 1;
    }
    size_t ports = 0;
    for (const auto& s : rt->config.switches) ports += s.ports.size();
    std::printf("config OK: %zu switches, %zu ports\n", rt->config.switches.size(), ports);
    const MemoryEstimate mem = estimate_dpdk_memory(rt->config);
    std::printf("DPDK memory: about %" PRIu64 " MiB (%s); with --no-huge give EAL -m %" PRIu64
                " or more\n",
                mib_up(mem.total()), mem.parts().c_str(), mib_up(mem.total()));
    return 0;
  }
  if (rte_eal_init(eal_argc, argv) < 0) {
    std::fprintf(stderr, "sluice: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
    return 1;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  rt->tsc_hz = calibrate_tsc_hz();
  if (!register_mbuf_extra(&err)) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    cleanup_eal();
    return 1;
  }
  // Without hugepages EAL has all its memory now: a configuration that needs
  // more is told so before anything is built (with hugepages memory grows
  // on demand, and only a failure below can say it ran out).
  const MemoryEstimate mem =
      estimate_dpdk_memory(rt->config, rte_lcore_count() > 1 ? rte_lcore_count() - 1 : 1);
  if (!rte_eal_has_hugepages() && rte_eal_get_physmem_size() < mem.total()) {
    std::fprintf(stderr,
                 "sluice: this configuration needs about %" PRIu64
                 " MiB of DPDK memory (%s), but EAL has %" PRIu64 " MiB: give -m %" PRIu64
                 " or more (or lower 'mbufs')\n",
                 mib_up(mem.total()), mem.parts().c_str(), rte_eal_get_physmem_size() >> 20,
                 mib_up(mem.total()));
    cleanup_eal();
    return 1;
  }
  if (exact_time(*rt)) back_heap_with_huge_pages();
  err = build_runtime(*rt);
  if (err.empty()) setup_queue_trace(*rt, opt, &err);
  if (!err.empty()) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    std::fprintf(stderr,
                 "sluice: (this configuration needs about %" PRIu64 " MiB of DPDK memory: %s)\n",
                 mib_up(mem.total()), mem.parts().c_str());
    release_runtime(*rt, {});  // no worker ran
    cleanup_eal();
    return 1;
  }
  report_oversize(*rt);
  if (rte_pdump_init() != 0) std::fprintf(stderr, "sluice: pdump unavailable (capture disabled)\n");
  register_telemetry(*rt);
  MetricsExporter metrics(*rt);
  if (rt->config.metrics.enabled && !metrics.start(rt->config.metrics.address, &err)) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    release_runtime(*rt, {});  // no worker ran
    cleanup_eal();
    return 1;
  }
  // Real time locks its memory so that no page fault stalls a worker; the
  // emulator's fabric time cannot be late, so it leaves memory to be
  // touched as the fabric uses it.
  if (!exact_time(*rt)) {
    if (const std::string warning = prefault_memory(*rt); !warning.empty())
      std::fprintf(stderr, "sluice: %s\n", warning.c_str());
  } else {
    mark_heap_for_huge_pages();  // what the heap grew by while it was built
  }
  std::printf("sluice: %zu switch(es), %zu port(s), %zu worker lcore(s); metrics on %s\n",
              rt->switches.size(), rt->ports.size(), rt->workers.size(),
              rt->config.metrics.enabled ? rt->config.metrics.address.c_str() : "(off)");
  // Where each device port's buffers live (docs/deploy.md, "NUMA").
  for (const auto& p : rt->ports) {
    if (p->rx_pool == nullptr) continue;
    std::printf("sluice: %s/%s: device on NUMA socket %d, receives into mbuf pool %s (socket %d)\n",
                rt->switch_label(p->index).c_str(), rt->port_label(p->index).c_str(),
                rte_eth_dev_socket_id(p->eth_port), p->rx_pool->name, p->rx_pool->socket_id);
  }
  std::fflush(stdout);
  std::vector<std::unique_ptr<Worker>> workers;
  const TscClock clock(rt->tsc_hz);
  CaptureWriter capture_writer;  // exact time: the worker writes its captures itself
  if (!exact_time(*rt)) capture_writer.start(*rt);
  // Modules' own threads (Flowtune's UDP path in real time).
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::start(*rt); }) M::start(*rt);
  });
  std::vector<std::optional<uint64_t>> steal_before;
  for (auto& w : rt->workers) steal_before.push_back(cpu_steal_ns(rte_lcore_to_cpu_id(w->lcore)));
  // The replay's time origin is taken last, right before the launch, so no
  // set-up time eats into its lead.
  rt->start_ns = exact_time(*rt) ? kExactEpochNs : clock.now_ns();
  if (exact_time(*rt) && opt.duration_seconds > 0)
    rt->end_ns = rt->start_ns + static_cast<uint64_t>(opt.duration_seconds * 1e9);
  start_replay(*rt, clock);
  const uint64_t wall_start_ns = clock.now_ns();
  for (auto& w : rt->workers) {
    workers.push_back(std::make_unique<Worker>(*rt, *w));
    rte_eal_remote_launch(worker_main, workers.back().get(), w->lcore);
  }
  run_main_lcore(*rt, opt);
  rt->stop_ns = data_path_now_ns(*rt, clock.now_ns());
  rt->stop.store(true);
  rte_eal_mp_wait_lcore();
  const auto halted = std::chrono::steady_clock::now();
  // Exact time: where the worker's clock ended (the --duration, or where a
  // signal found it).
  if (exact_time(*rt)) rt->stop_ns = data_path_now_ns(*rt, 0);
  capture_writer.stop();
  Modules::each_type([&]<class M>() {
    if constexpr (requires { M::stop(*rt); }) M::stop(*rt);
  });
  for (size_t i = 0; i < rt->workers.size(); ++i) {
    const auto after = cpu_steal_ns(rte_lcore_to_cpu_id(rt->workers[i]->lcore));
    if (steal_before[i] && after) rt->workers[i]->steal_ns = int64_t(*after - *steal_before[i]);
  }
  // The fabric's duration: in exact time, where the worker's clock ended.
  const uint64_t end_ns = exact_time(*rt) ? rt->stop_ns : clock.now_ns();
  const double seconds = (end_ns - rt->start_ns) * 1e-9;
  rt->wall_seconds = (clock.now_ns() - wall_start_ns) * 1e-9;
  const std::vector<PortFinal> finals = drain_and_total(*rt);
  print_summary(*rt, finals, seconds);
  int rc = flush_captures(*rt) ? 0 : 1;
  if (!write_transport_completions(*rt, &err)) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    rc = 1;
  }
  if (!opt.summary_json.empty() &&
      !write_summary_json(*rt, finals, seconds, opt.summary_json, &err)) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    rc = 1;
  }
  if (!opt.queue_trace.empty() && !QueueTraceModule::write(*rt, opt.queue_trace, &err)) {
    std::fprintf(stderr, "sluice: %s\n", err.c_str());
    rc = 1;
  }
  rte_pdump_uninit();
  release_runtime(*rt, halted);
  cleanup_eal();
  return rc;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::run(argc, argv); }
