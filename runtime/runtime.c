/* runtime.c: contexts, modules, kernels, argument checks and launches.
 *
 * The launch ABI (manifest `phobos_manifest: 1`): parameters in declaration
 * order; a tensor passes its device pointer (.u64) followed by its extents
 * as .s32, one per dim; a scalar passes f32 for f16/bf16/f32, f64, s32 for
 * i8/u8/i32 and bool, s64 for i64. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"

static const char *status_names[] = {"PHOBOS_OK",           "PHOBOS_NO_DRIVER",    "PHOBOS_NO_DEVICE",
                                     "PHOBOS_CUDA_ERROR",   "PHOBOS_IO_ERROR",     "PHOBOS_BAD_MANIFEST",
                                     "PHOBOS_BAD_CUBIN",    "PHOBOS_NOT_FOUND",    "PHOBOS_BAD_ARGUMENT",
                                     "PHOBOS_BAD_SHAPE",    "PHOBOS_BAD_POINTER",  "PHOBOS_NO_VARIANT",
                                     "PHOBOS_LAUNCH_LIMIT", "PHOBOS_CACHE_IGNORED", "PHOBOS_OUT_OF_MEMORY",
                                     "PHOBOS_INVALID",      "PHOBOS_NOT_WARMED_UP"};

const char *phobos_status_name(phobos_status s) {
  return (unsigned)s < sizeof status_names / sizeof status_names[0] ? status_names[s] : "PHOBOS_UNKNOWN_STATUS";
}

phobos_status rt_set_err(phobos_context *ctx, phobos_status s, const char *fmt, ...) {
  if (ctx) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err, sizeof ctx->err, fmt, ap);
    va_end(ap);
  }
  return s;
}

const char *phobos_last_error(const phobos_context *ctx) { return ctx ? ctx->err : "no context (NULL)"; }

/* Calls a driver entry point and turns a failure into a status. */
#define CU_CHECK(ctx, call, what)                                                             \
  do {                                                                                        \
    CUresult r_ = (call);                                                                     \
    if (r_ != CU_SUCCESS) {                                                                   \
      char b_[200];                                                                           \
      return rt_set_err(ctx, PHOBOS_CUDA_ERROR, "%s failed: %s", what, cu_error((ctx)->cu, r_, b_, sizeof b_)); \
    }                                                                                         \
  } while (0)

phobos_status phobos_context_create(int ordinal, phobos_context **out) {
  if (!out) return PHOBOS_INVALID;
  phobos_context *ctx = calloc(1, sizeof *ctx);
  *out = ctx;
  if (!ctx) return PHOBOS_OUT_OF_MEMORY;
  ctx->ordinal = ordinal;
  const char *why = NULL;
  ctx->cu = cu_api(&why);
  if (!ctx->cu) return rt_set_err(ctx, PHOBOS_NO_DRIVER, "%s", why);
  int n = 0;
  CU_CHECK(ctx, ctx->cu->DeviceGetCount(&n), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= n)
    return rt_set_err(ctx, PHOBOS_NO_DEVICE, "device ordinal %d: this machine has %d CUDA device%s", ordinal, n,
                   n == 1 ? "" : "s");
  CU_CHECK(ctx, ctx->cu->DeviceGet(&ctx->dev, ordinal), "cuDeviceGet");
  CU_CHECK(ctx, ctx->cu->DevicePrimaryCtxRetain(&ctx->cuctx, ctx->dev), "cuDevicePrimaryCtxRetain");
  ctx->retained = true;
  CU_CHECK(ctx, ctx->cu->CtxSetCurrent(ctx->cuctx), "cuCtxSetCurrent");
  CU_CHECK(ctx, ctx->cu->DeviceGetName(ctx->name, sizeof ctx->name, ctx->dev), "cuDeviceGetName");
  int v;
  static const int attrs[3] = {CU_ATTR_MAX_GRID_X, CU_ATTR_MAX_GRID_Y, CU_ATTR_MAX_GRID_Z};
  for (int i = 0; i < 3; i++) {
    CU_CHECK(ctx, ctx->cu->DeviceGetAttribute(&v, attrs[i], ctx->dev), "cuDeviceGetAttribute(max grid)");
    ctx->max_grid[i] = v;
  }
  CU_CHECK(ctx, ctx->cu->DeviceGetAttribute(&ctx->max_shared_optin, CU_ATTR_SHARED_OPTIN, ctx->dev),
           "cuDeviceGetAttribute(shared opt-in)");
  const char *dl = getenv("PHOBOS_DEPENDENT_LAUNCH");
  ctx->dependent_launch = !(dl && !strcmp(dl, "0"));
  return PHOBOS_OK;
}

void phobos_context_destroy(phobos_context *ctx) {
  if (!ctx) return;
  while (ctx->modules) phobos_module_unload(ctx->modules);
  at_free(ctx);
  if (ctx->retained) ctx->cu->DevicePrimaryCtxRelease(ctx->dev);
  free(ctx);
}

/* ------------------------------------------------------------- modules */

static const char *file_kind(mode_t m) {
  return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
       : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a plain file";
}

phobos_status rt_read_file(const char *path, const char *what, size_t max, phobos_status too_big, RtFile *f, char *err,
                           size_t errlen) {
  *f = (RtFile){0};
  /* O_NONBLOCK: opening a FIFO without a writer returns at once (fstat then
   * refuses it); a regular file reads as usual */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    f->open_errno = errno;
    snprintf(err, errlen, "cannot open %s %s: %s", what, path, strerror(errno));
    return PHOBOS_IO_ERROR;
  }
  struct stat sb;
  phobos_status s = PHOBOS_OK;
  if (fstat(fd, &sb) != 0) {
    snprintf(err, errlen, "cannot stat %s %s: %s", what, path, strerror(errno));
    s = PHOBOS_IO_ERROR;
  } else if (!S_ISREG(sb.st_mode)) {
    snprintf(err, errlen, "%s %s is not a regular file (%s)", what, path, file_kind(sb.st_mode));
    s = PHOBOS_IO_ERROR;
  } else if (sb.st_size < 0 || (uint64_t)sb.st_size > max) {
    snprintf(err, errlen, "%s %s is %lld bytes; this runtime reads at most %zu", what, path, (long long)sb.st_size, max);
    s = too_big;
  }
  /* the size fstat gave, plus one byte to see a file that grew meanwhile */
  size_t cap = s == PHOBOS_OK ? (size_t)sb.st_size + 1 : 0, n = 0;
  char *buf = s == PHOBOS_OK ? malloc(cap + 1) : NULL;
  if (s == PHOBOS_OK && !buf) {
    snprintf(err, errlen, "out of memory reading %s %s (%zu bytes)", what, path, cap);
    s = PHOBOS_OUT_OF_MEMORY;
  }
  while (s == PHOBOS_OK) {
    if (n == cap) { /* it grew: read on, up to the bound */
      if (cap > max) {
        snprintf(err, errlen, "%s %s is over %zu bytes; this runtime reads at most %zu", what, path, max, max);
        s = too_big;
        break;
      }
      size_t ncap = cap * 2 < max + 1 ? cap * 2 : max + 1;
      char *nb = realloc(buf, ncap + 1);
      if (!nb) {
        snprintf(err, errlen, "out of memory reading %s %s", what, path);
        s = PHOBOS_OUT_OF_MEMORY;
        break;
      }
      buf = nb, cap = ncap;
    }
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(errno));
      s = PHOBOS_IO_ERROR;
    } else if (got == 0) {
      break;
    } else {
      n += (size_t)got;
    }
  }
  close(fd);
  if (s != PHOBOS_OK) {
    free(buf);
    return s;
  }
  buf[n] = 0;
  f->data = buf, f->len = n;
  return PHOBOS_OK;
}

static uint64_t rd(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* cuModuleLoadData takes no length: a truncated or damaged cubin would make
 * the driver read past the buffer. So the ELF structure is checked first:
 * a 64-bit little-endian CUDA ELF whose header tables and sections lie
 * inside the file. */
bool rt_elf_ok(const unsigned char *p, size_t len, char *why, size_t wlen) {
  if (len < 64 || memcmp(p, "\177ELF", 4) != 0) return snprintf(why, wlen, "no ELF header (%zu bytes)", len), false;
  if (p[4] != 2 || p[5] != 1) return snprintf(why, wlen, "not a 64-bit little-endian ELF"), false;
  if (rd(p + 18, 2) != 190) return snprintf(why, wlen, "an ELF for machine %llu, not CUDA (190)", (unsigned long long)rd(p + 18, 2)), false;
  uint64_t phoff = rd(p + 0x20, 8), shoff = rd(p + 0x28, 8);
  uint64_t phent = rd(p + 0x36, 2), phnum = rd(p + 0x38, 2), shent = rd(p + 0x3a, 2), shnum = rd(p + 0x3c, 2);
  if ((shnum && shent != 64) || (phnum && phent != 56)) return snprintf(why, wlen, "unexpected ELF table entry sizes"), false;
  if (shoff > len || shnum * 64 > len - shoff || phoff > len || phnum * 56 > len - phoff)
    return snprintf(why, wlen, "truncated: its header tables end past the file's %zu bytes", len), false;
  for (uint64_t i = 0; i < shnum; i++) {
    const unsigned char *sh = p + shoff + i * 64;
    uint64_t type = rd(sh + 4, 4), off = rd(sh + 0x18, 8), size = rd(sh + 0x20, 8);
    if (type != 8 /* NOBITS */ && (off > len || size > len - off))
      return snprintf(why, wlen, "truncated: section %llu ends past the file's %zu bytes", (unsigned long long)i, len), false;
  }
  for (uint64_t i = 0; i < phnum; i++) {
    const unsigned char *ph = p + phoff + i * 56;
    uint64_t off = rd(ph + 8, 8), size = rd(ph + 0x20, 8);
    if (off > len || size > len - off)
      return snprintf(why, wlen, "truncated: segment %llu ends past the file's %zu bytes", (unsigned long long)i, len), false;
  }
  return true;
}

/* The manifest beside a cubin: the same path with .yaml for .cubin. */
static char *manifest_path(const char *cubin) {
  size_t n = strlen(cubin);
  const char *ext = n > 6 && !strcmp(cubin + n - 6, ".cubin") ? cubin + n - 6 : cubin + n;
  char *p = malloc((size_t)(ext - cubin) + 6);
  if (!p) return NULL;
  memcpy(p, cubin, (size_t)(ext - cubin));
  strcpy(p + (ext - cubin), ".yaml");
  return p;
}

/* Frees a module that phobos_module_load could not finish (not yet on the
 * context's list). */
static void unload_failed(phobos_module *m) {
  m->ctx->cu->ModuleUnload(m->cumod);
  for (int i = 0; i < m->mf.nkernels; i++) rt_kernel_free(&m->kernels[i]);
  mf_free(&m->mf);
  free(m->kernels);
  free(m);
}

/* The common part of phobos_module_load and phobos_module_load_image: m
 * holds its parsed manifest; image (len bytes) is checked, hashed for the
 * autotune key and loaded, every variant's entry found. name says what
 * the messages call the image. Frees m on failure. */
static phobos_status load_image(phobos_context *ctx, phobos_module *m, const char *name, const unsigned char *image,
                                size_t len, phobos_module **out);

phobos_status phobos_module_load(phobos_context *ctx, const char *cubin_path, phobos_module **out) {
  if (!ctx || !cubin_path || !out) return rt_set_err(ctx, PHOBOS_INVALID, "phobos_module_load: NULL argument");
  *out = NULL;
  if (!ctx->cu) return rt_set_err(ctx, PHOBOS_NO_DRIVER, "no CUDA driver: the context has no device");
  phobos_module *m = calloc(1, sizeof *m);
  if (!m) return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory loading %s", cubin_path);
  m->ctx = ctx;
  char *mpath = manifest_path(cubin_path);
  char err[900];
  RtFile mfile = {0};
  phobos_status s = !mpath ? PHOBOS_OUT_OF_MEMORY
                  : rt_read_file(mpath, "manifest", MF_MAX_BYTES, PHOBOS_BAD_MANIFEST, &mfile, err, sizeof err);
  if (s == PHOBOS_OK && !mf_parse(mpath, mfile.data, mfile.len, &m->mf, err, sizeof err)) s = PHOBOS_BAD_MANIFEST;
  free(mfile.data);
  if (s != PHOBOS_OK) {
    rt_set_err(ctx, s, "%s", mpath ? err : "out of memory");
    free(mpath);
    free(m);
    return s;
  }
  free(mpath);
  RtFile cfile;
  s = rt_read_file(cubin_path, "cubin", RT_MAX_CUBIN_BYTES, PHOBOS_BAD_CUBIN, &cfile, err, sizeof err);
  if (s != PHOBOS_OK) {
    mf_free(&m->mf);
    free(m);
    return rt_set_err(ctx, s, "%s", err);
  }
  s = load_image(ctx, m, cubin_path, (const unsigned char *)cfile.data, cfile.len, out);
  free(cfile.data);
  return s;
}

phobos_status phobos_module_load_image(phobos_context *ctx, const void *cubin, size_t cubin_len, const char *manifest,
                                       size_t manifest_len, phobos_module **out) {
  if (!ctx || !cubin || !manifest || !out)
    return rt_set_err(ctx, PHOBOS_INVALID, "phobos_module_load_image: NULL argument");
  *out = NULL;
  if (!ctx->cu) return rt_set_err(ctx, PHOBOS_NO_DRIVER, "no CUDA driver: the context has no device");
  if (manifest_len > MF_MAX_BYTES)
    return rt_set_err(ctx, PHOBOS_BAD_MANIFEST, "the embedded manifest is %zu bytes; at most %d are read", manifest_len,
                      MF_MAX_BYTES);
  if (cubin_len > RT_MAX_CUBIN_BYTES)
    return rt_set_err(ctx, PHOBOS_BAD_CUBIN, "the embedded cubin is %zu bytes; at most %lld are read", cubin_len,
                      (long long)RT_MAX_CUBIN_BYTES);
  phobos_module *m = calloc(1, sizeof *m);
  if (!m) return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory loading an embedded module");
  m->ctx = ctx;
  char err[900];
  if (!mf_parse("the embedded manifest", manifest, manifest_len, &m->mf, err, sizeof err)) {
    free(m);
    return rt_set_err(ctx, PHOBOS_BAD_MANIFEST, "%s", err);
  }
  return load_image(ctx, m, "the embedded cubin", cubin, cubin_len, out);
}

static phobos_status load_image(phobos_context *ctx, phobos_module *m, const char *cubin_path,
                                const unsigned char *image, size_t len, phobos_module **out) {
  char why[200];
  if (!rt_elf_ok(image, len, why, sizeof why)) {
    mf_free(&m->mf);
    free(m);
    return rt_set_err(ctx, PHOBOS_BAD_CUBIN, "%s is not a usable cubin: %s", cubin_path, why);
  }
  /* the autotune key names the image, not only the source: the same source
   * compiled with other flags (--prefetch, -D) is other code */
  uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bits */
  for (size_t i = 0; i < len; i++) h = (h ^ image[i]) * 1099511628211ull;
  snprintf(m->image_hash, sizeof m->image_hash, "%016llx", (unsigned long long)h);
  CUresult r = ctx->cu->CtxSetCurrent(ctx->cuctx);
  if (r == CU_SUCCESS) r = ctx->cu->ModuleLoadData(&m->cumod, image);
  if (r != CU_SUCCESS) {
    char b[200];
    mf_free(&m->mf);
    free(m);
    return rt_set_err(ctx, PHOBOS_BAD_CUBIN, "the driver rejected %s: %s", cubin_path, cu_error(ctx->cu, r, b, sizeof b));
  }
  m->kernels = calloc((size_t)m->mf.nkernels, sizeof(phobos_kernel));
  if (!m->kernels) {
    ctx->cu->ModuleUnload(m->cumod);
    mf_free(&m->mf);
    free(m);
    return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory loading %s", cubin_path);
  }
  /* every variant the manifest names must be in the cubin */
  for (int i = 0; i < m->mf.nkernels; i++) {
    m->kernels[i] = (phobos_kernel){.mod = m, .mf = &m->mf.kernels[i]};
    if (!(m->kernels[i].fits = calloc((size_t)m->mf.kernels[i].nvariants, sizeof(MfVariant *)))) {
      unload_failed(m);
      return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory loading %s", cubin_path);
    }
    for (int j = 0; j < m->mf.kernels[i].nvariants; j++) {
      MfVariant *v = &m->mf.kernels[i].variants[j];
      r = ctx->cu->ModuleGetFunction(&v->fn, m->cumod, v->entry);
      if (r != CU_SUCCESS) {
        char b[200];
        rt_set_err(ctx, PHOBOS_BAD_MANIFEST, "manifest of %s names entry '%s', which the cubin lacks: %s", cubin_path,
                v->entry, cu_error(ctx->cu, r, b, sizeof b));
        unload_failed(m);
        return PHOBOS_BAD_MANIFEST;
      }
    }
  }
  m->next = ctx->modules;
  ctx->modules = m;
  *out = m;
  return PHOBOS_OK;
}

void phobos_module_unload(phobos_module *m) {
  if (!m) return;
  phobos_context *ctx = m->ctx;
  for (phobos_module **p = &ctx->modules; *p; p = &(*p)->next)
    if (*p == m) {
      *p = m->next;
      break;
    }
  if (m->cumod) ctx->cu->ModuleUnload(m->cumod);
  for (int i = 0; i < m->mf.nkernels; i++) rt_kernel_free(&m->kernels[i]);
  mf_free(&m->mf);
  free(m->kernels);
  free(m);
}

phobos_status phobos_kernel_get(phobos_module *m, const char *name, phobos_kernel **out) {
  if (!m || !name || !out) return rt_set_err(m ? m->ctx : NULL, PHOBOS_INVALID, "phobos_kernel_get: NULL argument");
  for (int i = 0; i < m->mf.nkernels; i++)
    if (!strcmp(m->mf.kernels[i].name, name)) {
      *out = &m->kernels[i];
      return PHOBOS_OK;
    }
  char list[400] = "";
  int n = 0;
  for (int i = 0; i < m->mf.nkernels && n < (int)sizeof list - 80; i++)
    n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", i ? ", " : "", m->mf.kernels[i].name);
  *out = NULL;
  return rt_set_err(m->ctx, PHOBOS_NOT_FOUND, "no kernel '%s' in %s (it has: %s)", name, m->mf.cubin, list);
}

phobos_status phobos_cache_status(const phobos_context *ctx) { return ctx ? ctx->cache_status : PHOBOS_INVALID; }

const char *phobos_kernel_last_variant(const phobos_kernel *k) { return k && k->last_variant ? k->last_variant : ""; }

int phobos_kernel_last_tensor_maps(const phobos_kernel *k, int *built) {
  if (built) *built = k ? k->last_tmaps_built : 0;
  return k ? k->last_tmaps : 0;
}

/* ------------------------------------------------------ argument checks */

static bool fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return false;
}

static const char *arg_kind_name(phobos_arg_kind k) {
  return k == PHOBOS_ARG_TENSOR ? "a tensor" : k == PHOBOS_ARG_INT ? "an int" : k == PHOBOS_ARG_FLOAT ? "a float" : k == PHOBOS_ARG_BOOL ? "a bool" : "an unknown kind";
}

bool rt_strides(const phobos_tensor *t, int64_t s[PHOBOS_MAX_RANK]) {
  if (t->rank < 0 || t->rank > PHOBOS_MAX_RANK) return false;
  bool given = rt_strides_given(t);
  /* one past the farthest element the dims inside d reach (row-major:
   * their element count) */
  int64_t run = 1;
  for (int d = t->rank - 1; d >= 0; d--) {
    if (t->shape[d] < 0 || t->strides[d] < 0) return false;
    s[d] = given ? t->strides[d] : run;
    if (t->shape[d] == 1 && d < t->rank - 1) {
      /* a dim of extent 1 only has index 0: its stride reaches nothing, so
       * any will do; one past the dims inside it, rounded up to 16 bytes,
       * keeps a tensor map's pitches aligned and the dims apart */
      int64_t q = 16 / mf_dtype_bytes(t->dtype);
      if (!rt_add_ok(run, q - 1, &s[d])) return false;
      s[d] -= s[d] % q;
    }
    int64_t far;
    if (t->shape[d] > 1 && (!rt_mul_ok(t->shape[d] - 1, s[d], &far) || !rt_add_ok(run, far, &run))) return false;
  }
  return true;
}

bool rt_tensor_bytes(const phobos_tensor *t, int64_t *bytes) {
  int64_t s[PHOBOS_MAX_RANK], last = 0, term, n = mf_dtype_bytes(t->dtype);
  if (!rt_strides(t, s)) return false;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] == 0) return *bytes = 0, true;
    if (!rt_mul_ok(t->shape[d] - 1, s[d], &term) || !rt_add_ok(last, term, &last)) return false;
  }
  /* the bytes from the first element to one past the last */
  if (!rt_add_ok(last, 1, &last) || !rt_mul_ok(last, n, &n)) return false;
  *bytes = n;
  return true;
}

/* "[2, 19, 14, 64]", for messages */
static const char *shape_str(const phobos_tensor *t, char *buf, size_t len) {
  int n = snprintf(buf, len, "[");
  for (int d = 0; d < t->rank && n > 0 && (size_t)n < len; d++)
    n += snprintf(buf + n, len - (size_t)n, "%s%lld", d ? ", " : "", (long long)t->shape[d]);
  if (n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, "]");
  return buf;
}

#define BAD(status, ...) (fail(err, errlen, __VA_ARGS__), (status))

bool rt_strides_given(const phobos_tensor *t) {
  for (int d = 0; d < t->rank && d < PHOBOS_MAX_RANK; d++)
    if (t->strides[d]) return true;
  return false;
}

/* A written tensor's elements each at an address of their own: its dims
 * sorted by stride, each stride at least the span of the dims of smaller
 * stride (how torch's views of one buffer look). */
static phobos_status check_apart(const MfParam *p, const phobos_tensor *t, char *err, size_t errlen) {
  int order[PHOBOS_MAX_RANK], n = 0;
  for (int d = 0; d < t->rank; d++) {
    if (t->shape[d] <= 1) continue;
    int i = n++;
    for (; i > 0 && t->strides[order[i - 1]] > t->strides[d]; i--) order[i] = order[i - 1];
    order[i] = d;
  }
  int64_t span = 1, far;
  for (int i = 0; i < n; i++) {
    int d = order[i];
    if (t->strides[d] < span)
      return BAD(PHOBOS_BAD_ARGUMENT, "tensor '%s' is written, and at its strides two of its elements share an "
                 "address: dim %d has stride %lld, but the dims of smaller stride span %lld elements", p->name, d,
                 (long long)t->strides[d], (long long)span);
    if (!rt_mul_ok(t->shape[d] - 1, t->strides[d], &far) || !rt_add_ok(span, far, &span))
      return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' spans more than 2^63 - 1 elements at its strides", p->name);
  }
  return PHOBOS_OK;
}

/* A tensor's strides (spec 17.2), its extents checked: where given, none
 * negative, the last 1, and a written tensor's elements apart; given or
 * row-major, each below 2^31 for a kernel that takes them (.s32, spec
 * 16.3: its address arithmetic 32 by 32 bits). */
static phobos_status check_strides(const MfKernel *k, const MfParam *p, const phobos_tensor *t, bool *general,
                                   char *err, size_t errlen) {
  int last = t->rank - 1;
  bool any = false; /* the last dim's stride matters: general strides */
  if (rt_strides_given(t)) {
    for (int d = 0; d < t->rank; d++)
      if (t->strides[d] < 0)
        return BAD(PHOBOS_BAD_ARGUMENT, "tensor '%s' dim %d has stride %lld; strides must be 0 or more", p->name, d,
                   (long long)t->strides[d]);
    any = last >= 0 && t->strides[last] != 1 && t->shape[last] > 1;
    if (any && !k->general_strides)
      return BAD(PHOBOS_BAD_ARGUMENT, "tensor '%s' dim %d (its last) has stride %lld; kernel '%s' takes a tensor whose "
                 "last dim is contiguous (stride 1) and has no general-strides entry (spec 16.3): pass a contiguous copy "
                 "(torch: .contiguous())", p->name, last,
                 (long long)t->strides[last], k->name);
    phobos_status s = p->written ? check_apart(p, t, err, errlen) : PHOBOS_OK;
    if (s != PHOBOS_OK) return s;
  }
  *general |= any;
  int64_t st[PHOBOS_MAX_RANK];
  if (p->strided && rt_strides(t, st))
    for (int d = 0; d < last + (any ? 1 : 0); d++)
      if (t->shape[d] > 1 && st[d] > INT32_MAX)
        return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d has stride %lld; kernels take strides below 2^31 elements: "
                   "split the tensor along dim %d", p->name, d, (long long)st[d], d);
  return PHOBOS_OK;
}

phobos_status rt_bind(const MfKernel *k, const phobos_arg *args, int nargs, RtBinding *b, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  if (nargs != k->nparams)
    return BAD(PHOBOS_BAD_ARGUMENT, "kernel '%s' takes %d argument%s, got %d", k->name, k->nparams, k->nparams == 1 ? "" : "s",
                nargs);
  if (!args && nargs) return BAD(PHOBOS_INVALID, "kernel '%s': args is NULL", k->name);
  const char *from[32];
  for (int i = 0; i < k->nparams; i++) {
    const MfParam *p = &k->params[i];
    const phobos_arg *a = &args[i];
    if (p->scratch) continue; /* the runtime's own (workspace.c): nothing of the caller's to check or bind */
    if (p->tensor) {
      if (a->kind != PHOBOS_ARG_TENSOR)
        return BAD(PHOBOS_BAD_ARGUMENT, "argument %d ('%s') must be a tensor, got %s", i, p->name, arg_kind_name(a->kind));
      const phobos_tensor *t = &a->tensor;
      if (t->dtype != p->dtype)
        return BAD(PHOBOS_BAD_ARGUMENT, "tensor '%s' must hold %s, got %s", p->name, mf_dtype_name(p->dtype), mf_dtype_name(t->dtype));
      if (t->rank != p->rank)
        return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' must have rank %d, got %d", p->name, p->rank, t->rank);
      if (!t->data) return BAD(PHOBOS_BAD_POINTER, "tensor '%s': the data pointer is NULL", p->name);
      int eb = mf_dtype_bytes(p->dtype);
      if (t->data % (uint64_t)eb)
        return BAD(PHOBOS_BAD_POINTER, "tensor '%s': data pointer 0x%llx is not aligned to its %d-byte elements", p->name,
                    (unsigned long long)t->data, eb);
      int64_t expect = 1;
      for (int d = p->rank - 1; d >= 0; d--) {
        int64_t got = t->shape[d];
        if (got <= 0)
          return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d%s%s%s is %lld; extents must be positive", p->name, d,
                      p->dimname[d] ? " (" : "", p->dimname[d] ? p->dimname[d] : "", p->dimname[d] ? ")" : "",
                      (long long)got);
        if (got > INT32_MAX)
          return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d is %lld; extents must fit in 32 bits", p->name, d, (long long)got);
        if (t->strides[d] && t->strides[d] != expect && !p->strided)
          return BAD(PHOBOS_BAD_ARGUMENT, "tensor '%s' dim %d has stride %lld; kernel '%s' was compiled before strides "
                      "(its manifest has no 'strides') and takes contiguous row-major tensors (stride %lld): compile it "
                      "again", p->name, d, (long long)t->strides[d], k->name, (long long)expect);
        if (!rt_mul_ok(expect, got, &expect)) {
          char sh[120];
          return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d%s%s%s is %lld: dims %d to %d of %s make more than 2^63 - 1 "
                     "elements", p->name, d, p->dimname[d] ? " (" : "", p->dimname[d] ? p->dimname[d] : "",
                     p->dimname[d] ? ")" : "", (long long)got, d, p->rank - 1, shape_str(t, sh, sizeof sh));
        }
        if (!p->dimname[d]) {
          if (got != p->dim[d])
            return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d must be %lld, got %lld", p->name, d, (long long)p->dim[d],
                        (long long)got);
          continue;
        }
        int j = 0;
        while (j < b->ndims && strcmp(b->name[j], p->dimname[d])) j++;
        if (j < b->ndims) {
          if (b->value[j] != got)
            return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' dim %d (%s) is %lld, but %s = %lld from tensor '%s'", p->name, d,
                        p->dimname[d], (long long)got, p->dimname[d], (long long)b->value[j], from[j]);
        } else if (b->ndims == 32) {
          return BAD(PHOBOS_BAD_ARGUMENT, "kernel '%s' names more than 32 dims; this runtime binds at most 32", k->name);
        } else {
          b->name[b->ndims] = p->dimname[d];
          from[b->ndims] = p->name;
          b->value[b->ndims++] = got;
        }
      }
      phobos_status ss = check_strides(k, p, t, &b->general, err, errlen);
      if (ss != PHOBOS_OK) return ss;
      /* the element count fits (above); the byte count and the end address must too */
      int64_t bytes;
      char sh[120];
      if (!rt_tensor_bytes(t, &bytes))
        return BAD(PHOBOS_BAD_SHAPE, "tensor '%s' of %s spans more than 2^63 - 1 bytes at its strides (%d-byte "
                   "elements)", p->name, shape_str(t, sh, sizeof sh), eb);
      if (t->data > UINT64_MAX - (uint64_t)bytes)
        return BAD(PHOBOS_BAD_POINTER, "tensor '%s' at 0x%llx: its %lld bytes run past the end of the address space",
                   p->name, (unsigned long long)t->data, (long long)bytes);
      b->bytes[i] = bytes;
    } else {
      bool is_float = p->dtype <= PHOBOS_F64;
      bool ok = a->kind == PHOBOS_ARG_FLOAT ? is_float
                : a->kind == PHOBOS_ARG_INT ? (p->dtype != PHOBOS_BOOL)
                : a->kind == PHOBOS_ARG_BOOL ? p->dtype == PHOBOS_BOOL
                                              : false;
      if (!ok)
        return BAD(PHOBOS_BAD_ARGUMENT, "argument %d ('%s') is a %s scalar, got %s", i, p->name, mf_dtype_name(p->dtype),
                    arg_kind_name(a->kind));
      if (a->kind != PHOBOS_ARG_FLOAT && p->dtype != PHOBOS_I64 && p->dtype <= PHOBOS_I32 && p->dtype >= PHOBOS_I8) {
        int64_t lo = p->dtype == PHOBOS_I8 ? -128 : p->dtype == PHOBOS_U8 ? 0 : INT32_MIN;
        int64_t hi = p->dtype == PHOBOS_I8 ? 127 : p->dtype == PHOBOS_U8 ? 255 : INT32_MAX;
        if (a->i < lo || a->i > hi)
          return BAD(PHOBOS_BAD_ARGUMENT, "argument %d ('%s') is %lld, outside %s (%lld to %lld)", i, p->name,
                     (long long)a->i, mf_dtype_name(p->dtype), (long long)lo, (long long)hi);
      }
      if (a->kind == PHOBOS_ARG_FLOAT && !isfinite(a->f) && p->dtype != PHOBOS_F64 && p->dtype != PHOBOS_F32)
        return BAD(PHOBOS_BAD_ARGUMENT, "argument %d ('%s') is %g, not representable in %s", i, p->name, a->f,
                    mf_dtype_name(p->dtype));
    }
  }
  return PHOBOS_OK;
}

bool rt_variant_fits(const MfVariant *v, const RtBinding *b) {
  if (b->general && !v->general_strides) return false;
  for (int i = 0; i < v->npinned; i++)
    for (int j = 0; j < b->ndims; j++)
      if (!strcmp(v->pinned_name[i], b->name[j]) && v->pinned_value[i] != b->value[j]) return false;
  for (int i = 0; i < v->nat_most; i++)
    for (int j = 0; j < b->ndims; j++)
      if (!strcmp(v->at_most_name[i], b->name[j]) && b->value[j] > v->at_most_value[i]) return false;
  for (int i = 0; i < v->nabove; i++)
    for (int j = 0; j < b->ndims; j++)
      if (!strcmp(v->above_name[i], b->name[j]) && b->value[j] <= v->above_value[i]) return false;
  return true;
}

int64_t rt_dynamic_shared(const MfKernel *k, const MfVariant *v, const RtBinding *b) {
  int64_t base = v->dynamic_shared ? v->shared_bytes : 0;
  if (!v->staged) return base;
  const MfParam *mp = &k->params[v->stage_param];
  int64_t D = mp->dim[1], eb = mf_dtype_bytes(mp->dtype);
  for (int j = 0; D < 0 && j < b->ndims; j++)
    if (mp->dimname[1] && !strcmp(b->name[j], mp->dimname[1])) D = b->value[j];
  /* too large for any device, and small enough that the callers' sums do not overflow */
  if (D < 0 || D > (INT64_C(1) << 40) / (v->stage_rows * eb)) return INT64_C(1) << 50;
  return (base + 15) / 16 * 16 + (v->stage_rows * D * eb + 15) / 16 * 16 + 64 + 8 * ((D + v->stage_block - 1) / v->stage_block);
}

/* Whether a tensor the kernel writes, other than parameter skip, shares a
 * byte with x (xb bytes from its base); an unmeasurable one does. */
static bool written_overlaps(const MfKernel *k, const phobos_arg *args, const phobos_tensor *x, int64_t xb, int skip) {
  int64_t tb;
  for (int i = 0; i < k->nparams; i++) {
    /* (a @scratch tensor is the runtime's own buffer: it overlaps no argument) */
    if (i == skip || !k->params[i].tensor || !k->params[i].written || k->params[i].scratch) continue;
    const phobos_tensor *t = &args[i].tensor;
    if (!rt_tensor_bytes(t, &tb)) return true;
    if (tb > 0 && xb > 0 && t->data < x->data + (uint64_t)xb && x->data < t->data + (uint64_t)tb) return true;
  }
  return false;
}

int rt_apart_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args) {
  for (int q = 0; v->apart && q < k->nparams && q < 64; q++) {
    if (!(v->apart >> q & 1) || k->params[q].scratch) continue;
    int64_t xb;
    if (!rt_tensor_bytes(&args[q].tensor, &xb) || written_overlaps(k, args, &args[q].tensor, xb, q)) return q;
  }
  return -1;
}

bool rt_stage_fits(const MfKernel *k, const MfVariant *v, const phobos_arg *args, const RtBinding *b, int max_optin) {
  if (!v->staged) return true;
  if (k->params[v->stage_param].scratch) return false; /* (its pointer is known only at the launch) */
  int64_t stat = v->dynamic_shared ? 0 : v->shared_bytes;
  if (stat + rt_dynamic_shared(k, v, b) > max_optin) return false;
  const phobos_tensor *x = &args[v->stage_param].tensor;
  int64_t xb, xs[PHOBOS_MAX_RANK];
  if (x->data % 16 || !rt_tensor_bytes(x, &xb) || !rt_strides(x, xs)) return false;
  /* the copy takes the rows as one run of bytes (ptx/rowstage.c) */
  int64_t run = 1;
  for (int d = x->rank - 1; d >= 0; d--) {
    if (x->shape[d] > 1 && xs[d] != run) return false;
    run *= x->shape[d]; /* below the span rt_tensor_bytes bounded */
  }
  return !written_overlaps(k, args, x, xb, -1);
}

int64_t rt_row_pitches(const phobos_tensor *t) {
  int64_t st[PHOBOS_MAX_RANK], bits = 0, eb = mf_dtype_bytes(t->dtype);
  if (!rt_strides(t, st)) return 1;
  for (int d = 0; d + 1 < t->rank; d++)
    if (t->shape[d] > 1) bits |= (st[d] % 16) * eb; /* the low bits are all that matter here, without overflow */
  return bits;
}

int rt_rows_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args) {
  for (int i = 0; i < k->nparams && i < 64; i++) {
    if (!(v->aligned_rows >> i & 1) || !k->params[i].tensor) continue;
    if (k->params[i].scratch) continue; /* aligned rows by the runtime's layout (workspace.c) */
    const phobos_tensor *t = &args[i].tensor;
    if (t->data % 16 || rt_row_pitches(t) % 16) return i;
  }
  return -1;
}

/* One grid operation in int64: false when its exact result does not fit
 * (INT64_MIN / -1 included, which traps on x86) or it divides by zero. */
bool rt_grid_op(const char *op, int64_t x, int64_t y, int64_t *r, bool *by_zero) {
  *by_zero = false;
  if (!strcmp(op, "+")) return rt_add_ok(x, y, r);
  if (!strcmp(op, "-")) return rt_sub_ok(x, y, r);
  if (!strcmp(op, "*")) return rt_mul_ok(x, y, r);
  if (!strcmp(op, "min")) return *r = x < y ? x : y, true;
  if (!strcmp(op, "max")) return *r = x > y ? x : y, true;
  if (y == 0) return *by_zero = true, false;
  if (!strcmp(op, "%")) return *r = y == -1 ? 0 : x % y, true; /* x % -1 is 0, but INT64_MIN % -1 traps */
  if (x == INT64_MIN && y == -1) return false;                 /* / and cdiv: 2^63 */
  if (!strcmp(op, "/")) return *r = x / y, true;
  /* cdiv: the ceiling for positive operands (without x + y - 1, which
   * overflows near INT64_MAX), truncation otherwise */
  return *r = x / y + (x > 0 && y > 0 && x % y != 0), true;
}

bool rt_eval_program(const MfGridOp *ops, int nops, const RtBinding *b, const int64_t *grid, int64_t *out,
                     RtEvalFail *why) {
  int64_t st[MF_MAX_GRID_OPS];
  int sp = 0; /* manifest.c checked each program's stack: never under 1 at an op, 1 at the end */
  for (int o = 0; o < nops; o++) {
    const MfGridOp *op = &ops[o];
    if (op->kind == MF_INT) {
      st[sp++] = op->v;
    } else if (op->kind == MF_DIM) {
      if (grid && !strncmp(op->name, "grid.", 5) && op->name[5] >= 'x' && op->name[5] <= 'z' && !op->name[6]) {
        st[sp++] = grid[op->name[5] - 'x'];
        continue;
      }
      int j = 0;
      while (j < b->ndims && strcmp(b->name[j], op->name)) j++;
      if (j == b->ndims) return *why = (RtEvalFail){.kind = RT_EVAL_MISSING, .name = op->name}, false;
      st[sp++] = b->value[j];
    } else if (!strcmp(op->op, "neg")) {
      if (!rt_sub_ok(0, st[sp - 1], &st[sp - 1]))
        return *why = (RtEvalFail){.kind = RT_EVAL_OVERFLOW, .op = "neg", .x = st[sp - 1]}, false;
    } else {
      int64_t y = st[--sp], x = st[sp - 1];
      bool by_zero;
      if (!rt_grid_op(op->op, x, y, &st[sp - 1], &by_zero))
        return *why = (RtEvalFail){.kind = by_zero ? RT_EVAL_ZERO : RT_EVAL_OVERFLOW, .op = op->op, .x = x, .y = y}, false;
    }
  }
  *out = st[0];
  return true;
}

bool rt_grid(const MfVariant *v, const RtBinding *b, const int64_t max[3], int64_t grid[3], char *err, size_t errlen) {
  grid[0] = grid[1] = grid[2] = 1;
  if (!v->ngrid) return fail(err, errlen, "variant '%s' has no @grid: launch it with phobos_launch_grid", v->entry);
  const char *kname = v->kernel ? v->kernel : "?";
  for (int a = 0; a < v->ngrid; a++) {
    const char *prog = v->grid_text[a] ? v->grid_text[a] : "?";
    RtEvalFail w;
    if (!rt_eval_program(v->ops[a], v->nops[a], b, NULL, &grid[a], &w)) {
      if (w.kind == RT_EVAL_MISSING)
        return fail(err, errlen, "kernel '%s' variant '%s': grid uses dim '%s', which no tensor gave", kname, v->entry,
                    w.name);
      if (!strcmp(w.op, "neg"))
        return fail(err, errlen, "kernel '%s' variant '%s': grid axis %c overflows at 'neg' (neg %lld) in \"%s\"",
                    kname, v->entry, "xyz"[a], (long long)w.x, prog);
      return w.kind == RT_EVAL_ZERO
                 ? fail(err, errlen, "kernel '%s' variant '%s': grid axis %c divides by zero at '%s' in \"%s\"", kname,
                        v->entry, "xyz"[a], w.op, prog)
                 : fail(err, errlen, "kernel '%s' variant '%s': grid axis %c overflows at '%s' (%lld %s %lld) in \"%s\"",
                        kname, v->entry, "xyz"[a], w.op, (long long)w.x, w.op, (long long)w.y, prog);
    }
    if (grid[a] <= 0)
      return fail(err, errlen, "kernel '%s' variant '%s': grid axis %c evaluates to %lld; nothing to launch (\"%s\")",
                  kname, v->entry, "xyz"[a], (long long)grid[a], prog);
    if (max && grid[a] > max[a])
      return fail(err, errlen, "kernel '%s' variant '%s': grid axis %c is %lld, beyond the device's %lld (\"%s\")", kname,
                  v->entry, "xyz"[a], (long long)grid[a], (long long)max[a], prog);
  }
  return true;
}

/* -------------------------------------------------------------- launch */

/* The kernel parameter buffer, laid out as the ABI above says. */
typedef struct Params {
  _Alignas(64) unsigned char maps[MF_MAX_TMAPS][128]; /* CUtensorMap: 128 bytes, 64-byte aligned */
  uint32_t map_ok[MF_MAX_TMAPS];
  int nbuilt;
  void *ptrs[MF_MAX_SLOTS]; /* manifest.c keeps every kernel within these */
  union {
    uint64_t u64;
    int32_t s32;
    int64_t s64;
    float f32;
    double f64;
  } vals[MF_MAX_SLOTS];
  int n;
} Params;

static void pack(const MfKernel *k, const MfVariant *v, const phobos_arg *args, const CUdeviceptr *override, Params *p) {
  p->n = 0;
  for (int i = 0; i < k->nparams; i++) {
    const MfParam *mp = &k->params[i];
    const phobos_arg *a = &args[i];
    if (mp->tensor) {
      p->vals[p->n].u64 = override && override[i] ? override[i] : a->tensor.data;
      p->ptrs[p->n] = &p->vals[p->n];
      p->n++;
      for (int d = 0; d < mp->rank; d++) {
        p->vals[p->n].s32 = (int32_t)a->tensor.shape[d];
        p->ptrs[p->n] = &p->vals[p->n];
        p->n++;
      }
      int64_t st[PHOBOS_MAX_RANK];
      if (mp->strided && rt_strides(&a->tensor, st)) /* rt_bind checked them */
        for (int d = 0; d + (v->general_strides ? 0 : 1) < mp->rank; d++) { /* a general-strides entry: the last too */
          /* below 2^31 (rt_bind), but for a dim of extent 1, whose stride
           * reaches nothing */
          p->vals[p->n].s32 = st[d] <= INT32_MAX ? (int32_t)st[d] : 0;
          p->ptrs[p->n] = &p->vals[p->n];
          p->n++;
        }
      continue;
    }
    double f = a->kind == PHOBOS_ARG_FLOAT ? a->f : (double)a->i;
    /* binding lets a float argument reach float parameters only; casting
     * it to int64 anyway would be undefined for inf or 1e30 */
    int64_t iv = a->kind == PHOBOS_ARG_FLOAT ? 0 : a->i;
    if (mp->dtype == PHOBOS_F64) p->vals[p->n].f64 = f;
    else if (mp->dtype <= PHOBOS_F32) p->vals[p->n].f32 = (float)f;
    else if (mp->dtype == PHOBOS_I64) p->vals[p->n].s64 = iv;
    else p->vals[p->n].s32 = (int32_t)(mp->dtype == PHOBOS_BOOL ? iv != 0 : iv);
    p->ptrs[p->n] = &p->vals[p->n];
    p->n++;
  }
}

/* The entry's tensor maps (phobosc's tensor copies), after its parameters: each map
 * and a flag. A map is built when the tensor allows it (base 16-byte
 * aligned, every row pitch a multiple of 16 bytes below 2^40, the driver
 * has the encoder and accepts the map); otherwise the flag is 0 and the kernel
 * takes its pointer path for those loads: the same answer, never a fault. */
static const int tmap_dtype[] = {
    [PHOBOS_F16] = 6, [PHOBOS_BF16] = 9, [PHOBOS_F32] = 7, [PHOBOS_F64] = 8, [PHOBOS_I8] = 0,
    [PHOBOS_U8] = 0,  [PHOBOS_I32] = 3,  [PHOBOS_I64] = 5, [PHOBOS_BOOL] = 0};

/* The driver's view of map m over tensor ts at base: its rank r, dims,
 * byte strides (of every dim but the innermost) and box, innermost first;
 * false where the driver would refuse it (a base or a pitch not a multiple
 * of 16, a split dim the inner length does not divide). */
typedef struct TmapShape {
  unsigned r;
  unsigned long long dims[PHOBOS_MAX_RANK + 1], strides[PHOBOS_MAX_RANK + 1];
  unsigned box[PHOBOS_MAX_RANK + 1], estr[PHOBOS_MAX_RANK + 1];
} TmapShape;

static bool tmap_shape(const MfTmap *m, const phobos_tensor *ts, CUdeviceptr base, TmapShape *o) {
  int eb = mf_dtype_bytes(m->dtype);
  /* the map's dims, outermost first, and their strides in elements: a
   * split dim as [extent / inner, inner] */
  int64_t shape[PHOBOS_MAX_RANK + 1], est[PHOBOS_MAX_RANK + 1], ts_st[PHOBOS_MAX_RANK];
  int r = 0;
  bool ok = base % 16 == 0 && rt_strides(ts, ts_st);
  for (int d = 0; d < m->rank && ok; d++) {
    if (d == m->split_dim) {
      ok = ok && ts->shape[d] % m->split_inner == 0 && rt_mul_ok(ts_st[d], m->split_inner, &est[r]);
      shape[r++] = ts->shape[d] / m->split_inner;
      est[r] = ts_st[d];
      shape[r++] = m->split_inner;
    } else {
      est[r] = ts_st[d];
      shape[r++] = ts->shape[d];
    }
  }
  for (int i = 0; i < r && ok; i++) { /* the driver's order: innermost first */
    int d = r - 1 - i;
    o->dims[i] = (unsigned long long)shape[d]; /* at most 2^31 - 1 (rt_bind); the driver allows 2^32 */
    o->box[i] = (unsigned)m->box[d];         /* 1 to 256 (manifest.c) */
    o->estr[i] = 1;
    int64_t pitch = 0; /* bytes from one index of dim d to the next */
    ok = rt_mul_ok(est[d], eb, &pitch);
    /* the innermost dim is contiguous (rt_bind); the others' pitches
     * follow the driver's rule: a multiple of 16 below 2^40 */
    if (i) {
      o->strides[i - 1] = (unsigned long long)pitch;
      ok = ok && pitch > 0 && pitch % 16 == 0 && pitch < (int64_t)1 << 40;
    } else {
      ok = ok && pitch == eb;
    }
  }
  o->r = (unsigned)r;
  return ok;
}

int rt_maps_misfit(const MfKernel *k, const MfVariant *v, const phobos_arg *args) {
  TmapShape sh;
  for (int t = 0; v->maps_required && t < v->ntmaps; t++)
    if (!k->params[v->tmaps[t].param].scratch && /* (the runtime lays those out for maps: workspace.c) */
        !tmap_shape(&v->tmaps[t], &args[v->tmaps[t].param].tensor, args[v->tmaps[t].param].tensor.data, &sh))
      return v->tmaps[t].param;
  return -1;
}

static void pack_tmaps(const CuApi *cu, const MfVariant *v, const phobos_arg *args, const CUdeviceptr *override,
                       Params *p) {
  for (int t = 0; t < v->ntmaps; t++) {
    const MfTmap *m = &v->tmaps[t];
    const phobos_tensor *ts = &args[m->param].tensor;
    CUdeviceptr base = override && override[m->param] ? override[m->param] : ts->data;
    TmapShape sh;
    bool ok = cu->TensorMapEncodeTiled && tmap_shape(m, ts, base, &sh);
    memset(p->maps[t], 0, sizeof p->maps[t]);
    /* interleave none, the manifest's swizzle (the driver's 0 none, 1 32B,
     * 2 64B, 3 128B), L2 promotion 128B, out-of-bounds fill: zeros */
    int swz = m->swizzle == 128 ? 3 : m->swizzle == 64 ? 2 : m->swizzle == 32 ? 1 : 0;
    if (ok && cu->TensorMapEncodeTiled(p->maps[t], tmap_dtype[m->dtype], sh.r, (void *)(uintptr_t)base, sh.dims,
                                       sh.strides, sh.box, sh.estr, 0, swz, 2, 0) != CU_SUCCESS)
      ok = false;
    p->map_ok[t] = ok;
    p->nbuilt += ok;
    p->ptrs[p->n++] = p->maps[t];
    p->ptrs[p->n++] = &p->map_ok[t];
  }
}

/* The CTAs of a variant the device holds at once (the occupancy query
 * times the SMs), found once for each dynamic shared-memory size (a
 * staged copy's varies with its dims); 0 where the driver cannot say. */
static int64_t resident_ctas(phobos_context *ctx, MfVariant *v, int dyn) {
  if (v->resident >= 0 && v->resident_dyn == dyn) return v->resident;
  v->resident_dyn = dyn;
  int per_sm = 0, sms = 0;
  if (!ctx->cu->OccupancyMaxActiveBlocksPerMultiprocessor ||
      ctx->cu->OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v->fn, v->threads, (size_t)dyn) != CU_SUCCESS ||
      ctx->cu->DeviceGetAttribute(&sms, CU_ATTR_SM_COUNT, ctx->dev) != CU_SUCCESS || per_sm < 0 || sms < 0)
    per_sm = 0, sms = 0;
  return v->resident = (int64_t)per_sm * sms;
}

/* The prefetch distance of an l2_prefetch twin: the CTAs of the variant
 * resident on the whole device at once, so that a CTA asks for the slice
 * of the one that takes its slot when it is done. Found once (the
 * occupancy query); 0 (no prefetch) where the driver cannot say. */
static int l2pf_distance(phobos_context *ctx, MfVariant *v, int dyn) {
  if (v->l2pf_dist >= 0) return v->l2pf_dist;
  int64_t n = resident_ctas(ctx, v, dyn);
  return v->l2pf_dist = n > INT32_MAX ? 0 : (int)n;
}

/* grid_barrier's grid (spec 9.8): a @persistent variant's derived grid
 * has its axis x cut to what the device holds at once; then every co-resident
 * variant's grid must fit that hold, or the launch is an error, never a
 * grid that waits for CTAs that cannot start. */
static phobos_status fit_resident(phobos_kernel *k, MfVariant *v, int dyn, int64_t grid[3]) {
  phobos_context *ctx = k->mod->ctx;
  if (!v->co_resident && !v->persistent) return PHOBOS_OK;
  int64_t hold = resident_ctas(ctx, v, dyn), rest = grid[1] * grid[2];
  if (hold <= 0)
    return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "kernel '%s' (variant '%s') %s, and the driver cannot say how many "
                      "of its CTAs device %d holds at once (cuOccupancyMaxActiveBlocksPerMultiprocessor)",
                      k->mf->name, v->entry, v->co_resident ? "waits at a grid barrier" : "is @persistent",
                      ctx->ordinal);
  if (v->persistent && !k->explicit_grid && grid[0] * rest > hold) grid[0] = hold / rest > 0 ? hold / rest : 1;
  if (v->co_resident && grid[0] * rest > hold)
    return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "kernel '%s' waits at a grid barrier, so its grid of %lld CTAs must "
                      "be resident at once; device %d holds %lld of variant '%s'%s",
                      k->mf->name, (long long)(grid[0] * rest), ctx->ordinal, (long long)hold, v->entry,
                      v->persistent ? "" : " (@persistent sizes the grid to it)");
  return PHOBOS_OK;
}

phobos_status rt_launch_variant(phobos_kernel *k, MfVariant *v, const phobos_arg *args, const RtBinding *b,
                                    const CUdeviceptr *override, CUstream stream) {
  phobos_context *ctx = k->mod->ctx;
  char err[512];
  phobos_arg full[MF_MAX_PARAMS];
  if (k->mf->nscratch) { /* this variant's scratch tensors, for this stream */
    memcpy(full, args, sizeof *args * (size_t)k->mf->nparams);
    phobos_status ss = rt_scratch_fill(k, v, b, full, stream);
    if (ss != PHOBOS_OK) return ss;
    args = full;
  }
  int64_t grid[3];
  if (k->explicit_grid) {
    for (int a = 0; a < 3; a++) {
      grid[a] = k->grid[a];
      if (grid[a] < 1 || grid[a] > ctx->max_grid[a])
        return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "grid axis %c is %lld; the device allows 1 to %lld", "xyz"[a],
                          (long long)grid[a], (long long)ctx->max_grid[a]);
    }
  } else if (!rt_grid(v, b, ctx->max_grid, grid, err, sizeof err)) {
    return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "%s", err);
  }
  if (v->cluster > 1) { /* a cluster-rows copy: each block of the grid is a cluster of CTAs (spec 15.22) */
    if (grid[0] > ctx->max_grid[0] / v->cluster)
      return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "grid axis x is %lld clusters of %d CTAs (variant '%s'); the device "
                        "allows %lld CTAs", (long long)grid[0], v->cluster, v->entry, (long long)ctx->max_grid[0]);
    grid[0] *= v->cluster;
  }
  int dyn = 0;
  if (v->dynamic_shared || v->staged) {
    int64_t ds = rt_dynamic_shared(k->mf, v, b), need = ds + (v->dynamic_shared ? 0 : v->shared_bytes);
    if (need > ctx->max_shared_optin)
      return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "variant '%s' needs %lld bytes of shared memory; device %d allows %d",
                     v->entry, (long long)need, ctx->ordinal, ctx->max_shared_optin);
    dyn = (int)ds;
    CU_CHECK(ctx, ctx->cu->FuncSetAttribute(v->fn, CU_FUNC_MAX_DYNAMIC_SHARED, dyn),
             "cuFuncSetAttribute(max dynamic shared memory)");
  }
  phobos_status rs = fit_resident(k, v, dyn, grid);
  if (rs != PHOBOS_OK) return rs;
  if (v->co_resident && !ctx->cu->LaunchKernelEx) /* a plain launch could start part of the grid: a hang */
    return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "kernel '%s' waits at a grid barrier, which needs a cooperative "
                      "launch; this driver has no cuLaunchKernelEx", k->mf->name);
  Params p;
  pack(k->mf, v, args, override, &p);
  p.nbuilt = 0;
  pack_tmaps(ctx->cu, v, args, override, &p);
  if (v->maps_required && p.nbuilt < v->ntmaps) /* its producer would trap (spec 15.20); the autotuner tries others */
    return rt_set_err(ctx, PHOBOS_LAUNCH_LIMIT, "variant '%s' needs every tensor map built, and the driver built %d "
                      "of %d (cuTensorMapEncodeTiled %s)", v->entry, p.nbuilt, v->ntmaps,
                      ctx->cu->TensorMapEncodeTiled ? "refused one" : "is missing");
  if (v->l2pf_param) { /* last: the prefetch distance in blocks (0: none) */
    p.vals[p.n].s32 = v->l2pf_on ? l2pf_distance(ctx, v, dyn) : 0;
    p.ptrs[p.n] = &p.vals[p.n];
    p.n++;
  }
  k->last_tmaps = v->ntmaps, k->last_tmaps_built = p.nbuilt;
  CU_CHECK(ctx, ctx->cu->CtxSetCurrent(ctx->cuctx), "cuCtxSetCurrent");
  /* cuLaunchKernelEx with one attribute: cooperative for grid_barrier (the
   * driver starts every CTA at once or refuses), else programmatic
   * serialization (the entry waits for the previous kernel itself with
   * griddepcontrol.wait, so its launch may overlap that kernel's last wave) */
  bool coop = v->co_resident, dependent = v->dependent_launch && ctx->dependent_launch;
  if ((coop || dependent) && ctx->cu->LaunchKernelEx) {
    CuLaunchAttr attr = {.id = coop ? CU_LAUNCH_ATTR_COOPERATIVE : CU_LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION,
                         .value.allowed = 1};
    CuLaunchConfig cfg = {.grid = {(unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2]},
                          .block = {(unsigned)v->threads, 1, 1},
                          .shared_bytes = (unsigned)dyn,
                          .stream = stream,
                          .attrs = &attr,
                          .nattrs = 1};
    CUresult r = ctx->cu->LaunchKernelEx(&cfg, v->fn, p.ptrs, NULL);
    if (coop) {
      CU_CHECK(ctx, r, "cuLaunchKernelEx (cooperative)");
      return PHOBOS_OK;
    }
    /* a driver that refuses the dependent attribute still runs the kernel
     * plainly below (griddepcontrol.wait is then a no-op); a real failure
     * repeats there and is reported */
    if (r == CU_SUCCESS) return PHOBOS_OK;
  }
  CU_CHECK(ctx,
           ctx->cu->LaunchKernel(v->fn, (unsigned)grid[0], (unsigned)grid[1], (unsigned)grid[2], (unsigned)v->threads,
                                 1, 1, (unsigned)dyn, stream, p.ptrs, NULL),
           "cuLaunchKernel");
  return PHOBOS_OK;
}

phobos_status phobos_launch_grid(phobos_kernel *k, const phobos_arg *args, int nargs, const int64_t grid[3],
                                 void *stream) {
  if (!k || !grid) return k ? rt_set_err(k->mod->ctx, PHOBOS_INVALID, "phobos_launch_grid: grid is NULL") : PHOBOS_INVALID;
  k->explicit_grid = true;
  memcpy(k->grid, grid, sizeof k->grid);
  phobos_status s = phobos_launch(k, args, nargs, stream);
  k->explicit_grid = false;
  return s;
}

/* The key of a launch's variant choice: everything the tests of a variant
 * read (rt_variant_fits and the others, the contracts, the autotuner's
 * table): each tensor's dtype, extents, strides as given and base modulo
 * 16, which pairs of tensors (one of them written) share bytes, each
 * scalar, the explicit grid and whether autotuning is on. Not the bases
 * themselves: a model's layers, each with its own weights, share a key.
 * 0 where it would not fit in cap. */
static size_t memo_key(const phobos_kernel *k, const phobos_arg *args, int nargs, const RtBinding *b, bool autotune,
                       int64_t *key, size_t cap) {
  size_t n = 0;
  bool over = false;
#define PUT(x) (n < cap ? (void)(key[n++] = (int64_t)(x)) : (void)(over = true))
  PUT(nargs), PUT(autotune), PUT(k->explicit_grid);
  if (k->explicit_grid) PUT(k->grid[0]), PUT(k->grid[1]), PUT(k->grid[2]);
  for (int i = 0; i < nargs; i++) {
    const phobos_arg *a = &args[i];
    PUT(a->kind);
    if (a->kind == PHOBOS_ARG_FLOAT) {
      int64_t bits;
      memcpy(&bits, &a->f, sizeof bits);
      PUT(bits);
    } else if (a->kind != PHOBOS_ARG_TENSOR) {
      PUT(a->i);
    } else {
      const phobos_tensor *t = &a->tensor;
      PUT(t->dtype), PUT(t->rank), PUT(t->data & 15);
      for (int d = 0; d < t->rank; d++) PUT(t->shape[d]), PUT(t->strides[d]);
    }
  }
  int64_t bits = 0, nb = 0;
  for (int i = 0; i < nargs; i++)
    for (int j = i + 1; j < nargs; j++) {
      if (args[i].kind != PHOBOS_ARG_TENSOR || args[j].kind != PHOBOS_ARG_TENSOR) continue;
      if (!k->mf->params[i].written && !k->mf->params[j].written) continue;
      uint64_t x = args[i].tensor.data, y = args[j].tensor.data;
      const int64_t *span = b->bytes; /* rt_bind's */
      bool apart = !span[i] || !span[j] || x + (uint64_t)span[i] <= y || y + (uint64_t)span[j] <= x;
      bits |= (int64_t)!apart << nb;
      if (++nb == 63) PUT(bits), bits = 0, nb = 0;
    }
  PUT(bits);
#undef PUT
  return over ? 0 : n;
}

static MfVariant *memo_find(const phobos_kernel *k, const int64_t *key, size_t len) {
  for (int i = 0; i < RT_MEMOS; i++)
    if (k->memo[i].key && k->memo[i].len == len && !memcmp(k->memo[i].key, key, len * sizeof *key)) return k->memo[i].v;
  return NULL;
}

static void memo_store(phobos_kernel *k, const int64_t *key, size_t len, MfVariant *v) {
  struct RtMemo *m = &k->memo[k->memo_next];
  int64_t *copy = realloc(m->key, len * sizeof *key);
  if (!copy) return; /* no memo: tested each time */
  memcpy(copy, key, len * sizeof *key);
  m->key = copy, m->len = len, m->v = v;
  k->memo_next = (k->memo_next + 1) % RT_MEMOS;
}

void rt_kernel_free(phobos_kernel *k) {
  rt_scratch_free(k);
  free(k->fits);
  for (int i = 0; i < RT_MEMOS; i++) free(k->memo[i].key), k->memo[i].key = NULL;
}

phobos_status phobos_launch(phobos_kernel *k, const phobos_arg *args, int nargs, void *stream) {
  if (!k) return PHOBOS_INVALID;
  phobos_context *ctx = k->mod->ctx;
  char err[900];
  RtBinding b;
  /* a kernel with @scratch takes the caller's arguments, then its scratch
   * tensors, which the runtime fills in for the variant it launches
   * (rt_launch_variant; workspace.c) */
  phobos_arg full[MF_MAX_PARAMS];
  int nscr = k->mf->nscratch, nuser = k->mf->nparams - nscr;
  if (nscr) {
    if (nargs != nuser)
      return rt_set_err(ctx, PHOBOS_BAD_ARGUMENT, "kernel '%s' takes %d argument%s, got %d (its %d scratch tensor%s "
                        "the library allocates and passes itself)", k->mf->name, nuser, nuser == 1 ? "" : "s", nargs,
                        nscr, nscr == 1 ? "" : "s");
    if (!args && nargs) return rt_set_err(ctx, PHOBOS_INVALID, "kernel '%s': args is NULL", k->mf->name);
    if (nuser) memcpy(full, args, sizeof *args * (size_t)nuser);
    memset(full + nuser, 0, sizeof *full * (size_t)nscr);
    args = full, nargs = k->mf->nparams;
  }
  phobos_status bs = rt_bind(k->mf, args, nargs, &b, err, sizeof err);
  if (bs != PHOBOS_OK) return rt_set_err(ctx, bs, "%s", err);
  if (k->pinned) {
    MfVariant *v = k->pinned;
    if (b.general && !v->general_strides)
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' takes tensors whose last dim is "
                        "contiguous (stride 1); these are not: pin its general-strides entry (..._strided) or none",
                        k->mf->name, v->entry);
    if (!rt_variant_fits(v, &b))
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' does not take these shapes (its "
                        "pinned dims, dims_at_most or dims_above)", k->mf->name, v->entry);
    if (!rt_stage_fits(k->mf, v, args, &b, ctx->max_shared_optin))
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' stages rows of '%s', which need "
                        "%lld bytes of shared memory (device %d allows %d), a 16-byte aligned base, rows one after "
                        "another (row-major strides) and no written tensor overlapping them", k->mf->name, v->entry, k->mf->params[v->stage_param].name,
                        (long long)rt_dynamic_shared(k->mf, v, &b), ctx->ordinal, ctx->max_shared_optin);
    int mis = rt_rows_misfit(k->mf, v, args);
    if (mis >= 0) {
      const phobos_tensor *t = &args[mis].tensor;
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' is an aligned-rows copy, which "
                        "takes tensor '%s' only with a 16-byte aligned base and rows (base 0x%llx, row pitches %lld "
                        "bytes modulo 16)", k->mf->name, v->entry, k->mf->params[mis].name,
                        (unsigned long long)t->data, (long long)rt_row_pitches(t));
    }
    int ap = rt_apart_misfit(k->mf, v, args);
    if (ap >= 0)
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' reads tensor '%s' ahead of "
                        "stores to other tensors (a one-pass copy over several blocks), so no tensor it writes may "
                        "overlap '%s'", k->mf->name, v->entry, k->mf->params[ap].name, k->mf->params[ap].name);
    int nm = rt_maps_misfit(k->mf, v, args);
    if (nm >= 0) {
      const phobos_tensor *t = &args[nm].tensor;
      return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': the pinned variant '%s' is warp-specialized, which "
                        "takes tensor '%s' only through a tensor map: a 16-byte aligned base and row pitches, and "
                        "inner dims that divide as the map splits them (base 0x%llx, row pitches %lld bytes modulo 16)",
                        k->mf->name, v->entry, k->mf->params[nm].name, (unsigned long long)t->data,
                        (long long)rt_row_pitches(t));
    }
    phobos_status cs = ct_check_pinned(k, v, &b, err, sizeof err); /* contract.c */
    if (cs != PHOBOS_OK) return rt_set_err(ctx, cs, "%s", err);
    k->last_variant = v->name;
    return rt_launch_variant(k, v, args, &b, NULL, (CUstream)stream);
  }
  const char *tune_env = getenv("PHOBOS_AUTOTUNE");
  bool autotune = !(tune_env && !strcmp(tune_env, "0"));
  int64_t key[512];
  size_t klen = memo_key(k, args, nargs, &b, autotune, key, sizeof key / sizeof *key);
  MfVariant *known = klen ? memo_find(k, key, klen) : NULL;
  if (known) {
    k->last_variant = known->name;
    return rt_launch_variant(k, known, args, &b, NULL, (CUstream)stream);
  }
  MfVariant **fits = k->fits;
  int nfits = 0;
  for (int i = 0; i < k->mf->nvariants; i++)
    if (k->mf->variants[i].general_strides == b.general && rt_variant_fits(&k->mf->variants[i], &b) &&
        rt_stage_fits(k->mf, &k->mf->variants[i], args, &b, ctx->max_shared_optin) &&
        rt_rows_misfit(k->mf, &k->mf->variants[i], args) < 0 && rt_apart_misfit(k->mf, &k->mf->variants[i], args) < 0 &&
        rt_maps_misfit(k->mf, &k->mf->variants[i], args) < 0 &&
        (!k->mf->variants[i].maps_required || ctx->cu->TensorMapEncodeTiled))
      fits[nfits++] = &k->mf->variants[i];
  if (!nfits && b.general)
    return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': a tensor's last dim is not contiguous, and its "
                      "general-strides entry does not fit these shapes (its pinned dims or contracts): pass contiguous "
                      "tensors, or recompile with -D for them", k->mf->name);
  if (!nfits) {
    const MfVariant *v0 = &k->mf->variants[0];
    char pins[300] = "";
    int n = 0;
    for (int i = 0; i < v0->npinned && n < (int)sizeof pins - 60; i++)
      n += snprintf(pins + n, sizeof pins - (size_t)n, "%s%s = %lld", i ? ", " : "", v0->pinned_name[i],
                    (long long)v0->pinned_value[i]);
    for (int i = 0; i < v0->nat_most && n < (int)sizeof pins - 60; i++)
      n += snprintf(pins + n, sizeof pins - (size_t)n, "%s%s <= %lld", n ? ", " : "", v0->at_most_name[i],
                    (long long)v0->at_most_value[i]);
    return rt_set_err(ctx, PHOBOS_NO_VARIANT, "kernel '%s': no compiled variant fits these shapes (the first needs %s); "
                   "recompile with -D for them", k->mf->name, pins);
  }
  /* contract.c: the contracts, and phobos_launch_grid's rule */
  phobos_status cs = ct_filter(k, &b, fits, &nfits, err, sizeof err);
  if (cs != PHOBOS_OK) return rt_set_err(ctx, cs, "%s", err);
  MfVariant *v = fits[0];
  if (nfits > 1) {
    phobos_status s = at_choose(k, args, &b, fits, nfits, (CUstream)stream, &v);
    if (s != PHOBOS_OK) return s;
  }
  k->last_variant = v->name;
  phobos_status ls = rt_launch_variant(k, v, args, &b, NULL, (CUstream)stream);
  if (ls == PHOBOS_OK && klen) memo_store(k, key, klen, v);
  return ls;
}

phobos_status phobos_kernel_pin_variant(phobos_kernel *k, const char *entry) {
  if (!k) return PHOBOS_INVALID;
  if (!entry) return k->pinned = NULL, PHOBOS_OK;
  for (int i = 0; i < k->mf->nvariants; i++)
    if (!strcmp(k->mf->variants[i].name, entry)) return k->pinned = &k->mf->variants[i], PHOBOS_OK;
  return rt_set_err(k->mod->ctx, PHOBOS_INVALID, "kernel '%s' has no variant '%s'", k->mf->name, entry);
}

phobos_arg phobos_tensor_arg(uint64_t data, phobos_dtype dtype, int rank, const int64_t *shape) {
  phobos_arg a;
  memset(&a, 0, sizeof a);
  a.kind = PHOBOS_ARG_TENSOR;
  a.tensor.data = data;
  a.tensor.dtype = dtype;
  a.tensor.rank = rank < 0 ? 0 : rank > PHOBOS_MAX_RANK ? PHOBOS_MAX_RANK : rank;
  for (int i = 0; shape && i < a.tensor.rank; i++) a.tensor.shape[i] = shape[i];
  return a;
}

phobos_arg phobos_int_arg(int64_t v) {
  phobos_arg a;
  memset(&a, 0, sizeof a);
  a.kind = PHOBOS_ARG_INT;
  a.i = v;
  return a;
}

phobos_arg phobos_float_arg(double v) {
  phobos_arg a;
  memset(&a, 0, sizeof a);
  a.kind = PHOBOS_ARG_FLOAT;
  a.f = v;
  return a;
}

phobos_arg phobos_bool_arg(int v) {
  phobos_arg a;
  memset(&a, 0, sizeof a);
  a.kind = PHOBOS_ARG_BOOL;
  a.i = v != 0;
  return a;
}
