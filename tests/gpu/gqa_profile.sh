#!/usr/bin/env bash
# Profiles the GQA example's prefill launch (B 1, HQ 28 / HKV 4, S = T = 4096,
# D 128, causal) with ncu: throughput, issue activity, warp stall reasons and
# the executed SASS by opcode (source counters, as CSV under $OUT).
#   bash tests/gpu/gqa_profile.sh BUILD_DIR
# gqa_host --bench makes 20 check launches first; the 21st is the prefill's.
set -uo pipefail
# the bench run first fills the autotune cache, so the profiled run makes no
# trial launches and launch 21 is the prefill's check
b=${1:-build}
out=${OUT:-/tmp}
st=smsp__average_warps_issue_stalled
export PHOBOS_CACHE_DIR=$(mktemp -d)
"$b/examples/gqa_host" --bench "$b/examples" | tail -5
ncu --launch-skip 20 --launch-count 1 -k regex:gqa_attention --section SpeedOfLight --section Occupancy --section LaunchStats \
  --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,${st}_long_scoreboard_per_issue_active.ratio,${st}_barrier_per_issue_active.ratio,${st}_not_selected_per_issue_active.ratio,${st}_math_pipe_throttle_per_issue_active.ratio,${st}_wait_per_issue_active.ratio,${st}_lg_throttle_per_issue_active.ratio,${st}_short_scoreboard_per_issue_active.ratio,${st}_mio_throttle_per_issue_active.ratio,${st}_dispatch_stall_per_issue_active.ratio,${st}_no_instruction_per_issue_active.ratio,${st}_selected_per_issue_active.ratio,${st}_tex_throttle_per_issue_active.ratio,${st}_imc_miss_per_issue_active.ratio,${st}_branch_resolving_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active \
  "$b/examples/gqa_host" --bench "$b/examples" > "$out/ncu_gqa.txt" 2>&1
grep -E "gqa_attention__v|Duration|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Block Size|Grid Size|Dynamic Shared|smsp__|l1tex__|sm__pipe|==ERROR|==WARN" "$out/ncu_gqa.txt" | head -40
ncu --launch-skip 20 --launch-count 1 -k regex:gqa_attention --section SourceCounters --page source --print-source sass --csv \
  "$b/examples/gqa_host" --bench "$b/examples" > "$out/gqa_src.csv" 2>/dev/null
echo "source counters: $(wc -l < "$out/gqa_src.csv") lines in gqa_src.csv"
