#!/usr/bin/env bash
# Reserves 2 MB hugepages and mounts hugetlbfs for sluice (run as root).
#   deploy/hugepages.sh [PAGES]     default 1024 pages = 2 GiB
set -euo pipefail
pages=${1:-1024}
echo "$pages" > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
got=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
echo "2 MB hugepages reserved: $got (asked for $pages); hugetlbfs on /dev/hugepages"
