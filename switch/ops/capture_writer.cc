#include "switch/ops/capture_writer.h"

#include <chrono>

namespace sluice {
namespace {

// How long the thread sleeps when every ring was empty: the rings hold tens
// of milliseconds of records, so this is far from filling them.
constexpr auto kIdleSleep = std::chrono::milliseconds(1);

}  // namespace

void CaptureWriter::start(Runtime& rt) {
  for (const auto& p : rt.ports) {
    if (p->pcap && p->pcap->has_tx()) ports_.push_back(p->pcap);
  }
  if (ports_.empty()) return;
  thread_ = std::thread([this] { run(); });
}

void CaptureWriter::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  thread_.join();
}

void CaptureWriter::run() {
  while (!stop_.load(std::memory_order_relaxed)) {
    size_t moved = 0;
    for (PcapPort* p : ports_) moved += p->drain_capture();
    if (moved == 0) std::this_thread::sleep_for(kIdleSleep);
  }
}

}  // namespace sluice
