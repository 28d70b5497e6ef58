#pragma once
// The knobs of sluice's emulated TCP (tcp_sender.h, tcp_receiver.h): NewReno
// (RFC 5681 congestion control, RFC 6582 fast recovery, RFC 6298 RTO, RFC 3168
// ECN) or, with `dctcp`, DCTCP ("Data Center TCP (DCTCP)", Alizadeh et al.,
// SIGCOMM 2010, section 3). Defaults are the RFCs' and the DCTCP paper's
// values, or Linux's where the RFCs leave a range; the experiment tools set
// the papers' testbed values (e.g. DIBS: minRTO 10 ms, no fast retransmit).

#include <cstdint>

#include "lib/emulator/transport/flow_transport.h"

namespace sluice {

// When DCTCP cuts its window.
enum class DctcpCut : uint8_t {
  // On an ECE, at most once per window of data, by alpha/2 (DCTCP section
  // 3.1, as Linux does).
  kOnEcho,
  // At the end of every observation window while alpha > 0, marked or not,
  // by alpha/2, ssthresh following; an ECE only ends slow start. htsim's
  // DCTCPSrc (sim/dctcp.cpp) does this; it is here to compare with it.
  kEveryWindow,
};

struct TcpParams {
  // DCTCP's sender (alpha, cut by alpha/2) and receiver (two-state CE
  // machine); false: NewReno, with RFC 3168's halving when `ecn`.
  bool dctcp = false;
  // Data goes ECT(0) and the sender reacts to ECE; false: Not-ECT, ECE
  // ignored. DCTCP needs it.
  bool ecn = true;

  // Initial window in segments (RFC 6928's IW10, Linux's default).
  uint32_t init_cwnd_segments = 10;
  // Initial ssthresh in bytes: "arbitrarily high" (RFC 5681 section 3.1).
  uint64_t initial_ssthresh_bytes = kTransportNever;
  // Slow start grows cwnd by at most this many segments per ACK (RFC 3465's
  // L = 2 SMSS), so a receiver that ACKs every second segment still doubles
  // the window per RTT; with one ACK per segment it is RFC 5681's min(N, SMSS).
  uint32_t slow_start_ack_limit_segments = 2;

  // Lower bound on the RTO (ns): Linux's TCP_RTO_MIN, 200 ms. RFC 6298 (2.4)
  // says 1 s; the DIBS testbed uses 10 ms.
  uint64_t min_rto_ns = 200'000'000;
  // RTO before any RTT sample (ns): 1 s (RFC 6298 section 2.1; Linux's
  // TCP_TIMEOUT_INIT). Used only when `handshake_rtt_sample` is false.
  uint64_t initial_rto_ns = 1'000'000'000;
  // Upper bound on the RTO (ns): 60 s, the least RFC 6298 (2.5) allows.
  uint64_t max_rto_ns = 60'000'000'000;
  // sluice's hosts skip the SYN exchange, in which a real connection takes
  // its first RTT sample; true: seed SRTT/RTTVAR with one sample of the
  // fabric's base RTT (TransportContext::base_rtt_ns), so the first RTO is
  // max(min_rto, 3 base RTTs) as on a connection past its handshake.
  bool handshake_rtt_sample = true;

  // NewReno fast retransmit and fast recovery (RFC 5681 3.2, RFC 6582); off
  // (as on the DIBS paper's hosts), only the RTO recovers a loss.
  bool fast_retransmit = true;
  // Duplicate ACKs that trigger fast retransmit (RFC 5681: 3).
  uint32_t dupack_threshold = 3;

  // DCTCP's estimation gain g (defined in section 3.1; 1/16 is the value
  // the paper runs with).
  double dctcp_g = 1.0 / 16;
  // DCTCP's alpha before the first observation window ends. The paper does
  // not say; 1 (the first marked window halves, like TCP) as Linux's
  // dctcp_alpha_on_init and HPCC's ns-3 (RdmaQueuePair: dctcp.m_alpha = 1).
  double dctcp_initial_alpha = 1.0;
  DctcpCut dctcp_cut = DctcpCut::kOnEcho;

  // The receiver ACKs every `ack_every` in-order segments (1: every segment;
  // 2: classic delayed ACK, the DCTCP paper's m = 2 in section 3.1).
  uint32_t ack_every = 1;
  // With ack_every > 1, the longest an in-order segment waits for its ACK
  // (ns). 40 us: five of the default 8 us base RTTs, far below any minRTO in
  // use (1-10 ms), so a flow's odd last segment is ACKed without a spurious
  // timeout. Linux's TCP_DELACK_MIN is 40 ms, longer than a 10 ms minRTO.
  uint64_t delayed_ack_ns = 40'000;
};

}  // namespace sluice
