#pragma once
// What an edge switch has to tell the allocator, gathered into datagrams
// (SPEC §5, "Flowtune"): FLOWLET_START and FLOWLET_END entries wait here
// until a datagram of their type is full or the caller flushes, so that one
// syscall carries many flowlets.
//
// Order: an END never reaches the allocator before the START of the same
// flowlet. Whenever END entries leave, the pending STARTs leave first (an
// END may name a flowlet whose START is still pending).
//
// send(const uint8_t*, uint32_t) gets each datagram; what it does with a
// failure is its own (count it). No allocation after construction.
// docs/mechanisms/flowtune.md ("Edge switches").

#include <array>
#include <cstdint>
#include <span>

#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice {

class FlowtuneOutbox {
 public:
  static constexpr uint32_t kBudget = kFlowtuneMtuPayload;
  static constexpr uint32_t kMaxStarts = (kBudget - kFlowtuneHeaderLen) / kFlowletStartEntryLen;
  static constexpr uint32_t kMaxEnds = (kBudget - kFlowtuneHeaderLen) / kFlowletEndEntryLen;

  template <class Send>
  void start(const FlowletStart& s, Send&& send) {
    if (n_starts_ == kMaxStarts) send_starts(send);
    starts_[n_starts_++] = s;
  }
  template <class Send>
  void end(uint32_t flow_id, Send&& send) {
    if (n_ends_ == kMaxEnds) send_ends(send);
    ends_[n_ends_++] = FlowletEnd{flow_id};
  }
  // Everything pending, STARTs first.
  template <class Send>
  void flush(Send&& send) {
    send_ends(send);  // sends the STARTs first
    send_starts(send);
  }
  bool empty() const { return n_starts_ == 0 && n_ends_ == 0; }
  uint32_t pending_starts() const { return n_starts_; }
  uint32_t pending_ends() const { return n_ends_; }

 private:
  template <class Send>
  void send_starts(Send& send) {
    if (n_starts_ == 0) return;
    const uint32_t len = build_flowlet_start(buf_.data(), kBudget, {starts_.data(), n_starts_});
    n_starts_ = 0;
    send(buf_.data(), len);
  }
  template <class Send>
  void send_ends(Send& send) {
    if (n_ends_ == 0) return;
    send_starts(send);
    const uint32_t len = build_flowlet_end(buf_.data(), kBudget, {ends_.data(), n_ends_});
    n_ends_ = 0;
    send(buf_.data(), len);
  }

  std::array<FlowletStart, kMaxStarts> starts_{};
  std::array<FlowletEnd, kMaxEnds> ends_{};
  std::array<uint8_t, kBudget> buf_{};
  uint32_t n_starts_ = 0;
  uint32_t n_ends_ = 0;
};

}  // namespace sluice
