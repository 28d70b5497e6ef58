#include "switch/runtime/memory_prefault.h"

#include <rte_mempool.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace sluice {
namespace {

// Reads and writes back one byte per page: a write fault maps the page for
// good (a read alone would map the shared zero page). The pool's objects are
// free, so nothing reads them concurrently.
void touch_chunk(rte_mempool*, void* page_size, rte_mempool_memhdr* memhdr, unsigned) {
  const size_t step = *static_cast<size_t*>(page_size);
  auto* base = static_cast<volatile uint8_t*>(memhdr->addr);
  for (size_t off = 0; off < memhdr->len; off += step) base[off] = base[off];
}

}  // namespace

std::string prefault_memory(Runtime& rt) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (const auto& supply : rt.mbuf_supplies) {
    if (supply == nullptr) continue;
    for (rte_mempool* pool : supply->pools()) rte_mempool_mem_iter(pool, touch_chunk, &page);
  }
  if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
    return std::string("cannot lock memory (") + std::strerror(errno) +
           "); page faults may stall the workers";
  }
  return "";
}

}  // namespace sluice
