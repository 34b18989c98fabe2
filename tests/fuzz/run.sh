#!/usr/bin/env bash
# Builds a fuzz target with clang (libFuzzer, ASan, UBSan) and runs it for a
# given time on JOBS cores (default: all).
#   tests/fuzz/run.sh SECONDS [JOBS] [TARGET]
# TARGET compiler (the default): fuzz_compiler.c, the compiler up to PTX text,
#   seeded with every .ph in the repository and with large structured inputs
#   generated here (inputs up to 64 KiB). Findings land in
#   $FUZZ_OUT/findings/ (default build-fuzz/), cleared at the start of a run;
#   each one becomes a test in tests/golden/fuzz/ (an input that must compile
#   without crashing).
# TARGET manifest: fuzz_manifest.c, the runtime's manifest reader and its grid
#   and binding checks, seeded with the manifests phobosc writes for every
#   example and conformance source ($PHOBOSC, else build/src/phobosc, else one
#   built here) and with tests/golden/manifest/ (hostile inputs: alias bombs,
#   huge numbers, deep nesting, long strings). Findings land in
#   $FUZZ_OUT/findings-manifest/; each one becomes a file in
#   tests/golden/manifest/, which test_runtime runs through the target.
# FUZZ_TIMEOUT (seconds, default 10) is libFuzzer's -timeout, which is wall
# time: a campaign niced beside other work raises it, or a starved input
# reads as a timeout (two did on 2026-12-01, and ran in 0.6 s and 0.07 s
# alone).
set -euo pipefail
secs=${1:-60}
jobs=${2:-$(nproc)}
target=${3:-compiler}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$root/build-fuzz}
case $target in
compiler) corpus=$out/corpus findings=$out/findings ;;
manifest) corpus=$out/corpus-manifest findings=$out/findings-manifest ;;
*) echo "usage: tests/fuzz/run.sh SECONDS [JOBS] [compiler|manifest]" >&2; exit 2 ;;
esac
mkdir -p "$out/gen" "$corpus" "$findings"
rm -f "$findings"/*
if ! command -v clang >/dev/null || ! clang -fsanitize=fuzzer -x c /dev/null -c -o /dev/null 2>/dev/null; then
  echo "fuzz: clang with libFuzzer is not installed (Debian: clang libclang-rt-14-dev); skipped"
  exit 0
fi
san=(-g -O1 -std=c17 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
if [ "$target" = manifest ]; then
  clang "${san[@]}" -I"$root/runtime" -I"$root/runtime/include" "$root"/runtime/*.c \
    "$root/tests/fuzz/fuzz_manifest.c" -lyaml -ldl -lpthread -lm -o "$out/fuzz_manifest"
  # the seeds: what phobosc writes for every example and conformance source
  phobosc=${PHOBOSC:-$root/build/src/phobosc}
  if [ ! -x "$phobosc" ]; then
    flex -o "$out/gen/lexer.c" "$root/lang/lexer.l"
    bison --defines="$out/gen/parser.h" -o "$out/gen/parser.c" "$root/lang/parser.y"
    clang -O1 -std=c17 -D_GNU_SOURCE -I"$root/lang" -I"$root/src" -I"$out/gen" "$root"/lang/*.c \
      "$out"/gen/{lexer,parser}.c "$root"/src/*.c "$root"/src/plan/*.c "$root"/src/ptx/*.c -pthread -lm -lyaml -o "$out/phobosc"
    phobosc=$out/phobosc
  fi
  n=0
  while IFS= read -r -d '' ph; do
    "$phobosc" --emit=manifest -o "$corpus/$(basename "$ph" .ph).yaml" "$ph" 2>/dev/null && n=$((n + 1)) || true
  done < <(find "$root/examples" "$root/spec/conformance" -name '*.ph' -print0)
  cp "$root"/tests/golden/manifest/*.yaml "$corpus/"
  echo "fuzz: $n manifests from phobosc and $(ls "$root"/tests/golden/manifest/*.yaml | wc -l) from tests/golden/manifest"
  cd "$findings"
  "$out/fuzz_manifest" -dict="$root/tests/fuzz/manifest.dict" -max_len=16384 -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$corpus" 2>&1 | tail -n 40
  ls "$findings" | grep -E '^(crash|leak|timeout|oom)-' || echo "fuzz: no findings"
  exit 0
fi
flex -o "$out/gen/lexer.c" "$root/lang/lexer.l"
bison --defines="$out/gen/parser.h" -o "$out/gen/parser.c" "$root/lang/parser.y"
# Every compiler source but the command line's main (phobosc.c) and the
# interpreter (interp.c: the driver never runs it), by glob: a pass added to
# src/ is linked here without an edit (a listed set missed early.c on 12-04
# and remat.c and strip.c later; lang/ and runtime/ by glob too since
# sema_grid.c and contract.c were missed on 12-05).
srcs=("$root"/lang/*.c "$out"/gen/{lexer,parser}.c "$root"/src/plan/*.c "$root"/src/ptx/*.c)
for f in "$root"/src/*.c; do
  case ${f##*/} in phobosc.c | interp.c) ;; *) srcs+=("$f") ;; esac
done
clang "${san[@]}" \
  -I"$root/lang" -I"$root/src" -I"$out/gen" "${srcs[@]}" "$root/tests/fuzz/fuzz_compiler.c" -pthread -lm -lyaml -o "$out/fuzz_compiler"
find "$root/examples" "$root/spec" "$root/tests/golden" -name '*.ph' -exec cp {} "$out/corpus/" \;
# Large structured seeds, which mutation alone does not reach: long and deep
# expressions, deep and long nests, many loops, lets and parameters, up to
# and just past the bounds of spec 13.3, each under -max_len.
max_len=65536
gen() { # gen NAME: stdin into the corpus as NAME.ph, if it fits in max_len
  cat > "$out/corpus/gen_$1.ph"
  if [ "$(wc -c < "$out/corpus/gen_$1.ph")" -gt $max_len ]; then
    echo "fuzz: seed $1 is over $max_len bytes" >&2
    exit 1
  fi
}
rep() { printf -- "$1%.0s" $(seq 1 "$2"); } # rep TEXT N: TEXT N times
{ echo "kernel k(A: tensor<f32>[N]) {"; echo "  let x = 1.0"; printf '  A[0] = x'; rep ' + x' 12000; printf '\n}\n'; } | gen sum_12000
{ echo "kernel k(A: tensor<i32>[N]) {"; printf '  A[0 :+ 1'; rep ' + 1' 8000; printf '] = iota(8001)[0 :+ 8001]\n}\n'; } | gen int_sum_8000
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; rep '-' 30000; printf '1.0\n}\n'; } | gen minus_30000
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; rep '(' 256; printf '1.0'; rep ')' 256; printf '\n}\n'; } | gen parens_256
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; rep '(' 257; printf '1.0'; rep ')' 257; printf '\n}\n'; } | gen parens_257
nest() { # nest N BODY: N nested loops around BODY
  echo "kernel k(C: tensor<f32>[M, N]) {"
  echo "  var acc: tile<f32>[16, 16] = 0.0"
  for i in $(seq 1 "$1"); do echo "for i$i in range(0, 2) {"; echo "$2"; done
  for i in $(seq 1 "$1"); do echo "}"; done
  echo "  C[0 :+ 16, 0 :+ 16] = acc"
  echo "}"
}
nest 255 'acc += 1.0' | gen loops_255
nest 256 'acc += 1.0' | gen loops_256
nest 40 'acc += transpose(acc)' | gen loops_40_shared
{ echo "kernel k(C: tensor<f32>[M, N]) {"; echo "  var acc: tile<f32>[16, 16] = 0.0"
  for i in $(seq 1 1000); do echo "  for i$i in range(0, 2) { acc += transpose(acc) }"; done
  echo "  C[0 :+ 16, 0 :+ 16] = acc"; echo "}"; } | gen loops_1000_in_a_row
{ echo "kernel k(A: tensor<f32>[N]) {"; echo "  let x = 1"; printf '  if x == 0 { A[0] = 0.0 }'
  for i in $(seq 1 1100); do printf ' else if x == %d { A[0] = 1.0 }' "$i"; done; printf '\n}\n'; } | gen else_if_1100
{ echo "kernel k(A: tensor<i32>[N]) {"; for i in $(seq 1 3000); do echo "  let a$i = $i"; done; echo "  A[0] = a3000"; echo "}"; } | gen lets_3000
{ printf 'kernel k('; for i in $(seq 1 15); do printf 'T%d: tensor<f32>[A, B, C, D, E], ' "$i"; done
  for i in $(seq 1 48); do printf 's%d: f32, ' "$i"; done; printf 'Z: tensor<f32>[N]) {\n  Z[0] = 1.0\n}\n'; } | gen params_64
{ printf 'kernel k('; for i in $(seq 1 80); do printf 'T%d: tensor<f32>[N%d], ' "$i" "$i"; done
  printf 'Z: tensor<f32>[N]) {\n  Z[0] = 1.0\n}\n'; } | gen params_81
{ echo "kernel k() {"; printf '  '; for i in $(seq 1 3000); do printf 'let a%d = 1; ' "$i"; done; echo "let z = nope"; echo "}"; } | gen long_line
cd "$out/findings"
"$out/fuzz_compiler" -dict="$root/tests/fuzz/phobos.dict" -max_len=$max_len -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
  -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 40
ls "$out/findings" | grep -E '^(crash|leak|timeout|oom)-' || echo "fuzz: no findings"
