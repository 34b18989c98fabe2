#!/usr/bin/env bash
# compat.sh: compiles every .ph file under the given directories (or the
# files given) and reports each as accepted or rejected with its first
# error; fetches nothing. For checking phobos against kernels written
# elsewhere (Phobos's own examples, a user's tree: issue 23):
#   bash tests/compat.sh [--build DIR] [--cubin] PATH...
# Without --cubin each file is checked (parsed, checked under every
# @autotune point, lowered and planned: phobosc FILE); with --cubin it is
# compiled to a cubin too (ptxas: PHOBOS_PTXAS, PATH or /usr/local/cuda).
# With --out DIR (implies --cubin) each accepted file's cubin and manifest
# stay in DIR as STEM.cubin and STEM.yaml, for tests/gpu/compat_run.py to run
# on the GPU machine against float64 references.
# Ends on "N accepted, N rejected"; exits 1 when any is rejected.
set -uo pipefail
build=build cubin=0 out_dir= paths=()
while [ $# -gt 0 ]; do
  case $1 in
  --build) build=$2; shift 2 ;;
  --cubin) cubin=1; shift ;;
  --out) cubin=1 out_dir=$2; shift 2 ;;
  -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
  *) paths+=("$1"); shift ;;
  esac
done
phobosc="$build/src/phobosc"
[ -x "$phobosc" ] || { echo "compat.sh: no compiler at $phobosc"; exit 2; }
[ ${#paths[@]} -gt 0 ] || { echo "usage: compat.sh [--build DIR] [--cubin] [--out DIR] PATH..."; exit 2; }
[ -z "$out_dir" ] || mkdir -p "$out_dir" || exit 2
if [ $cubin = 1 ] && [ -z "${PHOBOS_PTXAS:-}" ] && ! command -v ptxas >/dev/null && [ -x /usr/local/cuda/bin/ptxas ]; then
  export PHOBOS_PTXAS=/usr/local/cuda/bin/ptxas
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
acc=0 rej=0
while IFS= read -r f; do
  if [ $cubin = 1 ]; then
    cubin_path=$tmp/k.cubin
    [ -z "$out_dir" ] || cubin_path=$out_dir/$(basename "$f" .ph).cubin
    out=$("$phobosc" --diagnostics=plain -o "$cubin_path" "$f" 2>&1); rc=$?
  else out=$("$phobosc" --diagnostics=plain "$f" 2>&1); rc=$?; fi
  if [ $rc = 0 ]; then
    acc=$((acc + 1)); printf 'accepted  %s\n' "$f"
  else
    rej=$((rej + 1))
    printf 'rejected  %s: %s\n' "$f" "$(printf '%s\n' "$out" | grep -m1 -E 'error' || printf '%s\n' "$out" | head -1)"
  fi
done < <(for p in "${paths[@]}"; do if [ -d "$p" ]; then find "$p" -name '*.ph' | sort; else echo "$p"; fi; done)
echo "$acc accepted, $rej rejected"
[ $rej = 0 ]
