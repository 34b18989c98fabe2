/* l2pf.c: the slices of the programs to come, fetched into L2 ahead.
 *
 * A row kernel written one program a row (Triton's and Liger's softmax,
 * RMSNorm, layer norm) holds a row's loads in registers from issue to use;
 * a CTA's registers bound how many rows are in flight an SM, and between
 * one program's loads and the next CTA's, DRAM idles. So each load whose
 * slice moves with the program (its coordinates affine in ctx.block.x with
 * constant steps) also asks, once a CTA, for the same slice of the program
 * D blocks later: `cp.async.bulk.prefetch.L2` over each of its rows, which
 * holds no register and no shared memory. When that program runs, its loads
 * hit L2. D is a launch parameter (`l2pf_param`): the runtime passes 0 or
 * the CTAs resident at once on the whole device (its occupancy query), and
 * the autotuner times a variant both ways (spec 15.18).
 *
 * This pass only marks the loads (TirInst.l2pf: each coordinate's step a
 * block, then the columns to ask for: their offset from the load's own
 * start and their count; one load a row, the first, asks for the columns
 * of every load of that row at the same base plus a constant); ptx/l2pf.c emits the prefetch beside the load, where the
 * coordinates are in registers. A kernel qualifies when its grid has one
 * axis and it has no `dot` (the staged and tensor-core paths keep their own
 * copies); a load when it reads a tile of a tensor parameter, its last
 * subscript is a span (its rows are contiguous), its slice has at most as
 * many rows as the CTA has threads (a thread a row), and some coordinate
 * moves with the block. Coordinates built from loads or mutable variables
 * do not qualify (the next program's value is not known); loop induction
 * values do (the next program is at the same iteration). */
#include <stdlib.h>
#include <string.h>

#include "tir.h"

typedef struct Aff {
  int64_t *step;  /* by id: the value's step a block */
  signed char *st; /* by id: 0 not yet, 1 known, 2 not affine */
  int n;
  TirInst **groups; /* the loads marked so far: one a row */
  int ngroups, cap;
} Aff;

/* v as base + c, c a constant (0 and v itself when v adds none) */
static TirInst *split_const(TirInst *v, int64_t *c) {
  *c = 0;
  if (v && v->op == TIR_BINARY && v->aux == '+' && v->args[1] && v->args[1]->op == TIR_CONST)
    return *c = v->args[1]->ival, v->args[0];
  return v;
}

static bool mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* v = step * ctx.block.x + (a value the block does not change), with a
 * constant step; false when it is not of that form. Memoized by id, so a
 * shared subexpression is looked at once. */
static bool affine(Aff *A, const TirInst *v, int64_t *step) {
  if (!v || v->id < 0 || v->id >= A->n) return false;
  if (A->st[v->id]) return *step = A->step[v->id], A->st[v->id] == 1;
  A->st[v->id] = 2; /* a cycle is not affine */
  int64_t s = 0, a = 0, b = 0;
  bool ok = false;
  switch (v->op) {
  case TIR_CONST: case TIR_PARAM: case TIR_DIM: case TIR_FOR: ok = true; break;
  case TIR_CTX: ok = true, s = v->aux == 0; break; /* y and z are 0 on a grid of one axis */
  case TIR_CONVERT: ok = v->ty.rank == 0 && affine(A, v->args[0], &s); break;
  case TIR_UNARY: ok = v->ty.rank == 0 && v->aux == '-' && affine(A, v->args[0], &a) && !__builtin_sub_overflow(0, a, &s); break;
  case TIR_BINARY:
    if (v->ty.rank != 0 || !affine(A, v->args[0], &a) || !affine(A, v->args[1], &b)) break;
    if (v->aux == '+') ok = !__builtin_add_overflow(a, b, &s);
    else if (v->aux == '-') ok = !__builtin_sub_overflow(a, b, &s);
    else if (v->aux == '*') {
      /* a step times a constant; a block-free value times a block-free one */
      if (!a && !b) ok = true;
      else if (!b && v->args[1]->op == TIR_CONST) ok = mul_ok(a, v->args[1]->ival, &s);
      else if (!a && v->args[0]->op == TIR_CONST) ok = mul_ok(b, v->args[0]->ival, &s);
    } else ok = !a && !b; /* /, %, min, max, shifts: only of values the block does not move */
    break;
  default: break;
  }
  if (!ok) return false;
  A->st[v->id] = 1, A->step[v->id] = s;
  return *step = s, true;
}

static void mark(Arena *a, Aff *A, const TirFunc *f, TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    mark(a, A, f, &in->cond);
    mark(a, A, f, &in->body);
    mark(a, A, f, &in->body2);
    if (in->op != TIR_LOAD || in->ty.rank == 0 || in->nsubs == 0 || in->subs[in->nsubs - 1].point) continue;
    if (in->aux < 0 || in->aux >= f->nparams || !f->params[in->aux].tensor) continue;
    int64_t steps[MAX_TENSOR_RANK], rows = 1;
    bool ok = true, moves = false;
    for (int k = 0; k < in->nsubs && ok; k++) {
      ok = affine(A, in->subs[k].start, &steps[k]);
      moves |= ok && steps[k] != 0;
      if (k < in->nsubs - 1 && !mul_ok(rows, in->subs[k].len, &rows)) ok = false;
    }
    int threads = f->info->threads > 0 ? f->info->threads : LANG_DEFAULT_THREADS;
    if (!ok || !moves || rows > threads) continue;
    /* one prefetch a row: a load of the same rows and steps whose columns
     * start at the same base plus a constant (a strip, strip.c; a value
     * read again, remat.c) widens the first one's columns instead */
    int64_t c;
    TirInst *base = split_const(in->subs[in->nsubs - 1].start, &c);
    TirInst *first = NULL;
    for (int q = 0; q < A->ngroups && !first; q++) {
      TirInst *o = A->groups[q];
      int64_t oc;
      bool same = o->aux == in->aux && o->nsubs == in->nsubs && tir_same_value(split_const(o->subs[o->nsubs - 1].start, &oc), base, NULL, NULL);
      for (int k = 0; k < in->nsubs && same; k++)
        same = o->l2pf[k] == steps[k] && (k == in->nsubs - 1 || (tir_same_value(o->subs[k].start, in->subs[k].start, NULL, NULL) &&
                                                                  o->subs[k].len == in->subs[k].len));
      if (same) first = o;
    }
    int64_t len = in->subs[in->nsubs - 1].len;
    if (first) { /* first->l2pf[nsubs]: its columns' offset from its own start; [nsubs + 1]: their count */
      int64_t fc, n = first->nsubs;
      split_const(first->subs[n - 1].start, &fc);
      int64_t lo = fc + first->l2pf[n], hi = lo + first->l2pf[n + 1], nlo = c < lo ? c : lo,
              nhi = c + len > hi ? c + len : hi;
      first->l2pf[n] = nlo - fc, first->l2pf[n + 1] = nhi - nlo;
      continue;
    }
    in->l2pf = arena_alloc(a, sizeof(int64_t) * (size_t)(in->nsubs + 2));
    for (int k = 0; k < in->nsubs; k++) in->l2pf[k] = steps[k];
    in->l2pf[in->nsubs] = 0, in->l2pf[in->nsubs + 1] = len;
    if (A->ngroups < A->cap) A->groups[A->ngroups++] = in;
  }
}

void l2pf_mark(Arena *a, TirFunc *f) {
  /* a derived grid (a kernel without @grid) is left as it was before
   * grids were derived: without the prefetch (its PTX is unchanged) */
  if (f->ngrid != 1 || f->grid_derived || f->staged || tir_has_dot(&f->body)) return;
  Aff A = {.n = f->ninsts + 1};
  A.step = arena_alloc(a, sizeof(int64_t) * (size_t)A.n);
  A.st = arena_alloc(a, (size_t)A.n);
  for (int i = 0; i < A.n; i++) A.step[i] = 0, A.st[i] = 0;
  A.cap = 64;
  A.groups = arena_alloc(a, sizeof(TirInst *) * (size_t)A.cap);
  mark(a, &A, f, &f->body);
}

static bool any_marked(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if ((in->op == TIR_LOAD && in->l2pf) || any_marked(&in->cond) || any_marked(&in->body) || any_marked(&in->body2))
      return true;
  }
  return false;
}

bool l2pf_used(const TirFunc *f, const char *arch) { return l2pf_arch(arch) && any_marked(&f->body); }

/* sm_90 and later: cp.async.bulk.prefetch */
bool l2pf_arch(const char *arch) { return arch && !strncmp(arch, "sm_", 3) && atoi(arch + 3) >= 90; }
