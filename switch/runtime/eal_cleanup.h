#pragma once
// EAL's cleanup, then the runtime directory EAL made for this process
// (/var/run/dpdk/<file-prefix>: its config, sockets, memseg files), which
// EAL leaves behind: a process that stops leaves nothing (docs/testing.md,
// "Runtime state"). A secondary process would share the primary's
// directory, so only a primary removes it. Header-only: sluice, the
// EAL-level tests and sluice-loadgen each link their own EAL code.

#include <rte_eal.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace sluice {

// Returns why the directory could not be removed ("" when it was, or was
// not this process's to remove).
inline std::string cleanup_eal() {
  const bool primary = rte_eal_process_type() == RTE_PROC_PRIMARY;
  const std::string dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  if (!primary || dir.find("/dpdk/") == std::string::npos) return "";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return ec ? "cannot remove " + dir + ": " + ec.message() : "";
}

}  // namespace sluice
