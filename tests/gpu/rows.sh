#!/usr/bin/env bash
# The quick GPU job for the row kernels and the emitter's load and store
# paths, run on the device machine over a build folder made here (with
# bench/build.sh BUILD_DIR run first):
#   bash tests/gpu/rows.sh BUILD_DIR [KERNELS]
# The whole conformance suite on the GPU; memcheck over the row cases
# (deferred, one_pass, row_norm, rows_store, staged_rows, transpose, bound, div,
# whole_rows, rows3, quant_rows, edges, strip_rows);
# racecheck over the row cases that exchange; then bench.py over KERNELS
# (a comma list of bench.py names; default every row kernel, the transpose
# and the sum) beside torch. The autotune cache is emptied first: a warm
# machine keeps the last run's winners. Needs only build/bench,
# build/runtime, build/tests/gpu and build/src carried.
build=${1:?usage: tests/gpu/rows.sh BUILD_DIR [KERNELS]}
kernels=${2:-softmax_f32,softmax_bf16,layernorm,rmsnorm_residual,rope,silu_mul,cross_entropy,transpose,sum}
export PATH=$PATH:/usr/local/cuda/bin
rm -rf "${HOME:-/root}/.cache/phobos"
logs=$(mktemp -d)
rc=0
echo "== conformance"
"$build/tests/gpu/gpu_conformance" spec/conformance/*.yaml bench/cases/transpose_*.yaml >"$logs/conf.log" 2>&1 || rc=1
grep -E "^not ok" "$logs/conf.log" | head -20; tail -2 "$logs/conf.log"
rows=(spec/conformance/{deferred,one_pass,row_norm,rows_store,staged_rows,transpose,bound,div,whole_rows,rows3,quant_rows,edges,strip_rows}*.yaml)
echo "== memcheck"
PHOBOS_GPU_GUARD=0 compute-sanitizer --tool memcheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" "${rows[@]}" \
  >"$logs/mc.log" 2>&1 || rc=1
grep -E "^not ok" "$logs/mc.log" | head; tail -2 "$logs/mc.log"
echo "== racecheck"
compute-sanitizer --tool racecheck --error-exitcode 1 "$build/tests/gpu/gpu_conformance" \
  spec/conformance/{deferred,one_pass,row_norm,rows_store,staged_rows,transpose,whole_rows,rows3,strip_rows}*.yaml >"$logs/rc.log" 2>&1 || rc=1
grep -E "^not ok" "$logs/rc.log" | head; tail -2 "$logs/rc.log"
echo "== bench"
python3 bench/bench.py "$build" --only "$kernels" 2>&1 | sed -n '/==== bench/,$p'
exit $rc
