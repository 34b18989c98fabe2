/* harness.c: loads a conformance case (libyaml), compiles its kernel for
 * every variant the case leaves open, draws seeded random inputs, runs the
 * interpreter and compares every output element with a double-precision
 * reference. See harness.h for the case format. */
#include "harness.h"

#include "driver.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static bool fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, len, fmt, ap);
  va_end(ap);
  return false;
}

static char *xstrdup(const char *s) {
  char *p = strdup(s);
  if (!p) abort();
  return p;
}

/* ---------------------------------------------------------------- YAML */

typedef struct Y {
  yaml_document_t doc;
  const char *path;
  char *err;
  size_t errlen;
} Y;

static yaml_node_t *node(Y *y, int id) { return yaml_document_get_node(&y->doc, id); }

static const char *scalar(yaml_node_t *n) { return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL; }

static yaml_node_t *map_get(Y *y, yaml_node_t *m, const char *key) {
  if (!m || m->type != YAML_MAPPING_NODE) return NULL;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    const char *k = scalar(node(y, p->key));
    if (k && strcmp(k, key) == 0) return node(y, p->value);
  }
  return NULL;
}

static bool num(const char *s, double *out) {
  if (!s) return false;
  char *end;
  if (strcmp(s, "true") == 0) return *out = 1, true;
  if (strcmp(s, "false") == 0) return *out = 0, true;
  *out = strtod(s, &end);
  return *end == 0 && end != s;
}

static int seq_len(yaml_node_t *n) {
  return n && n->type == YAML_SEQUENCE_NODE ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
}

static yaml_node_t *seq_at(Y *y, yaml_node_t *n, int i) { return node(y, n->data.sequence.items.start[i]); }

static bool read_consts(Y *y, yaml_node_t *m, Define *out, int *n) {
  *n = 0;
  if (!m) return true;
  if (m->type != YAML_MAPPING_NODE) return fail(y->err, y->errlen, "%s: constants must be a mapping", y->path);
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    if (*n == CASE_MAX_CONSTS) return fail(y->err, y->errlen, "%s: too many constants", y->path);
    out[*n].name = xstrdup(scalar(node(y, p->key)));
    const char *v = scalar(node(y, p->value));
    if (!v) return fail(y->err, y->errlen, "%s: constant %s needs a value", y->path, out[*n].name);
    out[*n].value = xstrdup(v);
    (*n)++;
  }
  return true;
}

/* the environment variable name holds exactly value */
static bool env_is(const char *name, const char *value) {
  const char *v = getenv(name);
  return v && strcmp(v, value) == 0;
}

/* PHOBOS_PRODUCER_WARP=1 plans the cases with phobosc --producer-warp's
 * switch (the GPU run of tests/gpu/run.sh passes it through), and so
 * PHOBOS_SHIFT_WALKS=1 with --shift-walks', PHOBOS_LATE_WAITS=1 with
 * --late-waits', PHOBOS_ROW_BROADCASTS=1 with --row-broadcasts' and
 * PHOBOS_EARLY_PREFETCH=1 with --early-prefetch's */
static unsigned harness_plan_flags(void) {
  return (env_is("PHOBOS_LATE_WAITS", "1") ? PLAN_LATE_WAITS : 0) | (env_is("PHOBOS_PRODUCER_WARP", "1") ? PLAN_PRODUCER_WARP : 0) |
         (env_is("PHOBOS_PREFETCH", "1") ? PLAN_PREFETCH : 0) | (env_is("PHOBOS_TMA", "0") ? PLAN_NO_TENSOR_COPIES : 0) |
         (env_is("PHOBOS_WGMMA", "0") ? PLAN_NO_WGMMA : 0) | (env_is("PHOBOS_SHIFT_WALKS", "1") ? PLAN_SHIFT_WALK : 0) |
         (env_is("PHOBOS_ROW_BROADCASTS", "1") ? PLAN_ROW_BROADCASTS : 0) |
         (env_is("PHOBOS_EARLY_PREFETCH", "1") ? PLAN_EARLY_PF : 0);
}

/* PHOBOS_SPECIALIZE=1: the warp-specialized copies too (phobosc --warp-specialize) */
static bool specialize(void) { return env_is("PHOBOS_SPECIALIZE", "1"); }

static uint64_t hash(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = a; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  for (const char *s = b; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h ? h : 1;
}

bool harness_load(const char *path, Case *c, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  c->path = xstrdup(path);
  const char *slash = strrchr(path, '/');
  c->dir = slash ? strndup(path, (size_t)(slash - path)) : xstrdup(".");
  const char *base = slash ? slash + 1 : path;
  const char *dot = strrchr(base, '.');
  c->name = dot ? strndup(base, (size_t)(dot - base)) : xstrdup(base);
  c->rel = 1e-5;
  c->abs = 1e-6;
  FILE *f = fopen(path, "rb");
  if (!f) return fail(err, errlen, "cannot open %s", path);
  yaml_parser_t parser;
  Y y = {.path = path, .err = err, .errlen = errlen};
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_file(&parser, f);
  bool ok = yaml_parser_load(&parser, &y.doc);
  if (!ok) {
    fail(err, errlen, "%s:%zu:%zu: YAML error: %s", path, parser.problem_mark.line + 1, parser.problem_mark.column + 1,
         parser.problem ? parser.problem : "?");
    yaml_parser_delete(&parser);
    fclose(f);
    return false;
  }
  yaml_parser_delete(&parser);
  fclose(f);
  yaml_node_t *root = yaml_document_get_root_node(&y.doc);
  ok = false;
  if (!root || root->type != YAML_MAPPING_NODE) {
    fail(err, errlen, "%s: a case is a YAML mapping", path);
    goto done;
  }
  const char *s;
  if (!(s = scalar(map_get(&y, root, "source")))) {
    fail(err, errlen, "%s: 'source' is missing", path);
    goto done;
  }
  c->source = xstrdup(s);
  if ((s = scalar(map_get(&y, root, "kernel")))) c->kernel = xstrdup(s);
  if (!(s = scalar(map_get(&y, root, "reference")))) {
    fail(err, errlen, "%s: 'reference' is missing", path);
    goto done;
  }
  c->reference = xstrdup(s);
  if (!read_consts(&y, map_get(&y, root, "constants"), c->consts, &c->nconsts)) goto done;
  yaml_node_t *outs = map_get(&y, root, "outputs");
  for (int i = 0; i < seq_len(outs) && i < 8; i++) c->outputs[c->noutputs++] = xstrdup(scalar(seq_at(&y, outs, i)));
  if (!c->noutputs) {
    fail(err, errlen, "%s: 'outputs' must list at least one tensor", path);
    goto done;
  }
  yaml_node_t *tol = map_get(&y, root, "tolerance");
  if (tol) {
    if (!num(scalar(map_get(&y, tol, "rel")), &c->rel) || !num(scalar(map_get(&y, tol, "abs")), &c->abs)) {
      fail(err, errlen, "%s: tolerance needs rel and abs", path);
      goto done;
    }
  }
  yaml_node_t *grid = map_get(&y, root, "grid");
  if (grid) {
    c->has_grid = true;
    c->grid[0] = c->grid[1] = c->grid[2] = 1;
    for (int i = 0; i < seq_len(grid) && i < 3; i++) {
      double g;
      if (!num(scalar(seq_at(&y, grid, i)), &g) || g < 1) {
        fail(err, errlen, "%s: grid extents are positive integers", path);
        goto done;
      }
      c->grid[i] = (int64_t)g;
    }
  }
  yaml_node_t *params = map_get(&y, root, "params");
  if (!params || params->type != YAML_MAPPING_NODE) {
    fail(err, errlen, "%s: 'params' must map every kernel parameter", path);
    goto done;
  }
  for (yaml_node_pair_t *p = params->data.mapping.pairs.start; p < params->data.mapping.pairs.top; p++) {
    if (c->nparams == CASE_MAX_PARAMS) {
      fail(err, errlen, "%s: too many params", path);
      goto done;
    }
    CaseParam *cp = &c->params[c->nparams++];
    cp->name = xstrdup(scalar(node(&y, p->key)));
    yaml_node_t *v = node(&y, p->value);
    if (v->type == YAML_SCALAR_NODE) {
      if (!num(scalar(v), &cp->scalar)) {
        fail(err, errlen, "%s: param %s: '%s' is not a number", path, cp->name, scalar(v));
        goto done;
      }
      continue;
    }
    cp->tensor = true;
    yaml_node_t *shape = map_get(&y, v, "shape");
    cp->rank = seq_len(shape);
    if (cp->rank < 1 || cp->rank > MAX_TENSOR_RANK) {
      fail(err, errlen, "%s: param %s needs a shape of rank 1 to 5", path, cp->name);
      goto done;
    }
    cp->n = 1;
    for (int d = 0; d < cp->rank; d++) {
      double dv;
      if (!num(scalar(seq_at(&y, shape, d)), &dv) || dv < 1) {
        fail(err, errlen, "%s: param %s: bad extent in shape", path, cp->name);
        goto done;
      }
      cp->dims[d] = (int64_t)dv;
      cp->n *= cp->dims[d];
    }
    const char *fill = scalar(map_get(&y, v, "fill"));
    cp->fill = xstrdup(fill ? fill : "normal");
    cp->scale = 1;
    num(scalar(map_get(&y, v, "scale")), &cp->scale);
    yaml_node_t *range = map_get(&y, v, "range");
    cp->lo = -1, cp->hi = 1;
    if (seq_len(range) == 2) {
      num(scalar(seq_at(&y, range, 0)), &cp->lo);
      num(scalar(seq_at(&y, range, 1)), &cp->hi);
    }
    double mis = 0;
    if (map_get(&y, v, "misalign") && (!num(scalar(map_get(&y, v, "misalign")), &mis) || mis < 0 || mis > 128)) {
      fail(err, errlen, "%s: param %s: misalign must be a byte count from 0 to 128", path, cp->name);
      goto done;
    }
    cp->misalign = (int)mis;
    double seed;
    cp->seed = num(scalar(map_get(&y, v, "seed")), &seed) ? (uint64_t)seed * 2654435761u + 1 : hash(c->name, cp->name);
  }
  yaml_node_t *same = map_get(&y, root, "same_as");
  if (same) {
    c->has_same_as = true;
    if (!read_consts(&y, map_get(&y, same, "constants"), c->same_consts, &c->nsame_consts)) goto done;
    yaml_node_t *rep = map_get(&y, same, "repeat");
    if (rep && rep->type == YAML_MAPPING_NODE)
      for (yaml_node_pair_t *p = rep->data.mapping.pairs.start; p < rep->data.mapping.pairs.top && c->nrepeat < 4; p++) {
        yaml_node_t *v = node(&y, p->value);
        double d, t;
        if (seq_len(v) != 2 || !num(scalar(seq_at(&y, v, 0)), &d) || !num(scalar(seq_at(&y, v, 1)), &t)) {
          fail(err, errlen, "%s: same_as.repeat entries are NAME: [dim, times]", path);
          goto done;
        }
        c->repeat[c->nrepeat].name = xstrdup(scalar(node(&y, p->key)));
        c->repeat[c->nrepeat].dim = (int)d;
        c->repeat[c->nrepeat++].times = (int)t;
      }
  }
  ok = true;
done:
  yaml_document_delete(&y.doc);
  return ok;
}

/* -------------------------------------------------------------- inputs */

static uint64_t next(uint64_t *s) {
  uint64_t x = *s;
  x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
  *s = x;
  return x * 2685821657736338717ull;
}

static double unit(uint64_t *s) { return (double)(next(s) >> 11) / 9007199254740992.0; }

static bool is_float_elem(Scalar e) { return e <= S_F64; }

static bool fill_param(CaseParam *p, char *err, size_t errlen) {
  free(p->data);
  p->data = malloc(sizeof(double) * (size_t)p->n);
  if (!p->data) return fail(err, errlen, "out of memory for %s", p->name);
  uint64_t s = p->seed;
  for (int64_t i = 0; i < p->n; i++) {
    double v;
    if (!strcmp(p->fill, "normal")) {
      double u1 = unit(&s), u2 = unit(&s);
      v = sqrt(-2 * log(u1 + 1e-300)) * cos(2 * M_PI * u2) * p->scale;
    } else if (!strcmp(p->fill, "uniform")) {
      v = p->lo + (p->hi - p->lo) * unit(&s);
    } else if (!strcmp(p->fill, "int")) {
      v = floor(p->lo + (p->hi - p->lo + 1) * unit(&s));
      if (v > p->hi) v = p->hi;
    } else if (!strcmp(p->fill, "iota")) {
      v = (double)i;
    } else if (!strcmp(p->fill, "poison")) {
      v = is_float_elem(p->elem) ? NAN : -77;
    } else if (!strcmp(p->fill, "bits") && p->elem == S_F32) {
      /* any f32 bit pattern: every exponent, zeros, subnormals, infinities, NaN */
      uint32_t w = (uint32_t)(next(&s) >> 32);
      float f;
      memcpy(&f, &w, sizeof f);
      v = f;
    } else {
      return fail(err, errlen, "param %s: unknown fill '%s' (normal, uniform, int, iota, poison; bits for f32)", p->name,
                  p->fill);
    }
    p->data[i] = isnan(v) ? v : interp_round(p->elem, v);
  }
  return true;
}

/* ---------------------------------------------------------- compilation */

int harness_pad;
int harness_spread = 1;
int harness_runs;

/* PHOBOS_GPU_SPREAD: some tensor's last dim is not contiguous, so only a
 * general-strides copy takes the launch (runtime.c, rt_variant_fits) */
static bool spread_needed(Case *c) {
  for (int i = 0; harness_spread > 1 && i < c->nparams; i++)
    if (c->params[i].tensor && c->params[i].rank > 0 && c->params[i].dims[c->params[i].rank - 1] > 1) return true;
  return false;
}

/* Whether the runtime would launch f for the case's shapes: a one-pass copy
 * only where its dim is at most its bound, and above its lower bound for a
 * copy over several blocks (runtime.c's rt_variant_fits). */
static bool case_requires_hold(Case *c, const TirFunc *f);

static bool case_fits(Case *c, const TirFunc *f, const Plan *p) {
  if (p->general_strides != spread_needed(c)) return false;
  if (!case_requires_hold(c, f)) return false;
  /* rt_rows_misfit: an aligned-rows copy's tensors 16-byte aligned, their
   * rows too (harness_pad elements past each row's end) */
  for (int i = 0; p->aligned_copy && i < f->nparams && i < 64; i++) {
    CaseParam *cp = p->aligned_params >> i & 1 ? harness_param(c, f->params[i].name) : NULL;
    if (cp && (cp->misalign % 16 ||
               (cp->rank > 1 && (cp->dims[cp->rank - 1] + harness_pad) * sema_scalar_bytes(cp->elem) % 16)))
      return false;
  }
  /* rt_maps_misfit: a warp-specialized copy's maps all built (a 16-byte
   * aligned base and row pitch, split dims whole) */
  for (int t = 0; p->specialized && t < p->ntmaps; t++) {
    const PlanTmap *tm = &p->tmaps[t];
    CaseParam *cp = harness_param(c, f->params[tm->param].name);
    if (!cp || cp->misalign % 16 ||
        (cp->rank > 1 && (cp->dims[cp->rank - 1] + harness_pad) * sema_scalar_bytes(cp->elem) % 16) ||
        (tm->split_dim >= 0 && cp->dims[tm->split_dim] % tm->split_inner))
      return false;
  }
  /* a cluster-rows copy: its dims_above, rows of more than one block */
  for (int i = 0; p->cluster && i < f->nparams; i++) {
    CaseParam *cp = f->params[i].tensor ? harness_param(c, f->params[i].name) : NULL;
    for (int d = 0; cp && d < f->params[i].rank && d < cp->rank; d++)
      if (f->params[i].dimname[d] && !strcmp(f->params[i].dimname[d], p->cluster_dim) && cp->dims[d] <= p->cluster_step)
        return false;
  }
  if (f->staged) { /* rt_stage_fits: the rows within an H200's 227 KB, the tensor 16-byte aligned, its rows one run */
    CaseParam *cp = harness_param(c, f->params[f->stage_param].name);
    int64_t stat = f->info->dynshared ? 0 : plan_launch_shared(p);
    return cp->misalign % 16 == 0 && (harness_pad == 0 || cp->rank < 2) &&
           stat + staged_area_offset(p) + staged_extra_bytes(f, cp->dims[1]) <= 232448;
  }
  if (!f->once_dim) return true;
  for (int i = 0; i < f->nparams; i++) {
    CaseParam *cp = f->params[i].tensor ? harness_param(c, f->params[i].name) : NULL;
    for (int d = 0; cp && d < f->params[i].rank && d < cp->rank; d++)
      if (f->params[i].dimname[d] && !strcmp(f->params[i].dimname[d], f->once_dim) &&
          (cp->dims[d] > f->once_max || cp->dims[d] <= f->once_min))
        return false;
  }
  return true;
}

/* A case runs at most HARNESS_MAX_VARIANTS variants, each with at most
 * 1 + DRIVER_MAX_COPIES plans (itself, its one-pass and staged-rows
 * copies) and, for each, an aligned-rows copy, an odd-rows plan and a
 * warp-specialized copy, and two cluster-rows copies of each of the first
 * three; and one general-strides copy. */
enum { HARNESS_MAX_VARIANTS = 256, HARNESS_MAX_PLANS = HARNESS_MAX_VARIANTS * 10 * (1 + DRIVER_MAX_COPIES) + 1 };

typedef struct Compiled {
  Arena *arena;
  Plan *plans[HARNESS_MAX_PLANS];
  int nplans;
  Source src;
} Compiled;

static bool compile_case(Case *c, Define *consts, int nconsts, Compiled *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->arena = arena_new();
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", c->dir, c->source);
  Source src;
  const char *why;
  if (!source_load(out->arena, path, &src, &why)) return fail(err, errlen, "cannot read %s: %s", path, why);
  out->src = src;
  char *dbuf = NULL;
  size_t dlen = 0;
  FILE *dout = open_memstream(&dbuf, &dlen);
  Diags d;
  diag_init(&d, &src, dout, true);
  Node *program = parse_program(out->arena, &d, &src);
  SemaOptions so = {.defines = consts, .ndefines = nconsts, .max_variants = 4096};
  Node *kernel = NULL;
  if (program && sema_check(out->arena, &d, program, &so)) {
    for (int i = 0; i < program->list.len; i++) {
      Node *k = program->list.items[i];
      if (!c->kernel || strcmp(k->name, c->kernel) == 0) {
        if (kernel && !c->kernel) {
          fclose(dout);
          free(dbuf);
          return fail(err, errlen, "%s holds several kernels; name one with 'kernel:'", path);
        }
        kernel = k;
      }
    }
    if (!kernel) d.errors++, fprintf(dout, "no kernel '%s' in %s\n", c->kernel ? c->kernel : "?", path);
  }
  if (kernel && !d.errors) {
    int n = sema_variant_count(out->arena, &d, kernel, &so);
    if (n > HARNESS_MAX_VARIANTS) {
      fclose(dout);
      free(dbuf);
      return fail(err, errlen, "%s: %d variants; pin more constants (at most %d run)", c->name, n, HARNESS_MAX_VARIANTS);
    }
    int left_out = 0;
    for (int v = 0; v < n && !d.errors; v++) {
      KernelInfo *info = arena_alloc(out->arena, sizeof *info);
      if (!sema_point_feasible(out->arena, &d, kernel, &so, v)) { /* left out, as phobosc leaves it out */
        left_out++;
        continue;
      }
      if (!sema_check_variant(out->arena, &d, kernel, &so, v, info)) break;
      TirFunc *f = lower_kernel(out->arena, &d, info);
      /* a point whose plan does not fit is left out, as phobosc leaves it
       * out (spec 12): it has no entry to run; none fitting is an error */
      Diags quiet = d;
      quiet.errors = quiet.warnings = 0, quiet.silent = true, quiet.max_errors = 0, quiet.stopped = false;
      Plan *p = f ? plan_kernel(out->arena, &quiet, f, "sm_90a", harness_plan_flags()) : NULL;
      if (!p || quiet.errors) {
        left_out++;
        continue;
      }
      int first = out->nplans;
      out->plans[out->nplans++] = p;
      /* the copies phobosc compiles beside it, the staged-rows one (phobosc
       * --staged-rows) always, so that the GPU suite runs it; then each
       * one's aligned-rows copy */
      out->nplans += driver_variant_copies(out->arena, &d, info, "sm_90a", harness_plan_flags(), true, true,
                                           out->plans + out->nplans);
      for (int c = first, end = out->nplans; c < end; c++) {
        Plan *al = driver_aligned_copy(out->arena, &d, out->plans[c], "sm_90a");
        if (!al) continue;
        out->plans[out->nplans++] = al;
        Plan *odd = driver_odd_rows_plan(out->arena, &d, info, out->plans[c], al->aligned_params, "sm_90a",
                                         harness_plan_flags());
        if (odd) odd->odd_beside = true, out->plans[out->nplans++] = odd; /* beside the vector plan */
      }
      /* the cluster-rows copies phobosc makes of each (spec 15.22) */
      for (int c = first, end = out->nplans; c < end; c++)
        out->nplans += driver_cluster_copies(out->arena, out->plans[c], "sm_90a", out->plans + out->nplans);
      /* and with PHOBOS_SPECIALIZE=1 the warp-specialized copies (phobosc --warp-specialize) */
      for (int c = first, end = out->nplans; c < end && specialize(); c++) {
        Plan *ws = driver_specialized_copy(out->arena, &d, out->plans[c], "sm_90a", harness_plan_flags());
        if (ws) out->plans[out->nplans++] = ws;
      }
    }
    /* the first variant's general-strides copy, as phobosc makes it */
    Plan *gs = !d.errors && out->nplans ? driver_general_copy(out->arena, &d, out->plans[0], "sm_90a",
                                                              harness_plan_flags())
                                        : NULL;
    if (gs) out->plans[out->nplans++] = gs;
    if (!d.errors && !out->nplans && left_out)
      d.errors++, fprintf(dout, "no point of '%s' plans (%d left out)\n", kernel->name, left_out);
  }
  fclose(dout);
  bool ok = !d.errors && out->nplans > 0;
  if (!ok) fail(err, errlen, "compiling %s failed:\n%s", path, dbuf ? dbuf : "");
  free(dbuf);
  return ok;
}

/* ------------------------------------------------------------- running */

CaseParam *harness_param(Case *c, const char *name) {
  for (int i = 0; i < c->nparams; i++)
    if (strcmp(c->params[i].name, name) == 0) return &c->params[i];
  return NULL;
}

bool harness_is_output(const Case *c, const char *name) {
  for (int i = 0; i < c->noutputs; i++)
    if (strcmp(c->outputs[i], name) == 0) return true;
  return false;
}

/* An output with a fill other than poison is read and written (C in
 * C = alpha A B + beta C): it starts from its inputs, not from poison. */
bool harness_is_inout(const Case *c, const CaseParam *p) { return harness_is_output(c, p->name) && strcmp(p->fill, "poison"); }

/* The value of dim `name` in the case: the extent of the first kernel
 * tensor that names it; false when none does. */
static bool case_dim(Case *c, const TirFunc *f, const char *name, int64_t *v) {
  for (int i = 0; i < f->nparams; i++) {
    CaseParam *cp = f->params[i].scratch ? NULL : harness_param(c, f->params[i].name);
    for (int d = 0; cp && d < f->params[i].rank && d < cp->rank; d++)
      if (f->params[i].dimname[d] && !strcmp(f->params[i].dimname[d], name)) return *v = cp->dims[d], true;
  }
  return false;
}

/* The value of a postfix program of the manifest's (sema: dims,
 * integers, + - * / %, neg, cdiv, min, max) over the case's dims; false
 * where it cannot be computed (a name no tensor gives, a division by 0) */
static bool eval_prog(Case *c, const TirFunc *f, const char *text, int64_t *out) {
  char prog[512];
  if (snprintf(prog, sizeof prog, "%s", text) >= (int)sizeof prog) return false;
  int64_t st[64];
  int sp = 0;
  char *save = NULL;
  for (char *t = strtok_r(prog, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
    char *end;
    long long iv = strtoll(t, &end, 10);
    bool binary = (strchr("+-*/%", *t) && !t[1]) || !strcmp(t, "cdiv") || !strcmp(t, "min") || !strcmp(t, "max");
    if ((binary && sp < 2) || (!strcmp(t, "neg") && sp < 1) || sp == 64) return false; /* (sema wrote it: never) */
    if (*t && !*end) {
      st[sp++] = iv;
    } else if (!strcmp(t, "neg")) {
      st[sp - 1] = -st[sp - 1];
    } else if (binary) {
      int64_t y = st[--sp], x = st[sp - 1], r;
      if ((*t == '/' || *t == '%' || *t == 'c') && y == 0) return false;
      r = *t == '+' ? x + y : *t == '-' && !t[1] ? x - y : *t == '*' ? x * y : *t == '/' ? x / y : *t == '%' ? x % y
        : *t == 'c' ? (x + y - 1) / y : !strcmp(t, "min") ? (x < y ? x : y) : (x > y ? x : y);
      st[sp - 1] = r;
    } else if (!case_dim(c, f, t, &st[sp++])) {
      return false;
    }
  }
  if (sp != 1) return false;
  *out = st[0];
  return true;
}

bool harness_scratch_dims(Case *c, const TirFunc *f, int param, int64_t *dims) {
  int sc = 0;
  for (int i = 0; i < param; i++) sc += f->params[i].scratch;
  for (int d = 0; d < f->params[param].rank; d++)
    if (!eval_prog(c, f, f->info->scratch_prog[sc][d], &dims[d]) || dims[d] < 1) return false;
  return true;
}

/* Whether the variant's @requires contracts hold for the case's dims, as
 * libphobos checks them before a launch (spec 11.2): a variant whose
 * contract fails is not launched there, so it is not run here. A side
 * that cannot be computed here (a grid term) counts as holding. */
static bool case_requires_hold(Case *c, const TirFunc *f) {
  const KernelInfo *info = f->info;
  for (int i = 0; info && i < info->nrequires; i++) {
    int64_t l, r;
    if (!eval_prog(c, f, info->requires_prog[i][0], &l) || !eval_prog(c, f, info->requires_prog[i][1], &r)) continue;
    const char *op = info->requires_op[i];
    bool holds = !strcmp(op, "==") ? l == r : !strcmp(op, "!=") ? l != r : !strcmp(op, "<") ? l < r
               : !strcmp(op, "<=") ? l <= r : !strcmp(op, ">") ? l > r : l >= r;
    if (!holds) return false;
  }
  return true;
}

/* The interpreter runner: one plan on copies of the case's tensors;
 * outputs land in outs[] (by parameter index), poisoned first. */
static bool interp_plan(void *self, Case *c, const Plan *p, int index, double **outs, char *err, size_t errlen) {
  (void)self, (void)index;
  const TirFunc *f = p->f;
  InterpArg args[CASE_MAX_PARAMS];
  for (int i = 0; i < f->nparams; i++) {
    InterpArg *a = &args[i];
    memset(a, 0, sizeof *a);
    if (f->params[i].scratch) { /* the runtime's: zeroed, or NaN (undefined) */
      a->tensor = true;
      a->t.rank = f->params[i].rank;
      int64_t n = 1;
      if (!harness_scratch_dims(c, f, i, a->t.dims)) {
        for (int k = 0; k < i; k++) free(args[k].t.data);
        return fail(err, errlen, "scratch tensor '%s': its dims cannot be computed", f->params[i].name);
      }
      for (int d = 0; d < a->t.rank; d++) n *= a->t.dims[d];
      a->t.data = n > 0 && n < ((int64_t)1 << 31) ? malloc(sizeof(double) * (size_t)n) : NULL;
      if (!a->t.data) {
        for (int k = 0; k < i; k++) free(args[k].t.data);
        return fail(err, errlen, "scratch tensor '%s': %lld elements cannot be allocated", f->params[i].name, (long long)n);
      }
      for (int64_t k = 0; k < n; k++) a->t.data[k] = f->params[i].zero ? 0 : is_float_elem(f->params[i].elem) ? NAN : -77;
      continue;
    }
    CaseParam *cp = harness_param(c, f->params[i].name);
    if (f->params[i].tensor) {
      a->tensor = true;
      a->t.rank = cp->rank;
      memcpy(a->t.dims, cp->dims, sizeof cp->dims);
      a->t.data = malloc(sizeof(double) * (size_t)cp->n);
      memcpy(a->t.data, cp->data, sizeof(double) * (size_t)cp->n);
      if (harness_is_output(c, cp->name) && !harness_is_inout(c, cp))
        for (int64_t k = 0; k < cp->n; k++) a->t.data[k] = is_float_elem(cp->elem) ? NAN : -77; /* poison */
    } else {
      a->scalar = cp->scalar;
    }
  }
  char ierr[512];
  bool ok = interp_run(p, args, f->nparams, c->has_grid ? c->grid : NULL, ierr, sizeof ierr);
  if (!ok) fail(err, errlen, "interpreter: %s", ierr);
  for (int i = 0; i < f->nparams; i++) {
    if (!args[i].tensor) continue;
    if (ok && outs && !f->params[i].scratch && harness_is_output(c, f->params[i].name)) outs[i] = args[i].t.data;
    else free(args[i].t.data);
  }
  return ok;
}

static const char *coord_str(char *buf, size_t n, const CaseParam *p, int64_t off) {
  int64_t c[MAX_TENSOR_RANK];
  for (int d = p->rank - 1; d >= 0; d--) c[d] = off % p->dims[d], off /= p->dims[d];
  int k = snprintf(buf, n, "[");
  for (int d = 0; d < p->rank; d++) k += snprintf(buf + k, n - (size_t)k, "%s%lld", d ? ", " : "", (long long)c[d]);
  snprintf(buf + k, n - (size_t)k, "]");
  return buf;
}

/* Compares every element; reports the count and the first few misses. */
static bool compare(Case *c, const CaseParam *p, const double *got, const double *want, const char *what, char *err,
                    size_t errlen) {
  int64_t bad = 0;
  char first[600] = "";
  int k = 0;
  double worst = 0;
  for (int64_t i = 0; i < p->n; i++) {
    double g = got[i], w = want[i];
    bool okv = isnan(w) ? isnan(g) : (!isnan(g) && (g == w || fabs(g - w) <= c->abs + c->rel * fabs(w)));
    if (isinf(w) && g == w) okv = true;
    if (okv) continue;
    if (fabs(g - w) > worst || isnan(g)) worst = isnan(g) ? INFINITY : fabs(g - w);
    if (bad++ < 4 && k < (int)sizeof first - 120) {
      char cs[64];
      k += snprintf(first + k, sizeof first - (size_t)k, "\n  %s%s: got %.9g, want %.9g", p->name,
                    coord_str(cs, sizeof cs, p, i), g, w);
    }
  }
  if (!bad) return true;
  return fail(err, errlen, "%s: %s: %lld of %lld elements of %s differ (worst |diff| %.3g, tolerance rel %g abs %g):%s",
              c->name, what, (long long)bad, (long long)p->n, p->name, worst, c->rel, c->abs, first);
}

static RefFn find_ref(const char *name) {
  for (const RefEntry *e = harness_refs; e->name; e++)
    if (!strcmp(e->name, name)) return e->fn;
  for (const RefEntry *e = harness_refs_more; e->name; e++)
    if (!strcmp(e->name, name)) return e->fn;
  for (const RefEntry *e = harness_refs_llm; e->name; e++)
    if (!strcmp(e->name, name)) return e->fn;
  return NULL;
}

/* repeat_interleave along one dim: each slice along `dim` appears `times`
 * times in a row (GQA's heads expanded) */
static void repeat_param(CaseParam *p, int dim, int times) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; d++) outer *= p->dims[d];
  for (int d = dim + 1; d < p->rank; d++) inner *= p->dims[d];
  int64_t len = p->dims[dim];
  double *nd = malloc(sizeof(double) * (size_t)(p->n * times));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < len; i++)
      for (int t = 0; t < times; t++)
        memcpy(nd + ((o * len + i) * times + t) * inner, p->data + (o * len + i) * inner, sizeof(double) * (size_t)inner);
  free(p->data);
  p->data = nd;
  p->dims[dim] *= times;
  p->n *= times;
}

bool harness_run_interp(Case *c, char *err, size_t errlen) {
  Runner r = {.run = interp_plan};
  return harness_run(c, &r, err, errlen);
}

bool harness_run(Case *c, const Runner *runner, char *err, size_t errlen) {
  Compiled comp;
  if (!compile_case(c, c->consts, c->nconsts, &comp, err, errlen)) {
    arena_free(comp.arena);
    return false;
  }
  const TirFunc *f = comp.plans[0]->f;
  bool ok = true;
  /* every kernel parameter has a case entry, and element types come from the kernel */
  for (int i = 0; i < f->nparams && ok; i++) {
    CaseParam *cp = harness_param(c, f->params[i].name);
    if (f->params[i].scratch) {
      if (cp) ok = fail(err, errlen, "%s: '%s' is a scratch tensor of the kernel: the runtime passes it, the case does not",
                        c->name, cp->name);
      continue;
    }
    if (!cp) ok = fail(err, errlen, "%s: params has no entry for '%s'", c->name, f->params[i].name);
    else if (cp->tensor != f->params[i].tensor)
      ok = fail(err, errlen, "%s: '%s' is a %s in the kernel", c->name, cp->name, f->params[i].tensor ? "tensor" : "scalar");
    else {
      cp->elem = f->params[i].elem;
      if (cp->tensor && !fill_param(cp, err, errlen)) ok = false;
    }
  }
  for (int i = 0; i < c->noutputs && ok; i++)
    if (!harness_param(c, c->outputs[i]) || !harness_param(c, c->outputs[i])->tensor)
      ok = fail(err, errlen, "%s: output '%s' is not a tensor parameter", c->name, c->outputs[i]);
  RefFn ref = ok ? find_ref(c->reference) : NULL;
  if (ok && !ref) ok = fail(err, errlen, "%s: no reference named '%s'", c->name, c->reference);
  /* the reference writes its outputs into NaN-filled copies */
  double *want[CASE_MAX_PARAMS] = {0}, *saved[CASE_MAX_PARAMS] = {0};
  if (ok) {
    for (int i = 0; i < c->nparams; i++) {
      CaseParam *cp = &c->params[i];
      if (!cp->tensor || !harness_is_output(c, cp->name)) continue;
      saved[i] = cp->data;
      cp->data = malloc(sizeof(double) * (size_t)cp->n);
      for (int64_t k = 0; k < cp->n; k++) cp->data[k] = harness_is_inout(c, cp) ? saved[i][k] : NAN;
    }
    RefCtx r = {.c = c, .err = err, .errlen = errlen};
    ok = ref(&r);
    for (int i = 0; i < c->nparams; i++)
      if (saved[i]) {
        want[i] = c->params[i].data;
        c->params[i].data = saved[i];
      }
  }
  double *first_outs[CASE_MAX_PARAMS] = {0};
  if (ok && runner->begin) ok = runner->begin(runner->self, c, comp.plans, comp.nplans, &comp.src, err, errlen);
  int ran = 0;
  for (int v = 0; v < comp.nplans && ok; v++) {
    double *outs[CASE_MAX_PARAMS] = {0};
    const Plan *p = comp.plans[v];
    if (!case_fits(c, p->f, p)) continue;
    harness_runs++, ran++;
    ok = runner->run(runner->self, c, p, v, outs, err, errlen);
    char what[256];
    snprintf(what, sizeof what, "variant [%s]", plan_func_str(comp.arena, p));
    for (int i = 0; i < p->f->nparams && ok; i++) {
      if (!outs[i] || p->f->params[i].scratch) continue;
      CaseParam *cp = harness_param(c, p->f->params[i].name);
      int ci = (int)(cp - c->params);
      ok = compare(c, cp, outs[i], want[ci], what, err, errlen);
    }
    for (int i = 0; i < CASE_MAX_PARAMS; i++) {
      if (ran == 1) first_outs[i] = outs[i];
      else free(outs[i]);
    }
  }
  /* (under PHOBOS_GPU_SPREAD only general-strides copies run: a case may have none) */
  if (ok && !ran && !spread_needed(c)) ok = fail(err, errlen, "%s: no variant fits the case's shapes and contracts", c->name);
  if (ok && c->has_same_as) {
    /* the same inputs, transformed, through another configuration */
    Define merged[2 * CASE_MAX_CONSTS];
    int nm = 0;
    for (int i = 0; i < c->nconsts; i++) {
      bool over = false;
      for (int j = 0; j < c->nsame_consts; j++) over |= !strcmp(c->consts[i].name, c->same_consts[j].name);
      if (!over) merged[nm++] = c->consts[i];
    }
    for (int j = 0; j < c->nsame_consts; j++) merged[nm++] = c->same_consts[j];
    Compiled comp2;
    ok = compile_case(c, merged, nm, &comp2, err, errlen);
    Case c2 = *c;
    for (int i = 0; ok && i < c->nrepeat; i++) {
      CaseParam *cp = harness_param(&c2, c->repeat[i].name);
      if (!cp) {
        ok = fail(err, errlen, "%s: same_as repeats unknown '%s'", c->name, c->repeat[i].name);
        break;
      }
      double *copy = malloc(sizeof(double) * (size_t)cp->n);
      memcpy(copy, cp->data, sizeof(double) * (size_t)cp->n);
      cp->data = copy;
      repeat_param(cp, c->repeat[i].dim, c->repeat[i].times);
    }
    if (ok && runner->end) runner->end(runner->self);
    if (ok && runner->begin) ok = runner->begin(runner->self, &c2, comp2.plans, comp2.nplans, &comp2.src, err, errlen);
    for (int v = 0; ok && v < comp2.nplans; v++) {
      double *outs[CASE_MAX_PARAMS] = {0};
      if (!case_fits(&c2, comp2.plans[v]->f, comp2.plans[v])) continue;
      ok = runner->run(runner->self, &c2, comp2.plans[v], v, outs, err, errlen);
      for (int i = 0; i < comp2.plans[v]->f->nparams; i++) {
        if (!outs[i]) continue;
        CaseParam *cp = harness_param(c, comp2.plans[v]->f->params[i].name);
        int ci = (int)(cp - c->params);
        if (ok && first_outs[ci])
          ok = compare(c, cp, outs[i], first_outs[ci], "the same_as rerun (vs. the first variant)", err, errlen);
        free(outs[i]);
      }
    }
    for (int i = 0; i < c->nrepeat; i++) {
      CaseParam *cp = harness_param(&c2, c->repeat[i].name);
      if (cp && cp->data != harness_param(c, c->repeat[i].name)->data) free(cp->data);
    }
    arena_free(comp2.arena);
  }
  for (int i = 0; i < CASE_MAX_PARAMS; i++) {
    free(want[i]);
    free(first_outs[i]);
  }
  if (runner->end) runner->end(runner->self);
  arena_free(comp.arena);
  return ok;
}

/* ------------------------------------------------------ reference helpers */

CaseParam *ref_param(RefCtx *r, const char *name) {
  CaseParam *p = harness_param(r->c, name);
  if (!p) {
    fprintf(stderr, "reference %s: no param '%s'\n", r->c->reference, name);
    abort(); /* a harness bug, not a kernel bug */
  }
  return p;
}

double ref_scalar(RefCtx *r, const char *name) { return ref_param(r, name)->scalar; }

int64_t ref_const(RefCtx *r, const char *name) {
  for (int i = 0; i < r->c->nconsts; i++)
    if (!strcmp(r->c->consts[i].name, name)) return strtoll(r->c->consts[i].value, NULL, 10);
  fprintf(stderr, "reference %s: no constant '%s'\n", r->c->reference, name);
  abort();
}

int64_t ref_off(const CaseParam *p, const int64_t *idx) {
  int64_t off = 0;
  for (int d = 0; d < p->rank; d++) off = off * p->dims[d] + idx[d];
  return off;
}

double *ref_at(CaseParam *p, const int64_t *idx) { return &p->data[ref_off(p, idx)]; }

void harness_free(Case *c) {
  free((void *)c->path);
  free((void *)c->dir);
  free((void *)c->name);
  free((void *)c->source);
  free((void *)c->kernel);
  free((void *)c->reference);
  for (int i = 0; i < c->nconsts; i++) free((void *)c->consts[i].name), free((void *)c->consts[i].value);
  for (int i = 0; i < c->nsame_consts; i++) free((void *)c->same_consts[i].name), free((void *)c->same_consts[i].value);
  for (int i = 0; i < c->nrepeat; i++) free((void *)c->repeat[i].name);
  for (int i = 0; i < c->noutputs; i++) free((void *)c->outputs[i]);
  for (int i = 0; i < c->nparams; i++) {
    free((void *)c->params[i].name);
    free((void *)c->params[i].fill);
    free(c->params[i].data);
  }
  memset(c, 0, sizeof *c);
}
