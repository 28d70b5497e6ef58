#pragma once
// sluice-allocator's loop: one UDP socket (plain POSIX, non-blocking) on
// which edge switches send FLOWLET_START / FLOWLET_END and to which the
// allocator answers RATE_UPDATE (SPEC §4.5, §5; docs/wire-formats.md
// "Flowtune"), one thread. The allocation itself (flows, hosts, NED over the
// one-big-switch model, iterations, leases) is lib/mechanisms/flowtune's AllocatorCore,
// on the machine's clock here. docs/mechanisms/flowtune.md ("The allocator
// program").

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "allocator/allocator_stats.h"
#include "lib/mechanisms/flowtune/allocator_core.h"
#include "lib/mechanisms/flowtune/flowtune_wire.h"

namespace sluice::allocator {

struct ServerConfig {
  sockaddr_in bind{};                          // where FLOWLET_* arrive
  uint32_t max_hosts = 1024;                   // distinct IPv4 addresses (2 links each)
  uint64_t host_rate_bps = 10'000'000'000ULL;  // every host link's capacity
  uint64_t iteration_ns = 10'000;              // 0 = back to back
  double threshold = flowtune::kDefaultThreshold;
  uint64_t lease_ns = 10'000'000;  // a flow's rate is re-sent after lease/2 unsent
  uint32_t max_flows = 65536;
  uint64_t duration_ns = 0;  // 0 = until a signal
};

class Server {
 public:
  Server(const ServerConfig& cfg, Stats& stats);
  ~Server();
  // Creates and binds the socket; false with *error otherwise.
  bool open(std::string* error);
  // Runs until `stop` is set or the duration has passed.
  void run(const std::atomic<bool>& stop);
  uint16_t port() const { return port_; }
  double elapsed_seconds() const { return elapsed_s_; }

 private:
  // Where a sender's RATE_UPDATEs go, and those not sent yet.
  struct Dest {
    sockaddr_in addr{};
    std::vector<RateUpdate> pending;  // at most per_msg_ entries
  };

  void receive();
  void handle(const uint8_t* p, uint32_t len, const sockaddr_in& from);
  void flowlet_start(const FlowletStart& s, const sockaddr_in& from, uint64_t key_addr);
  void queue_updates(std::span<const flowtune::AllocatorUpdate> updates);
  void flush(uint32_t dest);
  void flush_all();

  ServerConfig cfg_;
  Stats& stats_;
  flowtune::AllocatorCore core_;
  int fd_ = -1;
  uint16_t port_ = 0;
  uint32_t per_msg_;
  std::vector<Dest> dests_;      // by the core's sender number
  std::vector<uint32_t> dirty_;  // dests with pending entries
  std::vector<uint8_t> rx_buf_;
  std::vector<uint8_t> tx_buf_;
  double elapsed_s_ = 0;
};

}  // namespace sluice::allocator
