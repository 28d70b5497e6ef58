#pragma once
// Where the mbufs of frames sluice builds or replays come from (and a
// device port's receive queue, from the pool of its NUMA socket).
//
// In real time: the one pool of `mbufs` configured, made at start-up and
// never grown, so that no worker waits on the allocator. In the emulator's
// fabric time: pools of kEmulatorChunk mbufs (or `mbufs`, if fewer), one
// made whenever all the others are empty, up to `mbufs` in all, their frames
// in the process's memory (EAL keeps only each pool's ring and caches), so
// memory follows what the fabric holds at once rather than what its queues
// could hold (docs/emulator.md, "Memory"). Which pool a frame came from changes nothing a run does: a
// fabric whose frames never run out runs the same on any chunk size.

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace sluice {

class MbufSupply {
 public:
  // The mbufs of one chunk in fabric time at most: 64 MiB of 4 KiB pages.
  static constexpr uint32_t kEmulatorChunk = 16'384;

  // Makes the first pool: `mbufs` of `room` bytes of frame (headroom
  // included) on NUMA socket `socket`; grows in fabric time (`grows`).
  // Empty on success, else what went wrong.
  std::string start(uint32_t mbufs, uint16_t room, int socket, bool grows);
  // Supplies from `pool` alone, never grown (tests; the caller frees it).
  void adopt(rte_mempool* pool);
  // The pools, for the scraper and the summary (size, in use).
  std::vector<rte_mempool*> pools() const;
  rte_mempool* first() const { return pools_.empty() ? nullptr : pools_.front(); }
  uint16_t data_room() const { return room_; }
  // Mbufs of all pools, and those held now (walks every lcore's cache:
  // not for the data path).
  uint64_t size() const;
  uint64_t in_use() const;

  // An mbuf, or nullptr when every pool is empty and no other can be made
  // (real time; or EAL has no memory left: failed() says so).
  rte_mbuf* alloc() {
    rte_mbuf* m = rte_pktmbuf_alloc(current_.load(std::memory_order_acquire));
    if (m == nullptr) [[unlikely]]
      return alloc_slow();
    return m;
  }
  // A pool could not be made when one was needed (EAL's memory ran out):
  // the run then lacks frames, which it counts, and the summary says why.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  const std::string& failure() const { return failure_; }

 private:
  rte_mbuf* alloc_slow();
  rte_mempool* make_pool();

  mutable std::mutex mu_;  // only when a pool runs dry
  std::vector<rte_mempool*> pools_;
  std::atomic<rte_mempool*> current_{nullptr};
  size_t next_try_ = 0;
  uint32_t chunk_ = 0;
  uint32_t limit_ = 0;  // fabric time: the most mbufs, all pools together
  uint16_t room_ = 0;
  int socket_ = 0;
  bool grows_ = false;
  std::atomic<bool> failed_{false};
  std::string failure_;
};

}  // namespace sluice
