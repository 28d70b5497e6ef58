#pragma once
// The thread that writes capture files: it drains every capture port's ring
// (PcapPort::drain_capture) into its file, so that no worker lcore ever makes
// a write() system call. It is started from the main lcore and inherits its
// CPU, never a worker's.

#include <atomic>
#include <thread>
#include <vector>

#include "switch/runtime/runtime.h"

namespace sluice {

class CaptureWriter {
 public:
  // Starts the thread if any port writes a capture.
  void start(Runtime& rt);
  // Stops it after a last drain (call once the workers have stopped).
  void stop();
  ~CaptureWriter() { stop(); }

 private:
  void run();

  std::vector<PcapPort*> ports_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sluice
