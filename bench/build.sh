#!/usr/bin/env bash
# Builds the benchmark's cubins (and manifests) on this machine:
#   bash bench/build.sh BUILD_DIR
# runs BUILD_DIR/src/phobosc -o BUILD_DIR/bench/NAME.cubin bench/NAME.ph for
# every bench/*.ph and bench/ports/*.ph (into BUILD_DIR/bench/ports/), reports
# each failure and goes on; exits 1 if any failed. BENCH_ONLY="NAME ..."
# (softmax, ports/softmax_row) builds those alone.
# Also copies libyaml beside the cubins, for a device machine whose image
# lacks it (libphobos.so links it; bench.py preloads the copy when needed).
set -uo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
phobosc="$build/src/phobosc"
[ -x "$phobosc" ] || { echo "bench/build.sh: no compiler at $phobosc (meson setup $build && ninja -C $build)"; exit 2; }
if [ -z "${PHOBOS_PTXAS:-}" ] && ! command -v ptxas >/dev/null && [ -x /usr/local/cuda/bin/ptxas ]; then
  export PHOBOS_PTXAS=/usr/local/cuda/bin/ptxas
fi
out="$build/bench"
mkdir -p "$out"
fail=0
# build TARGET SRC [FLAGS...]: $out/TARGET.cubin and .yaml, one line of report
build() {
  local target=$1 src=$2 t0 log
  shift 2
  rm -f "$out/$target.ptx"
  t0=$(date +%s%N)
  if log=$("$phobosc" "$@" -o "$out/$target.cubin" "$src" 2>&1); then
    printf 'ok    %-24s %6d ms\n' "$target" "$(( ($(date +%s%N) - t0) / 1000000 ))"
  else
    fail=1
    rm -f "$out/$target.cubin" "$out/$target.yaml"
    printf 'FAIL  %-24s %s\n' "$target" "$(printf '%s\n' "$log" | grep -m1 -E 'error' || printf '%s\n' "$log" | head -1)"
  fi
}
# bench/*.ph, then bench/ports/: kernels ported from other languages'
# tutorials and libraries, as their users would write them. A file whose
# whole-row blocks are sized at build time (Triton's BLOCK_SIZE =
# next_power_of_2(N)) says so in a line "// bench-build: BN=1024 BN=4096":
# one cubin each, ports/NAME.BN1024.cubin.
mkdir -p "$out/ports"
for src in "$here"/*.ph "$here"/ports/*.ph; do
  [ -e "$src" ] || continue
  name=${src#"$here"/}
  name=${name%.ph}
  # BENCH_ONLY="softmax ports/softmax_row": those alone (a quick rebuild)
  if [ -n "${BENCH_ONLY:-}" ]; then case " $BENCH_ONLY " in *" $name "*) ;; *) continue ;; esac; fi
  defs=$(sed -n 's|^// bench-build: *||p' "$src" | head -1)
  if [ -z "$defs" ]; then build "$name" "$src"; continue; fi
  for d in $defs; do build "$name.${d//=/}" "$src" -D "$d"; done
done
# libphobos.so needs libyaml-0.so.2; the device image may not have it
for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
  if [ -e "$d/libyaml-0.so.2" ]; then cp -L "$d/libyaml-0.so.2" "$out/libyaml-0.so.2"; break; fi
done
exit $fail
