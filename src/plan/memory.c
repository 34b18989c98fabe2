/* memory.c: shared memory: staging buffers (`var t = <slice>`, and views
 * a dot reads), each cross-thread operation's exchange area, every access
 * to a buffer in program order, live ranges, and first-fit allocation of
 * buffers whose lives overlap into disjoint bytes. */
#include "planner.h"

PlanBuf *pl_new_buf(Planner *P, BufKind kind, const char *name, Scalar elem, int rank, const int64_t *phys,
                        TirInst *owner) {
  PlanBuf *b = arena_alloc(P->a, sizeof *b);
  b->id = P->bufs.len;
  b->kind = kind;
  b->name = name;
  b->elem = elem;
  b->rank = rank;
  for (int i = 0; i < rank; i++) b->dims[i] = phys[i];
  b->owner = owner;
  b->first = b->last = owner->pos;
  b->align = 16;
  pl_size_buf(b, ROWS_DENSE); /* the rows are decided with the copy (pl_choose_rows) */
  vec_push(P->a, &P->bufs, b);
  return b;
}

/* @padstage: a staging tile whose rows are a whole number of 128-byte
 * lines takes 8 more elements a row, so that a column spreads over the
 * banks, unless a tensor copy fills it (the copy writes rows dense; the
 * swizzle spreads the banks instead: pl_walk_tma). */
bool pl_wants_pad(const Planner *P, const PlanBuf *b) {
  int64_t row = b->rank ? b->dims[b->rank - 1] : 1;
  return P->p->padstage && (b->kind == BUF_STAGE_VAR || b->kind == BUF_STAGE_DOT) &&
         row * sema_scalar_bytes(b->elem) % 128 == 0;
}

/* A buffer's pitch and bytes with its rows laid out as `rows`: a ring
 * (stages > 0) takes that many stages, each rounded up to the buffer's
 * alignment. */
void pl_size_buf(PlanBuf *b, RowLayout rows) {
  b->pitch = (b->rank ? b->dims[b->rank - 1] : 1) + (rows == ROWS_PAD8 ? 8 : 0);
  int64_t n;
  if (!ck_prod(b->dims, b->rank - 1 > 0 ? b->rank - 1 : 0, &n) || !ck_mul(n, b->pitch, &n) ||
      !ck_mul(n, sema_scalar_bytes(b->elem), &n))
    diag_ice("plan: the size of buffer '%s' overflows", b->name); /* tiles are bounded: it cannot */
  b->bytes = n;
  if (b->stages) {
    int64_t al = b->align < 16 ? 16 : b->align;
    b->stage_bytes = (n + al - 1) / al * al;
    b->bytes = b->stage_bytes * b->stages;
  }
}

/* Each buffer's row layout, once its copy mechanism is known: a tensor
 * copy's (pl_walk_tma decided it: dense or swizzled), else @padstage's
 * padding where it applies, else dense; then its pitch and bytes. */
void pl_choose_rows(Planner *P) {
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (!b->tma_dest) b->rows = pl_wants_pad(P, b) ? ROWS_PAD8 : ROWS_DENSE;
    pl_size_buf(b, b->rows);
  }
}

/* The innermost loop (for or while) strictly containing each position:
 * every loop that contains a position is on the chain from it upward. */
void pl_enclosing_loops(Planner *P, TirBlock *blk, TirInst *loop) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    P->encl[in->pos] = loop;
    TirInst *inner = in->op == TIR_FOR || in->op == TIR_WHILE ? in : loop;
    pl_enclosing_loops(P, &in->cond, inner);
    pl_enclosing_loops(P, &in->body, inner);
    pl_enclosing_loops(P, &in->body2, inner);
  }
}

static bool contains(const TirInst *loop, int pos) { return loop->pos < pos && pos <= loop->end; }

/* Whether the slot a READ reads is written again while the value read is
 * still in use: then the value needs its own copy, it cannot stay an alias
 * of the slot's shared buffer. */
/* Who uses what (Planner.users) and where slots are written
 * (Planner.writes), built once, on first need. */
void pl_index_uses(Planner *P) {
  int n = P->f->ninsts;
  if (P->users) return;
  P->users = arena_alloc(P->a, sizeof *P->users * (size_t)(n + 1));
  P->writes = arena_alloc(P->a, sizeof *P->writes * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    TirInst *u = P->f->insts[i];
    for (int k = 0; k < u->nargs; k++)
      if (u->args[k]) vec_push(P->a, &P->users[u->args[k]->id], u);
    for (int k = 0; k < u->nsubs; k++)
      if (u->subs[k].start) vec_push(P->a, &P->users[u->subs[k].start->id], u);
    if (u->op == TIR_WRITE) vec_push(P->a, &P->writes[u->args[0]->id], u);
  }
}

static bool written_while_alive(Planner *P, const TirInst *read) {
  pl_index_uses(P);
  int end = read->pos;
  const PtrVec *us = &P->users[read->id];
  for (int i = 0; i < us->len; i++) {
    const TirInst *u = us->items[i];
    if (u->pos > end) end = u->pos;
    /* a use in a loop that the read is outside of lives through the loop */
    for (const TirInst *l = P->encl[u->pos]; l && !contains(l, read->pos); l = P->encl[l->pos])
      if (l->end > end) end = l->end;
  }
  /* a write after the read and no later than the value's last use */
  const PtrVec *ws = &P->writes[read->args[0]->id];
  int lo = 0, hi = ws->len;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (((TirInst *)ws->items[mid])->pos <= read->pos) lo = mid + 1;
    else hi = mid;
  }
  return lo < ws->len && ((TirInst *)ws->items[lo])->pos <= end;
}

/* Staging: `var t = <slice>` slots, and loads that a dot reads. */
void pl_choose_staging(Planner *P, TirInst *in) {
  if (in->op == TIR_WRITE && !in->nsubs && in->args[1]->op == TIR_LOAD && in->args[0]->ty.rank &&
      !in->args[0]->plan->buf) {
    TirInst *slot = in->args[0], *load = in->args[1];
    PlanBuf *b = pl_new_buf(P, BUF_STAGE_VAR, slot->name, slot->ty.elem, slot->ty.rank, slot->plan->phys, slot);
    slot->plan->res = RES_SHARED;
    slot->plan->buf = b;
    /* the load copies global straight into the slot's buffer, when this
     * write is all it is for (a let-bound load read elsewhere keeps its own
     * value: the slot may be rewritten while it lives) */
    if (P->use_count[load->id] == 1 && !load->plan->buf && load->pos == in->pos - 1) {
      load->plan->res = RES_SHARED;
      load->plan->buf = b;
    }
  }
  /* reading a shared slot is reading its buffer: a dot takes its operand
   * from there, not through registers and a scratch buffer */
  if (in->op == TIR_READ && in->args[0]->plan->res == RES_SHARED && !written_while_alive(P, in)) {
    in->plan->res = RES_SHARED;
    in->plan->buf = in->args[0]->plan->buf;
  }
  if (in->op == TIR_DOT) {
    for (int k = 0; k < 2; k++) {
      TirInst *opnd = in->args[k];
      if (opnd->op == TIR_LOAD && !opnd->plan->buf) {
        const char *name =
            opnd->name ? opnd->name : arena_printf(P->a, "%s view (%%%d)", P->f->params[opnd->aux].name, opnd->id);
        PlanBuf *b = pl_new_buf(P, BUF_STAGE_DOT, name, opnd->ty.elem, opnd->ty.rank, opnd->plan->phys, opnd);
        opnd->plan->res = RES_SHARED;
        opnd->plan->buf = b;
      }
    }
  }
}

/* x stored for other threads: every physical element in a 32- or 64-bit
 * word (a scalar, one), in 16-byte units */
static int64_t exchange_word_bytes(const TirInst *x) { return x->ty.elem == S_F64 || x->ty.elem == S_I64 ? 8 : 4; }

static int64_t value_exchange_bytes(const TirInst *x) {
  return ((x->ty.rank ? pl_phys_elems(x) : 1) * exchange_word_bytes(x) + 15) / 16 * 16;
}

/* A dot on mma.sync copies the operands ldmatrix cannot read where they
 * are (rows padded by 16 bytes) and, with a flat result, writes the
 * accumulators as [M, N] words for the threads to read (ptx/mma.c). */
static int64_t mma_exchange_bytes(const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  int r = in->ty.rank;
  int64_t M = plan_folded_rows(in), N = in->plan->phys[r - 1];
  bool areg = plan_a_from_regs(in), da = areg || pl_mma_direct(a), db = pl_mma_direct(b);
  int eb = sema_scalar_bytes(a->ty.elem), ce = 16 / eb;
  int64_t pa = areg ? 0 : da ? a->plan->buf->pitch : a->plan->phys[r - 1] + ce;
  int64_t pb = db ? b->plan->buf->pitch : b->plan->phys[1] + ce;
  int64_t at_b = da ? 0 : (M * pa * eb + 15) / 16 * 16;
  int64_t at_c = at_b + (db ? 0 : (b->plan->phys[0] * pb * eb + 15) / 16 * 16);
  return at_c + (pl_is_frag(in) ? 0 : M * N * 4);
}

/* The bytes of shared memory an operation needs for its exchange between
 * threads (ptx/exchange.c, ptx/dot.c, ptx/mma.c: what each stores for
 * other threads to read), or 0: a broadcast, transpose, row reduction,
 * point or sub-tile read of a register tile that no layout or reload
 * spares, a sub-tile write of one, an FMA dot's register operands, a
 * mma.sync dot's copies and flat result. */
static int64_t exchange_bytes(const TirInst *in) {
  const TirInst *x = in->nargs ? in->args[0] : NULL;
  switch (in->op) {
  case TIR_ARRIVE: /* an atomic's old value, from thread 0 to the CTA (ptx/sync.c) */
    return in->aux2 == TARRIVE_ADD || in->aux2 == TARRIVE_CAS ? 8 : 0;
  case TIR_BROADCAST:
    if (pl_is_frag(in) && pl_is_rowfrag(x) && x->ty.rank == in->ty.rank && plan_folded_rows(x) == plan_folded_rows(in))
      return 0;
    if (plan_broadcast_in_regs(in)) return 0;
    return plan_reloads(x) ? 0 : value_exchange_bytes(x);
  case TIR_TRANSPOSE:
    if (plan_transpose_in_smem(in)) /* padded rows (ptx/exchange.c, emit_transpose_smem) */
      return (x->plan->phys[0] * plan_transpose_pitch(x) * exchange_word_bytes(x) + 15) / 16 * 16;
    return plan_reloads(in) ? 0 : value_exchange_bytes(x);
  case TIR_REDUCE:
    if (in->plan->partial) return 0; /* within each thread: its loop's exit meets the rows (deferred.c) */
    if (plan_reduce_in_regs(in)) { /* the warps' partial results of each row, 8 bytes each */
      BlockGeom g = plan_block_geom(x);
      return g.wc > 1 ? g.M * g.wc * 8 : 0;
    }
    return pl_is_rowfrag(in) ? 0 : value_exchange_bytes(x);
  case TIR_FOR: { /* its deferred accumulators' warps meet at its exit, one exchange at a time */
    int64_t n = 0;
    for (const PlanDefer *d = in->plan->defer; d; d = d->next) {
      BlockGeom g = plan_block_geom(d->red->args[0]);
      if (g.wc > 1 && g.M * g.wc * 8 > n) n = g.M * g.wc * 8;
    }
    return n;
  }
  case TIR_EXTRACT: return x->plan->res == RES_SHARED ? 0 : value_exchange_bytes(x);
  case TIR_SCAN: return value_exchange_bytes(in); /* x stored, then each round's sums (ptx/exchange.c) */
  case TIR_RESHAPE: return value_exchange_bytes(x);
  case TIR_WRITE: return in->nsubs && in->args[1]->ty.rank ? value_exchange_bytes(in->args[1]) : 0;
  case TIR_DOT:
    switch (in->plan->dot) {
    case DOT_MMA: return mma_exchange_bytes(in);
    case DOT_FMA: {
      int64_t n = 0;
      for (int k = 0; k < 2; k++)
        if (in->args[k]->plan->res != RES_SHARED) n += value_exchange_bytes(in->args[k]);
      return n;
    }
    case DOT_COLUMNS: /* an A computed in registers, for every thread to read */
      return plan_dot_columns_exchanges(in) ? value_exchange_bytes(in->args[0]) : 0;
    default: return 0;
    }
  default: return 0;
  }
}

/* The tensor-core dots of p whose results are exchanged through shared
 * memory (a flat result, mma_exchange_bytes: not kept in fragments), or -1 where p has no
 * tensor-core dot: driver.c leaves such a variant out when another keeps
 * every such dot in fragments. */
int plan_mma_exchanges(const Plan *p) {
  int n = -1;
  for (int i = 0; i < p->f->ninsts; i++) {
    const TirInst *in = p->f->insts[i];
    if (!in || in->op != TIR_DOT || !in->plan || (in->plan->dot != DOT_MMA && in->plan->dot != DOT_WGMMA)) continue;
    if (n < 0) n = 0;
    n += in->plan->dot == DOT_MMA && !pl_is_frag(in);
  }
  return n;
}

/* Each exchange is a scratch buffer of its own, alive at its operation
 * only, planned like every other buffer (live ranges, byte reuse, the
 * barrier before it where other threads may still read those bytes). */
void pl_choose_exchange(Planner *P, TirInst *in) {
  int64_t n = exchange_bytes(in);
  if (!n) return;
  int64_t words = n / 4;
  const char *name = in->op == TIR_FOR ? arena_printf(P->a, "exit of loop %%%d", in->id)
                                       : arena_printf(P->a, "exchange of %%%d", in->id);
  in->plan->scratch = pl_new_buf(P, BUF_SCRATCH, name, S_I32, 1, &words, in);
}

static void add_access(Planner *P, Accesses *acc, int pos, bool write, PlanBuf *b) {
  if (acc->len == acc->cap) {
    int cap = acc->cap ? acc->cap * 2 : 32;
    Access *n = arena_alloc(P->a, sizeof *n * (size_t)cap);
    if (acc->len) memcpy(n, acc->items, sizeof *n * (size_t)acc->len);
    acc->items = n;
    acc->cap = cap;
  }
  acc->items[acc->len++] = (Access){pos, write, b};
}

/* Every access to a shared buffer, in program order. */
static void collect_accesses(Planner *P, TirBlock *blk, Accesses *acc) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    /* reads of operands that live in shared memory */
    for (int k = 0; k < in->nargs; k++) {
      TirInst *x = in->args[k];
      if (x->plan->res != RES_SHARED || x->op == TIR_VAR) continue;
      if (in->op == TIR_WRITE && k == 1 && in->args[0]->plan->buf == x->plan->buf)
        continue; /* the staging copy itself */
      add_access(P, acc, in->pos, false, x->plan->buf);
    }
    /* (a READ of a shared slot is counted where its value is used) */
    /* (a staged ring's copies inside its loop are ordered by the ring: the
     * loop waits for a stage and syncs at the top of the iteration that
     * reads it, and refills a stage only after that barrier; its first
     * copies, before the loop, count as a write at the loop's position:
     * the ring's bytes may have held a buffer other threads still read) */
    if (in->op == TIR_LOAD && in->plan->res == RES_SHARED && !in->plan->buf->stages)
      add_access(P, acc, in->pos, true, in->plan->buf);
    if (in->op == TIR_FOR)
      for (int k = 0; k < in->body.len; k++) {
        const TirInst *x = in->body.insts[k];
        if (x->op == TIR_LOAD && x->plan->res == RES_SHARED && x->plan->buf->stages)
          add_access(P, acc, in->pos, true, x->plan->buf);
      }
    /* writes into a shared slot, except the staging copy (the load wrote
     * the buffer itself, at the load) */
    if (in->op == TIR_WRITE && in->args[0]->plan->res == RES_SHARED &&
        (in->nsubs || in->args[1]->plan->buf != in->args[0]->plan->buf))
      add_access(P, acc, in->pos, true, in->args[0]->plan->buf);
    /* a read of a shared slot into registers reads the buffer here */
    if (in->op == TIR_READ && in->args[0]->plan->res == RES_SHARED && in->plan->res != RES_SHARED)
      add_access(P, acc, in->pos, false, in->args[0]->plan->buf);
    const PtrVec *owned = &P->scratch_of[in->id];
    for (int b = 0; b < owned->len; b++) {
      add_access(P, acc, in->pos, true, owned->items[b]);
      add_access(P, acc, in->pos, false, owned->items[b]);
    }
    collect_accesses(P, &in->cond, acc);
    collect_accesses(P, &in->body, acc);
    collect_accesses(P, &in->body2, acc);
  }
}

Accesses pl_accesses(Planner *P) {
  P->scratch_of = arena_alloc(P->a, sizeof *P->scratch_of * (size_t)(P->f->ninsts + 1));
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_SCRATCH) vec_push(P->a, &P->scratch_of[b->owner->id], b);
  }
  Accesses acc = {0};
  collect_accesses(P, &P->f->body, &acc);
  for (int i = 1; i < acc.len; i++)
    if (acc.items[i].pos < acc.items[i - 1].pos) diag_ice("plan: shared accesses out of program order");
  P->p->nbufs = P->bufs.len;
  P->p->bufs = (PlanBuf **)P->bufs.items;
  return acc;
}

/* The first access at a position >= pos: pl_collect_accesses lists them in
 * program order (an instruction's own, then those of its blocks, numbered
 * after it in the same order). */
int pl_acc_lower(const Accesses *acc, int pos) {
  int lo = 0, hi = acc->len;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (acc->items[mid].pos < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* A buffer lives from its first access to its last, and through the whole
 * of any loop that touches it but does not contain its definition (the
 * next iteration reads what this one left). Those loops are the ones
 * around its accesses, found up the chain of enclosing loops; growing the
 * range over one never changes which others qualify, so the range is the
 * hull of the accesses and all of them. */
void pl_live_ranges(Planner *P, Accesses *acc) {
  int nb = P->bufs.len;
  int *count = arena_alloc(P->a, sizeof(int) * (size_t)(nb + 1)),
      *start = arena_alloc(P->a, sizeof(int) * (size_t)(nb + 2));
  int *at = arena_alloc(P->a, sizeof(int) * (size_t)(acc->len + 1)); /* access positions, buffer by buffer */
  for (int i = 0; i < acc->len; i++) count[acc->items[i].buf->id]++;
  for (int b = 0; b < nb; b++) start[b + 1] = start[b] + count[b];
  for (int b = 0; b < nb; b++) count[b] = 0;
  for (int i = 0; i < acc->len; i++) {
    int b = acc->items[i].buf->id;
    at[start[b] + count[b]++] = acc->items[i].pos;
  }
  int *seen = arena_alloc(P->a, sizeof(int) * (size_t)(P->f->ninsts + 1)); /* by loop id: 1 + the last buffer done */
  for (int b = 0; b < nb; b++) {
    PlanBuf *buf = P->bufs.items[b];
    if (buf->kind == BUF_RING || buf->kind == BUF_MBAR || buf->stages)
      continue; /* live over their loop, set when made */
    int def = buf->owner->pos, first = def, last = def;
    for (int i = start[b]; i < start[b + 1]; i++) {
      if (i == start[b] || at[i] < first) first = at[i];
      if (i == start[b] || at[i] > last) last = at[i];
    }
    for (int i = start[b]; i < start[b + 1]; i++)
      for (TirInst *l = P->encl[at[i]]; l && seen[l->id] != b + 1; l = P->encl[l->pos]) {
        seen[l->id] = b + 1;
        if (contains(l, def)) continue;
        if (first > l->pos) first = l->pos;
        if (last < l->end) last = l->end;
      }
    /* a row reduction's partials (a few words a row) keep their bytes over
     * their loop: two reductions of one iteration then never share bytes,
     * and each one's barrier orders the other's rewrite (no barrier before
     * either) */
    TirInst *l = P->encl[def];
    if (buf->kind == BUF_SCRATCH && l && plan_reduce_in_regs(buf->owner)) {
      if (first > l->pos) first = l->pos;
      if (last < l->end) last = l->end;
    }
    /* a loop's exchange at its exit (deferred.c) keeps its bytes over the
     * loop: nothing in the loop shares them, so no planned barrier there is
     * ever for it; the exit's own barriers order it with what comes after */
    if (buf->kind == BUF_SCRATCH && buf->owner->op == TIR_FOR && last < buf->owner->end) last = buf->owner->end;
    buf->first = first;
    buf->last = last;
  }
}

/* Allocation order: by first use, the larger first; mbarriers (8 bytes a
 * slot) last, into a gap that an aligned buffer (1024 for a swizzled one)
 * left below it. */
static int cmp_buf(const void *x, const void *y) {
  const PlanBuf *a = *(PlanBuf *const *)x, *b = *(PlanBuf *const *)y;
  if ((a->kind == BUF_MBAR) != (b->kind == BUF_MBAR)) return a->kind == BUF_MBAR ? 1 : -1;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->id - b->id;
}

static bool lives_overlap(const PlanBuf *a, const PlanBuf *b) { return a->first <= b->last && b->first <= a->last; }
bool pl_bytes_overlap(const PlanBuf *a, const PlanBuf *b) {
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

static int cmp_offset(const void *x, const void *y) {
  const PlanBuf *a = *(PlanBuf *const *)x, *b = *(PlanBuf *const *)y;
  if (a->offset != b->offset) return a->offset < b->offset ? -1 : 1;
  return a->id - b->id;
}

/* Inserts b into by[0..n), kept in order of offset. */
static void insert_by_offset(PlanBuf **by, int n, PlanBuf *b) {
  int at = n;
  while (at > 0 && cmp_offset(&by[at - 1], &b) > 0) at--;
  memmove(by + at + 1, by + at, sizeof *by * (size_t)(n - at));
  by[at] = b;
}

/* The lowest offset, aligned for b, at which b overlaps none of the placed
 * buffers alive with it: bumped past each one that overlaps. Scanned once
 * in order of offset (by[] sorted so) this is exact: a buffer that starts
 * at or past b's end ends the scan, since all later ones start later. */
static int64_t first_fit(PlanBuf *b, PlanBuf *const *by, int n, const PlanBuf *shun) {
  int64_t off = 0;
  for (int j = 0; j < n; j++) {
    const PlanBuf *o = by[j];
    if (o->offset >= off + b->bytes) break;
    if ((o == shun || lives_overlap(b, o)) && o->offset + o->bytes > off)
      off = (o->offset + o->bytes + b->align - 1) / b->align * b->align;
  }
  return off;
}

/* A small exchange area does not take the bytes of the exchange just
 * before it: two in a row (a LayerNorm's two row sums across warps) would
 * otherwise need a barrier between the first's reads and the second's
 * writes. On bytes of their own the second's inner barrier already orders
 * the first's reads before a third that reuses the first's bytes. */
enum { SCRATCH_ALTERNATE_BYTES = 4096 };

/* First fit: each buffer takes the lowest 16-byte aligned offset that no
 * buffer alive at the same time occupies. The buffers other than the
 * mbarriers are placed in order of first use: only those still alive
 * then can be in the way (a buffer that died before one's first use is
 * dropped, as the buffers after it start no earlier, cmp_buf), looked at
 * in order of offset. The mbarriers go last, each against every placed
 * buffer in order of offset. (The scan over every placed buffer, repeated
 * until nothing moved, took 1.5 s for 5,000 tensor copies' mbarriers
 * among 15,000 buffers.) */
void pl_allocate(Planner *P) {
  int n = P->bufs.len;
  PlanBuf **order = arena_alloc(P->a, sizeof(PlanBuf *) * (size_t)(n + 1));
  PlanBuf **live = arena_alloc(P->a, sizeof(PlanBuf *) * (size_t)(n + 1));
  int nlive = 0, i = 0;
  for (int k = 0; k < n; k++) order[k] = P->bufs.items[k];
  qsort(order, (size_t)n, sizeof *order, cmp_buf);
  int64_t top = 0;
  PlanBuf *prev_scratch = NULL; /* kept in live[] while it is the last small exchange */
  for (; i < n && order[i]->kind != BUF_MBAR; i++) {
    PlanBuf *b = order[i];
    bool small = b->kind == BUF_SCRATCH && b->bytes <= SCRATCH_ALTERNATE_BYTES;
    int k = 0;
    for (int j = 0; j < nlive; j++)
      if (live[j]->last >= b->first || live[j] == prev_scratch) live[k++] = live[j];
    nlive = k;
    b->offset = first_fit(b, live, nlive, small ? prev_scratch : NULL);
    insert_by_offset(live, nlive++, b);
    if (small) prev_scratch = b;
  }
  /* the mbarriers, against everything placed, in order of offset */
  int placed = i;
  PlanBuf **by = arena_alloc(P->a, sizeof(PlanBuf *) * (size_t)(n + 1));
  memcpy(by, order, sizeof *by * (size_t)placed);
  qsort(by, (size_t)placed, sizeof *by, cmp_offset);
  for (; i < n; i++) {
    PlanBuf *b = order[i];
    b->offset = first_fit(b, by, placed, NULL);
    insert_by_offset(by, placed++, b);
  }
  for (int k = 0; k < n; k++) {
    int64_t end;
    if (!ck_add(order[k]->offset, order[k]->bytes, &end)) diag_ice("plan: shared memory offsets overflow");
    if (end > top) top = end;
  }
  P->p->shared_bytes = top;
}

/* the bytes of a dense tile of physical dims phys */
int64_t pl_phys_bytes(const int64_t *phys, int rank, Scalar elem) {
  int64_t n;
  if (!ck_prod(phys, rank, &n) || !ck_mul(n, sema_scalar_bytes(elem), &n)) diag_ice("plan: a tile's bytes overflow");
  return n;
}

/* a staged tile's bytes, dense: what its copy writes */
int64_t pl_tile_bytes(const PlanBuf *b) { return pl_phys_bytes(b->dims, b->rank, b->elem); }

int64_t plan_buf_rows(const PlanBuf *b) {
  int64_t r = 1;
  for (int d = 0; d + 1 < b->rank; d++) r *= b->dims[d];
  return r;
}
