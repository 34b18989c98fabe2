#!/usr/bin/env bash
# Profiles the q8_matvec split kernel at 4096x14336 (the autotuner's KSPLIT) with ncu:
# throughput, occupancy, issue activity and the warp stall reasons, to say
# whether it waits on memory, on barriers or on instruction issue.
#   bash tests/gpu/q8_profile.sh BUILD_DIR [K N]
# The host's --one mode launches it 20 times after the autotuner's trials;
# the profiled launch is one of the last.
set -uo pipefail
b=${1:-build}
K=${2:-4096} N=${3:-14336}
out=${OUT:-/tmp}
# a fresh autotune cache: the trials always run first; --launch-skip counts
# past them (30 points and their copies: raise it if ncu profiles a trial)
export PHOBOS_CACHE_DIR=$(mktemp -d)
st=smsp__average_warps_issue_stalled
ncu --launch-skip 400 --launch-count 1 -k regex:q8_matvec_split --section SpeedOfLight --section Occupancy --section LaunchStats \
  --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,dram__bytes_read.sum,${st}_long_scoreboard_per_issue_active.ratio,${st}_barrier_per_issue_active.ratio,${st}_not_selected_per_issue_active.ratio,${st}_math_pipe_throttle_per_issue_active.ratio,${st}_wait_per_issue_active.ratio,${st}_lg_throttle_per_issue_active.ratio,${st}_short_scoreboard_per_issue_active.ratio,${st}_mio_throttle_per_issue_active.ratio,${st}_dispatch_stall_per_issue_active.ratio,${st}_no_instruction_per_issue_active.ratio,${st}_selected_per_issue_active.ratio,${st}_membar_per_issue_active.ratio \
  "$b/examples/q8_matvec_host" --one "$K" "$N" "$b/examples" > "$out/ncu_q8.txt" 2>&1
grep -E "q8_matvec_split__v|Duration|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Block Size|Grid Size|Registers Per|smsp__|dram__bytes|==ERROR|==WARN" "$out/ncu_q8.txt" | head -60
