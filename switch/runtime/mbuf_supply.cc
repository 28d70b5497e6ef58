#include "switch/runtime/mbuf_supply.h"

#include <rte_errno.h>
#include <rte_mbuf_pool_ops.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>

namespace sluice {
namespace {

constexpr unsigned kMbufCache = 256;

// A fabric-time pool's frames live in memory mapped for it alone (its
// length in `opaque`), given back when the pool is freed.
void unmap_frames(rte_mempool_memhdr* memhdr, void* opaque) {
  munmap(memhdr->addr, reinterpret_cast<size_t>(opaque));
}

// A pool of `n` mbufs of `room` bytes whose frames are in the process's
// memory, not EAL's: no device reads them, so they need no IO address and
// may cross page boundaries (packed at about 2.3 KiB each, not one per 4 KiB
// page).
rte_mempool* process_pool(const std::string& name, uint32_t n, uint16_t room, int socket) {
  rte_mempool* mp =
      rte_mempool_create_empty(name.c_str(), n, sizeof(rte_mbuf) + room, kMbufCache,
                               sizeof(rte_pktmbuf_pool_private), socket,
                               RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (mp == nullptr) return nullptr;
  if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = room;
  rte_pktmbuf_pool_init(mp, &priv);
  const size_t bytes =
      size_t{n} * (mp->header_size + mp->elt_size + mp->trailer_size) + RTE_CACHE_LINE_SIZE;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    rte_mempool_free(mp);
    rte_errno = ENOMEM;
    return nullptr;
  }
  // Frames are the largest part of a fabric's state: in 2 MiB pages where
  // the kernel has them (runtime/huge_pages.h).
  madvise(mem, bytes, MADV_HUGEPAGE);
  const int got = rte_mempool_populate_iova(mp, static_cast<char*>(mem), RTE_BAD_IOVA, bytes,
                                            unmap_frames, reinterpret_cast<void*>(bytes));
  if (got < 0 || static_cast<uint32_t>(got) != n) {
    if (got < 0) munmap(mem, bytes);
    rte_mempool_free(mp);
    rte_errno = ENOMEM;
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace

std::string MbufSupply::start(uint32_t mbufs, uint16_t room, int socket, bool grows) {
  room_ = room;
  socket_ = socket;
  grows_ = grows;
  chunk_ = grows ? std::min(mbufs, kEmulatorChunk) : mbufs;
  limit_ = mbufs;
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
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on
  // "literal" + std::string at -O3.
  std::string name = "sluice_mbufs_s";
  name.append(std::to_string(socket_));
  if (!pools_.empty()) name.append("_").append(std::to_string(pools_.size()));
  rte_mempool* p = grows_ ? process_pool(name, chunk_, room_, socket_)
                          : rte_pktmbuf_pool_create(name.c_str(), chunk_, kMbufCache, 0, room_,
                                                    socket_);
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
  // 'mbufs' is the most a fabric-time run may hold at once.
  if (uint64_t{pools_.size() + 1} * chunk_ > std::max<uint64_t>(limit_, chunk_)) return nullptr;
  rte_mempool* p = make_pool();
  if (p == nullptr) {
    failure_ = "the fabric held more frames than memory was found for (" +
               std::to_string(uint64_t{pools_.size()} * chunk_) + " mbufs in " +
               std::to_string(pools_.size()) + " pools; " + rte_strerror(rte_errno) +
               "): give EAL more memory with -m, or free the machine's memory";
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
  std::lock_guard<std::mutex> lock(mu_);
  for (rte_mempool* p : pools_) n += p->size;
  return n;
}

uint64_t MbufSupply::in_use() const {
  uint64_t n = 0;
  // Under the lock, not on a copy: the emulator samples this every few
  // hundred elements.
  std::lock_guard<std::mutex> lock(mu_);
  for (rte_mempool* p : pools_) n += rte_mempool_in_use_count(p);
  return n;
}

}  // namespace sluice
