#!/usr/bin/env bash
# Builds the compiler fuzz target with clang (libFuzzer, ASan, UBSan) and runs
# it for a given time on both cores, seeded with every .ph in the repository.
#   tests/fuzz/run.sh SECONDS [JOBS]
# Findings land in $FUZZ_OUT/findings/ (default build-fuzz/), cleared at the start of a
# run; each one becomes a test in tests/golden/fuzz/ (an input that must compile
# without crashing).
set -euo pipefail
secs=${1:-60}
jobs=${2:-$(nproc)}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_OUT:-$root/build-fuzz}
mkdir -p "$out/gen" "$out/corpus" "$out/findings"
rm -f "$out"/findings/*
if ! command -v clang >/dev/null || ! clang -fsanitize=fuzzer -x c /dev/null -c -o /dev/null 2>/dev/null; then
  echo "fuzz: clang with libFuzzer is not installed (Debian: clang libclang-rt-14-dev); skipped"
  exit 0
fi
flex -o "$out/gen/lexer.c" "$root/lang/lexer.l"
bison --defines="$out/gen/parser.h" -o "$out/gen/parser.c" "$root/lang/parser.y"
srcs=("$root"/lang/{arena,ast,diag,sema}.c "$out"/gen/{lexer,parser}.c "$root"/src/{driver,tir,lower,plan,manifest,ptx,cubin}.c)
# interp.c is not needed: the driver never runs the interpreter.
clang -g -O1 -std=c17 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I"$root/lang" -I"$root/src" -I"$out/gen" "${srcs[@]}" "$root/tests/fuzz/fuzz_compiler.c" -pthread -lm -lyaml -o "$out/fuzz_compiler"
find "$root/examples" "$root/spec" "$root/tests/golden" -name '*.ph' -exec cp {} "$out/corpus/" \;
cd "$out/findings"
"$out/fuzz_compiler" -dict="$root/tests/fuzz/phobos.dict" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 40
ls "$out/findings" | grep -E '^(crash|leak|timeout|oom)-' || echo "fuzz: no findings"
