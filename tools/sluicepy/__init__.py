"""Shared helpers of tools/workload and tools/fct: units, flow-size CDFs, the
SLW1 payload and frame layout, fast pcap reading and writing, host lists."""
