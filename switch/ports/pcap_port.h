#pragma once
// A port backed by capture files instead of a device: what it receives is
// replayed from an rx pcap (paced by the capture's timestamps, or as fast as
// possible, optionally looped), what it transmits is written to a tx pcap with
// nanosecond timestamps on the CLOCK_REALTIME scale. The rx capture is loaded
// whole at open, so the data path does no file reads; transmitted frames are
// encoded into a capture ring that a writer thread drains to the file
// (drain_capture), so the data path makes no file writes either. Owned and
// driven by one worker lcore; the counters may be read from any thread. With
// set_host_nic() the replay goes through an emulated host NIC
// (lib/emulator/nic/host_nic.h): send queues paced at the link's rate that honour
// what the switch transmits toward the host (PAUSE, PFC, BFC, FG_DST_PAUSE).
// docs/pcap-ports.md describes the behaviour.

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <time.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lib/capture/capture_ring.h"
#include "lib/capture/pcap_reader.h"
#include "lib/capture/pcap_writer.h"
#include "lib/capture/replay_schedule.h"
#include "lib/common/relaxed_counter.h"
#include "lib/config/config.h"
#include "lib/emulator/hosts/transport_host.h"
#include "lib/emulator/nic/host_nic.h"
#include "lib/emulator/transport/segment_wire.h"
#include "lib/tm/latency_histogram.h"
#include "switch/runtime/mbuf_supply.h"

namespace sluice {

class PcapPort {
 public:
  // Loads the rx capture into memory and creates the tx file. nullptr with
  // *error set ("cannot open X: ...", "X is not a pcap file", "X: unsupported
  // link type 113 ...", "cannot open Y for writing: ..."). Frames longer than
  // the pool's mbuf data room are left out of the replay (oversize_skipped()).
  // emulated: the emulator's fabric time, where the worker writes the
  // capture itself when its ring is full, so a small ring and file buffer
  // do (64 KiB each, against 8 MiB and 1 MiB for a writer thread).
  static std::unique_ptr<PcapPort> open(const PcapPortConfig& cfg, MbufSupply& mbufs,
                                        std::string* error, bool emulated = false);

  // Capture time origin_ts_ns maps to start_ns on the data path's clock;
  // every replay port of a process is given the same pair (origin: the
  // earliest first timestamp of all replayed captures). Fast mode starts at
  // start_ns.
  void start(uint64_t start_ns, uint64_t origin_ts_ns) {
    const bool paced = cfg_.mode == PcapReplayMode::kPaced && !replayed_.empty();
    schedule_.start(
        paced ? first_frame_due_ns(start_ns, first_timestamp_ns(), origin_ts_ns, cfg_.speed)
              : start_ns);
    if (app_) app_->start(start_ns);  // flow times count from the replay's start
  }
  // Capture time of the first replayed frame (UINT64_MAX when none).
  uint64_t first_timestamp_ns() const {
    return replayed_.empty() ? UINT64_MAX : capture_.records[replayed_.front()].ts_ns;
  }
  // Added to now_ns to stamp written frames: CLOCK_REALTIME ns minus clock ns.
  void set_clock_offset(int64_t realtime_minus_tsc_ns) { clock_offset_ns_ = realtime_minus_tsc_ns; }
  // The emulated host's NIC (lib/emulator/nic/host_nic.h), set before start():
  // frames go in no faster than nic.rate_bps, from per-`key` send queues,
  // held while the switch pauses them (PAUSE, PFC by class, BFC by queue,
  // FG_DST_PAUSE by destination).
  // dscp_priority[dscp] is a frame's PFC class, as the switch counts it.
  // nic.rate_bps 0: no NIC (frames go in when due).
  void set_host_nic(const HostNicConfig& nic, NicQueueKey key,
                    const std::array<uint8_t, 64>& dscp_priority);
  // A one-queue NIC at rate_bps, classes by DSCP / 8 (tests, simple hosts).
  void set_host_link(uint64_t rate_bps, uint32_t overhead_bytes);
  // Exact fabric time (after set_host_nic): the host's link has a length. A
  // frame the NIC starts at t reaches the switch when its last bit has
  // crossed it, at t + serialisation + delay_ns, not at t; rx_burst() then
  // hands out only frames that have arrived, and next_rx_ns() says when the
  // port is next due.
  // copy_bytes: how much of each replayed frame to copy into its mbuf (the
  // rest of the frame keeps its length but not its bytes), when no capture
  // in the process keeps more than copy_bytes - 64 of a frame and nothing
  // else reads payload (exact time has no device port); 0: all of it.
  void set_exact_link(uint64_t delay_ns, uint32_t mtu, uint32_t copy_bytes = 0);
  // Exact fabric time (after set_host_nic and set_exact_link): the host runs
  // transports (lib/emulator/hosts/transport_host.h) instead of replaying a capture.
  // Its frames are built when it hands them to the NIC (addrs: its MACs and
  // address; data in DSCP data_dscp, replies in ack_dscp), their timestamp
  // set when their first bit goes on the wire; transport frames the switch
  // sends toward the host reach the host's transports when their last bit
  // has arrived; PAUSE, PFC, BFC and dstPause act on the NIC as for replay.
  void set_transport_host(std::unique_ptr<TransportHost> host, const FrameAddrs& addrs,
                          uint8_t data_dscp, uint8_t ack_dscp);
  TransportHost* transport_host() const { return app_.get(); }
  // Transport frames toward the host that found its inbox full (dropped),
  // and frames toward it that were not transport frames nor NIC control.
  uint64_t transport_inbox_overflow() const { return inbox_overflow_.get(); }
  uint64_t transport_foreign_frames() const { return foreign_frames_.get(); }
  // Exact fabric time, after rx_burst(now_ns): when rx_burst() next has
  // something to do (a frame arrives, the NIC may send, a frame sent to the
  // host takes effect, the application hands over a frame); UINT64_MAX
  // when nothing will without a frame sent toward the host.
  uint64_t next_rx_ns(uint64_t now_ns) const;
  // Exact time: the next frame to reach the switch (nullptr: none on the
  // link); and a transport host's next delivery, if any, in *delivery (a
  // line written when the switch sent the frame, a link's delay before it
  // is read).
  const rte_mbuf* next_frame(const char** delivery) const {
    if (inbox_count_ != 0) *delivery = reinterpret_cast<const char*>(&inbox_[inbox_head_]);
    return arrival_count_ != 0 ? arrivals_[arrival_head_].m : nullptr;
  }

  // Up to n frames that are due at now_ns (paced) or up to n frames (fast),
  // copied into fresh mbufs from the pool, as the host NIC sends them (if
  // set). 0 before start() and once a non-looping replay is done. If the pool
  // runs dry, returns what it has and carries on from the same frame on the
  // next call.
  uint16_t rx_burst(uint64_t now_ns, rte_mbuf** pkts, uint16_t n);
  // Writes every frame stamped now_ns + offset (if there is a tx file) and
  // frees it; a PAUSE/PFC (or, to a BFC NIC, BFC; to a Floodgate NIC,
  // FG_DST_PAUSE) frame among them acts on the host NIC from its time on.
  // Always takes all n.
  uint16_t tx_burst(uint64_t now_ns, rte_mbuf** pkts, uint16_t n);
  // As tx_burst, with a time per frame (e.g. each frame's shaper departure).
  uint16_t tx_burst_at(const uint64_t* times_ns, rte_mbuf** pkts, uint16_t n);

  // Writer thread: moves what the capture ring holds into the tx file's
  // buffer; returns the bytes moved.
  size_t drain_capture();
  // Drains the ring and hands buffered tx records to the kernel (call at
  // stop, when no thread drains any more). False with *error if a write to
  // the tx file failed at any point.
  bool flush(std::string* error = nullptr);
  // Records left out of the capture because the writer fell behind (the
  // frames themselves were transmitted).
  uint64_t capture_dropped() const { return ring_ ? ring_->dropped() : 0; }

  bool has_rx() const { return !cfg_.rx_path.empty(); }
  bool has_tx() const { return writer_.is_open(); }
  // Every frame replayed and none left in the NIC (also true without an rx file).
  bool rx_done() const {
    if (app_) return app_->all_done() && host_held_frames() == 0 && arrival_count_ == 0;
    return schedule_.done() && host_held_frames() == 0 && arrival_count_ == 0;
  }
  // Frees the frames on the host's link when the run stopped (exact fabric
  // time; after the workers stopped); returns how many.
  uint32_t discard_link();
  // Gauges the data path keeps only at the end in exact time.
  void settle_gauges(uint64_t now_ns);
  const PcapPortConfig& config() const { return cfg_; }

  uint64_t rx_frames() const { return rx_frames_.get(); }
  uint64_t rx_bytes() const { return rx_bytes_.get(); }
  uint64_t tx_frames() const { return tx_frames_.get(); }
  uint64_t tx_bytes() const { return tx_bytes_.get(); }
  uint64_t alloc_failures() const { return alloc_failures_.get(); }  // rx calls cut short
  uint64_t oversize_skipped() const { return oversize_skipped_; }    // frames, counted at open
  uint32_t oversize_largest() const { return oversize_largest_; }    // bytes (0: none skipped)
  uint64_t replay_frames() const { return schedule_.size(); }        // frames per pass
  uint64_t passes() const { return passes_.get(); }                  // completed passes
  // Paced mode: the worst (now - start) of any delivered frame, start being
  // its due time or, with a host link, when the host NIC could send it; 0 in
  // fast mode.
  uint64_t max_lateness_ns() const { return max_lateness_ns_.get(); }
  // Paced mode: how late each frame went in (the same measure, per frame).
  const LatencyHistogram& lateness() const { return lateness_; }
  // Host NIC: time paused by PAUSE/PFC summed over the priorities (PAUSE
  // counts once), exact up to the last rx_burst; PAUSE/PFC frames it
  // honoured; BFC frames it took (valid or not: bfc_invalid says which were
  // not); FG_DST_PAUSE frames it took; MAC Control or sluice control frames
  // that did not parse.
  uint64_t host_paused_ns() const { return host_paused_ns_.get(); }
  uint64_t host_pause_frames() const { return host_pause_frames_.get(); }
  uint64_t host_bfc_frames() const { return host_bfc_frames_.get(); }
  uint64_t host_dst_pause_frames() const { return host_dst_pause_frames_.get(); }
  uint64_t host_invalid_frames() const { return host_invalid_frames_.get(); }
  // Frames waiting in the NIC's queues (now, and the most at any poll); polls in which due frames
  // found the NIC full and the application waited; NIC queues BFC holds paused.
  uint32_t host_held_frames() const { return static_cast<uint32_t>(host_held_.get()); }
  uint32_t host_peak_held_frames() const { return static_cast<uint32_t>(host_peak_held_.get()); }
  uint64_t host_full_polls() const { return host_full_polls_.get(); }
  uint64_t host_bfc_paused_mask() const { return host_.bfc_paused_mask(); }
  const HostNic& host_nic() const { return host_; }  // owner lcore or after the run

 private:
  PcapPort(const PcapPortConfig& cfg, MbufSupply& mbufs, PcapCapture capture,
           std::vector<uint32_t> replayed, uint64_t oversize);
  void write(uint64_t realtime_ns, rte_mbuf* m);
  void release(rte_mbuf** pkts, uint16_t n);  // counts and frees transmitted frames
  // PAUSE/PFC/BFC act on the host NIC; says what the frame was to it.
  HostFrame to_host(uint64_t time_ns, const rte_mbuf* m);
  uint16_t replay_direct(uint64_t now_ns, rte_mbuf** pkts, uint16_t n);  // no NIC
  void hand_over(uint64_t now_ns);  // due frames into the NIC's queues
  uint16_t nic_send(uint64_t now_ns, rte_mbuf** pkts, uint16_t n);
  void launch(uint64_t now_ns);                                   // exact: NIC -> host link
  uint16_t arrive(uint64_t now_ns, rte_mbuf** pkts, uint16_t n);  // exact: link -> switch
  rte_mbuf* copy_frame(uint32_t frame, uint16_t shim_queue);      // nullptr: pool empty
  void count_pass();
  class TransportSink;
  bool app_emit(const Segment& seg, uint32_t dst_ip, uint32_t tag, uint64_t now_ns);
  void app_poll(uint64_t now_ns);
  void app_deliver(uint64_t now_ns);
  rte_mbuf* app_frame(const HostNic::Pick& p, uint64_t now_ns);
  void app_to_host(uint64_t time_ns, const rte_mbuf* m);
  void count_replayed(uint16_t frames, uint64_t bytes, uint64_t worst_lateness_ns);
  bool shimmed(uint32_t frame) const;
  void note_lateness(uint64_t lateness_ns, uint64_t* worst);

  // Per replayed frame, what the NIC needs: its queue key, class and IPv4
  // destination (0: not IPv4), and where the shim goes (0: frame without
  // one, e.g. not Ethernet II).
  struct NicFrameInfo {
    uint64_t key;
    uint32_t dst_ip;
    uint8_t priority;
    uint8_t type_offset;
  };

  PcapPortConfig cfg_;
  MbufSupply& mbufs_;
  PcapCapture capture_;
  std::vector<uint32_t> replayed_;  // schedule frame -> capture record
  ReplaySchedule schedule_;
  HostNic host_;
  std::vector<NicFrameInfo> nic_info_;
  PcapWriter writer_;
  // Exact fabric time: frames on the host's link, in order, and when each
  // reaches the switch (a ring of arrivals_.size(), a power of two).
  struct Arrival {
    rte_mbuf* m;
    uint64_t due_ns;
  };
  bool exact_ = false;
  uint64_t link_delay_ns_ = 0;
  std::vector<Arrival> arrivals_;
  uint32_t arrival_head_ = 0;
  uint32_t arrival_count_ = 0;
  uint64_t starved_until_ns_ = 0;     // the pool ran dry: try again then
  uint32_t copy_bytes_ = UINT32_MAX;  // bytes of a replayed frame copied (set_exact_link)
  // Transport host (set_transport_host): the frames waiting in the NIC (by
  // NicFrame::id; a free list), and what reached the host but is still on
  // its link (a ring of inbox_.size(), a power of two).
  std::unique_ptr<TransportHost> app_;
  FrameAddrs app_addrs_{};
  uint8_t app_data_dscp_ = 0, app_ack_dscp_ = 0;
  std::array<uint8_t, 64> dscp_priority_{};
  NicQueueKey queue_key_ = NicQueueKey::kDestination;
  std::unique_ptr<rte_mbuf*[]> slot_mbuf_;  // slots_ of them; [0, fresh_slot_) written
  std::unique_ptr<uint32_t[]> slot_tag_;
  std::vector<uint32_t> free_slots_;  // slots given back (capacity reserved)
  uint32_t slots_ = 0;
  uint32_t fresh_slot_ = 0;
  struct alignas(64) InboxEntry {  // the segment's head in its first line
    Segment s;
  };
  std::vector<InboxEntry> inbox_;
  // When each reaches the host, apart from the segments: whether the next
  // is due reads a line the last one's time shared, not the next segment.
  std::vector<uint64_t> inbox_at_;
  uint32_t inbox_head_ = 0, inbox_count_ = 0;
  uint64_t app_starved_until_ = 0;
  RelaxedCounter inbox_overflow_, foreign_frames_;
  std::unique_ptr<CaptureRing> ring_;  // worker -> writer thread
  int64_t clock_offset_ns_ = 0;
  uint64_t oversize_skipped_ = 0;
  uint32_t oversize_largest_ = 0;
  RelaxedCounter rx_frames_, rx_bytes_, tx_frames_, tx_bytes_, alloc_failures_, passes_,
      max_lateness_ns_, host_paused_ns_, host_pause_frames_, host_bfc_frames_,
      host_dst_pause_frames_, host_invalid_frames_, host_held_, host_peak_held_, host_full_polls_;
  LatencyHistogram lateness_;
};

// CLOCK_REALTIME minus clock.now_ns(), for PcapPort::set_clock_offset():
// the tightest of a few samples bracketing one clock_gettime call.
template <typename Clock>
int64_t realtime_minus_clock_ns(const Clock& clock) {
  int64_t best = 0;
  uint64_t best_width = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    timespec ts;
    const uint64_t before = clock.now_ns();
    clock_gettime(CLOCK_REALTIME, &ts);
    const uint64_t after = clock.now_ns();
    if (after - before >= best_width) continue;
    best_width = after - before;
    const uint64_t realtime = uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec);
    best = int64_t(realtime - (before + (after - before) / 2));
  }
  return best;
}

}  // namespace sluice
