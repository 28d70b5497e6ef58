#pragma once
// One check of the control-frame codec on arbitrary bytes, shared by the
// libFuzzer target (control_fuzz.cc) and a unit test that feeds it mutated
// frames under gcc in every CI run. Whatever parse_control accepts must lie
// inside the input, and building the accepted message again must give a
// frame that parses to the same message; a BFC message applied to a switch
// port's and a 4096-queue NIC's pause state leaves them consistent. Returns
// false on a violation.

#include <cstdint>
#include <cstring>
#include <vector>

#include "lib/control/control_frame.h"
#include "lib/mechanisms/bfc/upstream_pause_state.h"

namespace sluice {

inline bool same_list(const ControlMessage& a, const ControlMessage& b) {
  if (a.type != b.type || a.count != b.count || a.shard != b.shard) return false;
  for (uint32_t i = 0; i < a.count; ++i) {
    switch (a.type) {
      case ControlType::kFgCredit:
        if (a.credit(i).dst_ip != b.credit(i).dst_ip ||
            a.credit(i).credit_bytes != b.credit(i).credit_bytes) {
          return false;
        }
        break;
      case ControlType::kFgDstPause:
        if (a.dst_pause(i).dst_ip != b.dst_pause(i).dst_ip ||
            a.dst_pause(i).pause != b.dst_pause(i).pause) {
          return false;
        }
        break;
      case ControlType::kFgSync:
        if (a.sync(i).dst_ip != b.sync(i).dst_ip || a.sync(i).bytes_sent != b.sync(i).bytes_sent ||
            a.sync(i).credit_received != b.sync(i).credit_received) {
          return false;
        }
        break;
      case ControlType::kBfcBitmap:
        if (a.queue_paused(i) != b.queue_paused(i)) return false;
        break;
      default:
        break;
    }
  }
  return true;
}

// Builds `m` again into out (cleared); returns the frame length, 0 if the
// builder refused.
inline uint32_t rebuild(const ControlMessage& m, std::vector<uint8_t>& out) {
  const MacAddr dst{{2, 0, 0, 0, 0, 1}}, src{{2, 0, 0, 0, 0, 2}};
  out.assign(14 + 8 + 2 + 20u * m.count + 64, 0);
  const auto cap = static_cast<uint32_t>(out.size());
  constexpr uint32_t kMtu = 0xFFFF;
  switch (m.type) {
    case ControlType::kFgCredit: {
      std::vector<CreditEntry> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.credit(i);
      return build_fg_credit(out.data(), cap, kMtu, dst, src, m.shard, e).len;
    }
    case ControlType::kFgDstPause: {
      std::vector<DstPauseEntry> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.dst_pause(i);
      return build_fg_dst_pause(out.data(), cap, kMtu, dst, src, m.shard, e).len;
    }
    case ControlType::kFgSync: {
      std::vector<SyncEntry> e(m.count);
      for (uint32_t i = 0; i < m.count; ++i) e[i] = m.sync(i);
      return build_fg_sync(out.data(), cap, kMtu, dst, src, m.shard, e).len;
    }
    case ControlType::kBfcBitmap: {
      std::vector<uint64_t> words((m.count + 63) / 64 + 1);
      control_bitmap_to_words(m, words.data(), static_cast<uint32_t>(words.size()));
      return build_bfc_bitmap(out.data(), cap, dst, src, m.shard, words.data(), m.count);
    }
    case ControlType::kBfcPause:
      return build_bfc_pause(out.data(), cap, dst, src, m.shard, m.queue());
    case ControlType::kBfcResume:
      return build_bfc_resume(out.data(), cap, dst, src, m.shard, m.queue());
  }
  return 0;
}

// A BFC message applied to the upstream state of a switch port (8 queues)
// and of a NIC with a queue per flow (4096): the paused set, its count and
// the per-queue answer agree, and nothing outside the queues is paused.
inline bool check_upstream_state(const ControlMessage& m) {
  for (uint32_t queues : {8u, 4096u}) {
    UpstreamPauseState u(queues);
    u.on_message(m);
    if (u.paused_set().count() != u.paused_count()) return false;
    for (uint32_t q = 0; q < queues; ++q)
      if (u.paused(static_cast<uint16_t>(q)) != u.paused_set().test(q)) return false;
    if (m.type == ControlType::kBfcBitmap) {
      for (uint32_t q = 0; q < queues; ++q)
        if (u.paused(static_cast<uint16_t>(q)) != (m.shard < 64 && m.queue_paused(q))) return false;
    }
  }
  return true;
}

// `p` points just past the 0x88B5 type, as the switch calls parse_control.
inline bool check_control_codec(const uint8_t* p, uint32_t len) {
  ControlMessage m;
  if (parse_control(p, len, &m) != ControlParseResult::kOk) return true;
  if (!check_upstream_state(m)) return false;
  if (kControlHeaderLen + m.body_len > len) return false;
  if (m.entries != p + kControlHeaderLen + kControlCountLen) return false;
  std::vector<uint8_t> again;
  const uint32_t n = rebuild(m, again);
  if (n < 14 || n > again.size()) return false;
  ControlMessage m2;
  if (parse_control(again.data() + 14, n - 14, &m2) != ControlParseResult::kOk) return false;
  return m2.body_len == m.body_len && same_list(m, m2);
}

}  // namespace sluice
