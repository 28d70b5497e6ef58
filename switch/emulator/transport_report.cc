#include "switch/emulator/transport_report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "lib/emulator/hosts/transport_factory.h"
#include "lib/net/mac_addr.h"
#include "lib/emulator/transport/segment_wire.h"
#include "switch/ops/report.h"

namespace sluice {
namespace {

struct Totals {
  size_t hosts = 0, flows = 0, finished = 0, started = 0;
  HostCounters host;
  SenderCounters sender;
  uint64_t inbox_overflow = 0, foreign = 0;
};

Totals totals(const Runtime& rt) {
  Totals t;
  std::vector<FlowOutcome> out;
  for (const auto& p : rt.ports) {
    if (!p->pcap || !p->pcap->transport_host()) continue;
    const TransportHost& h = *p->pcap->transport_host();
    ++t.hosts;
    out.clear();
    h.outcomes(&out);
    for (const FlowOutcome& o : out) {
      ++t.flows;
      t.finished += o.completed_ns != 0;
      t.started += o.started;
      t.sender.data_segments += o.counters.data_segments;
      t.sender.retransmitted += o.counters.retransmitted;
      t.sender.timeouts += o.counters.timeouts;
      t.sender.fast_retransmits += o.counters.fast_retransmits;
      t.sender.nacks += o.counters.nacks;
      t.sender.cnps += o.counters.cnps;
      t.sender.ecn_echoes += o.counters.ecn_echoes;
    }
    const HostCounters& c = h.counters();
    t.host.data_sent += c.data_sent;
    t.host.replies_sent += c.replies_sent;
    t.host.data_received += c.data_received;
    t.host.replies_received += c.replies_received;
    t.host.stray += c.stray;
    t.host.reply_overflow += c.reply_overflow;
    t.host.nic_full += c.nic_full;
    t.inbox_overflow += p->pcap->transport_inbox_overflow();
    t.foreign += p->pcap->transport_foreign_frames();
  }
  return t;
}

std::string seconds9(uint64_t ns) { return exact_seconds(static_cast<int64_t>(ns)); }

}  // namespace

bool write_transport_completions(const Runtime& rt, std::string* error) {
  const TransportConfig& tc = rt.config.transport;
  if (tc.kind == TransportKind::kNone || tc.completions_path.empty()) return true;
  FILE* f = std::fopen(tc.completions_path.c_str(), "w");
  if (f == nullptr) {
    *error = "cannot write " + tc.completions_path;
    return false;
  }
  // Every flow of every host, by flow id; times relative to the replay's
  // start (the flow list's time 0).
  struct Row {
    FlowOutcome o;
    uint64_t ideal_ns;
  };
  std::vector<Row> rows;
  std::vector<FlowOutcome> out;
  std::vector<FlowReceipt> receipts;  // from every receiving host, by flow id below
  for (const auto& p : rt.ports) {
    if (!p->pcap || !p->pcap->transport_host()) continue;
    out.clear();
    p->pcap->transport_host()->outcomes(&out);
    p->pcap->transport_host()->receipts(&receipts);
    const TransportContext ctx =
        transport_context(tc, p->cfg->rate_bps, p->cfg->wire_overhead_bytes);
    for (const FlowOutcome& o : out) {
      // Ideal: the flow's frames back to back at the host's rate, plus one
      // base RTT (its last segment's trip and the ACK's); frames counted
      // without HPCC's INT room, so one flow has one ideal whatever the
      // transport (as HPCC's ns-3 counts its standalone FCT).
      const uint64_t packets = (o.bytes + ctx.max_payload - 1) / ctx.max_payload;
      const uint64_t per_packet = segment_header_bytes(false) + ctx.wire_overhead;
      const unsigned __int128 bits =
          (static_cast<unsigned __int128>(o.bytes) + packets * per_packet) * 8'000'000'000ull;
      rows.push_back({o, static_cast<uint64_t>(bits / ctx.link_rate_bps) + ctx.base_rtt_ns});
    }
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.o.id < b.o.id; });
  std::sort(receipts.begin(), receipts.end(),
            [](const FlowReceipt& a, const FlowReceipt& b) { return a.id < b.id; });
  const auto receipt_of = [&](uint32_t id) -> const FlowReceipt* {
    auto it = std::lower_bound(receipts.begin(), receipts.end(), id,
                               [](const FlowReceipt& r, uint32_t v) { return r.id < v; });
    return it != receipts.end() && it->id == id ? &*it : nullptr;
  };
  const uint64_t observed = rt.stop_ns > rt.replay_start_ns ? rt.stop_ns - rt.replay_start_ns : 0;
  std::fprintf(f,
               "flow_id,src_ip,dst_ip,size,is_incast,transport,start_time,finish_time,"
               "fct_seconds,ideal_seconds,finished,started,observed_until,data_segments,"
               "retransmitted,timeouts,fast_retransmits,nacks,cnps,ecn_echoes,"
               "sender_seconds,network_seconds,receiver_seconds,ack_seconds\n");
  for (const Row& r : rows) {
    const FlowOutcome& o = r.o;
    const bool done = o.completed_ns != 0;
    // A finished flow's FCT in four parts that add up to it: until the
    // segment that completed its bytes left the sender's NIC, that
    // segment's trip, until the receiver's next ACK left its NIC, and that
    // ACK's trip (or a later one's) to the finish.
    std::string sender, network, receiver, ack;
    const FlowReceipt* rc = done ? receipt_of(o.id) : nullptr;
    if (rc != nullptr && o.start_ns <= rc->sent_ns && rc->sent_ns <= rc->arrived_ns &&
        rc->arrived_ns <= rc->acked_ns && rc->acked_ns <= o.completed_ns) {
      sender = seconds9(rc->sent_ns - o.start_ns);
      network = seconds9(rc->arrived_ns - rc->sent_ns);
      receiver = seconds9(rc->acked_ns - rc->arrived_ns);
      ack = seconds9(o.completed_ns - rc->acked_ns);
    }
    std::fprintf(f,
                 "%" PRIu32 ",%s,%s,%" PRIu64 ",%d,%s,%s,%s,%s,%s,%d,%d,%s,%" PRIu64 ",%" PRIu64
                 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%s,%s,%s\n",
                 o.id, format_ipv4(o.src_ip).c_str(), format_ipv4(o.dst_ip).c_str(), o.bytes,
                 o.incast ? 1 : 0, transport_name(tc.kind), seconds9(o.start_ns).c_str(),
                 done ? seconds9(o.completed_ns).c_str() : "",
                 done ? seconds9(o.completed_ns - o.start_ns).c_str() : "",
                 seconds9(r.ideal_ns).c_str(), done ? 1 : 0, o.started ? 1 : 0,
                 seconds9(observed).c_str(), o.counters.data_segments, o.counters.retransmitted,
                 o.counters.timeouts, o.counters.fast_retransmits, o.counters.nacks,
                 o.counters.cnps, o.counters.ecn_echoes, sender.c_str(), network.c_str(),
                 receiver.c_str(), ack.c_str());
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) *error = "cannot write " + tc.completions_path;
  return ok;
}

void print_transport(const Runtime& rt) {
  if (rt.config.transport.kind == TransportKind::kNone) return;
  const Totals t = totals(rt);
  std::printf(
      "transport hosts (%s): %zu hosts, %zu flows: %zu finished, %zu unfinished "
      "(%zu never started)\n",
      transport_name(rt.config.transport.kind), t.hosts, t.flows, t.finished, t.flows - t.finished,
      t.flows - t.started);
  std::printf("    data segments %" PRIu64 " (%" PRIu64 " again), timeouts %" PRIu64
              ", fast retransmits %" PRIu64 ", NACKs %" PRIu64 ", CNPs %" PRIu64
              ", ECN echoes %" PRIu64 "\n",
              t.sender.data_segments, t.sender.retransmitted, t.sender.timeouts,
              t.sender.fast_retransmits, t.sender.nacks, t.sender.cnps, t.sender.ecn_echoes);
  if (t.host.stray + t.host.reply_overflow + t.inbox_overflow + t.foreign != 0)
    std::printf("    dropped at hosts: stray %" PRIu64 ", reply ring full %" PRIu64
                ", inbox full %" PRIu64 ", not transport frames %" PRIu64 "\n",
                t.host.stray, t.host.reply_overflow, t.inbox_overflow, t.foreign);
}

std::string transport_json(const Runtime& rt) {
  if (rt.config.transport.kind == TransportKind::kNone) return "";
  const Totals t = totals(rt);
  std::string j = "{\"kind\": \"" + std::string(transport_name(rt.config.transport.kind)) + "\"";
  auto field = [&](const char* k, uint64_t v) {
    j += std::string(", \"") + k + "\": " + std::to_string(v);
  };
  field("hosts", t.hosts);
  field("flows", t.flows);
  field("finished", t.finished);
  field("unfinished", t.flows - t.finished);
  field("never_started", t.flows - t.started);
  field("data_segments", t.sender.data_segments);
  field("retransmitted", t.sender.retransmitted);
  field("timeouts", t.sender.timeouts);
  field("fast_retransmits", t.sender.fast_retransmits);
  field("nacks", t.sender.nacks);
  field("cnps", t.sender.cnps);
  field("ecn_echoes", t.sender.ecn_echoes);
  field("replies_sent", t.host.replies_sent);
  field("data_received", t.host.data_received);
  field("stray_frames", t.host.stray);
  field("reply_overflow", t.host.reply_overflow);
  field("inbox_overflow", t.inbox_overflow);
  field("foreign_frames", t.foreign);
  field("nic_full", t.host.nic_full);
  return j + "}";
}

}  // namespace sluice
