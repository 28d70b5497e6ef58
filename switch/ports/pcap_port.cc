#include "switch/ports/pcap_port.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "lib/control/data_shim.h"
#include "lib/emulator/event_calendar.h"
#include "lib/net/byte_order.h"
#include "lib/net/flow_hash.h"
#include "lib/net/packet_parser.h"

namespace sluice {

// The ring absorbs the writer thread's pauses (a slow disk, a busy core):
// 8 MiB is ~50 ms of a 10 Gbps port's 128-byte records.
constexpr size_t kCaptureRingBytes = 8u << 20;
// The file's stdio buffer, filled and written by the writer thread.
constexpr size_t kFileBufferBytes = 1u << 20;
// In fabric time the worker drains the ring into the file when it is full.
constexpr size_t kEmulatedCaptureBytes = 64u << 10;
// copy_frame(): the frame goes without a shim.
constexpr uint16_t kNoShim = UINT16_MAX;

std::unique_ptr<PcapPort> PcapPort::open(const PcapPortConfig& cfg, MbufSupply& mbufs,
                                         std::string* error, bool emulated) {
  PcapCapture capture;
  std::vector<uint32_t> replayed;
  uint64_t oversize = 0;
  uint32_t largest = 0;
  if (!cfg.rx_path.empty()) {
    if (!read_pcap_file(cfg.rx_path, &capture, error)) return nullptr;
    const uint32_t room = mbufs.data_room() - RTE_PKTMBUF_HEADROOM;
    replayed.reserve(capture.records.size());
    for (size_t i = 0; i < capture.records.size(); ++i) {
      if (capture.records[i].wire_len() > room) {
        ++oversize;
        largest = std::max(largest, capture.records[i].wire_len());
      } else {
        replayed.push_back(static_cast<uint32_t>(i));
      }
    }
  }
  std::unique_ptr<PcapPort> port(
      new PcapPort(cfg, mbufs, std::move(capture), std::move(replayed), oversize));
  port->oversize_largest_ = largest;
  if (!cfg.tx_path.empty()) {
    if (!port->writer_.open(cfg.tx_path, error, emulated ? kEmulatedCaptureBytes : kFileBufferBytes,
                            cfg.snaplen))
      return nullptr;
    // A ring holds a few whole records at least, whatever the snaplen.
    const size_t ring_bytes =
        emulated ? std::max<size_t>(kEmulatedCaptureBytes, 4 * (size_t{cfg.snaplen} + 64))
                 : kCaptureRingBytes;
    port->ring_ = std::make_unique<CaptureRing>(ring_bytes, port->writer_.snaplen());
  }
  return port;
}

namespace {

std::vector<uint64_t> timestamps_of(const PcapCapture& c, const std::vector<uint32_t>& frames) {
  std::vector<uint64_t> ts;
  ts.reserve(frames.size());
  for (uint32_t i : frames) ts.push_back(c.records[i].ts_ns);
  return ts;
}

}  // namespace

PcapPort::PcapPort(const PcapPortConfig& cfg, MbufSupply& mbufs, PcapCapture capture,
                   std::vector<uint32_t> replayed, uint64_t oversize)
    : cfg_(cfg),
      mbufs_(mbufs),
      capture_(std::move(capture)),
      replayed_(std::move(replayed)),
      schedule_(capture_offsets(timestamps_of(capture_, replayed_)), cfg.mode, cfg.loop, cfg.speed),
      oversize_skipped_(oversize) {}

void PcapPort::set_host_nic(const HostNicConfig& nic, NicQueueKey key,
                            const std::array<uint8_t, 64>& dscp_priority) {
  host_ = HostNic(nic);
  dscp_priority_ = dscp_priority;
  queue_key_ = key;
  nic_info_.clear();
  if (!host_.enabled()) return;
  nic_info_.reserve(replayed_.size());
  for (uint32_t i : replayed_) {
    const PcapRecord& r = capture_.records[i];
    ParsedPacket pp;
    // Its headers as the switch will see them: at the wire length when the
    // capture kept every header the parser may read (kMaxHeaderBytes).
    constexpr uint32_t kMaxHeaderBytes = 92;
    parse_packet(capture_.bytes.data() + r.offset,
                 r.caplen >= kMaxHeaderBytes ? r.wire_len() : r.caplen, &pp);
    NicFrameInfo info{0, 0, 0, 0};
    if (pp.kind == PacketKind::kIpv4) {
      info.dst_ip = pp.dst_ip;
      info.priority = dscp_priority[pp.tos >> 2];
      const uint64_t dst_or_flow =
          key == NicQueueKey::kFlow
              ? flow_hash(pp.src_ip, pp.dst_ip, pp.proto, pp.src_port, pp.dst_port)
              : pp.dst_ip;
      // Classes never share a queue, so a PFC pause holds only its own.
      info.key = uint64_t{info.priority} << 32 | dst_or_flow;
      if (!pp.has_shim && pp.l3_offset >= 14) info.type_offset = uint8_t(pp.l3_offset - 2);
    }
    nic_info_.push_back(info);
  }
}

void PcapPort::set_host_link(uint64_t rate_bps, uint32_t overhead_bytes) {
  HostNicConfig nic;
  nic.rate_bps = rate_bps;
  nic.overhead_bytes = overhead_bytes;
  std::array<uint8_t, 64> by_dscp;
  for (uint32_t d = 0; d < 64; ++d) by_dscp[d] = static_cast<uint8_t>(d >> 3);
  set_host_nic(nic, NicQueueKey::kDestination, by_dscp);
}

void PcapPort::set_exact_link(uint64_t delay_ns, uint32_t mtu, uint32_t copy_bytes) {
  exact_ = true;
  copy_bytes_ = copy_bytes == 0 ? UINT32_MAX : copy_bytes;
  link_delay_ns_ = delay_ns;
  // Frames on the link at once: as many as the shortest frame's
  // serialisation fits in the delay and the longest frame's, and a margin.
  const HostNicConfig& nic = host_.config();
  const double bytes_per_ns = nic.rate_bps / 8e9;
  const double shortest = 60.0 + nic.overhead_bytes;
  const double in_flight = (delay_ns * bytes_per_ns + mtu + 14 + nic.overhead_bytes) / shortest;
  uint32_t size = 16;
  while (size < in_flight + 4 && size < (1u << 24)) size <<= 1;
  arrivals_.assign(size, Arrival{nullptr, 0});
}

uint16_t PcapPort::rx_burst(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  if (!host_.enabled()) return replay_direct(now_ns, pkts, n);
  if (app_) app_deliver(now_ns);
  host_.poll(now_ns);
  if (app_) {
    app_poll(now_ns);
  } else {
    hand_over(now_ns);
  }
  // (Exact time sets this gauge once, at the end: settle_gauges.)
  if (!exact_) host_paused_ns_.set(host_.paused_ns(now_ns));
  uint16_t got;
  if (exact_) {
    launch(now_ns);
    // What the wire just took lets its flows hand over their next segments.
    if (app_) app_poll(now_ns);
    got = arrive(now_ns, pkts, n);
  } else {
    got = nic_send(now_ns, pkts, n);
  }
  const uint32_t held = host_.queues().held();
  host_held_.set(held);
  if (held > host_peak_held_.get()) host_peak_held_.set(held);
  return got;
}

// The application hands every due frame to the NIC, in capture order, until
// the NIC is full; then it waits, as a sender blocked on a full socket does.
void PcapPort::hand_over(uint64_t now_ns) {
  while (schedule_.ready(now_ns)) {
    if (host_.full()) {
      host_full_polls_.add();
      return;
    }
    const uint32_t frame = static_cast<uint32_t>(schedule_.frame());
    const NicFrameInfo& info = nic_info_[frame];
    NicFrame f;
    f.due_ns = schedule_.due_ns();
    f.id = frame;
    f.bytes = capture_.records[replayed_[frame]].wire_len() + (shimmed(frame) ? kSluiceShimLen : 0);
    f.priority = info.priority;
    f.dst_ip = info.dst_ip;
    f.rank = kSltNoRank;
    host_.enqueue(info.key, f, now_ns);
    count_pass();
  }
}

uint16_t PcapPort::nic_send(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  const bool paced = cfg_.mode == PcapReplayMode::kPaced;
  uint64_t worst = max_lateness_ns_.get();
  uint64_t bytes = 0;
  uint16_t got = 0;
  HostNic::Pick p;
  while (got < n && host_.pick(now_ns, &p)) {
    const uint16_t shim_queue = shimmed(p.frame.id) ? static_cast<uint16_t>(p.queue) : kNoShim;
    rte_mbuf* m = copy_frame(p.frame.id, shim_queue);
    if (m == nullptr) break;
    host_.sent(p);
    bytes += m->pkt_len;
    if (paced) note_lateness(now_ns - p.start_ns, &worst);
    pkts[got++] = m;
  }
  count_replayed(got, bytes, worst);
  return got;
}

// Exact fabric time: the NIC puts what it may on the host's link now; each
// frame reaches the switch once its last bit has crossed the link.
void PcapPort::launch(uint64_t now_ns) {
  if (now_ns < starved_until_ns_) return;
  const uint32_t mask = static_cast<uint32_t>(arrivals_.size()) - 1;
  uint64_t worst = max_lateness_ns_.get();
  HostNic::Pick p;
  while (arrival_count_ <= mask && host_.pick(now_ns, &p)) {
    rte_mbuf* m;
    if (app_) {
      m = app_frame(p, now_ns);
    } else {
      const uint16_t shim_queue = shimmed(p.frame.id) ? static_cast<uint16_t>(p.queue) : kNoShim;
      m = copy_frame(p.frame.id, shim_queue);
    }
    if (m == nullptr) {
      // Asked again a retry later (deterministically), not at every instant.
      starved_until_ns_ = now_ns + EventCalendar::kRetryNs;
      break;
    }
    host_.sent(p);
    note_lateness(now_ns - p.start_ns, &worst);
    arrivals_[(arrival_head_ + arrival_count_++) & mask] = {m,
                                                            host_.wire_free_ns() + link_delay_ns_};
  }
  max_lateness_ns_.set(worst);
}

uint16_t PcapPort::arrive(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  const uint32_t mask = static_cast<uint32_t>(arrivals_.size()) - 1;
  uint64_t bytes = 0;
  uint16_t got = 0;
  while (got < n && arrival_count_ != 0 && arrivals_[arrival_head_].due_ns <= now_ns) {
    rte_mbuf* m = arrivals_[arrival_head_].m;
    arrival_head_ = (arrival_head_ + 1) & mask;
    --arrival_count_;
    bytes += m->pkt_len;
    pkts[got++] = m;
  }
  if (got != 0) {
    rx_frames_.add(got);
    rx_bytes_.add(bytes);
  }
  return got;
}

uint64_t PcapPort::next_rx_ns(uint64_t now_ns) const {
  const uint32_t mask = static_cast<uint32_t>(arrivals_.size()) - 1;
  uint64_t due = arrival_count_ != 0 ? arrivals_[arrival_head_].due_ns : UINT64_MAX;
  if (!host_.enabled()) {
    if (schedule_.started() && !schedule_.done())
      due = std::min(due, cfg_.mode == PcapReplayMode::kFast ? now_ns : schedule_.due_ns());
    return due;
  }
  // A full link waits for its next arrival; a dry pool for its retry.
  if (arrival_count_ <= mask)
    due = std::min(due, std::max(host_.next_due_ns(now_ns), starved_until_ns_));
  if (app_) {
    if (inbox_count_ != 0) due = std::min(due, inbox_at_[inbox_head_]);
    const uint64_t app_due = app_->next_due_ns();
    if (app_due != kTransportNever)
      due = std::min(due, std::max({app_due, now_ns, app_starved_until_}));
    // A host the dry pool refused waits for no departure: retry then.
    if (app_starved_until_ > now_ns) due = std::min(due, app_starved_until_);
    return due;
  }
  if (!host_.full() && schedule_.started() && !schedule_.done())
    due = std::min(due, cfg_.mode == PcapReplayMode::kFast ? now_ns : schedule_.due_ns());
  return due;
}

void PcapPort::settle_gauges(uint64_t now_ns) {
  if (host_.enabled()) host_paused_ns_.set(host_.paused_ns(now_ns));
}

// ---- Transport host ----

void PcapPort::set_transport_host(std::unique_ptr<TransportHost> host, const FrameAddrs& addrs,
                                  uint8_t data_dscp, uint8_t ack_dscp) {
  app_ = std::move(host);
  app_addrs_ = addrs;
  app_data_dscp_ = data_dscp;
  app_ack_dscp_ = ack_dscp;
  // A slot per frame the NIC may hold, written when first used (memory
  // follows what the host holds): slots given back are reused first, then
  // the next never used.
  slots_ = host_.config().capacity;
  slot_mbuf_.reset(new rte_mbuf*[slots_]);
  slot_tag_.reset(new uint32_t[slots_]);
  fresh_slot_ = 0;
  free_slots_.clear();
  free_slots_.reserve(slots_);
  // As many frames on the host's link toward it as toward the switch.
  inbox_.assign(std::max<size_t>(arrivals_.size(), 64), InboxEntry{});
  inbox_at_.assign(inbox_.size(), 0);
}

class PcapPort::TransportSink : public SegmentSink {
 public:
  TransportSink(PcapPort& port, uint64_t now_ns) : port_(port), now_(now_ns) {}
  bool emit(const Segment& s, uint32_t dst_ip, uint32_t tag) override {
    return port_.app_emit(s, dst_ip, tag, now_);
  }

 private:
  PcapPort& port_;
  uint64_t now_;
};

void PcapPort::app_poll(uint64_t now_ns) {
  if (now_ns < app_starved_until_) return;
  TransportSink sink(*this, now_ns);
  app_->poll(now_ns, sink);
}

// The host hands the NIC a segment: its frame is built now, into a slot.
bool PcapPort::app_emit(const Segment& seg, uint32_t dst_ip, uint32_t tag, uint64_t now_ns) {
  if (host_.full() || (free_slots_.empty() && fresh_slot_ == slots_)) {
    host_full_polls_.add();
    return false;
  }
  rte_mbuf* m = mbufs_.alloc();
  if (m == nullptr) {
    alloc_failures_.add();
    app_starved_until_ = now_ns + EventCalendar::kRetryNs;
    return false;
  }
  FrameAddrs a = app_addrs_;
  a.dst_ip = dst_ip;
  a.dscp = seg.kind == SegmentKind::kData ? app_data_dscp_ : app_ack_dscp_;
  const uint32_t room = rte_pktmbuf_tailroom(m);
  const uint32_t len = encode_segment(seg, a, rte_pktmbuf_mtod(m, uint8_t*), room, copy_bytes_);
  if (len == 0) {  // a segment larger than an mbuf: refused at --check
    rte_pktmbuf_free(m);
    alloc_failures_.add();
    return true;
  }
  m->data_len = static_cast<uint16_t>(len);
  m->pkt_len = len;
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = fresh_slot_++;
  }
  slot_mbuf_[slot] = m;
  slot_tag_[slot] = tag;
  NicFrame f;
  f.due_ns = now_ns;
  f.id = slot;
  f.bytes = len + (host_.bfc() ? kSluiceShimLen : 0);
  f.priority = dscp_priority_[a.dscp];
  f.dst_ip = dst_ip;
  f.rank = seg.has_rank ? seg.rank : kSltNoRank;
  const uint64_t dst_or_flow =
      queue_key_ == NicQueueKey::kFlow ? (uint64_t{1} << 31 | seg.flow) : uint64_t{dst_ip};
  const bool reply = seg.kind != SegmentKind::kData && host_.config().reply_queue;
  host_.enqueue(reply ? HostNic::kReplyKey : uint64_t{f.priority} << 32 | dst_or_flow, f, now_ns);
  return true;
}

// The NIC puts slot p.frame.id on the wire at now_ns: a data frame's
// timestamp is that instant; its flow may hand over its next segment.
rte_mbuf* PcapPort::app_frame(const HostNic::Pick& p, uint64_t now_ns) {
  const uint32_t slot = p.frame.id;
  rte_mbuf* m = slot_mbuf_[slot];
  slot_mbuf_[slot] = nullptr;
  free_slots_.push_back(slot);
  const uint32_t tag = slot_tag_[slot];
  uint8_t* f = rte_pktmbuf_mtod(m, uint8_t*);
  if (!TransportHost::is_reply(tag)) store_be64(f + kSltOffsetInFrame + 20, now_ns);
  app_->sent(tag, now_ns);
  if (host_.bfc()) {
    auto* q = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kSluiceShimLen));
    insert_shim(q, 12, DataShim{host_.shim_queue(p.queue), 0, 0, 0});
  }
  return m;
}

// A frame the switch sends toward the host, whose last bit arrives at
// time_ns: NIC control acts on the NIC; a transport frame waits on the link
// until then.
void PcapPort::app_to_host(uint64_t time_ns, const rte_mbuf* m) {
  const uint8_t* f = rte_pktmbuf_mtod(m, const uint8_t*);
  const auto not_a_segment = [&] {
    if (to_host(time_ns, m) == HostFrame::kOther) foreign_frames_.add();
  };
  const uint32_t mask = static_cast<uint32_t>(inbox_.size()) - 1;
  if (inbox_count_ > mask) {  // decoded only to tell an overflow from another frame
    Segment spare;
    if (!decode_segment(f, m->data_len, &spare)) return not_a_segment();
    inbox_overflow_.add();
    return;
  }
  // Decoded straight into the inbox's next slot, which it claims only once
  // decoded (decode_segment writes every field a reader looks at: the INT
  // records up to int_hops).
  const uint32_t at = (inbox_head_ + inbox_count_) & mask;
  if (!decode_segment(f, m->data_len, &inbox_[at].s)) return not_a_segment();
  inbox_at_[at] = time_ns;
  ++inbox_count_;
}

void PcapPort::app_deliver(uint64_t now_ns) {
  const uint32_t mask = static_cast<uint32_t>(inbox_.size()) - 1;
  while (inbox_count_ != 0 && inbox_at_[inbox_head_] <= now_ns) {
    app_->receive(inbox_at_[inbox_head_], inbox_[inbox_head_].s);
    inbox_head_ = (inbox_head_ + 1) & mask;
    --inbox_count_;
  }
}

uint32_t PcapPort::discard_link() {
  const uint32_t mask = static_cast<uint32_t>(arrivals_.size()) - 1;
  const uint32_t n = arrival_count_;
  for (; arrival_count_ != 0; --arrival_count_) {
    rte_pktmbuf_free(arrivals_[arrival_head_].m);
    arrival_head_ = (arrival_head_ + 1) & mask;
  }
  // Frames a transport host had built and its NIC still held.
  for (uint32_t i = 0; i < fresh_slot_; ++i) {
    if (slot_mbuf_[i] != nullptr) rte_pktmbuf_free(slot_mbuf_[i]);
    slot_mbuf_[i] = nullptr;
  }
  return n;
}

uint16_t PcapPort::replay_direct(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  const bool paced = cfg_.mode == PcapReplayMode::kPaced;
  uint64_t worst = max_lateness_ns_.get();
  uint64_t bytes = 0;
  uint16_t got = 0;
  while (got < n && schedule_.ready(now_ns)) {
    rte_mbuf* m = copy_frame(static_cast<uint32_t>(schedule_.frame()), kNoShim);
    if (m == nullptr) break;
    bytes += m->pkt_len;
    if (paced) note_lateness(now_ns - schedule_.due_ns(), &worst);
    count_pass();
    pkts[got++] = m;
  }
  count_replayed(got, bytes, worst);
  return got;
}

void PcapPort::count_replayed(uint16_t frames, uint64_t bytes, uint64_t worst_lateness_ns) {
  if (frames == 0) return;
  rx_frames_.add(frames);
  rx_bytes_.add(bytes);
  max_lateness_ns_.set(worst_lateness_ns);
}

// A BFC NIC's frames carry the shim, those it has room for (IPv4 over Ethernet).
bool PcapPort::shimmed(uint32_t frame) const {
  return host_.bfc() && nic_info_[frame].type_offset != 0;
}

// Replayed frame `frame` in a fresh mbuf, with the 0x88B6 shim naming NIC
// queue shim_queue unless that is kNoShim.
rte_mbuf* PcapPort::copy_frame(uint32_t frame, uint16_t shim_queue) {
  rte_mbuf* m = mbufs_.alloc();
  if (m == nullptr) {
    alloc_failures_.add();
    return nullptr;
  }
  const PcapRecord& r = capture_.records[replayed_[frame]];
  // The frame goes at its wire length (a snaplen-cut record's missing bytes
  // are zeros). Bytes nobody can see need no copy nor zeros
  // (set_exact_link); the length is what its wire time and every rule read.
  const uint32_t len = r.wire_len();
  const uint32_t shown = std::min(len, copy_bytes_);
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  const uint32_t copied = std::min(r.caplen, shown);
  std::memcpy(data, capture_.bytes.data() + r.offset, copied);
  if (copied < shown) std::memset(data + copied, 0, shown - copied);
  m->data_len = static_cast<uint16_t>(len);
  m->pkt_len = len;
  if (shim_queue != kNoShim) {
    auto* p = reinterpret_cast<uint8_t*>(rte_pktmbuf_prepend(m, kSluiceShimLen));
    insert_shim(p, nic_info_[frame].type_offset, DataShim{shim_queue, 0, 0, 0});
  }
  return m;
}

void PcapPort::count_pass() {
  const uint64_t pass = schedule_.pass();
  schedule_.advance();
  if (schedule_.pass() != pass || schedule_.done()) passes_.add();
}

void PcapPort::note_lateness(uint64_t lateness_ns, uint64_t* worst) {
  lateness_.record(lateness_ns);
  if (lateness_ns > *worst) *worst = lateness_ns;
}

HostFrame PcapPort::to_host(uint64_t time_ns, const rte_mbuf* m) {
  const HostFrame what = host_.receive(time_ns, rte_pktmbuf_mtod(m, const uint8_t*), m->data_len);
  switch (what) {
    case HostFrame::kPause:
    case HostFrame::kPfc:
      host_pause_frames_.add();
      break;
    case HostFrame::kBfc:
      host_bfc_frames_.add();
      break;
    case HostFrame::kDstPause:
      host_dst_pause_frames_.add();
      break;
    case HostFrame::kInvalid:
      host_invalid_frames_.add();
      break;
    case HostFrame::kOther:
      break;
  }
  return what;
}

void PcapPort::write(uint64_t realtime_ns, rte_mbuf* m) {
  // Exact fabric time loses no record: no writer thread runs, the worker
  // moves the ring into the file's buffer itself when it is full.
  if (exact_ && !ring_->fits(m->pkt_len)) drain_capture();
  if (!ring_->begin_record(realtime_ns, m->pkt_len)) return;
  for (const rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
    ring_->append(rte_pktmbuf_mtod(seg, const void*), seg->data_len);
  }
}

uint16_t PcapPort::tx_burst(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  const uint64_t realtime_ns = now_ns + static_cast<uint64_t>(clock_offset_ns_);  // mod 2^64
  if (writer_.is_open()) {
    for (uint16_t i = 0; i < n; ++i) write(realtime_ns, pkts[i]);
  }
  if (host_.enabled()) {
    for (uint16_t i = 0; i < n; ++i) to_host(now_ns, pkts[i]);
  }
  release(pkts, n);
  return n;
}

uint16_t PcapPort::tx_burst_at(const uint64_t* times_ns, rte_mbuf** pkts, uint16_t n) {
  if (writer_.is_open()) {
    for (uint16_t i = 0; i < n; ++i)
      write(times_ns[i] + static_cast<uint64_t>(clock_offset_ns_), pkts[i]);
  }
  if (app_) {
    for (uint16_t i = 0; i < n; ++i) app_to_host(times_ns[i], pkts[i]);
  } else if (host_.enabled()) {
    for (uint16_t i = 0; i < n; ++i) to_host(times_ns[i], pkts[i]);
  }
  release(pkts, n);
  return n;
}

void PcapPort::release(rte_mbuf** pkts, uint16_t n) {
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += pkts[i]->pkt_len;
  if (n == 1) {
    rte_pktmbuf_free(pkts[0]);  // the usual case in exact time: no bulk set-up
  } else {
    rte_pktmbuf_free_bulk(pkts, n);
  }
  tx_frames_.add(n);
  tx_bytes_.add(bytes);
}

size_t PcapPort::drain_capture() {
  if (!ring_) return 0;
  return ring_->drain([this](const uint8_t* p, size_t n) { writer_.write_bytes(p, n); });
}

bool PcapPort::flush(std::string* error) {
  if (!writer_.is_open()) return true;
  drain_capture();
  std::string ignored;
  return writer_.flush(error != nullptr ? error : &ignored);
}

}  // namespace sluice
