#!/usr/bin/env bash
# The Q-load tile benchmark of issue 5, in one device call: qload_edges
# (spec/conformance/qload.ph) built twice, the staged pointer path
# (phobosc --no-tensor-copies) and TMA tensor copies (the default), for NQ 7
# and 8 query heads a KV head.
#   bash tests/gpu/qload_ab.sh BUILD_DIR
# phobosc from BUILD_DIR compiles the cubins on the device machine (ptxas is
# on its PATH); tests/gpu/qload_bench checks both against a CPU sum, times
# them and prints a line each.
set -euo pipefail
build=${1:-build}
out=$(mktemp -d) # the cubins stay on the machine: $OUT keeps only logs

src=spec/conformance/qload.ph
status=0
for cfg in "7 4" "8 4" "7 8" "8 8"; do
  set -- $cfg
  nq=$1 bq=$2
  for v in ptr tma; do
    mkdir -p "$out/$nq.$bq.$v"
    flag=""
    [ $v = ptr ] && flag=--no-tensor-copies
    "$build/src/phobosc" $flag -D NQ=$nq -D D=128 -D BQ=$bq -o "$out/$nq.$bq.$v/qload.cubin" "$src"
  done
  "$build/tests/gpu/qload_bench" "$out/$nq.$bq.ptr" "$out/$nq.$bq.tma" 8192 8 || status=1
done
exit $status
