# Flow-size CDF: DCTCP web search. One point per line: size_in_bytes cumulative_percent.
# Source: the traffic_gen folder of the public HPCC simulator repository
# (alibaba-edu/High-Precision-Congestion-Control), which collects them from
# the original workload papers.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
