/* shiftwalk.c: shifted walks, a row loop's blocks moved to the row's
 * 16-byte alignment (spec 15.24).
 *
 * A row kernel walks a row in blocks, `for c in range(0, D, S)`, each block
 * `X[r, c :+ S]` a thread's 16-byte chunks at c + its columns. Where the
 * row's pitch is odd (softmax over 50257 columns) the rows start at every
 * alignment, so every chunk straddles two aligned vectors: its load takes
 * both and shifts them by the row's misalignment, its store realigns by
 * shuffles between lanes (ptx/loads.c, misaligned_rows and
 * misaligned_store_rows), which costs issue slots every element; these
 * kernels are bound by instructions issued. A shifted walk starts the loop
 * at -sh instead, sh the row's misalignment in elements (from the first
 * access's row start), and runs it while c < hi, hi = cdiv(D, S) S: the
 * same columns [0, hi) the plain walk covers, each once, in blocks whose
 * every chunk is one aligned vector of the row, plus up to sh phantom
 * columns before 0 and after hi. Phantoms are outside the row (before its
 * start, or at or past D): their stores are skipped as slack, a masked load
 * gives zero for them, and the vector path reads those before 0 as they
 * are where its aligned chunk holds column 0 (column 0's own 16-byte
 * granule: ptx/loads.c, col_mask_phantoms);
 * they must not reach a reduction: the loop's row reductions leave them
 * out (ptx/exchange.c). Every other column is the
 * same element in the same elementwise computation as before, in another
 * block.
 *
 * That moves columns between blocks, which is right only where nothing
 * sees a block as a whole:
 * - the loop is a walk over the dim D (tir_dim_loop: from 0 in constant
 *   steps S to D), S elements of the first access a multiple of 16 bytes
 *   (every block then starts at the same alignment);
 * - its body is straight code (no if, loop, break, barrier, dot, extract,
 *   transpose, scan, reshape, arrive) of elementwise operations, iota,
 *   broadcasts, and row reductions that are deferred (plan/deferred.c:
 *   each thread's running value of its own elements, whose fold does not
 *   care which block an element came in), writing no variable declared
 *   outside it but its deferred accumulators;
 * - the induction value is read only as the start of an access's last
 *   slice, S long (its own block), or splat and added to an iota along
 *   the last axis (a tile of the columns); such an iota is read nowhere
 *   else, and no tile of several columns comes from outside the loop (a
 *   load elsewhere, a value or var from before it): its element j would
 *   meet another column of the row than in the plain walk;
 * - every access is a register tile of one row (rank 1, or rank 2 with
 *   its row a point or one long) of a tensor of rank 1 or 2, its other
 *   subscripts defined before the loop; those at the own block are of
 *   tensors whose last dim is D (so that the phantoms past hi lie past
 *   their end), the others do not read the induction value at all;
 *   stores are all at the own block, and write (no atomics).
 * The first access at the own block, a load if any, gives the shift (its
 * row's start, read before the loop). A loop whose every reduction reads
 * the identity at columns at or past D (a `where(cols < D, x, -inf)` or
 * `0`, the online logsumexp's exp of such a value less its max) or that
 * has none needs no slack columns: it runs while c < D, not to hi, and so
 * takes no block more than the plain walk unless sh pushes the row's
 * last column past one (shiftwalk_slack_free). Only the entries for rows that are
 * not aligned take it: an aligned-rows copy's rows start at 16 bytes. */
#include <math.h>
#include <string.h>

#include "plan/plan.h"

/* x is splat(v) */
static bool splat_of(const TirInst *x, const TirInst *v) { return x && x->op == TIR_SPLAT && x->args[0] == v; }

static bool invariant(const TirInst *x, const TirInst *loop) {
  return x->pos < loop->pos || x->op == TIR_CONST || x->op == TIR_DIM || x->op == TIR_PARAM || x->op == TIR_CTX;
}

/* a register access of one row of a tensor of rank 1 or 2, its subscripts
 * invariant but a last slice at the loop's own block; *own: it is */
static bool one_row_access(const TirFunc *f, const TirInst *x, const TirInst *loop, int64_t step, const char *dim,
                           bool *own) {
  if (x->aux < 0 || x->aux >= f->nparams) return false;
  const TirParam *t = &f->params[x->aux];
  if (t->rank < 1 || t->rank > 2 || x->nsubs != t->rank) return false;
  const TirInst *v = x->op == TIR_STORE ? x->args[0] : x; /* the register tile */
  if (v->plan->res != RES_REG || x->plan->buf || x->plan->ring || x->plan->tma) return false;
  if (x->op == TIR_STORE && x->aux2 != TSTORE_WRITE) return false;
  if (t->rank == 2 && !x->subs[0].point && x->subs[0].len != 1) return false;
  *own = false;
  for (int i = 0; i < x->nsubs; i++) {
    const TirSub *s = &x->subs[i];
    if (s->start == loop) {
      const char *last = t->dimname[t->rank - 1];
      if (i != x->nsubs - 1 || s->point || s->len != step || !last || strcmp(last, dim)) return false;
      *own = true;
    } else if (!invariant(s->start, loop)) {
      return false;
    }
  }
  return true;
}

/* x reads the induction value only as shiftwalk allows (its own-block
 * subscripts are checked with the access) */
static bool reads_loop_ok(const TirBlock *b, const TirInst *x, const TirInst *loop) {
  bool read = false;
  for (int a = 0; a < x->nargs; a++) read |= x->args[a] == loop;
  if (!read) return true;
  if (x->op != TIR_SPLAT) return false;
  /* splat(c): every reader adds it to an iota along the last axis */
  for (int i = 0; i < b->len; i++) {
    const TirInst *u = b->insts[i];
    for (int a = 0; a < u->nargs; a++) {
      if (u->args[a] != x) continue;
      const TirInst *o = u->args[1 - a];
      if (u->op != TIR_BINARY || u->aux != '+' || u->nargs != 2 || !o || o->op != TIR_IOTA ||
          o->aux != o->ty.rank - 1)
        return false;
    }
  }
  return true;
}

/* a tile of several columns */
static bool wide(const TirInst *x) { return x->ty.rank > 0 && x->ty.dims[x->ty.rank - 1] > 1; }

/* Each block's columns stay tied to the row's: x reads no tile of several
 * columns from outside the loop (its element j would meet column c + j in
 * the plain walk and another in the shifted one), and an iota along the
 * last axis only where splat(c) is added to it (the row's columns, not
 * the block's). */
static bool columns_kept(const TirBlock *b, const TirInst *x, const TirInst *loop) {
  for (int a = 0; a < x->nargs; a++)
    if (x->args[a] && x->args[a]->pos < loop->pos && wide(x->args[a])) return false;
  if (x->op == TIR_READ && wide(x)) return false; /* a slot of several columns: the same, from a var */
  if (x->op != TIR_IOTA || x->aux != x->ty.rank - 1 || !wide(x)) return true;
  for (int i = 0; i < b->len; i++) {
    const TirInst *u = b->insts[i];
    for (int a = 0; a < u->nargs; a++) {
      if (u->args[a] != x) continue;
      if (u->op != TIR_BINARY || u->aux != '+' || u->nargs != 2 || !splat_of(u->args[1 - a], loop)) return false;
    }
  }
  return true;
}

const TirInst *shiftwalk_leader(const Plan *p, const TirInst *loop) {
  const TirFunc *f = p->f;
  int64_t step;
  const TirInst *hi = tir_dim_loop(f, loop, &step);
  if (!hi || !p->shift_walk || p->aligned_copy || p->stages || p->prefetch || p->general_strides || f->staged)
    return NULL;
  const char *dim = f->params[hi->aux].dimname[hi->aux2];
  if (!dim) return NULL;
  const TirInst *lead = NULL;
  const TirBlock *b = &loop->body;
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->cond.len || x->body.len || x->body2.len) return NULL;
    switch (x->op) {
    case TIR_CONST:
    case TIR_PARAM:
    case TIR_DIM:
    case TIR_CTX:
    case TIR_UNARY:
    case TIR_BINARY:
    case TIR_MATH:
    case TIR_CONVERT:
    case TIR_SELECT:
    case TIR_SPLAT:
    case TIR_BROADCAST:
    case TIR_IOTA:
    case TIR_READ:
      break;
    case TIR_REDUCE: /* folded by each thread in registers (ptx/exchange.c leaves the phantoms out) */
      if (!x->plan->partial || !plan_reduce_in_regs(x)) return NULL;
      break;
    case TIR_WRITE:
      if (x->nsubs || x->args[0]->pos > loop->pos || !plan_defers_slot(loop, x->args[0])) return NULL;
      break;
    case TIR_LOAD:
    case TIR_STORE: {
      bool own;
      if (!one_row_access(f, x, loop, step, dim, &own)) return NULL;
      /* a store elsewhere would keep the last block's values; a load
       * elsewhere of several columns gives each block the same ones */
      if (!own && (x->op == TIR_STORE || wide(x))) return NULL;
      if (own && (!lead || (lead->op == TIR_STORE && x->op == TIR_LOAD))) lead = x;
      break;
    }
    default:
      return NULL;
    }
    if (x->op != TIR_LOAD && x->op != TIR_STORE && !reads_loop_ok(b, x, loop)) return NULL;
    if (x->op == TIR_STORE && x->args[0] == loop) return NULL;
    if (!columns_kept(b, x, loop)) return NULL;
  }
  if (!lead) return NULL;
  /* its row's start is read at the loop's entry */
  if (f->params[lead->aux].rank == 2 && lead->subs[0].start->pos > loop->pos) return NULL;
  Scalar te = f->params[lead->aux].elem;
  int eb = sema_scalar_bytes(te);
  if (eb < 1 || 16 % eb || step * eb % 16) return NULL;
  return lead;
}

/* c is `splat(loop) + iota < splat(D)` (either order of the sum), D the
 * loop's end: the columns of the block inside the row */
static bool cols_inside(const TirInst *c, const TirInst *loop) {
  if (!c || c->op != TIR_BINARY || c->aux != '<') return false;
  const TirInst *a = c->args[0], *b = c->args[1], *end = loop->args[1];
  if (!(b->op == TIR_SPLAT && (b->args[0] == end || (b->args[0]->op == TIR_DIM && b->args[0]->aux == end->aux &&
                                                      b->args[0]->aux2 == end->aux2))))
    return false;
  if (a->op != TIR_BINARY || a->aux != '+') return false;
  const TirInst *i = splat_of(a->args[0], loop) ? a->args[1] : splat_of(a->args[1], loop) ? a->args[0] : NULL;
  return i && i->op == TIR_IOTA && i->aux == i->ty.rank - 1;
}

/* x is the identity of reduction `red` wherever its column is at or past D:
 * where(cols < D, v, identity), or for a sum exp(z - m) of such a z with
 * -inf (the online logsumexp's: exp(-inf - m) is 0) */
static bool slack_identity(const TirInst *x, int red, const TirInst *loop) {
  if (red == TRED_SUM && x->op == TIR_MATH && x->aux == TMATH_EXP) {
    const TirInst *d = x->args[0];
    return d->op == TIR_BINARY && d->aux == '-' && slack_identity(d->args[0], TRED_MAX, loop);
  }
  if (x->op != TIR_SELECT || !cols_inside(x->args[0], loop)) return false;
  const TirInst *k = x->args[2];
  if (k->op != TIR_SPLAT || k->args[0]->op != TIR_CONST) return false;
  const TirInst *v = k->args[0];
  double f = v->ty.elem <= S_F64 ? v->fval : (double)v->ival; /* f16, bf16, f32, f64 */
  return red == TRED_SUM ? f == 0 : red == TRED_MAX ? isinf(f) && f < 0 : isinf(f) && f > 0;
}

bool shiftwalk_slack_free(const TirInst *loop) {
  const TirBlock *b = &loop->body;
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    if (x->op == TIR_REDUCE && !slack_identity(x->args[0], x->aux, loop)) return false;
  }
  return true;
}
