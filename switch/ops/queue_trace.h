#pragma once
// A time series of queue depths, for experiments that need more than peaks
// (BFC holding a queue near Th, buffer occupancy under incast). Each worker
// lcore samples the egress ports it owns every interval into rows allocated
// before the run; the main lcore writes them as CSV after the workers stop.
// Enabled with --queue-trace FILE; docs/metrics.md ("Queue trace").

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

struct Runtime;
struct WorkerRuntime;

struct QueueTraceRow {
  uint64_t t_ns;
  uint32_t bytes;
  uint32_t threshold_bytes;  // BFC Th of the port (port rows), else 0
  uint16_t port;             // global port index, or switch index for buffer rows
  int8_t queue;              // data queue, kPortRow or kBufferRow
  uint8_t paused;            // queue rows: paused by downstream; port rows: paused queues
  uint8_t tcd;               // queue rows of a TCD port: 1 + TcdState; else 0
};

class QueueTrace {
 public:
  static constexpr int8_t kPortRow = -1;    // all data queues of the port
  static constexpr int8_t kBufferRow = -2;  // the switch's shared buffer (this lcore's share)

  QueueTrace(size_t max_rows, uint64_t interval_ns, std::vector<uint16_t> ports);

  uint64_t next_ns() const { return next_ns_; }
  // Samples every traced port (and their switches' buffers); rows beyond
  // max_rows are counted in `missed`, not stored.
  void sample(const Runtime& rt, const WorkerRuntime& w, uint64_t now_ns);

  const std::vector<QueueTraceRow>& rows() const { return rows_; }
  uint64_t missed() const { return missed_; }

 private:
  void add(const QueueTraceRow& r);

  size_t max_rows_;
  uint64_t interval_ns_;
  uint64_t next_ns_ = 0;
  std::vector<uint16_t> ports_;
  std::vector<QueueTraceRow> rows_;
  uint64_t missed_ = 0;
};


}  // namespace sluice
