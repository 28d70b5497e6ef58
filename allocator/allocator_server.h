#pragma once
// sluice-allocator's loop: one UDP socket (plain POSIX, non-blocking) on
// which edge switches send FLOWLET_START / FLOWLET_END and to which the
// allocator answers RATE_UPDATE (SPEC §4.5, §5; docs/wire-formats.md
// "Flowtune"), one NedAllocator over the one-big-switch model, one thread.
// docs/mechanisms/flowtune.md ("The allocator program").

#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/allocator_stats.h"
#include "lib/flowtune/flowtune_wire.h"
#include "lib/flowtune/ned_allocator.h"

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
  struct SenderKey {
    uint64_t addr;  // sender IPv4 << 16 | UDP port
    uint32_t flow_id;
    bool operator==(const SenderKey&) const = default;
  };
  struct SenderKeyHash {
    size_t operator()(const SenderKey& k) const {
      return std::hash<uint64_t>()(k.addr * 0x9E3779B97F4A7C15ULL ^ k.flow_id);
    }
  };
  struct FlowMeta {
    SenderKey key{};
    uint32_t dest = 0;          // index into dests_
    uint64_t last_send_ns = 0;  // when its rate was last sent (0 = never)
    bool live = false;
  };
  struct Dest {
    sockaddr_in addr{};
    std::vector<RateUpdate> pending;  // at most per_msg_ entries
  };

  void receive(uint64_t now_ns);
  void handle(const uint8_t* p, uint32_t len, const sockaddr_in& from);
  void flowlet_start(const FlowletStart& s, const sockaddr_in& from, uint64_t key_addr);
  void flowlet_end(const FlowletEnd& e, uint64_t key_addr);
  uint32_t host(uint32_t ip);  // UINT32_MAX when the host table is full
  void iterate_once();
  void queue_update(flowtune::FlowId f, double norm, uint64_t now_ns);
  void lease_pass(uint64_t now_ns);
  void flush(uint32_t dest);
  void flush_all();
  uint32_t to_kbps(double norm) const;

  ServerConfig cfg_;
  Stats& stats_;
  flowtune::NedAllocator alloc_;
  int fd_ = -1;
  uint16_t port_ = 0;
  uint32_t per_msg_;
  std::unordered_map<SenderKey, flowtune::FlowId, SenderKeyHash> flows_by_key_;
  std::vector<FlowMeta> meta_;                    // by FlowId
  std::unordered_map<uint32_t, uint32_t> hosts_;  // IPv4 -> host index
  std::vector<flowtune::LinkId> host_links_;      // up, down per host
  std::unordered_map<uint64_t, uint32_t> dest_by_addr_;
  std::vector<Dest> dests_;
  std::vector<uint32_t> dirty_;  // dests with pending entries
  std::vector<flowtune::RateNotice> notices_;
  std::vector<uint8_t> rx_buf_;
  std::vector<uint8_t> tx_buf_;
  double elapsed_s_ = 0;
};

}  // namespace sluice::allocator
