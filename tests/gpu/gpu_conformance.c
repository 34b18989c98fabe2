/* gpu_conformance.c: every conformance case on the GPU, as TAP.
 *
 * The same harness as the interpreter suite (tests/conformance/harness.c:
 * seeded inputs, double-precision references, every variant, same_as
 * reruns), with a runner that compiles the case's variants to one cubin
 * (PTX emitter, ptxas) and its manifest, loads it with libphobos, uploads
 * the inputs, poisons the outputs, launches each variant and reads back.
 *
 * Usage: gpu_conformance CASE.yaml...   (ptxas: PHOBOS_PTXAS, PATH or
 * /usr/local/cuda/bin). Without a device it prints one skip line.
 * PHOBOS_TMA=0 plans with phobosc --no-tensor-copies; PHOBOS_COMPARE_PATHS=1 runs each
 * case on the pointer path and then with TMA copies and requires the same
 * output bytes. PHOBOS_GPU_PAD=N pads each row by N elements, PHOBOS_GPU_SPREAD=S
 * puts the last dim's elements S apart (general strides, spec 16.3), each
 * gap checked for its guard bytes. PHOBOS_CONF_CACHE=DIR reuses the cubins of earlier runs whose
 * PTX is the same (run.sh's passes). */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance/harness.h"
#include "cubin.h"
#include "manifest.h"
#include "ptx.h"
#include "rt.h"

typedef struct Gpu {
  phobos_context *ctx;
  const CuApi *cu;
  phobos_module *mod;
  Arena *arena;
  char dir[64];
  int serial;
  int tmaps, tmaps_built; /* over every launch: tensor maps taken and built */
  /* PHOBOS_COMPARE_PATHS=1: each case runs on the pointer path (record),
   * then with TMA copies (compare): every output byte must be the same */
  int compare, nrun;
  unsigned char *snap[64][CASE_MAX_PARAMS];
  size_t snap_len[64][CASE_MAX_PARAMS];
} Gpu;

static bool gfail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool gfail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return false;
}

static void gpu_end(void *self) {
  Gpu *g = self;
  if (g->mod) phobos_module_unload(g->mod);
  g->mod = NULL;
  arena_free(g->arena);
  g->arena = NULL;
}

/* PHOBOS_CONF_CACHE=DIR keeps each cubin under the hash of its PTX, so the
 * suite's passes that plan alike (as compiled, under memcheck, on padded
 * rows) run ptxas once per kernel: most of a pass's time is ptxas. */
static bool ptx_key(const char *ptx_path, char *path, size_t len) {
  const char *dir = getenv("PHOBOS_CONF_CACHE");
  FILE *f = dir && *dir ? fopen(ptx_path, "rb") : NULL;
  if (!f) return false;
  uint64_t h = 1469598103934665603ull, n = 0;
  for (int ch; (ch = getc(f)) != EOF; n++) h = (h ^ (unsigned char)ch) * 1099511628211ull;
  fclose(f);
  return snprintf(path, len, "%s/%016llx-%llu.cubin", dir, (unsigned long long)h, (unsigned long long)n) < (int)len;
}

static bool copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
  bool ok = in && out;
  char buf[1 << 16];
  for (size_t n; ok && (n = fread(buf, 1, sizeof buf, in)) > 0;) ok = fwrite(buf, 1, n, out) == n;
  ok = ok && !ferror(in);
  if (in) fclose(in);
  if (out && fclose(out) != 0) ok = false;
  return ok;
}

static bool cached_cubin(const char *ptx_path, const char *cubin_path) {
  char key[512];
  return ptx_key(ptx_path, key, sizeof key) && access(key, R_OK) == 0 && copy_file(key, cubin_path);
}

/* written beside and renamed: chunks running at once may store one key */
static void cache_cubin(const char *ptx_path, const char *cubin_path) {
  char key[512], tmp[600];
  if (!ptx_key(ptx_path, key, sizeof key) || access(key, R_OK) == 0) return;
  snprintf(tmp, sizeof tmp, "%s.%d", key, (int)getpid());
  if (copy_file(cubin_path, tmp) && rename(tmp, key) == 0) return;
  unlink(tmp);
}

static bool gpu_begin(void *self, Case *c, Plan **plans, int nplans, const Source *src, char *err, size_t errlen) {
  Gpu *g = self;
  gpu_end(g);
  g->arena = arena_new();
  char ptx_path[256], cubin_path[256], yaml_path[256];
  snprintf(ptx_path, sizeof ptx_path, "%s/k%d.ptx", g->dir, g->serial);
  snprintf(cubin_path, sizeof cubin_path, "%s/k%d.cubin", g->dir, g->serial);
  snprintf(yaml_path, sizeof yaml_path, "%s/k%d.yaml", g->dir, g->serial++);
  char *dbuf = NULL;
  size_t dlen = 0, ptx_len = 0;
  FILE *dout = open_memstream(&dbuf, &dlen);
  Diags d;
  diag_init(&d, src, dout, true);
  char *ptx = ptx_emit_module(g->arena, &d, plans, nplans, "sm_90a", &ptx_len);
  fclose(dout);
  if (!ptx) {
    gfail(err, errlen, "%s: PTX emission failed:\n%s", c->name, dbuf);
    free(dbuf);
    return false;
  }
  free(dbuf);
  FILE *pf = fopen(ptx_path, "w");
  bool written = pf && fwrite(ptx, 1, ptx_len, pf) == ptx_len;
  if (pf) written = fclose(pf) == 0 && written;
  free(ptx);
  if (!written) return gfail(err, errlen, "cannot write %s", ptx_path);
  char *pbuf = NULL;
  size_t plen = 0;
  FILE *pe = open_memstream(&pbuf, &plen);
  bool ok = cached_cubin(ptx_path, cubin_path) || cubin_assemble(ptx_path, cubin_path, "sm_90a", false, pe, NULL, NULL);
  fclose(pe);
  if (ok) cache_cubin(ptx_path, cubin_path);
  if (!ok) {
    gfail(err, errlen, "%s: ptxas failed:\n%s", c->name, pbuf);
    free(pbuf);
    return false;
  }
  free(pbuf);
  FILE *y = fopen(yaml_path, "w");
  char merr[512] = "";
  if (!y || !manifest_write(y, src, "sm_90a", strrchr(cubin_path, '/') + 1, plans, nplans, merr, sizeof merr)) {
    if (y) fclose(y);
    return gfail(err, errlen, "%s: manifest: %s", c->name, merr);
  }
  fclose(y);
  phobos_status s = phobos_module_load(g->ctx, cubin_path, &g->mod);
  if (s != PHOBOS_OK) return gfail(err, errlen, "%s: %s: %s", c->name, phobos_status_name(s), phobos_last_error(g->ctx));
  unlink(ptx_path);
  return true;
}

static phobos_dtype dtype_of(Scalar s) { return (phobos_dtype)s; /* same order */ }

/* Every tensor lies between two guard regions of guard_len bytes filled with
 * GUARD_BYTE; a kernel that writes outside its tensor (a mask that lets the
 * slack through) changes them, and the case fails even where the output
 * itself is right. 256 keeps the tensor as aligned as cuMemAlloc's. Guards
 * are readable memory, so they would hide a read past the end from
 * compute-sanitizer: run.sh sets PHOBOS_GPU_GUARD=0 under memcheck. */
static size_t guard_len = 256;
enum { GUARD_BYTE = 0xa5 };

/* front: the guard before the tensor, guard_len plus the case's misalign */
static bool guards_intact(const unsigned char *h, size_t front, size_t bytes, size_t *where) {
  for (size_t j = 0; j < front; j++)
    if (h[j] != GUARD_BYTE) return *where = j, false;
  for (size_t j = 0; j < guard_len; j++)
    if (h[front + bytes + j] != GUARD_BYTE) return *where = front + bytes + j, false;
  return true;
}

/* A tensor's strides with harness_pad elements past the end of each row
 * (rank 2 and more; PHOBOS_GPU_PAD), and its elements at them, the gaps
 * included */
static int64_t padded_strides(const CaseParam *cp, int64_t *st) {
  int64_t run = 1;
  for (int d = cp->rank - 1; d >= 0; d--) {
    bool last = d == cp->rank - 1;
    st[d] = last ? harness_spread : run; /* PHOBOS_GPU_SPREAD: the last dim's elements that far apart */
    run = last ? cp->dims[d] * harness_spread + (cp->rank > 1 ? harness_pad : 0) : run * cp->dims[d];
  }
  return run;
}

/* element j of a row-major walk of the tensor's extents, at strides st */
static int64_t phys_at(const CaseParam *cp, const int64_t *st, int64_t j) {
  int64_t at = 0;
  for (int d = cp->rank - 1; d >= 0; d--) at += j % cp->dims[d] * st[d], j /= cp->dims[d];
  return at;
}

/* the harness_pad elements past each row (a stride's gap) still hold the
 * guard byte; *where: the first that does not, from the allocation's start */
static bool gaps_intact(const CaseParam *cp, const unsigned char *t, size_t *where, size_t front) {
  if ((!harness_pad || cp->rank < 2) && harness_spread == 1) return true;
  int64_t eb = sema_scalar_bytes(cp->elem), st[MAX_TENSOR_RANK], n = padded_strides(cp, st);
  unsigned char *elem = calloc((size_t)n, 1); /* the places of elements; the rest are gaps */
  if (!elem) return *where = front, false;
  for (int64_t j = 0; j < cp->n; j++) elem[phys_at(cp, st, j)] = 1;
  bool ok = true;
  for (int64_t i = 0; i < n && ok; i++)
    for (int64_t b = 0; b < eb && !elem[i] && ok; b++)
      if (t[i * eb + b] != GUARD_BYTE) *where = front + (size_t)(i * eb + b), ok = false;
  free(elem);
  return ok;
}

static bool gpu_run(void *self, Case *c, const Plan *p, int index, double **outs, char *err, size_t errlen) {
  Gpu *g = self;
  const TirFunc *f = p->f;
  phobos_kernel *k;
  if (phobos_kernel_get(g->mod, f->name, &k) != PHOBOS_OK) return gfail(err, errlen, "%s", phobos_last_error(g->ctx));
  MfVariant *v = &k->mf->variants[index];
  /* an entry that takes the L2 prefetch distance runs as its twin, which
   * prefetches (spec 15.18): the path with addresses to get wrong */
  for (int i = 0; v->l2pf_param && i < k->mf->nvariants; i++)
    if (k->mf->variants[i].l2pf_on && k->mf->variants[i].entry == v->entry) v = &k->mf->variants[i];
  int slot = g->nrun++; /* this launch's place in the case, for PHOBOS_COMPARE_PATHS */
  phobos_arg args[CASE_MAX_PARAMS];
  CUdeviceptr dev[CASE_MAX_PARAMS] = {0};
  size_t bytes[CASE_MAX_PARAMS] = {0}, front[CASE_MAX_PARAMS] = {0};
  int64_t st[CASE_MAX_PARAMS][MAX_TENSOR_RANK];
  bool ok = true;
  for (int i = 0; i < f->nparams && ok; i++) {
    if (f->params[i].scratch) { /* @scratch: the runtime fills it in (rt_launch_variant) */
      memset(&args[i], 0, sizeof args[i]);
      args[i].kind = PHOBOS_ARG_TENSOR;
      continue;
    }
    CaseParam *cp = harness_param(c, f->params[i].name);
    if (!cp->tensor) {
      bool fl = cp->elem <= S_F64;
      args[i] = cp->elem == S_BOOL ? phobos_bool_arg(cp->scalar != 0) : fl ? phobos_float_arg(cp->scalar) : phobos_int_arg((int64_t)cp->scalar);
      continue;
    }
    int eb = sema_scalar_bytes(cp->elem);
    bytes[i] = (size_t)padded_strides(cp, st[i]) * (size_t)eb; /* the gaps hold the guard byte too */
    front[i] = guard_len + (size_t)cp->misalign; /* misalign: a base only that far from an aligned one */
    size_t all = front[i] + bytes[i] + guard_len;
    unsigned char *h = malloc(all), *t = h + front[i];
    memset(h, GUARD_BYTE, all);
    bool poison = harness_is_output(c, cp->name) && !harness_is_inout(c, cp);
    for (int64_t j = 0; j < cp->n; j++) {
      unsigned char *at = t + phys_at(cp, st[i], j) * eb;
      if (poison && cp->elem <= S_F64) memset(at, 0xff, (size_t)eb); /* NaN */
      else interp_encode(at, cp->elem, poison ? -77 : cp->data[j]);
    }
    CUresult r = g->cu->MemAlloc(&dev[i], all);
    if (r == CU_SUCCESS) r = g->cu->MemcpyHtoD(dev[i], h, all);
    free(h);
    if (r != CU_SUCCESS) ok = gfail(err, errlen, "allocating or uploading %s failed (%d)", cp->name, r);
    args[i] = phobos_tensor_arg(dev[i] + front[i], dtype_of(cp->elem), cp->rank, cp->dims);
    if ((harness_pad && cp->rank > 1) || harness_spread > 1)
      memcpy(args[i].tensor.strides, st[i], sizeof(int64_t) * (size_t)cp->rank);
  }
  RtBinding b;
  char berr[600];
  if (ok && rt_bind(k->mf, args, f->nparams, &b, berr, sizeof berr) != PHOBOS_OK) ok = gfail(err, errlen, "bind: %s", berr);
  if (ok) {
    k->explicit_grid = c->has_grid;
    if (c->has_grid) memcpy(k->grid, c->grid, sizeof k->grid);
    phobos_status s = rt_launch_variant(k, v, args, &b, NULL, NULL);
    k->explicit_grid = false;
    if (s != PHOBOS_OK) ok = gfail(err, errlen, "launch %s: %s: %s", v->entry, phobos_status_name(s), phobos_last_error(g->ctx));
    /* every map whose tensor has a 16-byte aligned base
     * and row pitches must be built (else the TMA path would go untested
     * behind its fallback), and no other */
    int built, maps = phobos_kernel_last_tensor_maps(k, &built), want = 0;
    for (int t = 0; t < v->ntmaps; t++) {
      int q = v->tmaps[t].param;
      if (f->params[q].scratch) { /* the runtime's: 256-byte bases, rows at 16-byte pitches (workspace.c) */
        const MfTmap *tm = &v->tmaps[t];
        const MfProgram *pg = tm->split_dim < 0 ? NULL : &v->scratch[q - (k->mf->nparams - k->mf->nscratch)][tm->split_dim];
        int64_t ext = 0;
        RtEvalFail why;
        want += !pg || (rt_eval_program(pg->ops, pg->nops, &b, NULL, &ext, &why) && ext % tm->split_inner == 0);
        continue;
      }
      CaseParam *cp = harness_param(c, f->params[q].name);
      const MfTmap *tm = &v->tmaps[t];
      bool fits = front[q] % 16 == 0;
      /* the map's dims' strides, a split dim as [extent / inner, inner];
       * a dim of extent 1 reaches no other index, and the runtime gives
       * it an aligned stride (rt_strides) */
      int64_t est[MAX_TENSOR_RANK + 1];
      int r = 0;
      for (int d = 0; d < cp->rank; d++) {
        int64_t sd = cp->dims[d] == 1 && d < cp->rank - 1 ? 0 : st[q][d];
        if (d == tm->split_dim) {
          fits &= cp->dims[d] % tm->split_inner == 0;
          est[r++] = sd * tm->split_inner;
        }
        est[r++] = sd;
      }
      for (int d = 0; d < r - 1; d++) fits &= est[d] * sema_scalar_bytes(cp->elem) % 16 == 0;
      want += fits;
    }
    g->tmaps += maps, g->tmaps_built += built;
    if (ok && built != want)
      ok = gfail(err, errlen, "%s: %d of its %d tensor maps were built, %d expected", v->entry, built, maps, want);
  }
  if (ok) {
    CUresult r = g->cu->CtxSynchronize();
    char cb[200];
    if (r != CU_SUCCESS) ok = gfail(err, errlen, "%s faulted: %s", v->entry, cu_error(g->cu, r, cb, sizeof cb));
  }
  for (int i = 0; i < f->nparams; i++) {
    if (!dev[i]) continue;
    CaseParam *cp = harness_param(c, f->params[i].name);
    if (ok) {
      size_t all = front[i] + bytes[i] + guard_len;
      unsigned char *h = malloc(all);
      size_t at;
      if (g->cu->MemcpyDtoH(h, dev[i], all) != CU_SUCCESS)
        ok = gfail(err, errlen, "download of %s failed", cp->name);
      else if (!guards_intact(h, front[i], bytes[i], &at) || !gaps_intact(cp, h + front[i], &at, front[i]))
        ok = gfail(err, errlen, "%s wrote outside tensor '%s': byte %lld from its start is 0x%02x, not the guard's 0x%02x",
                   v->entry, cp->name, (long long)at - (long long)front[i], h[at], GUARD_BYTE);
      else if (harness_is_output(c, cp->name) && g->compare && slot < 64) {
        unsigned char *out = h + front[i];
        if (g->compare == 1) {
          g->snap[slot][i] = malloc(bytes[i]);
          memcpy(g->snap[slot][i], out, bytes[i]);
          g->snap_len[slot][i] = bytes[i];
        } else if (!g->snap[slot][i] || g->snap_len[slot][i] != bytes[i]) {
          ok = gfail(err, errlen, "%s: no pointer-path run of '%s' to compare with", v->entry, cp->name);
        } else {
          for (size_t j = 0; j < bytes[i] && ok; j++)
            if (out[j] != g->snap[slot][i][j])
              ok = gfail(err, errlen, "%s: output '%s' differs from the pointer path's at byte %zu (0x%02x, not 0x%02x)",
                         v->entry, cp->name, j, out[j], g->snap[slot][i][j]);
        }
      }
      if (ok && harness_is_output(c, cp->name)) {
        double *o = malloc(sizeof(double) * (size_t)cp->n);
        for (int64_t j = 0; j < cp->n; j++)
          o[j] = interp_decode(h + front[i] + phys_at(cp, st[i], j) * sema_scalar_bytes(cp->elem), cp->elem);
        outs[i] = o;
      }
      free(h);
    }
    g->cu->MemFree(dev[i]);
  }
  return ok;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  Gpu g = {0};
  phobos_status s = phobos_context_create(0, &g.ctx);
  if (s != PHOBOS_OK) {
    printf("1..0 # SKIP no CUDA device: %s\n# 0 passed, 0 failed, %d skipped\n", phobos_last_error(g.ctx), argc - 1);
    phobos_context_destroy(g.ctx);
    return 0;
  }
  const char *why, *guard = getenv("PHOBOS_GPU_GUARD");
  if (guard) guard_len = (size_t)strtoul(guard, NULL, 0) / 256 * 256;
  const char *pad = getenv("PHOBOS_GPU_PAD"); /* strided tensors: rows this many elements apart past their end */
  if (pad) harness_pad = atoi(pad), printf("# every row of rank 2 and more padded by %d elements: strided tensors\n", harness_pad);
  const char *spread = getenv("PHOBOS_GPU_SPREAD"); /* general strides: the last dim's elements this far apart */
  if (spread && atoi(spread) > 1)
    harness_spread = atoi(spread), printf("# every tensor's last dim at stride %d: the general-strides copies\n", harness_spread);
  g.cu = cu_api(&why);
  snprintf(g.dir, sizeof g.dir, "/tmp/phobos_gpuconf_XXXXXX");
  if (!mkdtemp(g.dir)) return 1;
  Runner r = {.self = &g, .begin = gpu_begin, .run = gpu_run, .end = gpu_end};
  int passed = 0, failed = 0, skipped = 0;
  const char *cmp = getenv("PHOBOS_COMPARE_PATHS");
  bool compare = cmp && !strcmp(cmp, "1");
  for (int i = 1; i < argc; i++) {
    Case c = {0};
    static char err[16384];
    err[0] = 0;
    bool ok;
    harness_runs = 0;
    if (compare) { /* the pointer path, then TMA copies: the same bytes out */
      setenv("PHOBOS_TMA", "0", 1);
      g.compare = 1, g.nrun = 0;
      ok = harness_load(argv[i], &c, err, sizeof err) && harness_run(&c, &r, err, sizeof err);
      harness_free(&c);
      memset(&c, 0, sizeof c); /* freed: the one free below is then of nothing, or of the second load */
      unsetenv("PHOBOS_TMA");
      g.compare = 2, g.nrun = 0;
      ok = ok && harness_load(argv[i], &c, err, sizeof err) && harness_run(&c, &r, err, sizeof err);
      for (int s = 0; s < 64; s++)
        for (int q = 0; q < CASE_MAX_PARAMS; q++) free(g.snap[s][q]), g.snap[s][q] = NULL, g.snap_len[s][q] = 0;
    } else {
      ok = harness_load(argv[i], &c, err, sizeof err) && harness_run(&c, &r, err, sizeof err);
    }
    const char *base = strrchr(argv[i], '/');
    /* under PHOBOS_GPU_SPREAD a kernel with a dot has no general-strides
     * entry (spec 16.3): nothing ran, and the line says so */
    printf("%s %d - %s%s\n", ok ? "ok" : "not ok", i, base ? base + 1 : argv[i],
           ok && !harness_runs ? " # SKIP no variant takes these strides (no general-strides entry)" : "");
    if (!ok)
      for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n")) printf("#   %s\n", line);
    if (ok && !harness_runs) skipped++;
    else ok ? passed++ : failed++;
    harness_free(&c);
  }
  if (g.tmaps) printf("# tensor maps: %d built of %d (TMA copies; the rest took the pointer path)\n", g.tmaps_built, g.tmaps);
  char skips[40] = "";
  if (skipped) snprintf(skips, sizeof skips, ", %d skipped", skipped);
  printf("1..%d\n# %d passed, %d failed%s\n", argc - 1, passed, failed, skips);
  phobos_context_destroy(g.ctx);
  return failed ? 1 : 0;
}
