#pragma once
// Floodgate's loss recovery (SPEC 4.1 "Loss recovery"; the paper's
// section 5.3.1 shows windows surviving 5% and 10% loss): both ends of a
// switch-facing link count cumulative bytes per destination, and the
// upstream's periodic FG_SYNC lets the downstream find what was lost.
//
// Upstream (SyncSender): bytes sent on the port toward dst (counted when the
// NIC took the packet, so that on a FIFO link everything counted has left
// before the FG_SYNC that reports it), and credit bytes received there.
//
// Downstream (SyncReceiver), on an FG_SYNC {dst, sent S, credit received CR}:
// - lost data: S - received. Bytes that left the upstream before the sync
//   and never arrived; they are owed as credit, as if forwarded, and count
//   as received from then on.
// - lost credit: credit this side had sent by the cut time, less CR, less
//   what it already re-sent. The cut is `now - cut_ns`: credit sent before
//   it has had one hop RTT to reach the upstream before the upstream sent
//   the sync (cut_ns >= the hop RTT, control frames included). Credit sent
//   after the cut may still be on the wire and is not judged yet. The
//   credit total at the cut comes from a few timestamped samples per pair
//   (at most `kSamples`, at least cut_ns / 3 apart); between samples it is
//   taken at the older one, which can only under-count what was sent and so
//   can only delay a re-send, never double one.
//
// Both return bytes for the caller to add to the pending credit of that
// ingress; they count in healed_*_bytes. Ports are numbered densely by the
// caller. Single writer each; no allocation after construction.
// docs/mechanisms/floodgate.md ("Loss recovery").

#include <cstdint>

#include "lib/common/relaxed_counter.h"
#include "lib/control/control_frame.h"  // SyncEntry
#include "lib/mechanisms/floodgate/port_dst_table.h"

namespace sluice {

class SyncSender {
 public:
  explicit SyncSender(uint32_t max_pairs) : pairs_(max_pairs) {}

  void on_sent(uint32_t port, uint32_t dst, uint32_t bytes);
  void on_credit(uint32_t port, uint32_t dst, uint32_t bytes);
  // Writes up to `max` entries of `port` into out[], resuming at *cursor
  // (start at 0; done when *cursor == slots()). Returns how many.
  uint32_t entries(uint32_t port, uint32_t* cursor, SyncEntry* out, uint32_t max);
  uint32_t slots() const { return pairs_.slots(); }

  RelaxedCounter untracked;  // packets and credits of pairs that found no room

 private:
  struct Pair {
    uint64_t sent = 0;
    uint64_t credit_received = 0;
  };
  PortDstTable<Pair> pairs_;
};

struct SyncHeal {
  uint64_t lost_data_bytes = 0;    // owed as credit for data that never arrived
  uint64_t lost_credit_bytes = 0;  // credit to send again
};

class SyncReceiver {
 public:
  static constexpr uint32_t kSamples = 4;

  SyncReceiver(uint32_t max_pairs, uint64_t cut_ns) : cut_ns_(cut_ns), pairs_(max_pairs) {}

  void on_received(uint32_t port, uint32_t dst, uint32_t bytes, uint64_t now_ns);
  // Credit for dst went out of `port` in an FG_CREDIT frame (re-sent
  // credit included).
  void on_credit_sent(uint32_t port, uint32_t dst, uint32_t bytes, uint64_t now_ns);
  SyncHeal on_sync(uint32_t port, const SyncEntry& e, uint64_t now_ns);

  RelaxedCounter untracked;  // packets, credits and syncs of pairs that found no room
  RelaxedCounter healed_data_bytes;
  RelaxedCounter healed_credit_bytes;
  RelaxedCounter sync_behind;  // entries reporting fewer bytes sent than arrived (ignored)

 private:
  struct Sample {
    uint64_t t_ns = 0;
    uint64_t credited = 0;  // credit sent before t_ns
  };
  struct Pair {
    uint64_t received = 0;
    uint64_t credited = 0;  // credit sent, re-sent included
    uint64_t resent = 0;
    uint64_t last_credit_ns = 0;
    uint32_t newest = 0;  // samples[newest] is the latest
    Sample samples[kSamples];
  };
  Pair* pair(uint32_t port, uint32_t dst, uint64_t now_ns);
  uint64_t credited_at(const Pair& p, uint64_t cut) const;

  uint64_t cut_ns_;
  PortDstTable<Pair> pairs_;
};

}  // namespace sluice
