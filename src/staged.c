/* staged.c: a kernel's staged-rows variant, for rows that fit shared memory.
 *
 * A row kernel walks each row block in blocks of BN columns more than once
 * (softmax's max and sum, then its outputs; LayerNorm's sums, then the
 * normalized row) and loads the row again each pass. Where the row is
 * longer than a block, the one-pass copy (onepass.c) does not apply, and the
 * kernel reads memory twice or more: at best two thirds of the device's
 * copy bandwidth for a softmax, which reads a byte twice to write it once.
 * Where the CTA's rows fit shared memory (100 KB for one row of 50257
 * bf16), the rows can be read from memory once: copied into shared memory
 * as the kernel starts, by the copy engine (bulk copies, a few
 * instructions for the whole row block, as many bytes in flight as it
 * holds), each pass reading the copy.
 *
 * staged_variant makes that kernel from a freshly lowered copy of a
 * variant: a tensor X that no store or arrive writes, whose every load is
 * X[r0 :+ BR, c :+ S] with the same row start r0 (a value the kernel
 * computes before its loops, outside them) and c the value of a loop
 * `for c in range(0, D, S)` over X's last dim, in at least two loops, is
 * marked staged; the backend copies rows r0 .. r0 + BR - 1 once, right
 * after r0, and spells each of those loads as shared loads of the copy
 * (ptx/rowstage.c). The runtime launches it only where the rows fit the
 * device's shared memory, X's base is 16-byte aligned and X overlaps no
 * tensor the kernel writes (spec 15.14), beside the variant it came from;
 * the autotuner times both. */
#include <string.h>

#include "plan/plan.h"
#include "tir.h"

typedef struct Scan {
  const TirFunc *f;
  int param;
  const TirInst *row0;
  int64_t rows, step;
  const TirInst *loops[2]; /* the first two distinct loops whose bodies load X */
  int nloops;
  int first_top;           /* index in the kernel's body of the first top-level instruction holding a load */
  bool bad;
} Scan;

/* The loop `for c in range(0, D, S)` (tir_dim_loop) with D the last dim
 * of tensor param (any tensor's dim of its name). */
static bool row_loop(const TirFunc *f, const TirInst *loop, int param, int64_t *step) {
  const TirInst *hi = tir_dim_loop(f, loop, step);
  if (!hi) return false;
  const TirParam *x = &f->params[param];
  const char *dn = x->dimname[x->rank - 1], *hn = f->params[hi->aux].dimname[hi->aux2];
  return (hi->aux == param && hi->aux2 == x->rank - 1) || (dn && hn && !strcmp(dn, hn));
}

static void scan_load(Scan *s, const TirInst *in, const TirInst *loop, int top) {
  int64_t step;
  if (in->nsubs != 2 || in->subs[0].point || in->subs[1].point || !row_loop(s->f, loop, s->param, &step) ||
      in->subs[1].start != loop || in->subs[1].len != step) {
    s->bad = true;
    return;
  }
  if (!s->row0) {
    s->row0 = in->subs[0].start, s->rows = in->subs[0].len, s->step = step, s->first_top = top;
  } else if (in->subs[0].start != s->row0 || in->subs[0].len != s->rows || step != s->step) {
    s->bad = true;
    return;
  }
  for (int i = 0; i < s->nloops; i++)
    if (s->loops[i] == loop) return;
  if (s->nloops < 2) s->loops[s->nloops++] = loop;
}

static void scan(Scan *s, const TirBlock *b, const TirInst *loop, int top) {
  for (int i = 0; i < b->len && !s->bad; i++) {
    const TirInst *in = b->insts[i];
    int t = top < 0 ? i : top;
    if (in->op == TIR_LOAD && in->aux == s->param) scan_load(s, in, loop, t);
    scan(s, &in->cond, loop, t);
    scan(s, &in->body, in->op == TIR_FOR ? in : loop, t);
    scan(s, &in->body2, loop, t);
  }
}

TirFunc *staged_variant(Arena *a, Diags *d, const KernelInfo *info) {
  TirFunc *f = lower_kernel(a, d, info);
  if (!f) return NULL;
  for (int p = 0; p < f->nparams; p++) {
    const TirParam *tp = &f->params[p];
    int eb = tp->tensor ? sema_scalar_bytes(tp->elem) : 0;
    if (tp->rank != 2 || (eb != 2 && eb != 4) || tir_stores_to(&f->body, p)) continue;
    Scan s = {.f = f, .param = p, .first_top = -1};
    scan(&s, &f->body, NULL, -1);
    /* a block narrower than a granule could leave the next block empty and
     * its bytes counted two mbarriers on (rowstage.c waits for the next one) */
    if (s.bad || s.nloops < 2 || s.step * eb < 16) continue;
    /* the copy is issued right after r0: a top-level value before the
     * first loop that loads the rows */
    int at = -1;
    for (int i = 0; i < f->body.len; i++)
      if (f->body.insts[i] == s.row0) at = i;
    if (at < 0 || at >= s.first_top || s.row0->ty.rank != 0) continue;
    f->staged = true;
    f->stage_param = p;
    f->stage_row0 = s.row0;
    f->stage_rows = s.rows;
    f->stage_step = s.step;
    return f;
  }
  return NULL;
}

int64_t staged_extra_bytes(const TirFunc *f, int64_t D) {
  int64_t eb = sema_scalar_bytes(f->params[f->stage_param].elem);
  return (f->stage_rows * D * eb + 15) / 16 * 16 + 64 + 8 * ((D + f->stage_step - 1) / f->stage_step);
}

int64_t staged_area_offset(const Plan *p) {
  return p->f->info->dynshared ? (plan_launch_shared(p) + 15) / 16 * 16 : 0;
}

static bool loads_ok(const Plan *p, const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->op == TIR_LOAD && in->aux == p->f->stage_param &&
        (in->plan->res != RES_REG || !plan_is_blocked(in) || in->plan->tma || in->plan->ring))
      return false;
    if (!loads_ok(p, &in->cond) || !loads_ok(p, &in->body) || !loads_ok(p, &in->body2)) return false;
  }
  return true;
}

bool staged_plan_ok(const Plan *p) {
  return p->f->staged && !p->producer && !p->prefetch && loads_ok(p, &p->f->body);
}
