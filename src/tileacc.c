/* tileacc.c: tile accumulators that only a reduction after their loop
 * reads, made row accumulators (spec 15.23).
 *
 * The Triton tutorials' layer norm sums a row in a tile as wide as a block:
 *
 *     var acc: tile<f32>[BS] = 0.0
 *     for off in range(0, N, BS) { acc += f32(X[row, off :+ BS]) }
 *     let mean = rowsum(acc) / f32(N)
 *
 * `acc` takes BS / threads registers a thread for the whole loop (32 at BS
 * 4096 over 128 threads), and its loop matches none of deferred.c's
 * shapes. Nothing but the reduction after the loop reads `acc`, and
 * rowsum(init + x1 + x2 + ..) is rowsum(init) + rowsum(x1) + rowsum(x2) +
 * .. reassociated (as the deferred reductions of spec 15.15 reassociate
 * already), so the slot becomes a row value `[.., 1]`: its start is the
 * reduction of the old start (a splat of the op's identity stays a
 * splat), each update adds (or maxes in) the reduction of its operand, and
 * the reduction after the loop reads the slot. The planner then defers the
 * update's reduction to the loop's exit (deferred.c): each thread keeps
 * one running register of its own elements, and the row's threads meet
 * once.
 *
 * The match, on the IR as lowered:
 * - a `var` of a tile (its last dim > 1) of f32, f64, i32 or i64 (the
 *   narrower types round after every operation, and deferred.c keeps
 *   them out);
 * - written whole exactly twice: once before a `for` loop and once
 *   directly in its body, `v = read(v) + x` or `v = tmax(read(v), x)` (in
 *   either operand order), the read and the operation used only there;
 * - read elsewhere only after that loop, each such read used only by
 *   reductions of the same kind (`rowsum` for `+`, `rowmax` for `tmax`).
 * Or, with no loop: written first and then by updates of that shape one
 * after another in the same block (a one-pass copy's unrolled loops, spec
 * 15.13), each read after the write before it; every other read after the
 * last update. Each update then reduces its operand where it stands (a
 * meeting each: no loop is left to defer it to), which is what the
 * layer-norm port rewritten by hand did, 162 -> 128 registers and 7%
 * faster in its copy over two blocks (H200, 12-05h call 1).
 * Kernels with a dot or @pipeline, loops that hold an arrive, and
 * staged-rows copies are left alone: their loops keep their accumulators
 * (deferred.c would not defer their reductions, and a reduction every
 * iteration costs more than the tile). `phobosc --no-deferred-reductions`
 * keeps every tile accumulator too (KernelInfo.keep_tile_accs). */
#include <string.h>

#include "tir.h"

typedef struct TileAcc {
  Arena *a;
  TirFunc *f;
  TirBlock **blk; /* by id: the block that holds the instruction */
  TirInst **loop; /* by id: the for loop whose body is that block, or NULL */
} TileAcc;

static void index_block(TileAcc *t, TirBlock *b, TirInst *owner) {
  for (int i = 0; i < b->len; i++) {
    TirInst *x = b->insts[i];
    t->blk[x->id] = b;
    t->loop[x->id] = owner && owner->op == TIR_FOR && b == &owner->body ? owner : NULL;
    index_block(t, &x->cond, x);
    index_block(t, &x->body, x);
    index_block(t, &x->body2, x);
  }
}

/* the instructions that read x (each once), up to max; -1 past max */
static int users(const TirFunc *f, const TirInst *x, TirInst **out, int max) {
  int n = 0;
  for (int i = 0; i < f->ninsts; i++) {
    TirInst *y = f->insts[i];
    if (!y) continue;
    bool reads = y->cond_value == x;
    for (int k = 0; k < y->nargs; k++) reads |= y->args[k] == x;
    for (int k = 0; k < y->nsubs; k++) reads |= y->subs[k].start == x;
    if (!reads) continue;
    if (n == max) return -1;
    out[n++] = y;
  }
  return n;
}

static void insert_before(Arena *a, TirBlock *b, const TirInst *at, TirInst *x) {
  tir_append(a, b, x); /* grows the block; x then moves to at's place */
  int i = b->len - 1;
  for (; i > 0 && b->insts[i - 1] != at; i--) b->insts[i] = b->insts[i - 1];
  b->insts[i] = b->insts[i - 1];
  b->insts[i - 1] = x;
}

static void remove_from(TirBlock *b, const TirInst *x) {
  int w = 0;
  for (int i = 0; i < b->len; i++)
    if (b->insts[i] != x) b->insts[w++] = b->insts[i];
  b->len = w;
}

/* a loop with an arrive keeps its accumulators, as deferred.c would not
 * defer their reductions (a kernel with a dot is never matched) */
static bool has_arrive(const TirBlock *b) {
  for (int k = 0; k < b->len; k++) {
    const TirInst *x = b->insts[k];
    if (x->op == TIR_ARRIVE || has_arrive(&x->cond) || has_arrive(&x->body) || has_arrive(&x->body2)) return true;
  }
  return false;
}

static bool full_width(Scalar s) { return s == S_F32 || s == S_F64 || s == S_I32 || s == S_I64; }

static bool is_zero(const TirInst *c) {
  return c->op == TIR_CONST && (c->ty.elem == S_F32 || c->ty.elem == S_F64 ? c->fval == 0.0 : c->ival == 0);
}

enum { MAX_USES = 16 };

/* An update `v = read(v) op x` (op + or tmax, either operand order), its
 * operation and read used only there and in blk: its operation (NULL
 * where it does not match), *ru the read, *e the other operand */
static TirInst *update_of(const TileAcc *t, const TirInst *v, const TirInst *w, const TirBlock *blk, TirInst **ru,
                          TirInst **e) {
  TirInst *h = w->args[1], *hu[2], *ruu[2];
  if (h->op != TIR_BINARY || (h->aux != '+' && h->aux != TOP_MAX) || users(t->f, h, hu, 2) != 1 || t->blk[h->id] != blk)
    return NULL;
  int side = -1;
  for (int k = 0; k < 2; k++)
    if (h->args[k]->op == TIR_READ && h->args[k]->args[0] == v) side = k;
  if (side < 0 || (h->args[1 - side]->op == TIR_READ && h->args[1 - side]->args[0] == v)) return NULL;
  *ru = h->args[side], *e = h->args[1 - side];
  if (users(t->f, *ru, ruu, 2) != 1 || t->blk[(*ru)->id] != blk) return NULL;
  return h;
}

/* whether rd is one of the updates' reads ru[0..nu) */
static bool update_read(const TirInst *rd, TirInst *const *ru, int nu) {
  for (int j = 0; j < nu; j++)
    if (rd == ru[j]) return true;
  return false;
}

/* rewrites v where it matches; whether it did */
static bool try_var(TileAcc *t, TirInst *v) {
  TirFunc *f = t->f;
  int r = v->ty.rank;
  if (r < 1 || v->ty.dims[r - 1] < 2 || !full_width(v->ty.elem)) return false;
  TirInst *us[MAX_USES], *wr[MAX_USES], *rd[MAX_USES];
  int n = users(f, v, us, MAX_USES), nw = 0, nr = 0;
  if (n < 3) return false;
  for (int i = 0; i < n; i++) {
    TirInst *y = us[i];
    if (y->op == TIR_WRITE && y->args[0] == v && y->nsubs == 0) wr[nw++] = y;
    else if (y->op == TIR_READ && y->args[0] == v) rd[nr++] = y;
    else return false;
  }
  if (nw < 2) return false;
  for (int i = 1; i < nw; i++) /* program order */
    for (int j = i; j > 0 && wr[j]->pos < wr[j - 1]->pos; j--) {
      TirInst *x = wr[j];
      wr[j] = wr[j - 1], wr[j - 1] = x;
    }
  /* the start, then either one update directly in a for loop's body after
   * it, or (a one-pass copy's unrolled loops, spec 15.13) updates one after
   * another in the start's own block */
  TirInst *wi = wr[0], *L = NULL, *h[MAX_USES], *ru[MAX_USES], *e[MAX_USES];
  int nu = nw - 1;
  const TirBlock *ub = t->blk[wi->id];
  if (nw == 2 && t->loop[wr[1]->id]) {
    L = t->loop[wr[1]->id];
    if (wi->pos >= L->pos || has_arrive(&L->body)) return false;
    ub = &L->body;
  } else {
    for (int j = 1; j < nw; j++)
      if (t->blk[wr[j]->id] != ub) return false;
  }
  int tred = -1;
  for (int j = 0; j < nu; j++) {
    h[j] = update_of(t, v, wr[j + 1], ub, &ru[j], &e[j]);
    if (!h[j]) return false;
    int k = h[j]->aux == '+' ? TRED_SUM : TRED_MAX;
    if (tred >= 0 && k != tred) return false;
    tred = k;
    /* a straight update reads what the write before it wrote */
    if (!L && ru[j]->pos < wr[j]->pos) return false;
  }
  /* every other read: after the loop (the last update), read only by
   * reductions of the kind */
  int after = L ? L->end : wr[nw - 1]->pos;
  TirInst *red[MAX_USES * MAX_USES];
  int nred = 0;
  for (int i = 0; i < nr; i++) {
    if (update_read(rd[i], ru, nu)) continue;
    if (rd[i]->pos <= after) return false;
    TirInst *ys[MAX_USES];
    int m = users(f, rd[i], ys, MAX_USES);
    if (m < 1) return false;
    for (int j = 0; j < m; j++) {
      if (ys[j]->op != TIR_REDUCE || ys[j]->aux != tred || ys[j]->args[0] != rd[i]) return false;
      red[nred++] = ys[j];
    }
  }
  if (!nred) return false;
  TirType rt = v->ty;
  rt.dims[r - 1] = 1;
  /* the start: the old start's reduction (the identity's splat stays one) */
  TirInst *x0 = wi->args[1], *s;
  if (x0->op == TIR_SPLAT && (tred == TRED_MAX || is_zero(x0->args[0]))) {
    s = tir_new(t->a, f, TIR_SPLAT, rt);
    s->args[s->nargs++] = x0->args[0];
  } else {
    s = tir_new(t->a, f, TIR_REDUCE, rt);
    s->aux = tred;
    s->args[s->nargs++] = x0;
  }
  s->span = wi->span;
  insert_before(t->a, t->blk[wi->id], wi, s);
  TirInst *x0u[2];
  if (x0->op == TIR_SPLAT && s->op == TIR_SPLAT && users(f, x0, x0u, 2) == 1) remove_from(t->blk[x0->id], x0);
  wi->args[1] = s;
  v->ty = wi->ty = rt;
  /* each update: the slot's row value and the reduction of the operand */
  for (int j = 0; j < nu; j++) {
    TirInst *q = tir_new(t->a, f, TIR_REDUCE, rt);
    q->aux = tred;
    q->args[q->nargs++] = e[j];
    q->span = h[j]->span;
    q->tileacc_update = L != NULL;
    insert_before(t->a, t->blk[h[j]->id], h[j], q);
    h[j]->args[h[j]->args[0] == ru[j] ? 1 : 0] = q;
    h[j]->ty = ru[j]->ty = wr[j + 1]->ty = rt;
  }
  /* each reduction after the loop reads the slot */
  for (int i = 0; i < nred; i++) {
    red[i]->op = TIR_READ;
    red[i]->aux = 0;
    red[i]->args[0] = v;
  }
  for (int i = 0; i < nr; i++)
    if (!update_read(rd[i], ru, nu)) remove_from(t->blk[rd[i]->id], rd[i]);
  return true;
}

/* the block and loop tables, for f as numbered now */
static void index_func(TileAcc *t) {
  size_t n = (size_t)t->f->ninsts + 1;
  t->blk = arena_alloc(t->a, sizeof(TirBlock *) * n);
  t->loop = arena_alloc(t->a, sizeof(TirInst *) * n);
  memset(t->blk, 0, sizeof(TirBlock *) * n);
  memset(t->loop, 0, sizeof(TirInst *) * n);
  index_block(t, &t->f->body, NULL);
}

void tileacc_rows(Arena *a, TirFunc *f) {
  if (f->staged || f->info->keep_tile_accs || f->info->pipeline_stages || tir_has_dot(&f->body)) return;
  int nv = 0;
  TirInst **vars = arena_alloc(a, sizeof(TirInst *) * (size_t)(f->ninsts + 1));
  for (int i = 0; i < f->ninsts; i++)
    if (f->insts[i] && f->insts[i]->op == TIR_VAR) vars[nv++] = f->insts[i];
  if (!nv) return;
  TileAcc t = {.a = a, .f = f};
  index_func(&t);
  for (int i = 0; i < nv; i++)
    if (t.blk[vars[i]->id] && try_var(&t, vars[i])) {
      tir_number(a, f); /* positions, ids and f->insts changed: the tables again for the next var */
      index_func(&t);
    }
}
