#!/usr/bin/env bash
# ptx_identity.sh: proves that a change kept the compiler's output. Builds
# phobosc at a reference commit and compares, byte for byte, what it and the
# working tree's phobosc print for every example and conformance source:
#   - --emit=ptx, plan, plan-yaml and manifest,
#   - under each flag set (default, --no-tensor-copies, --no-wgmma,
#     --arch=sm_80, --no-tma, --producer-warp, --prefetch),
#   - each source as it stands (every @autotune point), each conformance
#     case with its constants, and the GQA examples at NQ 1 2 4 7 8 and D 64 128;
#   - and, where ptxas is found, the examples' cubins (default flags).
# Diagnostics and exit statuses are compared too.
#
#   tests/ptx_identity.sh REF [BUILD_DIR] [--no-cubins] [--normalize]
#
# BUILD_DIR (default build) holds the working tree's phobosc. --normalize
# renames registers and labels by first use before comparing (for changes
# that move code around in the emitter without changing what it emits).
# Prints one line per difference and a last line "N files compared, N differ";
# exits 1 when any differ.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${1:?usage: tests/ptx_identity.sh REF [BUILD_DIR] [--no-cubins] [--normalize]}
shift
build=build cubins=1 normalize=0
for a in "$@"; do
  case $a in
  --no-cubins) cubins=0 ;;
  --normalize) normalize=1 ;;
  *) build=$a ;;
  esac
done
new=$root/$build/src/phobosc
[ -x "$new" ] || { echo "ptx_identity: no phobosc in $root/$build (build it first)"; exit 2; }
sha=$(git -C "$root" rev-parse --verify "$ref^{commit}") || exit 2

# The reference compiler, built once per commit and kept.
refdir=${PTX_IDENTITY_CACHE:-$root/build-identity}/$sha
old=$refdir/build/src/phobosc
if [ ! -x "$old" ]; then
  rm -rf "$refdir"
  mkdir -p "$refdir"
  git -C "$root" archive "$sha" | tar -x -C "$refdir" || exit 2
  (cd "$refdir" && meson setup build >/dev/null && ninja -C build src/phobosc >/dev/null) ||
    { echo "ptx_identity: cannot build phobosc at $ref"; exit 2; }
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Jobs: "NAME|SOURCE|-D args" a line.
jobs=$out/jobs
cd "$root"
for ph in examples/*/*.ph spec/conformance/*.ph; do echo "$(basename "$ph" .ph)|$ph|"; done > "$jobs"
for nq in 1 2 4 7 8; do
  for d in 64 128; do
    for k in attention decode; do
      echo "gqa_${k}_nq${nq}_d${d}|examples/gqa_attention/gqa_$k.ph|-D NQ=$nq -D D=$d" >> "$jobs"
    done
  done
done
python3 - >> "$jobs" <<'PY'
import glob, os, re
for y in sorted(glob.glob("spec/conformance/*.yaml")):
    text = open(y).read()
    src = re.search(r"^source:\s*(\S+)", text, re.M)
    consts = re.search(r"^constants:\s*\{([^}]*)\}", text, re.M)
    if not src or not consts:
        continue
    defs = " ".join(f"-D {k.strip()}={v.strip()}" for k, v in
                    (kv.split(":") for kv in consts.group(1).split(",") if ":" in kv))
    print(f"{os.path.basename(y)[:-5]}|spec/conformance/{src.group(1)}|{defs}")
PY

flagsets=("" "--no-tensor-copies" "--no-wgmma" "--arch=sm_80" "--no-tma" "--producer-warp" "--prefetch")
emits=(ptx plan plan-yaml manifest)

# Renames %r12, $L3 and the like by order of first appearance.
norm() {
  if [ "$normalize" = 1 ]; then
    perl -pe 'BEGIN { our (%m, %n) } s/((%[a-z]+|\$L[a-z]*)\d+(?:_\d+)*)/$m{$1} \/\/= $2 . "~" . $n{$2}++; $m{$1}/ge' "$1"
  else
    cat "$1"
  fi
}

# Every run a line: "INDEX|BINARY-SIDE|ARGS|SOURCE", run in parallel, each
# side's stdout, stderr and exit status kept under $out/{old,new}/INDEX.
mkdir -p "$out/old" "$out/new"
runs=$out/runs labels=$out/labels
: > "$runs"
: > "$labels"
i=0
while IFS='|' read -r name src defs; do
  for fl in "${flagsets[@]}"; do
    for em in "${emits[@]}"; do
      echo "$i|$defs $fl --emit=$em|$src" >> "$runs"
      echo "$i|$name ${fl:-default} $em" >> "$labels"
      i=$((i + 1))
    done
  done
done < "$jobs"
ptxas=${PHOBOS_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ "$cubins" = 1 ] && [ -x "$ptxas" ]; then
  while IFS='|' read -r name src defs; do
    case $src in examples/*) ;; *) continue ;; esac
    echo "$i|$defs -o @DIR@/$i.cubin|$src" >> "$runs"
    echo "$i|$name cubin|cubin" >> "$labels"
    i=$((i + 1))
  done < "$jobs"
fi
run_one() { # BINARY DIR LINE
  local idx=${3%%|*} rest=${3#*|}
  local args=${rest%%|*} src=${rest#*|}
  args=${args//@DIR@/$2}
  # one ptxas thread: the cubin's notes record --split-compile, and a
  # reference from before 60e33c1 ran ptxas without it
  # shellcheck disable=SC2086
  PHOBOS_PTXAS=$ptxas PHOBOS_PTXAS_THREADS=1 "$1" $args "$src" > "$2/$idx.out" 2> "$2/$idx.err"
  echo "exit $?" >> "$2/$idx.err"
}
export -f run_one
export ptxas
run_all() { # BINARY DIR
  tr '\n' '\0' < "$runs" | xargs -0 -P "$(nproc)" -I{} bash -c 'run_one "$1" "$2" "$3"' _ "$1" "$2" {}
}
# The reference side's outputs are kept beside its phobosc, for the same runs.
if [ -d "$refdir/out" ] && cmp -s "$refdir/out.runs" "$runs"; then
  rmdir "$out/old" && ln -s "$refdir/out" "$out/old"
else
  rm -rf "$refdir/out"
  run_all "$old" "$out/old"
  cp -r "$out/old" "$refdir/out" && cp "$runs" "$refdir/out.runs"
fi
run_all "$new" "$out/new"

compared=0 differ=0
while IFS='|' read -r idx label kind; do
  files=("$idx.out" "$idx.err")
  [ "$kind" = cubin ] && files+=("$idx.cubin" "$idx.yaml")
  for f in "${files[@]}"; do
    compared=$((compared + 1))
    a=$out/old/$f b=$out/new/$f
    if [ "$normalize" = 1 ] && [ "${f##*.}" = out ]; then
      cmp -s <(norm "$a") <(norm "$b")
    else
      cmp -s "$a" "$b"
    fi || { differ=$((differ + 1)); echo "differs: $label ($f)"; }
  done
done < "$labels"

echo "$compared files compared, $differ differ (reference $ref = ${sha:0:12})"
[ "$differ" = 0 ]
