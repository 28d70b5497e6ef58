#include "switch/pcap_port.h"

#include <rte_mbuf.h>

#include <cstring>
#include <optional>
#include <utility>

namespace sluice {

// The ring absorbs the writer thread's pauses (a slow disk, a busy core):
// 8 MiB is ~50 ms of a 10 Gbps port's 128-byte records.
constexpr size_t kCaptureRingBytes = 8u << 20;
// The file's stdio buffer, filled and written by the writer thread.
constexpr size_t kFileBufferBytes = 1u << 20;

std::unique_ptr<PcapPort> PcapPort::open(const PcapPortConfig& cfg, rte_mempool* pool,
                                         std::string* error) {
  PcapCapture capture;
  std::vector<uint32_t> replayed;
  uint64_t oversize = 0;
  if (!cfg.rx_path.empty()) {
    if (!read_pcap_file(cfg.rx_path, &capture, error)) return nullptr;
    const uint32_t room = rte_pktmbuf_data_room_size(pool) - RTE_PKTMBUF_HEADROOM;
    replayed.reserve(capture.records.size());
    for (size_t i = 0; i < capture.records.size(); ++i) {
      if (capture.records[i].caplen > room)
        ++oversize;
      else
        replayed.push_back(static_cast<uint32_t>(i));
    }
  }
  std::unique_ptr<PcapPort> port(
      new PcapPort(cfg, pool, std::move(capture), std::move(replayed), oversize));
  if (!cfg.tx_path.empty()) {
    if (!port->writer_.open(cfg.tx_path, error, kFileBufferBytes, cfg.snaplen)) return nullptr;
    port->ring_ = std::make_unique<CaptureRing>(kCaptureRingBytes, port->writer_.snaplen());
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

PcapPort::PcapPort(const PcapPortConfig& cfg, rte_mempool* pool, PcapCapture capture,
                   std::vector<uint32_t> replayed, uint64_t oversize)
    : cfg_(cfg),
      pool_(pool),
      capture_(std::move(capture)),
      replayed_(std::move(replayed)),
      schedule_(capture_offsets(timestamps_of(capture_, replayed_)), cfg.mode, cfg.loop, cfg.speed),
      oversize_skipped_(oversize) {}

uint16_t PcapPort::rx_burst(uint64_t now_ns, rte_mbuf** pkts, uint16_t n) {
  if (host_.enabled()) {
    const bool may_send = host_.poll(now_ns);
    host_paused_ns_.set(host_.paused_ns(now_ns));
    if (!may_send) return 0;
  }
  const bool paced = cfg_.mode == PcapReplayMode::kPaced;
  uint64_t worst = max_lateness_ns_.get();
  uint64_t bytes = 0;
  uint16_t got = 0;
  while (got < n && schedule_.ready(now_ns)) {
    const uint64_t start_ns = host_.start_ns(schedule_.due_ns());
    if (start_ns > now_ns) break;  // the host's wire is still busy
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) {
      alloc_failures_.add();
      break;
    }
    const PcapRecord& r = capture_.records[replayed_[schedule_.frame()]];
    std::memcpy(rte_pktmbuf_mtod(m, void*), capture_.bytes.data() + r.offset, r.caplen);
    m->data_len = static_cast<uint16_t>(r.caplen);
    m->pkt_len = r.caplen;
    bytes += r.caplen;
    host_.sent(start_ns, r.caplen);
    if (paced) {
      lateness_.record(now_ns - start_ns);
      if (now_ns - start_ns > worst) worst = now_ns - start_ns;
    }
    const uint64_t pass = schedule_.pass();
    schedule_.advance();
    if (schedule_.pass() != pass || schedule_.done()) passes_.add();
    pkts[got++] = m;
  }
  if (got != 0) {
    rx_frames_.add(got);
    rx_bytes_.add(bytes);
    max_lateness_ns_.set(worst);
  }
  return got;
}

void PcapPort::to_host(uint64_t time_ns, const rte_mbuf* m) {
  const auto pause_ns =
      host_pause_ns(rte_pktmbuf_mtod(m, const uint8_t*), m->data_len, host_.rate_bps());
  if (!pause_ns) return;
  host_.pause(time_ns, *pause_ns);
  host_pause_frames_.add();
}

void PcapPort::write(uint64_t realtime_ns, rte_mbuf* m) {
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
  if (host_.enabled()) {
    for (uint16_t i = 0; i < n; ++i) to_host(times_ns[i], pkts[i]);
  }
  release(pkts, n);
  return n;
}

void PcapPort::release(rte_mbuf** pkts, uint16_t n) {
  uint64_t bytes = 0;
  for (uint16_t i = 0; i < n; ++i) bytes += pkts[i]->pkt_len;
  rte_pktmbuf_free_bulk(pkts, n);
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
