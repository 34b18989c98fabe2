#!/usr/bin/env bash
# Runs the GPU conformance suite in parallel chunks:
#   bash tests/gpu/pconf.sh [PREFIX...] BUILD/tests/gpu/gpu_conformance CASE.yaml...
# Everything before the first .yaml argument is the command (compute-sanitizer
# and its options may come first); the cases are split into $PHOBOS_CONF_JOBS
# chunks (default: half the CPUs, at most 8), each run as its own process (the
# time goes to compiling: phobosc and ptxas on the CPU), and their TAP lines
# are printed in order, ending on one "# N passed, M failed" line. Exits 1 if
# any chunk failed. The environment (PHOBOS_GPU_PAD, PHOBOS_TMA, ...) reaches
# every chunk.
set -uo pipefail
cmd=()
while [ $# -gt 0 ] && [[ $1 != *.yaml ]]; do cmd+=("$1"); shift; done
[ ${#cmd[@]} -gt 0 ] && [ $# -gt 0 ] || { echo "usage: pconf.sh [PREFIX...] GPU_CONFORMANCE CASE.yaml..." >&2; exit 2; }
jobs=${PHOBOS_CONF_JOBS:-$(( $(nproc) / 2 ))}
[ "$jobs" -ge 1 ] || jobs=1
[ "$jobs" -le 8 ] || jobs=8
dir=$(mktemp -d)
cases=("$@")
status=0
pids=()
for ((j = 0; j < jobs; j++)); do
  chunk=()
  for ((i = j; i < ${#cases[@]}; i += jobs)); do chunk+=("${cases[i]}"); done
  [ ${#chunk[@]} -gt 0 ] || continue
  "${cmd[@]}" "${chunk[@]}" > "$dir/$j.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
passed=0 failed=0
for ((j = 0; j < jobs; j++)); do
  [ -e "$dir/$j.log" ] || continue
  grep -v -E '^# [0-9]+ passed, [0-9]+ failed|^1\.\.[0-9]+$' "$dir/$j.log"
  read -r p f < <(grep -E '^# [0-9]+ passed, [0-9]+ failed' "$dir/$j.log" | tail -1 | awk '{print $2, $4}')
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
  grep -q -E '^# [0-9]+ passed' "$dir/$j.log" || { echo "# chunk $j ended without a summary"; status=1; }
done
rm -rf "$dir"
echo "1..$((passed + failed))"
echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
