/* autotune.c: choosing among variants that fit a shape.
 *
 * On the first launch for a shape key (source hash, device, kernel, the
 * bound dims) each fitting variant runs once to warm up and five times
 * timed with CUDA events, each after a memset that evicts the L2
 * (flush_l2), on scratch copies of the tensors the kernel writes, so the caller's outputs are written once, by the winner. The
 * median decides, unless others came within AT_CLOSE of the best: five
 * launches of a 40 us kernel tell apart variants 5% apart no better than
 * chance, so the fastest AT_FINALISTS of those close are timed again,
 * AT_FINAL_REPS launches each, and that median decides. Choices live in memory and in a YAML file:
 * $PHOBOS_CACHE_DIR/autotune.yaml, else $XDG_CACHE_HOME/phobos/, else
 * ~/.cache/phobos/. A file that cannot be parsed is ignored and rewritten.
 * It keeps AT_MAX_ENTRIES, evicting the oldest; each write merges into it
 * under a lock, so writers sharing it lose nothing (save).
 * PHOBOS_AUTOTUNE=0 takes the first fitting variant without timing. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "rt.h"

enum {
  AT_MAX_BYTES = 16 << 20, /* the cache file's size */
  AT_MAX_ENTRIES = 4096,   /* entries kept; past it the oldest written goes first */
  AT_LOCK_WAIT_MS = 10000, /* how long a writer waits for the file's lock */
  AT_REPS = 5,             /* timed launches of each fitting variant */
  AT_FINALISTS = 4,        /* variants timed again when they came close */
  AT_FINAL_REPS = 21,      /* ... and their timed launches */
};
#define AT_CLOSE 1.05f /* within 5% of the best: a finalist */

typedef struct AtEntry {
  char *key, *entry;
  bool dirty; /* chosen by this context and not yet merged into the file */
} AtEntry;

/* The entries, oldest first (the file's order), and an index by key: open
 * addressing over a power-of-two table of item positions + 1 (0: empty). */
typedef struct AtTable {
  AtEntry *items;
  int n, cap;
  int *slots;
  int nslots;
} AtTable;

typedef struct AtCache {
  bool loaded;
  bool has_path; /* false when the path did not fit: memory only */
  char path[1024];
  AtTable t;
  bool flush_tried;   /* the L2 flush buffer was looked for (flush_l2) */
  CUdeviceptr flush;  /* 0: timed without flushing */
  size_t flush_bytes;
} AtCache;

static bool cache_path(char *out, size_t len) {
  const char *dir = getenv("PHOBOS_CACHE_DIR");
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  int n = dir && *dir   ? snprintf(out, len, "%s/autotune.yaml", dir)
          : xdg && *xdg ? snprintf(out, len, "%s/phobos/autotune.yaml", xdg)
                        : snprintf(out, len, "%s/.cache/phobos/autotune.yaml", home && *home ? home : "/tmp");
  return n > 0 && (size_t)n < len;
}

static uint64_t hash(const char *s) { /* FNV-1a */
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* the slot holding `key`, or the empty slot where it would go */
static int *slot(const AtTable *t, const char *key) {
  size_t mask = (size_t)t->nslots - 1;
  for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
    int *sl = &t->slots[i];
    if (!*sl || !strcmp(t->items[*sl - 1].key, key)) return sl;
  }
}

static void reindex(AtTable *t) {
  memset(t->slots, 0, sizeof *t->slots * (size_t)t->nslots);
  for (int i = 0; i < t->n; i++) *slot(t, t->items[i].key) = i + 1;
}

static const char *get(const AtTable *t, const char *key) {
  if (!t->n) return NULL;
  int *sl = slot(t, key);
  return *sl ? t->items[*sl - 1].entry : NULL;
}

static void table_free(AtTable *t) {
  for (int i = 0; i < t->n; i++) free(t->items[i].key), free(t->items[i].entry);
  free(t->items);
  free(t->slots);
  *t = (AtTable){0};
}

/* Sets key's entry: in place when the key is there, else appended as the
 * newest, the oldest evicted at AT_MAX_ENTRIES. False when out of memory
 * (the table is unchanged). */
static bool put(AtTable *t, const char *key, const char *entry, bool dirty) {
  int *sl = t->n ? slot(t, key) : NULL;
  if (sl && *sl) {
    AtEntry *e = &t->items[*sl - 1];
    char *d = strdup(entry);
    if (!d) return false;
    free(e->entry);
    e->entry = d;
    e->dirty |= dirty;
    return true;
  }
  char *k = strdup(key), *d = strdup(entry);
  if (!k || !d) return free(k), free(d), false;
  if (t->n == AT_MAX_ENTRIES) { /* evict the oldest */
    free(t->items[0].key), free(t->items[0].entry);
    memmove(t->items, t->items + 1, sizeof *t->items * (size_t)(t->n - 1));
    t->n--;
    reindex(t);
  }
  if (t->n == t->cap) { /* grow the items and the index (kept at most a quarter full) */
    int cap = t->cap ? t->cap * 2 : 16, nslots = 4 * cap;
    AtEntry *items = realloc(t->items, sizeof *items * (size_t)cap);
    if (items) t->items = items;
    int *slots = items ? calloc((size_t)nslots, sizeof *slots) : NULL;
    if (!slots) return free(k), free(d), false;
    free(t->slots);
    t->slots = slots, t->nslots = nslots, t->cap = cap;
    reindex(t);
  }
  t->items[t->n] = (AtEntry){.key = k, .entry = d, .dirty = dirty};
  *slot(t, k) = ++t->n;
  return true;
}

/* One pass over a cache file's events: a mapping of scalar keys to
 * scalar entry names (no aliases, nothing nested, no document tree).
 * Counts the pairs into *npairs; with a table, puts those from index
 * `skip` on into it. */
static bool scan_pairs(const char *path, const RtFile *f, AtTable *t, size_t skip, size_t *npairs, char *why,
                       size_t len) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return snprintf(why, len, "%s: out of memory", path), false;
  yaml_parser_set_input_string(&p, (const unsigned char *)f->data, f->len);
  bool ok = true, done = false, in_map = false, had_map = false;
  char *key = NULL; /* the pending pair's key */
  size_t n = 0;
  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&p, &ev)) {
      snprintf(why, len, "%s:%zu: %s", path, p.problem_mark.line + 1, p.problem ? p.problem : "bad YAML");
      ok = false;
      break;
    }
    switch (ev.type) {
    case YAML_STREAM_START_EVENT:
    case YAML_DOCUMENT_START_EVENT:
      break;
    case YAML_STREAM_END_EVENT:
    case YAML_DOCUMENT_END_EVENT: /* the first document only */
      done = true;
      break;
    case YAML_MAPPING_START_EVENT:
      if (in_map || had_map) goto not_a_mapping;
      in_map = had_map = true;
      break;
    case YAML_MAPPING_END_EVENT:
      in_map = false;
      break;
    case YAML_SCALAR_EVENT:
      if (!in_map) goto not_a_mapping;
      if (!key) {
        if (!(key = strdup((const char *)ev.data.scalar.value))) ok = false, snprintf(why, len, "%s: out of memory", path);
        break;
      }
      if (t && n >= skip && !put(t, key, (const char *)ev.data.scalar.value, false))
        ok = false, snprintf(why, len, "%s: out of memory", path);
      free(key);
      key = NULL;
      n++;
      break;
    default:
    not_a_mapping:
      snprintf(why, len, "%s:%zu: not a mapping of shapes to variants", path, ev.start_mark.line + 1);
      ok = false;
      break;
    }
    yaml_event_delete(&ev);
  }
  free(key);
  yaml_parser_delete(&p);
  *npairs = n;
  return ok;
}

/* Reads a cache file into an empty table, in linear time: a first pass
 * counts the pairs, a second puts the newest (the last) AT_MAX_ENTRIES.
 * True when there is no file. False with *why (and nothing kept) when the
 * file cannot be read or is not a mapping of keys to entry names. */
static bool read_table(const char *path, AtTable *t, char *why, size_t len) {
  RtFile f;
  if (rt_read_file(path, "autotune cache", AT_MAX_BYTES, PHOBOS_CACHE_IGNORED, &f, why, len) != PHOBOS_OK)
    return f.open_errno == ENOENT;
  size_t n, again;
  bool ok = scan_pairs(path, &f, NULL, 0, &n, why, len) &&
            scan_pairs(path, &f, t, n > AT_MAX_ENTRIES ? n - AT_MAX_ENTRIES : 0, &again, why, len);
  free(f.data);
  if (!ok) table_free(t);
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

/* Writes a table to a fresh temporary file beside the cache (a name no
 * other writer uses: pid and a per-process counter) and renames it over
 * the cache, so a reader never sees half a file. */
static bool write_table(const char *path, const AtTable *t) {
  static unsigned counter;
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.%ld.%u.tmp", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
  if (!f) {
    if (fd >= 0) close(fd), unlink(tmp);
    return false;
  }
  yaml_emitter_t e;
  yaml_event_t ev;
  bool ok = yaml_emitter_initialize(&e);
  if (ok) yaml_emitter_set_output_file(&e, f);
#define EMIT(init) ok = ok && (init) && yaml_emitter_emit(&e, &ev)
  EMIT(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
  EMIT(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
  EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
  for (int i = 0; i < t->n; i++) {
    EMIT(yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)t->items[i].key, -1, 1, 1, YAML_DOUBLE_QUOTED_SCALAR_STYLE));
    EMIT(yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)t->items[i].entry, -1, 1, 1, YAML_PLAIN_SCALAR_STYLE));
  }
  EMIT(yaml_mapping_end_event_initialize(&ev));
  EMIT(yaml_document_end_event_initialize(&ev, 1));
  EMIT(yaml_stream_end_event_initialize(&ev));
#undef EMIT
  yaml_emitter_delete(&e);
  if (fclose(f) != 0) ok = false;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return false;
  }
  return true;
}

/* Takes the advisory lock on PATH.lock (flock: it excludes other processes
 * and, being per open file, other contexts of this process), waiting up to
 * AT_LOCK_WAIT_MS. The descriptor, or -1. */
static int lock_cache(const char *path) {
  char lock[1100];
  snprintf(lock, sizeof lock, "%s.lock", path);
  int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited++) {
    if ((errno != EWOULDBLOCK && errno != EINTR) || waited >= AT_LOCK_WAIT_MS) {
      close(fd);
      return -1;
    }
    nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
  }
  return fd;
}

/* Merges this context's new choices into the file and rewrites it, under
 * the lock: the file is read again, the dirty entries are put over it, and
 * the merge is written and renamed into place, so that no writer's entry
 * is lost (within AT_MAX_ENTRIES). The merge becomes this context's table.
 * Failures to write are not errors: the choices still hold in memory. */
static void save(AtCache *c) {
  if (!c->has_path) return;
  mkdirs(c->path);
  int lock = lock_cache(c->path);
  if (lock < 0) return; /* not written now; the dirty entries go with the next save */
  AtTable disk = {0};
  char why[1400];
  bool merged = read_table(c->path, &disk, why, sizeof why); /* unreadable: rewritten from this table */
  for (int i = 0; merged && i < c->t.n; i++)
    if (c->t.items[i].dirty && !put(&disk, c->t.items[i].key, c->t.items[i].entry, false)) merged = false;
  if (merged ? write_table(c->path, &disk) : write_table(c->path, &c->t)) {
    if (merged) {
      table_free(&c->t);
      c->t = disk;
      disk = (AtTable){0};
    }
    for (int i = 0; i < c->t.n; i++) c->t.items[i].dirty = false;
  }
  table_free(&disk);
  close(lock); /* releases the flock */
}

void at_free(phobos_context *ctx) {
  AtCache *c = ctx->cache;
  if (!c) return;
  if (c->flush && ctx->cu->CtxSetCurrent(ctx->cuctx) == CU_SUCCESS) ctx->cu->MemFree(c->flush);
  table_free(&c->t);
  free(c);
  ctx->cache = NULL;
}

/* "SOURCE_HASH|DEVICE|KERNEL|DIM=VALUE|...", then "|NAME:S0,S1,..." for
 * each tensor given with strides (the variants' speeds and the rows
 * they may take differ with them) and "|grid=XxYxZ" for a caller's grid,
 * malloc'ed */
static char *shape_key(const phobos_kernel *k, const phobos_arg *args, const RtBinding *b) {
  const char *dev = k->mod->ctx->name;
  size_t len = strlen(k->mod->mf.source_hash) + strlen(k->mod->image_hash) + strlen(dev) + strlen(k->mf->name) + 4;
  for (int i = 0; i < b->ndims; i++) len += strlen(b->name[i]) + 23;
  for (int i = 0; i < k->mf->nparams; i++)
    if (k->mf->params[i].tensor) len += strlen(k->mf->params[i].name) + 2 + 21 * PHOBOS_MAX_RANK;
  len += 6 + 3 * 21; /* |grid=XxYxZ */
  char *key = malloc(len);
  if (!key) return NULL;
  size_t n = (size_t)snprintf(key, len, "%s.%s|%s|%s", k->mod->mf.source_hash, k->mod->image_hash, dev, k->mf->name);
  for (int i = 0; i < b->ndims && n < len; i++)
    n += (size_t)snprintf(key + n, len - n, "|%s=%lld", b->name[i], (long long)b->value[i]);
  for (int i = 0; i < k->mf->nparams && n < len; i++) {
    const phobos_tensor *t = &args[i].tensor;
    if (!k->mf->params[i].tensor || !rt_strides_given(t)) continue;
    n += (size_t)snprintf(key + n, len - n, "|%s:", k->mf->params[i].name);
    for (int d = 0; d < t->rank && n < len; d++)
      n += (size_t)snprintf(key + n, len - n, "%s%lld", d ? "," : "", (long long)t->strides[d]);
  }
  /* phobos_launch_grid tunes among the variants whose grid is the caller's
   * only (contract.c): a winner of its own, not phobos_launch's */
  if (k->explicit_grid && n < len)
    snprintf(key + n, len - n, "|grid=%lldx%lldx%lld", (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2]);
  return key;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

/* Median milliseconds of `reps` timed launches (at most AT_FINAL_REPS)
 * after one warm-up. */
/* Evicts the L2 before a timed launch: a memset of twice its size
 * (triton's do_bench does the same before each rep, and the benchmarks
 * time so), so that a variant is chosen for inputs that come from DRAM.
 * Timed with what the launch before left in L2, the variant of softmax f32
 * over 4096 x 1000 (16 MB, a third of the H200's L2) that read it fastest
 * from L2 won, and ran 2.6x slower than the best from DRAM: 40 against
 * 15 us (12-05a call 3). Without the entry point, the attribute or the
 * memory the launches are timed as they come (not an error). */
static CUresult flush_l2(phobos_context *ctx, CUstream stream) {
  const CuApi *cu = ctx->cu;
  AtCache *c = ctx->cache;
  if (!c->flush_tried) {
    c->flush_tried = true;
    int l2 = 0;
    if (cu->MemsetD8Async && cu->DeviceGetAttribute(&l2, CU_ATTR_L2_CACHE_SIZE, ctx->dev) == CU_SUCCESS && l2 > 0 &&
        cu->MemAlloc(&c->flush, 2 * (size_t)l2) == CU_SUCCESS)
      c->flush_bytes = 2 * (size_t)l2;
    else
      c->flush = 0;
  }
  return c->flush ? cu->MemsetD8Async(c->flush, 0, c->flush_bytes, stream) : CU_SUCCESS;
}

static phobos_status time_variant(phobos_kernel *k, MfVariant *v, const phobos_arg *args, const RtBinding *b,
                                  const CUdeviceptr *scratch, CUstream stream, int reps, float *ms) {
  phobos_context *ctx = k->mod->ctx;
  const CuApi *cu = ctx->cu;
  CUevent e0 = NULL, e1 = NULL;
  float t[AT_FINAL_REPS];
  phobos_status s = rt_launch_variant(k, v, args, b, scratch, stream);
  char buf[200];
  CUresult r = CU_SUCCESS;
  if (s == PHOBOS_OK && ((r = cu->EventCreate(&e0, 0)) != CU_SUCCESS || (r = cu->EventCreate(&e1, 0)) != CU_SUCCESS))
    s = rt_set_err(ctx, PHOBOS_CUDA_ERROR, "cuEventCreate failed: %s", cu_error(cu, r, buf, sizeof buf));
  for (int i = 0; i < reps && s == PHOBOS_OK; i++) {
    if ((r = flush_l2(ctx, stream)) != CU_SUCCESS || (r = cu->EventRecord(e0, stream)) != CU_SUCCESS) break;
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
    qsort(t, (size_t)reps, sizeof t[0], cmp_float);
    *ms = t[reps / 2];
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
    c->has_path = cache_path(c->path, sizeof c->path);
    char why[1400];
    if (c->has_path && !read_table(c->path, &c->t, why, sizeof why)) /* not fatal: the file is rewritten after this tuning */
      ctx->cache_status = rt_set_err(ctx, PHOBOS_CACHE_IGNORED, "autotune cache ignored and rewritten: %s", why);
  }
  char *key = shape_key(k, args, b);
  if (!key) return rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory for the autotune key of '%s'", k->mf->name);
  const char *cached = get(&c->t, key);
  for (int i = 0; cached && i < nfits; i++)
    if (!strcmp(fits[i]->name, cached)) {
      *chosen = fits[i];
      free(key);
      return PHOBOS_OK;
    }
  /* Timing waits on events and allocates: never inside a graph capture,
   * which it would invalidate. The caller warms up first (spec 17.3). */
  const CuApi *cu = ctx->cu;
  if (cu_capturing(cu, stream)) {
    char dims[400] = "";
    size_t n = 0;
    for (int i = 0; i < b->ndims && n < sizeof dims - 40; i++)
      n += (size_t)snprintf(dims + n, sizeof dims - n, "%s%s = %lld", i ? ", " : "", b->name[i], (long long)b->value[i]);
    free(key);
    return rt_set_err(ctx, PHOBOS_NOT_WARMED_UP, "kernel '%s': no variant is chosen yet for %s, and the stream is being "
                      "captured into a graph, which cannot hold the autotuner's timed launches: launch it once with "
                      "these dims before the capture", k->mf->name, n ? dims : "these shapes");
  }
  /* scratch copies of what the kernel writes, starting from its contents */
  CUdeviceptr scratch[MF_MAX_PARAMS] = {0}; /* by parameter index: manifest.c bounds nparams */
  phobos_status s = PHOBOS_OK;
  for (int i = 0; i < k->mf->nparams && s == PHOBOS_OK; i++) {
    const MfParam *p = &k->mf->params[i];
    if (!p->tensor || !p->written || p->scratch) continue; /* (scratch: the kernel's own, workspace.c) */
    int64_t bytes; /* rt_bind checked it; checked again, as every size is */
    size_t size;
    if (!rt_tensor_bytes(&args[i].tensor, &bytes) || !rt_size_ok(bytes, &size)) {
      s = rt_set_err(ctx, PHOBOS_BAD_SHAPE, "autotune scratch for '%s': its size does not fit in a size_t", p->name);
      break;
    }
    char buf[200];
    CUresult r = cu->MemAlloc(&scratch[i], size);
    if (r == CU_SUCCESS) r = cu->MemcpyDtoDAsync(scratch[i], args[i].tensor.data, size, stream);
    if (r != CU_SUCCESS)
      s = rt_set_err(ctx, PHOBOS_CUDA_ERROR, "autotune scratch for '%s' (%lld bytes): %s", p->name, (long long)bytes,
                     cu_error(cu, r, buf, sizeof buf));
  }
  float best = 0;
  int won = -1;
  float *times = s == PHOBOS_OK ? malloc(sizeof *times * (size_t)nfits) : NULL;
  if (s == PHOBOS_OK && !times) s = rt_set_err(ctx, PHOBOS_OUT_OF_MEMORY, "out of memory for the autotune times");
  for (int i = 0; i < nfits && s == PHOBOS_OK; i++) {
    times[i] = -1; /* did not run */
    if (fits[i]->l2pf_on) continue; /* a prefetching twin runs in the final round only, beside its variant */
    phobos_status ts = time_variant(k, fits[i], args, b, scratch, stream, AT_REPS, &times[i]);
    if (ts == PHOBOS_LAUNCH_LIMIT) { /* this variant cannot run this shape; others may */
      times[i] = -1;
      continue;
    }
    if (ts != PHOBOS_OK) s = ts;
    else if (won < 0 || times[i] < best) best = times[i], won = i;
  }
  /* the finalists: the fastest AT_FINALISTS within AT_CLOSE of the best, in
   * order of their first times; the lowest index wins a tie */
  int fin[2 * AT_FINALISTS], nfin = 0;
  for (int i = 0; i < nfits && s == PHOBOS_OK && won >= 0; i++) {
    if (times[i] < 0 || times[i] > best * AT_CLOSE) continue;
    int at = nfin < AT_FINALISTS ? nfin++ : AT_FINALISTS;
    while (at > 0 && times[fin[at - 1]] > times[i]) {
      if (at < AT_FINALISTS) fin[at] = fin[at - 1];
      at--;
    }
    if (at < AT_FINALISTS) fin[at] = i;
  }
  /* each finalist's prefetching twin (l2_prefetch) runs beside it */
  for (int j = 0, n0 = nfin; j < n0; j++)
    for (int i = 0; i < nfits; i++)
      if (fits[i]->l2pf_on && fits[i]->entry == fits[fin[j]]->entry) { /* a twin shares its variant's strings */
        fin[nfin++] = i;
        break;
      }
  if (nfin > 1) {
    won = -1;
    for (int j = 0; j < nfin && s == PHOBOS_OK; j++) {
      int i = fin[j];
      float ms;
      if ((s = time_variant(k, fits[i], args, b, scratch, stream, AT_FINAL_REPS, &ms)) != PHOBOS_OK) break;
      if (won < 0 || ms < best || (ms == best && i < won)) best = ms, won = i;
    }
  }
  free(times);
  for (int i = 0; i < k->mf->nparams; i++)
    if (scratch[i]) cu->MemFree(scratch[i]);
  if (s == PHOBOS_OK && won < 0) s = PHOBOS_LAUNCH_LIMIT; /* the message of the last refusal stands */
  if (s == PHOBOS_OK) {
    *chosen = fits[won];
    if (put(&c->t, key, fits[won]->name, true)) save(c); /* out of memory: tuned again next time */
  }
  free(key);
  return s;
}
