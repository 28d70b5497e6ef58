// pFabric's priority service and priority dropping: see pfabric_queue.h.
#include "lib/tm/pfabric/pfabric_queue.h"

#include <algorithm>

namespace sluice {

PfabricQueue::PfabricQueue(uint64_t capacity_bytes)
    : capacity_(capacity_bytes),
      max_entries_(static_cast<uint32_t>(
          std::clamp<uint64_t>(capacity_bytes / kMinFrameBytes, 1, kMaxPackets))),
      entries_(new Entry[max_entries_]) {}

// The largest rank; ">=" so that of equal ranks the latest arrival wins.
uint32_t PfabricQueue::lowest_priority() const {
  uint32_t worst = 0;
  for (uint32_t i = 1; i < count_; ++i) {
    if (entries_[i].rank >= entries_[worst].rank) worst = i;
  }
  return worst;
}

void PfabricQueue::erase(uint32_t i) {
  bytes_ -= entries_[i].pkt.bytes;
  std::copy(&entries_[i + 1], &entries_[count_], &entries_[i]);
  --count_;
}

bool PfabricQueue::enqueue(uint64_t now_ns, const TmPacket& pkt, uint64_t flow, uint32_t rank,
                           TmPacket* evicted, unsigned max_evicted, unsigned* n_evicted) {
  *n_evicted = 0;
  if (pkt.bytes > capacity_) return false;
  while (!fits(pkt.bytes)) {
    // pkt is the latest arrival: it goes if no queued packet ranks below it.
    if (count_ == 0 || *n_evicted == max_evicted) return false;
    const uint32_t worst = lowest_priority();
    if (rank >= entries_[worst].rank) return false;
    evicted[(*n_evicted)++] = entries_[worst].pkt;
    erase(worst);
  }
  Entry& e = entries_[count_++];
  e.pkt = pkt;
  e.pkt.enqueue_ns = now_ns;
  e.flow = flow;
  e.rank = rank;
  bytes_ += pkt.bytes;
  return true;
}

bool PfabricQueue::dequeue(TmPacket* out) {
  if (count_ == 0) return false;
  uint32_t best = 0;
  for (uint32_t i = 1; i < count_; ++i) {
    if (entries_[i].rank < entries_[best].rank) best = i;
  }
  // That flow's earliest packet (the paper's guard against reordering and
  // against a flow starving its own head).
  const uint64_t flow = entries_[best].flow;
  uint32_t pick = 0;
  while (entries_[pick].flow != flow) ++pick;
  *out = entries_[pick].pkt;
  erase(pick);
  return true;
}

}  // namespace sluice
