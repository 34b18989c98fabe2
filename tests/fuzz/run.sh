#!/usr/bin/env bash
# Builds a fuzz target with clang (libFuzzer, ASan, UBSan) and runs it for a
# given time on JOBS cores (default: all).
#   tests/fuzz/run.sh SECONDS [JOBS] [TARGET]
# TARGET compiler (the default): fuzz_compiler.c, the compiler up to PTX text,
#   seeded with every .ph in the repository. Findings land in
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
  clang "${san[@]}" -I"$root/runtime" -I"$root/runtime/include" "$root"/runtime/{cuda,manifest,runtime,autotune}.c \
    "$root/tests/fuzz/fuzz_manifest.c" -lyaml -ldl -lpthread -lm -o "$out/fuzz_manifest"
  # the seeds: what phobosc writes for every example and conformance source
  phobosc=${PHOBOSC:-$root/build/src/phobosc}
  if [ ! -x "$phobosc" ]; then
    flex -o "$out/gen/lexer.c" "$root/lang/lexer.l"
    bison --defines="$out/gen/parser.h" -o "$out/gen/parser.c" "$root/lang/parser.y"
    clang -O1 -std=c17 -D_GNU_SOURCE -I"$root/lang" -I"$root/src" -I"$out/gen" "$root"/lang/{arena,ast,diag,sema}.c \
      "$out"/gen/{lexer,parser}.c "$root"/src/*.c "$root"/src/ptx/*.c -lm -lyaml -o "$out/phobosc"
    phobosc=$out/phobosc
  fi
  n=0
  while IFS= read -r -d '' ph; do
    "$phobosc" --emit=manifest -o "$corpus/$(basename "$ph" .ph).yaml" "$ph" 2>/dev/null && n=$((n + 1)) || true
  done < <(find "$root/examples" "$root/spec/conformance" -name '*.ph' -print0)
  cp "$root"/tests/golden/manifest/*.yaml "$corpus/"
  echo "fuzz: $n manifests from phobosc and $(ls "$root"/tests/golden/manifest/*.yaml | wc -l) from tests/golden/manifest"
  cd "$findings"
  "$out/fuzz_manifest" -dict="$root/tests/fuzz/manifest.dict" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$corpus" 2>&1 | tail -n 40
  ls "$findings" | grep -E '^(crash|leak|timeout|oom)-' || echo "fuzz: no findings"
  exit 0
fi
flex -o "$out/gen/lexer.c" "$root/lang/lexer.l"
bison --defines="$out/gen/parser.h" -o "$out/gen/parser.c" "$root/lang/parser.y"
srcs=("$root"/lang/{arena,ast,diag,sema}.c "$out"/gen/{lexer,parser}.c "$root"/src/{driver,tir,lower,plan,manifest,cubin}.c "$root"/src/ptx/*.c)
# interp.c is not needed: the driver never runs the interpreter.
clang "${san[@]}" \
  -I"$root/lang" -I"$root/src" -I"$out/gen" "${srcs[@]}" "$root/tests/fuzz/fuzz_compiler.c" -lm -lyaml -o "$out/fuzz_compiler"
find "$root/examples" "$root/spec" "$root/tests/golden" -name '*.ph' -exec cp {} "$out/corpus/" \;
cd "$out/findings"
"$out/fuzz_compiler" -dict="$root/tests/fuzz/phobos.dict" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 40
ls "$out/findings" | grep -E '^(crash|leak|timeout|oom)-' || echo "fuzz: no findings"
