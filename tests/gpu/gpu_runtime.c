/* gpu_runtime.c: libphobos on a GPU, as TAP (no Criterion: the device
 * machine does not have it). Loads tests/gpu/kernels.cubin (built by nvcc
 * from kernels.cu) with its manifest, launches, checks every result against
 * a double-precision CPU reference on fresh random inputs with poisoned
 * outputs, and checks the hostile paths: wrong dims, NULL and misaligned
 * pointers, missing manifest, truncated and corrupt cubins, no fitting
 * variant, over-limit grids, a corrupt autotune cache.
 *
 * Without a device it prints one skip line and "0 passed, 0 failed, 1 skipped".
 * Usage: gpu_runtime DIR_WITH_KERNELS_CUBIN */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

static int n_ok, n_fail, n_test;

static void check(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool cond, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  printf("%s %d - ", cond ? "ok" : "not ok", ++n_test);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
  cond ? n_ok++ : n_fail++;
}

static const CuApi *cu;
static phobos_context *ctx;

static CUdeviceptr dev_alloc(size_t bytes) {
  CUdeviceptr p = 0;
  CUresult r = cu->MemAlloc(&p, bytes);
  if (r != CU_SUCCESS) {
    char b[200];
    printf("Bail out! cuMemAlloc(%zu): %s\n", bytes, cu_error(cu, r, b, sizeof b));
    exit(1);
  }
  return p;
}

static void h2d(CUdeviceptr d, const void *h, size_t n) {
  if (cu->MemcpyHtoD(d, h, n) != CU_SUCCESS) printf("Bail out! cuMemcpyHtoD\n"), exit(1);
}

static void d2h(void *h, CUdeviceptr d, size_t n) {
  if (cu->MemcpyDtoH(h, d, n) != CU_SUCCESS) printf("Bail out! cuMemcpyDtoH\n"), exit(1);
}

static void sync_ok(const char *what) {
  CUresult r = cu->CtxSynchronize();
  char b[200];
  check(r == CU_SUCCESS, "%s ran without a device fault (%s)", what, r == CU_SUCCESS ? "ok" : cu_error(cu, r, b, sizeof b));
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double rnd(void) {
  rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
  return (double)((rng * 2685821657736338717ull) >> 11) / 9007199254740992.0 * 2 - 1;
}

static void copy_file(const char *from, const char *to, long limit) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[4096];
  size_t n;
  long total = 0;
  while (a && b && (n = fread(buf, 1, sizeof buf, a)) > 0 && (limit < 0 || total < limit)) {
    if (limit >= 0 && total + (long)n > limit) n = (size_t)(limit - total);
    fwrite(buf, 1, n, b);
    total += (long)n;
  }
  if (a) fclose(a);
  if (b) fclose(b);
}

static void test_axpy(phobos_module *mod, const char *cache_dir) {
  phobos_kernel *k;
  check(phobos_kernel_get(mod, "axpy", &k) == PHOBOS_OK, "axpy found");
  int n = 1000003; /* not a multiple of any block */
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *out = malloc(bytes);
  for (int i = 0; i < n; i++) x[i] = (float)rnd(), y[i] = (float)rnd();
  /* Y sits between two 256-byte guards: neither the launches nor the
   * refused ones below may write outside it */
  enum { G = 256 };
  CUdeviceptr dx = dev_alloc(bytes), dy_base = dev_alloc(bytes + 2 * G), dy = dy_base + G;
  if (cu->MemsetD8(dy_base, 0xa5, bytes + 2 * G) != CU_SUCCESS) printf("Bail out! cuMemsetD8\n"), exit(1);
  h2d(dx, x, bytes);
  h2d(dy, y, bytes);
  phobos_arg args[3] = {phobos_tensor_arg(dx, PHOBOS_F32, 1, (int64_t[]){n}),
                        phobos_tensor_arg(dy, PHOBOS_F32, 1, (int64_t[]){n}), phobos_float_arg(0.75)};
  phobos_status s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_OK, "axpy launches (autotuned over 2 variants): %s %s", phobos_status_name(s), phobos_last_error(ctx));
  sync_ok("axpy");
  d2h(out, dy, bytes);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double want = 0.75 * (double)x[i] + (double)y[i];
    if (fabs(out[i] - want) > 1e-6 * (1 + fabs(want))) bad++;
  }
  /* autotuning ran each variant 6 times on scratch copies: the caller's Y
   * was updated exactly once */
  check(bad == 0, "axpy matches the reference on all %d elements, Y written once (%d differ)", n, bad);
  const char *first = phobos_kernel_last_variant(k);
  check(strlen(first) > 0, "the chosen variant is %s", first);
  char path[1200];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache_dir);
  struct stat st;
  check(stat(path, &st) == 0 && st.st_size > 0, "autotune cache written to %s", path);
  FILE *f = fopen(path, "r");
  char text[4096] = "";
  size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
  text[got] = 0;
  if (f) fclose(f);
  check(strstr(text, "axpy") && strstr(text, "N=1000003") && strstr(text, first), "cache entry names the shape and %s",
        first);
  s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_OK && !strcmp(phobos_kernel_last_variant(k), first), "second launch takes the cached %s", first);
  sync_ok("axpy again");
  /* hostile arguments */
  phobos_arg bad_args[3];
  memcpy(bad_args, args, sizeof args);
  bad_args[1].tensor.shape[0] = n - 1;
  s = phobos_launch(k, bad_args, 3, NULL);
  check(s == PHOBOS_BAD_SHAPE && strstr(phobos_last_error(ctx), "tensor 'Y' dim 0 (N) is 1000002, but N = 1000003"),
        "mismatched dims: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  memcpy(bad_args, args, sizeof args);
  bad_args[0].tensor.data = 0;
  s = phobos_launch(k, bad_args, 3, NULL);
  check(s == PHOBOS_BAD_POINTER, "NULL pointer: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  memcpy(bad_args, args, sizeof args);
  bad_args[0].tensor.data += 2;
  s = phobos_launch(k, bad_args, 3, NULL);
  check(s == PHOBOS_BAD_POINTER, "misaligned pointer: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  s = phobos_launch(k, args, 2, NULL);
  check(s == PHOBOS_BAD_ARGUMENT, "two arguments for three: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  memcpy(bad_args, args, sizeof args);
  bad_args[0].tensor.shape[0] = bad_args[1].tensor.shape[0] = 0;
  s = phobos_launch(k, bad_args, 3, NULL);
  check(s == PHOBOS_BAD_SHAPE, "zero-length tensors: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  sync_ok("axpy and the refused launches");
  unsigned char guard[2][G];
  d2h(guard[0], dy_base, G);
  d2h(guard[1], dy + bytes, G);
  int touched = 0;
  for (int j = 0; j < G; j++) touched += (guard[0][j] != 0xa5) + (guard[1][j] != 0xa5);
  check(touched == 0, "the guards around Y are intact after the autotuned launch, the cached one and 5 refusals (%d bytes changed)",
        touched);
  cu->MemFree(dx);
  cu->MemFree(dy_base);
  free(x), free(y), free(out);
}

static void test_reverse(phobos_module *mod) {
  phobos_kernel *k;
  check(phobos_kernel_get(mod, "reverse", &k) == PHOBOS_OK, "reverse found");
  int n = 25600;
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *out = malloc(bytes);
  for (int i = 0; i < n; i++) x[i] = (float)rnd();
  CUdeviceptr dx = dev_alloc(bytes), dy = dev_alloc(bytes);
  h2d(dx, x, bytes);
  cu->MemsetD8(dy, 0xff, bytes); /* poison: NaN */
  phobos_arg args[2] = {phobos_tensor_arg(dx, PHOBOS_F32, 1, (int64_t[]){n}),
                        phobos_tensor_arg(dy, PHOBOS_F32, 1, (int64_t[]){n})};
  phobos_status s = phobos_launch(k, args, 2, NULL);
  check(s == PHOBOS_OK, "reverse with 100 KB of dynamic shared memory launches: %s %s", phobos_status_name(s),
        phobos_last_error(ctx));
  sync_ok("reverse");
  d2h(out, dy, bytes);
  int bad = 0;
  for (int i = 0; i < n; i++) bad += out[i] != x[n - 1 - i];
  check(bad == 0, "reverse is exact (%d differ)", bad);
  args[0].tensor.shape[0] = args[1].tensor.shape[0] = 100;
  s = phobos_launch(k, args, 2, NULL);
  check(s == PHOBOS_NO_VARIANT && strstr(phobos_last_error(ctx), "N = 25600"), "no variant for N = 100: %s: %s",
        phobos_status_name(s), phobos_last_error(ctx));
  cu->MemFree(dx);
  cu->MemFree(dy);
  free(x), free(out);
}

static void test_fill_grid(phobos_module *mod) {
  phobos_kernel *k;
  check(phobos_kernel_get(mod, "fill", &k) == PHOBOS_OK, "fill found");
  int n = 5000;
  CUdeviceptr d = dev_alloc(sizeof(int) * (size_t)n);
  phobos_arg args[2] = {phobos_tensor_arg(d, PHOBOS_I32, 1, (int64_t[]){n}), phobos_int_arg(7)};
  phobos_status s = phobos_launch(k, args, 2, NULL);
  check(s == PHOBOS_LAUNCH_LIMIT && strstr(phobos_last_error(ctx), "no @grid"), "no @grid without a grid: %s: %s",
        phobos_status_name(s), phobos_last_error(ctx));
  int64_t grid[3] = {(n + 63) / 64, 1, 1};
  s = phobos_launch_grid(k, args, 2, grid, NULL);
  check(s == PHOBOS_OK, "fill with the caller's grid: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  sync_ok("fill");
  int *h = malloc(sizeof(int) * (size_t)n), bad = 0;
  d2h(h, d, sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) bad += h[i] != 7 + i;
  check(bad == 0, "fill is exact (%d differ)", bad);
  int64_t huge[3] = {1, 70000, 1};
  s = phobos_launch_grid(k, args, 2, huge, NULL);
  check(s == PHOBOS_LAUNCH_LIMIT, "grid y = 70000 refused: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  int64_t zero[3] = {0, 1, 1};
  s = phobos_launch_grid(k, args, 2, zero, NULL);
  check(s == PHOBOS_LAUNCH_LIMIT, "grid x = 0 refused: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  cu->MemFree(d);
  free(h);
}

/* A phobosc kernel without @grid (tune_grid.ph, compiled by meson into
 * DIR/tune_grid.cubin): every variant, pinned, and the autotuner's choice
 * must write all of Y on its own derived grid, cdiv(N, BS). N = 1000003 is
 * the size at which one grid for all variants left 992131 outputs NaN. Y
 * is poisoned (all bits set: NaN) before each launch and checked element
 * by element against a double reference. */
static int tune_grid_bad(CUdeviceptr dy, const float *x, float *y, int n) {
  d2h(y, dy, sizeof(float) * (size_t)n);
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double ref = (double)x[i] * 3.0 + 1.0;
    bad += !(fabs((double)y[i] - ref) <= 1e-6 * fabs(ref) + 1e-6); /* NaN fails */
  }
  return bad;
}

static void test_tune_grid(const char *dir) {
  char cubin[1200];
  snprintf(cubin, sizeof cubin, "%s/tune_grid.cubin", dir);
  phobos_module *mod = NULL;
  phobos_kernel *k = NULL;
  phobos_status s = phobos_module_load(ctx, cubin, &mod);
  check(s == PHOBOS_OK, "tune_grid.cubin loads: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  if (s != PHOBOS_OK || phobos_kernel_get(mod, "tune_grid", &k) != PHOBOS_OK) return;
  const int n = 1000003;
  float *x = malloc(sizeof(float) * (size_t)n), *y = malloc(sizeof(float) * (size_t)n);
  for (int i = 0; i < n; i++) x[i] = (float)rnd();
  CUdeviceptr dx = dev_alloc(sizeof(float) * (size_t)n), dy = dev_alloc(sizeof(float) * (size_t)n),
              dc = dev_alloc(sizeof(int32_t) * (size_t)n);
  h2d(dx, x, sizeof(float) * (size_t)n);
  int64_t nc = (n + 127) / 128; /* a counter a block of the narrowest tile */
  phobos_arg args[3] = {phobos_tensor_arg(dx, PHOBOS_F32, 1, (int64_t[]){n}),
                        phobos_tensor_arg(dy, PHOBOS_F32, 1, (int64_t[]){n}),
                        phobos_tensor_arg(dc, PHOBOS_I32, 1, (int64_t[]){nc})};
  /* each variant pinned, on its own grid */
  for (int i = 0; i < k->mf->nvariants; i++) {
    const MfVariant *v = &k->mf->variants[i];
    int64_t bs = 0;
    for (int c = 0; c < v->nconsts; c++)
      if (!strcmp(v->const_name[c], "BS")) bs = v->const_value[c];
    cu->MemsetD8(dy, 0xff, sizeof(float) * (size_t)n);
    check(phobos_kernel_pin_variant(k, v->name) == PHOBOS_OK, "pin %s", v->name);
    s = phobos_launch(k, args, 3, NULL);
    check(s == PHOBOS_OK, "tune_grid pinned to %s (BS %lld): %s %s", v->name, (long long)bs, phobos_status_name(s),
          phobos_last_error(ctx));
    sync_ok(v->name);
    int bad = tune_grid_bad(dy, x, y, n);
    check(bad == 0, "%s on cdiv(%d, %lld) = %lld blocks writes every element (%d wrong)", v->name, n, (long long)bs,
          (long long)((n + bs - 1) / bs), bad);
  }
  /* the autotuner's choice, on its own grid */
  phobos_kernel_pin_variant(k, NULL);
  cu->MemsetD8(dy, 0xff, sizeof(float) * (size_t)n);
  s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_OK, "tune_grid autotuned: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  sync_ok("tune_grid autotuned");
  int bad = tune_grid_bad(dy, x, y, n);
  check(bad == 0, "the autotuner's %s writes every element (%d wrong)", phobos_kernel_last_variant(k), bad);
  /* the caller's grid for BS = 256: a BS = 256 variant runs, every element written */
  int64_t g256[3] = {(n + 255) / 256, 1, 1}, g5[3] = {5, 1, 1};
  cu->MemsetD8(dy, 0xff, sizeof(float) * (size_t)n);
  s = phobos_launch_grid(k, args, 3, g256, NULL);
  check(s == PHOBOS_OK && !strncmp(phobos_kernel_last_variant(k), "tune_grid__v1", 13),
        "phobos_launch_grid for BS 256 runs a BS 256 variant: %s %s %s", phobos_status_name(s),
        phobos_kernel_last_variant(k), phobos_last_error(ctx));
  sync_ok("tune_grid on the caller's grid");
  bad = tune_grid_bad(dy, x, y, n);
  check(bad == 0, "phobos_launch_grid writes every element (%d wrong)", bad);
  s = phobos_launch_grid(k, args, 3, g5, NULL);
  check(s == PHOBOS_NO_VARIANT && strstr(phobos_last_error(ctx), "no variant's own grid"),
        "a grid no variant takes is refused: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  /* a launch that breaks the contract: one counter */
  args[2] = phobos_tensor_arg(dc, PHOBOS_I32, 1, (int64_t[]){1});
  s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_BAD_SHAPE && strstr(phobos_last_error(ctx), "kernel 'tune_grid' requires NC >= cdiv(N, BS): NC = 1"),
        "a broken contract is PHOBOS_BAD_SHAPE: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  cu->MemFree(dx), cu->MemFree(dy), cu->MemFree(dc);
  free(x), free(y);
}

static void test_files(const char *dir) {
  char cubin[1200], tmp[1200], yaml[1200];
  snprintf(cubin, sizeof cubin, "%s/kernels.cubin", dir);
  phobos_module *m = NULL;
  phobos_status s = phobos_module_load(ctx, "/nonexistent/k.cubin", &m);
  check(s == PHOBOS_IO_ERROR && !m, "missing manifest: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  char d[] = "/tmp/phobos_gpu_XXXXXX";
  check(mkdtemp(d) != NULL, "scratch dir %s", d);
  snprintf(yaml, sizeof yaml, "%s/kernels.yaml", dir);
  snprintf(tmp, sizeof tmp, "%s/kernels.yaml", d);
  copy_file(yaml, tmp, -1);
  snprintf(tmp, sizeof tmp, "%s/kernels.cubin", d);
  copy_file(cubin, tmp, 200); /* truncated */
  s = phobos_module_load(ctx, tmp, &m);
  check(s == PHOBOS_BAD_CUBIN, "truncated cubin: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  FILE *f = fopen(tmp, "wb");
  fputs("this is not a cubin at all, just text that is long enough to pass a size check............", f);
  fclose(f);
  s = phobos_module_load(ctx, tmp, &m);
  check(s == PHOBOS_BAD_CUBIN, "corrupt cubin: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  copy_file(cubin, tmp, -1);
  snprintf(tmp, sizeof tmp, "%s/kernels.yaml", d);
  f = fopen(tmp, "wb");
  fputs("phobos_manifest: 1\ncompiler: x\nsource: x\nsource_hash: 0\narch: sm_90a\ncubin: kernels.cubin\n"
        "kernels:\n- name: ghost\n  params: []\n  variants:\n  - {entry: ghost__v0, grid: [\"1\"], threads: 32, "
        "shared_bytes: 0}\n", f);
  fclose(f);
  snprintf(tmp, sizeof tmp, "%s/kernels.cubin", d);
  s = phobos_module_load(ctx, tmp, &m);
  check(s == PHOBOS_BAD_MANIFEST && strstr(phobos_last_error(ctx), "ghost__v0"), "manifest names an entry the cubin lacks: %s: %s",
        phobos_status_name(s), phobos_last_error(ctx));
  /* a manifest asking for more dynamic shared memory than the device has */
  FILE *in = fopen(yaml, "rb");
  char text[8192];
  size_t len = in ? fread(text, 1, sizeof text - 1, in) : 0;
  if (in) fclose(in);
  text[len] = 0;
  char *at = strstr(text, "shared_bytes: 102400");
  check(at != NULL, "the reverse variant's shared_bytes found in %s", yaml);
  if (!at) return;
  snprintf(tmp, sizeof tmp, "%s/kernels.yaml", d);
  f = fopen(tmp, "wb");
  fwrite(text, 1, (size_t)(at - text), f);
  fputs("shared_bytes: 300000", f);
  fputs(at + strlen("shared_bytes: 102400"), f);
  fclose(f);
  snprintf(tmp, sizeof tmp, "%s/kernels.cubin", d);
  s = phobos_module_load(ctx, tmp, &m);
  check(s == PHOBOS_OK, "manifest with 300000 shared bytes loads: %s %s", phobos_status_name(s), phobos_last_error(ctx));
  if (s != PHOBOS_OK) return;
  phobos_kernel *k;
  check(phobos_kernel_get(m, "reverse", &k) == PHOBOS_OK, "reverse found");
  CUdeviceptr dx = dev_alloc(sizeof(float) * 25600), dy = dev_alloc(sizeof(float) * 25600);
  phobos_arg args[2] = {phobos_tensor_arg(dx, PHOBOS_F32, 1, (int64_t[]){25600}),
                        phobos_tensor_arg(dy, PHOBOS_F32, 1, (int64_t[]){25600})};
  s = phobos_launch(k, args, 2, NULL);
  check(s == PHOBOS_LAUNCH_LIMIT && strstr(phobos_last_error(ctx), "needs 300000 bytes of shared memory"),
        "shared memory over the device's limit refused: %s: %s", phobos_status_name(s), phobos_last_error(ctx));
  cu->MemFree(dx);
  cu->MemFree(dy);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  setvbuf(stdout, NULL, _IONBF, 0); /* a crash must not swallow the lines before it */
  phobos_status s = phobos_context_create(0, &ctx);
  if (s == PHOBOS_NO_DRIVER || s == PHOBOS_NO_DEVICE) {
    printf("1..0 # SKIP no CUDA device: %s\n", phobos_last_error(ctx));
    printf("# 0 passed, 0 failed, 1 skipped\n");
    phobos_context_destroy(ctx);
    return 0;
  }
  const char *why;
  cu = cu_api(&why);
  check(s == PHOBOS_OK, "context on device 0: %s", s == PHOBOS_OK ? ctx->name : phobos_last_error(ctx));
  if (s != PHOBOS_OK) return 1;
  char cache[] = "/tmp/phobos_cache_XXXXXX";
  if (!mkdtemp(cache)) return 1;
  setenv("PHOBOS_CACHE_DIR", cache, 1);
  char cubin[1200];
  snprintf(cubin, sizeof cubin, "%s/kernels.cubin", dir);
  phobos_module *mod = NULL;
  s = phobos_module_load(ctx, cubin, &mod);
  check(s == PHOBOS_OK, "module %s loads: %s %s", cubin, phobos_status_name(s), phobos_last_error(ctx));
  if (s != PHOBOS_OK) return 1;
  phobos_kernel *k;
  s = phobos_kernel_get(mod, "nope", &k);
  check(s == PHOBOS_NOT_FOUND && strstr(phobos_last_error(ctx), "it has: axpy"), "unknown kernel: %s",
        phobos_last_error(ctx));
  test_axpy(mod, cache);
  test_reverse(mod);
  test_fill_grid(mod);
  test_tune_grid(dir);
  test_files(dir);
  /* a corrupt cache is ignored, not fatal */
  phobos_context_destroy(ctx);
  char path[1200];
  snprintf(path, sizeof path, "%s/autotune.yaml", cache);
  FILE *f = fopen(path, "w");
  fputs("{ this: is: [not valid yaml\n", f);
  fclose(f);
  phobos_context_create(0, &ctx);
  phobos_module_load(ctx, cubin, &mod);
  phobos_kernel_get(mod, "axpy", &k);
  int n = 4096;
  CUdeviceptr dx = dev_alloc(sizeof(float) * 4096), dy = dev_alloc(sizeof(float) * 4096);
  cu->MemsetD8(dx, 0, sizeof(float) * 4096);
  cu->MemsetD8(dy, 0, sizeof(float) * 4096);
  phobos_arg args[3] = {phobos_tensor_arg(dx, PHOBOS_F32, 1, (int64_t[]){n}),
                        phobos_tensor_arg(dy, PHOBOS_F32, 1, (int64_t[]){n}), phobos_float_arg(1)};
  s = phobos_launch(k, args, 3, NULL);
  check(s == PHOBOS_OK && phobos_cache_status(ctx) == PHOBOS_CACHE_IGNORED, "corrupt cache ignored: %s, cache %s: %s",
        phobos_status_name(s), phobos_status_name(phobos_cache_status(ctx)), phobos_last_error(ctx));
  sync_ok("axpy after a corrupt cache");
  cu->MemFree(dx);
  cu->MemFree(dy);
  phobos_context_destroy(ctx);
  printf("1..%d\n# %d passed, %d failed\n", n_test, n_ok, n_fail);
  return n_fail ? 1 : 0;
}
