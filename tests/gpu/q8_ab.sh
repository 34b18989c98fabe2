#!/usr/bin/env bash
# The q8_matvec split-K kernel four ways, in one device call: the threads'
# own loads (the shipped kernel), the same with each iteration's tiles
# loaded an iteration ahead (phobosc --prefetch), @pipeline rings filled by
# warp 0, and @pipeline rings filled by a producer warp (--producer-warp).
#   bash tests/gpu/q8_ab.sh BUILD_DIR
# Runs on the device machine: phobosc from BUILD_DIR compiles the variants
# there (ptxas is on that machine's PATH), then the host program's --bench
# runs on each; the last lines compare them.
set -euo pipefail
build=${1:-build}
out=${OUT:-/tmp}/q8_ab
rm -rf "$out"
src=examples/q8_matvec/q8_matvec_split.ph
for v in plain prefetch ring producer; do
  mkdir -p "$out/$v"
  cp "$build"/examples/*.cubin "$build"/examples/*.yaml "$out/$v/"
done
# the @pipeline version: the same kernel with the attribute and a stage count to tune
# (without @launch's CTAs-per-SM hint: the rings bound that, and the hint
# would cap the registers below what the producer warp's kernel needs)
sed -e '0,/^@autotune(KSPLIT in \[8, 16, 32, 64, 128\], TN in \[256, 512, 1024\], OCC in \[2048, 4096\])$/s//@autotune(KSPLIT in [16, 32], TN in [512, 1024], PIPE in [2, 3, 4])\n@pipeline(PIPE)\n@dynshared/' \
  -e 's|^@launch(TN / 4, OCC / TN)$|@launch(TN / 4)|' "$src" > "$out/q8_matvec_split.ph"
grep -q '@pipeline(PIPE)' "$out/q8_matvec_split.ph" && grep -q '^@launch(TN / 4)$' "$out/q8_matvec_split.ph" || { echo "q8_ab: could not add @pipeline to $src"; exit 1; }
"$build/src/phobosc" --prefetch -o "$out/prefetch/q8_matvec_split.cubin" "$src"
"$build/src/phobosc" -o "$out/ring/q8_matvec_split.cubin" "$out/q8_matvec_split.ph"
"$build/src/phobosc" --producer-warp -o "$out/producer/q8_matvec_split.cubin" "$out/q8_matvec_split.ph"
for v in plain prefetch ring producer; do
  echo "==== $v"
  "$build/examples/q8_matvec_host" --bench "$out/$v" | tee "$out/$v.log" | tail -7
done
echo "==== q8 split-K: plain / prefetch / ring / producer warp (us, TB/s)"
for v in plain prefetch ring producer; do
  printf '%-9s' "$v"
  awk '/^ *[0-9]+x[0-9]+/ {printf "  %s %s us %s", $1, $8, $9}' "$out/$v.log"
  echo
done
