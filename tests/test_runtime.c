/* test_runtime.c: libphobos without a GPU: statuses, the "no CUDA driver"
 * path, manifest parsing (good and hostile), argument binding and grid
 * evaluation. tests/gpu/ covers what needs the device. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"

static char *write_temp(const char *text, const char *suffix) {
  static char path[256];
  snprintf(path, sizeof path, "/tmp/phobos_rt_XXXXXX%s", suffix);
  int fd = mkstemps(path, (int)strlen(suffix));
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  return path;
}

static const char *good_manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: q8.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: q8.cubin\n"
    "kernels:\n"
    "- name: q8_matvec\n"
    "  params:\n"
    "  - {name: A, kind: tensor, dtype: f32, dims: [1, K], written: false}\n"
    "  - {name: W, kind: tensor, dtype: i8, dims: [K, N], written: false}\n"
    "  - {name: S, kind: tensor, dtype: f32, dims: [KB, N], written: false}\n"
    "  - {name: C, kind: tensor, dtype: f32, dims: [1, N], written: true}\n"
    "  - {name: scale, kind: scalar, dtype: f32}\n"
    "  variants:\n"
    "  - entry: q8_matvec__v0\n"
    "    constants: {TILE_N: 64, BLK: 32}\n"
    "    pinned: {}\n"
    "    grid: [\"N 64 cdiv\", \"1\"]\n"
    "    threads: 256\n"
    "    shared_bytes: 128\n"
    "    dynamic_shared: false\n";

static Manifest load_ok(const char *text) {
  char err[1024];
  Manifest m;
  bool ok = mf_load(write_temp(text, ".yaml"), &m, err, sizeof err);
  cr_assert(ok, "%s", err);
  return m;
}


static void expect_bad(const char *text, const char *want) {
  char err[1024];
  Manifest m;
  cr_assert_not(mf_load(write_temp(text, ".yaml"), &m, err, sizeof err), "accepted: %s", text);
  cr_assert(strstr(err, want), "message '%s' lacks '%s'", err, want);
}

static char *replaced(const char *from, const char *to) {
  const char *at = strstr(good_manifest, from);
  cr_assert_not_null(at, "test bug: '%s' not in the manifest", from);
  char *s = malloc(strlen(good_manifest) + strlen(to) + 1);
  size_t pre = (size_t)(at - good_manifest);
  memcpy(s, good_manifest, pre);
  strcpy(s + pre, to);
  strcat(s, at + strlen(from));
  return s;
}

Test(runtime, status_names) {
  cr_assert_str_eq(phobos_status_name(PHOBOS_OK), "PHOBOS_OK");
  cr_assert_str_eq(phobos_status_name(PHOBOS_NO_DRIVER), "PHOBOS_NO_DRIVER");
  cr_assert_str_eq(phobos_status_name(PHOBOS_INVALID), "PHOBOS_INVALID");
  cr_assert_str_eq(phobos_status_name((phobos_status)999), "PHOBOS_UNKNOWN_STATUS");
}

Test(runtime, no_driver_is_a_status_not_a_crash) {
  setenv("PHOBOS_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  phobos_context *ctx = NULL;
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_NO_DRIVER);
  cr_assert_not_null(ctx);
  cr_assert(strstr(phobos_last_error(ctx), "no CUDA driver"), "%s", phobos_last_error(ctx));
  phobos_module *m = NULL;
  cr_assert_eq(phobos_module_load(ctx, "x.cubin", &m), PHOBOS_NO_DRIVER);
  cr_assert_null(m);
  phobos_context_destroy(ctx);
}

Test(runtime, null_handles) {
  cr_assert_eq(phobos_context_create(0, NULL), PHOBOS_INVALID);
  cr_assert_eq(phobos_launch(NULL, NULL, 0, NULL), PHOBOS_INVALID);
  cr_assert_str_eq(phobos_last_error(NULL), "no context (NULL)");
  phobos_context_destroy(NULL);
  phobos_module_unload(NULL);
}

Test(runtime, manifest_parses) {
  Manifest m = load_ok(good_manifest);
  cr_assert_eq(m.nkernels, 1);
  MfKernel *k = &m.kernels[0];
  cr_assert_str_eq(k->name, "q8_matvec");
  cr_assert_eq(k->nparams, 5);
  cr_assert_eq(k->params[1].dtype, PHOBOS_I8);
  cr_assert_str_eq(k->params[1].dimname[1], "N");
  cr_assert_eq(k->params[0].dim[0], 1);
  cr_assert(k->params[3].written);
  cr_assert_eq(k->variants[0].ngrid, 2);
  cr_assert_eq(k->variants[0].threads, 256);
  cr_assert_str_eq(k->variants[0].const_name[0], "TILE_N");
  cr_assert_not(k->variants[0].dependent_launch); /* absent: launched plainly */
  mf_free(&m);
}

Test(runtime, manifest_hostile_inputs) {
  expect_bad("", "a manifest is a YAML mapping");
  expect_bad("[1, 2", "not valid YAML");
  expect_bad("phobos_manifest: 2\n", "newer than this runtime reads");
  expect_bad(replaced("compiler: phobosc 0.1.0\n", ""), "'compiler' is missing");
  expect_bad(replaced("dtype: i8", "dtype: i7"), "'dtype' must be one of");
  expect_bad(replaced("kind: tensor, dtype: f32, dims: [1, K]", "kind: matrix, dtype: f32, dims: [1, K]"), "'kind' must be tensor or scalar");
  expect_bad(replaced("dims: [K, N]", "dims: [K, -3]"), "neither a name nor a positive integer");
  expect_bad(replaced("dims: [K, N]", "dims: [1, 2, 3, 4, 5, 6]"), "must list 1 to 5 extents");
  expect_bad(replaced("\"N 64 cdiv\"", "\"N cdiv\""), "lacks operands");
  expect_bad(replaced("\"N 64 cdiv\"", "\"N 64\""), "does not leave one value");
  expect_bad(replaced("\"N 64 cdiv\"", "\"M 64 cdiv\""), "uses 'M', which is no tensor dim");
  expect_bad(replaced("\"N 64 cdiv\"", "\"N $ cdiv\""), "bad token '$'");
  expect_bad(replaced("threads: 256", "threads: 100"), "not a multiple of 32");
  expect_bad(replaced("threads: 256", "threads: 4096"), "must be from 32 to 1024");
  expect_bad(replaced("threads: 256", "threads: many"), "'threads' must be an integer");
  expect_bad(replaced("dynamic_shared: false", "dynamic_shared: maybe"), "must be true or false");
  expect_bad(replaced("dynamic_shared: false", "dynamic_shared: false\n    dependent_launch: 2"), "must be true or false");
  expect_bad(replaced("    constants: {TILE_N: 64, BLK: 32}\n", "    constants: [64]\n"), "'constants' must be a mapping");
  expect_bad(replaced("  - entry: q8_matvec__v0\n", "  - notentry: x\n"), "'entry' is missing");
}

Test(runtime, manifest_missing_file) {
  char err[512];
  Manifest m;
  cr_assert_not(mf_load("/nonexistent/x.yaml", &m, err, sizeof err));
  cr_assert(strstr(err, "cannot open manifest /nonexistent/x.yaml"), "%s", err);
}

/* ---- binding */

static phobos_arg args[5];

static void q8_args(int64_t K, int64_t N) {
  args[0] = phobos_tensor_arg(0x10000, PHOBOS_F32, 2, (int64_t[]){1, K});
  args[1] = phobos_tensor_arg(0x20000, PHOBOS_I8, 2, (int64_t[]){K, N});
  args[2] = phobos_tensor_arg(0x30000, PHOBOS_F32, 2, (int64_t[]){K / 32, N});
  args[3] = phobos_tensor_arg(0x40000, PHOBOS_F32, 2, (int64_t[]){1, N});
  args[4] = phobos_float_arg(0.5);
}

static void expect_bind(phobos_status want, const char *msg) {
  Manifest m = load_ok(good_manifest);
  RtBinding b;
  char err[600] = "";
  phobos_status s = rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err);
  cr_assert_eq(s, want, "got %s: %s", phobos_status_name(s), err);
  if (msg) cr_assert(strstr(err, msg), "message '%s' lacks '%s'", err, msg);
  mf_free(&m);
}

Test(runtime, bind_ok_and_grid) {
  q8_args(4096, 14336);
  Manifest m = load_ok(good_manifest);
  RtBinding b;
  char err[600];
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_OK, "%s", err);
  cr_assert_eq(b.ndims, 3); /* K, N, KB */
  int64_t grid[3], max[3] = {2147483647, 65535, 65535};
  cr_assert(rt_grid(&m.kernels[0].variants[0], &b, max, grid, err, sizeof err), "%s", err);
  cr_assert_eq(grid[0], 224);
  cr_assert_eq(grid[1], 1);
  cr_assert_eq(grid[2], 1);
  int64_t small[3] = {100, 1, 1};
  cr_assert_not(rt_grid(&m.kernels[0].variants[0], &b, small, grid, err, sizeof err));
  cr_assert(strstr(err, "grid axis x is 224, beyond the device's 100"), "%s", err);
  mf_free(&m);
}

Test(runtime, bind_errors_name_parameter_dim_and_values) {
  q8_args(4096, 14336);
  args[1].tensor.shape[0] = 2048;
  expect_bind(PHOBOS_BAD_SHAPE, "tensor 'W' dim 0 (K) is 2048, but K = 4096 from tensor 'A'");
  q8_args(4096, 14336);
  args[0].tensor.shape[0] = 2;
  expect_bind(PHOBOS_BAD_SHAPE, "tensor 'A' dim 0 must be 1, got 2");
  q8_args(4096, 14336);
  args[3].tensor.shape[1] = 0;
  expect_bind(PHOBOS_BAD_SHAPE, "tensor 'C' dim 1 (N) is 0; extents must be positive");
  q8_args(4096, 14336);
  args[3].tensor.shape[1] = -5;
  expect_bind(PHOBOS_BAD_SHAPE, "is -5; extents must be positive");
  q8_args(4096, 14336);
  args[2].tensor.data = 0;
  expect_bind(PHOBOS_BAD_POINTER, "tensor 'S': the data pointer is NULL");
  q8_args(4096, 14336);
  args[0].tensor.data = 0x10002;
  expect_bind(PHOBOS_BAD_POINTER, "tensor 'A': data pointer 0x10002 is not aligned to its 4-byte elements");
  q8_args(4096, 14336);
  args[1].tensor.dtype = PHOBOS_U8;
  expect_bind(PHOBOS_BAD_ARGUMENT, "tensor 'W' must hold i8, got u8");
  q8_args(4096, 14336);
  args[1].tensor.rank = 3;
  expect_bind(PHOBOS_BAD_SHAPE, "tensor 'W' must have rank 2, got 3");
  q8_args(4096, 14336);
  args[4] = phobos_int_arg(3); /* an int for a float scalar converts */
  expect_bind(PHOBOS_OK, NULL);
  args[4] = phobos_bool_arg(1);
  expect_bind(PHOBOS_BAD_ARGUMENT, "argument 4 ('scale') is a f32 scalar, got a bool");
  q8_args(4096, 14336);
  args[2] = phobos_float_arg(1.0);
  expect_bind(PHOBOS_BAD_ARGUMENT, "argument 2 ('S') must be a tensor, got a float");
  q8_args(4096, 14336);
  args[1].tensor.strides[0] = 9999;
  expect_bind(PHOBOS_BAD_ARGUMENT, "tensor 'W' dim 0 has stride 9999");
}

Test(runtime, bind_wrong_count) {
  q8_args(64, 64);
  Manifest m = load_ok(good_manifest);
  RtBinding b;
  char err[600];
  cr_assert_eq(rt_bind(&m.kernels[0], args, 3, &b, err, sizeof err), PHOBOS_BAD_ARGUMENT);
  cr_assert(strstr(err, "kernel 'q8_matvec' takes 5 arguments, got 3"), "%s", err);
  mf_free(&m);
}

Test(runtime, grid_zero_and_no_grid) {
  q8_args(64, 64);
  char *text = replaced("\"N 64 cdiv\"", "\"N 64 /\"");
  Manifest m = load_ok(text);
  RtBinding b;
  char err[600];
  args[1].tensor.shape[1] = args[2].tensor.shape[1] = args[3].tensor.shape[1] = 10; /* N = 10: 10 / 64 = 0 */
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_OK, "%s", err);
  int64_t grid[3];
  cr_assert_not(rt_grid(&m.kernels[0].variants[0], &b, NULL, grid, err, sizeof err));
  cr_assert(strstr(err, "grid axis x evaluates to 0; nothing to launch"), "%s", err);
  m.kernels[0].variants[0].ngrid = 0;
  cr_assert_not(rt_grid(&m.kernels[0].variants[0], &b, NULL, grid, err, sizeof err));
  cr_assert(strstr(err, "has no @grid: launch it with phobos_launch_grid"), "%s", err);
  mf_free(&m);
  free(text);
}

Test(runtime, grid_overflow) {
  q8_args(64, 64);
  char *text = replaced("\"N 64 cdiv\"", "\"N 9223372036854775807 *\"");
  Manifest m = load_ok(text);
  RtBinding b;
  char err[600];
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_OK, "%s", err);
  int64_t grid[3];
  cr_assert_not(rt_grid(&m.kernels[0].variants[0], &b, NULL, grid, err, sizeof err));
  cr_assert(strstr(err, "grid axis x overflows"), "%s", err);
  mf_free(&m);
  free(text);
}

Test(runtime, variant_fits_pinned_dims) {
  char *text = replaced("    pinned: {}\n", "    pinned: {N: 128}\n");
  Manifest m = load_ok(text);
  RtBinding b = {.ndims = 1, .name = {"N"}, .value = {128}};
  cr_assert(rt_variant_fits(&m.kernels[0].variants[0], &b));
  b.value[0] = 64;
  cr_assert_not(rt_variant_fits(&m.kernels[0].variants[0], &b));
  mf_free(&m);
  free(text);
}

/* The manifest phobosc writes for PROJECT_ROOT/source, loaded (the file
 * removed once read). */
static Manifest compiled_manifest_with(const char *flags, const char *source) {
  char cmd[4096], path[] = "/tmp/phobos_mf_XXXXXX.yaml", err[1024];
  int fd = mkstemps(path, 5);
  cr_assert(fd >= 0);
  close(fd);
  snprintf(cmd, sizeof cmd, "%s --emit=manifest %s -o %s %s/%s", getenv("PHOBOSC"), flags, path, getenv("PROJECT_ROOT"),
           source);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  Manifest m;
  bool ok = mf_load(path, &m, err, sizeof err);
  unlink(path);
  cr_assert(ok, "%s", err);
  return m;
}

static Manifest compiled_manifest(const char *source) { return compiled_manifest_with("", source); }

Test(runtime, variant_fits_dims_at_most) {
  char *text = replaced("    pinned: {}\n", "    pinned: {}\n    dims_at_most: {N: 128}\n");
  Manifest m = load_ok(text);
  const MfVariant *v = &m.kernels[0].variants[0];
  cr_assert_eq(v->nat_most, 1);
  RtBinding b = {.ndims = 2, .name = {"K", "N"}, .value = {4096, 128}};
  cr_assert(rt_variant_fits(v, &b), "N 128 <= 128");
  b.value[1] = 1;
  cr_assert(rt_variant_fits(v, &b));
  b.value[1] = 129;
  cr_assert_not(rt_variant_fits(v, &b), "N 129 > 128");
  mf_free(&m);
  free(text);
  text = replaced("    pinned: {}\n", "    pinned: {}\n    dims_at_most: {N: many}\n");
  expect_bad(text, "'dims_at_most' maps names to integers");
  free(text);
}

/* general_strides: true needs every tensor to take strides (its ABI adds
 * the last one); a manifest from before strides cannot have such an entry */
Test(runtime, a_general_strides_entry_needs_strided_tensors) {
  char *text = replaced("    dynamic_shared: false\n", "    dynamic_shared: false\n    general_strides: true\n");
  expect_bad(text, "variant 'q8_matvec__v0' takes general strides, but tensor 'A' takes none");
  free(text);
  text = replaced("    dynamic_shared: false\n", "    dynamic_shared: false\n    general_strides: maybe\n");
  expect_bad(text, "general_strides");
  free(text);
}

Test(runtime, compiler_writes_one_pass_copies_with_their_bound) {
  Manifest m = compiled_manifest_with("--no-aligned-rows --no-occupancy-copies --no-l2-prefetch --no-cluster-rows", "spec/conformance/one_pass.ph");
  const MfKernel *k = &m.kernels[0]; /* softmax_rows: 9 variants, each with its copy */
  cr_assert_eq(k->nvariants, 28); /* and its copy over two blocks; the general-strides copy last */
  cr_assert_str_eq(k->variants[27].entry, "softmax_rows__v0_strided");
  const MfVariant *v = &k->variants[0], *once = &k->variants[1], *twice = &k->variants[2];
  cr_assert_str_eq(v->entry, "softmax_rows__v0");
  cr_assert_eq(v->nat_most, 0);
  cr_assert_str_eq(once->entry, "softmax_rows__v0_once");
  cr_assert_eq(once->nat_most, 1);
  cr_assert_str_eq(once->at_most_name[0], "N");
  cr_assert_eq(once->at_most_value[0], 64); /* BN of variant 0 */
  RtBinding b = {.ndims = 2, .name = {"R", "N"}, .value = {7, 65}};
  cr_assert(rt_variant_fits(v, &b));
  cr_assert_not(rt_variant_fits(once, &b));
  /* each loop runs exactly twice: 64 < N <= 128 */
  cr_assert_str_eq(twice->entry, "softmax_rows__v0_twice");
  cr_assert(twice->nat_most == 1 && twice->nabove == 1);
  cr_assert_str_eq(twice->above_name[0], "N");
  cr_assert_eq(twice->at_most_value[0], 128);
  cr_assert_eq(twice->above_value[0], 64);
  cr_assert(rt_variant_fits(twice, &b), "N 65");
  b.value[1] = 128;
  cr_assert(rt_variant_fits(twice, &b), "N 128");
  b.value[1] = 129;
  cr_assert_not(rt_variant_fits(twice, &b), "N 129: three blocks");
  b.value[1] = 64;
  cr_assert_not(rt_variant_fits(twice, &b), "N 64: one block");
  cr_assert(rt_variant_fits(once, &b));
  /* its last pass stores Y's first block before it reads X's second: it
   * reads X ahead, so Y must not overlap X */
  cr_assert_eq(twice->apart, 1u, "X, parameter 0");
  cr_assert_eq(once->apart, 0u);
  int64_t shape[2] = {7, 100};
  phobos_arg args[2] = {phobos_tensor_arg(1 << 20, PHOBOS_F32, 2, shape), phobos_tensor_arg(2 << 20, PHOBOS_F32, 2, shape)};
  cr_assert_eq(rt_apart_misfit(k, twice, args), -1);
  args[1].tensor.data = (1 << 20) + 2796; /* Y's first element is X's last */
  cr_assert_eq(rt_apart_misfit(k, twice, args), 0);
  cr_assert_eq(rt_apart_misfit(k, v, args), -1, "the variant it came from reads in the loops' order");
  args[1].tensor.data = 1 << 20; /* in place */
  cr_assert_eq(rt_apart_misfit(k, twice, args), 0);
  args[1].tensor.data = (1 << 20) + 2800; /* just past X */
  cr_assert_eq(rt_apart_misfit(k, twice, args), -1);
  mf_free(&m);
  char *text = replaced("    pinned: {}\n", "    pinned: {}\n    apart: [Q]\n");
  expect_bad(text, "apart names 'Q', which is no tensor");
  free(text);
  text = replaced("    pinned: {}\n", "    pinned: {}\n    dims_above: {N: x}\n");
  expect_bad(text, "'dims_above' maps names to integers");
  free(text);
}

Test(runtime, aligned_rows_copies_fit_only_aligned_tensors) {
  Manifest m = compiled_manifest_with("--no-occupancy-copies --no-l2-prefetch --no-cluster-rows", "spec/conformance/one_pass.ph");
  const MfKernel *k = &m.kernels[0]; /* softmax_rows: X [R, N] f32, Y written */
  const MfVariant *v = NULL, *al = NULL;
  int ncopies = 0;
  for (int i = 0; i < k->nvariants; i++) {
    const MfVariant *x = &k->variants[i];
    size_t n = strlen(x->entry);
    bool copy = n > 3 && !strcmp(x->entry + n - 3, "_al");
    cr_assert_eq(copy, x->aligned_rows != 0, "%s", x->entry);
    ncopies += copy;
    if (copy && !al) al = x, v = &k->variants[i - 3]; /* after the variant and its one-pass copies */
  }
  cr_assert(al && ncopies > 0 && ncopies < k->nvariants / 2, "%d aligned copies of %d", ncopies, k->nvariants);
  cr_assert_eq(strncmp(al->entry, v->entry, strlen(v->entry)), 0, "%s of %s", al->entry, v->entry);
  cr_assert_eq(al->aligned_rows, 3u, "X and Y: parameters 0 and 1");
  int64_t shape[2] = {7, 1000};
  phobos_arg args[2] = {phobos_tensor_arg(1 << 20, PHOBOS_F32, 2, shape), phobos_tensor_arg(2 << 20, PHOBOS_F32, 2, shape)};
  cr_assert_eq(rt_rows_misfit(k, al, args), -1, "4000-byte rows at aligned bases");
  args[1].tensor.data += 4;
  cr_assert_eq(rt_rows_misfit(k, al, args), 1, "Y's base off 16 bytes");
  cr_assert_eq(rt_rows_misfit(k, v, args), -1, "a variant that is no copy takes any");
  args[1].tensor.data -= 4;
  shape[1] = 1001;
  args[0] = phobos_tensor_arg(1 << 20, PHOBOS_F32, 2, shape);
  cr_assert_eq(rt_rows_misfit(k, al, args), 0, "X's rows of 4004 bytes");
  mf_free(&m);
  const char *bad_name = "    pinned: {}\n    aligned_rows: [Q]\n";
  char *text = replaced("    pinned: {}\n", bad_name);
  expect_bad(text, "aligned_rows names 'Q', which is no tensor");
  free(text);
  text = replaced("    pinned: {}\n", "    pinned: {}\n    aligned_rows: {A: 1}\n");
  expect_bad(text, "'aligned_rows' must list tensor parameters");
  free(text);
}

Test(runtime, staged_rows_copies_fit_by_shared_memory_alignment_and_aliasing) {
  Manifest m = compiled_manifest_with("--staged-rows --no-aligned-rows --no-occupancy-copies --no-l2-prefetch --no-cluster-rows", "spec/conformance/one_pass.ph");
  cr_assert_eq(m.kernels[0].nvariants, 37); /* 9 variants, each with its one-pass and staged-rows copies; a general-strides copy */
  const MfKernel *k = &m.kernels[0]; /* softmax_rows: X [R, N] f32, Y written */
  const MfVariant *v = &k->variants[0], *st = &k->variants[3];
  cr_assert_str_eq(st->entry, "softmax_rows__v0_staged");
  cr_assert(st->staged && !v->staged);
  cr_assert_eq(st->stage_param, 0);
  cr_assert_eq(st->stage_rows, 1);
  cr_assert_eq(st->stage_block, 64); /* BR 1, BN 64 */
  RtBinding b = {.ndims = 2, .name = {"R", "N"}, .value = {7, 1000}};
  /* the plan's bytes (static here), then 1000 f32 rounded to 16, 64, 8 for each of 16 blocks */
  cr_assert_eq(rt_dynamic_shared(k, st, &b), 4000 + 64 + 8 * 16);
  cr_assert_eq(rt_dynamic_shared(k, v, &b), v->dynamic_shared ? v->shared_bytes : 0);
  int64_t shape[2] = {7, 1000};
  phobos_arg args[2] = {phobos_tensor_arg(1 << 20, PHOBOS_F32, 2, shape), phobos_tensor_arg(2 << 20, PHOBOS_F32, 2, shape)};
  cr_assert(rt_stage_fits(k, st, args, &b, 232448));
  cr_assert(rt_stage_fits(k, v, args, &b, 0), "a variant without staged rows always fits");
  cr_assert_not(rt_stage_fits(k, st, args, &b, 4000), "more shared memory than the device's");
  args[0].tensor.data += 8;
  cr_assert_not(rt_stage_fits(k, st, args, &b, 232448), "a base off 16 bytes");
  args[0].tensor.data -= 8;
  args[1].tensor.data = (1 << 20) + 3996; /* Y's first element is X's last */
  cr_assert_not(rt_stage_fits(k, st, args, &b, 232448), "Y overlaps X");
  args[1].tensor.data = (1 << 20) + 28000; /* just past X's 28000 bytes */
  cr_assert(rt_stage_fits(k, st, args, &b, 232448));
  b.value[1] = 60000; /* 240000 bytes of rows */
  cr_assert_not(rt_stage_fits(k, st, args, &b, 232448));
  mf_free(&m);
}

Test(runtime, compiler_manifest_round_trips) {
  /* what phobosc writes, the runtime reads */
  char err[1024];
  Manifest m = compiled_manifest("examples/gqa_attention/gqa_attention.ph");
  cr_assert_eq(m.kernels[0].nvariants, 4); /* BQ 128, 64 by BK 64, 32; a kernel with a dot: no general strides */
  cr_assert_not(m.kernels[0].general_strides);
  MfVariant *v = &m.kernels[0].variants[1];
  cr_assert_str_eq(v->entry, "gqa_attention__v1");
  cr_assert(v->dynamic_shared);
  cr_assert(v->dependent_launch); /* sm_90a entries begin with griddepcontrol.wait */
  cr_assert_eq(v->threads, 256); /* BQ 128: two warpgroups */
  cr_assert_eq(v->npinned, 1);
  cr_assert_str_eq(v->pinned_name[0], "D");
  cr_assert(m.kernels[0].params[3].written);
  cr_assert_not(m.kernels[0].params[0].written);
  RtBinding b = {.ndims = 4, .name = {"B", "S", "HQ", "D"}, .value = {2, 1000, 28, 128}};
  int64_t grid[3];
  cr_assert(rt_grid(v, &b, NULL, grid, err, sizeof err), "%s", err);
  cr_assert_eq(grid[0], 28); /* a CTA a query head */
  cr_assert_eq(grid[1], 8);  /* cdiv(1000, 128) */
  cr_assert_eq(grid[2], 2);
  mf_free(&m);
}

Test(runtime, truncated_and_foreign_cubins_are_refused_before_the_driver) {
  char path[4096], why[200];
  snprintf(path, sizeof path, "%s/../build/tests/gpu/kernels.cubin", getenv("TEST_SRCDIR"));
  FILE *f = fopen(getenv("GPU_CUBIN") ? getenv("GPU_CUBIN") : path, "rb");
  if (!f) cr_skip_test("no cubin built here (nvcc missing)");
  static unsigned char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf, f);
  fclose(f);
  cr_assert(rt_elf_ok(buf, len, why, sizeof why), "%s", why);
  for (size_t cut = 64; cut < len; cut += len / 7 + 1)
    cr_assert_not(rt_elf_ok(buf, cut, why, sizeof why), "a cubin cut to %zu of %zu bytes passed", cut, len);
  cr_assert(strstr(why, "truncated"), "%s", why);
  buf[18] = 62; /* x86-64 */
  cr_assert_not(rt_elf_ok(buf, len, why, sizeof why));
  cr_assert(strstr(why, "not CUDA"), "%s", why);
  cr_assert_not(rt_elf_ok((const unsigned char *)"hello", 5, why, sizeof why));
}

Test(runtime, integer_scalars_must_fit_their_type) {
  char *text = replaced("{name: scale, kind: scalar, dtype: f32}", "{name: scale, kind: scalar, dtype: i8}");
  Manifest m = load_ok(text);
  q8_args(64, 64);
  RtBinding b;
  char err[600];
  args[4] = phobos_int_arg(127);
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_OK, "%s", err);
  args[4] = phobos_int_arg(300);
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_BAD_ARGUMENT);
  cr_assert(strstr(err, "argument 4 ('scale') is 300, outside i8 (-128 to 127)"), "%s", err);
  mf_free(&m);
  free(text);
}

#define TMAP_LINE "    dynamic_shared: false\n    tensormaps:\n    - {param: A, rank: 2, box: [1, 32], dtype: f32, swizzle: none, fill: zero}\n"

Test(runtime, manifest_tensor_maps) {
  Manifest m = load_ok(replaced("    dynamic_shared: false\n", TMAP_LINE));
  MfVariant *v = &m.kernels[0].variants[0];
  cr_assert_eq(v->ntmaps, 1);
  cr_assert_eq(v->tmaps[0].param, 0);
  cr_assert_eq(v->tmaps[0].rank, 2);
  cr_assert_eq(v->tmaps[0].box[0], 1);
  cr_assert_eq(v->tmaps[0].box[1], 32);
  cr_assert_eq(v->tmaps[0].dtype, PHOBOS_F32);
  cr_assert_eq(v->tmaps[0].swizzle, 0);
  mf_free(&m);
  char *sw = replaced("    dynamic_shared: false\n", TMAP_LINE), *at = strstr(sw, "none");
  cr_assert(at);
  char text128[4096];
  snprintf(text128, sizeof text128, "%.*s128B%s", (int)(at - sw), sw, at + 4);
  free(sw);
  m = load_ok(text128);
  cr_assert_eq(m.kernels[0].variants[0].tmaps[0].swizzle, 128);
  mf_free(&m);
  /* what a map may not say */
  const char *bad[][2] = {
      {"param: A,", "param: scale,"}, {"param: A,", "param: nope,"}, {"box: [1, 32]", "box: [1, 300]"},
      {"box: [1, 32]", "box: [32]"},  {"swizzle: none", "swizzle: 256B"}, {"dtype: f32, swizzle", "dtype: i8, swizzle"},
      {"rank: 2", "rank: 3"},         {"swizzle: none", "swizzle: 64B"},
  };
  const char *want[] = {"no tensor parameter", "no tensor parameter", "from 1 to 256", "must list 2 extents",
                        "swizzle none, 32B, 64B or 128B", "does not match", "does not match",
                        "inner box of 'A' is 128 bytes, wider than its 64B swizzle"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *with = replaced("    dynamic_shared: false\n", TMAP_LINE);
    char *at = strstr(with, bad[i][0]);
    cr_assert(at, "%s", bad[i][0]);
    char text[4096];
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - with), with, bad[i][1], at + strlen(bad[i][0]));
    expect_bad(text, want[i]);
  }
}

Test(runtime, a_kernel_over_the_parameter_table) {
  /* 27 rank-5 tensors: 162 slots, over the 160 a launch packs */
  char text[16384];
  int n = snprintf(text, sizeof text,
                   "phobos_manifest: 1\ncompiler: phobosc 0.1.0\nsource: k.ph\nsource_hash: 0123456789abcdef\n"
                   "arch: sm_90a\ncubin: k.cubin\nkernels:\n- name: many\n  params:\n");
  for (int i = 0; i < 27; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  "  - {name: T%d, kind: tensor, dtype: f32, dims: [1, 2, 3, 4, 5], written: false}\n", i);
  snprintf(text + n, sizeof text - (size_t)n,
           "  variants:\n  - entry: many__v0\n    constants: {}\n    pinned: {}\n    grid: []\n    threads: 128\n"
           "    shared_bytes: 0\n    dynamic_shared: false\n");
  expect_bad(text, "takes 162 parameter slots with its tensor maps; this runtime passes at most 160");
}

Test(runtime, compiler_tensor_maps_round_trip) {
  /* phobosc writes the maps of the staged loads it gives TMA copies */
  Manifest m = compiled_manifest("spec/conformance/sgemm_ragged.ph");
  /* TM = TN = 32: A's [32, 8] and B's [8, 32] tiles are 1 KiB, copied
   * (the 512-byte tiles of the smaller points keep the pointer path) */
  MfVariant *v = &m.kernels[0].variants[3];
  cr_assert_eq(m.kernels[0].variants[0].ntmaps, 0);
  cr_assert_eq(v->ntmaps, 2);
  cr_assert_eq(v->tmaps[0].rank, 2);
  mf_free(&m);
}

Test(runtime, element_count_overflow_is_refused) {
  /* issue 17, finding 17: five extents of 2^31 - 1 make 2^155 elements;
   * the count wrapped in int64 and the launch was accepted */
  char *text = replaced("dims: [K, N], written: false}", "dims: [K, N, P, Q, R], written: false}");
  Manifest m = load_ok(text);
  const int64_t big = INT32_MAX;
  args[0] = phobos_tensor_arg(0x10000, PHOBOS_F32, 2, (int64_t[]){1, big});
  args[1] = phobos_tensor_arg(0x20000, PHOBOS_I8, 5, (int64_t[]){big, big, big, big, big});
  args[2] = phobos_tensor_arg(0x30000, PHOBOS_F32, 2, (int64_t[]){1, big});
  args[3] = phobos_tensor_arg(0x40000, PHOBOS_F32, 2, (int64_t[]){1, big});
  args[4] = phobos_float_arg(0.5);
  RtBinding b;
  char err[600] = "";
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, sizeof err), PHOBOS_BAD_SHAPE, "%s", err);
  cr_assert(strstr(err, "tensor 'W' dim 2 (P) is 2147483647: dims 2 to 4 of [2147483647, 2147483647, 2147483647, "
                        "2147483647, 2147483647] make more than 2^63 - 1 elements"), "%s", err);
  mf_free(&m);
  free(text);
}

Test(runtime, a_kernel_over_the_parameter_bound) {
  char text[16384];
  int n = snprintf(text, sizeof text,
                   "phobos_manifest: 1\ncompiler: phobosc 0.1.0\nsource: k.ph\nsource_hash: 0123456789abcdef\n"
                   "arch: sm_90a\ncubin: k.cubin\nkernels:\n- name: many\n  params:\n");
  for (int i = 0; i < 161; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "  - {name: s%d, kind: scalar, dtype: i32}\n", i);
  snprintf(text + n, sizeof text - (size_t)n, "  variants:\n  - {entry: many__v0, grid: [], threads: 128, shared_bytes: 0}\n");
  expect_bad(text, "kernel 'many' has 161 parameters; this runtime takes at most 160");
}

/* rt_grid over good_manifest's kernel with axis x's program replaced;
 * K = N = 64 */
static bool grid_of(const char *prog, int64_t *x, char *err, size_t errlen) {
  char quoted[256];
  snprintf(quoted, sizeof quoted, "\"%s\"", prog);
  char *text = replaced("\"N 64 cdiv\"", quoted);
  Manifest m = load_ok(text);
  q8_args(64, 64);
  RtBinding b;
  cr_assert_eq(rt_bind(&m.kernels[0], args, 5, &b, err, errlen), PHOBOS_OK, "%s", err);
  int64_t grid[3];
  bool ok = rt_grid(&m.kernels[0].variants[0], &b, NULL, grid, err, errlen);
  *x = grid[0];
  mf_free(&m);
  free(text);
  return ok;
}

Test(runtime, grid_ops_that_trap_or_overflow) {
  /* issue 17, finding 2: INT64_MIN / -1 and % -1 raised SIGFPE; neg of
   * INT64_MIN and cdiv near INT64_MAX were undefined behaviour */
  char err[600];
  int64_t x;
  cr_assert_not(grid_of("-9223372036854775808 -1 /", &x, err, sizeof err));
  cr_assert(strstr(err, "kernel 'q8_matvec' variant 'q8_matvec__v0': grid axis x overflows at '/' "
                        "(-9223372036854775808 / -1) in \"-9223372036854775808 -1 /\""), "%s", err);
  cr_assert_not(grid_of("-9223372036854775808 -1 %", &x, err, sizeof err)); /* exactly 0: nothing to launch */
  cr_assert(strstr(err, "grid axis x evaluates to 0; nothing to launch (\"-9223372036854775808 -1 %\")"), "%s", err);
  cr_assert_not(grid_of("-9223372036854775808 neg", &x, err, sizeof err));
  cr_assert(strstr(err, "grid axis x overflows at 'neg' (neg -9223372036854775808)"), "%s", err);
  cr_assert_not(grid_of("-9223372036854775808 -1 cdiv", &x, err, sizeof err));
  cr_assert(strstr(err, "overflows at 'cdiv' (-9223372036854775808 cdiv -1)"), "%s", err);
  cr_assert(grid_of("9223372036854775807 2 cdiv", &x, err, sizeof err), "%s", err);
  cr_assert_eq(x, 4611686018427387904);
  cr_assert(grid_of("9223372036854775807 9223372036854775807 cdiv", &x, err, sizeof err), "%s", err);
  cr_assert_eq(x, 1);
  cr_assert(grid_of("N 7 cdiv", &x, err, sizeof err), "%s", err);
  cr_assert_eq(x, 10);
  cr_assert(grid_of("N 64 cdiv", &x, err, sizeof err), "%s", err);
  cr_assert_eq(x, 1);
  cr_assert_not(grid_of("N 0 %", &x, err, sizeof err));
  cr_assert(strstr(err, "grid axis x divides by zero at '%' in \"N 0 %\""), "%s", err);
  cr_assert_not(grid_of("N 0 cdiv", &x, err, sizeof err));
  cr_assert(strstr(err, "divides by zero at 'cdiv'"), "%s", err);
  cr_assert_not(grid_of("9223372036854775807 N +", &x, err, sizeof err));
  cr_assert(strstr(err, "overflows at '+' (9223372036854775807 + 64)"), "%s", err);
  cr_assert_not(grid_of("-9223372036854775807 N -", &x, err, sizeof err));
  cr_assert(strstr(err, "overflows at '-' (-9223372036854775807 - 64)"), "%s", err);
  cr_assert(grid_of("N neg 3 / neg", &x, err, sizeof err), "%s", err); /* -64 / 3 truncates to -21 */
  cr_assert_eq(x, 21);
}

/* ------------------------------------------------------------- bounds */

/* the manifest's six top-level fields, then `kernels` text */
static char *with_kernels(const char *kernels, size_t extra) {
  static const char *head = "phobos_manifest: 1\ncompiler: phobosc 0.1.0\nsource: k.ph\nsource_hash: 0123456789abcdef\n"
                            "arch: sm_90a\ncubin: k.cubin\n";
  char *s = malloc(strlen(head) + strlen(kernels) + extra + 1);
  strcpy(s, head);
  strcat(s, kernels);
  return s;
}

#define ONE_KERNEL(NAME)                                                                                     \
  "- name: " NAME "\n  params:\n  - {name: X, kind: tensor, dtype: f32, dims: [N], written: true}\n" \
  "  variants:\n  - {entry: " NAME "__v0, grid: [\"N\"], threads: 32, shared_bytes: 0}\n"

Test(runtime, manifest_bounds_kernels_and_variants) {
  /* 1025 kernels */
  char *text = with_kernels("kernels:\n", 1025 * 200);
  for (int i = 0; i < 1025; i++) {
    char one[300];
    snprintf(one, sizeof one, ONE_KERNEL("k%d"), i, i);
    strcat(text, one);
  }
  expect_bad(text, "'kernels' lists 1025 kernels; this runtime reads at most 1024");
  free(text);
  /* 4097 variants in all: 4096 in one kernel, 1 in another */
  text = with_kernels("kernels:\n" ONE_KERNEL("one") "- name: many\n  params: []\n  variants:\n", 4096 * 80);
  for (int i = 0; i < 4096; i++) {
    char one[100];
    snprintf(one, sizeof one, "  - {entry: many__v%d, grid: [\"1\"], threads: 32, shared_bytes: 0}\n", i);
    strcat(text, one);
  }
  expect_bad(text, "kernel 'many': its 4096 variants make 4097 in the manifest; this runtime reads at most 4096");
  free(text);
}

Test(runtime, manifest_bounds_aliases_depth_and_expansion) {
  /* issue 17, finding 5: 1000 aliases of a kernel, each with 1000 aliases
   * of a variant, made 10^6 variants (4 GB) from 12 KB */
  char *text = with_kernels("kernels:\n- &k\n  name: k\n  params: []\n  variants:\n  - &v {entry: k__v0, grid: [\"1\"], "
                            "threads: 32, shared_bytes: 0}\n", 12000);
  for (int i = 0; i < 999; i++) strcat(text, "  - *v\n");
  for (int i = 0; i < 999; i++) strcat(text, "- *k\n");
  expect_bad(text, ":77: more than 64 aliases; this runtime reads at most 64");
  free(text);
  /* 60 aliases, nested: a5 expands to a million nodes */
  text = with_kernels("kernels:\n" ONE_KERNEL("k") "a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n", 1000);
  for (int i = 1; i < 6; i++) {
    char line[200];
    snprintf(line, sizeof line, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i - 1,
             i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
    strcat(text, line);
  }
  expect_bad(text, "the manifest expands to more than 1048576 nodes (following its aliases); this runtime reads at most "
                   "1048576");
  free(text);
  /* a sequence nested 100 deep */
  text = with_kernels("kernels:\n" ONE_KERNEL("k") "deep: ", 300);
  for (int i = 0; i < 100; i++) strcat(text, "[");
  for (int i = 0; i < 100; i++) strcat(text, "]");
  strcat(text, "\n");
  expect_bad(text, "nested more than 32 deep; this runtime reads at most 32");
  free(text);
  /* an alias of a node that contains it: libyaml builds the cycle */
  expect_bad("&r {phobos_manifest: 1, self: *r}", "expands to more than 1048576 nodes");
}

/* ------------------------------------------- the fuzz target's inputs */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* tests/fuzz/fuzz_manifest.c */

Test(runtime, golden_manifests) {
  /* tests/golden/manifest/: the manifest fuzz target's regression inputs
   * (hostile seeds and findings), each run through the target itself; a
   * first line "# expect: TEXT" also checks mf_parse's message (or "ok") */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/golden/manifest", getenv("TEST_SRCDIR"));
  DIR *d = opendir(dir);
  cr_assert(d, "no %s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml")) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    RtFile f;
    char err[1024];
    cr_assert_eq(rt_read_file(path, "input", MF_MAX_BYTES, PHOBOS_BAD_MANIFEST, &f, err, sizeof err), PHOBOS_OK, "%s", err);
    LLVMFuzzerTestOneInput((const uint8_t *)f.data, f.len);
    if (!strncmp(f.data, "# expect: ", 10)) {
      char want[200];
      snprintf(want, sizeof want, "%.*s", (int)strcspn(f.data + 10, "\n"), f.data + 10);
      Manifest m;
      bool ok = mf_parse(e->d_name, f.data, f.len, &m, err, sizeof err);
      if (ok) mf_free(&m);
      if (!strcmp(want, "ok")) cr_expect(ok, "%s: %s", e->d_name, err);
      else cr_expect(!ok && strstr(err, want), "%s: '%s' lacks '%s'", e->d_name, ok ? "accepted" : err, want);
    }
    free(f.data);
    n++;
  }
  closedir(d);
  cr_assert_geq(n, 10, "only %d inputs in %s", n, dir);
}

Test(runtime, manifest_values_past_32_bits) {
  /* the launch passes extents as .s32: a literal extent past 2^31 - 1 could never bind */
  expect_bad(replaced("dims: [1, K]", "dims: [2147483648, K]"),
             "parameter 'A': dim 0 is 2147483648; extents must fit in 32 bits");
  Manifest m = load_ok(replaced("dims: [1, K]", "dims: [2147483647, K]"));
  mf_free(&m);
}

/* spec 15.22: a cluster-rows copy names its cluster and its dims_above;
 * it is launched only for rows of more than one block, and the manifest's
 * cluster is 2 to 8 */
Test(runtime, cluster_rows_copies_name_their_cluster) {
  Manifest m = compiled_manifest_with("--no-aligned-rows --no-occupancy-copies --no-l2-prefetch",
                                      "spec/conformance/cluster_rows.ph");
  const MfKernel *k = &m.kernels[0]; /* softmax_rows: loops over N in blocks of 64 */
  int c4 = 0, c8 = 0;
  for (int i = 0; i < k->nvariants; i++) {
    const MfVariant *v = &k->variants[i];
    size_t n = strlen(v->entry);
    bool cl4 = n > 4 && !strcmp(v->entry + n - 4, "_cl4"), cl8 = n > 4 && !strcmp(v->entry + n - 4, "_cl8");
    cr_assert_eq(v->cluster, cl4 ? 4 : cl8 ? 8 : 1, "%s", v->entry);
    c4 += cl4, c8 += cl8;
    if (!cl4 && !cl8) continue;
    cr_assert_eq(v->nabove, 1, "%s", v->entry);
    cr_assert_str_eq(v->above_name[0], "N");
    cr_assert_eq(v->above_value[0], 64);
    RtBinding b = {.ndims = 2, .name = {"R", "N"}, .value = {7, 64}};
    cr_assert_not(rt_variant_fits(v, &b), "%s: rows of one block", v->entry);
    b.value[1] = 65;
    cr_assert(rt_variant_fits(v, &b), "%s: rows of two blocks", v->entry);
  }
  cr_assert(c4 == 4 && c8 == 4, "%d and %d cluster copies of 4 variants", c4, c8);
  mf_free(&m);
  /* the prefix sum reads its running sum inside its loop: no copy */
  Manifest p = compiled_manifest_with("--no-aligned-rows --no-occupancy-copies --no-l2-prefetch",
                                      "spec/conformance/cluster_rows.ph");
  for (int i = 0; i < p.kernels[2].nvariants; i++) cr_assert_eq(p.kernels[2].variants[i].cluster, 1);
  mf_free(&p);
  char *text = replaced("    pinned: {}\n", "    pinned: {}\n    cluster: 9\n");
  expect_bad(text, "'cluster' is 9; it must be from 2 to 8");
  free(text);
}

/* spec 15.18: an entry that takes the L2 prefetch distance is listed twice,
 * the manifest's variant (distance 0) and, after all of them, its twin
 * ENTRY+l2 (the CTAs resident on the device), which shares its strings */
Test(runtime, l2_prefetch_variants_have_twins) {
  Manifest m = compiled_manifest_with("--no-aligned-rows --no-occupancy-copies --no-cluster-rows", "spec/conformance/one_pass.ph");
  const MfKernel *k = &m.kernels[0];
  int plain = 0, twins = 0;
  for (int i = 0; i < k->nvariants; i++) {
    const MfVariant *v = &k->variants[i];
    if (!v->twin) {
      cr_assert_eq(twins, 0, "variant %d (%s) after a twin", i, v->entry);
      cr_assert_str_eq(v->name, v->entry);
      cr_assert_not(v->l2pf_on);
      plain++;
      continue;
    }
    twins++;
    cr_assert(v->l2pf_param && v->l2pf_on);
    char want[256];
    snprintf(want, sizeof want, "%s+l2", v->entry);
    cr_assert_str_eq(v->name, want);
    bool found = false;
    for (int j = 0; j < plain; j++) found |= k->variants[j].entry == v->entry && k->variants[j].l2pf_param;
    cr_assert(found, "%s: no variant of its entry", v->name);
  }
  cr_assert_eq(plain, 28); /* 9 variants, each with its two one-pass copies; a general-strides copy */
  cr_assert(twins > 0 && twins <= plain, "%d twins of %d", twins, plain);
  mf_free(&m);
  Manifest off = compiled_manifest_with("--no-aligned-rows --no-occupancy-copies --no-l2-prefetch --no-cluster-rows", "spec/conformance/one_pass.ph");
  cr_assert_eq(off.kernels[0].nvariants, 28);
  for (int i = 0; i < off.kernels[0].nvariants; i++) cr_assert_not(off.kernels[0].variants[i].l2pf_param);
  mf_free(&off);
}

/* @requires in the manifest: the kernel's contracts, each variant's programs */
Test(runtime, manifest_contracts) {
  const char *contract = "  requires:\n  - {text: \"KB >= cdiv(K, 32)\", op: \">=\", lhs: \"KB\", rhs: \"cdiv(K, 32)\"}\n"
                         "  variants:\n";
  char *a = replaced("  variants:\n", contract);
  const char *prog = "    grid: [\"N 64 cdiv\", \"1\"]\n    requires: [[\"KB\", \"K 32 cdiv\"]]\n";
  const char *at = strstr(a, "    grid: [\"N 64 cdiv\", \"1\"]\n");
  char *text = malloc(strlen(a) + strlen(prog) + 1);
  sprintf(text, "%.*s%s%s", (int)(at - a), a, prog, at + strlen("    grid: [\"N 64 cdiv\", \"1\"]\n"));
  Manifest m = load_ok(text);
  cr_assert_eq(m.kernels[0].nrequires, 1);
  cr_assert_str_eq(m.kernels[0].requires[0].text, "KB >= cdiv(K, 32)");
  cr_assert_str_eq(m.kernels[0].requires[0].op, ">=");
  cr_assert_eq(m.kernels[0].variants[0].requires[0][1].nops, 3);
  mf_free(&m);
  /* a variant without its programs, a bad comparison, a side naming no dim */
  expect_bad(a, "variant 'q8_matvec__v0': 'requires' must list a pair of programs for each of the kernel's 1 contracts");
  char *b = strdup(text);
  memcpy(strstr(b, "op: \">=\""), "op: \"=>\"", 8);
  expect_bad(b, "kernel 'q8_matvec': contract \"KB >= cdiv(K, 32)\": 'op' must be ==, !=, <, <=, > or >=");
  char *c = strdup(text);
  memcpy(strstr(c, "\"K 32 cdiv\""), "\"Q 32 cdiv\"", 11);
  expect_bad(c, "kernel 'q8_matvec': contract \"KB >= cdiv(K, 32)\" of 'q8_matvec__v0' uses 'Q', which is no tensor dim");
  const char *k32 = strstr(text, "\"K 32 cdiv\"");
  char *d = malloc(strlen(text) + 8);
  sprintf(d, "%.*s\"grid.w 2 *\"%s", (int)(k32 - text), text, k32 + 11);
  expect_bad(d, "bad token 'grid.w'");
  free(a), free(text), free(b), free(c), free(d);
}

/* Warp-specialized copies (spec 15.20): each GEMM variant with a
 * tensor-copy ring gains NAME_ws, a producer warpgroup's 128 threads more,
 * maps_required; rt_maps_misfit keeps it from tensors a map cannot take */
Test(runtime, warp_specialized_copies_need_every_map) {
  Manifest m = compiled_manifest_with("--warp-specialize -D BM=128 -D BN=128 -D BK=64", "examples/gemm/gemm.ph");
  const MfKernel *k = &m.kernels[0]; /* gemm_bf16: A [M, K], B [K, N], C [M, N] */
  const MfVariant *v = NULL, *ws = NULL;
  for (int i = 0; i < k->nvariants; i++) {
    const MfVariant *x = &k->variants[i];
    size_t n = strlen(x->entry);
    bool copy = n > 3 && !strcmp(x->entry + n - 3, "_ws");
    cr_assert_eq(copy, x->maps_required, "%s", x->entry);
    if (copy && !ws) ws = x;
    if (!copy && !v) v = x;
  }
  cr_assert(v && ws, "a plain entry and a warp-specialized one");
  cr_assert_str_eq(ws->entry, "gemm_bf16__v0_ws");
  cr_assert_eq(ws->threads, v->threads + 128, "%d and %d threads", ws->threads, v->threads);
  cr_assert_eq(ws->ntmaps, v->ntmaps);
  int64_t sa[2] = {256, 512}, sb[2] = {512, 384}, sc[2] = {256, 384};
  phobos_arg args[3] = {phobos_tensor_arg(1 << 20, PHOBOS_BF16, 2, sa), phobos_tensor_arg(4 << 20, PHOBOS_BF16, 2, sb),
                        phobos_tensor_arg(8 << 20, PHOBOS_BF16, 2, sc)};
  cr_assert_eq(rt_maps_misfit(k, ws, args), -1, "aligned tensors: every map builds");
  cr_assert_eq(rt_maps_misfit(k, v, args), -1);
  args[1].tensor.data += 2;
  cr_assert_eq(rt_maps_misfit(k, ws, args), 1, "B's base off 16 bytes");
  cr_assert_eq(rt_maps_misfit(k, v, args), -1, "the plain entry loads what no map takes itself");
  args[1].tensor.data -= 2;
  int64_t odd[2] = {512, 383};
  args[1] = phobos_tensor_arg(4 << 20, PHOBOS_BF16, 2, odd);
  cr_assert_eq(rt_maps_misfit(k, ws, args), 1, "B's rows 766 bytes apart");
  mf_free(&m);
  char *text = replaced("    dynamic_shared: false\n", "    dynamic_shared: false\n    maps_required: often\n");
  expect_bad(text, "maps_required");
  free(text);
}
