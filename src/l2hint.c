/* l2hint.c: L2 eviction priorities for rows a kernel reads again.
 *
 * A row kernel whose rows are longer than its block walks each row more
 * than once (softmax's max and sum, then its outputs; LayerNorm's sums,
 * then the normalized row), and every pass after the first reads the row
 * again. Whether that read comes from L2 or from DRAM decides the kernel's
 * speed: from DRAM, a softmax moves three bytes for each byte it writes
 * (two thirds of the device's copy bandwidth at best). Between a row's two
 * reads the L2 also takes every other CTA's rows and the outputs written
 * meanwhile, and with no hint the outputs, which nothing reads again, push
 * the rows out as readily as anything else.
 *
 * So a load of a tensor that a later pass loads again asks L2 to keep its
 * lines (evict_last), the last pass's load of it lets them go first
 * (evict_first), and, with stores marked too, a store to a tensor the kernel
 * never reads asks to be evicted first. The hints change no value, only
 * which lines L2 keeps (`ld.global.L2::cache_hint` with a policy from
 * `createpolicy`, ptx/loads.c).
 *
 * A pass is a top-level loop of the kernel's body; a tensor is read again
 * when its tile loads lie in two passes or more, every one of them at the
 * same rows (its subscripts before the last: the same value and length),
 * so that the later passes read the lines the earlier ones did. */
#include "tir.h"

typedef struct Seen {
  const TirInst *first; /* the tensor's first tile load in a pass */
  int pass_lo, pass_hi; /* the first and last top-level loop holding one */
  bool bad;             /* loads at different rows, or outside any loop */
  bool loaded;          /* any load of the tensor, anywhere */
} Seen;

static bool same_rows(const TirInst *a, const TirInst *b) {
  if (a->nsubs != b->nsubs) return false;
  for (int k = 0; k + 1 < a->nsubs; k++) {
    if (a->subs[k].point != b->subs[k].point || a->subs[k].len != b->subs[k].len ||
        !tir_same_value(a->subs[k].start, b->subs[k].start, NULL, NULL))
      return false;
  }
  return true;
}

static bool tile_load(const TirFunc *f, const TirInst *in) {
  return in->op == TIR_LOAD && in->ty.rank > 0 && in->nsubs > 0 && in->aux >= 0 && in->aux < f->nparams &&
         f->params[in->aux].tensor && !in->subs[in->nsubs - 1].point;
}

/* pass: the index of the top-level loop around b, or -1; each tile load's
 * pass goes into at[id] */
static void scan(const TirFunc *f, Seen *s, int *at, const TirBlock *b, int pass) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    int p = pass;
    if (p < 0 && b == &f->body && in->op == TIR_FOR) p = i;
    if (in->op == TIR_LOAD && in->aux >= 0 && in->aux < f->nparams) s[in->aux].loaded = true;
    if (tile_load(f, in) && in->id >= 0 && in->id < f->ninsts) {
      Seen *x = &s[in->aux];
      at[in->id] = p;
      if (p < 0) x->bad = true;
      else if (!x->first) x->first = in, x->pass_lo = x->pass_hi = p;
      else if (!same_rows(x->first, in)) x->bad = true;
      else x->pass_hi = p > x->pass_hi ? p : x->pass_hi;
    }
    scan(f, s, at, &in->cond, p);
    scan(f, s, at, &in->body, p);
    scan(f, s, at, &in->body2, p);
  }
}

void l2hint_mark(Arena *a, TirFunc *f) {
  if (f->nparams <= 0 || tir_has_dot(&f->body)) return;
  Seen *s = arena_alloc(a, sizeof(Seen) * (size_t)f->nparams); /* zeroed */
  int *at = arena_alloc(a, sizeof(int) * (size_t)(f->ninsts + 1));
  for (int i = 0; i <= f->ninsts; i++) at[i] = -1;
  scan(f, s, at, &f->body, -1);
  bool any = false;
  /* every instruction afresh: a copy made from a marked kernel (a one-pass
   * copy's splice) keeps its instructions' marks */
  for (int i = 0; i < f->ninsts; i++) {
    TirInst *in = f->insts[i];
    if (!in) continue;
    in->l2hint = L2H_NONE;
    const Seen *x = tile_load(f, in) && at[i] >= 0 ? &s[in->aux] : NULL;
    if (x && !x->bad && x->pass_hi > x->pass_lo) {
      in->l2hint = at[i] < x->pass_hi ? L2H_LAST : L2H_FIRST;
      any = true;
    }
  }
  for (int i = 0; any && i < f->ninsts; i++) {
    TirInst *in = f->insts[i];
    if (in && in->op == TIR_STORE && in->aux >= 0 && in->aux < f->nparams && !s[in->aux].loaded) in->l2hint = L2H_FIRST;
  }
}
