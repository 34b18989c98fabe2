/* manifest.c: the YAML manifest written beside a cubin (libyaml emitter).
 * It is everything the runtime needs to launch a variant without the
 * source: parameters and their symbolic dims, which tensors are written,
 * each variant's entry name, constants, pinned dims, grid (as a postfix
 * program over dims), threads and shared memory. runtime/manifest.c reads
 * it; the format is described there. */
#include "manifest.h"
#include "ptx.h"

#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct Em {
  yaml_emitter_t e;
  bool ok;
} Em;

static void ev_scalar(Em *m, const char *s, bool quoted) {
  yaml_event_t ev;
  m->ok = m->ok && yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, -1, 1, 1,
                                                quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE) &&
          yaml_emitter_emit(&m->e, &ev);
}

static void ev_int(Em *m, int64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)v);
  ev_scalar(m, b, false);
}

static void ev_map(Em *m, bool start, bool flow) {
  yaml_event_t ev;
  m->ok = m->ok &&
          (start ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE)
                 : yaml_mapping_end_event_initialize(&ev)) &&
          yaml_emitter_emit(&m->e, &ev);
}

static void ev_seq(Em *m, bool start, bool flow) {
  yaml_event_t ev;
  m->ok = m->ok &&
          (start ? yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE)
                 : yaml_sequence_end_event_initialize(&ev)) &&
          yaml_emitter_emit(&m->e, &ev);
}

static void kv(Em *m, const char *k, const char *v) {
  ev_scalar(m, k, false);
  ev_scalar(m, v, false);
}

static void kv_int(Em *m, const char *k, int64_t v) {
  ev_scalar(m, k, false);
  ev_int(m, v);
}

/* key: [NAME, ...], the tensor parameters of mask (bit i: parameter i) in
 * order (aligned_rows, apart) */
static void kv_params(Em *m, const char *k, const TirFunc *f, uint64_t mask) {
  ev_scalar(m, k, false);
  ev_seq(m, true, true);
  for (int p = 0; p < f->nparams && p < 64; p++)
    if (mask >> p & 1) ev_scalar(m, f->params[p].name, false);
  ev_seq(m, false, true);
}

uint64_t manifest_hash(const char *text, size_t len) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
  return h;
}


/* A grid value as postfix tokens, written to out; false when it uses
 * something the runtime cannot evaluate (it never does: sema allows dims,
 * constants and the runtime's operators only, and lowering bounds the
 * program's length). */
static bool postfix(const TirInst *in, FILE *out, bool *first) {
  const char *tok = NULL;
  char num[32];
  switch (in->op) {
  case TIR_CONST:
    snprintf(num, sizeof num, "%lld", (long long)in->ival);
    tok = num;
    break;
  case TIR_DIM: tok = in->name; break;
  case TIR_CONVERT: return postfix(in->args[0], out, first);
  case TIR_UNARY:
    if (in->aux != '-' || !postfix(in->args[0], out, first)) return false;
    tok = "neg";
    break;
  case TIR_BINARY: {
    if (!postfix(in->args[0], out, first) || !postfix(in->args[1], out, first)) return false;
    static const struct { int op; const char *s; } ops[] = {{'+', "+"}, {'-', "-"}, {'*', "*"}, {'/', "/"}, {'%', "%"},
                                                             {TOP_CDIV, "cdiv"}, {TOP_MIN, "min"}, {TOP_MAX, "max"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
      if (ops[i].op == in->aux) tok = ops[i].s;
    if (!tok) return false;
    break;
  }
  default: return false;
  }
  fprintf(out, "%s%s", *first ? "" : " ", tok);
  *first = false;
  return true;
}

/* arrive's counters (issue 21, spec 9.5): a counter index that moves with
 * a block index, a * ctx.block.X + b (a and b constants in the variant),
 * must stay inside its tensor for every block of the grid, or a CTA's
 * arrival is masked away and the last CTA never learns it is last (the
 * output left unwritten). Each such subscript is a launch contract of its
 * own, derived here as a @requires would be written: `E > a * (ctx.grid.X
 * - 1) + b`, E the counter tensor's extent (a dim's name, or its literal).
 * A variant whose counters a launch's grid overruns is then never
 * launched, and with none left the launch is PHOBOS_BAD_SHAPE naming the
 * tensor, the dim and the grid (spec 11.2, 17.3). */
typedef struct Derived {
  const char *text, *lhs, *rhs, *lprog, *rprog;
} Derived;
enum { MAX_DERIVED = 8 };

/* x as a * ctx.block.<axis> + b (axis -1: a constant b) */
static bool affine_block(const TirInst *x, int *axis, int64_t *a, int64_t *b, int depth) {
  if (!x || depth > 16 || x->ty.rank) return false;
  switch (x->op) {
  case TIR_CONST: return *axis = -1, *a = 0, *b = x->ival, true;
  case TIR_CTX:
    if (x->aux > 2) return false;
    return *axis = x->aux, *a = 1, *b = 0, true;
  case TIR_CONVERT: return affine_block(x->args[0], axis, a, b, depth + 1);
  case TIR_BINARY: {
    int ax, ay;
    int64_t xa, xb, ya, yb;
    if (!affine_block(x->args[0], &ax, &xa, &xb, depth + 1) || !affine_block(x->args[1], &ay, &ya, &yb, depth + 1))
      return false;
    if (x->aux == '+' && (ax < 0 || ay < 0 || ax == ay)) {
      *axis = ax >= 0 ? ax : ay;
      return !__builtin_add_overflow(xa, ya, a) && !__builtin_add_overflow(xb, yb, b);
    }
    if (x->aux == '*' && (ax < 0 || ay < 0)) { /* one side a constant */
      int64_t k = ax < 0 ? xb : yb, pa = ax < 0 ? ya : xa, pb = ax < 0 ? yb : xb;
      *axis = ax < 0 ? ay : ax;
      return !__builtin_mul_overflow(k, pa, a) && !__builtin_mul_overflow(k, pb, b);
    }
    return false;
  }
  default: return false;
  }
}

static void find_arrives(Arena *ar, const TirFunc *f, const TirBlock *blk, Derived *out, int *n) {
  static const char *axes = "xyz";
  for (int i = 0; i < blk->len; i++) {
    const TirInst *in = blk->insts[i];
    find_arrives(ar, f, &in->body, out, n);
    find_arrives(ar, f, &in->body2, out, n);
    find_arrives(ar, f, &in->cond, out, n);
    if (in->op != TIR_ARRIVE) continue;
    const TirParam *tp = &f->params[in->aux];
    if (tp->scratch) continue; /* sized by the runtime to the grid (@scratch) */
    for (int d = 0; d < in->nsubs && d < tp->rank && *n < MAX_DERIVED; d++) {
      int axis;
      int64_t a, b;
      if (!affine_block(in->subs[d].start, &axis, &a, &b, 0)) continue;
      const char *what = in->aux2 == TARRIVE_COUNT ? "arrive's counter"
                         : in->aux2 == TARRIVE_ADD ? "atomic_add's element"
                         : in->aux2 == TARRIVE_CAS ? "atomic_cas's element"
                                                   : "grid_barrier's tensor";
      if (axis < 0) { /* a constant element of a dim known at launch: E > b */
        if (!tp->dimname[d] || b < 0 || tp->dims[d] >= 0) continue;
        out[(*n)++] = (Derived){.text = arena_printf(ar, "%s > %lld (%s '%s', dim %d)", tp->dimname[d], (long long)b,
                                                     what, tp->name, d),
                                .lhs = tp->dimname[d],
                                .rhs = arena_printf(ar, "%lld", (long long)b),
                                .lprog = tp->dimname[d],
                                .rprog = arena_printf(ar, "%lld", (long long)b)};
        continue;
      }
      if (a <= 0) continue;
      const char *e = tp->dimname[d] ? tp->dimname[d] : arena_printf(ar, "%lld", (long long)tp->dims[d]);
      const char *g = arena_printf(ar, "ctx.grid.%c - 1", axes[axis]);
      const char *rhs = a == 1 && b == 0 ? g
                        : a == 1        ? arena_printf(ar, "%s + %lld", g, (long long)b)
                        : b == 0        ? arena_printf(ar, "%lld * (%s)", (long long)a, g)
                                        : arena_printf(ar, "%lld * (%s) + %lld", (long long)a, g, (long long)b);
      out[*n] = (Derived){
          .text = arena_printf(ar, "%s > %s (%s '%s', dim %d)", e, rhs, what, tp->name, d),
          .lhs = e,
          .rhs = rhs,
          .lprog = e,
          .rprog = arena_printf(ar, "grid.%c 1 - %lld * %lld +", axes[axis], (long long)a, (long long)b)};
      (*n)++;
    }
  }
}

static int arrive_contracts(Arena *ar, const TirFunc *f, Derived *out) {
  int n = 0;
  find_arrives(ar, f, &f->body, out, &n);
  return n;
}

bool manifest_write(FILE *out, const Source *src, const char *arch, const char *cubin, Plan **plans, int nplans,
                    char *err, size_t errlen) {
  Em m = {.ok = true};
  yaml_emitter_initialize(&m.e);
  yaml_emitter_set_output_file(&m.e, out);
  yaml_emitter_set_width(&m.e, 160);
  yaml_event_t ev;
  m.ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) && yaml_emitter_emit(&m.e, &ev) &&
         yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) && yaml_emitter_emit(&m.e, &ev);
  Arena *a = arena_new();
  ev_map(&m, true, false);
  kv_int(&m, "phobos_manifest", 1);
  kv(&m, "compiler", "phobosc " PHOBOS_VERSION);
  const char *base = strrchr(src->name, '/');
  kv(&m, "source", base ? base + 1 : src->name);
  kv(&m, "source_hash", arena_printf(a, "%016llx", (unsigned long long)manifest_hash(src->text, src->len)));
  kv(&m, "arch", arch);
  kv(&m, "cubin", cubin);
  ev_scalar(&m, "kernels", false);
  ev_seq(&m, true, false);
  for (int i = 0; i < nplans;) {
    const TirFunc *f = plans[i]->f;
    int j = i;
    while (j < nplans && plans[j]->f->info->kernel == f->info->kernel) j++;
    ev_map(&m, true, false);
    kv(&m, "name", f->name);
    ev_scalar(&m, "params", false);
    ev_seq(&m, true, false);
    for (int p = 0; p < f->nparams; p++) {
      const TirParam *tp = &f->params[p];
      ev_map(&m, true, true);
      kv(&m, "name", tp->name);
      kv(&m, "kind", tp->tensor ? "tensor" : "scalar");
      kv(&m, "dtype", sema_scalar_name(tp->elem));
      if (tp->tensor) {
        ev_scalar(&m, "dims", false);
        ev_seq(&m, true, true);
        for (int d = 0; d < tp->rank; d++) {
          if (tp->dimname[d]) ev_scalar(&m, tp->dimname[d], false);
          else ev_int(&m, tp->dims[d]);
        }
        ev_seq(&m, false, true);
        bool written = false;
        for (int v = i; v < j; v++) written |= tir_stores_to(&plans[v]->f->body, p);
        kv(&m, "written", written ? "true" : "false");
        /* every dim's stride but the last is a launch parameter (spec 16.3) */
        kv(&m, "strides", "inner-contiguous");
        /* @scratch: the runtime allocates it (each variant's `scratch`
         * gives its extents) and passes it; zeroed when allocated */
        if (tp->scratch) kv(&m, "scratch", tp->zero ? "zero" : "undefined");
      }
      ev_map(&m, false, true);
    }
    ev_seq(&m, false, false);
    /* @requires: each contract as written, its comparison and its sides'
     * text (for the runtime's messages); each variant lists the sides'
     * programs, in this order (spec 16.2) */
    Derived derived[MAX_DERIVED];
    int nderived = arrive_contracts(a, f, derived);
    if (f->info->nrequires || nderived) {
      ev_scalar(&m, "requires", false);
      ev_seq(&m, true, false);
      for (int c = 0; c < nderived; c++) {
        ev_map(&m, true, true);
        ev_scalar(&m, "text", false);
        ev_scalar(&m, derived[c].text, true);
        ev_scalar(&m, "op", false);
        ev_scalar(&m, ">", true);
        ev_scalar(&m, "lhs", false);
        ev_scalar(&m, derived[c].lhs, true);
        ev_scalar(&m, "rhs", false);
        ev_scalar(&m, derived[c].rhs, true);
        ev_map(&m, false, true);
      }
      for (int c = 0; c < f->info->nrequires; c++) {
        ev_map(&m, true, true);
        ev_scalar(&m, "text", false);
        ev_scalar(&m, f->info->requires_text[c][0], true);
        ev_scalar(&m, "op", false);
        ev_scalar(&m, f->info->requires_op[c], true);
        ev_scalar(&m, "lhs", false);
        ev_scalar(&m, f->info->requires_text[c][1], true);
        ev_scalar(&m, "rhs", false);
        ev_scalar(&m, f->info->requires_text[c][2], true);
        ev_map(&m, false, true);
      }
      ev_seq(&m, false, false);
    }
    ev_scalar(&m, "variants", false);
    ev_seq(&m, true, false);
    for (int v = i; v < j; v++) {
      const Plan *pl = plans[v];
      const TirFunc *vf = pl->f;
      const KernelInfo *info = vf->info;
      ev_map(&m, true, false);
      kv(&m, "entry", plan_entry_name(a, pl));
      ev_scalar(&m, "constants", false);
      ev_map(&m, true, true);
      for (int c = info->nconsts - 1; c >= 0; c--)
        if (!info->const_is_float[c]) kv_int(&m, info->const_names[c], info->const_values[c]);
      ev_map(&m, false, true);
      /* @scratch: each scratch tensor's extents, programs over the dims */
      if (info->nscratch) {
        ev_scalar(&m, "scratch", false);
        ev_seq(&m, true, true);
        for (int c = 0, p = 0; p < vf->nparams; p++) {
          if (!vf->params[p].scratch) continue;
          ev_seq(&m, true, true);
          for (int d = 0; d < vf->params[p].rank; d++) ev_scalar(&m, info->scratch_prog[c][d], true);
          ev_seq(&m, false, true);
          c++;
        }
        ev_seq(&m, false, true);
      }
      /* dims named like a constant are fixed by this variant */
      ev_scalar(&m, "pinned", false);
      ev_map(&m, true, true);
      const char *seen[MAX_DIM_NAMES]; /* a kernel names at most MAX_DIM_NAMES dims (sema) */
      int nseen = 0;
      for (int p = 0; p < vf->nparams; p++)
        for (int d = 0; d < vf->params[p].rank; d++) {
          const TirParam *tp = &vf->params[p];
          if (!tp->dimname[d] || tp->dims[d] < 0) continue;
          bool dup = false;
          for (int s = 0; s < nseen; s++) dup |= !strcmp(seen[s], tp->dimname[d]);
          if (dup || nseen == MAX_DIM_NAMES) continue;
          seen[nseen++] = tp->dimname[d];
          kv_int(&m, tp->dimname[d], tp->dims[d]);
        }
      ev_map(&m, false, true);
      /* a one-pass copy (onepass.c): only for rows that fit its block */
      if (vf->once_dim) {
        ev_scalar(&m, "dims_at_most", false);
        ev_map(&m, true, true);
        kv_int(&m, vf->once_dim, vf->once_max);
        ev_map(&m, false, true);
        if (vf->once_min > 0) { /* a copy over several blocks: exact trip counts */
          ev_scalar(&m, "dims_above", false);
          ev_map(&m, true, true);
          kv_int(&m, vf->once_dim, vf->once_min);
          ev_map(&m, false, true);
        }
        /* tensors it reads before a store to another tensor that the
         * loop order stores first: no written tensor may overlap them */
        if (vf->once_apart) kv_params(&m, "apart", vf, vf->once_apart);
      }
      /* a cluster-rows copy (src/cluster.c): each block a cluster of CTAs,
       * for rows of more than one block (else all but one CTA idle) */
      if (pl->cluster) {
        kv_int(&m, "cluster", pl->cluster);
        ev_scalar(&m, "dims_above", false);
        ev_map(&m, true, true);
        kv_int(&m, pl->cluster_dim, pl->cluster_step);
        ev_map(&m, false, true);
        if (pl->cluster_apart) kv_params(&m, "apart", vf, pl->cluster_apart);
      }
      /* a staged-rows copy (staged.c): rows of one tensor copied into
       * shared memory; the runtime adds their bytes (spec 16.2) */
      if (vf->staged) {
        ev_scalar(&m, "staged", false);
        ev_map(&m, true, true);
        kv(&m, "tensor", vf->params[vf->stage_param].name);
        kv_int(&m, "rows", vf->stage_rows);
        kv_int(&m, "block", vf->stage_step);
        ev_map(&m, false, true);
      }
      /* an aligned-rows copy (driver_aligned_copy): only for launches whose
       * tensors named here have 16-byte aligned bases and row pitches */
      if (pl->aligned_copy) kv_params(&m, "aligned_rows", vf, pl->aligned_params);
      ev_scalar(&m, "grid", false);
      ev_seq(&m, true, true);
      for (int g = 0; g < vf->ngrid; g++) {
        char *buf = NULL; /* any length: a dim's name may be long */
        size_t n = 0;
        FILE *pf = open_memstream(&buf, &n);
        bool first = true;
        if (!pf || !postfix(vf->grid_value[g], pf, &first)) {
          snprintf(err, errlen, "kernel '%s': grid axis %d cannot be written as a postfix program", vf->name, g);
          m.ok = false;
        }
        if (pf) fclose(pf);
        ev_scalar(&m, buf ? buf : "", true);
        free(buf);
      }
      ev_seq(&m, false, true);
      Derived vd[MAX_DERIVED];
      int nvd = arrive_contracts(a, vf, vd);
      if (info->nrequires || nderived) {
        ev_scalar(&m, "requires", false);
        ev_seq(&m, true, true);
        /* the kernel's derived contracts in its first variant's order; one
         * this variant does not derive holds trivially here */
        for (int c = 0; c < nderived; c++) {
          ev_seq(&m, true, true);
          ev_scalar(&m, c < nvd ? vd[c].lprog : "1", true);
          ev_scalar(&m, c < nvd ? vd[c].rprog : "0", true);
          ev_seq(&m, false, true);
        }
        for (int c = 0; c < info->nrequires; c++) {
          ev_seq(&m, true, true);
          ev_scalar(&m, info->requires_prog[c][0], true);
          ev_scalar(&m, info->requires_prog[c][1], true);
          ev_seq(&m, false, true);
        }
        ev_seq(&m, false, true);
      }
      kv_int(&m, "threads", pl->launch_threads); /* with a producer warp, 32 more than the plan's */
      /* a cluster-rows copy's exchange is static shared memory of its own */
      kv_int(&m, "shared_bytes",
             plan_launch_shared(pl) + (pl->cluster ? cluster_exchange_bytes(vf, pl->cluster_dim) : 0));
      kv(&m, "dynamic_shared", info->dynshared ? "true" : "false");
      /* the entry begins with griddepcontrol.wait (ptx/ptx.c): the runtime may
       * launch it as a programmatic dependent of the kernel before it */
      kv(&m, "dependent_launch", !strcmp(arch, "sm_90a") ? "true" : "false");
      /* the entry takes l2pf_param last (src/l2pf.c): the runtime passes 0, or
       * the CTAs resident on the device in the variant the autotuner also times */
      if (ptx_l2pf(pl, arch)) kv(&m, "l2_prefetch", "true");
      /* every tensor takes each dim's stride, the last included (spec 16.3):
       * the runtime launches it only for tensors whose last dim is not
       * contiguous */
      if (pl->general_strides) kv(&m, "general_strides", "true");
      /* a producer warp fills the rings by tensor copies alone (spec
       * 15.20): launched only where every map can be built */
      if (pl->specialized) kv(&m, "maps_required", "true");
      /* grid_barrier (spec 9.8): every CTA of the grid resident at once, a
       * cooperative launch; @persistent: grid axis x cut to what the device
       * holds */
      if (tir_has_grid_barrier(&vf->body)) kv(&m, "co_resident", "true");
      if (info->persistent) kv(&m, "persistent", "true");
      /* tensor copies: the maps the entry takes after its parameters (each a
       * 128-byte map and a u32 saying whether the runtime built it) */
      if (pl->ntmaps) {
        ev_scalar(&m, "tensormaps", false);
        ev_seq(&m, true, false);
        for (int t = 0; t < pl->ntmaps; t++) {
          const PlanTmap *tm = &pl->tmaps[t];
          ev_map(&m, true, true);
          kv(&m, "param", vf->params[tm->param].name);
          kv_int(&m, "rank", tm->rank);
          if (tm->split_dim >= 0) { /* pad-and-mask: dim split_dim viewed as [extent / inner, inner] */
            ev_scalar(&m, "split", false);
            ev_seq(&m, true, true);
            ev_int(&m, tm->split_dim);
            ev_int(&m, tm->split_inner);
            ev_seq(&m, false, true);
          }
          ev_scalar(&m, "box", false);
          ev_seq(&m, true, true);
          for (int d = 0; d < tm->rank + (tm->split_dim >= 0); d++) ev_int(&m, tm->box[d]);
          ev_seq(&m, false, true);
          kv(&m, "dtype", sema_scalar_name(tm->elem));
          kv(&m, "swizzle", tm->swizzle == 128 ? "128B" : tm->swizzle == 64 ? "64B" : tm->swizzle == 32 ? "32B" : "none");
          kv(&m, "fill", "zero");
          ev_map(&m, false, true);
        }
        ev_seq(&m, false, false);
      }
      ev_map(&m, false, false);
    }
    ev_seq(&m, false, false);
    ev_map(&m, false, false);
    i = j;
  }
  ev_seq(&m, false, false);
  ev_map(&m, false, false);
  m.ok = m.ok && yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&m.e, &ev) &&
         yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&m.e, &ev);
  if (!m.ok && !*err) snprintf(err, errlen, "writing the manifest failed: %s", m.e.problem ? m.e.problem : "?");
  yaml_emitter_delete(&m.e);
  arena_free(a);
  return m.ok;
}
