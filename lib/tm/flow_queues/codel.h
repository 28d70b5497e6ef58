#pragma once
// CoDel, "Controlled Delay Active Queue Management" (RFC 8289): one queue's
// control state. Each packet's sojourn time is measured as it leaves. Once
// the sojourn time has stayed at or above `target` for a whole `interval`
// (while more than one MTU is queued), the queue enters the dropping state
// and drops (or ECN-marks) one packet, then the next at intervals of
// interval / sqrt(count), the control law (RFC 8289 section 4.2 and its
// pseudocode in section 5). It leaves the dropping state when a packet's
// sojourn time is below target again. Re-entering soon after leaving
// resumes near the old drop rate (section 5.6's "count - lastcount").
//
// The queue itself is the caller's: dequeue() takes a callback that pops
// the queue's head (or says it is empty) and a callback that disposes of a
// dropped packet, so the same state serves any FIFO. Time is an argument.
// A caller that cannot take a drop now (its list of dropped packets is
// full) says so, and the packet is sent instead, the drop still due.

#include <cmath>
#include <cstdint>

namespace sluice {

struct CodelParams {
  uint64_t target_ns = 5'000'000;      // RFC 8289 section 4.4: 5 ms on the Internet
  uint64_t interval_ns = 100'000'000;  // section 4.5: 100 ms on the Internet
  uint32_t mtu_bytes = 1514;           // "maxpacket": a queue this short is never dropped from
  bool ecn = false;                    // mark ECN-capable packets instead of dropping them
};

// A packet as CoDel sees it as it leaves.
struct CodelPacket {
  uint64_t enqueue_ns;
  bool ecn_capable;
};

// What dequeue() did with the packet it returns.
enum class CodelVerdict : uint8_t { kNone, kSend, kSendMarked };

class CodelState {
 public:
  // The control law: when to drop next, given the time of this drop and the
  // drops so far in this dropping state. IEEE sqrt is exact, so the result
  // is the same on every machine.
  static uint64_t control_law(uint64_t t, uint64_t interval_ns, uint32_t count) {
    return t + static_cast<uint64_t>(static_cast<double>(interval_ns) /
                                     std::sqrt(static_cast<double>(count)));
  }

  // Dequeues one packet of the queue at now_ns, dropping as the control
  // law says. pop(CodelPacket*) takes the head (false: the queue is empty)
  // and bytes_left() gives the queue's bytes after it; drop() disposes of
  // the packet pop() just took, or returns false when it cannot, and then
  // that packet is sent and the state stays as it was (the drop is still
  // due at the next dequeue). Returns kNone when the queue ran empty.
  template <class Pop, class BytesLeft, class Drop>
  CodelVerdict dequeue(uint64_t now_ns, const CodelParams& p, Pop&& pop, BytesLeft&& bytes_left,
                       Drop&& drop) {
    CodelPacket pkt;
    bool ok_to_drop = false;
    if (!do_dequeue(now_ns, p, pop, bytes_left, &pkt, &ok_to_drop)) {
      dropping_ = false;
      return CodelVerdict::kNone;
    }
    if (dropping_) {
      if (!ok_to_drop) {
        dropping_ = false;
      } else if (now_ns >= drop_next_ns_) {
        // Drop (or mark) at the control law's times until the next drop is
        // in the future or the sojourn time falls below target.
        while (now_ns >= drop_next_ns_ && dropping_) {
          const bool mark = p.ecn && pkt.ecn_capable;
          if (!mark && !drop()) return CodelVerdict::kSend;
          ++count_;
          if (mark) {
            ++marks_;
            drop_next_ns_ = control_law(drop_next_ns_, p.interval_ns, count_);
            return CodelVerdict::kSendMarked;
          }
          ++drops_;
          if (!do_dequeue(now_ns, p, pop, bytes_left, &pkt, &ok_to_drop)) {
            dropping_ = false;
            return CodelVerdict::kNone;
          }
          if (!ok_to_drop) {
            dropping_ = false;
          } else {
            drop_next_ns_ = control_law(drop_next_ns_, p.interval_ns, count_);
          }
        }
      }
      return CodelVerdict::kSend;
    }
    if (!ok_to_drop) return CodelVerdict::kSend;
    // Enter the dropping state with this packet.
    CodelVerdict verdict = CodelVerdict::kSend;
    if (p.ecn && pkt.ecn_capable) {
      ++marks_;
      verdict = CodelVerdict::kSendMarked;
    } else {
      if (!drop()) return CodelVerdict::kSend;  // enters at the next dequeue instead
      ++drops_;
      if (!do_dequeue(now_ns, p, pop, bytes_left, &pkt, &ok_to_drop)) verdict = CodelVerdict::kNone;
    }
    dropping_ = true;
    // Section 5.6: back soon after leaving, start near the old rate.
    const uint32_t delta = count_ - last_count_;
    count_ = 1;
    if (delta > 1 && now_ns - drop_next_ns_ < 16 * p.interval_ns) count_ = delta;
    drop_next_ns_ = control_law(now_ns, p.interval_ns, count_);
    last_count_ = count_;
    return verdict;
  }

  bool dropping() const { return dropping_; }
  uint32_t count() const { return count_; }
  uint64_t drop_next_ns() const { return drop_next_ns_; }
  uint64_t drops() const { return drops_; }
  uint64_t marks() const { return marks_; }

 private:
  // RFC 8289's dodequeue: pops the head and says whether the sojourn time
  // has been above target for an interval. False when the queue is empty.
  template <class Pop, class BytesLeft>
  bool do_dequeue(uint64_t now_ns, const CodelParams& p, Pop& pop, BytesLeft& bytes_left,
                  CodelPacket* pkt, bool* ok_to_drop) {
    *ok_to_drop = false;
    if (!pop(pkt)) {
      first_above_ns_ = 0;
      return false;
    }
    const uint64_t sojourn = now_ns - pkt->enqueue_ns;
    if (sojourn < p.target_ns || bytes_left() <= p.mtu_bytes) {
      first_above_ns_ = 0;
    } else if (first_above_ns_ == 0) {
      first_above_ns_ = now_ns + p.interval_ns;
    } else if (now_ns >= first_above_ns_) {
      *ok_to_drop = true;
    }
    return true;
  }

  bool dropping_ = false;
  uint32_t count_ = 0;
  uint32_t last_count_ = 0;
  uint64_t first_above_ns_ = 0;
  uint64_t drop_next_ns_ = 0;
  uint64_t drops_ = 0;
  uint64_t marks_ = 0;
};

}  // namespace sluice
