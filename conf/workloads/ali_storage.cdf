# Flow-size CDF: Alibaba storage (2019). One point per line: size_in_bytes cumulative_percent.
# Source: the traffic_gen folder of the public HPCC simulator repository
# (alibaba-edu/High-Precision-Congestion-Control), which collects them from
# the original workload papers.
0 0
4000 22.93
8000 69.21
16000 80.61
32000 90.47
64000 93.53
128000 96.77
256000 97.53
2000000 100
