/* test_runtime_launch.c: the runtime's launch path against the fake driver
 * (fake_cuda.c, PHOBOS_LIBCUDA=FAKE_LIBCUDA): the parameters a launch
 * passes, programmatic dependent launch, and the tensor maps it builds (or
 * does not) for phobosc --tma, pad-and-mask splits included. No GPU. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cuda.h"
#include "phobos.h"

/* a kernel like spec/conformance/qload.ph's qload_sum under --tma: Q
 * [B, S, HQ, D] read through a map that views HQ as [HQ / 7, 7] */
static const char *manifest =
    "phobos_manifest: 1\n"
    "compiler: phobosc 0.1.0\n"
    "source: qload.ph\n"
    "source_hash: 0123456789abcdef\n"
    "arch: sm_90a\n"
    "cubin: k.cubin\n"
    "kernels:\n"
    "- name: qload_sum\n"
    "  params:\n"
    "  - {name: Q, kind: tensor, dtype: f32, dims: [B, S, HQ, D], written: false}\n"
    "  - {name: R, kind: tensor, dtype: f32, dims: [B, S, HQ, 1], written: true}\n"
    "  variants:\n"
    "  - entry: qload_sum__v0\n"
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
 * runtime's check passes) and k.yaml into a fresh directory */
static void load(const char *dependent_launch) {
  static char dir[] = "/tmp/phobos_fake_XXXXXX";
  cr_assert(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/k.yaml", dir);
  FILE *f = fopen(path, "w");
  cr_assert(f);
  const char *at = strstr(manifest, "DL");
  fprintf(f, "%.*s%s%s", (int)(at - manifest), manifest, dependent_launch, at + 2);
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
  setenv("PHOBOS_LIBCUDA", getenv("FAKE_LIBCUDA"), 1);
  cr_assert_eq(phobos_context_create(0, &ctx), PHOBOS_OK, "%s", phobos_last_error(ctx));
  phobos_module *mod;
  cr_assert_eq(phobos_module_load(ctx, path, &mod), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(phobos_kernel_get(mod, "qload_sum", &k), PHOBOS_OK, "%s", phobos_last_error(ctx));
  void *lib = dlopen(getenv("FAKE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  cr_assert(lib, "the runtime did not open the fake driver");
  FakeCuda *(*state)(void) = (FakeCuda * (*)(void)) dlsym(lib, "fake_cuda_state");
  void (*sizes)(int, const int *) = (void (*)(int, const int *))dlsym(lib, "fake_cuda_param_sizes");
  cr_assert(state && sizes);
  fake = state();
  /* Q: pointer + 4 extents, R: pointer + 4 extents, then the map and its flag */
  int sz[] = {8, 4, 4, 4, 4, 8, 4, 4, 4, 4, 128, 4};
  sizes(12, sz);
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
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 64);
  cr_assert_eq(launch(q, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->ex_launches, 1);
  cr_assert_eq(fake->plain_launches, 0);
  cr_assert_eq(fake->nattrs, 1);
  cr_assert_eq(fake->attr_id, 6); /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */
  cr_assert_eq(fake->attr_value, 1);
  cr_assert_eq(fake->block, 128);
}

Test(launch, plain_launch_without_dependent_launch) {
  load("false");
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 64);
  cr_assert_eq(launch(q, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->plain_launches, 1);
  cr_assert_eq(fake->ex_launches, 0);
}

Test(launch, dependent_launch_turned_off_by_the_environment) {
  setenv("PHOBOS_DEPENDENT_LAUNCH", "0", 1);
  load("true");
  uint64_t q = alloc(sizeof(float) * 2 * 19 * 14 * 64);
  cr_assert_eq(launch(q, 19, 14), PHOBOS_OK, "%s", phobos_last_error(ctx));
  cr_assert_eq(fake->plain_launches, 1);
  cr_assert_eq(fake->ex_launches, 0);
  cr_assert_eq(s32(11), 1, "the maps are built all the same");
}
