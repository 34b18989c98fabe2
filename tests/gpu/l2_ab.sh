#!/usr/bin/env bash
# The L2 eviction hints (spec 15.21) A/B, in one device call:
# tests/gpu/l2_ab.ph (bench/softmax.ph's kernels) compiled five ways on the
# device machine (phobosc from BUILD_DIR, ptxas on its PATH): --no-l2-hints,
# the default hints, --l2-keep=0.75 and 0.5, and --l2-hints=stores; each timed by
# tests/gpu/l2_ab.py over softmax rows of 50257 and 128256 columns (f32 and
# bf16) beside the device copy and torch.softmax, its best variant printed.
#   bash tests/gpu/l2_ab.sh BUILD_DIR
set -uo pipefail
build=${1:-build}
out=${OUT:-/tmp}/l2_ab
export PATH=$PATH:/usr/local/cuda/bin
src=tests/gpu/l2_ab.ph
declare -A flags=([plain]="--no-l2-hints" [hint]="" [k75]="--l2-keep=0.75" [k5]="--l2-keep=0.5"
                  [stores]="--l2-hints=stores")
for v in plain hint k75 k5 stores; do
  mkdir -p "$out/$v/bench"
  # shellcheck disable=SC2086
  "$build/src/phobosc" ${flags[$v]} -o "$out/$v/bench/l2_ab.cubin" "$src" || { echo "l2_ab: $v did not compile"; exit 1; }
done
rm -rf "${HOME:-/root}/.cache/phobos"
timeout 100 python3 tests/gpu/l2_ab.py "$build" "$out/plain" plain 2>&1 | grep -v Warn
for v in hint k75 k5 stores; do timeout 60 python3 tests/gpu/l2_ab.py "$build" "$out/$v" "$v" row 2>&1 | grep -v Warn; done
