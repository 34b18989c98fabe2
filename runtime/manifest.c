/* manifest.c: reads the YAML manifest phobosc writes beside each cubin.
 *
 *   phobos_manifest: 1
 *   compiler: phobosc 0.1.0
 *   source: q8_matvec.ph
 *   source_hash: 1f2e3d4c5b6a7988
 *   arch: sm_90a
 *   cubin: q8_matvec.cubin
 *   kernels:
 *     - name: q8_matvec
 *       params:
 *         - {name: A, kind: tensor, dtype: f32, dims: [1, K], written: false, strides: inner-contiguous}
 *         - {name: scale, kind: scalar, dtype: f32}
 *       variants:
 *         - entry: q8_matvec__v0
 *           constants: {TILE_N: 64, BLK: 32}
 *           pinned: {}                 dims fixed by this variant
 *           dims_at_most: {N: 4096}    optional: dims this variant takes only up to a bound
 *           dims_above: {N: 2048}      optional: dims this variant takes only past a bound
 *           apart: [X]                 optional: tensors no written tensor may overlap
 *           general_strides: true      optional: takes every dim's stride, the last included
 *           maps_required: true        optional: runs only where every tensor map is built
 *           co_resident: true          optional: grid_barrier: a cooperative launch, the grid resident at once
 *           persistent: true           optional: @persistent: grid axis x cut to the CTAs the device holds
 *           cluster: 4                 optional: each grid block a cluster of this many CTAs (2 to 8)
 *           staged: {tensor: X, rows: 1, block: 4096}  optional: rows copied into shared memory
 *           aligned_rows: [X, Y]       optional: tensors whose rows must be 16-byte aligned
 *           grid: ["N 64 cdiv", "1"]   postfix over dims and integers; [] without @grid
 *           threads: 256
 *           shared_bytes: 128
 *           dynamic_shared: false
 *
 * Every problem is reported with the file, the line and the field. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "rt.h"

static const char *dtype_names[] = {"f16", "bf16", "f32", "f64", "i8", "u8", "i32", "i64", "bool"};
static const int dtype_bytes[] = {2, 2, 4, 8, 1, 1, 4, 8, 1};

const char *mf_dtype_name(phobos_dtype t) { return (unsigned)t <= PHOBOS_BOOL ? dtype_names[t] : "?"; }
int mf_dtype_bytes(phobos_dtype t) { return (unsigned)t <= PHOBOS_BOOL ? dtype_bytes[t] : 0; }

typedef struct P {
  yaml_document_t doc;
  const char *path;
  char *err;
  size_t errlen;
  bool failed;
} P;

static bool bad(P *p, yaml_node_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool bad(P *p, yaml_node_t *at, const char *fmt, ...) {
  if (p->failed) return false;
  p->failed = true;
  int n = snprintf(p->err, p->errlen, "%s:%zu: ", p->path, at ? at->start_mark.line + 1 : 0);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < p->errlen) vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
  va_end(ap);
  return false;
}

static yaml_node_t *N(P *p, int id) { return yaml_document_get_node(&p->doc, id); }

static const char *str(yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL; }

static yaml_node_t *get(P *p, yaml_node_t *m, const char *key) {
  if (!m || m->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < m->data.mapping.pairs.top; q++) {
    const char *k = str(N(p, q->key));
    if (k && !strcmp(k, key)) return N(p, q->value);
  }
  return NULL;
}

static int count(yaml_node_t *n) {
  if (!n) return -1;
  if (n->type == YAML_SEQUENCE_NODE) return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
  if (n->type == YAML_MAPPING_NODE) return (int)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
  return -1;
}

static char *dup_str(P *p, yaml_node_t *m, const char *key) {
  const char *s = str(get(p, m, key));
  if (!s) {
    bad(p, m, "'%s' is missing or not a string", key);
    return NULL;
  }
  char *d = strdup(s);
  if (!d) bad(p, m, "out of memory");
  return d;
}

static bool parse_int(const char *s, int64_t *out) {
  if (!s || !*s) return false;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (*end || errno) return false;
  *out = v;
  return true;
}

static bool get_int(P *p, yaml_node_t *m, const char *key, int64_t lo, int64_t hi, int64_t *out) {
  yaml_node_t *n = get(p, m, key);
  if (!parse_int(str(n), out)) return bad(p, n ? n : m, "'%s' must be an integer", key);
  if (*out < lo || *out > hi)
    return bad(p, n, "'%s' is %lld; it must be from %lld to %lld", key, (long long)*out, (long long)lo, (long long)hi);
  return true;
}

static bool get_bool(P *p, yaml_node_t *m, const char *key, bool dflt, bool *out) {
  yaml_node_t *n = get(p, m, key);
  const char *s = str(n);
  if (!n) return *out = dflt, true;
  if (s && !strcmp(s, "true")) return *out = true, true;
  if (s && !strcmp(s, "false")) return *out = false, true;
  return bad(p, n, "'%s' must be true or false", key);
}

static bool parse_dtype(P *p, yaml_node_t *m, phobos_dtype *out) {
  yaml_node_t *n = get(p, m, "dtype");
  const char *s = str(n);
  for (int i = 0; s && i <= PHOBOS_BOOL; i++)
    if (!strcmp(s, dtype_names[i])) return *out = (phobos_dtype)i, true;
  return bad(p, n ? n : m, "'dtype' must be one of f16 bf16 f32 f64 i8 u8 i32 i64 bool");
}

static bool is_name(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return false;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) return false;
  return true;
}

static bool parse_param(P *p, yaml_node_t *n, MfParam *out) {
  if (!n || n->type != YAML_MAPPING_NODE) return bad(p, n, "a parameter is a mapping");
  if (!(out->name = dup_str(p, n, "name"))) return false;
  const char *kind = str(get(p, n, "kind"));
  if (!kind || (strcmp(kind, "tensor") && strcmp(kind, "scalar")))
    return bad(p, n, "parameter '%s': 'kind' must be tensor or scalar", out->name);
  out->tensor = !strcmp(kind, "tensor");
  if (!parse_dtype(p, n, &out->dtype)) return false;
  if (!get_bool(p, n, "written", false, &out->written)) return false;
  if (!out->tensor) return true;
  /* absent in manifests from before strides (spec 16.3): those kernels
   * take row-major tensors and no stride parameters */
  yaml_node_t *sn = get(p, n, "strides");
  const char *ss = sn ? str(sn) : "contiguous";
  if (!ss || (strcmp(ss, "contiguous") && strcmp(ss, "inner-contiguous")))
    return bad(p, sn, "parameter '%s': 'strides' must be contiguous or inner-contiguous", out->name);
  out->strided = !strcmp(ss, "inner-contiguous");
  yaml_node_t *scn = get(p, n, "scratch");
  const char *sc = scn ? str(scn) : "none";
  if (!sc || (strcmp(sc, "none") && strcmp(sc, "undefined") && strcmp(sc, "zero")))
    return bad(p, scn, "parameter '%s': 'scratch' must be undefined or zero", out->name);
  out->scratch = !strcmp(sc, "zero") ? MF_SCRATCH_ZERO : !strcmp(sc, "undefined") ? MF_SCRATCH_UNDEFINED : MF_SCRATCH_NONE;
  if (out->scratch && !out->strided)
    return bad(p, scn, "parameter '%s': a scratch tensor takes strides (strides: inner-contiguous)", out->name);
  yaml_node_t *dims = get(p, n, "dims");
  int rank = count(dims);
  if (!dims || dims->type != YAML_SEQUENCE_NODE || rank < 1 || rank > PHOBOS_MAX_RANK)
    return bad(p, dims ? dims : n, "parameter '%s': 'dims' must list 1 to %d extents", out->name, PHOBOS_MAX_RANK);
  out->rank = rank;
  for (int d = 0; d < rank; d++) {
    const char *s = str(N(p, dims->data.sequence.items.start[d]));
    int64_t v;
    out->dim[d] = -1;
    if (parse_int(s, &v) && v > 0) {
      if (v > INT32_MAX) /* the launch passes extents as .s32 (spec 16.3) */
        return bad(p, dims, "parameter '%s': dim %d is %lld; extents must fit in 32 bits", out->name, d, (long long)v);
      out->dim[d] = v;
    } else if (is_name(s) || (out->scratch && s && strchr(s, '.'))) { /* a scratch dim's: NAME.d */
      if (!(out->dimname[d] = strdup(s))) return bad(p, dims, "out of memory");
    } else {
      return bad(p, dims, "parameter '%s': dim %d '%s' is neither a name nor a positive integer", out->name, d,
                 s ? s : "?");
    }
  }
  return true;
}

/* One postfix program (a grid axis, a contract's side) into ops; `what`
 * names it in messages. A contract's side (grid_refs) may also name the
 * launch grid: grid.x, grid.y, grid.z. */
static bool parse_postfix(P *p, yaml_node_t *n, const char *prog, const char *what, MfGridOp *ops, int *nops,
                          bool grid_refs) {
  char *copy = strdup(prog), *save = NULL;
  if (!copy) return bad(p, n, "out of memory");
  int depth = 0;
  for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    if (*nops == MF_MAX_GRID_OPS) {
      bad(p, n, "%s is longer than %d tokens", what, MF_MAX_GRID_OPS);
      free(copy);
      return false;
    }
    MfGridOp *op = &ops[(*nops)++];
    int64_t iv;
    static const char *ops2[] = {"+", "-", "*", "/", "%", "cdiv", "min", "max"};
    bool binary = false;
    for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0]; k++) binary |= !strcmp(t, ops2[k]);
    bool grid_ref = grid_refs && (!strcmp(t, "grid.x") || !strcmp(t, "grid.y") || !strcmp(t, "grid.z"));
    if (binary || !strcmp(t, "neg")) {
      op->kind = MF_OP;
      snprintf(op->op, sizeof op->op, "%s", t);
      depth -= binary ? 1 : 0;
      if (depth < 1) {
        bad(p, n, "%s: '%s' lacks operands in \"%s\"", what, t, prog);
        free(copy);
        return false;
      }
    } else if (parse_int(t, &iv)) {
      op->kind = MF_INT, op->v = iv, depth++;
    } else if (is_name(t) || grid_ref) {
      op->kind = MF_DIM, op->name = strdup(t), depth++;
      if (!op->name) {
        bad(p, n, "out of memory");
        free(copy);
        return false;
      }
    } else {
      bad(p, n, "%s: bad token '%s' in \"%s\"", what, t, prog);
      free(copy);
      return false;
    }
  }
  free(copy);
  if (depth != 1) return bad(p, n, "%s \"%s\" does not leave one value", what, prog);
  return true;
}

static bool parse_grid(P *p, yaml_node_t *n, MfVariant *v) {
  int axes = count(n);
  if (!n || n->type != YAML_SEQUENCE_NODE || axes < 0 || axes > 3)
    return bad(p, n, "variant '%s': 'grid' must list up to 3 postfix programs", v->entry);
  v->ngrid = axes;
  for (int a = 0; a < axes; a++) {
    const char *prog = str(N(p, n->data.sequence.items.start[a]));
    if (!prog) return bad(p, n, "variant '%s': grid axis %d is not a string", v->entry, a);
    if (!(v->grid_text[a] = strdup(prog))) return bad(p, n, "out of memory");
    char what[300];
    snprintf(what, sizeof what, "variant '%s': grid axis %d", v->entry, a);
    if (!parse_postfix(p, n, prog, what, v->ops[a], &v->nops[a], false)) return false;
  }
  return true;
}

/* A kernel's requires: [{text, op, lhs, rhs}, ...] (absent: none). */
static bool parse_contracts(P *p, yaml_node_t *n, MfKernel *k) {
  if (!n) return true;
  int nc = count(n);
  if (n->type != YAML_SEQUENCE_NODE || nc > MF_MAX_REQUIRES)
    return bad(p, n, "kernel '%s': 'requires' must list up to %d contracts", k->name, MF_MAX_REQUIRES);
  if (!(k->requires = calloc((size_t)nc + 1, sizeof(MfContract)))) return bad(p, n, "out of memory");
  for (int c = 0; c < nc; c++) {
    yaml_node_t *m = N(p, n->data.sequence.items.start[c]);
    if (!m || m->type != YAML_MAPPING_NODE) return bad(p, n, "kernel '%s': a contract is a mapping", k->name);
    MfContract *ct = &k->requires[c];
    k->nrequires = c + 1; /* mf_free frees what is counted */
    if (!(ct->text = dup_str(p, m, "text")) || !(ct->lhs = dup_str(p, m, "lhs")) || !(ct->rhs = dup_str(p, m, "rhs")))
      return false;
    const char *op = str(get(p, m, "op"));
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
    bool known = false;
    for (size_t i = 0; op && i < sizeof ops / sizeof ops[0]; i++) known |= !strcmp(op, ops[i]);
    if (!known) return bad(p, m, "kernel '%s': contract \"%s\": 'op' must be ==, !=, <, <=, > or >=", k->name, ct->text);
    snprintf(ct->op, sizeof ct->op, "%s", op);
  }
  return true;
}

/* A variant's scratch: [[extent, ...], ...], one list of programs per
 * scratch tensor of its kernel, one program a dim. */
static bool parse_scratch(P *p, yaml_node_t *n, const MfKernel *k, MfVariant *v) {
  if (!k->nscratch && !n) return true;
  if (!n || n->type != YAML_SEQUENCE_NODE || count(n) != k->nscratch)
    return bad(p, n, "variant '%s': 'scratch' must list the extents of each of the kernel's %d scratch tensors",
               v->entry, k->nscratch);
  if (!(v->scratch = calloc((size_t)k->nscratch, sizeof *v->scratch))) return bad(p, n, "out of memory");
  for (int c = 0; c < k->nscratch; c++) {
    const MfParam *mp = &k->params[k->nparams - k->nscratch + c];
    yaml_node_t *dims = N(p, n->data.sequence.items.start[c]);
    if (!dims || dims->type != YAML_SEQUENCE_NODE || count(dims) != mp->rank)
      return bad(p, n, "variant '%s': scratch tensor '%s' needs %d extents", v->entry, mp->name, mp->rank);
    for (int d = 0; d < mp->rank; d++) {
      const char *prog = str(N(p, dims->data.sequence.items.start[d]));
      char what[300];
      snprintf(what, sizeof what, "variant '%s': dim %d of scratch tensor '%s'", v->entry, d, mp->name);
      if (!prog) return bad(p, n, "%s is not a string", what);
      if (!parse_postfix(p, n, prog, what, v->scratch[c][d].ops, &v->scratch[c][d].nops, false)) return false;
    }
  }
  return true;
}

/* A variant's requires: [[lhs, rhs], ...], one pair per contract of its kernel. */
static bool parse_requires(P *p, yaml_node_t *n, const MfKernel *k, MfVariant *v) {
  if (!k->nrequires && !n) return true;
  if (!n || n->type != YAML_SEQUENCE_NODE || count(n) != k->nrequires)
    return bad(p, n, "variant '%s': 'requires' must list a pair of programs for each of the kernel's %d contracts",
               v->entry, k->nrequires);
  if (!k->nrequires) return true; /* requires: [] (calloc(0) may be NULL: not out of memory) */
  if (!(v->requires = calloc((size_t)k->nrequires, sizeof *v->requires))) return bad(p, n, "out of memory");
  for (int c = 0; c < k->nrequires; c++) {
    yaml_node_t *pair = N(p, n->data.sequence.items.start[c]);
    if (!pair || pair->type != YAML_SEQUENCE_NODE || count(pair) != 2)
      return bad(p, n, "variant '%s': contract %d is not a pair of programs", v->entry, c);
    for (int side = 0; side < 2; side++) {
      const char *prog = str(N(p, pair->data.sequence.items.start[side]));
      char what[300];
      snprintf(what, sizeof what, "variant '%s': the %s side of contract %d", v->entry, side ? "right" : "left", c);
      if (!prog) return bad(p, n, "%s is not a string", what);
      if (!parse_postfix(p, n, prog, what, v->requires[c][side].ops, &v->requires[c][side].nops, true)) return false;
    }
  }
  return true;
}

static bool parse_pairs(P *p, yaml_node_t *n, const char *what, const char *entry, int *count_out, char ***names,
                        int64_t **values) {
  *count_out = 0;
  if (!n) return true;
  if (n->type != YAML_MAPPING_NODE) return bad(p, n, "variant '%s': '%s' must be a mapping", entry, what);
  int c = count(n);
  if (c < 0) c = 0;
  *names = calloc((size_t)c + 1, sizeof(char *));
  *values = calloc((size_t)c + 1, sizeof(int64_t));
  if (!*names || !*values) return bad(p, n, "out of memory");
  for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++) {
    const char *k = str(N(p, q->key)), *val = str(N(p, q->value));
    int64_t iv;
    if (!is_name(k) || !parse_int(val, &iv))
      return bad(p, n, "variant '%s': '%s' maps names to integers", entry, what);
    if (!((*names)[*count_out] = strdup(k))) return bad(p, n, "out of memory");
    (*values)[(*count_out)++] = iv;
  }
  return true;
}

/* tensormaps: [{param: NAME, rank: R, box: [..], dtype: T, swizzle: none|32B|64B|128B, fill: zero}] */
static bool parse_tmaps(P *p, yaml_node_t *n, const MfKernel *k, MfVariant *v) {
  if (!n) return true;
  if (n->type != YAML_SEQUENCE_NODE || count(n) > MF_MAX_TMAPS)
    return bad(p, n, "variant '%s': 'tensormaps' must be a list of at most %d maps", v->entry, MF_MAX_TMAPS);
  for (int i = 0; i < count(n); i++) {
    yaml_node_t *t = N(p, n->data.sequence.items.start[i]);
    if (!t || t->type != YAML_MAPPING_NODE) return bad(p, t ? t : n, "variant '%s': a tensor map is a mapping", v->entry);
    MfTmap *m = &v->tmaps[v->ntmaps];
    const char *name = str(get(p, t, "param"));
    m->param = -1;
    for (int q = 0; name && q < k->nparams; q++)
      if (k->params[q].tensor && !strcmp(k->params[q].name, name)) m->param = q;
    if (m->param < 0) return bad(p, t, "variant '%s': tensor map of '%s', which is no tensor parameter", v->entry, name ? name : "?");
    int64_t r;
    if (!get_int(p, t, "rank", 1, 5, &r) || !parse_dtype(p, t, &m->dtype)) return false;
    if (r != k->params[m->param].rank || m->dtype != k->params[m->param].dtype)
      return bad(p, t, "variant '%s': the tensor map of '%s' does not match the parameter's rank or dtype", v->entry, name);
    m->rank = (int)r;
    m->split_dim = -1;
    yaml_node_t *split = get(p, t, "split");
    if (split) {
      int64_t sd, si;
      if (split->type != YAML_SEQUENCE_NODE || count(split) != 2 ||
          !parse_int(str(N(p, split->data.sequence.items.start[0])), &sd) ||
          !parse_int(str(N(p, split->data.sequence.items.start[1])), &si) || sd < 0 || sd >= r || si < 1 ||
          si > INT32_MAX || r == 5)
        return bad(p, split, "variant '%s': 'split' is [dim, inner extent from 1 to 2^31 - 1] of a tensor of rank 4 or less",
                   v->entry);
      m->split_dim = (int)sd, m->split_inner = si;
    }
    int mr = m->rank + (m->split_dim >= 0);
    yaml_node_t *box = get(p, t, "box");
    if (!box || box->type != YAML_SEQUENCE_NODE || count(box) != mr)
      return bad(p, box ? box : t, "variant '%s': 'box' must list %d extents", v->entry, mr);
    for (int d = 0; d < mr; d++) {
      if (!parse_int(str(N(p, box->data.sequence.items.start[d])), &m->box[d]) || m->box[d] < 1 || m->box[d] > 256)
        return bad(p, box, "variant '%s': box extents are integers from 1 to 256", v->entry);
    }
    const char *sw = str(get(p, t, "swizzle")), *fill = str(get(p, t, "fill"));
    m->swizzle = !sw ? -1 : !strcmp(sw, "none") ? 0 : !strcmp(sw, "32B") ? 32 : !strcmp(sw, "64B") ? 64
               : !strcmp(sw, "128B") ? 128 : -1;
    if (m->swizzle < 0 || !fill || strcmp(fill, "zero"))
      return bad(p, t, "variant '%s': this runtime reads tensor maps with swizzle none, 32B, 64B or 128B and fill zero",
                 v->entry);
    /* a swizzled box's rows are at most the swizzle wide (the driver's rule) */
    if (m->swizzle && m->box[mr - 1] * mf_dtype_bytes(m->dtype) > m->swizzle)
      return bad(p, box, "variant '%s': the inner box of '%s' is %lld bytes, wider than its %dB swizzle", v->entry, name,
                 (long long)(m->box[mr - 1] * mf_dtype_bytes(m->dtype)), m->swizzle);
    v->ntmaps++;
  }
  return true;
}

/* staged: {tensor: NAME, rows: BR, block: S} (a staged-rows copy) */
static bool parse_staged(P *p, yaml_node_t *n, const MfKernel *k, MfVariant *v) {
  if (!n) return true;
  if (n->type != YAML_MAPPING_NODE) return bad(p, n, "variant '%s': 'staged' must be a mapping", v->entry);
  const char *name = str(get(p, n, "tensor"));
  v->stage_param = -1;
  for (int q = 0; name && q < k->nparams; q++)
    if (k->params[q].tensor && !strcmp(k->params[q].name, name)) v->stage_param = q;
  if (v->stage_param < 0)
    return bad(p, n, "variant '%s': staged rows of '%s', which is no tensor parameter", v->entry, name ? name : "?");
  const MfParam *mp = &k->params[v->stage_param];
  if (mp->rank != 2 || (mf_dtype_bytes(mp->dtype) != 2 && mf_dtype_bytes(mp->dtype) != 4))
    return bad(p, n, "variant '%s': staged rows of '%s' need a rank-2 tensor of 2- or 4-byte elements", v->entry, name);
  if (!get_int(p, n, "rows", 1, 1 << 20, &v->stage_rows) || !get_int(p, n, "block", 1, 1 << 30, &v->stage_block))
    return false;
  v->staged = true;
  return true;
}

/* aligned_rows: [NAME, ...] (an aligned-rows copy) or apart: [NAME, ...]
 * (a one-pass copy over several blocks): tensor parameters, each among
 * the first 64, into *mask */
static bool parse_tensor_set(P *p, yaml_node_t *n, const char *key, const MfKernel *k, MfVariant *v, uint64_t *mask) {
  if (!n) return true;
  if (n->type != YAML_SEQUENCE_NODE || count(n) < 1)
    return bad(p, n, "variant '%s': '%s' must list tensor parameters", v->entry, key);
  for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
    yaml_node_t *e = N(p, *it);
    const char *name = str(e);
    int q = -1;
    for (int i = 0; name && i < k->nparams && i < 64; i++)
      if (k->params[i].tensor && !strcmp(k->params[i].name, name)) q = i;
    if (q < 0)
      return bad(p, e, "variant '%s': %s names '%s', which is no tensor among the first 64 parameters",
                 v->entry, key, name ? name : "?");
    *mask |= UINT64_C(1) << q;
  }
  return true;
}

static bool parse_variant(P *p, yaml_node_t *n, MfVariant *v) {
  if (!n || n->type != YAML_MAPPING_NODE) return bad(p, n, "a variant is a mapping");
  if (!(v->entry = dup_str(p, n, "entry"))) return false;
  int64_t t, sb;
  if (!parse_pairs(p, get(p, n, "constants"), "constants", v->entry, &v->nconsts, &v->const_name, &v->const_value) ||
      !parse_pairs(p, get(p, n, "pinned"), "pinned", v->entry, &v->npinned, &v->pinned_name, &v->pinned_value) ||
      !parse_pairs(p, get(p, n, "dims_at_most"), "dims_at_most", v->entry, &v->nat_most, &v->at_most_name,
                   &v->at_most_value) ||
      !parse_pairs(p, get(p, n, "dims_above"), "dims_above", v->entry, &v->nabove, &v->above_name, &v->above_value) ||
      !parse_grid(p, get(p, n, "grid"), v) || !get_int(p, n, "threads", 32, 1024, &t) ||
      !get_int(p, n, "shared_bytes", 0, 1 << 30, &sb) || !get_bool(p, n, "dynamic_shared", false, &v->dynamic_shared) ||
      !get_bool(p, n, "dependent_launch", false, &v->dependent_launch) ||
      !get_bool(p, n, "l2_prefetch", false, &v->l2pf_param) ||
      !get_bool(p, n, "general_strides", false, &v->general_strides) ||
      !get_bool(p, n, "maps_required", false, &v->maps_required) ||
      !get_bool(p, n, "co_resident", false, &v->co_resident) ||
      !get_bool(p, n, "persistent", false, &v->persistent))
    return false;
  int64_t cl = 1;
  if (get(p, n, "cluster") && !get_int(p, n, "cluster", 2, 8, &cl)) return false;
  v->cluster = (int)cl;
  v->name = v->entry;
  v->l2pf_dist = -1;
  v->resident = -1;
  if (t % 32) return bad(p, get(p, n, "threads"), "variant '%s': threads %lld is not a multiple of 32", v->entry, (long long)t);
  v->threads = (int)t;
  v->shared_bytes = sb;
  return true;
}

static bool parse_kernel(P *p, yaml_node_t *n, MfKernel *k, int *variants_before) {
  if (!n || n->type != YAML_MAPPING_NODE) return bad(p, n, "a kernel is a mapping");
  if (!(k->name = dup_str(p, n, "name"))) return false;
  yaml_node_t *params = get(p, n, "params"), *variants = get(p, n, "variants");
  if (!params || params->type != YAML_SEQUENCE_NODE) return bad(p, n, "kernel '%s': 'params' must be a list", k->name);
  if (!variants || variants->type != YAML_SEQUENCE_NODE || count(variants) < 1)
    return bad(p, n, "kernel '%s': 'variants' must list at least one variant", k->name);
  int np = count(params);
  if (np > MF_MAX_PARAMS)
    return bad(p, params, "kernel '%s' has %d parameters; this runtime takes at most %d", k->name, np, MF_MAX_PARAMS);
  k->nparams = np < 0 ? 0 : np;
  if (!(k->params = calloc((size_t)k->nparams + 1, sizeof(MfParam)))) return bad(p, params, "out of memory");
  for (int i = 0; i < k->nparams; i++)
    if (!parse_param(p, N(p, params->data.sequence.items.start[i]), &k->params[i])) return false;
  /* the scratch tensors come last: the caller's arguments are the others, in order */
  for (int i = 0; i < k->nparams; i++) {
    if (k->params[i].scratch && k->nscratch == MF_MAX_SCRATCH)
      return bad(p, params, "kernel '%s' has more than %d scratch tensors", k->name, MF_MAX_SCRATCH);
    if (k->params[i].scratch) k->nscratch++;
    else if (k->nscratch)
      return bad(p, params, "kernel '%s': parameter '%s' follows a scratch tensor; scratch tensors come last", k->name,
                 k->params[i].name);
  }
  if (!parse_contracts(p, get(p, n, "requires"), k)) return false;
  int nv = count(variants);
  if (nv > MF_MAX_VARIANTS - *variants_before)
    return bad(p, variants, "kernel '%s': its %d variants make %d in the manifest; this runtime reads at most %d", k->name,
               nv, *variants_before + nv, MF_MAX_VARIANTS);
  *variants_before += nv;
  if (!(k->variants = calloc((size_t)nv, sizeof(MfVariant)))) return bad(p, variants, "out of memory");
  k->nvariants = nv;
  for (int i = 0; i < k->nvariants; i++)
    k->variants[i].kernel = k->name;
  for (int i = 0; i < k->nvariants; i++)
    if (!parse_variant(p, N(p, variants->data.sequence.items.start[i]), &k->variants[i]) ||
        !parse_tmaps(p, get(p, N(p, variants->data.sequence.items.start[i]), "tensormaps"), k, &k->variants[i]) ||
        !parse_staged(p, get(p, N(p, variants->data.sequence.items.start[i]), "staged"), k, &k->variants[i]) ||
        !parse_tensor_set(p, get(p, N(p, variants->data.sequence.items.start[i]), "aligned_rows"), "aligned_rows", k,
                          &k->variants[i], &k->variants[i].aligned_rows) ||
        !parse_tensor_set(p, get(p, N(p, variants->data.sequence.items.start[i]), "apart"), "apart", k,
                          &k->variants[i], &k->variants[i].apart) ||
        !parse_requires(p, get(p, N(p, variants->data.sequence.items.start[i]), "requires"), k, &k->variants[i]) ||
        !parse_scratch(p, get(p, N(p, variants->data.sequence.items.start[i]), "scratch"), k, &k->variants[i]))
      return false;
  /* the launch packs every parameter into a fixed table (runtime.c,
   * Params): a tensor takes 1 + rank slots and rank - 1 more for its
   * strides, a scalar 1, a tensor map 2, the prefetch distance 1 */
  int slots = 0;
  for (int q = 0; q < k->nparams; q++) {
    const MfParam *mp = &k->params[q];
    slots += mp->tensor ? 1 + mp->rank + (mp->strided ? mp->rank - 1 : 0) : 1;
  }
  int tensors = 0; /* a general-strides entry's last strides, one a tensor */
  for (int q = 0; q < k->nparams; q++) {
    tensors += k->params[q].tensor;
    for (int i = 0; i < k->nvariants; i++)
      if (k->variants[i].general_strides && k->params[q].tensor && !k->params[q].strided)
        return bad(p, n, "kernel '%s': variant '%s' takes general strides, but tensor '%s' takes none (strides: "
                   "inner-contiguous)", k->name, k->variants[i].entry, k->params[q].name);
  }
  for (int i = 0; i < k->nvariants; i++) {
    const MfVariant *v = &k->variants[i];
    int all = slots + 2 * v->ntmaps + v->l2pf_param + (v->general_strides ? tensors : 0);
    if (all > MF_MAX_SLOTS)
      return bad(p, n, "kernel '%s' takes %d parameter slots with its tensor maps; this runtime passes at most %d",
                 k->name, all, MF_MAX_SLOTS);
    k->general_strides |= v->general_strides;
  }
  /* each l2_prefetch variant's twin, after the manifest's variants (so that
   * the first that fits, taken without autotuning, prefetches nothing) */
  int twins = 0;
  for (int i = 0; i < nv; i++) twins += k->variants[i].l2pf_param;
  if (twins) {
    if (twins > MF_MAX_VARIANTS - *variants_before)
      return bad(p, variants, "kernel '%s': its variants and their %d prefetching twins make %d in the manifest; this "
                 "runtime takes at most %d", k->name, twins, *variants_before + twins, MF_MAX_VARIANTS);
    *variants_before += twins;
    MfVariant *grown = realloc(k->variants, sizeof(MfVariant) * (size_t)(nv + twins));
    if (!grown) return bad(p, variants, "out of memory");
    k->variants = grown;
    for (int i = 0, t = nv; i < nv; i++) {
      if (!k->variants[i].l2pf_param) continue;
      MfVariant *w = &k->variants[t];
      *w = k->variants[i];
      w->twin = true, w->l2pf_on = true, w->name = NULL, w->l2pf_dist = -1;
      size_t len = strlen(w->entry) + 4;
      char *name = malloc(len);
      if (!name) return bad(p, variants, "out of memory");
      snprintf(name, len, "%s+l2", w->entry);
      w->name = name;
      k->nvariants = ++t; /* mf_free frees what is counted */
    }
  }
  /* grid programs may name only dims of this kernel */
  for (int i = 0; i < k->nvariants; i++)
    for (int a = 0; a < k->variants[i].ngrid; a++)
      for (int o = 0; o < k->variants[i].nops[a]; o++) {
        MfGridOp *op = &k->variants[i].ops[a][o];
        bool found = op->kind != MF_DIM;
        for (int q = 0; q < k->nparams && !found; q++)
          for (int d = 0; d < k->params[q].rank; d++)
            if (k->params[q].dimname[d] && !strcmp(k->params[q].dimname[d], op->name)) found = true;
        if (!found)
          return bad(p, variants, "kernel '%s': grid of '%s' uses '%s', which is no tensor dim", k->name,
                     k->variants[i].entry, op->name);
      }
  /* and so may contracts, besides the launch grid */
  for (int i = 0; i < k->nvariants; i++)
    for (int c = 0; k->variants[i].requires && c < k->nrequires; c++)
      for (int side = 0; side < 2; side++)
        for (int o = 0; o < k->variants[i].requires[c][side].nops; o++) {
          MfGridOp *op = &k->variants[i].requires[c][side].ops[o];
          bool found = op->kind != MF_DIM || !strncmp(op->name, "grid.", 5);
          for (int q = 0; q < k->nparams && !found; q++)
            for (int d = 0; d < k->params[q].rank; d++)
              if (k->params[q].dimname[d] && !strcmp(k->params[q].dimname[d], op->name)) found = true;
          if (!found)
            return bad(p, variants, "kernel '%s': contract \"%s\" of '%s' uses '%s', which is no tensor dim", k->name,
                       k->requires[c].text, k->variants[i].entry, op->name);
        }
  return true;
}

/* Before the document is built: the aliases and the nesting, counted on
 * the parser's events. The document API resolves an alias to the node it
 * names, so a walk over the document does that node's work again at each
 * alias, and aliases of aliases multiply (an alias bomb: 12 KB made 10^6
 * variants). The events also stop a deep nesting before the loader builds it. */
static bool prescan(const char *path, const char *text, size_t len, char *err, size_t errlen) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return snprintf(err, errlen, "%s: out of memory", path), false;
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  int aliases = 0, depth = 0;
  bool ok = true, done = false;
  while (ok && !done) {
    yaml_event_t ev;
    if (!yaml_parser_parse(&parser, &ev)) {
      snprintf(err, errlen, "%s:%zu:%zu: not valid YAML: %s", path, parser.problem_mark.line + 1,
               parser.problem_mark.column + 1, parser.problem ? parser.problem : "?");
      ok = false;
      break;
    }
    size_t line = ev.start_mark.line + 1;
    switch (ev.type) {
    case YAML_ALIAS_EVENT:
      if (++aliases > MF_MAX_ALIASES)
        snprintf(err, errlen, "%s:%zu: more than %d aliases; this runtime reads at most %d", path, line, MF_MAX_ALIASES,
                 MF_MAX_ALIASES), ok = false;
      break;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
      if (++depth > MF_MAX_DEPTH)
        snprintf(err, errlen, "%s:%zu: nested more than %d deep; this runtime reads at most %d", path, line,
                 MF_MAX_DEPTH, MF_MAX_DEPTH), ok = false;
      break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
      depth--;
      break;
    case YAML_DOCUMENT_END_EVENT: /* yaml_parser_load reads the first document only */
    case YAML_STREAM_END_EVENT:
      done = true;
      break;
    default:
      break;
    }
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&parser);
  return ok;
}

/* The document's size with every alias expanded: at most MF_MAX_NODES
 * nodes (an alias of a node that contains it never ends; this does). */
static bool expanded_size_ok(P *p, yaml_node_t *root) {
  size_t cap = 1024, sp = 0, pushed = 1;
  int *stack = malloc(cap * sizeof *stack);
  if (!stack) return bad(p, root, "out of memory");
  stack[sp++] = (int)(root - p->doc.nodes.start) + 1;
  while (sp) {
    yaml_node_t *n = N(p, stack[--sp]);
    size_t kids = n && n->type == YAML_SEQUENCE_NODE ? (size_t)(n->data.sequence.items.top - n->data.sequence.items.start)
                : n && n->type == YAML_MAPPING_NODE ? 2 * (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start)
                                                    : 0;
    if ((pushed += kids) > MF_MAX_NODES) {
      free(stack);
      return bad(p, root, "the manifest expands to more than %d nodes (following its aliases); this runtime reads at most %d",
                 MF_MAX_NODES, MF_MAX_NODES);
    }
    if (sp + kids > cap) {
      while (sp + kids > cap) cap *= 2;
      int *ns = realloc(stack, cap * sizeof *stack);
      if (!ns) {
        free(stack);
        return bad(p, root, "out of memory");
      }
      stack = ns;
    }
    if (n && n->type == YAML_SEQUENCE_NODE)
      for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) stack[sp++] = *it;
    else if (n && n->type == YAML_MAPPING_NODE)
      for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top; q++)
        stack[sp++] = q->key, stack[sp++] = q->value;
  }
  free(stack);
  return true;
}

bool mf_load(const char *path, Manifest *m, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  RtFile f;
  if (rt_read_file(path, "manifest", MF_MAX_BYTES, PHOBOS_BAD_MANIFEST, &f, err, errlen) != PHOBOS_OK) return false;
  bool ok = mf_parse(path, f.data, f.len, m, err, errlen);
  free(f.data);
  return ok;
}

bool mf_parse(const char *path, const char *text, size_t len, Manifest *m, char *err, size_t errlen) {
  memset(m, 0, sizeof *m);
  if (len > MF_MAX_BYTES) {
    snprintf(err, errlen, "manifest %s is %zu bytes; this runtime reads at most %d", path, len, MF_MAX_BYTES);
    return false;
  }
  if (!prescan(path, text, len, err, errlen)) return false;
  P p = {.path = path, .err = err, .errlen = errlen};
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    snprintf(err, errlen, "%s: out of memory", path);
    return false;
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &p.doc)) {
    snprintf(err, errlen, "%s:%zu:%zu: not valid YAML: %s", path, parser.problem_mark.line + 1,
             parser.problem_mark.column + 1, parser.problem ? parser.problem : "?");
    yaml_parser_delete(&parser);
    return false;
  }
  yaml_parser_delete(&parser);
  yaml_node_t *root = yaml_document_get_root_node(&p.doc);
  int64_t abi = 0;
  bool ok = false;
  if (!root || root->type != YAML_MAPPING_NODE) {
    bad(&p, root, "a manifest is a YAML mapping");
  } else if (!expanded_size_ok(&p, root)) {
  } else if (get_int(&p, root, "phobos_manifest", 1, 1000, &abi)) {
    m->abi = (int)abi;
    if (abi != 1) {
      bad(&p, root, "manifest format %lld is newer than this runtime reads (1)", (long long)abi);
    } else if ((m->compiler = dup_str(&p, root, "compiler")) && (m->source = dup_str(&p, root, "source")) &&
               (m->source_hash = dup_str(&p, root, "source_hash")) && (m->arch = dup_str(&p, root, "arch")) &&
               (m->cubin = dup_str(&p, root, "cubin"))) {
      yaml_node_t *ks = get(&p, root, "kernels");
      if (!ks || ks->type != YAML_SEQUENCE_NODE || count(ks) < 1) {
        bad(&p, ks ? ks : root, "'kernels' must list at least one kernel");
      } else if (count(ks) > MF_MAX_KERNELS) {
        bad(&p, ks, "'kernels' lists %d kernels; this runtime reads at most %d", count(ks), MF_MAX_KERNELS);
      } else if (!(m->kernels = calloc((size_t)count(ks), sizeof(MfKernel)))) {
        bad(&p, ks, "out of memory");
      } else {
        ok = true;
        int variants = 0; /* in the kernels before this one */
        for (int i = 0; i < count(ks) && ok; i++) {
          m->nkernels = i + 1;
          ok = parse_kernel(&p, N(&p, ks->data.sequence.items.start[i]), &m->kernels[i], &variants);
        }
      }
    }
  }
  yaml_document_delete(&p.doc);
  if (!ok) mf_free(m);
  return ok;
}

void mf_free(Manifest *m) {
  for (int i = 0; i < m->nkernels; i++) {
    MfKernel *k = &m->kernels[i];
    for (int j = 0; k->params && j < k->nparams; j++) {
      free(k->params[j].name);
      for (int d = 0; d < PHOBOS_MAX_RANK; d++) free(k->params[j].dimname[d]);
    }
    for (int j = 0; k->variants && j < k->nvariants; j++) {
      MfVariant *v = &k->variants[j];
      if (v->twin) { /* its strings are its variant's */
        free((char *)v->name);
        continue;
      }
      free(v->entry);
      for (int c = 0; c < v->nconsts; c++) free(v->const_name[c]);
      for (int c = 0; c < v->npinned; c++) free(v->pinned_name[c]);
      for (int c = 0; c < v->nat_most; c++) free(v->at_most_name[c]);
      for (int c = 0; c < v->nabove; c++) free(v->above_name[c]);
      free(v->above_name), free(v->above_value);
      free(v->const_name), free(v->const_value), free(v->pinned_name), free(v->pinned_value);
      free(v->at_most_name), free(v->at_most_value);
      for (int a = 0; a < 3; a++) {
        for (int o = 0; o < v->nops[a]; o++) free(v->ops[a][o].name);
        free(v->grid_text[a]);
      }
      for (int c = 0; v->requires && c < k->nrequires; c++)
        for (int side = 0; side < 2; side++)
          for (int o = 0; o < v->requires[c][side].nops; o++) free(v->requires[c][side].ops[o].name);
      free(v->requires);
      for (int c = 0; v->scratch && c < k->nscratch; c++)
        for (int d = 0; d < PHOBOS_MAX_RANK; d++)
          for (int o = 0; o < v->scratch[c][d].nops; o++) free(v->scratch[c][d].ops[o].name);
      free(v->scratch);
    }
    for (int c = 0; c < k->nrequires; c++) free(k->requires[c].text), free(k->requires[c].lhs), free(k->requires[c].rhs);
    free(k->requires);
    free(k->name);
    free(k->params);
    free(k->variants);
  }
  free(m->kernels);
  free(m->compiler), free(m->source), free(m->source_hash), free(m->arch), free(m->cubin);
  memset(m, 0, sizeof *m);
}
