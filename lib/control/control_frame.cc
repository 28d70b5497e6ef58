#include "lib/control/control_frame.h"

#include <algorithm>
#include <cstring>

#include "lib/net/ethertypes.h"

namespace sluice {

namespace {

constexpr uint32_t kMaxBodyLen = 0xFFFF;
constexpr uint32_t kMaxCount = 0xFFFF;
constexpr uint32_t kControlPrefixLen = kEthHeaderLen + kControlHeaderLen + kControlCountLen;

// Frames shorter than the Ethernet minimum are zero-padded up to it.
uint32_t padded_len(uint32_t len) { return std::max(len, kEthMinFrameLen); }

// Writes Ethernet header, control header and the count field, and zeroes the
// padding; returns where the entries start. `frame_len` already padded.
uint8_t* start_frame(uint8_t* out, uint32_t frame_len, const MacAddr& dst, const MacAddr& src,
                     ControlType type, uint8_t shard, uint32_t body_len, uint16_t count) {
  std::memset(out + kControlPrefixLen, 0, frame_len - kControlPrefixLen);
  std::memcpy(out, dst.data(), 6);
  std::memcpy(out + 6, src.data(), 6);
  store_be16(out + 12, kEtherTypeSluiceControl);
  uint8_t* h = out + kEthHeaderLen;
  h[0] = kControlMagic0;
  h[1] = kControlMagic1;
  h[2] = kControlVersion;
  h[3] = static_cast<uint8_t>(type);
  store_be16(h + 4, static_cast<uint16_t>(body_len));
  h[6] = shard;
  h[7] = 0;  // flags
  store_be16(h + kControlHeaderLen, count);
  return h + kControlHeaderLen + kControlCountLen;
}

uint32_t build_queue_frame(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                           ControlType type, uint8_t shard, uint16_t queue) {
  const uint32_t len = padded_len(kControlPrefixLen);
  if (cap < len) return 0;
  start_frame(out, len, dst, src, type, shard, kControlCountLen, queue);
  return len;
}

// How many of `available` entries one frame takes, and its padded length.
ControlListFrame plan_list(uint32_t cap, uint32_t mtu, uint32_t entry_len, size_t available) {
  const uint32_t payload_limit =
      std::min<uint64_t>(mtu, cap < kEthHeaderLen ? 0 : cap - kEthHeaderLen);
  const uint32_t n = static_cast<uint32_t>(
      std::min<uint64_t>(control_entries_per_frame(payload_limit, entry_len), available));
  if (n == 0 && available != 0) return {0, 0};
  if (payload_limit < kControlHeaderLen + kControlCountLen) return {0, 0};
  const uint32_t len = padded_len(kControlPrefixLen + n * entry_len);
  if (len > cap) return {0, 0};
  return {len, n};
}

template <typename Entry, typename Store>
ControlListFrame build_list(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                            const MacAddr& src, ControlType type, uint8_t shard,
                            std::span<const Entry> entries, uint32_t entry_len, Store store) {
  const ControlListFrame plan = plan_list(cap, mtu, entry_len, entries.size());
  if (plan.len == 0) return plan;
  const uint32_t body_len = kControlCountLen + plan.consumed * entry_len;
  uint8_t* e = start_frame(out, plan.len, dst, src, type, shard, body_len,
                           static_cast<uint16_t>(plan.consumed));
  for (uint32_t i = 0; i < plan.consumed; ++i, e += entry_len) store(e, entries[i]);
  return plan;
}

// The body length each type requires, given its count / queue field.
uint32_t expected_body_len(ControlType type, uint32_t count) {
  switch (type) {
    case ControlType::kFgCredit:
      return kControlCountLen + count * kFgCreditEntryLen;
    case ControlType::kFgDstPause:
      return kControlCountLen + count * kFgDstPauseEntryLen;
    case ControlType::kFgSync:
      return kControlCountLen + count * kFgSyncEntryLen;
    case ControlType::kBfcBitmap:
      return kControlCountLen + (count + 7) / 8;
    case ControlType::kBfcPause:
    case ControlType::kBfcResume:
      break;
  }
  return kControlCountLen;
}

}  // namespace

uint32_t control_entries_per_frame(uint32_t mtu, uint32_t entry_len) {
  constexpr uint32_t kFixed = kControlHeaderLen + kControlCountLen;
  if (mtu < kFixed) return 0;
  const uint32_t by_mtu = (mtu - kFixed) / entry_len;
  const uint32_t by_body = (kMaxBodyLen - kControlCountLen) / entry_len;
  return std::min({by_mtu, by_body, kMaxCount});
}

uint32_t build_bfc_pause(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                         uint8_t shard, uint16_t queue) {
  return build_queue_frame(out, cap, dst, src, ControlType::kBfcPause, shard, queue);
}

uint32_t build_bfc_resume(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                          uint8_t shard, uint16_t queue) {
  return build_queue_frame(out, cap, dst, src, ControlType::kBfcResume, shard, queue);
}

uint32_t bfc_bitmap_payload(uint32_t queue_count) {
  return kControlHeaderLen + kControlCountLen + (queue_count + 7) / 8;
}

uint32_t bfc_bitmap_len(uint16_t queue_count) {
  return padded_len(kEthHeaderLen + bfc_bitmap_payload(queue_count));
}

uint64_t bfc_bitmap_word(const uint8_t* bits, uint32_t count, uint32_t i) {
  if (count <= i * 64) return 0;
  const uint32_t n = std::min<uint32_t>(count - i * 64, 64);  // this word's queues
  uint64_t w = 0;
  for (uint32_t b = 0; b * 8 < n; ++b) w |= uint64_t{bits[i * 8 + b]} << (8 * b);
  return n == 64 ? w : w & ((uint64_t{1} << n) - 1);
}

uint32_t build_bfc_bitmap(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                          uint8_t shard, const uint64_t* words, uint16_t queue_count) {
  const uint32_t bytes = (uint32_t{queue_count} + 7) / 8;
  const uint32_t len = bfc_bitmap_len(queue_count);
  if (cap < len) return 0;
  uint8_t* bits = start_frame(out, len, dst, src, ControlType::kBfcBitmap, shard,
                              kControlCountLen + bytes, queue_count);
  // Byte j holds queues 8j..8j+7, LSB first: byte j of the little-endian
  // layout of the words.
  for (uint32_t j = 0; j < bytes; ++j) {
    bits[j] = static_cast<uint8_t>(words[j / 8] >> (8 * (j % 8)));
  }
  // Bits for queues at or beyond queue_count go out as zero.
  if (queue_count % 8 != 0) bits[bytes - 1] &= static_cast<uint8_t>((1u << (queue_count % 8)) - 1);
  return len;
}

ControlListFrame build_fg_credit(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                                 const MacAddr& src, uint8_t shard,
                                 std::span<const CreditEntry> entries) {
  return build_list(out, cap, mtu, dst, src, ControlType::kFgCredit, shard, entries,
                    kFgCreditEntryLen, [](uint8_t* e, const CreditEntry& c) {
                      store_be32(e, c.dst_ip);
                      store_be32(e + 4, c.credit_bytes);
                    });
}

ControlListFrame build_fg_dst_pause(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                                    const MacAddr& src, uint8_t shard,
                                    std::span<const DstPauseEntry> entries) {
  return build_list(out, cap, mtu, dst, src, ControlType::kFgDstPause, shard, entries,
                    kFgDstPauseEntryLen, [](uint8_t* e, const DstPauseEntry& d) {
                      store_be32(e, d.dst_ip);
                      e[4] = d.pause ? 1 : 0;
                      e[5] = e[6] = e[7] = 0;
                    });
}

ControlListFrame build_fg_sync(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                               const MacAddr& src, uint8_t shard,
                               std::span<const SyncEntry> entries) {
  return build_list(out, cap, mtu, dst, src, ControlType::kFgSync, shard, entries, kFgSyncEntryLen,
                    [](uint8_t* e, const SyncEntry& s) {
                      store_be32(e, s.dst_ip);
                      store_be64(e + 4, s.bytes_sent);
                      store_be64(e + 12, s.credit_received);
                    });
}

ControlParseResult parse_control(const uint8_t* p, uint32_t len, ControlMessage* out) {
  if (len < kControlHeaderLen) return ControlParseResult::kTooShort;
  if (p[0] != kControlMagic0 || p[1] != kControlMagic1) return ControlParseResult::kBadMagic;
  if (p[2] != kControlVersion) return ControlParseResult::kBadVersion;
  const uint8_t type = p[3];
  if (type < static_cast<uint8_t>(ControlType::kFgCredit) ||
      type > static_cast<uint8_t>(ControlType::kFgSync)) {
    return ControlParseResult::kUnknownType;
  }
  const uint32_t body_len = load_be16(p + 4);
  // Every body opens with a 2-byte count or queue.
  if (body_len < kControlCountLen || body_len > len - kControlHeaderLen) {
    return ControlParseResult::kMalformed;
  }
  const uint8_t* body = p + kControlHeaderLen;
  const uint16_t count = load_be16(body);
  if (body_len != expected_body_len(static_cast<ControlType>(type), count)) {
    return ControlParseResult::kMalformed;
  }
  out->version = p[2];
  out->type = static_cast<ControlType>(type);
  out->body_len = static_cast<uint16_t>(body_len);
  out->shard = p[6];
  out->flags = p[7];
  out->count = count;
  out->entries = body + kControlCountLen;
  return ControlParseResult::kOk;
}

void control_bitmap_to_words(const ControlMessage& msg, uint64_t* words, uint32_t word_count) {
  const uint32_t queues = std::min<uint64_t>(msg.count, uint64_t{word_count} * 64);
  for (uint32_t i = 0; i < word_count; ++i) words[i] = bfc_bitmap_word(msg.entries, queues, i);
}

}  // namespace sluice
