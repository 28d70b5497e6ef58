#include "switch/runtime/mbuf_supply.h"

#include <rte_errno.h>

#include <algorithm>
#include <cstdio>

namespace sluice {
namespace {

constexpr unsigned kMbufCache = 256;

}  // namespace

std::string MbufSupply::start(uint32_t mbufs, uint16_t room, int socket, bool grows) {
  room_ = room;
  socket_ = socket;
  grows_ = grows;
  chunk_ = grows ? std::min(mbufs, kEmulatorChunk) : mbufs;
  rte_mempool* p = make_pool();
  if (p == nullptr)
    return "cannot create the mbuf pool on NUMA socket " + std::to_string(socket) + ": " +
           rte_strerror(rte_errno) +
           " (give EAL more memory on that socket with -m or --socket-mem, or lower 'mbufs' "
           "or 'mbuf_size')";
  current_.store(p, std::memory_order_release);
  return "";
}

void MbufSupply::adopt(rte_mempool* pool) {
  pools_ = {pool};
  room_ = rte_pktmbuf_data_room_size(pool);
  grows_ = false;
  current_.store(pool, std::memory_order_release);
}

rte_mempool* MbufSupply::make_pool() {
  const std::string name = "sluice_mbufs_s" + std::to_string(socket_) +
                           (pools_.empty() ? "" : "_" + std::to_string(pools_.size()));
  rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), chunk_, kMbufCache, 0, room_, socket_);
  if (p != nullptr) pools_.push_back(p);
  return p;
}

// The current pool ran dry: the next that has mbufs, in turn, else (fabric
// time) a new one.
rte_mbuf* MbufSupply::alloc_slow() {
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < pools_.size(); ++i) {
    rte_mempool* p = pools_[(next_try_ + i) % pools_.size()];
    if (rte_mbuf* m = rte_pktmbuf_alloc(p)) {
      next_try_ = (next_try_ + i + 1) % pools_.size();
      current_.store(p, std::memory_order_release);
      return m;
    }
  }
  if (!grows_ || failed_.load(std::memory_order_relaxed)) return nullptr;
  rte_mempool* p = make_pool();
  if (p == nullptr) {
    failure_ = "the fabric held more frames than EAL's memory holds mbufs for (" +
               std::to_string(uint64_t{pools_.size()} * chunk_) + " in " +
               std::to_string(pools_.size()) + " pools; " + rte_strerror(rte_errno) +
               "): give EAL more memory with -m";
    std::fprintf(stderr, "sluice: %s\n", failure_.c_str());
    failed_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  current_.store(p, std::memory_order_release);
  return rte_pktmbuf_alloc(p);
}

std::vector<rte_mempool*> MbufSupply::pools() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pools_;
}

uint64_t MbufSupply::size() const {
  uint64_t n = 0;
  for (rte_mempool* p : pools()) n += p->size;
  return n;
}

uint64_t MbufSupply::in_use() const {
  uint64_t n = 0;
  for (rte_mempool* p : pools()) n += rte_mempool_in_use_count(p);
  return n;
}

}  // namespace sluice
