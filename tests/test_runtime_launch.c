/* test_runtime_launch.c: the runtime's launch path against the fake driver
 * (fake_cuda.c, PHOBOS_LIBCUDA=FAKE_LIBCUDA): the parameters a launch
 * passes, programmatic dependent launch, and the tensor maps it builds (or
 * does not) for phobosc's tensor copies, pad-and-mask splits included. No GPU. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_cuda.h"
#include "phobos.h"

/* a kernel like spec/conformance/qload.ph's qload_edges with tensor copies: Q
 * [B, S, HQ, D] read through a map that views HQ as [HQ / 7, 7] */
static const char *manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: qload.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: qload_edges\n"
    "  params:\n"
    "  - {name: Q, kind: tensor, dtype: f32, dims: [B, S, HQ, D], written: false}\n"
    "  - {name: R, kind: tensor, dtype: f32, dims: [B, S, HQ, 1], written: true}\n"
    "  variants:\n"
    "  - entry: qload_edges__v0\n"
    "    constants: {NQ: 7, D: 64, BQ: 16}\n"
    "    pinned: {D: 64}\n"
    "    grid: [\"S 16 cdiv\", \"HQ 7 /\", \"B\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 65536\n"
    "    dynamic_shared: true\n"
    "    dependent_launch: DL\n"
    "    tensormaps:\n"
    "    - {param: Q, rank: 4, split: [2, 7], box: [1, 16, 1, 8, 64], dtype: f32, swizzle: none, fill: zero}\n";

static phobos_context *ctx;
static phobos_kernel *k;
static FakeCuda *fake;

/* writes k.cubin (an empty CUDA ELF: the fake driver loads anything the
 * runtime's check passes) and k.yaml (text) into a fresh directory, and
 * loads kernel `name` from them through the fake driver */
static const char *write_files(const char *text) {
  static char dir[32];
  static char path[256];
  strcpy(dir, "/tmp/phobos_fake_XXXXXX");
  cr_assert(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/k.yaml", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs(text, f);
  fclose(f);
  unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  elf[18] = 190; /* EM_CUDA */
  elf[20] = 1;
  elf[52] = 64;
  snprintf(path, sizeof path, "%s/k.cubin", dir);
  f = fopen(path, "wb");
  cr_assert(f);
  fwrite(elf, 1, sizeof elf, f);
  fclose(f);
  return path;
}

/* text with the first `from` replaced by `to` */
static void with(const char *text, const char *from, const char *to, char *out, size_t len) {
  const char *at = strstr(text, from);
  cr_assert(at, "no '%s'", from);
  snprintf(out, len, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
}

static void load_text(const char *text, const char *name, int nsizes, const int *sizes) {
  const char *path = write_files(text);
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, path, &mod), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_kernel_get(mod, name, &k), PHOBOS_OK, "%s", phobos_last_error(ctx));
  void *lib = dlopen(getenv("FAKE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  cr_assert(lib, "the runtime did not open the fake driver");
  FakeCuda *(*state)(void) = (FakeCuda * (*)(void)) dlsym(lib, "fake_cuda_state");
  void (*set_sizes)(int, const int *) = (void (*)(int, const int *))dlsym(lib, "fake_cuda_param_sizes");
  cr_assert(state && set_sizes);
  fake = state();
  set_sizes(nsizes, sizes);
}

static void load(const char *dependent_launch) {
  char text[4096];
  with(manifest, "DL", dependent_launch, text, sizeof text);
  /* Q: pointer + 4 extents, R: pointer + 4 extents, then the map and its flag */
  int sz[] = {8, 4, 4, 4, 4, 8, 4, 4, 4, 4, 128, 4};
  load_text(text, "qload_edges", 12, sz);
}

static uint64_t alloc(size_t n) {
  void *p = NULL;
  cr_assert_eq(posix_memalign(&p, 256, n), 0);
  return (uint64_t)(uintptr_t)p;
}

static phobos_status launch(uint64_t q, int64_t S, int64_t HQ) {
  phobos_arg a[2] = {phobos_tensor_arg(q, PHOBOS_F32, 4, (int64_t[]){2, S, HQ, 64}),
                     phobos_tensor_arg(alloc(sizeof(float) * (size_t)(2 * S * HQ)), PHOBOS_F32, 4,
                                       (int64_t[]){2, S, HQ, 1})};
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, tensor_map_swizzled) {
  /* a swizzled map: the driver gets the mode (3: 128B) and the 128-byte box row */
  char text[4096], t2[4096];
  with(manifest, "DL", "false", text, sizeof text);
  with(text, "box: [1, 16, 1, 8, 64], dtype: f32, swizzle: none", "box: [1, 16, 1, 8, 32], dtype: f32, swizzle: 128B", t2,
       sizeof t2);
  int sz[] = {8, 4, 4, 4, 4, 8, 4, 4, 4, 4, 128, 4};
  load_text(t2, "qload_edges", 12, sz);
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 64);
  cr_assert_eq(launch(q, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 1);
  cr_assert_eq(fake->enc_swizzle, 3);
  cr_assert_eq(fake->enc_box[0], 32);
}

/* the common case: a fresh, aligned Q of [2, 19, 14, 64] (two KV heads of 7) */
static phobos_status launch_q(void) {
  return launch(alloc(sizeof(float) * 2 * 19 * 14 * 64), 19, 14);
}

static int32_t s32(int i) {
  int32_t v;
  memcpy(&v, fake->params[i], 4);
  return v;
}

Test(launch, tensor_map_with_a_split_dim) {
  load("true");
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 64);
  cr_assert_eq(launch(q, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 1);
  cr_assert_eq(fake->enc_rank, 5);  /* [B, S, HQ/7, 7, D] */
  cr_assert_eq(fake->enc_dtype, 7); /* CU_TENSOR_MAP_DATA_TYPE_FLOAT32 */
  cr_assert_eq(fake->enc_addr, q);
  unsigned long long dims[] = {64, 7, 2, 19, 2}, strides[] = {256, 1792, 3584, 68096};
  unsigned box[] = {64, 8, 1, 16, 1};
  for (int i = 0; i < 5; i++) cr_assert_eq(fake->enc_dims[i], dims[i], "dim %d", i);
  for (int i = 0; i < 4; i++) cr_assert_eq(fake->enc_strides[i], strides[i], "stride %d", i);
  for (int i = 0; i < 5; i++) cr_assert_eq(fake->enc_box[i], box[i], "box %d", i);
  /* the parameters: Q's pointer and extents, R's, then the map and built = 1 */
  cr_assert_eq(fake->nparams, 12);
  cr_assert_eq(s32(1), 2);
  cr_assert_eq(s32(2), 19);
  cr_assert_eq(s32(3), 14);
  cr_assert_eq(fake->params[10][0], 0xA5, "the map the encoder wrote");
  cr_assert_eq(s32(11), 1);
  int built, maps = phobos_kernel_last_tensor_maps(k, &built);
  cr_assert_eq(maps, 1);
  cr_assert_eq(built, 1);
  /* the grid: cdiv(19, 16), 14 / 7, 2 */
  cr_assert_eq(fake->grid[0], 2);
  cr_assert_eq(fake->grid[1], 2);
  cr_assert_eq(fake->grid[2], 2);
  cr_assert_eq(fake->shared, 65536);
}

Test(launch, no_map_for_a_misaligned_base_or_an_extent_the_split_does_not_divide) {
  load("true");
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 15 * 64 + 64);
  cr_assert_eq(launch(q + 4, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 0, "a base 4 bytes off a 16-byte boundary is not encoded");
  cr_assert_eq(s32(11), 0);
  int built;
  cr_assert_eq(phobos_kernel_last_tensor_maps(k, &built), 1);
  cr_assert_eq(built, 0);
  cr_assert_eq(launch(q, 19, 15), PHOBOS_OK, "%s", phobos_last_error(ctx)); /* 15 heads: not [15 / 7, 7] */
  cr_assert_eq(fake->encodes, 0);
  cr_assert_eq(s32(11), 0, "the kernel takes its pointer path");
}

Test(launch, dependent_launch_attribute) {
  load("true");
  cr_assert_eq(launch_q(), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->ex_launches, 1);
  cr_assert_eq(fake->plain_launches, 0);
  cr_assert_eq(fake->nattrs, 1);
  cr_assert_eq(fake->attr_id, 6); /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */
  cr_assert_eq(fake->attr_value, 1);
  cr_assert_eq(fake->block, 128);
}

Test(launch, plain_launch_without_dependent_launch) {
  load("false");
  cr_assert_eq(launch_q(), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->plain_launches, 1);
  cr_assert_eq(fake->ex_launches, 0);
}

Test(launch, dependent_launch_turned_off_by_the_environment) {
  setenv("PHOBOS_DEPENDENT_LAUNCH", "0", 1);
  load("true");
  cr_assert_eq(launch_q(), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->plain_launches, 1);
  cr_assert_eq(fake->ex_launches, 0);
  cr_assert_eq(s32(11), 1, "the maps are built all the same");
}

/* ------------------------------------------------------------ autotune */

/* two variants of one kernel, Y written */
static const char *tuned =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: scale.ph\n"
    "source_hash: fedcba9876543210\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: scale\n"
    "  params:\n"
    "  - {name: X, kind: tensor, dtype: f32, dims: [N], written: false}\n"
    "  - {name: Y, kind: tensor, dtype: f32, dims: [N], written: true}\n"
    "  variants:\n"
    "  - entry: scale__v0\n"
    "    constants: {T: 128}\n"
    "    pinned: {}\n"
    "    grid: [\"N 128 cdiv\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "  - entry: scale__v1\n"
    "    constants: {T: 256}\n"
    "    pinned: {}\n"
    "    grid: [\"N 256 cdiv\"]\n"
    "    threads: 256\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n";

static char cache_dir[64];

static void load_tuned(void) {
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  int sz[] = {8, 4, 8, 4};
  load_text(tuned, "scale", 4, sz);
  fake->watch = 2; /* Y's pointer */
}

static phobos_status launch_tuned(uint64_t x, uint64_t y) {
  phobos_arg a[2] = {phobos_tensor_arg(x, PHOBOS_F32, 1, (int64_t[]){1000}),
                     phobos_tensor_arg(y, PHOBOS_F32, 1, (int64_t[]){1000})};
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, autotune_times_on_scratch_and_keeps_the_faster) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  int n = fake->nlaunches, mine = 0;
  cr_assert_gt(n, 2, "each variant timed");
  for (int i = 0; i < n; i++) mine += fake->watched[i] == y;
  cr_assert_eq(mine, 1, "the caller's Y is written once, by the winner (%d of %d launches)", mine, n);
  cr_assert_eq(fake->watched[n - 1], y);
  cr_assert_eq(fake->grid[0], 4); /* cdiv(1000, 256) */
  cr_assert_eq(fake->block, 256);
  /* the same shape again: no timing */
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK);
  cr_assert_eq(fake->nlaunches, n + 1);
  /* and the choice is in the cache file */
  char path[128], text[4096] = {0};
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  FILE *f = fopen(path, "r");
  cr_assert(f, "no cache file at %s", path);
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = 0;
  cr_assert(strstr(text, "scale__v1"), "%s", text);
  cr_assert(strstr(text, "N=1000"), "%s", text);
  cr_assert(strstr(text, "fedcba9876543210."), "the key names the source and then the cubin: %s", text);
}

/* the fake times the FAKE_FAST_ENTRY variant at half the others: a clear
 * winner, timed once (a warm-up and five launches each, then the launch) */
Test(launch, autotune_a_clear_winner_is_not_timed_again) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  cr_assert_eq(fake->nlaunches, 2 * 6 + 1);
  /* each timed launch after a memset of twice the L2 (4096 bytes here) */
  cr_assert_eq(fake->memsets, 2 * 5);
  cr_assert_eq(fake->memset_bytes, 8192);
}

Test(launch, autotune_a_failed_flush_is_a_status_naming_the_variant) {
  setenv("FAKE_FAIL", "cuMemsetD8Async", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_CUDA_ERROR);
  cr_assert(strstr(phobos_last_error(ctx), "timing variant 'scale__v0' failed: CUDA_ERROR_FAKE"), "%s",
            phobos_last_error(ctx));
  unsetenv("FAKE_FAIL");
}

/* variants within 5% of each other are timed again, 21 launches each after
 * a warm-up; equal times go to the first */
Test(launch, autotune_close_variants_are_timed_again) {
  unsetenv("FAKE_FAST_ENTRY");
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0");
  cr_assert_eq(fake->nlaunches, 2 * 6 + 2 * 22 + 1);
  int mine = 0;
  for (int i = 0; i < fake->nlaunches; i++) mine += fake->watched[i] == y;
  cr_assert_eq(mine, 1, "the caller's Y is written once, by the winner");
}

Test(launch, autotune_off_takes_the_first_variant_untimed) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0");
  cr_assert_eq(fake->nlaunches, 1);
}

Test(launch, a_pinned_variant_runs_untimed_and_unpinning_tunes_again) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(phobos_kernel_pin_variant(k, "scale__v0"), PHOBOS_OK);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0");
  cr_assert_eq(fake->nlaunches, 1, "no timing");
  cr_assert_eq(fake->block, 128);
  cr_assert_eq(phobos_kernel_pin_variant(k, "scale__v7"), PHOBOS_INVALID);
  cr_assert(strstr(phobos_last_error(ctx), "kernel 'scale' has no variant 'scale__v7'"), "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0", "a refused pin keeps the last one");
  cr_assert_eq(phobos_kernel_pin_variant(k, NULL), PHOBOS_OK);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1", "the autotuner's again");
  cr_assert_eq(phobos_kernel_pin_variant(NULL, "scale__v0"), PHOBOS_INVALID);
}

/* A launch that repeats the last one takes its variant without testing
 * every variant again (runtime.c, memo_hit); any change of the arguments,
 * the grid or PHOBOS_AUTOTUNE chooses again. scale__v1 (the faster) takes
 * N only up to 1000 here. */
static phobos_status launch_scale(uint64_t x, uint64_t y, int64_t n) {
  phobos_arg a[2] = {phobos_tensor_arg(x, PHOBOS_F32, 1, (int64_t[]){n}), phobos_tensor_arg(y, PHOBOS_F32, 1, (int64_t[]){n})};
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, a_repeated_launch_takes_the_last_choice_and_a_changed_one_chooses_again) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  char text[4096];
  with(tuned, "    constants: {T: 256}\n", "    constants: {T: 256}\n    dims_at_most: {N: 1000}\n", text, sizeof text);
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  load_text(text, "scale", 4, (int[]){8, 4, 8, 4});
  uint64_t x = alloc(8000), y = alloc(8000);
  cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  int n = fake->nlaunches;
  for (int i = 0; i < 3; i++) cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK);
  cr_assert_eq(fake->nlaunches, n + 3, "no timing");
  cr_assert_eq(fake->block, 256);
  cr_assert_eq(launch_scale(x, y, 1001), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0", "N 1001: v1 does not fit");
  cr_assert_eq(fake->block, 128);
  cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1", "N 1000 again: the autotuner's table");
  /* other tensors of the same shapes (another layer's): the same choice;
   * Y over X (they share bytes): the runtime's tests again, the same here */
  uint64_t x2 = alloc(8000), y2 = alloc(8000);
  n = fake->nlaunches;
  cr_assert_eq(launch_scale(x2, y2, 1000), PHOBOS_OK);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  cr_assert_eq(launch_scale(x2, x2, 1000), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  cr_assert_eq(fake->nlaunches, n + 2, "no timing");
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0", "autotuning off: the first that fits");
  unsetenv("PHOBOS_AUTOTUNE");
  cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  /* a grid of the caller's: only the variants whose own grid it is */
  cr_assert_eq(phobos_launch_grid(k, (phobos_arg[]){phobos_tensor_arg(x, PHOBOS_F32, 1, (int64_t[]){1000}),
                                                    phobos_tensor_arg(y, PHOBOS_F32, 1, (int64_t[]){1000})},
                                  2, (int64_t[]){8, 1, 1}, NULL),
               PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0", "cdiv(1000, 128) = 8 blocks");
  cr_assert_eq(launch_scale(x, y, 1000), PHOBOS_OK);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
}

Test(launch, a_corrupt_cache_file_is_a_status_not_a_crash) {
  setenv("FAKE_FAST_ENTRY", "scale__v0", 1);
  load_tuned();
  char path[128];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs("{{{ not: [yaml\n\t\x01", f);
  fclose(f);
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_cache_status(ctx), PHOBOS_CACHE_IGNORED);
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v0");
}

/* --------------------------------------------------- the driver refuses */

Test(launch, a_module_the_driver_rejects) {
  setenv("FAKE_FAIL", "cuModuleLoadData", 1);
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  const char *cubin = write_files(tuned);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_BAD_CUBIN);
  cr_assert(strstr(phobos_last_error(ctx), "the driver rejected"), "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "CUDA_ERROR_FAKE"), "%s", phobos_last_error(ctx));
}

Test(launch, a_failed_launch_names_the_call) {
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  setenv("FAKE_FAIL", "cuLaunchKernel", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_CUDA_ERROR);
  cr_assert(strstr(phobos_last_error(ctx), "cuLaunchKernel"), "%s", phobos_last_error(ctx));
}

Test(launch, a_refused_dependent_launch_runs_plainly) {
  setenv("FAKE_FAIL", "cuLaunchKernelEx", 1);
  load("true");
  cr_assert_eq(launch_q(), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->ex_launches, 0);
  cr_assert_eq(fake->plain_launches, 1);
  cr_assert_eq(s32(11), 1, "with its tensor map");
}

Test(launch, an_encoder_that_refuses_means_the_pointer_path) {
  setenv("FAKE_FAIL", "cuTensorMapEncodeTiled", 1);
  load("true");
  cr_assert_eq(launch_q(), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(s32(11), 0);
  int built;
  cr_assert_eq(phobos_kernel_last_tensor_maps(k, &built), 1);
  cr_assert_eq(built, 0);
}

Test(launch, autotune_scratch_that_cannot_be_allocated) {
  setenv("FAKE_FAIL", "cuMemAlloc_v2", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  cr_assert_eq(launch_tuned(x, y), PHOBOS_CUDA_ERROR);
  cr_assert(strstr(phobos_last_error(ctx), "autotune scratch for 'Y' (4000 bytes)"), "%s", phobos_last_error(ctx));
}

Test(launch, shared_memory_over_the_device_limit) {
  char a[4096], b[4096];
  with(manifest, "shared_bytes: 65536", "shared_bytes: 300000", a, sizeof a);
  with(a, "DL", "false", b, sizeof b);
  int sz[] = {8, 4, 4, 4, 4, 8, 4, 4, 4, 4, 128, 4};
  load_text(b, "qload_edges", 12, sz);
  cr_assert_eq(launch_q(), PHOBOS_LAUNCH_LIMIT);
  cr_assert(strstr(phobos_last_error(ctx), "needs 300000 bytes of shared memory; device 0 allows 232448"), "%s",
            phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, 0);
}

Test(launch, dynamic_shared_memory_the_driver_refuses) {
  setenv("FAKE_FAIL", "cuFuncSetAttribute", 1);
  load("false");
  cr_assert_eq(launch_q(), PHOBOS_CUDA_ERROR);
  cr_assert(strstr(phobos_last_error(ctx), "cuFuncSetAttribute"), "%s", phobos_last_error(ctx));
}

/* ------------------------------------------------ sizes that overflow */

/* one written rank-5 tensor, two variants (so that the autotuner copies it) */
static const char *rank5 =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: fill5.ph\n"
    "source_hash: 00000000000000f5\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: fill5\n"
    "  params:\n"
    "  - {name: Y, kind: tensor, dtype: f32, dims: [A, B, C, D, E], written: true}\n"
    "  variants:\n"
    "  - entry: fill5__v0\n"
    "    grid: [\"1\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "  - entry: fill5__v1\n"
    "    grid: [\"1\"]\n"
    "    threads: 256\n"
    "    shared_bytes: 0\n";

Test(launch, a_tensor_of_more_than_2_to_the_63_bytes_is_refused) {
  /* issue 17, finding 6: 5 * 5581 * 8681 * 49477 * 384773 = 2^62 + 1 f32
   * elements are 2^64 + 4 bytes; the scratch size wrapped to 4 bytes and
   * the timed launches ran with a 4-byte copy */
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  int sz[] = {8, 4, 4, 4, 4, 4};
  load_text(rank5, "fill5", 6, sz);
  phobos_arg a = phobos_tensor_arg(alloc(256), PHOBOS_F32, 5, (int64_t[]){5, 5581, 8681, 49477, 384773});
  cr_assert_eq(phobos_launch(k, &a, 1, NULL), PHOBOS_BAD_SHAPE, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "tensor 'Y' of [5, 5581, 8681, 49477, 384773] spans more than 2^63 - 1 bytes at its "
                                           "strides (4-byte elements)"),
            "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, 0);
  /* a tensor whose bytes would run past the top of the address space */
  a = phobos_tensor_arg(UINT64_MAX - 255, PHOBOS_F32, 5, (int64_t[]){1, 1, 1, 1, 128});
  cr_assert_eq(phobos_launch(k, &a, 1, NULL), PHOBOS_BAD_POINTER, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "its 512 bytes run past the end of the address space"), "%s",
            phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, 0);
}

Test(launch, autotune_scratch_for_a_tensor_past_parameter_64) {
  /* issue 17, finding 1: at_choose kept scratch[64] by parameter index; a
   * written tensor at index 64 got no copy, and the launch read
   * override[64] past the array (stack garbage for Y's pointer) */
  char text[16384];
  int n = snprintf(text, sizeof text,
                   "phobos_manifest: 1\ncompiler: phobosc 0.1.0\nsource: wide.ph\nsource_hash: 0123456789abcdef\n"
                   "arch: sm_90a\ncubin: k.cubin\nkernels:\n- name: wide\n  params:\n");
  for (int i = 0; i < 64; i++)
    n += snprintf(text + n, sizeof text - (size_t)n, "  - {name: s%d, kind: scalar, dtype: i32}\n", i);
  snprintf(text + n, sizeof text - (size_t)n,
           "  - {name: Y, kind: tensor, dtype: f32, dims: [N], written: true}\n  variants:\n"
           "  - {entry: wide__v0, grid: [\"N 128 cdiv\"], threads: 128, shared_bytes: 0}\n"
           "  - {entry: wide__v1, grid: [\"N 256 cdiv\"], threads: 256, shared_bytes: 0}\n");
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  setenv("FAKE_FAST_ENTRY", "wide__v1", 1);
  int sz[66];
  for (int i = 0; i < 64; i++) sz[i] = 4;
  sz[64] = 8, sz[65] = 4;
  load_text(text, "wide", 66, sz);
  fake->watch = 64; /* Y's pointer */
  phobos_arg a[65];
  for (int i = 0; i < 64; i++) a[i] = phobos_int_arg(i);
  uint64_t y = alloc(4000);
  a[64] = phobos_tensor_arg(y, PHOBOS_F32, 1, (int64_t[]){1000});
  cr_assert_eq(phobos_launch(k, a, 65, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "wide__v1");
  cr_assert_eq(fake->nallocs, 2, "one scratch copy, of Y, and the L2 flush's buffer");
  cr_assert_eq(fake->alloc_bytes[0], 4000);
  cr_assert_eq(fake->alloc_bytes[1], 8192);
  int runs = fake->nlaunches;
  cr_assert_eq(runs, 13, "two variants timed six times each, then the winner");
  for (int i = 0; i < runs - 1; i++)
    cr_assert_eq(fake->watched[i], fake->allocs[0], "timed launch %d wrote 0x%llx, not the scratch copy", i,
                 (unsigned long long)fake->watched[i]);
  cr_assert_eq(fake->watched[runs - 1], y, "the winner writes the caller's Y");
  cr_assert_eq(s32(63), 63);
}

Test(launch, a_grid_program_that_would_trap_is_an_error) {
  /* issue 17, finding 2: this grid killed the process with SIGFPE inside phobos_launch */
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  char text[4096];
  with(tuned, "\"N 128 cdiv\"", "\"-9223372036854775808 -1 /\"", text, sizeof text);
  int sz[] = {8, 4, 8, 4};
  load_text(text, "scale", 4, sz);
  cr_assert_eq(launch_tuned(alloc(4000), alloc(4000)), PHOBOS_LAUNCH_LIMIT, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "kernel 'scale' variant 'scale__v0': grid axis x overflows at '/' "
                                           "(-9223372036854775808 / -1) in \"-9223372036854775808 -1 /\""),
            "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, 0);
}

/* ---------------------------------------- files that are not regular */

/* the cubin path of a fresh k.cubin and k.yaml, with `which` of them
 * ("k.yaml", "k.cubin") replaced by a FIFO, or by a link to `target` */
static const char *replace_file(const char *which, const char *target) {
  const char *cubin = write_files(tuned);
  static char path[300];
  snprintf(path, sizeof path, "%.*s/%s", (int)(strrchr(cubin, '/') - cubin), cubin, which);
  cr_assert_eq(unlink(path), 0);
  if (target) cr_assert_eq(symlink(target, path), 0, "%s", path);
  else cr_assert_eq(mkfifo(path, 0600), 0, "%s", path);
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  return cubin;
}

/* issue 17, finding 10: a FIFO blocked phobos_module_load forever, and
 * /dev/zero was read until memory ran out */
Test(launch, a_manifest_that_is_a_fifo_is_refused_without_blocking, .timeout = 20) {
  const char *cubin = replace_file("k.yaml", NULL);
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_IO_ERROR, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "k.yaml is not a regular file (a FIFO)"), "%s", phobos_last_error(ctx));
}

Test(launch, a_cubin_that_is_a_device_is_refused_without_reading_it, .timeout = 20) {
  const char *cubin = replace_file("k.cubin", "/dev/zero");
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_IO_ERROR, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "k.cubin is not a regular file (a character device)"), "%s",
            phobos_last_error(ctx));
}

Test(launch, a_cubin_that_is_a_directory_is_refused) {
  const char *cubin = replace_file("k.cubin", "/tmp");
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_IO_ERROR, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "k.cubin is not a regular file (a directory)"), "%s", phobos_last_error(ctx));
}

Test(launch, a_manifest_over_the_size_bound_is_refused) {
  /* 5 MiB: a comment after a good manifest */
  size_t len = strlen(tuned), big = 5u << 20;
  char *text = malloc(big + 1);
  cr_assert(text);
  memcpy(text, tuned, len);
  memset(text + len, ' ', big - len);
  text[len] = '#';
  text[big - 1] = '\n';
  text[big] = 0;
  const char *cubin = write_files(text);
  free(text);
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_BAD_MANIFEST, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "k.yaml is 5242880 bytes; this runtime reads at most 4194304"), "%s",
            phobos_last_error(ctx));
}

Test(launch, an_autotune_cache_that_is_a_fifo_is_ignored_without_blocking, .timeout = 20) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  char path[128];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  cr_assert_eq(mkfifo(path, 0600), 0);
  cr_assert_eq(launch_tuned(alloc(4000), alloc(4000)), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_cache_status(ctx), PHOBOS_CACHE_IGNORED);
  cr_assert(strstr(phobos_last_error(ctx), "autotune.yaml is not a regular file (a FIFO)"), "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "scale__v1");
  struct stat sb;
  cr_assert_eq(stat(path, &sb), 0);
  cr_assert(S_ISREG(sb.st_mode), "the choice was written over the FIFO");
}

Test(launch, an_alias_bomb_is_refused) {
  /* issue 17, finding 5: this 12 KB manifest made phobos_module_load build
   * 10^6 variants (4 GB and 10^6 cuModuleGetFunction) and return OK */
  size_t cap = 16384;
  char *text = malloc(cap);
  cr_assert(text);
  snprintf(text, cap,
           "phobos_manifest: 1\ncompiler: phobosc 0.1.0\nsource: k.ph\nsource_hash: 0123456789abcdef\n"
           "arch: sm_90a\ncubin: k.cubin\nkernels:\n- &k\n  name: k\n  params: []\n  variants:\n"
           "  - &v {entry: k__v0, grid: [\"1\"], threads: 32, shared_bytes: 0}\n");
  for (int i = 0; i < 999; i++) strcat(text, "  - *v\n");
  for (int i = 0; i < 999; i++) strcat(text, "- *k\n");
  const char *cubin = write_files(text);
  free(text);
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, cubin, &mod), PHOBOS_BAD_MANIFEST, "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "k.yaml:77: more than 64 aliases; this runtime reads at most 64"), "%s",
            phobos_last_error(ctx));
}

/* ------------------------------------------------- the cache file */

static phobos_status launch_n(phobos_kernel *kk, int64_t n) {
  phobos_arg a[2] = {phobos_tensor_arg(alloc(4 * (size_t)n), PHOBOS_F32, 1, (int64_t[]){n}),
                     phobos_tensor_arg(alloc(4 * (size_t)n), PHOBOS_F32, 1, (int64_t[]){n})};
  return phobos_launch(kk, a, 2, NULL);
}

static char *read_cache(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  FILE *f = fopen(path, "r");
  cr_assert(f, "no cache file at %s", path);
  size_t cap = 8 << 20;
  char *text = malloc(cap);
  size_t len = fread(text, 1, cap - 1, f);
  fclose(f);
  text[len] = 0;
  return text;
}

static int count_lines(const char *text, const char *part) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, part)); p += strlen(part)) n++;
  return n;
}

Test(launch, the_cache_is_bounded_and_evicts_its_oldest_entries) {
  /* issue 17, finding 13: the cache loaded in O(N^2) and grew without
   * bound. 20000 entries in the file: the newest 4095 stay, with the new one */
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  char path[128];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  for (int i = 0; i < 20000; i++) fprintf(f, "\"old|%05d\": scale__v0\n", i);
  fclose(f);
  cr_assert_eq(launch_n(k, 1000), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_cache_status(ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  char *text = read_cache();
  cr_assert_eq(count_lines(text, ": scale__v"), 4096, "the file keeps 4096 entries");
  cr_assert(strstr(text, "N=1000\": scale__v1"), "the new entry");
  cr_assert(strstr(text, "\"old|19999\""), "the newest old entry");
  cr_assert(strstr(text, "\"old|15905\""), "the oldest that stays");
  cr_assert_not(strstr(text, "\"old|15904\""), "evicted");
  cr_assert_not(strstr(text, "\"old|00000\""), "evicted");
  free(text);
}

Test(launch, two_contexts_writing_one_cache_lose_no_entry) {
  /* issue 17, finding 16: each writer wrote its own entries over the file */
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  phobos_context *a = ctx;
  phobos_kernel *ka = k;
  load_text(tuned, "scale", 4, (int[]){8, 4, 8, 4}); /* a second context on the same cache */
  phobos_context *b = ctx;
  phobos_kernel *kb = k;
  cr_assert_neq(a, b);
  cr_assert_eq(launch_n(ka, 1000), PHOBOS_OK, "%s", phobos_last_error(a)); /* a: reads nothing, writes 1000 */
  cr_assert_eq(launch_n(kb, 2000), PHOBOS_OK, "%s", phobos_last_error(b)); /* b: reads 1000, writes 2000 */
  cr_assert_eq(launch_n(ka, 3000), PHOBOS_OK, "%s", phobos_last_error(a)); /* a: writes 3000, and 2000 */
  char *text = read_cache();
  cr_assert(strstr(text, "N=1000\""), "%s", text);
  cr_assert(strstr(text, "N=2000\""), "lost b's entry:\n%s", text);
  cr_assert(strstr(text, "N=3000\""), "%s", text);
  cr_assert_eq(count_lines(text, ": scale__v"), 3, "%s", text);
  free(text);
  /* and a now knows b's choice without tuning */
  int before = fake->nlaunches;
  cr_assert_eq(launch_n(ka, 2000), PHOBOS_OK, "%s", phobos_last_error(a));
  cr_assert_eq(fake->nlaunches, before + 1);
  phobos_context_destroy(a);
  phobos_context_destroy(b);
  ctx = NULL;
}

Test(launch, no_tensor_map_for_a_stride_of_2_to_the_40_bytes) {
  /* the driver takes strides below 2^40 bytes: Q [2, 2^20, 7 * 2^12, 64]
   * f32 has an S stride of 7 * 2^40 bytes, so the kernel takes its pointer
   * path (the fake encoder would have accepted the map) */
  load("false");
  int64_t S = 1 << 20, HQ = 7 << 12;
  phobos_arg a[2] = {phobos_tensor_arg(alloc(256), PHOBOS_F32, 4, (int64_t[]){2, S, HQ, 64}),
                     phobos_tensor_arg(alloc(256), PHOBOS_F32, 4, (int64_t[]){2, S, HQ, 1})};
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 0);
  cr_assert_eq(s32(11), 0, "the pointer path");
  int built;
  cr_assert_eq(phobos_kernel_last_tensor_maps(k, &built), 1);
  cr_assert_eq(built, 0);
  /* HQ = 7 * 2^9: a stride of 7 * 2^37 bytes, and the map */
  a[0] = phobos_tensor_arg(alloc(256), PHOBOS_F32, 4, (int64_t[]){2, S, HQ / 8, 64});
  a[1] = phobos_tensor_arg(alloc(256), PHOBOS_F32, 4, (int64_t[]){2, S, HQ / 8, 1});
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 1);
  cr_assert_eq(fake->enc_strides[3], 7ull << 37);
}

/* ------------------------------------------------- embedded modules */

/* phobos_module_load_image: a module from memory (phobosc --emit=c), checked
 * as the files are, its messages naming the embedded image or manifest */
Test(launch, a_module_loads_from_memory) {
  unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  elf[18] = 190; /* EM_CUDA */
  elf[20] = 1;
  elf[52] = 64;
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod = NULL;
  cr_assert_eq(phobos_module_load_image(ctx, elf, sizeof elf, tuned, strlen(tuned), &mod), PHOBOS_OK, "%s",
               phobos_last_error(ctx));
  cr_assert_eq(phobos_kernel_get(mod, "scale", &k), PHOBOS_OK, "%s", phobos_last_error(ctx));
  /* a manifest without its terminator: only manifest_len bytes are read */
  char cut[2048];
  size_t n = strlen(tuned);
  memcpy(cut, tuned, n);
  memset(cut + n, 'x', 16);
  cr_assert_eq(phobos_module_load_image(ctx, elf, sizeof elf, cut, n, &mod), PHOBOS_OK, "%s", phobos_last_error(ctx));
  elf[18] = 62; /* x86-64 */
  cr_assert_eq(phobos_module_load_image(ctx, elf, sizeof elf, tuned, n, &mod), PHOBOS_BAD_CUBIN);
  cr_assert(strstr(phobos_last_error(ctx), "the embedded cubin is not a usable cubin"), "%s", phobos_last_error(ctx));
  cr_assert_null(mod);
  elf[18] = 190;
  cr_assert_eq(phobos_module_load_image(ctx, elf, sizeof elf, "phobos_manifest: 9\n", 19, &mod), PHOBOS_BAD_MANIFEST);
  cr_assert(strstr(phobos_last_error(ctx), "the embedded manifest"), "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_module_load_image(ctx, NULL, 64, tuned, n, &mod), PHOBOS_INVALID);
  cr_assert_eq(phobos_module_load_image(ctx, elf, sizeof elf, tuned, n, NULL), PHOBOS_INVALID);
  phobos_context_destroy(ctx);
  ctx = NULL;
}

/* the same kernel compiled with strides (spec 16.3): each tensor passes
 * the strides of its dims but the last after its extents */
static void load_strided(void) {
  char text[4096], t2[4096], t3[4096];
  with(manifest, "DL", "false", text, sizeof text);
  with(text, "dims: [B, S, HQ, D], written: false}", "dims: [B, S, HQ, D], written: false, strides: inner-contiguous}", t2,
       sizeof t2);
  with(t2, "dims: [B, S, HQ, 1], written: true}", "dims: [B, S, HQ, 1], written: true, strides: inner-contiguous}", t3,
       sizeof t3);
  int sz[] = {8, 4, 4, 4, 4, 4, 4, 4, 8, 4, 4, 4, 4, 4, 4, 4, 128, 4};
  load_text(t3, "qload_edges", 18, sz);
}

static phobos_status launch_view(uint64_t q, const int64_t *qst, uint64_t r, const int64_t *rst) {
  phobos_arg a[2] = {phobos_tensor_arg(q, PHOBOS_F32, 4, (int64_t[]){2, 19, 14, 64}),
                     phobos_tensor_arg(r, PHOBOS_F32, 4, (int64_t[]){2, 19, 14, 1})};
  memcpy(a[0].tensor.strides, qst, sizeof(int64_t) * 4);
  if (rst) memcpy(a[1].tensor.strides, rst, sizeof(int64_t) * 4);
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, a_view_passes_its_strides_and_its_map_takes_them) {
  load_strided();
  /* Q out of a packed [2, 19, 3 * 14, 64] buffer (Q, K and V heads side by side) */
  int64_t qst[] = {19 * 42 * 64, 42 * 64, 64, 1};
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 42 * 64), r = alloc(sizeof(float) * 2 * 19 * 14);
  cr_assert_eq(launch_view(q, qst, r, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nparams, 18);
  for (int d = 0; d < 3; d++) cr_assert_eq(s32(5 + d), qst[d], "Q's stride %d", d);
  int64_t rst[] = {19 * 14, 14, 1}; /* R given without strides: the row-major ones */
  for (int d = 0; d < 3; d++) cr_assert_eq(s32(13 + d), rst[d], "R's stride %d", d);
  /* the map [B, S, HQ/7, 7, D] at the buffer's pitches, in bytes, innermost first */
  cr_assert_eq(fake->encodes, 1);
  unsigned long long strides[] = {256, 1792, 256 * 42, 256 * 42 * 19};
  for (int i = 0; i < 4; i++) cr_assert_eq(fake->enc_strides[i], strides[i], "stride %d", i);
  cr_assert_eq(s32(17), 1);
}

Test(launch, a_pitch_off_16_bytes_means_the_pointer_path) {
  load_strided();
  int64_t qst[] = {19 * 14 * 65, 14 * 65, 65, 1}; /* rows of 260 bytes */
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 65), r = alloc(sizeof(float) * 2 * 19 * 14);
  cr_assert_eq(launch_view(q, qst, r, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->encodes, 0);
  cr_assert_eq(s32(7), 65);
  cr_assert_eq(s32(17), 0, "the kernel takes its pointer path");
  /* a read-only tensor may repeat: every batch reads one [19, 14, 64] block */
  int64_t rep[] = {0, 14 * 64, 64, 1};
  cr_assert_eq(launch_view(q, rep, r, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(s32(5), 0);
}

Test(launch, strides_a_kernel_cannot_take_are_refused_by_name) {
  load_strided();
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 128), r = alloc(sizeof(float) * 2 * 19 * 14 * 4);
  int64_t last[] = {19 * 14 * 128, 14 * 128, 128, 2};
  cr_assert_eq(launch_view(q, last, r, NULL), PHOBOS_BAD_ARGUMENT);
  cr_assert_str_eq(phobos_last_error(ctx), "tensor 'Q' dim 3 (its last) has stride 2; kernel 'qload_edges' takes a tensor "
                                           "whose last dim is contiguous (stride 1) and has no general-strides entry (spec "
                                           "16.3): pass a contiguous copy (torch: .contiguous())");
  int64_t neg[] = {19 * 14 * 64, -14 * 64, 64, 1};
  cr_assert_eq(launch_view(q, neg, r, NULL), PHOBOS_BAD_ARGUMENT);
  cr_assert_str_eq(phobos_last_error(ctx), "tensor 'Q' dim 1 has stride -896; strides must be 0 or more");
  /* the kernel takes 32-bit strides */
  int64_t big[] = {INT64_C(1) << 31, 14 * 64, 64, 1};
  cr_assert_eq(launch_view(q, big, r, NULL), PHOBOS_BAD_SHAPE);
  cr_assert_str_eq(phobos_last_error(ctx), "tensor 'Q' dim 0 has stride 2147483648; kernels take strides below 2^31 "
                                           "elements: split the tensor along dim 0");
  /* R is written: [2, 19, 14, 1] with S's stride below the 14 heads' span */
  int64_t qok[] = {19 * 14 * 64, 14 * 64, 64, 1}, over[] = {19 * 14, 10, 1, 1};
  cr_assert_eq(launch_view(q, qok, r, over), PHOBOS_BAD_ARGUMENT);
  cr_assert_str_eq(phobos_last_error(ctx), "tensor 'R' is written, and at its strides two of its elements share an "
                                           "address: dim 1 has stride 10, but the dims of smaller stride span 14 "
                                           "elements");
  /* the same rows permuted ([B, S, H] laid out as [B, H, S]) share nothing */
  int64_t perm[] = {19 * 14, 1, 19, 1};
  cr_assert_eq(launch_view(q, qok, r, perm), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(s32(13), 19 * 14);
  cr_assert_eq(s32(14), 1);
  cr_assert_eq(s32(15), 19);
  cr_assert_eq(fake->nlaunches, 1);
}

/* A kernel with a general-strides entry (spec 16.3): tensors whose last
 * dim is contiguous take the other variants, and others take that entry,
 * which receives every dim's stride, the last included. */
static const char *general =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: copy.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: copy\n"
    "  params:\n"
    "  - {name: X, kind: tensor, dtype: f32, dims: [R, N], written: false, strides: inner-contiguous}\n"
    "  - {name: Y, kind: tensor, dtype: f32, dims: [R, N], written: true, strides: inner-contiguous}\n"
    "  variants:\n"
    "  - entry: copy__v0\n"
    "    constants: {}\n"
    "    pinned: {}\n"
    "    grid: [\"R\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "  - entry: copy__v0_strided\n"
    "    constants: {}\n"
    "    pinned: {}\n"
    "    grid: [\"R\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "    general_strides: true\n";

/* the fake reads as many parameters as it was told: the plain entry's
 * 8, the general one's 10 */
static void param_sizes(bool all) {
  void *lib = dlopen(getenv("FAKE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  void (*set_sizes)(int, const int *) = (void (*)(int, const int *))dlsym(lib, "fake_cuda_param_sizes");
  cr_assert(set_sizes);
  set_sizes(all ? 10 : 8, all ? (int[]){8, 4, 4, 4, 4, 8, 4, 4, 4, 4} : (int[]){8, 4, 4, 4, 8, 4, 4, 4});
}

static phobos_status launch_copy(bool all, uint64_t x, const int64_t *xst, uint64_t y, const int64_t *yst) {
  param_sizes(all);
  phobos_arg a[2] = {phobos_tensor_arg(x, PHOBOS_F32, 2, (int64_t[]){6, 5}), phobos_tensor_arg(y, PHOBOS_F32, 2, (int64_t[]){6, 5})};
  if (xst) memcpy(a[0].tensor.strides, xst, 2 * sizeof(int64_t));
  if (yst) memcpy(a[1].tensor.strides, yst, 2 * sizeof(int64_t));
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, general_strides_take_their_entry) {
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  load_text(general, "copy", 8, (int[]){8, 4, 4, 4, 8, 4, 4, 4});
  uint64_t x = alloc(4096), y = alloc(4096);
  cr_assert_eq(launch_copy(false, x, NULL, y, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "copy__v0", "contiguous: never the general entry");
  cr_assert_eq(s32(3), 5, "X's row stride; the last implied");
  cr_assert_eq(s32(7), 5);
  /* X's columns: the [6, 5] transpose of a [5, 6] buffer */
  cr_assert_eq(launch_copy(true, x, (int64_t[]){1, 6}, y, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "copy__v0_strided");
  cr_assert_eq(s32(3), 1, "every dim's stride");
  cr_assert_eq(s32(4), 6, "X's last stride");
  cr_assert_eq(s32(8), 5);
  cr_assert_eq(s32(9), 1, "Y row-major");
  /* every other element of Y's rows; a broadcast X row (stride 0) */
  cr_assert_eq(launch_copy(true, x, (int64_t[]){0, 1}, y, (int64_t[]){10, 2}), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "copy__v0_strided");
  cr_assert_eq(s32(3), 0);
  cr_assert_eq(s32(8), 10);
  cr_assert_eq(s32(9), 2);
  /* a written tensor whose elements would share addresses, and a last stride of 2^31 */
  cr_assert_eq(launch_copy(true, x, NULL, y, (int64_t[]){5, 0}), PHOBOS_BAD_ARGUMENT);
  cr_assert(strstr(phobos_last_error(ctx), "tensor 'Y' is written, and at its strides two of its elements share"), "%s",
            phobos_last_error(ctx));
  cr_assert_eq(launch_copy(true, x, (int64_t[]){1, INT64_C(1) << 31}, y, NULL), PHOBOS_BAD_SHAPE);
  cr_assert(strstr(phobos_last_error(ctx), "tensor 'X' dim 1 has stride 2147483648"), "%s", phobos_last_error(ctx));
  /* pinned: the general entry takes contiguous tensors too; the other refuses strided ones */
  cr_assert_eq(phobos_kernel_pin_variant(k, "copy__v0_strided"), PHOBOS_OK);
  cr_assert_eq(launch_copy(true, x, NULL, y, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(s32(3), 5);
  cr_assert_eq(s32(4), 1, "X's last stride, row-major");
  cr_assert_eq(phobos_kernel_pin_variant(k, "copy__v0"), PHOBOS_OK);
  cr_assert_eq(launch_copy(false, x, (int64_t[]){1, 6}, y, NULL), PHOBOS_NO_VARIANT);
  cr_assert(strstr(phobos_last_error(ctx), "the pinned variant 'copy__v0' takes tensors whose last dim is contiguous"),
            "%s", phobos_last_error(ctx));
  unsetenv("PHOBOS_AUTOTUNE");
}

Test(launch, a_kernel_compiled_before_strides_takes_only_row_major_ones) {
  load("false");
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 42 * 64), r = alloc(sizeof(float) * 2 * 19 * 14);
  int64_t qst[] = {19 * 42 * 64, 42 * 64, 64, 1}, row[] = {19 * 14 * 64, 14 * 64, 64, 1};
  cr_assert_eq(launch_view(q, qst, r, NULL), PHOBOS_BAD_ARGUMENT);
  cr_assert_str_eq(phobos_last_error(ctx), "tensor 'Q' dim 1 has stride 2688; kernel 'qload_edges' was compiled before "
                                           "strides (its manifest has no 'strides') and takes contiguous row-major "
                                           "tensors (stride 896): compile it again");
  cr_assert_eq(launch_view(q, row, r, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nparams, 12, "no stride parameters");
}

/* --------------------------------- derived grids and launch contracts */

/* A kernel without @grid whose variants take different tiles, and a
 * contract on a counter tensor: phobosc's own manifest (sm_80: no tensor
 * maps), loaded over the fake driver. Variants fill__v0 (BS 128), fill__v1
 * (256) and fill__v2 (512), each with copies (_occ, _al) of the same grid. */
static const char *fill_src = "@autotune(BS in [128, 512])\n"
                              "@requires(NC >= cdiv(N, BS))\n"
                              "kernel fill(X: tensor<f32>[N], Y: tensor<f32>[N], Cnt: tensor<i32>[NC]) {\n"
                              "  let i0 = program_id(0) * BS\n"
                              "  Y[i0 :+ BS] = X[i0 :+ BS] * 2.0\n"
                              "}\n";

static void load_fill(void) {
  char src[] = "/tmp/phobos_fill_XXXXXX.ph", out[] = "/tmp/phobos_fill_XXXXXX.yaml", cmd[512];
  int fd = mkstemps(src, 3);
  cr_assert(fd >= 0);
  cr_assert_eq(write(fd, fill_src, strlen(fill_src)), (ssize_t)strlen(fill_src));
  close(fd);
  fd = mkstemps(out, 5);
  cr_assert(fd >= 0);
  close(fd);
  snprintf(cmd, sizeof cmd, "%s --arch=sm_80 --emit=manifest -o %s %s", getenv("PHOBOSC"), out, src);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
  static char text[65536];
  FILE *f = fopen(out, "r");
  cr_assert(f);
  size_t len = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[len] = 0;
  unlink(src), unlink(out);
  cr_assert(strstr(text, "grid: [\"N 256 cdiv\"]"), "the derived grid: %s", text);
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  int sz[] = {8, 4, 8, 4, 8, 4};
  load_text(text, "fill", 6, sz);
  fake->watch = 2; /* Y's pointer */
}

static phobos_status launch_fill(int64_t n, int64_t nc, const int64_t *grid) {
  phobos_arg a[3] = {phobos_tensor_arg(alloc(4 * (size_t)n), PHOBOS_F32, 1, (int64_t[]){n}),
                     phobos_tensor_arg(alloc(4 * (size_t)n), PHOBOS_F32, 1, (int64_t[]){n}),
                     phobos_tensor_arg(alloc(4 * (size_t)nc), PHOBOS_I32, 1, (int64_t[]){nc})};
  return grid ? phobos_launch_grid(k, a, 3, grid, NULL) : phobos_launch(k, a, 3, NULL);
}

Test(launch, a_derived_grid_per_pinned_variant) {
  load_fill();
  const char *entry[] = {"fill__v0", "fill__v1", "fill__v2", "fill__v2_occ"};
  unsigned want[] = {8, 4, 2, 2}; /* cdiv(1000, 128), cdiv(1000, 256), cdiv(1000, 512) */
  for (int i = 0; i < 4; i++) {
    cr_assert_eq(phobos_kernel_pin_variant(k, entry[i]), PHOBOS_OK);
    cr_assert_eq(launch_fill(1000, 8, NULL), PHOBOS_OK, "%s: %s", entry[i], phobos_last_error(ctx));
    cr_assert_str_eq(phobos_kernel_last_variant(k), entry[i]);
    cr_assert_eq(fake->grid[0], want[i], "%s launched on %u blocks", entry[i], fake->grid[0]);
    cr_assert_eq(fake->grid[1], 1);
    cr_assert_eq(fake->grid[2], 1);
  }
}

Test(launch, a_derived_grid_through_autotuning) {
  setenv("FAKE_FAST_ENTRY", "fill__v2", 1);
  load_fill();
  cr_assert_eq(launch_fill(1000, 8, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "fill__v2");
  int n = fake->nlaunches;
  cr_assert_gt(n, 6, "the variants were timed");
  cr_assert_eq(fake->grid_x[n - 1], 2, "the winner on its own grid, cdiv(1000, 512)");
  /* every timed launch ran on its variant's grid: 8, 4 or 2 blocks, each seen */
  int seen[9] = {0};
  for (int i = 0; i < n; i++) {
    cr_assert(fake->grid_x[i] == 8 || fake->grid_x[i] == 4 || fake->grid_x[i] == 2, "launch %d: %u", i, fake->grid_x[i]);
    seen[fake->grid_x[i]] = 1;
  }
  cr_assert(seen[8] && seen[4] && seen[2]);
}

Test(launch, a_violated_contract_is_a_bad_shape_naming_it) {
  setenv("PHOBOS_AUTOTUNE", "0", 1);
  load_fill();
  /* NC = 1: no variant holds; the first one's values */
  cr_assert_eq(launch_fill(1000, 1, NULL), PHOBOS_BAD_SHAPE);
  cr_assert_str_eq(phobos_last_error(ctx), "kernel 'fill' requires NC >= cdiv(N, BS): NC = 1, cdiv(N, BS) = 8");
  cr_assert_eq(fake->nlaunches, 0);
  /* NC = 2 holds for BS = 512 only: that variant launches */
  cr_assert_eq(launch_fill(1000, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_str_eq(phobos_kernel_last_variant(k), "fill__v2");
  cr_assert_eq(fake->grid[0], 2);
  /* a pinned variant whose contract fails */
  cr_assert_eq(phobos_kernel_pin_variant(k, "fill__v1"), PHOBOS_OK);
  cr_assert_eq(launch_fill(1000, 3, NULL), PHOBOS_BAD_SHAPE);
  cr_assert_str_eq(phobos_last_error(ctx), "kernel 'fill' requires NC >= cdiv(N, BS): NC = 3, cdiv(N, BS) = 4");
  cr_assert_eq(fake->nlaunches, 1);
}

Test(launch, launch_grid_runs_only_variants_whose_grid_is_the_callers) {
  setenv("FAKE_FAST_ENTRY", "fill__v2", 1);
  load_fill();
  /* the caller computed the grid for BS = 256: only those variants run */
  cr_assert_eq(launch_fill(1000, 8, (int64_t[]){4, 1, 1}), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert(!strncmp(phobos_kernel_last_variant(k), "fill__v1", 8), "%s", phobos_kernel_last_variant(k));
  for (int i = 0; i < fake->nlaunches; i++) cr_assert_eq(fake->grid_x[i], 4, "launch %d", i);
  /* a grid no variant takes: refused, naming the variants' grids */
  int n = fake->nlaunches;
  cr_assert_eq(launch_fill(1000, 8, (int64_t[]){5, 1, 1}), PHOBOS_NO_VARIANT);
  cr_assert(strstr(phobos_last_error(ctx), "kernel 'fill': no variant's own grid for these shapes is the caller's "
                                           "(5, 1, 1): 'fill__v0' takes (8, 1, 1), 'fill__v0_occ' takes (8, 1, 1), "),
            "%s", phobos_last_error(ctx));
  cr_assert(strstr(phobos_last_error(ctx), "pin a variant"), "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, n);
  /* a pinned variant takes the caller's grid as given */
  cr_assert_eq(phobos_kernel_pin_variant(k, "fill__v2"), PHOBOS_OK);
  cr_assert_eq(launch_fill(1000, 8, (int64_t[]){5, 1, 1}), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->grid[0], 5);
  /* and the contracts still hold it: NC = 1 is refused */
  cr_assert_eq(launch_fill(1000, 1, (int64_t[]){5, 1, 1}), PHOBOS_BAD_SHAPE);
}

/* a contract whose evaluation divides by zero or overflows at launch names
 * the variant (its constants are folded in) and the operation */
Test(launch, a_contract_that_cannot_be_evaluated_names_the_variant_and_the_step) {
  char text[4096], t2[4096];
  with(tuned, "  variants:\n", "  requires:\n  - {text: \"N >= N / M\", op: \">=\", lhs: \"N\", rhs: \"N / M\"}\n  variants:\n",
       text, sizeof text);
  with(text, "  - {name: Y, kind: tensor, dtype: f32, dims: [N], written: true}\n",
       "  - {name: Y, kind: tensor, dtype: f32, dims: [N], written: true}\n"
       "  - {name: Z, kind: tensor, dtype: f32, dims: [M], written: false}\n", t2, sizeof t2);
  char t3[4096], t4[4096];
  with(t2, "    grid: [\"N 128 cdiv\"]\n", "    grid: [\"N 128 cdiv\"]\n    requires: [[\"N\", \"N M /\"]]\n", t3, sizeof t3);
  with(t3, "    grid: [\"N 256 cdiv\"]\n", "    grid: [\"N 256 cdiv\"]\n    requires: [[\"N\", \"9223372036854775807 neg 1 - neg\"]]\n",
       t4, sizeof t4);
  strcpy(cache_dir, "/tmp/phobos_cache_XXXXXX");
  cr_assert(mkdtemp(cache_dir));
  setenv("PHOBOS_CACHE_DIR", cache_dir, 1);
  int sz[] = {8, 4, 8, 4, 8, 4};
  load_text(t4, "scale", 6, sz);
  uint64_t x = alloc(4000), y = alloc(4000), z = alloc(16);
  phobos_arg a[3] = {phobos_tensor_arg(x, PHOBOS_F32, 1, (int64_t[]){1000}),
                     phobos_tensor_arg(y, PHOBOS_F32, 1, (int64_t[]){1000}),
                     phobos_tensor_arg(z, PHOBOS_F32, 1, (int64_t[]){4})};
  cr_assert_eq(phobos_kernel_pin_variant(k, "scale__v1"), PHOBOS_OK);
  cr_assert_eq(phobos_launch(k, a, 3, NULL), PHOBOS_BAD_SHAPE);
  cr_assert_str_eq(phobos_last_error(ctx), "kernel 'scale' variant 'scale__v1' requires N >= N / M: evaluating it "
                                           "overflows at 'neg' (neg -9223372036854775808)");
  cr_assert_eq(fake->nlaunches, 0);
}

/* @scratch (spec 11): the caller passes A and C; the runtime sizes P and
 * Cnt for the variant and the launch's dims, allocates them once for the
 * stream (rows at 16-byte pitches), zeroes Cnt when it is made, and passes
 * them after the caller's arguments */
static const char *scratch_manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: scratch.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: split_colsum\n"
    "  params:\n"
    "  - {name: A, kind: tensor, dtype: f32, dims: [K, N], written: false, strides: inner-contiguous}\n"
    "  - {name: C, kind: tensor, dtype: f32, dims: [1, N], written: true, strides: inner-contiguous}\n"
    "  - {name: P, kind: tensor, dtype: f32, dims: [KSPLIT, N], written: true, strides: inner-contiguous, scratch: undefined}\n"
    "  - {name: Cnt, kind: tensor, dtype: i32, dims: [Cnt.0], written: true, strides: inner-contiguous, scratch: zero}\n"
    "  variants:\n"
    "  - entry: split_colsum__v0\n"
    "    constants: {TN: 64, KSPLIT: 8}\n"
    "    scratch: [[\"8\", \"N\"], [\"N 64 cdiv\"]]\n"
    "    pinned: {KSPLIT: 8}\n"
    "    grid: [\"N 64 cdiv\", \"8\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "    dependent_launch: false\n";

Test(launch, scratch_tensors_are_the_runtimes) {
  /* A, C: pointer, 2 extents, 1 stride; P likewise; Cnt: pointer, 1 extent */
  int sz[] = {8, 4, 4, 4, 8, 4, 4, 4, 8, 4, 4, 4, 8, 4};
  load_text(scratch_manifest, "split_colsum", 14, sz);
  int64_t K = 50, N = 300;
  phobos_arg a[2] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(K * N)), PHOBOS_F32, 2, (int64_t[]){K, N}),
                     phobos_tensor_arg(alloc(sizeof(float) * (size_t)N), PHOBOS_F32, 2, (int64_t[]){1, N})};
  int allocs0 = fake->nallocs;
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nallocs - allocs0, 2, "P and Cnt");
  cr_assert_eq(fake->alloc_bytes[allocs0], (size_t)(8 * 300 * 4), "P: 8 rows of 1200 bytes");
  cr_assert_eq(fake->alloc_bytes[allocs0 + 1], (size_t)32, "Cnt: 5 counters, rounded to 16 bytes");
  cr_assert_eq(fake->memsets, 1, "Cnt zeroed when made");
  cr_assert_eq(fake->memset_bytes, (size_t)32);
  uint64_t p, cnt;
  memcpy(&p, fake->params[8], 8);
  memcpy(&cnt, fake->params[12], 8);
  cr_assert_eq(p, fake->allocs[allocs0]);
  cr_assert_eq(cnt, fake->allocs[allocs0 + 1]);
  cr_assert_eq(s32(9), 8, "P's rows: KSPLIT");
  cr_assert_eq(s32(10), 300);
  cr_assert_eq(s32(11), 300, "P's row stride, in elements");
  cr_assert_eq(s32(13), 5, "Cnt: cdiv(N, 64)");
  /* again: the same buffers, nothing allocated or zeroed */
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nallocs - allocs0, 2);
  cr_assert_eq(fake->memsets, 1);
  /* a wider N grows them: P, Cnt made again (Cnt zeroed again) */
  int64_t N2 = 1001;
  phobos_arg b2[2] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(K * N2)), PHOBOS_F32, 2, (int64_t[]){K, N2}),
                      phobos_tensor_arg(alloc(sizeof(float) * (size_t)N2), PHOBOS_F32, 2, (int64_t[]){1, N2})};
  cr_assert_eq(phobos_launch(k, b2, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nallocs - allocs0, 4);
  cr_assert_eq(fake->alloc_bytes[allocs0 + 2], (size_t)(8 * 1004 * 4), "rows of 1001 padded to 1004 elements");
  cr_assert_eq(s32(11), 1004);
  cr_assert_eq(fake->memsets, 2);
  /* another stream: buffers of its own */
  cr_assert_eq(phobos_launch(k, a, 2, (void *)0x1234), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nallocs - allocs0, 6);
  /* the caller passes its own arguments only */
  phobos_arg four[4] = {a[0], a[1], a[1], a[1]};
  cr_assert_eq(phobos_launch(k, four, 4, NULL), PHOBOS_BAD_ARGUMENT);
  cr_assert(strstr(phobos_last_error(ctx), "kernel 'split_colsum' takes 2 arguments, got 4 (its 2 scratch tensors the "
                                            "library allocates and passes itself)"),
            "%s", phobos_last_error(ctx));
}

/* arrive's counters (spec 11.2): phobosc derives, for arrive(Cnt[ctx.block.x],
 * KS), the contract that Cnt reaches every block of the grid; a launch
 * whose grid overruns it is an error naming the tensor, the dim and the
 * grid, not a C silently left unwritten */
static const char *arrive_manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: arrive.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: colsum\n"
    "  params:\n"
    "  - {name: X, kind: tensor, dtype: f32, dims: [R, N], written: false, strides: inner-contiguous}\n"
    "  - {name: P, kind: tensor, dtype: f32, dims: [KS, N], written: true, strides: inner-contiguous}\n"
    "  - {name: Cnt, kind: tensor, dtype: i32, dims: [NB], written: true, strides: inner-contiguous}\n"
    "  - {name: C, kind: tensor, dtype: f32, dims: [1, N], written: true, strides: inner-contiguous}\n"
    "  requires:\n"
    "  - {text: \"NB > ctx.grid.x - 1 (arrive's counter 'Cnt', dim 0)\", op: \">\", lhs: \"NB\", rhs: \"ctx.grid.x - 1\"}\n"
    "  variants:\n"
    "  - entry: colsum__v0\n"
    "    constants: {TN: 64, KS: 4}\n"
    "    pinned: {KS: 4}\n"
    "    grid: [\"N 64 cdiv\", \"4\"]\n"
    "    requires: [[\"NB\", \"grid.x 1 - 1 * 0 +\"]]\n"
    "    threads: 64\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "    dependent_launch: false\n";

Test(launch, arrive_counters_the_grid_overruns_are_an_error) {
  int sz[] = {8, 4, 4, 4, 8, 4, 4, 4, 8, 4, 8, 4, 4, 4};
  load_text(arrive_manifest, "colsum", 14, sz);
  int64_t R = 20, N = 300, NB = 5; /* cdiv(300, 64) = 5 column blocks */
  phobos_arg a[4] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(R * N)), PHOBOS_F32, 2, (int64_t[]){R, N}),
                     phobos_tensor_arg(alloc(sizeof(float) * (size_t)(4 * N)), PHOBOS_F32, 2, (int64_t[]){4, N}),
                     phobos_tensor_arg(alloc(sizeof(int32_t) * (size_t)NB), PHOBOS_I32, 1, (int64_t[]){NB}),
                     phobos_tensor_arg(alloc(sizeof(float) * (size_t)N), PHOBOS_F32, 2, (int64_t[]){1, N})};
  cr_assert_eq(phobos_launch(k, a, 4, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  int launched = fake->nlaunches;
  a[2] = phobos_tensor_arg(alloc(sizeof(int32_t) * 2), PHOBOS_I32, 1, (int64_t[]){2});
  cr_assert_eq(phobos_launch(k, a, 4, NULL), PHOBOS_BAD_SHAPE);
  cr_assert_eq(fake->nlaunches, launched, "nothing launched");
  cr_assert(strstr(phobos_last_error(ctx), "requires NB > ctx.grid.x - 1 (arrive's counter 'Cnt', dim 0): NB = 2, "
                                            "ctx.grid.x - 1 = 4"),
            "%s", phobos_last_error(ctx));
}

/* A CUDA graph captures a warmed-up launch (spec 11.3): on a capturing
 * stream a launch whose choice is made and whose scratch is big enough
 * only launches; one that would have to time variants or allocate is
 * PHOBOS_NOT_WARMED_UP, before any call a capture cannot hold (the fake
 * refuses and counts those, as the driver would invalidate the capture) */
Test(launch, a_capture_before_warm_up_is_a_status_and_after_it_only_launches) {
  setenv("FAKE_FAST_ENTRY", "scale__v1", 1);
  load_tuned();
  uint64_t x = alloc(4000), y = alloc(4000);
  fake->capturing = 1;
  cr_assert_eq(launch_tuned(x, y), PHOBOS_NOT_WARMED_UP);
  cr_assert_str_eq(phobos_last_error(ctx), "kernel 'scale': no variant is chosen yet for N = 1000, and the stream is "
                                           "being captured into a graph, which cannot hold the autotuner's timed "
                                           "launches: launch it once with these dims before the capture");
  cr_assert_eq(fake->nlaunches, 0);
  cr_assert_eq(fake->capture_violations, 0);
  fake->capturing = 0;
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  int n = fake->nlaunches, allocs = fake->nallocs;
  fake->capturing = 1;
  cr_assert_eq(launch_tuned(x, y), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, n + 1, "the chosen variant, once");
  cr_assert_str_eq(fake->launched, "scale__v1");
  cr_assert_eq(fake->nallocs, allocs);
  cr_assert_eq(fake->capture_violations, 0);
}

Test(launch, a_capture_that_would_grow_scratch_is_a_status) {
  int sz[] = {8, 4, 4, 4, 8, 4, 4, 4, 8, 4, 4, 4, 8, 4};
  load_text(scratch_manifest, "split_colsum", 14, sz);
  int64_t K = 50, N = 300, N2 = 1001;
  phobos_arg a[2] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(K * N)), PHOBOS_F32, 2, (int64_t[]){K, N}),
                     phobos_tensor_arg(alloc(sizeof(float) * (size_t)N), PHOBOS_F32, 2, (int64_t[]){1, N})},
             b2[2] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(K * N2)), PHOBOS_F32, 2, (int64_t[]){K, N2}),
                      phobos_tensor_arg(alloc(sizeof(float) * (size_t)N2), PHOBOS_F32, 2, (int64_t[]){1, N2})};
  fake->capturing = 1;
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_NOT_WARMED_UP);
  cr_assert_str_eq(phobos_last_error(ctx), "kernel 'split_colsum': scratch tensor 'P' needs 9600 bytes on this stream "
                                           "and has 0; a graph capture cannot hold the allocation (and the wait for the "
                                           "old buffer): launch the kernel once at its largest dims before the capture");
  fake->capturing = 0;
  cr_assert_eq(phobos_launch(k, b2, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  int allocs = fake->nallocs, launches = fake->nlaunches, memsets = fake->memsets;
  fake->capturing = 1;
  /* the largest dims warmed up: these and smaller ones launch */
  cr_assert_eq(phobos_launch(k, b2, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_launch(k, a, 2, NULL), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->nlaunches, launches + 2);
  cr_assert_eq(fake->nallocs, allocs);
  cr_assert_eq(fake->memsets, memsets);
  /* another stream has no buffers yet */
  cr_assert_eq(phobos_launch(k, a, 2, (void *)0x1234), PHOBOS_NOT_WARMED_UP);
  cr_assert_eq(fake->capture_violations, 0);
}

/* grid_barrier (spec 9.8): a co-resident variant is launched cooperatively,
 * a @persistent one's derived grid cut to the CTAs the device holds (the
 * fake's 132 SMs times its occupancy answer), and a grid that cannot be
 * resident is an error, never a launch that would hang. */
static const char *rounds_manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: grid_sync.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: grid_rounds\n"
    "  params:\n"
    "  - {name: A, kind: tensor, dtype: f32, dims: [R, 64], written: true}\n"
    "  - {name: Bar, kind: tensor, dtype: i32, dims: [2], written: true}\n"
    "  variants:\n"
    "  - entry: grid_rounds__v0\n"
    "    constants: {}\n"
    "    pinned: {}\n"
    "    grid: [\"R\", \"1\", \"1\"]\n"
    "    threads: 128\n"
    "    shared_bytes: 0\n"
    "    dynamic_shared: false\n"
    "    dependent_launch: true\n"
    "    co_resident: true\n"
    "    persistent: PERSISTENT\n";

static phobos_status launch_rounds(const char *persistent, int occupancy, int64_t R) {
  char text[4096];
  with(rounds_manifest, "PERSISTENT", persistent, text, sizeof text);
  load_text(text, "grid_rounds", 0, NULL);
  fake->occupancy = occupancy;
  phobos_arg a[2] = {phobos_tensor_arg(alloc(sizeof(float) * (size_t)(R * 64)), PHOBOS_F32, 2, (int64_t[]){R, 64}),
                     phobos_tensor_arg(alloc(64), PHOBOS_I32, 1, (int64_t[]){2})};
  return phobos_launch(k, a, 2, NULL);
}

Test(launch, a_persistent_grid_is_cut_to_what_the_device_holds_and_launched_cooperatively) {
  cr_assert_eq(launch_rounds("true", 2, 1000), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->ex_launches, 1);
  cr_assert_eq(fake->plain_launches, 0);
  cr_assert_eq(fake->grid[0], 264, "132 SMs times 2: got %u", fake->grid[0]);
  cr_assert_eq(fake->nattrs, 1);
  cr_assert_eq(fake->attr_id, 2); /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE */
  cr_assert_eq(fake->attr_value, 1);
}

Test(launch, a_persistent_grid_smaller_than_the_hold_is_kept) {
  cr_assert_eq(launch_rounds("true", 2, 100), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->grid[0], 100);
}

Test(launch, a_grid_barrier_grid_past_the_hold_is_an_error_not_a_hang) {
  cr_assert_eq(launch_rounds("false", 2, 1000), PHOBOS_LAUNCH_LIMIT);
  cr_assert(strstr(phobos_last_error(ctx), "kernel 'grid_rounds' waits at a grid barrier, so its grid of 1000 CTAs "
                                           "must be resident at once; device 0 holds 264"),
            "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->ex_launches + fake->plain_launches, 0);
  cr_assert_eq(launch_rounds("false", 2, 264), PHOBOS_OK, "%s", phobos_last_error(ctx));
}

Test(launch, a_grid_barrier_where_the_driver_cannot_say_the_hold_is_an_error) {
  cr_assert_eq(launch_rounds("true", 0, 10), PHOBOS_LAUNCH_LIMIT);
  cr_assert(strstr(phobos_last_error(ctx), "cannot say how many of its CTAs device 0 holds at once"), "%s",
            phobos_last_error(ctx));
}
