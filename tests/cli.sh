#!/usr/bin/env bash
# cli.sh: the phobosc command line, as TAP. Needs PHOBOSC and PROJECT_ROOT.
set -u
n=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
q8="$PROJECT_ROOT/examples/q8_matvec/q8_matvec.ph"

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }

# run NAME EXPECTED_STATUS ARGS...: runs phobosc, keeps stdout/stderr in $tmp
run() {
  local name=$1 want=$2
  shift 2
  "$PHOBOSC" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$name (exit $want)"; else not_ok "$name" "exit $got, want $want" "$(head -c 400 "$tmp/err")"; fi
}
has() { # has NAME FILE TEXT
  if grep -qF -- "$3" "$tmp/$2"; then ok "$1"; else not_ok "$1" "$2 lacks: $3" "$(head -c 400 "$tmp/$2")"; fi
}
empty() {
  if [ ! -s "$tmp/$2" ]; then ok "$1"; else not_ok "$1" "$2 not empty" "$(head -c 400 "$tmp/$2")"; fi
}

run "--help" 0 --help
has "--help prints usage to stdout" out "Usage: phobosc [options] FILE.ph"
has "--help lists --emit stages" out "--emit=STAGE"
empty "--help writes nothing to stderr" err
if diff <("$PHOBOSC" --help) <(sed -n '/^Usage: phobosc \[options\] FILE.ph$/,/^4 internal compiler error.$/p' \
    "$PROJECT_ROOT/spec/LANGUAGE.md") >/dev/null; then ok "--help is the text in spec 13.2"
else not_ok "--help is the text in spec 13.2" "$(diff <("$PHOBOSC" --help) <(sed -n '/^Usage: phobosc/,/^4 internal/p' "$PROJECT_ROOT/spec/LANGUAGE.md") | head -5)"; fi
run "-h" 0 -h
has "-h is --help" out "Usage: phobosc"
run "--version" 0 --version
has "--version prints the version" out "phobosc 0.1.0"

run "no input file" 2
has "no input file message" err "phobosc: error: no input file"
has "usage hint" err "Try 'phobosc --help'"
run "unknown option" 2 --frobnicate "$q8"
has "unknown option named" err "unknown option '--frobnicate'"
run "bad --emit" 2 --emit=sass "$q8"
has "bad --emit named" err "unknown --emit stage 'sass'"
run "bad --arch" 2 --arch=sm_70 "$q8"
has "bad --arch named" err "unsupported --arch 'sm_70'"
run "--arch=sm_80" 0 --arch=sm_80 "$q8"
run "--arch=sm_90a" 0 --arch=sm_90a "$q8"
run "-o without file" 2 "$q8" -o
run "-D without =" 2 -D FOO "$q8"
has "-D message" err "-D needs NAME=VALUE"
run "-D bad name" 2 -D 1X=3 "$q8"
run "-D bad value" 2 -D X=abc "$q8"
run "two inputs" 2 "$q8" "$q8"
run "bad --max-errors" 2 --max-errors=lots "$q8"
run "bad --diagnostics" 2 --diagnostics=fancy "$q8"

run "missing file" 1 "$tmp/nope.ph"
has "missing file message" err "cannot read '$tmp/nope.ph'"

run "check only" 0 "$q8"
empty "check writes nothing" out
run "--emit=ast to stdout" 0 --emit=ast "$q8"
has "ast starts with program" out "program <1:1>"
run "-o - is stdout" 0 --emit=tokens -o - "$q8"
has "tokens on stdout" out "11:1 KW_KERNEL"
run "-o FILE" 0 --emit=ast -o "$tmp/q8.ast" "$q8"
if cmp -s "$tmp/q8.ast" <("$PHOBOSC" --emit=ast "$q8"); then ok "-o FILE holds the ast"; else not_ok "-o FILE holds the ast"; fi
run "-oFILE" 0 --emit=ast "-o$tmp/q8b.ast" "$q8"
if [ -s "$tmp/q8b.ast" ]; then ok "-oFILE written"; else not_ok "-oFILE written"; fi
run "stdin input" 0 --emit=ast - < "$q8"

run "--emit=tir" 0 --emit=tir "$q8"
has "tir has the loop" out "= for %"
has "tir names the variant" out "kernel q8_matvec [TILE_N=64, BLK=32] (variant 1 of 1)"
run "--emit=plan" 0 --emit=plan "$q8"
has "plan stages a" out "#0 a "
has "plan: a's staging is 128 bytes" out "pitch 32 (128 B)  128 B at 0"
has "plan: the FMA dot's exchange is a planned buffer" out "exchange of %24          scratch              i32 [2048] pitch 2048 (8192 B)  8192 B at 128  live 24..24"
run "--emit=plan with @padstage" 0 --emit=plan --no-tensor-copies "$PROJECT_ROOT/examples/q8_matvec/q8_matvec_padstage.ph"
has "padstage grows a to 160 bytes" out "f32 [1, 32] pitch 40 (160 B) +8 padstage  160 B at 0"
run "--emit=plan-yaml" 0 --emit=plan-yaml "$q8"
has "plan-yaml lists buffers" out "  buffers:"
has "plan-yaml buffer entry" out "{id: 0, name: \"a\", kind: staging, elem: f32, dims: [1, 32], pitch: 32"
run "gqa plans for every point" 0 --emit=plan "$PROJECT_ROOT/examples/gqa_attention/gqa_attention.ph"
if [ "$(grep '^plan gqa_attention' "$tmp/out" | grep -vc 'general strides')" -eq 4 ]; then ok "four gqa variants planned (BK by stages)"; else not_ok "four gqa variants planned (BK by stages)"; fi
if [ "$(grep -c 'general strides' "$tmp/out")" -eq 0 ]; then ok "and no general-strides copy (a kernel with a dot)"; else not_ok "and no general-strides copy (a kernel with a dot)"; fi

run "--emit=manifest" 0 --emit=manifest "$q8"
has "manifest format" out "phobos_manifest: 1"
has "manifest entry" out "entry: q8_matvec__v0"
run "--emit=ptx" 0 --emit=ptx "$q8"
has "ptx entry" out ".visible .entry q8_matvec__v0("
has "ptx target sm_90a" out ".target sm_90a"
has "ptx launch bound" out ".maxntid 256, 1, 1"
run "--emit=ptx --arch=sm_80" 0 --emit=ptx --arch=sm_80 "$q8"
has "ptx target sm_80" out ".target sm_80"
# entry NAME_vN: that PTX entry of the last run's output
entry() { awk "/^.visible .entry $1[(]/,/^}/" "$tmp/out"; }
lacks() { # lacks NAME FILE TEXT
  if ! grep -qF -- "$3" "$tmp/$2"; then ok "$1"; else not_ok "$1" "$2 has: $3"; fi
}
# @autotune points whose plan does not fit are left out, one note each
# under -v, and the manifest omits them; only when none fits is the kernel
# an error, shown for the point that needs the least shared memory (spec 12)
printf '@autotune(BK in [64, 512])\n@grid(1)\nkernel stage(A: tensor<f32>[M, K], C: tensor<f32>[M, 64]) {\n  var acc: tile<f32>[64, 64] = 0.0\n  for k0 in range(0, K, BK) {\n    acc += dot(A[0 :+ 64, k0 :+ BK], A[0 :+ BK, 0 :+ 64])\n  }\n  C[0 :+ 64, 0 :+ 64] = acc\n}\n' > "$tmp/fit.ph"
run "points that do not fit: left out" 0 -v --emit=manifest -o "$tmp/fit.yaml" "$tmp/fit.ph"
has "the left-out points named, with why" err "phobosc: stage [BK=256] left out: $tmp/fit.ph:3:8: error: kernel 'stage' needs 131072 bytes of shared memory; the limit is 49152"
if [ "$(grep -c 'left out' "$tmp/err")" -eq 3 ] && [ "$(grep -c 'entry:' "$tmp/fit.yaml")" -eq 1 ] && grep -q 'entry: stage__v0$' "$tmp/fit.yaml"; then
  ok "BK 128, 256, 512 left out; the manifest has BK 64 alone"; else not_ok "BK 128, 256, 512 left out; the manifest has BK 64 alone" "$(cat "$tmp/err")"; fi
run "points that do not fit: quiet without -v" 0 --emit=manifest -o "$tmp/fit.yaml" "$tmp/fit.ph"
empty "no note without -v" err
# a point a @requires over constants rules out is left out too (spec 11.2)
printf '@autotune(B in [64, 128, 512])\n@requires(B <= 256)\n@grid(1)\nkernel k(X: tensor<f32>[N]) {\n  X[0 :+ B] = X[0 :+ B] * 2.0\n}\n' > "$tmp/req.ph"
run "a point whose @requires is false: left out" 0 -v --emit=manifest -o "$tmp/req.yaml" "$tmp/req.ph"
has "the point named" err "phobosc: k: @autotune point 3 of 3 left out: a @requires contract over its constants is false there"
if grep -q 'B: 64' "$tmp/req.yaml" && grep -q 'B: 128' "$tmp/req.yaml" && ! grep -q 'B: 512' "$tmp/req.yaml"; then
  ok "B 64 and 128 kept, 512 left out"; else not_ok "B 64 and 128 kept, 512 left out" "$(cat "$tmp/req.yaml")"; fi
sed 's/BK in \[64, 512\]/BK in [1024, 2048]/' "$tmp/fit.ph" > "$tmp/nofit.ph"
run "no point fits: an error" 1 --emit=manifest -o "$tmp/nofit.yaml" "$tmp/nofit.ph"
has "no point fits: the least one's plan shown" err "error: kernel 'stage' needs 524288 bytes of shared memory; the limit is 49152"
has "no point fits: said" err "note: none of its 2 points fits; this one needs the least"

# implicit narrowing on stores and assignments (Phobos's rule, spec 7.4):
# accepted quietly, warned once per site under -Wnarrowing (not once per
# @autotune point); an initializer still needs f16(...)
narrow="$PROJECT_ROOT/spec/conformance/narrowing.ph"
run "implicit narrowing: accepted" 0 --emit=plan "$narrow"
empty "implicit narrowing: no warning by default" err
run "-Wnarrowing" 0 -Wnarrowing --emit=plan "$narrow"
has "-Wnarrowing: the store" err "narrowing.ph:9:17: warning: assignment: f32 narrowed to f16 implicitly (rounded to nearest even)"
has "-Wnarrowing: the accumulation" err "narrowing.ph:19:12: warning: assignment: f32 narrowed to f16 implicitly"
if [ "$(grep -c 'warning: assignment' "$tmp/err")" -eq 2 ]; then ok "-Wnarrowing: once a site, not once a point"; else not_ok "-Wnarrowing: once a site, not once a point" "$(cat "$tmp/err")"; fi
printf '@grid(1)\nkernel k(A: tensor<f32>[N], B: tensor<f16>[N]) {\n  var t: tile<f16>[8] = A[0 :+ 8]\n  B[0 :+ 8] = t\n}\n' > "$tmp/init.ph"
run "narrowing initializer: refused" 1 --emit=plan "$tmp/init.ph"
has "narrowing initializer: said" err "initializer of 't': cannot convert f32 to f16 implicitly"

# the split q8 kernel: four columns a thread, rows as 4-byte words, bytes to floats by prmt
split="$PROJECT_ROOT/examples/q8_matvec/q8_matvec_split.ph"
run "--emit=ptx split q8" 0 --emit=ptx "$split"
has "chunks of 4 per thread" out "mul.lo.u32 %tidv_, %tid_, 4;"
has "a weight row is one 4-byte load" out "ld.global.b32"
has "bytes to floats from the packed words" out "prmt.b32"
has "the scale row is one 16-byte load" out "ld.global.v4.b32"
if grep -qE 'shr\.s32 %rv27_0, %rt[0-9]+, 5;' "$tmp/out"; then ok "division by a power-of-two constant takes shifts"; else not_ok "division by a power-of-two constant takes shifts" out "no shr.s32 %rv27_0, ..., 5"; fi
lacks "no division left in the loop for k / 32" out "div.s32 %rv27_0"
# the barrier planned before the activations' staging waits after their
# global load: in the loop, the 16-byte load of A comes before both barriers
entry q8_matvec_split__v1 | awk '/^\$Lfor[0-9]*:/ { f = 1 } f { print } f && /^\$Lend[0-9]*:/ { exit }' | grep -E 'ld.global.v4.b32|bar.sync' | tr -s ' ' > "$tmp/order"
if [ "$(grep -c ld.global.v4.b32 "$tmp/order")" -ge 4 ] && ! sed -n '/bar.sync/,$p' "$tmp/order" | grep -q ld.global.v4.b32; then
  ok "staging barrier placed after the staged load's global reads"
else
  not_ok "staging barrier placed after the staged load's global reads" "$(cat "$tmp/order")"
fi
# programmatic dependent launch: every sm_90a entry waits for the kernel before it
has "sm_90a entries wait for the previous grid" out "griddepcontrol.wait;"
has "sm_90a entries release their dependents" out "griddepcontrol.launch_dependents;"
# GQA: dots on the tensor cores with the accumulators, scores and softmax
# rows in the mma fragment layout, K and V staged by cp.async (without
# tensor copies: the default's are tested below)
gqa="$PROJECT_ROOT/spec/conformance/gqa_packed.ph"
run "--emit=ptx gqa NQ 7 D 128" 0 --emit=ptx --no-tensor-copies -D NQ=7 -D D=128 "$gqa"
has "gqa: dots on the tensor cores" out "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
has "gqa: operands through ldmatrix" out "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
has "gqa: dot's [K, N] b transposed by ldmatrix" out "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"
has "gqa: the fragment layout's thread base" out "shl.b32 %fwg_, %fwg_, 4;"
has "gqa: row reductions by quad shuffles" out "shfl.sync.bfly.b32"
has "gqa: P feeds the second mma from registers" out "cvt.rn.bf16x2.f32"
has "gqa: K and V staged by cp.async" out "cp.async.cg.shared.global"
has "gqa: copies waited for before the barrier" out "cp.async.wait_group 0;"
has "gqa: exp without the subnormal rescaling" out "ex2.approx.ftz.f32"
# the softmax needs no exchange area: rowmax and rowsum leave no reduction loop
lacks "gqa: no exchange-area row reduction" out "\$Lred"
run "--emit=ptx gqa --no-tma" 0 --emit=ptx --no-tma -D NQ=7 -D D=128 "$gqa"
lacks "gqa --no-tma: no cp.async staging" out "cp.async"
run "--emit=ptx gqa NQ 1 D 64" 0 --emit=ptx -D NQ=1 -D D=64 "$gqa"
has "gqa NQ 1: still on the tensor cores" out "mma.sync.aligned.m16n8k16"
lacks "gqa NQ 1: one row tile for eight warps takes the flat layout" out "%fwg_"
run "--emit=ptx gqa NQ 7 sm_80" 0 --emit=ptx --arch=sm_80 -D NQ=7 -D D=64 "$gqa"
has "gqa sm_80: tensor cores too" out "mma.sync.aligned.m16n8k16"
# a staged tile copied by cp.async inside an if is waited for at the end of
# that branch (a barrier in the other branch would not wait for it)
run "--emit=ptx if_stage" 0 --emit=ptx "$PROJECT_ROOT/spec/conformance/stmts.ph"
entry if_stage__v0 | grep -E 'cp.async|bra.uni \$Lfi|Lelse[0-9]+:|bar.sync' | tr -s ' ' > "$tmp/order"
if [ "$(sed -n '/commit_group/,/bra.uni/p' "$tmp/order" | grep -c 'cp.async.wait_group 0;')" = 1 ]; then
  ok "cp.async inside an if is waited for before the branch ends"
else
  not_ok "cp.async inside an if is waited for before the branch ends" "$(cat "$tmp/order")"
fi
# backend hazards (spec/conformance/hazards.ph): a staged operand keeps a
# dot's class out of the fragment layout; point writes into a staged var wait
# for its copies; a tensor the kernel stores to is not staged by cp.async
run "--emit=ptx hazards" 0 --emit=ptx --no-tensor-copies "$PROJECT_ROOT/spec/conformance/hazards.ph"
if ! entry frag_plus_staged__v0 | grep -q '%fwg_'; then ok "hazards: a staged addend keeps the dot's class flat"; else not_ok "hazards: a staged addend keeps the dot's class flat"; fi
if [ "$(entry point_writes_staged__v0 | sed -n '/^\$Lsd0:/,$p' | grep -m1 -E 'st.shared|cp.async.wait_group' | tr -s ' ')" = " cp.async.wait_group 0;" ]; then
  ok "hazards: point writes into a staged var wait for its copies"
else
  not_ok "hazards: point writes into a staged var wait for its copies"
fi
if ! entry stage_then_store__v0 | grep -v bulk.prefetch | grep -q cp.async &&
   ! entry store_then_stage__v0 | grep -v bulk.prefetch | grep -q cp.async; then
  ok "hazards: no cp.async staging of a tensor the kernel stores to"
else
  not_ok "hazards: no cp.async staging of a tensor the kernel stores to"
fi
# a 16-bit dot the tensor cores cannot take says why in the plan
run "--emit=plan dot.ph" 0 --emit=plan "$PROJECT_ROOT/spec/conformance/dot.ph"
has "plan: a dot's FMA fallback and its reason" out "path: fma, not the tensor cores: K = 12 is not a multiple of 16"
# 8-bit integer dot_t on the tensor cores (m16n8k32 into i32); an 8-bit dot stays on FMA
has "plan: i8 dot_t on the tensor cores" out "i32  [32, 16] phys [32, 16] reg mma16x8x16.acc warps=2 frags=2 mma.m16n8k32"
has "plan: an 8-bit dot_t's fallback names the 32" out "path: fma, not the tensor cores: K = 20 is not a multiple of 32"
has "plan: an i8 dot (not dot_t) on FMA" out "i32  [5, 16] phys [8, 16] masked reg flat chunk=1 regs=1 fma"
run "--emit=ptx dot.ph" 0 --emit=ptx "$PROJECT_ROOT/spec/conformance/dot.ph"
has "PTX: i8 x i8 dot_t on mma.m16n8k32" out "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"
has "PTX: u8 x i8 dot_t on mma.m16n8k32" out "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32"
run "--emit=plan-yaml dot.ph" 0 --emit=plan-yaml "$PROJECT_ROOT/spec/conformance/dot.ph"
has "plan-yaml: a dot's path" out "dot: fma, path: \"fma, not the tensor cores: K = 24 is not a multiple of 16\""
run "--emit=plan gqa" 0 --emit=plan "$gqa"
has "plan: gqa's scores on wgmma" out "mma16x8x16.acc warps=8 frags=8 wgmma.m64n64k16"
has "plan: gqa's P V on wgmma" out "mma16x8x16.acc warps=8 frags=16 wgmma.m64n128k16"
run "--emit=plan --no-wgmma gqa" 0 --emit=plan --no-wgmma "$gqa"
has "plan --no-wgmma: gqa's dots on mma.sync" out "mma16x8x16.acc warps=8 frags=8 mma.m16n8k16"
run "--emit=plan-yaml gqa" 0 --emit=plan-yaml "$gqa"
has "plan-yaml: a dot on wgmma" out "dot: wgmma.m64n128k16"
# on sm_90a the fragment dots on the tensor copies' swizzled tiles are wgmma;
# --no-wgmma keeps mma.sync
run "--emit=ptx gqa" 0 --emit=ptx "$gqa"
has "gqa prefill: the scores by wgmma, Q and K through descriptors" out "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"
has "gqa prefill: P V by wgmma, P from registers, V transposed" out "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
has "gqa prefill: the wgmma group waited for" out "wgmma.wait_group.sync.aligned 0;"
has "gqa prefill: acc * corr skipped where corr is 1 in the whole warp" out "vote.sync.all.pred"
# arrive (spec 9.5): release fences before the CTA's barrier, one atomic
# increment modulo n by thread 0, the result broadcast by bar.red
run "--emit=ptx arrive" 0 --emit=ptx "$PROJECT_ROOT/spec/conformance/arrive.ph"
has "arrive: the CTA's stores fenced at GPU scope" out "fence.acq_rel.gpu;"
has "arrive: thread 0 counts modulo n" out "atom.acq_rel.gpu.global.inc.u32"
has "arrive: the last CTA's flag broadcast by the barrier" out "bar.red.or.pred"
run "--emit=tir arrive" 0 --emit=tir "$PROJECT_ROOT/spec/conformance/arrive.ph"
has "arrive in the tile IR" out "= arrive Cnt["
# a row kernel in the blocked layout (spec 15.6): a thread's 16-byte chunk
# of each row (a warp's 32 chunks cover the row), the row max by shuffles
# within the warp, no shared memory and no barrier (long_rows.ph's last
# kernel, columns that are not contiguous, exchanges)
run "--emit=ptx long_rows" 0 --emit=ptx "$PROJECT_ROOT/spec/conformance/long_rows.ph"
has "blocked rows: vector loads at immediate offsets" out "ld.global.v4.b32 {%r"
has "blocked rows: vector stores" out "st.global.v4.b32 [%rd"
has "blocked rows: rowmax by shuffles" out "shfl.sync.bfly.b32"
run "--emit=plan long_rows" 0 --emit=plan "$PROJECT_ROOT/spec/conformance/long_rows.ph"
has "blocked rows: the plan's layout" out "reg blocked spt=1x4 tpw=1x32 wpc=1x1 reps=8"
has "blocked rows: no shared memory" out "shared total: 0 bytes (limit 49152)"
# a warp a row (spec 15.6): bf16 rows in 16-byte vectors, the weight vector
# in the columns layout, the row sums by shuffles, no shared memory at all
rn="$PROJECT_ROOT/spec/conformance/row_norm.ph"
run "--emit=plan row_norm BR=8" 0 --emit=plan -D BR=8 -D BN=256 "$rn"
has "row_norm: blocked, a warp a row" out "reg blocked spt=1x8 tpw=1x32 wpc=4x1 reps=2"
has "row_norm: the weight vector in the columns layout" out "reg columns of blocked spt=1x8"
has "row_norm: no shared memory" out "shared total: 0 bytes"
has "row_norm: no barrier" out "barriers: 0"
# (its cluster-rows copies meet through shared memory across CTAs: below)
run "--emit=ptx row_norm BR=8" 0 --emit=ptx --no-cluster-rows -D BR=8 -D BN=256 "$rn"
has "row_norm: 16-byte loads" out "ld.global.v4.b32"
has "row_norm: 16-byte stores" out "st.global.v4.b32"
has "row_norm: row sums by shuffles" out "shfl.sync.bfly.b32"
lacks "row_norm: no barrier in the PTX" out "bar.sync"
lacks "row_norm: no shared memory in the PTX" out ".shared"
# spec 15.16: a whole-row softmax's max and sum in one pass over strips, as a
# loop whose (m, l) stay within each thread (15.15) until its exit; a store
# between the max and the sum keeps them apart (no loop)
sr="$PROJECT_ROOT/spec/conformance/strip_rows.ph"
run "--emit=plan strip_rows NT=128" 0 --emit=plan -D NT=128 "$sr"
awk '/^plan /{k=$2} k=="lse_wide"' "$tmp/out" >"$tmp/lse_wide"
awk '/^plan /{k=$2} k=="lse_store_between"' "$tmp/out" >"$tmp/lse_store"
has "strip lse: the strips a loop, deferred" lse_wide "deferred at the exit of loop"
lacks "strip lse: not across a store" lse_store "deferred at the exit"
run "--emit=tir strip_rows NT=128" 0 --emit=tir -D NT=128 "$sr"
awk '/^kernel /{k=$2} k=="lse_wide"' "$tmp/out" >"$tmp/lse_wide"
has "strip lse: running max a variable" lse_wide "var strip_max : tile<f32>[1]"
has "strip lse: strips of 2048 columns (16 a thread)" lse_wide "%17 = const 2048 : i32"
# fma (spec 9.2): its type is a * b + c's (a float literal takes the tile's);
# fma.rn.f32 an element, and fma.rn.f64 on f64 (the other math functions refuse it)
cat >"$tmp/fma.ph" <<'EOF'
@launch(128)
kernel lit(H: tensor<bf16>[M, 64], Y: tensor<bf16>[M, 64]) {
  let r = ctx.block.x * 16
  var z = H[r :+ 16, :]
  z = fma(0.5, z, z)
  Y[r :+ 16, :] = fma(2, 0.5, z)
}
@launch(128)
kernel wide(X: tensor<f64>[M, 64], Y: tensor<f64>[M, 64]) {
  let r = ctx.block.x * 16
  let x = X[r :+ 16, :]
  Y[r :+ 16, :] = fma(x, x, 1.0)
}
EOF
run "fma: literal operands" 0 -Wnarrowing --emit=tir "$tmp/fma.ph"
has "fma: a literal takes the tile's type" out "= math fma %"
lacks "fma: bf16, not f32" out ": tile<f32>[16, 64]"
empty "fma: no narrowing to warn of" err
run "fma: PTX (f64 compiles)" 0 --emit=ptx "$tmp/fma.ph"
has "fma: fma.rn.f64" out "fma.rn.f64 %dv"
run "--emit=ptx fma.ph" 0 --emit=ptx "$PROJECT_ROOT/spec/conformance/fma.ph"
has "fma: one fma.rn.f32 an element" out "fma.rn.f32 %fv"
# spec 15.22: each row block a cluster of 4 or 8 CTAs, the loop over N split
# (CTA k starts at block k, steps of C blocks), the sums met through
# distributed shared memory, one more cluster barrier at the end
cr="$PROJECT_ROOT/spec/conformance/cluster_rows.ph"
run "--emit=ptx cluster_rows" 0 --emit=ptx -D BR=1 -D NT=64 "$cr"
has "cluster rows: a cluster of 8" out ".reqnctapercluster 8, 1, 1"
has "cluster rows: a cluster of 4" out ".reqnctapercluster 4, 1, 1"
has "cluster rows: entries" out ".entry softmax_rows__v0_cl4("
has "cluster rows: the block is the cluster's" out "mov.u32 %rv3_0, %clusterid.x;"
has "cluster rows: steps of 4 blocks" out "add.s32 %rv17_0, %rv17_0, 256;"
has "cluster rows: CTA k starts at block k" out "mad.lo.s32 %rv17_0, %clr_, 64, %rv14_0;"
lacks "shift walks: none by default" out "a shifted walk"
# spec 15.24 (--shift-walks): the odd-pitch entries' walks start at the
# row's alignment, -sh (and so the cluster's CTA k at block k less sh)
run "--emit=ptx cluster_rows --shift-walks" 0 --emit=ptx --shift-walks -D BR=1 -D NT=64 "$cr"
has "shift walks: from the row's alignment" out "neg.s32 %rt2, %rt0; // a shifted walk"
has "shift walks: CTA k starts at block k, shifted" out "mad.lo.s32 %rv17_0, %clr_, 64, %rt2;"
has "shift walks: phantom columns left out of the folds" out "bra \$Lswph"
has "cluster rows: the pairs read across the cluster" out "ld.shared::cluster.v2.f32"
has "cluster rows: published by a cluster barrier" out "barrier.cluster.wait.acquire.aligned;"
run "--emit=ptx cluster_rows --no-cluster-rows" 0 --emit=ptx --no-cluster-rows -D BR=1 -D NT=64 "$cr"
lacks "cluster rows: none with --no-cluster-rows" out "reqnctapercluster"
run "--emit=plan cluster_rows" 0 --emit=plan -D BR=1 -D NT=64 "$cr"
has "cluster rows: the plan names the copy" out "[BR=1, NT=64; clusters of 4 CTAs a row block]"
run "--emit=manifest cluster_rows" 0 --emit=manifest -D BR=1 -D NT=64 "$cr"
has "cluster rows: the manifest's cluster" out "cluster: 4"
has "cluster rows: rows of more than one block" out "dims_above: {N: 64}"
run "--emit=manifest cluster_rows in place" 0 --emit=manifest "$cr"
has "cluster rows: in place at the loops' own blocks" out "entry: softmax_inplace__v0_cl8"
lacks "cluster rows: no copy where a CTA reads another's block" out "entry: shift_inplace__v0_cl"
lacks "cluster rows: no copy of an atomic add after the loop" out "entry: atomic_loss__v0_cl"
lacks "cluster rows: no copy with a store before the split loop" out "entry: store_before__v0_cl"
lacks "cluster rows: no copy with write loops of two steps" out "entry: two_steps__v0_cl"
has "cluster rows: a read tensor kept apart where a row value is stored between the loops" out "    apart: [X]"
# spec 15.23: tile accumulators that only reductions after their loop read
# become row accumulators, whose updates the planner defers (spec 15.15);
# one also stored whole stays a tile; --no-deferred-reductions keeps them all
ta="$PROJECT_ROOT/spec/conformance/tile_acc.ph"
run "--emit=tir tile_acc" 0 --emit=tir "$ta"
has "tile accumulators: a sum from 1.0 is a row value" out "var s : tile<f32>[2, 1]"
has "tile accumulators: its start, the start's row sums" out "reduce sum %8 : tile<f32>[2, 1]"
has "tile accumulators: a max" out "var m : tile<f32>[2, 1]"
has "tile accumulators: an i32 sum" out "var si : tile<i32>[2, 1]"
has "tile accumulators: one stored whole stays a tile" out "var k : tile<f32>[2, 16]"
has "tile accumulators: the rank-1 statistics" out "var acc2 : tile<f32>[1]"
run "--emit=plan tile_acc" 0 --emit=plan "$ta"
has "tile accumulators: deferred" out "deferred at the exit of loop %26: max of %11"
has "tile accumulators: kept where the planner would not defer them" out "%6    var       i32  [2, 64] phys [2, 64] reg blocked"
lacks "tile accumulators: no row value reduced every iteration" out "%6    var       i32  [2, 1] phys [2, 1] reg flat"
run "--emit=tir tile_acc --no-deferred-reductions" 0 --emit=tir --no-deferred-reductions "$ta"
lacks "tile accumulators: kept with --no-deferred-reductions" out "var s : tile<f32>[2, 1]"
# a staged-rows copy (spec 15.14): X's rows copied once by bulk copies, an
# mbarrier a block; both passes read the copy (no global load of X's rows
# but the tail's), W from memory
run "--emit=plan row_norm staged" 0 --emit=plan --staged-rows -D BR=8 -D BN=256 "$rn"
has "staged rows: the copy's plan" out "plan row_norm [BR=8, BN=256; X rows staged]"
run "--emit=manifest row_norm staged" 0 --emit=manifest --staged-rows -D BR=8 -D BN=256 "$rn"
has "staged rows: the manifest entry" out "entry: row_norm__v0_staged"
has "staged rows: the manifest's rows" out "staged: {tensor: X, rows: 8, block: 256}"
run "--emit=ptx row_norm staged" 0 --emit=ptx --staged-rows --no-one-pass -D BR=8 -D BN=256 "$rn"
has "staged rows: bulk copies" out "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
has "staged rows: bytes expected a row" out "mbarrier.expect_tx.relaxed.cta.shared::cta.b64"
has "staged rows: 16-byte loads of the copy" out "ld.shared.v4.b32"
has "staged rows: odd pitches shifted from the copy" out "shf.r.clamp.b32"
run "--emit=manifest row_norm no staged" 0 --emit=manifest -D BR=8 -D BN=256 "$rn"
lacks "staged rows: no copy by default" out "_staged"
# a GEMM epilogue (spec 15.6, 15.12): the bias in the fragment's columns,
# broadcast by register moves (no exchange, one barrier: the ring's), the
# output by pair stores
de="$PROJECT_ROOT/spec/conformance/dot_epilogue.ph"
run "--emit=plan dot_epilogue" 0 --emit=plan -D BM=128 -D BN=128 -D BK=64 -D T=256 "$de"
has "dot_epilogue: the bias in the fragment's columns" out "reg columns of mma16x8x16.acc"
lacks "dot_epilogue: no exchange" out "exchange of"
run "--emit=ptx dot_epilogue" 0 --emit=ptx -D BM=128 -D BN=128 -D BK=64 -D T=256 "$de"
has "dot_epilogue: f32 pairs stored as v2" out "st.global.v2.b32 [%rd"
has "dot_epilogue: bf16 pairs stored as words" out "st.global.b32 [%rd"
# an odd-pitch row store (spec 15.12): chunks realigned by shuffles
run "--emit=ptx rows_store" 0 --emit=ptx -D BR=8 -D BN=1024 "$PROJECT_ROOT/spec/conformance/rows_store.ph"
has "rows_store: the warp chooses the shuffle path" out "vote.sync.any.pred"
has "rows_store: chunks from the lane before" out "shfl.sync.idx.b32"
run "--emit=ptx --no-wgmma gqa" 0 --emit=ptx --no-wgmma "$gqa"
lacks "--no-wgmma: no wgmma" out "wgmma"
has "--no-wgmma: mma.sync" out "mma.sync.aligned.m16n8k16"
run "--emit=ptx --arch=sm_80 gqa" 0 --emit=ptx --arch=sm_80 "$gqa"
lacks "sm_80: no wgmma" out "wgmma"
# decode: one-warp CTAs in the fragment layout, the merge on FMA
run "--emit=ptx gqa decode" 0 --emit=ptx "$PROJECT_ROOT/examples/gqa_attention/gqa_decode.ph"
has "gqa decode: split on the tensor cores" out "mma.sync.aligned.m16n8k16"
has "gqa decode: one warp in the fragment layout" out "%fwg_"
run "--emit=manifest split q8" 0 --emit=manifest "$split"
has "manifest: dependent launch allowed" out "dependent_launch: true"
run "--emit=ptx split q8 sm_80" 0 --emit=ptx --arch=sm_80 "$split"
lacks "sm_80: no griddepcontrol" out "griddepcontrol"
run "--emit=manifest split q8 sm_80" 0 --emit=manifest --arch=sm_80 "$split"
has "sm_80 manifest: no dependent launch" out "dependent_launch: false"
# --prefetch: a loop's register tiles loaded an iteration ahead
run "--emit=ptx --prefetch" 0 --emit=ptx --prefetch "$split"
has "--prefetch: the first iteration's tiles before the loop" out "\$Lpf"
has "--prefetch: the next iteration's inside it" out "\$Lpfk"
run "--emit=ptx without --prefetch" 0 --emit=ptx "$split"
lacks "no prefetch by default" out "\$Lpfk"
# TMA (the sm_90a default): staged loads by tensor copies, the pointer path beside them
ragged="$PROJECT_ROOT/spec/conformance/sgemm_ragged.ph"
run "--emit=ptx (tensor copies by default)" 0 --emit=ptx "$ragged"
has "tensor copies: tensor copies" out "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
has "tensor copies: the map is a 128-byte parameter" out ".param .align 64 .b8 tmap_param0[128]"
has "tensor copies: and whether the runtime built it" out "ld.param.u32 %tmok0, [tmok_param0];"
has "tensor copies: the map's generic address" out "cvta.param.u64 %tmap0, %tmap0;"
has "tensor copies: the destination 128-byte aligned" out ".shared .align 128 .b8 smem["
has "tensor copies: the pointer path kept" out "\$Ltmafb"
run "--emit=plan (tensor copies)" 0 --emit=plan "$ragged"
has "tensor copies: the plan names the path" out "path: tensor copy (TMA) through map 0"
run "--emit=manifest (tensor copies)" 0 --emit=manifest "$ragged"
has "tensor copies: the manifest describes the map" out "swizzle: none, fill: zero}"
run "--emit=ptx --no-tensor-copies" 0 --emit=ptx --no-tensor-copies "$ragged"
lacks "--no-tensor-copies: none" out "cp.async.bulk.tensor"
has "--no-tensor-copies: cp.async staging instead" out "cp.async.cg.shared.global"
run "--emit=ptx --arch=sm_80" 0 --emit=ptx --arch=sm_80 "$ragged"
lacks "sm_80: no tensor copies" out "cp.async.bulk.tensor"
gqa="$PROJECT_ROOT/spec/conformance/gqa_packed.ph"
for d in 64 128; do
  run "GQA D=$d" 0 --emit=ptx -D D=$d "$gqa"
  has "GQA D=$d: Q [BQ, 7, D] by one tensor copy through a rank-5 map" out "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
  # K and V stream through @pipeline's staged rings by tensor copies (a
  # rank-4 map, a stage ahead, one mbarrier a stage), swizzled
  has "GQA D=$d: K and V by tensor copies into ring stages" out "cp.async.bulk.tensor.4d"
  has "GQA D=$d: a stage waited for on its mbarrier's phase" out "mbarrier.try_wait.parity.shared::cta.b64"
  has "GQA D=$d: the ring's mbarriers go after the loop" out "mbarrier.inval.shared::cta.b64"
  has "GQA D=$d: the entry rounds its base for the swizzle" out "and.b32 %smem_, %smem_, -1024;"
  lacks "GQA D=$d: no cp.async chunks beside the copies" out "cp.async.cg.shared.global"
  # O [BQ, 7, D] goes out by one tensor store through the same split view, the slack clipped
  has "GQA D=$d: O by a tensor store" out "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group"
  has "GQA D=$d: the store's staging read before its bytes are freed" out "cp.async.bulk.wait_group.read 0;"
  has "GQA D=$d: the threads' writes fenced for the copy" out "fence.proxy.async.shared::cta;"
done
run "GQA manifest" 0 --emit=manifest -D NQ=7 -D D=128 "$gqa"
has "GQA manifest: the swizzled Q map, 64-column boxes" out "{param: Q, rank: 4, split: [2, 7], box: [1, 16, 1, 8, 64], dtype: bf16, swizzle: 128B, fill: zero}"
has "GQA manifest: O's store map, dense" out "{param: O, rank: 4, split: [2, 7], box: [1, 16, 1, 8, 128], dtype: bf16, swizzle: none, fill: zero}"
# a padded tile stored in a loop keeps the threads' stores (a tensor store's
# writes may land after the next iteration's)
printf '@grid(1)\nkernel st(X: tensor<f32>[S, 14, 64], Y: tensor<f32>[S, 14, 64], n: i32) {\n  let x = X[0 :+ 4, 0 :+ 7, :]\n  for i in range(0, n, 1) {\n    Y[i * 4 :+ 4, 0 :+ 7, :] = x\n  }\n}\n' > "$tmp/stl.ph"
run "a padded store in a loop" 0 --emit=plan "$tmp/stl.ph"
lacks "in a loop: no tensor store" out "tensor store (TMA)"
run "GQA plan" 0 --emit=plan --no-general-strides "$gqa"
has "GQA plan: HQ viewed as [HQ / 7, 7]" out "dim 2 viewed as [extent / 7, 7] so the slack lies past its end (zero-filled)"
if grep -E '^  #0 q ' "$tmp/out" | grep -q '+8 padstage'; then not_ok "GQA plan: TMA over @padstage for the copied Q tile" "$(grep -E '^  #0 q ' "$tmp/out")"; else ok "GQA plan: TMA over @padstage for the copied Q tile"; fi
has "GQA plan: K and V in staged rings by tensor copies" out "swizzled 128B (2 boxes a row) into a ring of 2 stages"
has "GQA plan: the swizzled buffers" out "swizzled 128B"
has "GQA plan: the ring's buffers" out "ring of 2 stages of"
# a copied tile rewritten every iteration and read only after the loop: the
# planner puts no barrier in the loop, so the copy brings one of its own
# (every thread past its wait before thread 0 arms the mbarrier again)
printf '@grid(cdiv(M, 16))\nkernel last(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 64], n: i32) {\n  let s0 = ctx.block.x * 16\n  var x: tile<f32>[16, 64] = 0.0\n  for i in range(0, n, 1) {\n    x = X[s0 + i :+ 16, :]\n  }\n  Y[s0 :+ 16, :] = x\n}\n' > "$tmp/last.ph"
run "a tensor copy rewritten in a loop" 0 --emit=ptx "$tmp/last.ph"
has "its own barrier before the mbarrier is armed again" out "bar.sync 0; // the last round of this copy's mbarrier is over"
# a kernel at the static shared-memory limit: tensor copies would need 1 KiB
# more (the swizzle's rounded base), so it is planned without them
printf '@launch(128)\n@grid(cdiv(M, 64), cdiv(N, 128))\nkernel lim(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {\n  let m0 = ctx.block.x * 64\n  let n0 = ctx.block.y * 128\n  var acc: tile<f32>[64, 128] = 0.0\n  for k in range(0, K, 128) {\n    acc += dot(A[m0 :+ 64, k :+ 128], B[k :+ 128, n0 :+ 128])\n  }\n  C[m0 :+ 64, n0 :+ 128] = acc\n}\n' > "$tmp/lim.ph"
run "a kernel at the shared-memory limit compiles" 0 --emit=ptx "$tmp/lim.ph"
lacks "at the limit: no tensor copies" out "cp.async.bulk.tensor"
# --prefetch leaves a loop alone when it stores to the tensor it loads ahead
printf '@grid(1)\nkernel scan(X: tensor<f32>[N, 64]) {\n  for i in range(0, N - 16, 16) {\n    let x = X[i :+ 16, :]\n    X[i + 16 :+ 16, :] = x + 1.0\n  }\n}\n' > "$tmp/scan.ph"
run "--prefetch over a loop that stores what it loads next" 0 --emit=ptx --prefetch "$tmp/scan.ph"
lacks "no prefetch across the store" out "\$Lpfk"
# acc += dot on wgmma accumulates in acc's registers, its wait deferred in the
# staged ring of tensor copies, and the GEMM's blocks go grouped (spec 15.5)
gemm="$PROJECT_ROOT/bench/gemm.ph"
run "--emit=plan gemm" 0 --emit=plan -D BM=128 -D BN=128 -D BK=64 "$gemm"
has "plan: the dot accumulates in the var, waited an iteration later" out "accumulates in %12's registers; waited for in the next iteration, after its groups are issued"
has "plan: acc's read and add folded" out "folded into the dot"
has "plan: the GEMM's blocks grouped" out "blocks: grouped 8 rows of block.y at a time"
run "--emit=ptx gemm" 0 --emit=ptx -D BM=128 -D BN=128 -D BK=64 "$gemm"
has "PTX: one wgmma group left running" out "wgmma.wait_group.sync.aligned 1;"
has "PTX: wgmma's D registers are acc's" out "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%fv12_0, "
# --late-waits (experimental): two wgmma dots issued one after the other, each
# waited for at its first use: the scores before the softmax with P V still
# running (wait_group 1), P V before acc is rescaled (spec 15.5); by default
# each is waited for at its issue
lw="$PROJECT_ROOT/spec/conformance/late_waits.ph"
run "--emit=plan --late-waits" 0 --emit=plan --late-waits -D D=128 -D BQ=128 -D BK=64 "$lw"
has "--late-waits: the scores waited for at their first use" out "waited for before %"
run "--emit=ptx --late-waits" 0 --emit=ptx --late-waits -D D=128 -D BQ=128 -D BK=64 "$lw"
has "--late-waits: P V left running under the softmax" out "wgmma.wait_group.sync.aligned 1;"
run "--emit=plan late waits by default" 0 --emit=plan -D D=128 -D BQ=128 -D BK=64 "$lw"
lacks "by default every group waited for at once" out "waited for before %"
run "--emit=ptx late waits by default" 0 --emit=ptx -D D=128 -D BQ=128 -D BK=64 "$lw"
lacks "by default no group left running" out "wgmma.wait_group.sync.aligned 1;"
# --warp-specialize: a copy with a producer warpgroup where its consumers
# keep at least 128 registers a thread (spec 15.20): at @launch(256) the
# GEMM gets one; at @launch(256, 2) the producer would leave them 96
gemm_ws="$PROJECT_ROOT/examples/gemm/gemm.ph"
run "--warp-specialize gemm" 0 --emit=ptx --warp-specialize -D BM=128 -D BN=128 -D BK=64 "$gemm_ws"
has "--warp-specialize: a producer copy at one CTA an SM" out ".entry gemm_bf16__v0_ws("
sed 's/^@launch(256)$/@launch(256, 2)/' "$gemm_ws" > "$tmp/gemm2.ph"
run "--warp-specialize gemm at two CTAs an SM" 0 --emit=ptx --warp-specialize -D BM=128 -D BN=128 -D BK=64 "$tmp/gemm2.ph"
lacks "--warp-specialize: no producer copy that leaves the consumers 96 registers" out "_ws("
# a transpose of a blocked tile goes through a padded shared tile: 16-byte
# loads and stores on both sides, no reload in transposed order (spec 15.4)
tr="$PROJECT_ROOT/bench/transpose.ph"
run "--emit=plan transpose 64 x 64" 0 --emit=plan -D BM=64 -D BN=64 "$tr"
has "plan: the transpose is blocked" out "transpose f32  [64, 64] phys [64, 64] reg blocked"
has "plan: its shared tile has rows of 65 words" out "exchange of %13          scratch              i32 [4160]"
run "--emit=ptx transpose 64 x 64" 0 --emit=ptx -D BM=64 -D BN=64 "$tr"
entry transpose__v0_al > "$tmp/tr_al"
sed -n '/bar.sync/,$p' "$tmp/tr_al" > "$tmp/tr_after"
if [ "$(grep -c 'bar.sync' "$tmp/tr_al")" -eq 1 ] && [ "$(grep -c 'st.shared.b32' "$tmp/tr_al")" -eq 16 ] &&
   [ "$(grep -c 'ld.shared.b32' "$tmp/tr_after")" -eq 16 ] && grep -q 'ld.global.v4.b32' "$tmp/tr_al" &&
   grep -q 'st.global.v4.b32' "$tmp/tr_after"; then
  ok "PTX: transpose by 16 shared words a thread each way around one barrier, 16-byte global accesses"
else
  not_ok "PTX: transpose by 16 shared words a thread each way around one barrier, 16-byte global accesses" \
    "$(grep -cE 'bar.sync|shared' "$tmp/tr_al")"
fi
lacks "PTX: no global reload after the barrier" tr_after "ld.global"
# 16-bit loads widen at their first use, not inside each path, so that the
# loads after them issue first (spec 15.12); f32 columns beside bf16 rows
# (V 8: 32 bytes a chunk) load as 16-byte vectors
rope="$PROJECT_ROOT/bench/rope.ph"
run "--emit=ptx rope BH 8" 0 --emit=ptx -D BH=8 "$rope"
entry rope__v0 > "$tmp/rope0"
first_unpack=$(grep -n 'shl.b32 %fv' "$tmp/rope0" | head -1 | cut -d: -f1)
last_x_load=$(grep -n 'ld.global.v[24].b32' "$tmp/rope0" | awk -F: -v u="$first_unpack" '$1 < u' | wc -l)
if [ -n "$first_unpack" ] && [ "$last_x_load" -ge 4 ]; then
  ok "PTX: both halves' and the tables' vector loads come before the first widening"
else
  not_ok "PTX: both halves' and the tables' vector loads come before the first widening" "first unpack at ${first_unpack:-none}, $last_x_load vector loads before it"
fi
# a widening f32(G[...]) takes its load's words over: G's words are unpacked
# after U's loads (bench/silu_mul.ph: let g = f32(G[...]) before let u = U[...])
run "--emit=ptx silu_mul" 0 --emit=ptx -D BM=1 -D BN=2048 "$PROJECT_ROOT/bench/silu_mul.ph"
entry silu_mul__v0 > "$tmp/silu"
g_cv=$("$PHOBOSC" --emit=tir -D BM=1 -D BN=2048 "$PROJECT_ROOT/bench/silu_mul.ph" 2>/dev/null |
  sed -n 's/^ *%\([0-9]*\) = convert %[0-9]* : tile<f32>.*/\1/p' | head -1) # G's widening
g_unpack=$(grep -n "shl.b32 %fv${g_cv:-none}_0," "$tmp/silu" | head -1 | cut -d: -f1)
u_end=$(grep -n '^\$Lbrowsend' "$tmp/silu" | sed -n 2p | cut -d: -f1)
if [ -n "$g_unpack" ] && [ -n "$u_end" ] && [ "$g_unpack" -gt "$u_end" ]; then
  ok "PTX: the widening of G unpacks after U's load"
else
  not_ok "PTX: the widening of G unpacks after U's load" "G's unpack at ${g_unpack:-none}, U's load ends at ${u_end:-none}"
fi
# (the vector plan: at BH 32 a warp spans rows, and the odd-rows plan of
# rope__v0 takes one element a chunk)
run "--emit=ptx rope BH 32" 0 --emit=ptx --vector-odd-rows -D BH=32 "$rope"
entry rope__v0 > "$tmp/rope32"
if [ "$(grep -cE 'ld.global.v4.b32 \{[^}]*\}, \[%rdt[0-9]+\+16\]' "$tmp/rope32")" -ge 2 ]; then
  ok "PTX: a 32-byte chunk of an f32 table loads as two 16-byte vectors"
else
  not_ok "PTX: a 32-byte chunk of an f32 table loads as two 16-byte vectors" "$(grep -c 'ld.global' "$tmp/rope32") global loads"
fi
# an add under an `if` must not become the dot's unconditional accumulation
printf '@launch(256)\n@pipeline(3)\n@dynshared\n@grid(cdiv(N, 128), cdiv(M, 128))\nkernel g(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N], t: i32) {\n  let m0 = ctx.block.y * 128\n  let n0 = ctx.block.x * 128\n  var acc: tile<f32>[128, 128] = 0.0\n  for k0 in range(0, K, 64) {\n    let d = dot(A[m0 :+ 128, k0 :+ 64], B[k0 :+ 64, n0 :+ 128])\n    if k0 < t {\n      acc = acc + d\n    }\n  }\n  C[m0 :+ 128, n0 :+ 128] = acc\n}\n' > "$tmp/ifacc.ph"
run "--emit=plan conditional accumulation" 0 --emit=plan "$tmp/ifacc.ph"
lacks "plan: an add under an if is not folded into the dot" out "accumulates in"
run "--emit=ptx conditional accumulation" 0 --emit=ptx "$tmp/ifacc.ph"
has "PTX: the conditional add's dot is waited for at once" out "wgmma.wait_group.sync.aligned 0;"
lacks "PTX: the conditional add's dot leaves no group running" out "wgmma.wait_group.sync.aligned 1;"
# @no_tma: the per-kernel --no-tma (the same kernel without it takes the copies)
grep -v '^@no_tma$' "$PROJECT_ROOT/tests/golden/plan/no_tma_pipeline.ph" > "$tmp/with_tma.ph"
run "without @no_tma" 0 --emit=plan "$tmp/with_tma.ph"
has "without @no_tma: a ring" out "path: bulk copies into ring"
has "without @no_tma: a tensor copy" out "path: tensor copy (TMA)"
run "@no_tma PTX" 0 --emit=ptx "$PROJECT_ROOT/tests/golden/plan/no_tma_pipeline.ph"
lacks "@no_tma: no bulk or tensor copies" out "cp.async.bulk"
run "--emit=ptx --no-tma" 0 --emit=ptx --no-tma "$ragged"
lacks "--no-tma wins" out "cp.async.bulk.tensor"
# @pipeline: rings filled by bulk copies on sm_90a, nothing of it on sm_80
pipe="$PROJECT_ROOT/spec/conformance/pipeline.ph"
run "--emit=ptx @pipeline" 0 --emit=ptx "$pipe"
has "pipeline: bulk copies" out "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
has "pipeline: parity waits" out "mbarrier.try_wait.parity.shared::cta.b64"
has "pipeline: expect-tx" out "mbarrier.arrive.expect_tx.shared::cta.b64"
has "pipeline: mbarriers invalidated at loop exit" out "mbarrier.inval.shared::cta.b64"
lacks "pipeline: no producer warp by default" out "%plane_"
run "--emit=ptx @pipeline --producer-warp" 0 --emit=ptx --producer-warp "$pipe"
has "producer warp: 64 + 32 threads" out ".maxntid 96, 1, 1"
has "producer warp: consumers release stages" out "mbarrier.arrive.shared::cta.b64"
has "producer warp: the kernel's barriers leave it out" out "bar.sync 1, 128;"
has "producer warp: the loop inside an if keeps warp 0 issuing" out "mbarrier.inval.shared::cta.b64"
run "--emit=plan @pipeline" 0 --emit=plan "$pipe"
has "plan: the ring" out "pipeline ring"
has "plan: the load's path" out "path: bulk copies into ring"
run "--emit=ptx @pipeline sm_80" 0 --emit=ptx --arch=sm_80 "$pipe"
lacks "pipeline on sm_80: no bulk copies" out "cp.async.bulk"
run "--no-tma" 0 --emit=ptx --no-tma "$pipe"
lacks "--no-tma: no bulk copies" out "cp.async.bulk"
run "--no-tma plan" 0 --emit=plan --no-tma "$pipe"
has "--no-tma: the plan says why" out "path: plain loads: --no-tma"
lacks "--no-tma: no ring in the plan" out "pipeline ring"
run "--emit=cubin needs -o" 2 --emit=cubin "$q8"
has "cubin usage message" err "a cubin needs an output file"
printf '@grid(1)\nkernel big(A: tensor<f32>[1024, 1024]) {\n  A[0 :+ 1024, 0 :+ 1024] = A[0 :+ 1024, 0 :+ 1024] * 2.0\n}\n' > "$tmp/big.ph"
run "tile too big for registers" 1 --emit=ptx --diagnostics=plain "$tmp/big.ph"
has "backend limit named" err "a register tile of 1048576 elements is 4096 per thread with 256 threads (at most 1024)"
if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  run "-o FILE.cubin" 0 -v -o "$tmp/q8.cubin" "$q8"
  if [ "$(head -c 4 "$tmp/q8.cubin" | od -An -c | tr -d ' ')" = "177ELF" ]; then ok "cubin is an ELF"; else not_ok "cubin is an ELF"; fi
  if grep -q "entry: q8_matvec__v0" "$tmp/q8.yaml"; then ok "manifest beside the cubin"; else not_ok "manifest beside the cubin"; fi
  if [ ! -e "$tmp/q8.ptx" ]; then ok "no stray .ptx after success"; else not_ok "no stray .ptx after success"; fi
  has "-v reports ptxas" err "phobosc: ptxas:"
  has "-v reports registers" err "registers"
  PHOBOS_PTXAS=/bin/false "$PHOBOSC" -o "$tmp/f.cubin" "$q8" >"$tmp/out" 2>"$tmp/err"
  if [ $? -eq 1 ]; then ok "failing ptxas: exit 1"; else not_ok "failing ptxas: exit 1"; fi
  has "failing ptxas reported" err "phobosc: error: ptxas failed (exit 1)"
  has "repro command printed" err "reproduce with:"
  if [ -s "$tmp/f.ptx" ]; then ok "the PTX is kept after a ptxas failure"; else not_ok "the PTX is kept after a ptxas failure"; fi
  PHOBOS_PTXAS=/nonexistent/ptxas "$PHOBOSC" -o "$tmp/g.cubin" "$q8" >"$tmp/out" 2>"$tmp/err"
  has "missing ptxas reported" err "cannot run /nonexistent/ptxas"
  run "@pipeline assembles (bulk copies, mbarriers)" 0 -o "$tmp/pipe.cubin" "$pipe"
  run "@pipeline with a producer warp assembles" 0 --producer-warp -o "$tmp/pipew.cubin" "$pipe"
  run "split q8 assembles" 0 -o "$tmp/split.cubin" "$split"
  run "split q8 with --prefetch assembles" 0 --prefetch -o "$tmp/splitpf.cubin" "$split"
  run "tensor copies assemble (mbarriers)" 0 -o "$tmp/ragged.cubin" "$ragged"
  run "flash attention assembles" 0 -o "$tmp/fa.cubin" "$PROJECT_ROOT/spec/conformance/flash_attention.ph"
  run "GQA (swizzled copies, staged rings) assembles" 0 -o "$tmp/gqa.cubin" "$gqa"
  run "split q8 for sm_80 assembles" 0 --arch=sm_80 -o "$tmp/split80.cubin" "$split"
else
  echo "# ptxas not found: cubin tests skipped"
fi

printf 'kernel k() {\n  let a = nope\n}\n' > "$tmp/bad.ph"
run "source error" 1 --emit=ast -o "$tmp/bad.ast" "$tmp/bad.ph"
has "located error" err "bad.ph:2:11: error: use of undeclared name 'nope'"
has "caret line" err "  let a = nope"
has "caret" err "^~~~"
if [ ! -e "$tmp/bad.ast" ]; then ok "failed run leaves no output file"; else not_ok "failed run leaves no output file"; fi
run "plain diagnostics" 1 --diagnostics=plain "$tmp/bad.ph"
if [ "$(wc -l < "$tmp/err")" -eq 1 ]; then ok "plain mode is one line"; else not_ok "plain mode is one line" "$(cat "$tmp/err")"; fi

: > "$tmp/many.ph"
{ echo "kernel k() {"; for i in $(seq 1 30); do echo "  let a$i = nope"; done; echo "}"; } > "$tmp/many.ph"
run "many errors" 1 --diagnostics=plain "$tmp/many.ph"
if [ "$(grep -c ': error: ' "$tmp/err")" -eq 20 ]; then ok "stops after 20 errors"; else not_ok "stops after 20 errors"; fi
has "says it stopped" err "stopping after 20 errors"
run "--max-errors=3" 1 --diagnostics=plain --max-errors=3 "$tmp/many.ph"
if [ "$(grep -c ': error: ' "$tmp/err")" -eq 3 ]; then ok "--max-errors=3 honoured"; else not_ok "--max-errors=3 honoured"; fi

printf '@weird\nkernel k() {}\n' > "$tmp/warn.ph"
run "warning only exits 0" 0 "$tmp/warn.ph"
has "warning printed" err "warning: unknown attribute '@weird' is ignored"

# Resource bounds (spec 13.3, issue 17). Large inputs are generated here.
# runt NAME EXPECTED_STATUS ARGS...: run, with a generous time limit where
# the old compiler ran for minutes or hours (exit 124: out of time)
runt() {
  local name=$1 want=$2
  shift 2
  timeout 20 "$PHOBOSC" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then ok "$name (exit $want)"; else not_ok "$name" "exit $got, want $want" "$(head -c 400 "$tmp/err")"; fi
}

# 40 nested loops, each with shared-memory traffic (a transpose's scratch):
# the barrier walk went over a loop's body twice, so 2^40 times
{
  echo "kernel k(C: tensor<f32>[M, N]) {"
  echo "  var acc: tile<f32>[16, 16] = 0.0"
  for i in $(seq 1 40); do echo "  acc += transpose(acc)"; echo "  for i$i in range(0, 2) {"; done
  echo "  acc += transpose(acc)"
  for i in $(seq 1 40); do echo "  }"; done
  echo "  C[0 :+ 16, 0 :+ 16] = acc"
  echo "}"
} > "$tmp/loops40.ph"
runt "40 nested loops plan in time" 0 --emit=plan "$tmp/loops40.ph"
has "40 nested loops: the barriers planned" out "is written and read back"

# 20,000 statements with shared-memory traffic: each pass of the planner
# scanned the whole kernel (or every access, barrier or buffer) for each
# instruction, and the backend asked for each load whether the kernel
# stores to its tensor: 45 and 56 s
{
  echo "kernel k(C: tensor<f32>[M, N]) {"
  echo "  var acc: tile<f32>[16, 16] = 0.0"
  for i in $(seq 1 20000); do echo "  acc += transpose(acc)"; done
  echo "  C[0 :+ 16, 0 :+ 16] = acc"
  echo "}"
} > "$tmp/transposes.ph"
runt "20,000 transposes plan in time" 0 --emit=plan "$tmp/transposes.ph"
has "20,000 transposes: the last one's barrier" out "within %100000: exchange of %100000 is written and read back"
{
  echo "kernel k(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f32>[M, N]) {"
  echo "  var acc: tile<f32>[16, 16] = 0.0"
  echo "  var s = A[0 :+ 16, 0 :+ 16]"
  for i in $(seq 1 5000); do
    echo "  acc += dot(s, B[0 :+ 16, 0 :+ 16])"
    echo "  s = A[$((i % 4)) * 16 :+ 16, 0 :+ 16]"
    echo "  acc += transpose(acc)"
    echo "  acc += f32(s)"
  done
  echo "  C[0 :+ 16, 0 :+ 16] = acc"
  echo "}"
} > "$tmp/staged.ph"
runt "20,000 statements on a staged var plan in time" 0 --emit=plan "$tmp/staged.ph"
has "the staged var's reads and writes ordered" out "is read after other threads wrote it"

# 50,000 kernels: their names were compared pairwise (12 s), now hashed
for i in $(seq 1 50000); do echo "kernel k$i() {}"; done > "$tmp/kernels.ph"
timeout 10 "$PHOBOSC" "$tmp/kernels.ph" >"$tmp/out" 2>"$tmp/err"
st=$?
if [ $st -eq 0 ]; then ok "50,000 kernels check in time"; else not_ok "50,000 kernels check in time" "exit $st"; fi
{ for i in $(seq 1 50000); do echo "kernel k$i() {}"; done; echo "kernel k7() {}"; } > "$tmp/kernels2.ph"
run "a kernel defined twice among 50,000" 1 --diagnostics=plain "$tmp/kernels2.ph"
has "defined twice, located" err "kernels2.ph:50001:8: error: kernel 'k7' is defined twice"
has "first definition noted" err "kernels2.ph:7:8: note: first defined here"

# Nesting (spec 13.3): up to the bounds it compiles; past them, a located
# error with exit 1. A sum of 40,000 terms overflowed the stack (a crash);
# 10,000 parentheses, 1000 nested loops and long else-if chains filled
# bison's stack ("memory exhausted", exit 4).
terms() { printf " $1%.0s" $(seq 1 "$2"); } # terms '+ x' N: N times ' + x'
{ echo "kernel k(A: tensor<f32>[N]) {"; echo "  let x = 1.0"; printf '  A[0] = x'; terms '+ x' 39999; printf '\n}\n'; } > "$tmp/sum40k.ph"
runt "a sum of 40,000 terms compiles" 0 --emit=ptx "$tmp/sum40k.ph"
{ echo "kernel k(A: tensor<f32>[N]) {"; echo "  let x = 1.0"; printf '  A[0] = x'; terms '+ x' 100000; printf '\n}\n'; } > "$tmp/sum100k.ph"
runt "100,000 levels of one expression compile" 0 "$tmp/sum100k.ph"
{ echo "kernel k(A: tensor<f32>[N]) {"; echo "  let x = 1.0"; printf '  A[0] = x'; terms '+ x' 100001; printf '\n}\n'; } > "$tmp/sum100k1.ph"
runt "100,001 levels: an error" 1 "$tmp/sum100k1.ph"
has "expression too deep, located at its start" err "sum100k1.ph:3:10: error: expression nested too deeply (100001 levels; the limit is 100000)"
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; terms '-' 100001 | tr -d ' '; printf '1.0\n}\n'; } > "$tmp/neg100k.ph"
runt "100,001 prefix minus: an error" 1 --diagnostics=plain "$tmp/neg100k.ph"
has "prefix chain too deep" err "neg100k.ph:2:10: error: expression nested too deeply (100001 levels; the limit is 100000)"
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; terms '-' 200000 | tr -d ' '; printf '1.0\n}\n'; } > "$tmp/neg200k.ph"
runt "200,000 prefix minus fill the parser's stack: an error" 1 --diagnostics=plain "$tmp/neg200k.ph"
has "parser stack full, located" err "neg200k.ph:2:"
has "parser stack full message" err "error: nested too deeply for the parser (its stack holds"
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; terms '(' 256 | tr -d ' '; printf '1.0'; terms ')' 256 | tr -d ' '; printf '\n}\n'; } > "$tmp/paren256.ph"
runt "256 nested parentheses compile" 0 "$tmp/paren256.ph"
{ echo "kernel k(A: tensor<f32>[N]) {"; printf '  A[0] = '; terms '(' 10000 | tr -d ' '; printf '1.0'; terms ')' 10000 | tr -d ' '; printf '\n}\n'; } > "$tmp/paren10k.ph"
runt "10,000 nested parentheses: an error, not an internal one" 1 --diagnostics=plain "$tmp/paren10k.ph"
has "the 257th bracket, located" err "paren10k.ph:2:266: error: brackets nested too deeply (257 levels; the limit is 256)"
if [ "$(wc -l < "$tmp/err")" -eq 1 ]; then ok "one error for too deep brackets"; else not_ok "one error for too deep brackets" "$(head -c 400 "$tmp/err")"; fi
nested_loops() { # nested_loops N
  echo "kernel k(A: tensor<f32>[N]) {"
  for i in $(seq 1 "$1"); do echo "for i$i in range(0, 2) {"; done
  echo "A[0] = 1.0"
  for i in $(seq 1 "$1"); do echo "}"; done
  echo "}"
}
nested_loops 255 > "$tmp/loops255.ph"
runt "255 nested loops (256 blocks) compile" 0 --emit=ptx "$tmp/loops255.ph"
nested_loops 1000 > "$tmp/loops1000.ph"
runt "1000 nested loops: an error, not an internal one" 1 --diagnostics=plain "$tmp/loops1000.ph"
has "the 257th block, located" err "loops1000.ph:257:25: error: blocks nested too deeply (257 levels; the limit is 256)"
else_ifs() { # else_ifs N: an if and N - 1 else-ifs
  echo "kernel k(A: tensor<f32>[N]) {"
  echo "  let x = 1"
  printf '  if x == 0 { A[0] = 0.0 }'
  for i in $(seq 1 $(($1 - 1))); do printf ' else if x == %d { A[0] = 1.0 }' "$i"; done
  printf '\n}\n'
}
else_ifs 1024 > "$tmp/elif1024.ph"
runt "an if-else chain of 1024 compiles" 0 "$tmp/elif1024.ph"
else_ifs 10000 > "$tmp/elif10k.ph"
runt "an if-else chain of 10,000: an error, not an internal one" 1 --diagnostics=plain "$tmp/elif10k.ph"
has "statements too deep, located" err "elif10k.ph:3:3: error: statements nested too deeply (10000 levels; the limit is 1024)"

# Sema in linear time: names looked up in a hash table (each let looked up
# every name in scope: 50,000 lets took a minute), constants folded once
# per node (a sum of literals evaluated every partial sum again: 30,000
# terms took over a minute)
{ echo "kernel k(A: tensor<i32>[N]) {"; for i in $(seq 1 50000); do echo "  let a$i = $i"; done; echo "  A[0] = a50000"; echo "}"; } > "$tmp/lets50k.ph"
runt "50,000 lets check in time" 0 "$tmp/lets50k.ph"
{ echo "kernel k(A: tensor<i32>[N]) {"; printf '  A[0] = 1'; terms '+ 1' 29999; printf '\n}\n'; } > "$tmp/isum30k.ph"
runt "a sum of 30,000 integer literals checks in time" 0 "$tmp/isum30k.ph"
{ echo "kernel k(A: tensor<i32>[N]) {"; printf '  A[0 :+ 1'; terms '+ 1' 29999; printf '] = iota(30000)[0 :+ 30000]\n}\n'; } > "$tmp/ilen30k.ph"
runt "a slice length of 30,000 folded terms checks in time" 0 --emit=tir "$tmp/ilen30k.ph"
has "the folded length" out ":+ 30000]"

# Carets on long lines (spec 13.1): a window of 160 bytes around the caret,
# with "..." where the line is cut; the whole line was printed (1 MB here)
{ echo "kernel k() {"; printf '  '; printf 'let a%d = 1; ' $(seq 1 60000); echo "let z = nope"; echo "}"; } > "$tmp/longline.ph"
run "an error at the end of a 1 MB line" 1 "$tmp/longline.ph"
has "long line: located" err "longline.ph:2:"
has "long line: cut before the caret" err "    2 | ..."
has "long line: the text around the caret" err "let a60000 = 1; let z = nope"
has "long line: the caret" err "^~~~"
if [ "$(wc -c < "$tmp/err")" -lt 600 ]; then ok "long line: the caret's window, not the line"; else not_ok "long line: the caret's window, not the line" "$(wc -c < "$tmp/err") bytes"; fi
{ echo "kernel k() {"; printf '  let z = nope; '; printf 'let a%d = 1; ' $(seq 1 60000); echo; echo "}"; } > "$tmp/longline2.ph"
run "an error at the start of a 1 MB line" 1 "$tmp/longline2.ph"
has "long line: cut after the window" err "    2 |   let z = nope; let a1 = 1; let a2 = 1;"
has "long line: '...' where it is cut" err "let a12 = ..."
if [ "$(wc -c < "$tmp/err")" -lt 600 ]; then ok "long line (start): the window only"; else not_ok "long line (start): the window only" "$(wc -c < "$tmp/err") bytes"; fi
# a warning on each of 100,000 lines: each found its source line from the
# start of the file (minutes); now from the line shown before
{ for i in $(seq 1 100000); do echo "@w$i"; done; echo "kernel k() {}"; } > "$tmp/warnings.ph"
runt "100,000 warnings with carets in time" 0 "$tmp/warnings.ph"
has "the last warning's line" err "100000 | @w100000"

# The input (spec 13.2, 13.3): at most 1 MiB, a regular file or '-'. A FIFO
# hung (open waited for a writer), /dev/zero was read until memory ran out.
truncate -s 20M "$tmp/big20m.ph"
runt "a 20 MB file: refused" 1 "$tmp/big20m.ph"
has "a 20 MB file: the limit said" err "cannot read '$tmp/big20m.ph': it is 20971520 bytes; phobosc reads at most 1048576 (1 MiB)"
head -c 1048576 /dev/zero | tr '\0' ' ' > "$tmp/mib.ph"
runt "a file of exactly 1 MiB is read" 0 "$tmp/mib.ph"
runt "1 MiB and one byte on standard input: refused" 1 - < <(cat "$tmp/mib.ph"; echo)
has "standard input over the limit" err "cannot read '-': standard input holds more than 1048576 bytes; phobosc reads at most 1048576 (1 MiB)"
runt "/dev/zero on standard input: refused, not read forever" 1 - < /dev/zero
mkfifo "$tmp/fifo.ph"
runt "a FIFO: refused, not waited on" 1 "$tmp/fifo.ph"
has "a FIFO named" err "cannot read '$tmp/fifo.ph': it is a FIFO, not a regular file (use '-' to read standard input)"
runt "/dev/zero: refused" 1 /dev/zero
has "/dev/zero named" err "cannot read '/dev/zero': it is a character device, not a regular file"
runt "a directory: refused" 1 "$tmp"
has "a directory named" err "it is a directory, not a regular file"

# Parameters (spec 13.3): at most 144 launch values (a tensor 1 + rank, a
# scalar 1), what libphobos passes beside 8 tensor maps, so at most 144
# parameters; 1000 tensors were accepted, and the runtime or ptxas refused
# them later
params() { # params NTENSORS5 NSCALARS: rank-5 tensors T1.., then f32 scalars s1..
  printf 'kernel k('
  for i in $(seq 1 "$1"); do printf 'T%d: tensor<f32>[A, B, C, D, E], ' "$i"; done
  for i in $(seq 1 "$2"); do printf 's%d: f32, ' "$i"; done
  printf 'Z: tensor<f32>[N]) {\n  Z[0] = 1.0\n}\n'
}
params 0 999 > "$tmp/params1000.ph"
run "1000 parameters: an error" 1 --diagnostics=plain "$tmp/params1000.ph"
has "the 145th parameter, located" err "params1000.ph:1:1486: error: kernel 'k' has 1000 parameters; the limit is 144"
params 15 48 > "$tmp/params64.ph"
run "64 parameters: accepted" 0 --emit=manifest "$tmp/params64.ph"
params 0 99 > "$tmp/params100.ph"
run "100 parameters: accepted" 0 --emit=manifest "$tmp/params100.ph"
params 16 46 > "$tmp/slots144.ph"
run "144 launch values: accepted" 0 --emit=manifest "$tmp/slots144.ph"
params 23 5 > "$tmp/slots145.ph"
run "145 launch values: an error" 1 --diagnostics=plain "$tmp/slots145.ph"
has "the parameter past 144 values, located" err "error: kernel 'k' passes more than 144 values at launch: at parameter 'Z' its parameters take 145"
if command -v ptxas >/dev/null || [ -x /usr/local/cuda/bin/ptxas ]; then
  run "64 parameters: ptxas takes them" 0 -o "$tmp/params64.cubin" "$tmp/params64.ph"
  run "100 parameters: ptxas takes them" 0 -o "$tmp/params100.cubin" "$tmp/params100.ph"
  run "144 launch values: ptxas takes them" 0 -o "$tmp/slots144.cubin" "$tmp/slots144.ph"
fi

# What ptxas wrote must be a cubin before a manifest says so (an ELF64,
# little-endian, machine EM_CUDA = 190); fake ptxas runs that exit 0
fake_ptxas() { # fake_ptxas NAME COMMAND: a ptxas that runs COMMAND with $out its -o file
  printf '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done\n%s\nexit 0\n' "$2" > "$tmp/$1"
  chmod +x "$tmp/$1"
}
fake_ptxas ptxas_none ':'
fake_ptxas ptxas_empty ': > "$out"'
fake_ptxas ptxas_text 'echo "not a cubin at all, but long enough to be read as a header of sixty-four bytes" > "$out"'
fake_ptxas ptxas_short 'printf "\\177ELF" > "$out"'
fake_ptxas ptxas_host "cp /bin/sh \"\$out\""
fake_ptxas ptxas_elf32 'head -c 64 /bin/sh | { printf "\\177ELF\\001"; tail -c 59; } > "$out"'
for f in none:"it cannot be opened: No such file or directory" empty:"it is empty" text:"it is not an ELF file" short:"it is 4 bytes, shorter than an ELF header" \
         host:"its ELF machine is" elf32:"it is not a 64-bit ELF file"; do
  name=${f%%:*} want=${f#*:}
  echo "stale" > "$tmp/fake.yaml"
  rm -f "$tmp/fake.cubin"
  PHOBOS_PTXAS="$tmp/ptxas_$name" "$PHOBOSC" -o "$tmp/fake.cubin" "$q8" >"$tmp/out" 2>"$tmp/err"
  st=$?
  if [ $st -eq 1 ]; then ok "ptxas writes no cubin ($name): exit 1"; else not_ok "ptxas writes no cubin ($name): exit 1" "exit $st"; fi
  has "ptxas writes no cubin ($name): said" err "phobosc: error: ptxas exited 0 but $tmp/fake.cubin is no cubin: $want"
  if [ "$(cat "$tmp/fake.yaml")" = stale ] && [ ! -e "$tmp/fake.cubin" ]; then ok "ptxas writes no cubin ($name): no manifest, no cubin"
  else not_ok "ptxas writes no cubin ($name): no manifest, no cubin"; fi
done
has "the PTX is kept to reproduce" err "reproduce with:"

# ptxas -v reports each entry's spills: a kernel every variant of which
# spills 64 bytes a thread or more is warned about (the autotuner has no
# variant that keeps its tiles in registers); one that spills a few words,
# or has a variant that does not spill, is not
printf '@autotune(B in [64, 128])\n@grid(cdiv(N, B))\nkernel spiller(A: tensor<f32>[N]) {\n  A[ctx.block.x * B :+ B] = A[ctx.block.x * B :+ B] * 2.0\n}\n' > "$tmp/spiller.ph"
spill_ptxas() { # spill_ptxas NAME STORES0 STORES1: a ptxas that writes an EM_CUDA ELF header and a -v report
  fake_ptxas "$1" "printf '\\177ELF\\002\\001' > \"\$out\"; head -c 12 /dev/zero >> \"\$out\"; printf '\\276' >> \"\$out\"; head -c 45 /dev/zero >> \"\$out\"
for v in 0:$2 1:$3; do echo \"ptxas info    : Function properties for spiller__v\${v%%:*}\"; echo \"    0 bytes stack frame, \${v#*:} bytes spill stores, \${v#*:} bytes spill loads\"; done"
}
spill_ptxas ptxas_spill_all 400 96
spill_ptxas ptxas_spill_one 400 0
spill_ptxas ptxas_spill_few 4 4
PHOBOS_PTXAS="$tmp/ptxas_spill_all" "$PHOBOSC" --no-occupancy-copies -o "$tmp/spill.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && [ -s "$tmp/spill.yaml" ]; then ok "spilling variants: still a cubin and a manifest, exit 0"
else not_ok "spilling variants: still a cubin and a manifest, exit 0" "$(cat "$tmp/err")"; fi
has "every variant spills: warned, naming the least spill" err "phobosc: warning: every variant of kernel 'spiller' spills registers to local memory (ptxas: spiller__v1 stores 96 bytes a thread and loads 96)"
PHOBOS_PTXAS="$tmp/ptxas_spill_one" "$PHOBOSC" --no-occupancy-copies -o "$tmp/spill.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
lacks "one variant keeps its registers: no warning" err "warning"
PHOBOS_PTXAS="$tmp/ptxas_spill_few" "$PHOBOSC" -o "$tmp/spill.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
lacks "4 bytes spilled: no warning" err "warning"
# an @autotune point ptxas refuses is left out (spec 12), with a note under
# -v, and the rest assembled again; a kernel none of whose points ptxas takes
# is the error it was
cat > "$tmp/ptxas_refuse_v1" <<'EOS'
#!/bin/sh
for a; do case $a in *.ptx) ptx=$a ;; esac; done
while [ $# -gt 0 ]; do [ "$1" = -o ] && out=$2; shift; done
n=$(grep -n "^.visible .entry $REFUSE(" "$ptx" | cut -d: -f1)
if [ -n "$n" ]; then echo "ptxas $ptx, line $((n + 3)); error   : a fake refusal"; exit 1; fi
printf '\177ELF\002\001' > "$out"; head -c 12 /dev/zero >> "$out"; printf '\276' >> "$out"; head -c 45 /dev/zero >> "$out"
EOS
chmod +x "$tmp/ptxas_refuse_v1"
REFUSE=spiller__v1 PHOBOS_PTXAS="$tmp/ptxas_refuse_v1" "$PHOBOSC" -v --no-occupancy-copies --no-general-strides -o "$tmp/refuse.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ]; then ok "a point ptxas refuses: left out, exit 0"; else not_ok "a point ptxas refuses: left out, exit 0" "$(cat "$tmp/err")"; fi
has "a point ptxas refuses: a note" err "phobosc: spiller [B=128] left out: ptxas refused its entry spiller__v1: "
has "a point ptxas refuses: its message" err "error   : a fake refusal"
if grep -q "entry: spiller__v0" "$tmp/refuse.yaml" && ! grep -q "entry: spiller__v1" "$tmp/refuse.yaml"; then ok "a point ptxas refuses: the manifest omits it"
else not_ok "a point ptxas refuses: the manifest omits it" "$(grep entry: "$tmp/refuse.yaml")"; fi
REFUSE=spiller__v0 PHOBOS_PTXAS="$tmp/ptxas_refuse_v1" "$PHOBOSC" --no-occupancy-copies --no-general-strides -o "$tmp/refuse.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ]; then ok "the first point refused: the second kept"; else not_ok "the first point refused: the second kept" "$(cat "$tmp/err")"; fi
printf '@grid(cdiv(N, 64))\nkernel lone(A: tensor<f32>[N]) {\n  A[ctx.block.x * 64 :+ 64] = A[ctx.block.x * 64 :+ 64] * 2.0\n}\n' > "$tmp/lone.ph"
REFUSE=lone__v0 PHOBOS_PTXAS="$tmp/ptxas_refuse_v1" "$PHOBOSC" --no-occupancy-copies --no-general-strides -o "$tmp/lone.cubin" "$tmp/lone.ph" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 1 ]; then ok "the only point refused: an error"; else not_ok "the only point refused: an error" "exit $?"; fi
has "the only point refused: ptxas's message" err "phobosc: error: ptxas failed (exit 1):"
# @pipeline degrades: rings that do not fit take fewer stages, then none (spec 11)
printf '@autotune(BM in [64], BN in [64], BK in [64])\n@launch(128)\n@pipeline(4)\n@grid(cdiv(N, BN), cdiv(M, BM))\nkernel g(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N]) {\n  var acc: tile<f32>[BM, BN] = 0.0\n  for k0 in range(0, K, BK) {\n    acc += dot(A[ctx.block.y * BM :+ BM, k0 :+ BK], B[k0 :+ BK, ctx.block.x * BN :+ BN])\n  }\n  C[ctx.block.y * BM :+ BM, ctx.block.x * BN :+ BN] = acc\n}\n' > "$tmp/pipe4.ph"
run "@pipeline(4) over 48 KB: planned with fewer stages" 0 --emit=plan "$tmp/pipe4.ph"
has "@pipeline(4): 3 stages, said" out "pipeline: 3 stages of @pipeline(4): more do not fit shared memory"
sed 's/BK in \[64\]/BK in [128]/' "$tmp/pipe4.ph" > "$tmp/pipe4b.ph"
run "@pipeline(4) whose 2 stages do not fit: no rings" 0 --emit=plan "$tmp/pipe4b.ph"
has "no rings, said" out "pipeline: no rings: @pipeline(4)'s do not fit shared memory even at 2 stages"
# a failing ptxas's messages come without the -v report's info lines
printf '#!/bin/sh\necho "ptxas info    : Function properties for spiller__v0"\necho "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"\necho "ptxas /x.ptx, line 7; error   : something is wrong"\nexit 1\n' > "$tmp/ptxas_fail_v"
chmod +x "$tmp/ptxas_fail_v"
PHOBOS_PTXAS="$tmp/ptxas_fail_v" "$PHOBOSC" -o "$tmp/spill.cubin" "$tmp/spiller.ph" >"$tmp/out" 2>"$tmp/err"
has "a failing ptxas's error shown" err "line 7; error   : something is wrong"
lacks "a failing ptxas's info lines left out" err "ptxas info"

# remat.c (spec 15.16): a value is not read again past a store (parameters may
# alias): X, stored to Y before the sum, is held, one load of X
printf '@launch(32)\n@grid(R)\nkernel keep(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Z: tensor<f32>[R, N]) {\n  let row = program_id(0)\n  let x = X[row, 0 :+ 16384]\n  Y[row, 0 :+ 16384] = x\n  Z[row, 0 :+ 16384] = x / rowsum(x)\n}\n' > "$tmp/keep.ph"
run "a value stored before its reduction" 0 --emit=tir "$tmp/keep.ph"
if [ "$(grep -c 'load X' "$tmp/out" 2>/dev/null || true)" = 1 ]; then ok "X loaded once: not read again past the store"; else not_ok "X loaded once: not read again past the store" "$(grep -c 'load X' "$tmp/out")"; fi

# Occupancy copies (driver.c, spec 15.17): a dot-free variant of small tiles
# gains an entry with .minnctapersm for 2048 threads an SM; a kernel whose
# @launch gives min_blocks, or a dot, gains none; --no-occupancy-copies none
printf '@autotune(NT in [256, 512])\n@launch(NT)\n@grid(R)\nkernel occ(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {\n  Y[program_id(0), 0 :+ 2048] = X[program_id(0), 0 :+ 2048] * 2.0\n}\n' > "$tmp/occ.ph"
run "occupancy copies" 0 --emit=ptx "$tmp/occ.ph"
has "an occupancy copy of the 256-thread variant" out ".visible .entry occ__v0_occ("
has "8 CTAs of 256 threads" out ".minnctapersm 8"
has "4 CTAs of 512 threads" out ".minnctapersm 4"
run "occupancy copies in the manifest" 0 --emit=manifest "$tmp/occ.ph"
has "the manifest names the copy" out "entry: occ__v1_occ"
run "--no-occupancy-copies" 0 --emit=ptx --no-occupancy-copies "$tmp/occ.ph"
lacks "--no-occupancy-copies: no copy" out "_occ("
# odd-pitch rows (ptx/loads.c misaligned_rows): a bf16 element is unpacked
# from its half where it lies in the two aligned vectors, no funnel shift
# first; widened to f32, the stores' shifts are whole words: no shf at all
printf '@launch(128)\n@grid(cdiv(R, 4))\nkernel widen(X: tensor<bf16>[R, N], Y: tensor<f32>[R, N]) {\n  let r0 = ctx.block.x * 4\n  for c0 in range(0, N, 1024) {\n    Y[r0 :+ 4, c0 :+ 1024] = f32(X[r0 :+ 4, c0 :+ 1024]) * 2.0\n  }\n}\n' > "$tmp/widen.ph"
run "odd-pitch bf16 rows widened" 0 --emit=ptx "$tmp/widen.ph"
awk '/^.visible .entry widen__v0\(/{f=1} /^}/{f=0} f' "$tmp/out" > "$tmp/widen_v0.ptx"
has "the odd rows' shift cases" widen_v0.ptx '$Lbsh'
lacks "bf16 elements unpacked in place: no shf" widen_v0.ptx "shf.r.clamp"
# an exact row division's range test (ptx/ops.c emit_div_range): the bits
# doubled (the sign falls out) less twice 2^-60's, compared unsigned
printf '@launch(128)\n@grid(cdiv(R, 4))\nkernel norm(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {\n  let r0 = ctx.block.x * 4\n  let x = X[r0 :+ 4, 0 :+ 256]\n  Y[r0 :+ 4, 0 :+ 256] = x / rowsum(x)\n}\n' > "$tmp/divn.ph"
run "an exact row division" 0 --emit=ptx "$tmp/divn.ph"
has "its range test offsets the doubled bits" out "add.u32 %rt"
has "by -2 * 0x21800000" out ", 0xBD000000;"
has "below twice the span" out ", 0x78000000, "
lacks "no sign mask first" out "0x7fffffff;"
# an odd-rows plan (one element a lane where a warp spans rows) gains its
# copy too, planned again with the same narrowed tiles
run "an odd-rows plan's occupancy copy" 0 --emit=plan -D BM=64 -D BN=64 "$tr"
has "the odd-rows plan's copy" out "odd rows; 8 CTAs an SM"
if awk '/^plan /{c = /odd rows; 8 CTAs an SM/} c && /spt=1x1 tpw=1x32/{f=1} END{exit !f}' "$tmp/out"; then ok "the copy keeps one element a lane"; else not_ok "the copy keeps one element a lane" "$(head -c 600 "$tmp/out")"; fi
sed 's/@launch(NT)/@launch(NT, 2)/' "$tmp/occ.ph" > "$tmp/occ_bounded.ph"
run "a bounded @launch" 0 --emit=ptx "$tmp/occ_bounded.ph"
lacks "a bounded @launch: no copy" out "_occ("

# L2 prefetch (l2pf.c, spec 15.18): loads whose slices move with
# ctx.block.x ask L2 for the slices D blocks ahead (D: the last parameter);
# a slice all blocks share (W) is not asked for; none on sm_80, with
# --no-l2-prefetch or --no-tma, or for a 2-D grid
printf '@grid(R)\nkernel pf(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N]) {\n  let r = ctx.block.x * 2\n  Y[r :+ 2, 0 :+ 256] = X[r :+ 2, 0 :+ 256] * W[0 :+ 256]\n}\n' > "$tmp/pf.ph"
run "L2 prefetch" 0 --emit=ptx --no-occupancy-copies "$tmp/pf.ph"
has "the distance parameter" out ".param .s32 l2pf_param"
has "a bulk prefetch" out "cp.async.bulk.prefetch.L2.global"
has "two rows a block: a step of 2 rows" out "mul.lo.s64 %rdt2, %pfd64_, 2;"
if [ "$(grep -c 'cp.async.bulk.prefetch' "$tmp/out")" = 1 ]; then ok "X's slice only, not W's"; else not_ok "X's slice only, not W's" "$(grep -c 'cp.async.bulk.prefetch' "$tmp/out")"; fi
run "L2 prefetch in the manifest" 0 --emit=manifest "$tmp/pf.ph"
has "the manifest says so" out "l2_prefetch: true"
for flag in --no-l2-prefetch --no-tma --arch=sm_80; do
  run "L2 prefetch $flag" 0 --emit=ptx $flag "$tmp/pf.ph"
  lacks "$flag: no prefetch" out "l2pf_param"
done
sed 's/@grid(R)/@grid(R, 2)/' "$tmp/pf.ph" > "$tmp/pf2.ph"
run "L2 prefetch, a 2-D grid" 0 --emit=ptx "$tmp/pf2.ph"
lacks "a 2-D grid: no prefetch" out "l2pf_param"

# L2 eviction priorities (l2hint.c, spec 15.21): a tensor two top-level
# loops load at the same rows keeps its lines in the first and lets them go
# in the last; a tensor loaded in one loop, none; stores only under
# --l2-hints=stores; none with --no-l2-hints or in a one-pass copy
printf '@grid(R)\nkernel lh(X: tensor<f32>[R, N], W: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {\n  let r = ctx.block.x\n  var s: tile<f32>[1, 1] = 0.0\n  for c in range(0, N, 256) {\n    s = s + rowsum(X[r :+ 1, c :+ 256])\n  }\n  for c in range(0, N, 256) {\n    Y[r :+ 1, c :+ 256] = X[r :+ 1, c :+ 256] * W[r :+ 1, c :+ 256] / s\n  }\n}\n' > "$tmp/lh.ph"
run "L2 hints" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch --no-one-pass "$tmp/lh.ph"
has "L2 hints: the policies, made once" out "createpolicy.fractional.L2::evict_last.b64 %l2pol_last, 1.0;"
if entry lh__v0 | grep -q 'ld.global.L2::cache_hint.*%l2pol_last;' && entry lh__v0 | grep -q 'ld.global.L2::cache_hint.*%l2pol_first;'
then ok "L2 hints: X keeps its lines in the first loop, lets them go in the last"
else not_ok "L2 hints: X keeps its lines in the first loop, lets them go in the last" "$(entry lh__v0 | grep -c cache_hint)"; fi
if [ "$(entry lh__v0 | grep -c 'ld.global[.a-z0-9]* ')" -gt 0 ]; then ok "L2 hints: W (one loop) is loaded without a hint"
else not_ok "L2 hints: W (one loop) is loaded without a hint" "$(entry lh__v0 | grep 'ld.global' | head -3)"; fi
lacks "L2 hints: stores unhinted" out "st.global.L2::cache_hint"
run "--l2-hints=stores" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch --no-one-pass --l2-hints=stores "$tmp/lh.ph"
has "--l2-hints=stores: Y's store evicts first" out "st.global.L2::cache_hint"
run "--no-l2-hints" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch --no-l2-hints "$tmp/lh.ph"
lacks "--no-l2-hints: no hint" out "cache_hint"
run "L2 hints, one pass" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch "$tmp/lh.ph"
if entry lh__v0_once | grep -q 'ld.global' && ! entry lh__v0_once | grep -q 'cache_hint'; then ok "L2 hints: the one-pass copy has none"
else not_ok "L2 hints: the one-pass copy has none" "$(entry lh__v0_once | grep -c cache_hint)"; fi

# Warp skip (skip.c, spec 15.19): a chain that only stores runs behind one
# warp-uniform branch on the warp's lowest column; a chain a reduction reads
# does not; --no-warp-skip takes the branch out
printf '@launch(256)\n@grid(R)\nkernel sk(A: tensor<f32>[R, N], C: tensor<f32>[R, N], S: tensor<f32>[R]) {\n  let r = program_id(0)\n  let a = A[r, 0 :+ 4096]\n  C[r, 0 :+ 4096] = a * 2.0\n  S[r :+ 1] = rowsum(A[r :+ 1, 0 :+ 4096] * 3.0)[0, 0 :+ 1]\n}\n' > "$tmp/sk.ph"
run "warp skip" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch "$tmp/sk.ph"
if [ "$(entry sk__v0 | grep -c 'bra.uni $Lskip')" = 1 ]; then ok "one branch: the store's chain, not the reduction's"
else not_ok "one branch: the store's chain, not the reduction's" "$(entry sk__v0 | grep -c 'bra.uni $Lskip')"; fi
has "the test: the warp's lowest column against C's extent" out "setp.lt.s32 %pt1, %rt1, %ext32_1_1;"
run "--no-warp-skip" 0 --emit=ptx --no-occupancy-copies --no-l2-prefetch --no-warp-skip "$tmp/sk.ph"
lacks "--no-warp-skip: no branch" out "bra.uni \$Lskip"

# a walk's iteration skipped by the warps past its end (spec 15.25): both
# loops of lse_rows (the online logsumexp, -inf past the end; the stores),
# the second loop of fills (a sum of 2 x, 0 past the end) but not its first
# (a sum of where(.., x, 1.0): 1 past the end is not the sum's identity),
# nor fills16's (0.5, a bf16 constant, widened)
walk="$PROJECT_ROOT/spec/conformance/walk_skip.ph"
run "walk skip" 0 --emit=ptx --no-occupancy-copies "$walk"
for e in "lse_rows__v0 2" "fills__v0 1" "fills16__v0 0"; do
  set -- $e
  if [ "$(entry "$1" | grep -c 'bra.uni $Lwalk')" = "$2" ]; then ok "walk skip: $1 has $2 branch(es)"
  else not_ok "walk skip: $1 has $2 branch(es)" "$(entry "$1" | grep -c 'bra.uni $Lwalk')"; fi
done
if entry fills__v0 | awk '/^\$Lfor0:/{f=1} /^\$Lend0:/{f=0} f' | grep -q 'Lwalk'; then
  not_ok "walk skip: not the loop whose slack is not the identity"
else ok "walk skip: not the loop whose slack is not the identity"; fi
run "--no-walk-skip" 0 --emit=ptx --no-occupancy-copies --no-walk-skip "$walk"
lacks "--no-walk-skip: no branch" out "bra.uni \$Lwalk"

# --row-broadcasts (experimental, spec 15.26): the decode merge's log-sum-exp
# weights ([NQ, 1], loaded, no row reduction made them) take the rows of
# the [NQ, D] partials they scale: every broadcast in registers, no
# exchange area; without the flag the merge has its exchanges
dec="$PROJECT_ROOT/examples/gqa_attention/gqa_decode.ph"
run "--row-broadcasts" 0 --emit=plan --row-broadcasts -D NQ=7 -D D=128 -D NS=64 -D PIPE=2 "$dec"
has "--row-broadcasts: the weights in the partials' rows" out "load      f32  [7, 1] phys [8, 1] masked reg sliced(last dim) of blocked"
if [ "$(awk '/^plan gqa_decode \[/{f++} f==1' "$tmp/out" | grep -c 'exchange of')" = 0 ]; then ok "--row-broadcasts: no exchange in gqa_decode"
else not_ok "--row-broadcasts: no exchange in gqa_decode" "$(awk '/^plan gqa_decode \[/{f++} f==1' "$tmp/out" | grep 'exchange of' | head -3)"; fi
run "no --row-broadcasts" 0 --emit=plan -D NQ=7 -D D=128 -D NS=64 -D PIPE=2 "$dec"
if [ "$(awk '/^plan gqa_decode \[/{f++} f==1' "$tmp/out" | grep -c 'exchange of')" -gt 0 ]; then ok "no --row-broadcasts: the merge's exchanges"
else not_ok "no --row-broadcasts: the merge's exchanges"; fi

# --emit=c (spec 17.1): the cubin and the manifest as data in a C file, and
# K_module_load (K the file's stem, an identifier) that loads them; the C
# compiles warning-free; -o FILE.c is required; no cubin or yaml is left
fake_ptxas ptxas_elf "printf '\\177ELF\\002\\001\\001' > \"\$out\"; head -c 11 /dev/zero >> \"\$out\"; printf '\\276\\000\\001' >> \"\$out\"; head -c 31 /dev/zero >> \"\$out\"; printf '\\100' >> \"\$out\"; head -c 11 /dev/zero >> \"\$out\""
PHOBOS_PTXAS="$tmp/ptxas_elf" "$PHOBOSC" --emit=c -o "$tmp/8-bit mod.c" "$q8" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ]; then ok "--emit=c: exit 0"; else not_ok "--emit=c: exit 0" "$(cat "$tmp/err")"; fi
cp "$tmp/8-bit mod.c" "$tmp/emb.c" 2>/dev/null
has "--emit=c: the loader, named from the file's stem" emb.c "phobos_status _8_bit_mod_module_load(phobos_context *ctx, phobos_module **out) {"
has "--emit=c: the cubin's 64 bytes" emb.c "static const unsigned char _8_bit_mod_cubin[64] = {"
has "--emit=c: the manifest's lines, escaped" emb.c '"phobos_manifest: 1\n"'
has "--emit=c: through phobos_module_load_image" emb.c "return phobos_module_load_image(ctx, _8_bit_mod_cubin, sizeof _8_bit_mod_cubin, _8_bit_mod_manifest, sizeof _8_bit_mod_manifest - 1, out);"
if cc -std=c17 -Wall -Wextra -Werror -I"$PROJECT_ROOT/runtime/include" -c "$tmp/emb.c" -o "$tmp/emb.o" 2>"$tmp/err"; then ok "--emit=c: the C compiles with -Wall -Wextra -Werror"
else not_ok "--emit=c: the C compiles with -Wall -Wextra -Werror" "$(cat "$tmp/err")"; fi
if ! ls "$tmp" | grep -q '8-bit mod\.\(cubin\|yaml\|ptx\)'; then ok "--emit=c: no cubin, manifest or PTX left beside it"; else not_ok "--emit=c: no cubin, manifest or PTX left beside it" "$(ls "$tmp")"; fi
run "--emit=c without -o" 2 --emit=c "$q8"
has "--emit=c without -o: says what it needs" err "--emit=c needs an output file: -o FILE.c"
PHOBOS_PTXAS=/bin/false "$PHOBOSC" --emit=c -o "$tmp/bad.c" "$q8" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 1 ] && [ ! -e "$tmp/bad.c" ]; then ok "--emit=c with a failing ptxas: exit 1, no C file"; else not_ok "--emit=c with a failing ptxas: exit 1, no C file" "$(cat "$tmp/err")"; fi

# --emit=header (spec 17.1): a typed launcher a kernel: tensors as typed
# device pointers (const where not written), scalars in their C types, each
# named dim once, literal dims as constants; a name the launcher takes (k)
# gains a _; the header compiles warning-free
printf '@grid(R)\nkernel mix(X: tensor<bf16>[R, 64], Y: tensor<f32>[R, N], n: i32, flag: bool, k: f32) {\n  let r = ctx.block.x\n  Y[r :+ 1, 0 :+ 64] = where(flag, f32(X[r :+ 1, 0 :+ 64]) * k, f32(n))\n}\n' > "$tmp/mix.ph"
run "--emit=header" 0 --emit=header -o "$tmp/mix.h" "$tmp/mix.ph"
has "the launcher's signature" mix.h "static inline phobos_status mix_launch(phobos_kernel *k, const uint16_t *X, float *Y, int32_t n, int flag, float k_, int64_t R, int64_t N, void *stream) {"
has "a literal dim as a constant" mix.h "args[0] = phobos_tensor_arg((uint64_t)(uintptr_t)X, PHOBOS_BF16, 2, (const int64_t[]){R, 64});"
has "a bool scalar" mix.h "args[3] = phobos_bool_arg(flag);"
has "through phobos_launch" mix.h "return phobos_launch(k, args, 5, stream);"
has "the views launcher's signature: each tensor's strides after it" mix.h "static inline phobos_status mix_launch_views(phobos_kernel *k, const uint16_t *X, const int64_t *X_strides, float *Y, const int64_t *Y_strides, int32_t n, int flag, float k_, int64_t R, int64_t N, void *stream) {"
has "the views launcher sets the strides given" mix.h "for (int d = 0; Y_strides && d < 2; d++) args[1].tensor.strides[d] = Y_strides[d];"
printf '#include "mix.h"\nint use(phobos_kernel *k, const uint16_t *x, float *y) { return mix_launch(k, x, y, 3, 1, 0.5f, 7, 100, 0); }\nint use_views(phobos_kernel *k, const uint16_t *x, float *y) { return mix_launch_views(k, x, (const int64_t[]){128, 1}, y, NULL, 3, 1, 0.5f, 7, 100, 0); }\n' > "$tmp/use_mix.c"
if cc -std=c17 -Wall -Wextra -Werror -I"$PROJECT_ROOT/runtime/include" -I"$tmp" -c "$tmp/use_mix.c" -o "$tmp/use_mix.o" 2>"$tmp/err"; then ok "--emit=header: a caller compiles with -Wall -Wextra -Werror"
else not_ok "--emit=header: a caller compiles with -Wall -Wextra -Werror" "$(cat "$tmp/err")"; fi

# --split-compile: ptxas spreads the entries over threads ($PHOBOS_PTXAS_THREADS,
# else the online CPUs); a ptxas that does not know the option (its error
# names it) is run again without it
printf '#!/bin/sh\necho "$*" >> "%s/ptxas_args"\ncase "$*" in *split-compile*) echo "ptxas fatal   : Unknown option '"'"'-split-compile'"'"'"; exit 1;; esac\necho "ptxas fatal   : other failure"; exit 1\n' "$tmp" > "$tmp/ptxas_old"
chmod +x "$tmp/ptxas_old"
rm -f "$tmp/ptxas_args"
PHOBOS_PTXAS="$tmp/ptxas_old" PHOBOS_PTXAS_THREADS=4 "$PHOBOSC" -o "$tmp/old.cubin" "$q8" >"$tmp/out" 2>"$tmp/err"
if sed -n 1p "$tmp/ptxas_args" | grep -q -e '--split-compile 4$'; then ok "PHOBOS_PTXAS_THREADS=4: --split-compile 4"
else not_ok "PHOBOS_PTXAS_THREADS=4: --split-compile 4" "$(cat "$tmp/ptxas_args")"; fi
if [ "$(wc -l < "$tmp/ptxas_args")" -eq 2 ] && ! sed -n 2p "$tmp/ptxas_args" | grep -q split-compile; then
  ok "a ptxas without --split-compile: run again without it"
else not_ok "a ptxas without --split-compile: run again without it" "$(cat "$tmp/ptxas_args")"; fi
has "the second run's failure reported" err "other failure"
if grep -q "reproduce with:" "$tmp/err" && ! grep -q "split-compile" "$tmp/err"; then ok "the repro command is the second run's"
else not_ok "the repro command is the second run's" "$(cat "$tmp/err")"; fi
rm -f "$tmp/ptxas_args"
PHOBOS_PTXAS="$tmp/ptxas_old" PHOBOS_PTXAS_THREADS=1 "$PHOBOSC" -o "$tmp/old.cubin" "$q8" >"$tmp/out" 2>"$tmp/err"
if [ "$(wc -l < "$tmp/ptxas_args")" -eq 1 ] && ! grep -q split-compile "$tmp/ptxas_args"; then ok "PHOBOS_PTXAS_THREADS=1: no --split-compile"
else not_ok "PHOBOS_PTXAS_THREADS=1: no --split-compile" "$(cat "$tmp/ptxas_args")"; fi

# @grid programs: what the runtime cannot evaluate, and names too long for
# a fixed buffer, were an internal error when the manifest was written
printf '@grid(N << 1)\nkernel k(A: tensor<f32>[N]) {\n  A[0] = 1.0\n}\n' > "$tmp/gridshl.ph"
run "@grid with an operator the runtime lacks: an error, not an internal one" 1 --emit=manifest --diagnostics=plain "$tmp/gridshl.ph"
has "@grid operator located" err "gridshl.ph:1:7: error: @grid: operator '<<' is not available in a launch grid"
long=$(printf 'D%.0s' $(seq 1 600))
printf '@grid(%s + %s)\nkernel k(A: tensor<f32>[%s]) {\n  A[0] = 1.0\n}\n' "$long" "$long" "$long" > "$tmp/gridlong.ph"
run "a 600-character dim in @grid: the manifest writes it" 0 --emit=manifest "$tmp/gridlong.ph"
has "the long dim's grid program" out "grid: [\"DDDDDDDDDD"

# Values checked (the scan of issue 17): a constant's negation overflowed
printf 'kernel k(A: tensor<i64>[N]) {\n  A[0] = -C\n}\n' > "$tmp/negmin.ph"
run "the negation of INT64_MIN folds, wrapping" 0 --emit=tir -D C=-9223372036854775808 "$tmp/negmin.ph"
has "-INT64_MIN is INT64_MIN" out "const -9223372036854775808 : i64"

# The plan is the truth: for the examples (under the flag sets that change
# layouts and dot paths) and the conformance sources, every entry's
# chunk, register counts, fragment layout and tensor-core instructions in
# the PTX are what --emit=plan-yaml says (tests/plan_vs_ptx.py)
if command -v python3 >/dev/null; then
  for src in "$PROJECT_ROOT"/examples/*/*.ph "$PROJECT_ROOT"/spec/conformance/*.ph; do
    flags=("")
    case $src in */examples/*) flags=("" --no-wgmma --no-tensor-copies --arch=sm_80) ;; esac
    for fl in "${flags[@]}"; do
      # shellcheck disable=SC2086
      if r=$(python3 "$PROJECT_ROOT/tests/plan_vs_ptx.py" "$PHOBOSC" "$src" $fl 2>&1); then
        ok "plan = PTX: $(basename "$src") ${fl:-default} ($(echo "$r" | tail -1))"
      else
        not_ok "plan = PTX: $(basename "$src") ${fl:-default}" "$(echo "$r" | tail -5)"
      fi
    done
  done
fi

# variants whose row tiles hold more than 64 elements a thread are left out
# where another holds at most 64 (driver.c, drop_dominated; spec: @autotune)
cat > "$tmp/oversized.ph" <<'PH'
@autotune(BR in [1, 8], BN in [1024, 8192])
@launch(128)
@grid(cdiv(R, BR))
kernel scale(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * BR
  for c0 in range(0, N, BN) {
    Y[r0 :+ BR, c0 :+ BN] = X[r0 :+ BR, c0 :+ BN] * 2.0
  }
}
PH
run "--emit=plan of oversized variants" 0 --emit=plan "$tmp/oversized.ph"
has "a variant of 512 elements a thread is left out" out "scale [BR=8, BN=8192] left out: a blocked register tile of 512 elements a thread"
lacks "a variant of 64 elements a thread is kept" out "[BR=8, BN=1024] left out"
has "the kept variant of 64 is planned" out "plan scale [BR=8, BN=1024] threads 128"
lacks "the oversized variant is not planned" out "plan scale [BR=8, BN=8192]"
run "--all-variants --emit=plan" 0 --all-variants --emit=plan "$tmp/oversized.ph"
has "--all-variants keeps the oversized variant" out "plan scale [BR=8, BN=8192] threads 128"
lacks "--all-variants leaves nothing out" out "left out"
# a variant whose tensor-core dot's result cannot stay in fragments (BM 64
# over 8 warps: fewer rows than they cover) beside one whose can (BM 128)
cat > "$tmp/flatdot.ph" <<'PH'
@autotune(BM in [64, 128])
@launch(256)
@grid(cdiv(N, 64), cdiv(M, BM))
kernel mm(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * 64
  var acc: tile<f32>[BM, 64] = 0.0
  for k0 in range(0, K, 32) {
    acc += dot(A[m0 :+ BM, k0 :+ 32], B[k0 :+ 32, n0 :+ 64])
  }
  C[m0 :+ BM, n0 :+ 64] = acc
}
PH
run "--emit=plan of a flat dot's variant" 0 --emit=plan "$tmp/flatdot.ph"
has "the BM 64 variant is left out" out "mm [BM=64] left out: 1 tensor-core dot's result exchanged through shared memory"
has "the BM 128 variant is planned" out "plan mm [BM=128] threads 256"
lacks "the BM 64 variant is not planned" out "plan mm [BM=64]"
run "--all-variants keeps the flat dot's variant" 0 --all-variants --emit=plan "$tmp/flatdot.ph"
has "--all-variants plans BM 64" out "plan mm [BM=64] threads 256"
# the two rules never leave out every variant: BM 128 keeps its dot in
# fragments but holds a 128-element row tile; BM 64 holds 64 but its dot is flat
# (flatdot.ph with a row tile X -> Y of BM x 256 f32 beside the product)
sed -e 's/^kernel mm(/kernel mm2(/' \
  -e 's/C: tensor<f32>\[M, N\])/X: tensor<f32>[M, 256], C: tensor<f32>[M, N], Y: tensor<f32>[M, 256])/' \
  -e 's/^}$/  Y[m0 :+ BM, 0 :+ 256] = X[m0 :+ BM, 0 :+ 256] * 2.0\n}/' "$tmp/flatdot.ph" > "$tmp/bothrules.ph"
run "--emit=plan with both rules" 0 --emit=plan "$tmp/bothrules.ph"
has "the oversized variant is left out" out "mm2 [BM=128] left out: a blocked register tile of 128 elements a thread"
has "the flat dot's variant is kept when the other is left out" out "plan mm2 [BM=64] threads 256"
run "--emit=manifest -v with oversized variants" 0 --emit=manifest -v "$tmp/oversized.ph"
has "-v names the left-out variant" err "scale [BR=8, BN=8192] left out"
if ! grep -q "entry: scale__v15" "$tmp/out" && grep -q "entry: scale__v0" "$tmp/out"; then
  ok "the manifest lists the kept variants only"
else not_ok "the manifest lists the kept variants only" "$(grep entry "$tmp/out" | head -20)"; fi

# odd-rows plans: the entry for rows that are not aligned is planned one
# element a chunk for those tensors where a warp spans several rows, the
# aligned-rows copy keeps 16-byte vectors; a warp within one row keeps its
# vectors, and no odd-rows plan is made (driver.c, driver_odd_rows_plan;
# spec 15.12)
cat > "$tmp/oddrows.ph" <<'PH'
@launch(128)
@grid(cdiv(R, 16))
kernel twice(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * 16
  Y[r0 :+ 16, 0 :+ 32] = X[r0 :+ 16, 0 :+ 32] * 2.0
}

@launch(128)
@grid(cdiv(R, 4))
kernel wide(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r0 = ctx.block.x * 4
  Y[r0 :+ 4, 0 :+ 128] = X[r0 :+ 4, 0 :+ 128] * 2.0
}
PH
run "--emit=plan of odd rows" 0 --emit=plan "$tmp/oddrows.ph"
has "the odd-rows plan names itself" out "plan twice [odd rows] threads 128"
has "the odd-rows plan: one element a chunk" out "reg blocked spt=1x1 tpw=1x32 wpc=4x1 reps=4"
has "the aligned-rows copy keeps vectors" out "plan twice [aligned rows] threads 128"
has "the aligned-rows copy: 16-byte chunks, a warp over 4 rows" out "reg blocked spt=1x4 tpw=4x8 wpc=4x1 reps=1"
lacks "a warp within a row: no odd-rows plan" out "plan wide [odd rows]"
has "a warp within a row: its vectors" out "reg blocked spt=1x4 tpw=1x32 wpc=4x1 reps=1"
run "--emit=plan --vector-odd-rows" 0 --vector-odd-rows --emit=plan "$tmp/oddrows.ph"
lacks "--vector-odd-rows: no odd-rows plan" out "odd rows"
lacks "--vector-odd-rows: no scalar chunks" out "spt=1x1"

# a kernel without @grid gets each variant's grid from its slices (spec 11.1)
run "q8_matvec (no @grid): --emit=manifest" 0 --emit=manifest "$q8"
has "q8_matvec: the derived grid, cdiv(N, TILE_N)" out 'grid: ["N 64 cdiv"]'
run "q8_matvec: --emit=tir" 0 --emit=tir "$q8"
has "tir prints the derived grid" out "} -> %"
printf '@autotune(BS in [256, 1024])\nkernel add(X: tensor<f32>[N], Z: tensor<f32>[N]) {\n  let i0 = program_id(0) * BS\n  Z[i0 :+ BS] = X[i0 :+ BS] + 1.0\n}\n' > "$tmp/add.ph"
run "a port without @grid compiles" 0 --emit=manifest --arch=sm_80 "$tmp/add.ph"
has "its BS = 256 variants launch cdiv(N, 256) blocks" out 'grid: ["N 256 cdiv"]'
has "its BS = 1024 variants launch cdiv(N, 1024) blocks" out 'grid: ["N 1024 cdiv"]'
# windows that start before element 0 reach further; a loop variable adds
# its range's start; blocks 2^32 apart: one (review of d718b1f)
printf 'kernel neg(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  Y[ctx.block.x * 4 - 2 :+ 4] = X[0 :+ 4]\n}\n' > "$tmp/neg.ph"
run "a window 2 before the tensor: --emit=manifest" 0 --emit=manifest --arch=sm_80 "$tmp/neg.ph"
has "the grid reaches 2 further: cdiv(N + 2, 4)" out 'grid: ["N 2 + 4 cdiv"]'
printf 'kernel loopy(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  for i in range(0, 8, 4) {\n    Y[ctx.block.x * 8 + i :+ 4] = X[0 :+ 4]\n  }\n}\n' > "$tmp/loopy.ph"
run "a loop variable from 0 added: --emit=manifest" 0 --emit=manifest --arch=sm_80 "$tmp/loopy.ph"
has "the grid is cdiv(N, 8)" out 'grid: ["N 8 cdiv"]'
printf 'kernel big(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  Y[i64(ctx.block.x) * 4294967296 :+ 4] = X[0 :+ 4]\n}\n' > "$tmp/big.ph"
run "blocks 2^32 elements apart: --emit=manifest" 0 --emit=manifest --arch=sm_80 "$tmp/big.ph"
has "one block reaches every extent" out 'grid: ["1"]'
printf 'kernel gs(X: tensor<f32>[N], Y: tensor<f32>[N]) {\n  for i in range(ctx.block.x * 4, N, ctx.grid.x * 4) {\n    Y[i :+ 4] = X[i :+ 4]\n  }\n}\n' > "$tmp/gs.ph"
run "a grid-stride loop without @grid is an error" 1 "$tmp/gs.ph"
has "it names the store and the loop variable" err "gs.ph:3:7: error: cannot derive the launch grid of kernel 'gs' along x: this store of 'Y' depends on ctx.block.x through loop variable 'i'"
has "it says how to fix it" err "note: give the grid with @grid(...) before 'kernel gs'"
# @requires: the split q8 kernel's contracts, in its manifest (spec 11.2)
run "q8_matvec_split: --emit=manifest" 0 --emit=manifest "$PROJECT_ROOT/examples/q8_matvec/q8_matvec_split.ph"
has "the contract as written" out '{text: "KB >= cdiv(K, 32)", op: ">=", lhs: "KB", rhs: "cdiv(K, 32)"}'
has "each variant's programs" out 'requires: [["KB", "K 32 cdiv"]]'
# arrive's counters: the contract that they reach every block of the grid, derived (spec 11.2)
run "arrive: --emit=manifest" 0 --emit=manifest "$PROJECT_ROOT/spec/conformance/arrive.ph"
has "arrive's counter contract" out '{text: "NB > ctx.grid.x - 1 (arrive'"'"'s counter '"'"'Cnt'"'"', dim 0)", op: ">", lhs: "NB", rhs: "ctx.grid.x - 1"}'
has "its program" out 'requires: [["NB", "grid.x 1 - 1 * 0 +"]]'
run "q8_matvec_split: --emit=manifest again" 0 --emit=manifest "$PROJECT_ROOT/examples/q8_matvec/q8_matvec_split.ph"
# @scratch: its tensors marked, last, and each variant's extents (spec 11.3)
has "scratch tensors marked" out '{name: Cnt, kind: tensor, dtype: i32, dims: [Cnt.0], written: true, strides: inner-contiguous, scratch: zero}'
has "each variant's scratch extents" out 'scratch: [["8", "N"], ["N 256 cdiv"]]'
run "--help" 0 --help
has "--help tells of the derived grid and @requires" out "@requires"

# The dependent launch's wait (ptx/depwait.c): every sm_90a entry of the
# examples waits exactly once, releases its dependents once, after the wait
# (released before it, grids to come launched in a cascade), and no global
# access (a load, store, atomic or copy; an L2 prefetch is a hint) comes
# before it, with --early-prefetch (the wait moved) and without (the wait
# first). An entry counts as moved where its own values come before the wait.
depwait_check() { # FILE.ptx: prints "entries moved bad"
  awk '/^\.visible \.entry/ { n++; st = 1; m = 0 }
       st == 1 && /%rv[0-9]+_/ { if (!m) { m = 1; mv++ } }
       /griddepcontrol\.launch_dependents/ { d[n]++; if (st != 2) bad++ }
       /griddepcontrol\.wait/ { w[n]++; st = 2 }
       st == 1 && /(^|[ \t@%!a-z0-9_]+ )(ld|st|atom|red|cp\.async|cp\.reduce)\./ && !/\.(param|shared|local)/ && !/prefetch\.L2/ { bad++ }
       END { for (i = 1; i <= n; i++) if (w[i] != 1 || d[i] != 1) bad++; printf "%d %d %d\n", n, mv, bad + 0 }' "$1"
}
for src in llm_decode/llm_decode gqa_attention/gqa_decode gqa_attention/gqa_attention q8_matvec/q8_matvec_split; do
  "$PHOBOSC" --emit=ptx --early-prefetch -o "$tmp/dw.ptx" "$PROJECT_ROOT/examples/$src.ph" 2>"$tmp/err"
  read -r ents mv bad < <(depwait_check "$tmp/dw.ptx")
  if [ "$ents" -gt 0 ] && [ "$mv" -gt 0 ] && [ "$bad" -eq 0 ]; then ok "--early-prefetch $src: one wait and one release an entry, the release after the wait, no global access before it ($mv of $ents moved)"
  else not_ok "--early-prefetch $src: the dependent launch's wait" "$ents entries, $mv moved, $bad bad"; fi
done
grep -q "griddepcontrol.wait" "$tmp/dw.ptx" && grep -q "depwait.c" "$tmp/dw.ptx" && ok "--early-prefetch: a loop's first rows asked for before the wait" || not_ok "--early-prefetch: no prefetch before the wait"
"$PHOBOSC" --emit=ptx -o "$tmp/dw.ptx" "$PROJECT_ROOT/examples/llm_decode/llm_decode.ph" 2>"$tmp/err"
read -r ents mv bad < <(depwait_check "$tmp/dw.ptx")
if [ "$mv" -eq 0 ] && [ "$bad" -eq 0 ] && ! grep -q "depwait.c" "$tmp/dw.ptx"; then ok "by default the wait first, nothing fetched before it"
else not_ok "default: the dependent launch's wait" "$mv moved, $bad bad"; fi

head -c 3000 /dev/urandom > "$tmp/noise.ph"
"$PHOBOSC" "$tmp/noise.ph" >/dev/null 2>&1
st=$?
if [ $st -eq 0 ] || [ $st -eq 1 ]; then ok "random bytes: exit 0 or 1, not a crash"; else not_ok "random bytes" "exit $st"; fi

echo "1..$n"
[ $fail -eq 0 ]
