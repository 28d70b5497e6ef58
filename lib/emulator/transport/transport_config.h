#pragma once
// The `transport:` section of a configuration (docs/configuration.md
// "Emulated hosts running transports", docs/transports.md): which transport the emulated hosts
// run, the flow list they run it on, where the flows' outcomes go, and every
// transport's parameters (each with its paper's defaults).

#include <cstdint>
#include <string>

#include "lib/emulator/transport/dcqcn/dcqcn_params.h"
#include "lib/emulator/transport/hpcc/hpcc_params.h"
#include "lib/emulator/transport/pfabric/pfabric_params.h"
#include "lib/emulator/transport/rdma/gbn_params.h"
#include "lib/emulator/transport/tcp/tcp_params.h"
#include "lib/emulator/transport/timely/timely_params.h"

namespace sluice {

enum class TransportKind : uint8_t {
  kNone,
  kTcp,
  kDctcp,
  kDcqcn,
  kHpcc,
  kTimely,
  kBfcNic,
  kPfabric,
};

// "tcp", "dctcp", ... as the configuration and the tools spell them.
const char* transport_name(TransportKind k);

struct TransportConfig {
  TransportKind kind = TransportKind::kNone;
  std::string flows_path;        // a flows.csv (lib/emulator/hosts/flow_list.h)
  std::string completions_path;  // where each flow's outcome is written at the end ("": nowhere)
  uint32_t mss = 1000;           // payload bytes of a full data segment
  // The fabric's base RTT: HPCC's T, the BFC NIC's one-BDP cap, TCP's
  // first RTT sample, pFabric's first window and timeout
  // (TransportContext::base_rtt_ns).
  uint64_t base_rtt_ns = 8'000;
  uint8_t data_dscp = 0;  // DSCP of data segments
  uint8_t ack_dscp = 0;   // DSCP of ACKs, NACKs and CNPs
  uint8_t ttl = 64;       // IPv4 TTL (DIBS drops a detoured packet whose TTL runs out)
  TcpParams tcp;          // tcp, dctcp
  GbnParams rdma;         // dcqcn, hpcc, timely, bfc-nic: go-back-N and the CNP rule
  DcqcnParams dcqcn;
  HpccParams hpcc;
  TimelyParams timely;
  uint64_t bfc_window_bytes = 0;  // bfc-nic's cap on bytes in flight; 0: one BDP
  PfabricParams pfabric;          // pfabric
  int line = 0;
};

struct ConfigSections;
// The top-level transport: section (parsed and validated in
// transport_config.cc).
extern const ConfigSections kTransportSections;

}  // namespace sluice
