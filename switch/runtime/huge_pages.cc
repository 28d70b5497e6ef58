#include "switch/runtime/huge_pages.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sluice {
namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
// Address space the heap takes at a time: more than a 128-host fabric's
// state.
constexpr int kHeapPad = 1 << 30;
// glibc's largest mmap threshold.
constexpr int kLargestInHeap = 32 << 20;

}  // namespace

void back_heap_with_huge_pages() {
  mallopt(M_MMAP_THRESHOLD, kLargestInHeap);
  mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  mallopt(M_TOP_PAD, kHeapPad);
  // The growth: a block larger than the heap has free (the pad comes with
  // it), freed at once. The empty asm keeps the compiler from eliding a
  // block nobody reads.
  void* growth = malloc(kLargestInHeap - (1 << 20));
  asm volatile("" : : "r"(growth) : "memory");
  free(growth);
  mark_heap_for_huge_pages();
}

void mark_heap_for_huge_pages() {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (maps == nullptr) return;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    uintptr_t first = 0, last = 0;
    if (std::strstr(line, "[heap]") == nullptr ||
        std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &first, &last) != 2)
      continue;
    const uintptr_t from = (first + kHugePage - 1) & ~(kHugePage - 1);
    if (from < last) madvise(reinterpret_cast<void*>(from), last - from, MADV_HUGEPAGE);
  }
  std::fclose(maps);
}

}  // namespace sluice
