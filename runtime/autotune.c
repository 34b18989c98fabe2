/* autotune.c: choosing among variants that fit a shape.
 *
 * On the first launch for a shape key (source hash, device, kernel, the
 * bound dims) each fitting variant runs once to warm up and five times
 * timed with CUDA events, on scratch copies of the tensors the kernel
 * writes, so the caller's outputs are written once, by the winner. The
 * median decides. Choices live in memory and in a YAML file:
 * $PHOBOS_CACHE_DIR/autotune.yaml, else $XDG_CACHE_HOME/phobos/, else
 * ~/.cache/phobos/. A file that cannot be parsed is ignored and rewritten.
 * PHOBOS_AUTOTUNE=0 takes the first fitting variant without timing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "rt.h"

enum { AT_MAX_BYTES = 16 << 20 /* the cache file's size */ };

typedef struct AtEntry {
  char *key, *entry;
} AtEntry;

typedef struct AtCache {
  bool loaded;
  char path[1024];
  AtEntry *items;
  int n, cap;
} AtCache;

static void cache_path(char *out, size_t len) {
  const char *dir = getenv("PHOBOS_CACHE_DIR");
  if (dir && *dir) {
    snprintf(out, len, "%s/autotune.yaml", dir);
    return;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (xdg && *xdg) snprintf(out, len, "%s/phobos/autotune.yaml", xdg);
  else snprintf(out, len, "%s/.cache/phobos/autotune.yaml", home && *home ? home : "/tmp");
}

static void put(AtCache *c, const char *key, const char *entry) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->items[i].key, key)) {
      free(c->items[i].entry);
      c->items[i].entry = strdup(entry);
      return;
    }
  if (c->n == c->cap) {
    int cap = c->cap ? c->cap * 2 : 16;
    AtEntry *n = realloc(c->items, sizeof *n * (size_t)cap);
    if (!n) return;
    c->items = n;
    c->cap = cap;
  }
  c->items[c->n].key = strdup(key);
  c->items[c->n++].entry = strdup(entry);
}

static const char *get(AtCache *c, const char *key) {
  for (int i = 0; i < c->n; i++)
    if (!strcmp(c->items[i].key, key)) return c->items[i].entry;
  return NULL;
}

/* Reads the cache file: a mapping of keys to entry names. Returns false
 * (and keeps nothing) when the file exists but is not such a mapping. */
static bool load(AtCache *c, char *why, size_t len) {
  RtFile f;
  if (rt_read_file(c->path, "autotune cache", AT_MAX_BYTES, PHOBOS_CACHE_IGNORED, &f, why, len) != PHOBOS_OK)
    return f.open_errno == ENOENT; /* no cache yet, or one that cannot be read */
  yaml_parser_t p;
  yaml_document_t doc;
  bool ok = yaml_parser_initialize(&p);
  if (ok) {
    yaml_parser_set_input_string(&p, (const unsigned char *)f.data, f.len);
    ok = yaml_parser_load(&p, &doc);
    if (!ok) snprintf(why, len, "%s:%zu: %s", c->path, p.problem_mark.line + 1, p.problem ? p.problem : "bad YAML");
    yaml_parser_delete(&p);
  } else {
    snprintf(why, len, "%s: out of memory", c->path);
  }
  free(f.data);
  if (!ok) return false;
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (root && root->type != YAML_MAPPING_NODE) {
    snprintf(why, len, "%s: not a mapping of shapes to variants", c->path);
    ok = false;
  }
  for (yaml_node_pair_t *q = root && ok ? root->data.mapping.pairs.start : NULL; q && q < root->data.mapping.pairs.top; q++) {
    yaml_node_t *k = yaml_document_get_node(&doc, q->key), *v = yaml_document_get_node(&doc, q->value);
    if (!k || !v || k->type != YAML_SCALAR_NODE || v->type != YAML_SCALAR_NODE) {
      snprintf(why, len, "%s:%zu: an entry is not 'key: variant'", c->path, k ? k->start_mark.line + 1 : 0);
      ok = false;
      break;
    }
    put(c, (const char *)k->data.scalar.value, (const char *)v->data.scalar.value);
  }
  yaml_document_delete(&doc);
  if (!ok)
    for (int i = 0; i < c->n; i++) free(c->items[i].key), free(c->items[i].entry);
  if (!ok) c->n = 0;
  return ok;
}

static void mkdirs(const char *path) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(buf, 0755);
      *p = '/';
    }
}

/* Writes the whole cache through a temporary file and a rename, so a
 * reader never sees half a file. Failures to write are not errors: the
 * choice still holds in memory. */
static void save(AtCache *c) {
  mkdirs(c->path);
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", c->path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return;
  yaml_emitter_t e;
  yaml_event_t ev;
  yaml_emitter_initialize(&e);
  yaml_emitter_set_output_file(&e, f);
  bool ok = true;
#define EMIT(init) ok = ok && (init) && yaml_emitter_emit(&e, &ev)
  EMIT(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
  EMIT(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
  EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
  for (int i = 0; i < c->n; i++) {
    EMIT(yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)c->items[i].key, -1, 1, 1, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    EMIT(yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)c->items[i].entry, -1, 1, 1, YAML_PLAIN_SCALAR_STYLE));
  }
  EMIT(yaml_mapping_end_event_initialize(&ev));
  EMIT(yaml_document_end_event_initialize(&ev, 1));
  EMIT(yaml_stream_end_event_initialize(&ev));
#undef EMIT
  yaml_emitter_delete(&e);
  if (fclose(f) != 0) ok = false;
  if (!ok || rename(tmp, c->path) != 0) unlink(tmp);
}

void at_free(phobos_context *ctx) {
  AtCache *c = ctx->cache;
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->items[i].key), free(c->items[i].entry);
  free(c->items);
  free(c);
  ctx->cache = NULL;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Median milliseconds of five timed launches after one warm-up. */
static phobos_status time_variant(phobos_kernel *k, MfVariant *v, const phobos_arg *args, const RtBinding *b,
                                  const CUdeviceptr *scratch, CUstream stream, float *ms) {
  phobos_context *ctx = k->mod->ctx;
  const CuApi *cu = ctx->cu;
  CUevent e0 = NULL, e1 = NULL;
  float t[5];
  phobos_status s = rt_launch_variant(k, v, args, b, scratch, stream);
  char buf[200];
  CUresult r = CU_SUCCESS;
  if (s == PHOBOS_OK && ((r = cu->EventCreate(&e0, 0)) != CU_SUCCESS || (r = cu->EventCreate(&e1, 0)) != CU_SUCCESS))
    s = rt_set_err(ctx, PHOBOS_CUDA_ERROR, "cuEventCreate failed: %s", cu_error(cu, r, buf, sizeof buf));
  for (int i = 0; i < 5 && s == PHOBOS_OK; i++) {
    if ((r = cu->EventRecord(e0, stream)) != CU_SUCCESS) break;
    if ((s = rt_launch_variant(k, v, args, b, scratch, stream)) != PHOBOS_OK) break;
    if ((r = cu->EventRecord(e1, stream)) != CU_SUCCESS || (r = cu->EventSynchronize(e1)) != CU_SUCCESS ||
        (r = cu->EventElapsedTime(&t[i], e0, e1)) != CU_SUCCESS)
      break;
  }
  if (s == PHOBOS_OK && r != CU_SUCCESS)
    s = rt_set_err(ctx, PHOBOS_CUDA_ERROR, "timing variant '%s' failed: %s", v->entry, cu_error(cu, r, buf, sizeof buf));
  if (e0) cu->EventDestroy(e0);
  if (e1) cu->EventDestroy(e1);
  if (s == PHOBOS_OK) {
    qsort(t, 5, sizeof t[0], cmp_float);
    *ms = t[2];
  }
  return s;
}

phobos_status at_choose(phobos_kernel *k, const phobos_arg *args, const RtBinding *b, MfVariant **fits, int nfits,
                        CUstream stream, MfVariant **chosen) {
  phobos_context *ctx = k->mod->ctx;
  const char *env = getenv("PHOBOS_AUTOTUNE");
  *chosen = fits[0];
  if (env && !strcmp(env, "0")) return PHOBOS_OK;
  if (!ctx->cache) {
    ctx->cache = calloc(1, sizeof *ctx->cache);
    if (!ctx->cache) return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory for the autotune cache");
  }
  AtCache *c = ctx->cache;
  if (!c->loaded) {
    c->loaded = true;
    cache_path(c->path, sizeof c->path);
    char why[1400];
    if (!load(c, why, sizeof why)) /* not fatal: the file is rewritten after this tuning */
      ctx->cache_status = rt_set_err(ctx, PHOBOS_CACHE_IGNORED, "autotune cache ignored and rewritten: %s", why);
  }
  char key[1024];
  int n = snprintf(key, sizeof key, "%s|%s|%s", k->mod->mf.source_hash, ctx->name, k->mf->name);
  for (int i = 0; i < b->ndims && n < (int)sizeof key - 40; i++)
    n += snprintf(key + n, sizeof key - (size_t)n, "|%s=%lld", b->name[i], (long long)b->value[i]);
  const char *cached = get(c, key);
  for (int i = 0; cached && i < nfits; i++)
    if (!strcmp(fits[i]->entry, cached)) {
      *chosen = fits[i];
      return PHOBOS_OK;
    }
  /* scratch copies of what the kernel writes, starting from its contents */
  const CuApi *cu = ctx->cu;
  CUdeviceptr scratch[MF_MAX_PARAMS] = {0}; /* by parameter index: manifest.c bounds nparams */
  phobos_status s = PHOBOS_OK;
  for (int i = 0; i < k->mf->nparams && s == PHOBOS_OK; i++) {
    const MfParam *p = &k->mf->params[i];
    if (!p->tensor || !p->written) continue;
    int64_t bytes; /* rt_bind checked it; checked again, as every size is */
    if (!rt_tensor_bytes(&args[i].tensor, &bytes)) {
      s = rt_set_err(ctx, PHOBOS_BAD_SHAPE, "autotune scratch for '%s': its size overflows 64 bits", p->name);
      break;
    }
    char buf[200];
    CUresult r = cu->MemAlloc(&scratch[i], (size_t)bytes);
    if (r == CU_SUCCESS) r = cu->MemcpyDtoDAsync(scratch[i], args[i].tensor.data, (size_t)bytes, stream);
    if (r != CU_SUCCESS)
      s = rt_set_err(ctx, PHOBOS_CUDA_ERROR, "autotune scratch for '%s' (%lld bytes): %s", p->name, (long long)bytes,
                     cu_error(cu, r, buf, sizeof buf));
  }
  float best = 0;
  int won = -1;
  for (int i = 0; i < nfits && s == PHOBOS_OK; i++) {
    float ms;
    phobos_status ts = time_variant(k, fits[i], args, b, scratch, stream, &ms);
    if (ts == PHOBOS_LAUNCH_LIMIT) continue; /* this variant cannot run this shape; others may */
    if (ts != PHOBOS_OK) s = ts;
    else if (won < 0 || ms < best) best = ms, won = i;
  }
  for (int i = 0; i < k->mf->nparams; i++)
    if (scratch[i]) cu->MemFree(scratch[i]);
  if (s != PHOBOS_OK) return s;
  if (won < 0) return PHOBOS_LAUNCH_LIMIT; /* the message of the last refusal stands */
  *chosen = fits[won];
  put(c, key, fits[won]->entry);
  save(c);
  return PHOBOS_OK;
}
