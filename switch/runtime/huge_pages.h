#pragma once
// Exact fabric time without hugepages: the fabric's state (its queues,
// rings, hosts and frames, hundreds of MiB for a large fabric) would sit in
// 4 KiB pages, far more than the core's TLB reaches, so that the loop's
// cache misses were page walks too. Backed with the kernel's transparent
// huge pages (2 MiB), the same state needs 512 times fewer translations.
// The price: a 2 MiB page is resident whole once touched (a 128-host
// fabric's peak RSS doubles, to some 230 MiB) and the kernel zeroes and
// may compact memory for it at start-up. Measured in docs/benchmarks.md
// ("Huge pages for the fabric's state").
//
// Real time leaves this alone: its memory is EAL's hugepages, or, with
// --no-huge, locked 4 KiB pages.

namespace sluice {

// Before the runtime is built: the allocator keeps blocks up to 32 MiB in
// its heap, grows the heap by 1 GiB at a time (address space only), never
// gives its top back, and the heap is asked for transparent huge pages
// (mark_heap_for_huge_pages), which its pages then take as they are first
// touched. The frames' pools ask for them themselves (mbuf_supply.cc).
// Without transparent huge pages (`never`), nothing changes but the speed.
void back_heap_with_huge_pages();

// Asks for transparent huge pages on the heap as it is now: called again
// before the run, for what the heap grew by while the fabric was built.
void mark_heap_for_huge_pages();

}  // namespace sluice
