#!/usr/bin/env bash
# The GPU job, run on the device machine over a build folder made here:
#   bash tests/gpu/run.sh BUILD_DIR [--bench [PEERS.py]]
# Runs the GPU test programs, then again under compute-sanitizer (memcheck),
# the q8_matvec and GQA (prefill and split decode) checks, and with --bench
# the benchmarks beside their peers, and prints a short table last. The logs
# come back packed as $OUT/gpu_logs.tgz. Needs no
# compiler: everything was built here. Last, the GQA cubins' SASS is counted
# (HGMMA and HMMA instructions, LDL/STL local-memory accesses: issue 6 wants
# none in the main loop; the WG 2, BK 64 prefill variant spills a few words).
# PHOBOS_PRODUCER_WARP=1, PHOBOS_PREFETCH=1 and PHOBOS_TMA=0 plan the conformance
# cases as phobosc --producer-warp, --prefetch and --no-tensor-copies; the suite
# runs once as compiled by default (TMA tensor copies) and once with
# PHOBOS_TMA=0 (and --bench times the Q load both ways).
set -uo pipefail
build=${1:-build}
# every log goes to one folder, packed at the end into $OUT/gpu_logs.tgz
# (the device tool brings back at most 8 files)
out=$(mktemp -d)
# the conformance passes that plan alike share their cubins (gpu_conformance.c)
export PHOBOS_CONF_CACHE=${PHOBOS_CONF_CACHE:-$(mktemp -d)}
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# gpu: /'
rows=()
run() { # NAME COMMAND...
  local name=$1
  shift
  local t0=$(date +%s%N)
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  local t1=$(date +%s%N)
  local summary=$(grep -E '^# [0-9]+ passed' "$out/$name.log" | tail -1 | sed 's/^# //')
  [ -n "$summary" ] || summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out/$name.log" | tail -1)
  [ -n "$summary" ] || summary=$(grep -E 'ERROR SUMMARY' "$out/$name.log" | tail -1)
  rows+=("$(printf '%-34s rc=%-3s %6dms  %s' "$name" "$rc" "$(( (t1 - t0) / 1000000 ))" "$summary")")
  grep -E '^not ok|Bail out|ERROR SUMMARY: [1-9]|^# tensor maps' "$out/$name.log" | head -20
  [ $rc -lt 128 ] || { echo "# $name died by signal $((rc - 128)); its last lines:"; tail -5 "$out/$name.log"; }
  [ $rc -eq 0 ] || status=1
}
run gpu_runtime "$build/tests/gpu/gpu_runtime" "$build/tests/gpu"
# the full suites in parallel chunks (tests/gpu/pconf.sh): compiling is most of their time
run gpu_conformance bash tests/gpu/pconf.sh "$build/tests/gpu/gpu_conformance" spec/conformance/*.yaml
[ -x "$build/examples/q8_matvec_host" ] && run q8_matvec_check "$build/examples/q8_matvec_host" "$build/examples"
# the GEMM example (bf16 and f16, bias + GELU / ReLU, ragged), checked against
# double precision (with --bench, below, timed beside torch.mm)
[ -x "$build/examples/gemm_host" ] && [ "${2:-}" != --bench ] && run gemm_check "$build/examples/gemm_host" "$build/examples"
# the GQA example, prefill and split decode, across its validation matrix
# (with --bench the same checks run again below, with the benchmarks)
[ -x "$build/examples/gqa_host" ] && [ "${2:-}" != --bench ] && run gqa_check "$build/examples/gqa_host" "$build/examples"
# the LLM decode example, two layers at a short context: every kernel of the
# step, the graph capture and the double reference (tests/gpu/llm.sh runs
# the full model's four shapes)
[ -x "$build/examples/llm_decode_host" ] && run llm_decode_check bash tests/gpu/llm.sh "$build" quick
if command -v compute-sanitizer >/dev/null; then
  # memcheck over the whole suite and the q8 example; racecheck over a
  # sample: the shipped examples and a few of each kind
  # (the grid-barrier cases apart, under a timeout: their CTAs spin until the
  # whole grid arrives, which a tool that serializes CTAs would never see)
  grid_cases=(spec/conformance/{atomic_tickets,grid_rounds,grid_rounds_large}.yaml)
  other_cases=()
  for c in spec/conformance/*.yaml; do [[ " ${grid_cases[*]} " == *" $c "* ]] || other_cases+=("$c"); done
  PHOBOS_GPU_GUARD=0 run gpu_conformance.memcheck bash tests/gpu/pconf.sh compute-sanitizer --tool memcheck \
    --error-exitcode 1 "$build/tests/gpu/gpu_conformance" "${other_cases[@]}"
  PHOBOS_GPU_GUARD=0 run gpu_conformance.grid.memcheck timeout 300 compute-sanitizer --tool memcheck \
    --error-exitcode 1 "$build/tests/gpu/gpu_conformance" "${grid_cases[@]}"
  [ -x "$build/examples/q8_matvec_host" ] && run q8_matvec_check.memcheck compute-sanitizer --tool memcheck \
    --error-exitcode 1 "$build/examples/q8_matvec_host" "$build/examples"
  sample=(spec/conformance/{arrive_colsum,qdot_blocks,qmma_blocks,barrier_rows,atomic_colsum,atomic_splitk,atomic_scalars,llm_q8_gemv,llm_q8_gemv_add,llm_gqa_split_len,llm_gqa_merge_len,llm_argmax_step,llm_rope_append,gqa_decode_nq7_causal,gqa_decode_nq4_s3,gqa_decode_split_nq7_causal,gqa_decode_split_nq7_misaligned,gqa_nq7_kv_misaligned,gqa_decode_merge,q8_matvec_seed,q8_matvec_split_ring,q8_matvec_split_ring_misaligned,pipeline_copy,pipeline_unaligned,pipeline_misaligned,pipeline_nested,pipeline_copy_in_if,qload_nq7,qload_nq3,qload_edges_nq7_misaligned,gqa_nq7_causal,gqa_nq8_d64,sgemm_ragged,flash_attention,reduce_ragged,dot_rank3,dot_bf16_panels,dot_f16_panels_flat,stmt_var_cols,builtin_transpose,wgmma_dot,wgmma_dot_t,wgmma_padstage_var,rows_store_bf16_4099,dot_epilogue_bf16_wg,dot_epilogue_f32_mma,bound_select_mm,bound_select_cols,staged_rows_softmax,staged_rows_short}.yaml)
  run gpu_conformance.racecheck compute-sanitizer --tool racecheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" "${sample[@]}"
  # the suite provokes driver errors on purpose (a manifest naming a missing entry): only memory errors count
  run gpu_runtime.memcheck compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 1 \
    "$build/tests/gpu/gpu_runtime" "$build/tests/gpu"
fi
# the suite again without tensor copies (phobosc --no-tensor-copies): the
# cp.async staging and the pointer paths the copies replace
PHOBOS_TMA=0 run gpu_conformance.no_tensor_copies bash tests/gpu/pconf.sh "$build/tests/gpu/gpu_conformance" \
  spec/conformance/*.yaml
# the suite again on strided tensors (spec 16.3): every row of rank 2 and
# more padded by 16 elements (the pitches stay 16-byte aligned: the tensor
# maps and vector paths at real strides) and by 1 (odd pitches: the pointer
# and element paths); the gaps must keep their guard bytes
PHOBOS_GPU_PAD=16 run gpu_conformance.strided16 bash tests/gpu/pconf.sh "$build/tests/gpu/gpu_conformance" \
  spec/conformance/*.yaml
PHOBOS_GPU_PAD=1 run gpu_conformance.strided1 bash tests/gpu/pconf.sh "$build/tests/gpu/gpu_conformance" \
  spec/conformance/*.yaml
# the shifted walks (phobosc --shift-walks, spec 15.24, experimental) at odd
# pitches: every case whose row loops qualify, against the interpreter
PHOBOS_SHIFT_WALKS=1 PHOBOS_GPU_PAD=1 run gpu_conformance.shift_walks bash tests/gpu/pconf.sh \
  "$build/tests/gpu/gpu_conformance" spec/conformance/*.yaml
# column vectors broadcast in their tiles' rows (phobosc --row-broadcasts,
# spec 15.26, experimental): the cases whose PTX it changes, and racecheck
PHOBOS_ROW_BROADCASTS=1 run gpu_conformance.row_broadcasts bash tests/gpu/pconf.sh \
  "$build/tests/gpu/gpu_conformance" spec/conformance/{builtin,fma,op,stmt,gqa_decode,llm_}*.yaml
command -v compute-sanitizer >/dev/null && PHOBOS_ROW_BROADCASTS=1 run gpu_conformance.row_broadcasts.racecheck \
  timeout 300 compute-sanitizer --tool racecheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" \
  spec/conformance/{gqa_decode_nq7_causal,gqa_decode_groups,llm_gqa_merge_len,op_broadcast}.yaml
# the dependent launch's wait moved and a first loop's rows asked of L2
# before it (phobosc --early-prefetch, spec 15.27, experimental)
PHOBOS_EARLY_PREFETCH=1 run gpu_conformance.early_prefetch bash tests/gpu/pconf.sh \
  "$build/tests/gpu/gpu_conformance" spec/conformance/*.yaml
# and with every tensor's last dim at stride 2 (general strides, spec 16.3):
# only the general-strides copies run, element by element; under memcheck too
PHOBOS_GPU_SPREAD=2 run gpu_conformance.spread2 bash tests/gpu/pconf.sh "$build/tests/gpu/gpu_conformance" \
  spec/conformance/*.yaml
command -v compute-sanitizer >/dev/null && PHOBOS_GPU_SPREAD=2 PHOBOS_GPU_GUARD=0 run gpu_conformance.spread2.memcheck \
  bash tests/gpu/pconf.sh compute-sanitizer --tool memcheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" \
  spec/conformance/*.yaml
# the GQA cases again with the tensor-core dots on mma.sync (phobosc --no-wgmma)
PHOBOS_WGMMA=0 run gpu_conformance.no_wgmma "$build/tests/gpu/gpu_conformance" spec/conformance/gqa_*.yaml
# wgmma groups waited for at their first use (phobosc --late-waits, spec 15.5;
# experimental): the cases with wgmma dots, and racecheck over two dots in flight
PHOBOS_LATE_WAITS=1 run gpu_conformance.late_waits timeout 300 bash tests/gpu/pconf.sh \
  "$build/tests/gpu/gpu_conformance" spec/conformance/{late_waits,gqa,dot,wgmma}*.yaml
command -v compute-sanitizer >/dev/null && PHOBOS_LATE_WAITS=1 run gpu_conformance.late_waits.racecheck timeout 300 \
  compute-sanitizer --tool racecheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" spec/conformance/late_waits_d128.yaml
# the warp-specialized copies (phobosc --warp-specialize, spec 15.20; experimental,
# under a timeout: a producer that never fills a stage would hang its CTA): every
# case whose kernels may have them, under racecheck, and the GEMM example built
# with them (where this build carries phobosc), each timed beside the plain
# entries by the autotuner and pinned with --bench
ws_cases=(spec/conformance/{dot,wgmma,bound_select}*.yaml)
PHOBOS_SPECIALIZE=1 run gpu_conformance.specialized timeout 300 bash tests/gpu/pconf.sh \
  "$build/tests/gpu/gpu_conformance" "${ws_cases[@]}"
command -v compute-sanitizer >/dev/null && PHOBOS_SPECIALIZE=1 run gpu_conformance.specialized.racecheck timeout 300 \
  compute-sanitizer --tool racecheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" \
  spec/conformance/{wgmma_dot,dot_epilogue_bf16_wg,bound_select_mm}.yaml
ws_dir=$(mktemp -d)
if [ -x "$build/examples/gemm_host" ] && [ -x "$build/src/phobosc" ] &&
  "$build/src/phobosc" --warp-specialize -o "$ws_dir/gemm.cubin" examples/gemm/gemm.ph; then
  [ "${2:-}" = --bench ] && ws_bench=--bench || ws_bench=
  run gemm_check.specialized timeout 300 "$build/examples/gemm_host" $ws_bench "$ws_dir"
  grep '^bench' "$out/gemm_check.specialized.log"
fi
# the seed's no-op check, and more: GQA and the Q tile with NQ a power of two
# (no padding) and not (padded, the slack zero-filled by the copy), swizzled
# operands and staged rings, each run on the pointer path and then with TMA
# copies; every output byte must agree
PHOBOS_COMPARE_PATHS=1 run gpu_conformance.tma_vs_pointer "$build/tests/gpu/gpu_conformance" \
  spec/conformance/{gqa_decode_merge_wide,gqa_nq1_d32,gqa_nq2_d64_causal,gqa_nq4_causal,gqa_nq8_d64,gqa_nq8_d32_causal,gqa_nq7_causal,gqa_nq3_d64,gqa_decode_split_nq7_causal,gqa_decode_nq7_causal,qload_nq8,qload_nq7,sgemm_ragged,dot_bf16_panels,dot_t_bf16_panels,dot_f16_panels_flat,pipeline_copy}.yaml
if [ "${2:-}" = --bench ]; then
  # the Q-load tile with and without TMA copies (compiles on this machine: ptxas is here)
  [ -x "$build/tests/gpu/qload_bench" ] && bash tests/gpu/qload_ab.sh "$build" | tee "$out/qload_ab.log" | grep '^Q load'
  [ -x "$build/examples/q8_matvec_host" ] && "$build/examples/q8_matvec_host" --bench "$build/examples" | tee "$out/q8_bench.log"
  [ -x "$build/examples/gemm_host" ] && run gemm_check_bench "$build/examples/gemm_host" --bench "$build/examples" &&
    grep '^bench' "$out/gemm_check_bench.log" && PYTHONUNBUFFERED=1 python3 examples/gemm/peer.py 2>&1 | grep '^peer' | tee "$out/gemm_peer.log"
  # the Triton q8 peer from the same three L2 states as the bench above, and
  # two read-only ceilings for q8's bytes (Triton's, and a CUDA kernel's built here)
  PYTHONUNBUFFERED=1 python3 tests/gpu/q8_peer_l2.py 2>&1 | tee "$out/q8_peer_l2.log"
  [ -d "$build/bench" ] && PYTHONUNBUFFERED=1 OUT=$out python3 bench/bench.py "$build" > "$out/bench.log" 2>&1; sed -n '/==== bench/,$p' "$out/bench.log" 2>/dev/null
  command -v nvcc >/dev/null && nvcc -O3 -arch=sm_90a -o "$out/read_ceiling" tests/gpu/read_ceiling.cu &&
    "$out/read_ceiling" | tee "$out/read_ceiling.log" && rm -f "$out/read_ceiling"
  # hand-written CUDA transposes at the bench's shapes: the roof of the access
  # pattern the bench's transpose is held to (rows of odd pitch)
  command -v nvcc >/dev/null && nvcc -O3 -arch=sm_90a -o "$out/transpose_roof" tests/gpu/transpose_roof.cu &&
    "$out/transpose_roof" | tee "$out/transpose_roof.log" && rm -f "$out/transpose_roof"
  [ -x "$build/examples/gqa_host" ] && run gqa_check_bench "$build/examples/gqa_host" --bench "$build/examples" &&
    sed -n '/==== gqa/,$p' "$out/gqa_check_bench.log"
  # cuDNN at the one-call decode's shapes, in the same call
  PYTHONUNBUFFERED=1 python3 examples/gqa_attention/peer_decode.py 2>&1 | tee "$out/gqa_decode_peer.log"
  # the prefill with its dots on wgmma (the default) and on mma.sync (--no-wgmma), compiled here
  if [ -x "$build/examples/gqa_host" ]; then
    ab=$(mktemp -d)
    mkdir -p "$ab/wgmma" "$ab/mma_sync"
    "$build/src/phobosc" -D NQ=7 -D D=128 -o "$ab/wgmma/gqa_attention.cubin" examples/gqa_attention/gqa_attention.ph &&
      "$build/src/phobosc" --no-wgmma -D NQ=7 -D D=128 -o "$ab/mma_sync/gqa_attention.cubin" examples/gqa_attention/gqa_attention.ph &&
      run gqa_wgmma_ab "$build/examples/gqa_host" --bench-prefill "$ab/wgmma/gqa_attention.cubin" "$ab/mma_sync/gqa_attention.cubin" &&
      grep '^prefill' "$out/gqa_wgmma_ab.log"
  fi
  # the peers in the same call: Triton and torch on the same card, same moment
  [ -n "${3:-}" ] && PYTHONUNBUFFERED=1 OUT=$out python3 "$3" > "$out/peers.log" 2>&1 && sed -n '/==== summary/,$p' "$out/peers.log"
fi
# the GQA kernels' SASS: tensor-core instructions, and no local memory (LDL/STL)
if command -v cuobjdump >/dev/null && [ -f "$build/examples/gqa_attention_nq7_d128.cubin" ]; then
  for c in "$build"/examples/gqa_{attention,decode}_nq7_d128.cubin; do
    cuobjdump -sass "$c" > "$out/$(basename "$c" .cubin).sass" 2>&1
    rows+=("$(printf '%-34s HGMMA %d, HMMA %d, LDL/STL %d' "sass $(basename "$c" .cubin)" \
      "$(grep -c 'HGMMA' "$out/$(basename "$c" .cubin).sass")" "$(grep -c 'HMMA' "$out/$(basename "$c" .cubin).sass")" \
      "$(grep -cE '\b(LDL|STL)\b' "$out/$(basename "$c" .cubin).sass")")")
  done
fi
echo "==== GPU summary"
printf '%s\n' "${rows[@]}" | tee "$out/summary.txt"
if [ -n "${OUT:-}" ]; then tar -C "$out" -czf "$OUT/gpu_logs.tgz" . && echo "# logs: gpu_logs.tgz"; else echo "# logs: $out"; fi
exit $status
