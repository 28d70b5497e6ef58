#pragma once
// Floodgate's virtual output queues of one switch (SPEC 4.1 "VOQs";
// "Floodgate: Taming Incast in Datacenter Networks", section 3): packets
// whose destination's window is short wait here, per destination, so that
// they hold up neither other destinations nor the egress queues. A
// destination takes a free VOQ on first need; with none free it shares the
// VOQ `dst % count` (counted in shared). When a destination has nothing left
// waiting its mapping is released, and a VOQ no destination maps returns to
// the pool. Packets of all VOQs come from one fixed pool of nodes.
//
// drain() sends waiting packets round-robin over the VOQs, one packet per
// VOQ per round, while the head packet's window allows. A shared VOQ keeps
// its order, so a short window at its head holds the destinations behind it
// (the paper's price for hashing destinations together).
// Single writer; no allocation after construction.
// docs/mechanisms/floodgate.md ("VOQs").

#include <cstdint>
#include <vector>

#include "lib/common/relaxed_counter.h"
#include "lib/mechanisms/floodgate/dst_windows.h"

namespace sluice {

struct VoqPacket {
  uint64_t handle = 0;  // the caller's packet
  uint32_t bytes = 0;
  uint16_t egress = 0;  // the egress port chosen for it when it arrived
};

class VoqPool {
 public:
  static constexpr uint32_t kMaxVoqs = 1024;

  // count VOQs (1..kMaxVoqs), holding at most max_packets packets together.
  VoqPool(uint32_t count, uint32_t max_packets);

  uint32_t count() const { return count_; }
  // Bytes waiting in the VOQ w's packets join (w's own, or the one it would
  // take: 0 for a free VOQ). For buffer admission before hold().
  uint64_t bytes_for(const DstWindow& w) const;
  // Appends p to w's VOQ, mapping one first. False (nothing changed) when the
  // node pool is exhausted.
  bool hold(DstWindow& w, const VoqPacket& p);

  // Sends up to `budget` packets whose windows allow, debiting each window,
  // calling send(const VoqPacket&) for each. Returns how many.
  template <class Send>
  unsigned drain(DstWindows& windows, unsigned budget, Send&& send);

  // Empties every VOQ whatever the windows, calling fn(const VoqPacket&) for
  // each packet (at stop: the caller frees and counts them).
  template <class Fn>
  void discard(Fn&& fn) {
    for (uint32_t v = 0; v < count_; ++v) {
      while (nonempty(v)) {
        fn(static_cast<const VoqPacket&>(nodes_[voqs_[v].head].packet));
        pop(v);
      }
    }
  }

  uint64_t packets() const { return held_.get(); }
  uint64_t bytes() const { return bytes_.get(); }
  uint64_t in_use() const { return in_use_.get(); }  // VOQs mapped by a destination
  RelaxedCounter shared;                             // destinations that found no free VOQ

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    VoqPacket packet;
    DstWindow* window;  // of the packet's destination (DstWindows never moves one)
    uint32_t next;
  };
  struct Voq {
    uint32_t head = kNone, tail = kNone;
    uint32_t users = 0;  // destinations mapped to it
    uint64_t bytes = 0;
  };
  uint32_t map(DstWindow& w);
  bool try_send_head(DstWindows& windows, uint32_t v, VoqPacket* out);
  void pop(uint32_t v);
  bool nonempty(uint32_t v) const { return (nonempty_[v >> 6] >> (v & 63)) & 1; }

  uint32_t count_;
  std::vector<Node> nodes_;
  uint32_t free_node_ = kNone;
  std::vector<Voq> voqs_;
  std::vector<uint32_t> free_voqs_;  // stack
  uint64_t nonempty_[kMaxVoqs / 64] = {};
  uint32_t cursor_ = 0;  // round-robin position
  RelaxedCounter held_, bytes_, in_use_;
};

template <class Send>
unsigned VoqPool::drain(DstWindows& windows, unsigned budget, Send&& send) {
  unsigned sent = 0;
  bool progress = true;
  while (sent < budget && progress && held_.get() != 0) {
    progress = false;
    for (uint32_t i = 0; i < count_ && sent < budget; ++i) {
      const uint32_t v = cursor_;
      cursor_ = cursor_ + 1 == count_ ? 0 : cursor_ + 1;
      VoqPacket p;
      if (!nonempty(v) || !try_send_head(windows, v, &p)) continue;
      send(static_cast<const VoqPacket&>(p));
      ++sent;
      progress = true;
    }
  }
  return sent;
}

}  // namespace sluice
