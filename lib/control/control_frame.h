#pragma once
// Sluice control frames (Ethernet type 0x88B5): Floodgate credits, dstPause
// and sync, and BFC pause / resume / bitmap. docs/wire-formats.md gives the
// byte layout, the bit order of BFC_BITMAP, the MTU rule and error handling.
//
// Builders write a complete Ethernet frame (dst, src, type, header, body,
// zero padding up to the 60-byte minimum) and never write at or beyond
// out + cap. The parser reads only [p, p + len). Neither allocates.

#include <cstdint>
#include <span>

#include "lib/config/config.h"
#include "lib/net/byte_order.h"

namespace sluice {

inline constexpr uint8_t kControlMagic0 = 'S';
inline constexpr uint8_t kControlMagic1 = 'L';
inline constexpr uint8_t kControlVersion = 1;
inline constexpr uint32_t kControlHeaderLen = 8;  // magic(2) version type body_len(2) shard flags
inline constexpr uint32_t kControlCountLen = 2;   // the count / queue field that opens each body

enum class ControlType : uint8_t {
  kFgCredit = 1,
  kFgDstPause = 2,
  kBfcPause = 3,
  kBfcResume = 4,
  kBfcBitmap = 5,
  kFgSync = 6,
};

// Bytes per list entry on the wire.
inline constexpr uint32_t kFgCreditEntryLen = 8;    // dst IPv4 (4), credit bytes (4)
inline constexpr uint32_t kFgDstPauseEntryLen = 8;  // dst IPv4 (4), pause (1), reserved (3)
// dst IPv4 (4), bytes sent (8), credit bytes received (8)
inline constexpr uint32_t kFgSyncEntryLen = 20;

// Addresses are in host byte order here, network order on the wire.
struct CreditEntry {
  uint32_t dst_ip;
  uint32_t credit_bytes;
};
struct DstPauseEntry {
  uint32_t dst_ip;
  bool pause;  // true: pause, false: resume
};
// FG_SYNC: the upstream's cumulative counters toward dst on this link.
struct SyncEntry {
  uint32_t dst_ip;
  uint64_t bytes_sent;
  uint64_t credit_received;
};

enum class ControlParseResult : uint8_t {
  kOk,
  kTooShort,     // fewer than the 8 header bytes
  kBadMagic,     // not 'S' 'L'
  kBadVersion,   // version other than 1
  kUnknownType,  // type 0 or above 6
  kMalformed,    // body length beyond the frame, or not what the type's layout requires
};

// A parsed frame: header fields and a view into the caller's bytes (valid as
// long as they are). `count` is the entry count of a list, the queue count of
// a bitmap, and the queue of BFC_PAUSE / BFC_RESUME.
struct ControlMessage {
  uint8_t version;
  ControlType type;
  uint16_t body_len;
  uint8_t shard;
  uint8_t flags;  // sent as 0; ignored on receipt
  uint16_t count;
  const uint8_t* entries;  // first entry / bitmap byte, just after `count`

  uint16_t queue() const { return count; }
  CreditEntry credit(uint32_t i) const {
    const uint8_t* e = entries + i * kFgCreditEntryLen;
    return {load_be32(e), load_be32(e + 4)};
  }
  DstPauseEntry dst_pause(uint32_t i) const {
    const uint8_t* e = entries + i * kFgDstPauseEntryLen;
    return {load_be32(e), e[4] != 0};
  }
  SyncEntry sync(uint32_t i) const {
    const uint8_t* e = entries + i * kFgSyncEntryLen;
    return {load_be32(e), load_be64(e + 4), load_be64(e + 12)};
  }
  // BFC_BITMAP: queue q is paused when bit (q % 8) of byte q / 8 is set.
  bool queue_paused(uint32_t q) const { return q < count && ((entries[q / 8] >> (q % 8)) & 1); }
};

// `p` points just past the 0x88B5 type; `len` is what remains of the frame
// (padding included: the body length, not `len`, says where the body ends).
ControlParseResult parse_control(const uint8_t* p, uint32_t len, ControlMessage* out);

// Writes the paused set of a BFC_BITMAP message into words[0..word_count):
// bit q % 64 of words[q / 64] for queue q. Queues beyond the message's count,
// and bits beyond word_count * 64, are left clear / dropped.
void control_bitmap_to_words(const ControlMessage& msg, uint64_t* words, uint32_t word_count);

// Fixed-size frames. Return the frame length (60, the padded minimum), or 0
// when cap is too small.
uint32_t build_bfc_pause(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                         uint8_t shard, uint16_t queue);
uint32_t build_bfc_resume(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                          uint8_t shard, uint16_t queue);

// BFC_BITMAP for queues 0..queue_count-1; queue q is paused when bit q % 64 of
// words[q / 64] is set (words holds ceil(queue_count / 64) entries). Returns
// the frame length, or 0 when it does not fit in cap: the caller passes
// cap <= 14 + MTU to respect the MTU (one frame is never split).
uint32_t build_bfc_bitmap(uint8_t* out, uint32_t cap, const MacAddr& dst, const MacAddr& src,
                          uint8_t shard, const uint64_t* words, uint16_t queue_count);
// Its payload (after the Ethernet header, padding aside: 522 bytes for 4096
// queues) and the frame's length (536 bytes).
uint32_t bfc_bitmap_payload(uint32_t queue_count);
uint32_t bfc_bitmap_len(uint16_t queue_count);
// Word i of a BFC_BITMAP's bits for `count` queues (bit q % 64 for queue
// q), bits at or beyond count clear; reads only the bytes those queues use.
uint64_t bfc_bitmap_word(const uint8_t* bits, uint32_t count, uint32_t i);

// List frames carry as many leading entries as fit in one frame whose
// payload (everything after the 14-byte Ethernet header) is at most `mtu`
// bytes and whose total length is at most `cap`. `consumed` entries were
// written; the caller sends the frame and builds the next from the rest.
// {0, 0} when not even one entry fits (or, for an empty list, the header).
struct ControlListFrame {
  uint32_t len;
  uint32_t consumed;
};
ControlListFrame build_fg_credit(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                                 const MacAddr& src, uint8_t shard,
                                 std::span<const CreditEntry> entries);
ControlListFrame build_fg_dst_pause(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                                    const MacAddr& src, uint8_t shard,
                                    std::span<const DstPauseEntry> entries);
ControlListFrame build_fg_sync(uint8_t* out, uint32_t cap, uint32_t mtu, const MacAddr& dst,
                               const MacAddr& src, uint8_t shard,
                               std::span<const SyncEntry> entries);

// Entries one frame of `mtu` payload bytes holds: (mtu - 8 - 2) / entry_len,
// capped by the 16-bit count and body length.
uint32_t control_entries_per_frame(uint32_t mtu, uint32_t entry_len);

}  // namespace sluice
