/* test_sema.c: programs that must check clean, and the rules that depend on
 * @autotune points and -D constants. Single-error cases live in
 * golden/diag/ instead. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static Run check_file(const char *rel, Define *defs, int ndefs) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", getenv("PROJECT_ROOT"), rel);
  char *obuf = NULL, *ebuf = NULL;
  size_t olen = 0, elen = 0;
  FILE *out = open_memstream(&obuf, &olen), *err = open_memstream(&ebuf, &elen);
  DriverOptions o = {.input = path, .arch = "sm_90a", .plain = true, .max_errors = 20, .defines = defs,
                     .ndefines = ndefs};
  int status = driver_compile(&o, out, err);
  fclose(out);
  fclose(err);
  return (Run){.out = obuf, .diag = ebuf, .errors = status};
}

static void expect_clean(const char *src) {
  Run r = run_check(src);
  cr_assert_str_eq(r.diag, "", "<<%s>>", src);
}

static void expect_diag(const char *src, const char *want) {
  Run r = run_check(src);
  cr_assert_str_eq(r.diag, want, "<<%s>>", src);
}

Test(sema, examples_check_clean) {
  const char *files[] = {"examples/q8_matvec/q8_matvec.ph", "examples/q8_matvec/q8_matvec_padstage.ph",
                         "examples/gqa_attention/gqa_attention.ph"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    Run r = check_file(files[i], NULL, 0);
    cr_expect_eq(r.errors, 0, "%s:\n%s", files[i], r.diag);
    cr_expect_str_eq(r.diag, "", "%s", files[i]);
  }
}

Test(sema, gqa_for_every_group_size_and_head_dim) {
  const char *nq[] = {"1", "2", "3", "4", "5", "7", "8"}, *d[] = {"64", "128"};
  for (size_t i = 0; i < 7; i++)
    for (size_t j = 0; j < 2; j++) {
      Define defs[2] = {{.name = "NQ", .value = nq[i]}, {.name = "D", .value = d[j]}};
      Run r = check_file("examples/gqa_attention/gqa_attention.ph", defs, 2);
      cr_expect_eq(r.errors, 0, "NQ=%s D=%s:\n%s", nq[i], d[j], r.diag);
    }
}

/* The Phobos language's SGEMM example in its own shape: program_id, spans,
 * dot and +=, alpha/beta scalars, a doubling @autotune space. */
Test(sema, phobos_sgemm) {
  expect_clean("@autotune(TM in [32, 128], TN in [32, 128], TK in [8, 32])\n"
               "@launch(256)\n"
               "@pipeline\n"
               "@aligned(M = TM, N = TN, K = TK)\n"
               "kernel sgemm(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N],\n"
               "             alpha: f32, beta: f32) {\n"
               "  let i = program_id(0)\n"
               "  let j = program_id(1)\n"
               "  var acc: tile<f32>[TM, TN] = 0.0\n"
               "  for k in range(0, K, TK) {\n"
               "    var a = A[i * TM :+ TM, k :+ TK]\n"
               "    var b = B[k :+ TK, j * TN :+ TN]\n"
               "    acc += dot(a, b)\n"
               "  }\n"
               "  let old = C[i * TM :+ TM, j * TN :+ TN]\n"
               "  C[i * TM :+ TM, j * TN :+ TN] = alpha * acc + beta * old\n"
               "}\n");
}

/* The Phobos flash attention example's constructs: dot_t, rowmax, tmax,
 * exp, rowsum, [R, 1] column broadcasting, unknown attributes warned. */
Test(sema, phobos_flash_attention) {
  Run r = run_check("@tensorcore\n"
                    "@autotune(D in [64], BR in [32, 128], BC in [32, 128])\n"
                    "kernel flash(Q: tensor<f32>[NQ, D], K: tensor<f32>[NK, D], V: tensor<f32>[NK, D],\n"
                    "             O: tensor<f32>[NQ, D], scale: f32) {\n"
                    "  let r0 = program_id(0) * BR\n"
                    "  let q = Q[r0 :+ BR, :]\n"
                    "  var acc: tile<f32>[BR, D] = 0.0\n"
                    "  var m: tile<f32>[BR, 1] = -1.0e30\n"
                    "  var l: tile<f32>[BR, 1] = 0.0\n"
                    "  for c in range(0, NK, BC) {\n"
                    "    let k = K[c :+ BC, :]\n"
                    "    let v = V[c :+ BC, :]\n"
                    "    var s: tile<f32>[BR, BC] = dot_t(q, k)\n"
                    "    s = s * scale\n"
                    "    var mn: tile<f32>[BR, 1] = rowmax(s)\n"
                    "    mn = tmax(m, mn)\n"
                    "    var p: tile<f32>[BR, BC] = exp(s - mn)\n"
                    "    var corr: tile<f32>[BR, 1] = exp(m - mn)\n"
                    "    l = l * corr\n"
                    "    l += rowsum(p)\n"
                    "    acc = acc * corr\n"
                    "    acc += dot(p, v)\n"
                    "    m = mn\n"
                    "  }\n"
                    "  acc = acc / l\n"
                    "  O[r0 :+ BR, :] = acc\n"
                    "}\n");
  cr_assert_eq(r.errors, 0, "%s", r.diag);
  cr_assert_str_eq(r.diag, "t.ph:1:1: warning: unknown attribute '@tensorcore' is ignored\n");
}

Test(sema, error_in_a_later_autotune_point_names_it) {
  /* fits when T = 16, not when T = 32: the 16-row tile gets a 32-row value */
  expect_diag("@autotune(T in [16, 32])\n"
              "kernel k(A: tensor<f32>[N, 16]) {\n"
              "  var t: tile<f32>[16, 16] = A[0 :+ T, :]\n"
              "}\n",
              "t.ph:3:30: error: initializer of 't': shape [32, 16] does not fit [16, 16]\n"
              "t.ph:2:8: note: in kernel 'k' with @autotune point T=32 (2 of 2)\n");
}

Test(sema, autotune_doubling_and_lists) {
  /* [4, 32] doubles: 4 8 16 32; three values are a list; [8, 2] is a list of two */
  expect_diag("@autotune(A in [4, 32], B in [3, 5, 7], C in [8, 2])\n"
              "kernel k(X: tensor<f32>[N]) {\n"
              "  var t: tile<f32>[A, B, C] = 0.0\n"
              "  let u: tile<f32>[4, 3, 2] = t\n"
              "}\n",
              "t.ph:4:31: error: initializer of 'u': shape [4, 3, 8] does not fit [4, 3, 2]\n"
              "t.ph:2:8: note: in kernel 'k' with @autotune point A=4, B=3, C=8 (1 of 24)\n");
}

Test(sema, define_pins_an_autotune_name) {
  const char *src = "@autotune(T in [16, 32])\n"
                    "kernel k(A: tensor<f32>[N, 16]) {\n"
                    "  var t: tile<f32>[16, 16] = A[0 :+ T, :]\n"
                    "}\n";
  char path[] = "/tmp/phobos_test_XXXXXX.ph";
  int fd = mkstemps(path, 3);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(src, f);
  fclose(f);
  Define defs[1] = {{.name = "T", .value = "16"}};
  char *ebuf = NULL;
  size_t elen = 0;
  FILE *err = open_memstream(&ebuf, &elen);
  DriverOptions o = {.input = path, .arch = "sm_90a", .plain = true, .defines = defs, .ndefines = 1};
  int status = driver_compile(&o, stdout, err);
  fclose(err);
  unlink(path);
  cr_assert_eq(status, 0, "%s", ebuf);
}

Test(sema, dim_named_like_a_constant_is_pinned) {
  /* D is an @autotune constant, so ':' over the D axis is a static extent */
  expect_clean("@autotune(D in [64])\n"
               "kernel k(Q: tensor<f32>[N, D], O: tensor<f32>[N, D]) {\n"
               "  let q = Q[0 :+ 4, :]\n"
               "  O[0 :+ 4, :] = q * 2.0\n"
               "}\n");
}

Test(sema, range_length_from_affine_bounds) {
  expect_clean("@autotune(B in [8])\n"
               "kernel k(A: tensor<f32>[N], O: tensor<f32>[N]) {\n"
               "  let s = ctx.block.x * B\n"
               "  O[s : s + B] = A[s + 1 : B + s + 1]\n"
               "}\n");
}

Test(sema, rank3_dot_keeps_leading_dims) {
  expect_clean("kernel k(Q: tensor<f16>[S, H, 64], K: tensor<f16>[T, 64], O: tensor<f32>[S, H, 16]) {\n"
               "  let q = Q[0 :+ 4, 0 :+ 7, :]\n"
               "  let kk = K[0 :+ 16, :]\n"
               "  var s: tile<f32>[4, 7, 16] = dot_t(q, kk)\n"
               "  O[0 :+ 4, 0 :+ 7, :] = s\n"
               "}\n");
}

Test(sema, int8_dot_accumulates_in_i32) {
  expect_clean("kernel k(A: tensor<i8>[M, 32], B: tensor<i8>[N, 32], C: tensor<i32>[M, N]) {\n"
               "  C[0 :+ 8, 0 :+ 8] = dot_t(A[0 :+ 8, :], B[0 :+ 8, :])\n"
               "}\n");
}

Test(sema, implicit_widening_is_allowed) {
  expect_clean("kernel k(A: tensor<f16>[N], B: tensor<i8>[N]) {\n"
               "  var a: tile<f32>[8] = A[0 :+ 8]\n"
               "  var b: tile<i32>[8] = B[0 :+ 8]\n"
               "  var c: tile<f64>[8] = a\n"
               "  var d: f32 = 3\n"
               "}\n");
}

Test(sema, mixed_16_bit_floats_meet_at_f32) {
  expect_diag("kernel k(A: tensor<f16>[N], B: tensor<bf16>[N]) {\n"
              "  var c: tile<f16>[8] = A[0 :+ 8] + B[0 :+ 8]\n"
              "}\n",
              "t.ph:2:25: error: initializer of 'c': cannot convert f32 to f16 implicitly\n"
              "t.ph:2:25: note: write f16(...) to convert explicitly\n");
}

Test(sema, causal_mask_with_iota_and_where) {
  expect_clean("kernel k(S: tensor<f32>[M, N]) {\n"
               "  let r = iota(16, 16, axis = 0)\n"
               "  let c = iota(16, 16)\n"
               "  let t = S[0 :+ 16, 0 :+ 16]\n"
               "  S[0 :+ 16, 0 :+ 16] = where(c <= r, t, -inf)\n"
               "}\n");
}

Test(sema, grid_expression_over_dims_and_constants) {
  expect_clean("@autotune(TN in [64])\n@grid(cdiv(N, TN), B)\n"
               "kernel k(A: tensor<f32>[B, N]) {\n"
               "  let t = A[ctx.block.y, ctx.block.x * TN :+ TN]\n"
               "}\n");
}

Test(sema, stops_after_twenty_errors) {
  char src[4096] = "kernel k() {\n";
  for (int i = 0; i < 30; i++) sprintf(src + strlen(src), "  let a%d = nope\n", i);
  strcat(src, "}\n");
  Run r = run_check(src);
  cr_assert_eq(r.errors, 30); /* the test harness sets no limit */
  Arena *a = arena_new();
  Source s = {.name = "t.ph", .text = src, .len = strlen(src)};
  char *ebuf = NULL;
  size_t elen = 0;
  FILE *err = open_memstream(&ebuf, &elen);
  Diags d;
  diag_init(&d, &s, err, true);
  Node *p = parse_program(a, &d, &s);
  SemaOptions so = {.max_variants = 10};
  sema_check(a, &d, p, &so);
  fclose(err);
  cr_assert_eq(d.errors, 20);
  cr_assert(strstr(ebuf, "t.ph: note: stopping after 20 errors\n"), "%s", ebuf);
  arena_free(a);
}

static void expect_diag_has(const char *src, const char *want) {
  Run r = run_check(src);
  cr_assert(r.errors > 0 && strstr(r.diag, want), "<<%s>> gave:\n%s", src, r.diag);
}

/* cumsum and tril (spec 9.3): their operands and types */
Test(sema, cumsum_and_tril) {
  expect_clean("kernel k(X: tensor<f32>[N, D], Y: tensor<f32>[N, D]) {\n"
               "  let t = X[0 :+ 16, 0 :+ 8]\n"
               "  Y[0 :+ 16, 0 :+ 8] = tril(cumsum(t)[0 :+ 16, 0 :+ 8] + cumsum(i32(t))[0 :+ 16, 0 :+ 8])\n"
               "}\n");
  expect_diag_has("kernel k(X: tensor<bf16>[N]) {\n  let t = cumsum(X[0 :+ 16])\n}\n",
              "cumsum needs an f32, f64, i32 or i64 tile, got bf16");
  expect_diag_has("kernel k(X: tensor<f32>[N]) {\n  let t = tril(X[0 :+ 16])\n}\n",
              "argument 1 of tril must be a rank-2 tile, got tile<f32>[16]");
  expect_diag_has("kernel k(X: tensor<f32>[N]) {\n  let t = cumsum(X[0])\n}\n",
              "argument 1 of cumsum must be a tile of rank 1 to 2, got f32");
}

/* @scratch (spec 11.3): declarations, dims, fills */
Test(sema, scratch_tensors) {
  expect_clean("@autotune(TN in [64], KSPLIT in [4])\n"
               "@grid(cdiv(N, TN), KSPLIT)\n"
               "@scratch(P: tensor<f32>[KSPLIT, N], Cnt: tensor<i32>[cdiv(N, TN)] = 0)\n"
               "kernel k(A: tensor<f32>[K, N]) {\n"
               "  P[0 :+ 1, 0 :+ TN] = A[0 :+ 1, 0 :+ TN]\n"
               "  let last = arrive(Cnt[0], KSPLIT)\n"
               "}\n");
  expect_diag_has("@scratch(4)\nkernel k(A: tensor<f32>[N]) {\n}\n", "@scratch declares tensors the runtime allocates");
  expect_diag_has("@launch(P: tensor<f32>[N])\nkernel k(A: tensor<f32>[N]) {\n}\n",
                  "@launch takes no declarations (NAME: type): only @scratch does");
  expect_diag_has("@scratch(P: tensor<f32>[Q])\nkernel k(A: tensor<f32>[N]) {\n}\n",
                  "dim 'Q' of scratch tensor 'P' is neither a dim of the kernel's tensors nor a constant");
  expect_diag_has("@scratch(P: tensor<f32>[N * n])\nkernel k(A: tensor<f32>[N], n: i32) {\n}\n",
                  "@scratch can use tensor dims and constants; 'n' is a scalar parameter");
  expect_diag_has("@scratch(P: tensor<f32>[N] = 1)\nkernel k(A: tensor<f32>[N]) {\n}\n",
                  "a scratch tensor starts undefined, or at zero ('= 0')");
  expect_diag_has("@scratch(P: i32)\nkernel k(A: tensor<f32>[N]) {\n}\n", "@scratch declares tensors: 'P' is a i32");
}

/* break and continue (spec 10.4): inside a for or while loop only */
Test(sema, break_and_continue) {
  expect_clean("kernel k(A: tensor<f32>[N]) {\n  for i in range(0, 8) {\n    if i > 4 {\n      break\n    }\n"
               "    continue\n  }\n  var j = 0\n  while j < 3 {\n    j += 1\n    continue\n  }\n}\n");
  expect_diag_has("kernel k(A: tensor<f32>[N]) {\n  break\n}\n",
                  "'break' outside a loop: it leaves the innermost for or while loop");
  expect_diag_has("kernel k(A: tensor<f32>[N]) {\n  if true {\n    continue\n  }\n}\n", "'continue' outside a loop");
  expect_clean("kernel k(A: tensor<f32>[N]) {\n  if N > 4 {\n    return\n  }\n  for i in range(0, 8) {\n    return\n  }\n}\n");
  expect_clean("kernel k(A: tensor<f32>[N]) {\n  for<unroll 4> i in range(0, N, 8) {\n    A[i :+ 8] = A[i :+ 8] * 2.0\n  }\n}\n");
  expect_diag_has("kernel k(A: tensor<f32>[N]) {\n  for<unrol 4> i in range(0, N) {\n  }\n}\n",
                  "expected 'unroll' in 'for<unroll n>', found 'unrol'");
  expect_diag_has("kernel k(A: tensor<f32>[N]) {\n  for<unroll 0> i in range(0, N) {\n  }\n}\n",
                  "for<unroll 0>: the count must be from 1 to 64");
}

/* atomic_add (spec 9.6): a statement into a tensor slice of an element
 * type the hardware adds */
Test(sema, atomic_add) {
  expect_clean("kernel k(X: tensor<f32>[M, N], C: tensor<f32>[1, N], I: tensor<i32>[4]) {\n"
               "  atomic_add(C[0 :+ 1, 0 :+ 64], colsum(X[0 :+ 16, 0 :+ 64]))\n"
               "  atomic_add(C[0, 3], 1.5)\n"
               "  atomic_add(I[ctx.block.x], 1)\n"
               "}\n");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  let t = atomic_add(C[0 :+ 8], 1.0)\n}\n",
                  "atomic_add gives back one element's old value: index every dim of 'C' with a point, got "
                  "tile<f32>[8]");
  expect_diag_has("kernel k(C: tensor<f32>[N], Y: tensor<f32>[N]) {\n  Y[0] = atomic_add(C[0], 1.0) + 1.0\n}\n",
                  "atomic_add changes a tensor, so it is a statement of its own or the whole initializer of a let");
  expect_diag_has("kernel k(C: tensor<bf16>[N]) {\n  atomic_add(C[0 :+ 8], 1.0)\n}\n",
                  "atomic_add adds into f32, f64, f16, i32 or i64 elements; 'C' holds bf16");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  var t: tile<f32>[8] = 0.0\n  atomic_add(t[0 :+ 8], 1.0)\n}\n",
                  "atomic_add adds into a slice of a tensor parameter");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  atomic_add(C[0 :+ 8], C[0 :+ 16])\n}\n", "atomic_add");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  atomic_add(C[0 :+ 8])\n}\n", "atomic_add");
}

/* The atomics that give the old value back and Phobos's forms naming the
 * tensor (spec 9.6), grid_barrier (9.8) */
Test(sema, atomics_with_values_and_grid_barrier) {
  expect_clean("@persistent\n@grid(4)\n"
               "kernel k(C: tensor<i32>[4], L: tensor<i64>[N, 1], F: tensor<f64>[2], Bar: tensor<i32>[2, 1]) {\n"
               "  let t = atomic_add(C, 0, 1)\n"
               "  let u = atomic_add(C[1], t)\n"
               "  atomic_add(C, 2, u)\n"
               "  let o = atomic_cas(L, ctx.block.x, 0, 5)\n"
               "  atomic_cas(L[0, 0], o, 6)\n"
               "  let f = atomic_add(F[0], 0.5)\n"
               "  grid_barrier(Bar)\n"
               "}\n");
  expect_diag_has("kernel k(C: tensor<f16>[N]) {\n  let t = atomic_add(C[0], 1.0)\n}\n",
                  "atomic_add gives back the old value of i32, i64, f32 or f64 elements; 'C' holds f16");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  let t = atomic_cas(C[0], 1.0, 2.0)\n}\n",
                  "atomic_cas works on i32 or i64 elements; 'C' holds f32");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  let t = atomic_cas(C[0 :+ 2], 1, 2)\n}\n",
                  "atomic_cas works on one element: index every dim of 'C' with a point, got tile<i32>[2]");
  expect_diag_has("kernel k(C: tensor<i32>[M, N]) {\n  let t = atomic_add(C, 0, 1)\n}\n",
                  "atomic_add names a tensor of rank 1 or an [N, 1] column; 'C' is tensor<i32>[M, N]");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  var x: tile<i32>[4] = 0\n  let t = atomic_add(x, 0, 1)\n}\n",
                  "the first argument of atomic_add names a tensor parameter: atomic_add(Cnt, i, v)");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  let t = atomic_add(C, 0.5, 1)\n}\n",
                  "the index of atomic_add must be an integer scalar, got f32");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  let t = atomic_cas(C, 0, 1, C[0 :+ 4])\n}\n",
                  "atomic_cas's operands are numeric scalars, got tile<i32>[4]");
  expect_diag_has("kernel k(C: tensor<i32>[N]) {\n  let t = atomic_cas(C, 0, 1, 5000000000)\n}\n",
                  "the value 5000000000 does not fit in i32");
  expect_diag_has("kernel k(B: tensor<f32>[2]) {\n  grid_barrier(B)\n}\n",
                  "grid_barrier counts in an i32 tensor; 'B' holds f32");
  expect_diag_has("kernel k(B: tensor<i32>[1]) {\n  grid_barrier(B)\n}\n",
                  "grid_barrier needs two elements (the arrivals and the generation); 'B' has 1");
  expect_diag_has("kernel k(B: tensor<i32>[2]) {\n  grid_barrier(B[0])\n}\n",
                  "the first argument of grid_barrier names a tensor parameter: grid_barrier(Bar), Bar: tensor<i32>[2]");
  expect_diag_has("kernel k(B: tensor<i32>[2]) {\n  let x = grid_barrier(B)\n}\n",
                  "grid_barrier waits and gives nothing back, so it is a statement of its own");
  expect_diag_has("kernel k(B: tensor<i32>[2]) {\n  grid_barrier(B, B)\n}\n", "grid_barrier takes 1 argument, got 2");
  expect_diag_has("@persistent(2)\nkernel k(B: tensor<i32>[2]) {\n  grid_barrier(B)\n}\n",
                  "@persistent takes no arguments");
}

/* qdot_t over a K known at launch (spec 9.7): four slices with ':' over K */
Test(sema, qdot_over_a_dynamic_k) {
  const char *sig = "kernel k(A: tensor<i8>[M, K], AS: tensor<f32>[M, KB], W: tensor<i8>[N, K], WS: tensor<f32>[N, KB], "
                    "C: tensor<f32>[4, 16]) {\n";
  char src[1024];
  snprintf(src, sizeof src, "%s  C[0 :+ 4, 0 :+ 16] = qdot_t(A[0 :+ 4, :], AS[0 :+ 4, :], W[0 :+ 16, :], WS[0 :+ 16, :])\n}\n", sig);
  expect_clean(src);
  snprintf(src, sizeof src, "%s  C[0 :+ 4, 0 :+ 16] = qdot_t(A[0 :+ 4, :], AS[0 :+ 4, 0 :+ 4], W[0 :+ 16, :], WS[0 :+ 16, :])\n}\n", sig);
  expect_diag_has(src, "qdot_t over a K known at launch takes four tensor slices whose last subscript is ':' over that dim");
  snprintf(src, sizeof src, "%s  C[0 :+ 4, 0 :+ 16] = qdot_t(A[0 :+ 4, :], AS[0 :+ 2, :], W[0 :+ 16, :], WS[0 :+ 16, :])\n}\n", sig);
  expect_diag_has(src, "qdot_t: the scales' rows must be a's and w's (4 and 16), got 2 and 16");
  snprintf(src, sizeof src, "%s  C[0 :+ 4, 0 :+ 16] = qdot_t(AS[0 :+ 4, :], AS[0 :+ 4, :], W[0 :+ 16, :], WS[0 :+ 16, :])\n}\n", sig);
  expect_diag_has(src, "qdot_t contracts two i8 tiles, got f32 and i8");
}

/* barrier() (spec 10.6): a statement, no arguments */
Test(sema, barrier) {
  expect_clean("kernel k(C: tensor<f32>[N]) {\n  C[0 :+ 8] = C[0 :+ 8] * 2.0\n  barrier()\n}\n");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  let b = barrier()\n}\n",
                  "barrier() waits and gives nothing back, so it is a statement of its own");
  expect_diag_has("kernel k(C: tensor<f32>[N]) {\n  barrier(1)\n}\n", "barrier takes 0 arguments, got 1");
}

/* qdot_t and qmma_t (spec 9.7): operand types and shapes */
Test(sema, qdot_and_qmma) {
  expect_clean("kernel k(A: tensor<i8>[M, K], S: tensor<f32>[M, KB], W: tensor<i8>[N, K], T: tensor<f32>[KB, N],\n"
               "         C: tensor<f32>[M, N]) {\n"
               "  C[0 :+ 16, 0 :+ 8] = qdot_t(A[0 :+ 16, 0 :+ 64], S[0 :+ 16, 0 :+ 2], W[0 :+ 8, 0 :+ 64],\n"
               "                             T[0 :+ 8, 0 :+ 2]) + qmma_t(A[0 :+ 16, 0 :+ 64], S[0 :+ 16, 0 :+ 2],\n"
               "                             W[0 :+ 8, 0 :+ 64], T[0 :+ 2, 0 :+ 8])\n"
               "}\n");
  expect_diag_has("kernel k(A: tensor<f32>[M, K], S: tensor<f32>[M, KB]) {\n"
                  "  let c = qdot_t(A[0 :+ 16, 0 :+ 64], S[0 :+ 16, 0 :+ 2], A[0 :+ 8, 0 :+ 64], S[0 :+ 8, 0 :+ 2])\n}\n",
                  "qdot_t contracts two i8 tiles, got f32 and f32");
  expect_diag_has("kernel k(A: tensor<i8>[M, K], S: tensor<f32>[M, KB]) {\n"
                  "  let c = qdot_t(A[0 :+ 16, 0 :+ 48], S[0 :+ 16, 0 :+ 2], A[0 :+ 8, 0 :+ 48], S[0 :+ 8, 0 :+ 2])\n}\n",
                  "qdot_t: K is 48; it must be a whole number of Q8_0 blocks of 32");
  expect_diag_has("kernel k(A: tensor<i8>[M, K], S: tensor<f32>[M, KB]) {\n"
                  "  let c = qdot_t(A[0 :+ 16, 0 :+ 64], S[0 :+ 16, 0 :+ 3], A[0 :+ 8, 0 :+ 64], S[0 :+ 8, 0 :+ 2])\n}\n",
                  "qdot_t: the scales must be [16, 2] and [8, 2]");
  expect_diag_has("kernel k(A: tensor<i8>[M, K], S: tensor<f32>[M, KB]) {\n"
                  "  let c = qmma_t(A[0 :+ 12, 0 :+ 64], S[0 :+ 12, 0 :+ 2], A[0 :+ 8, 0 :+ 64], S[0 :+ 2, 0 :+ 8])\n}\n",
                  "qmma_t: M and N must be multiples of 8, got 12 and 8");
}
