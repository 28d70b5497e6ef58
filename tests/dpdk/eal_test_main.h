#pragma once
// main() of an EAL-level gtest binary: EAL with --no-huge, no devices, one
// lcore and its own file prefix; the tests; then EAL's cleanup, leaving no
// runtime directory behind (--in-memory does not combine with --no-huge in
// DPDK 22.11).

#include <gtest/gtest.h>
#include <rte_eal.h>

#include <cstdio>
#include <iterator>

#include "switch/runtime/eal_cleanup.h"

namespace sluice {

inline int run_tests_with_eal(int argc, char** argv, const char* name, const char* memory_mb) {
  testing::InitGoogleTest(&argc, argv);
  char* eal_args[] = {const_cast<char*>(name),          const_cast<char*>("--no-huge"),
                      const_cast<char*>("-m"),          const_cast<char*>(memory_mb),
                      const_cast<char*>("--no-pci"),    const_cast<char*>("--file-prefix"),
                      const_cast<char*>(name),          const_cast<char*>("--no-telemetry"),
                      const_cast<char*>("-l"),          const_cast<char*>("0"),
                      const_cast<char*>("--log-level"), const_cast<char*>("lib.eal:error")};
  if (rte_eal_init(static_cast<int>(std::size(eal_args)), eal_args) < 0) {
    std::fprintf(stderr, "rte_eal_init failed\n");
    return 1;
  }
  const int rc = RUN_ALL_TESTS();
  cleanup_eal();
  return rc;
}

}  // namespace sluice
