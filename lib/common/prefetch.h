#pragma once
// Prefetch hints that the optimiser keeps. GCC 12 treats __builtin_prefetch
// as free of effects, so a function made of prefetches alone is deemed
// const and its calls are dropped (at -O1 and above); an asm statement is
// kept. Elsewhere than x86-64 the builtin stands in.

namespace sluice {

// The line holding p will be written soon.
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const volatile char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

}  // namespace sluice
