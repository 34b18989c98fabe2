/* barriers.c: barriers only where a thread reads bytes another thread
 * wrote, or writes bytes another thread may still read: a walk over the
 * kernel with the buffers dirty and read since the last barrier (loops
 * walked to their fixed point, memoized by state), then each barrier moved
 * up its block past register work. */
#include "planner.h"

typedef struct Hazards {
  PlanBuf *dirty[64]; /* written since the last barrier */
  int ndirty;
  PlanBuf *read[64];  /* read since the last barrier */
  int nread;
} Hazards;

static bool overlaps_any(PlanBuf **set, int n, const PlanBuf *b, bool other_only) {
  for (int i = 0; i < n; i++)
    if (pl_bytes_overlap(set[i], b) && (!other_only || set[i] != b)) return true;
  return false;
}

/* One barrier a position: asking again keeps the first reason. */
static void add_barrier(Planner *P, int pos, const char *why) {
  PlanBarrier **slot = pos >= 0 ? &P->bar_at[pos] : &P->bar_within[-1 - pos];
  if (*slot) return;
  PlanBarrier *b = arena_alloc(P->a, sizeof *b);
  b->pos = pos;
  b->why = why;
  vec_push(P->a, &P->barriers, b);
  *slot = b;
}

/* Adds b to a hazard set once; a full set is emptied by a barrier, which
 * is always safe. */
static void note(Planner *P, Hazards *h, PlanBuf **set, int *n, PlanBuf *b, int pos) {
  for (int i = 0; i < *n; i++)
    if (set[i] == b) return;
  if (*n == 64) {
    add_barrier(P, pos, arena_printf(P->a, "more than 64 buffers in flight before %%%d", pos));
    h->ndirty = h->nread = 0;
  }
  set[(*n)++] = b;
}

static void hazards_at(Planner *P, Hazards *h, Accesses *acc, int pos) {
  for (int i = pl_acc_lower(acc, pos); i < acc->len && acc->items[i].pos == pos; i++) {
    Access *x = &acc->items[i];
    bool scratch_pair = x->buf->kind == BUF_SCRATCH;
    if (!x->write) {
      if (scratch_pair) continue; /* its barrier is counted with the write */
      if (overlaps_any(h->dirty, h->ndirty, x->buf, false)) {
        add_barrier(P, pos, arena_printf(P->a, "%s is read after other threads wrote it", x->buf->name));
        h->ndirty = h->nread = 0;
      }
      note(P, h, h->read, &h->nread, x->buf, pos);
    } else {
      if (overlaps_any(h->read, h->nread, x->buf, false) || overlaps_any(h->dirty, h->ndirty, x->buf, true)) {
        add_barrier(P, pos, arena_printf(P->a, "%s is rewritten while other threads may still read it", x->buf->name));
        h->ndirty = h->nread = 0;
      }
      if (scratch_pair) {
        /* written and read back within the instruction: one barrier inside,
         * which orders every access before the instruction as any barrier
         * does; the instruction's own reads of other buffers may come
         * after it (a dot reads its staged operand after exchanging the
         * other), so they stay pending. (The one instruction that also
         * writes another buffer, a sub-tile write into a shared slot, ends
         * on a barrier of its own: ptx/sync.c, px_publish_write.) */
        add_barrier(P, -1 - pos, arena_printf(P->a, "%s is written and read back", x->buf->name));
        h->ndirty = h->nread = 0;
        for (int j = pl_acc_lower(acc, pos); j < acc->len && acc->items[j].pos == pos; j++) {
          Access *y = &acc->items[j];
          if (y->buf != x->buf && !y->write) note(P, h, h->read, &h->nread, y->buf, pos);
        }
        note(P, h, h->read, &h->nread, x->buf, pos);
        continue;
      }
      note(P, h, h->dirty, &h->ndirty, x->buf, pos);
    }
  }
}

/* h becomes the union of h and o (what either path leaves pending). */
static void merge(Planner *P, Hazards *h, Hazards *o, int pos) {
  for (int k = 0; k < o->ndirty; k++) note(P, h, h->dirty, &h->ndirty, o->dirty[k], pos);
  for (int k = 0; k < o->nread; k++) note(P, h, h->read, &h->nread, o->read[k], pos);
}

static bool same_hazards(const Hazards *a, const Hazards *b) {
  return a->ndirty == b->ndirty && a->nread == b->nread &&
         !memcmp(a->dirty, b->dirty, sizeof a->dirty[0] * (size_t)a->ndirty) &&
         !memcmp(a->read, b->read, sizeof a->read[0] * (size_t)a->nread);
}

/* A loop's walk from a given state: what it leaves (below). */
typedef struct WalkMemo {
  Hazards in, out;
  struct WalkMemo *next;
} WalkMemo;

static void barrier_walk(Planner *P, TirBlock *blk, Hazards *h, Accesses *acc);

static void walk_inst(Planner *P, TirInst *in, Hazards *h, Accesses *acc) {
  /* a value's operands are read before the instruction writes its result */
  hazards_at(P, h, acc, in->pos);
  if ((in->op == TIR_FOR || in->op == TIR_WHILE) && h->ndirty) {
    /* a buffer written before the loop and read in it, but not written
     * in it: one barrier before the loop, not one in every iteration */
    int from = pl_acc_lower(acc, in->pos + 1), to = pl_acc_lower(acc, in->end + 1); /* the accesses in the loop */
    for (int k = from; k < to; k++) {
      const Access *x = &acc->items[k];
      if (x->write || !overlaps_any(h->dirty, h->ndirty, x->buf, false)) continue;
      bool rewritten = false;
      for (int w = from; w < to && !rewritten; w++)
        rewritten = acc->items[w].write && pl_bytes_overlap(acc->items[w].buf, x->buf);
      if (!rewritten) {
        add_barrier(P, in->pos,
                    arena_printf(P->a, "%s is read in the loop after other threads wrote it before", x->buf->name));
        h->ndirty = h->nread = 0;
        break;
      }
    }
  }
  if (in->op == TIR_FOR || in->op == TIR_WHILE) {
    /* twice: the second pass sees what the end of an iteration leaves
     * for the start of the next; then the exit condition. The loop may
     * also not run at all: what follows sees either state. */
    Hazards skip = *h;
    barrier_walk(P, &in->cond, &skip, acc);
    for (int pass = 0; pass < 2; pass++) {
      barrier_walk(P, &in->cond, h, acc);
      barrier_walk(P, &in->body, h, acc);
    }
    barrier_walk(P, &in->cond, h, acc);
    merge(P, h, &skip, in->end + 1);
  } else if (in->op == TIR_IF) {
    Hazards h2 = *h;
    barrier_walk(P, &in->body, h, acc);
    barrier_walk(P, &in->body2, &h2, acc);
    /* after the branch: the union of what either side left */
    merge(P, h, &h2, in->end + 1);
  }
}

/* Walking a loop's body twice would double the work with each level of
 * nesting (40 nested loops: 2^40 walks). A walk is a function of the state
 * it starts from: it ends in the same state and asks for the same barriers
 * (add_barrier keeps the first reason given for a position, so asking
 * again changes nothing). So each loop remembers the states it was walked
 * from and what they left, and a state seen before is not walked again:
 * the plan is the one the full walk makes. */
static void barrier_walk(Planner *P, TirBlock *blk, Hazards *h, Accesses *acc) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    if (in->op != TIR_FOR && in->op != TIR_WHILE) {
      walk_inst(P, in, h, acc);
      continue;
    }
    WalkMemo *m = P->walked[in->id];
    while (m && !same_hazards(&m->in, h)) m = m->next;
    if (m) {
      *h = m->out;
      continue;
    }
    m = arena_alloc(P->a, sizeof *m);
    m->in = *h;
    walk_inst(P, in, h, acc);
    m->out = *h;
    m->next = P->walked[in->id];
    P->walked[in->id] = m;
  }
}

/* Moves each barrier up its block to just after the last instruction that
 * touches shared memory, loads from global memory or holds control flow:
 * the shared accesses it separates stay on the same sides, the global
 * loads are issued before the wait (their latency overlaps it), and the
 * register work in between (a weight tile's conversion) runs after it, so
 * only the loaded words are live across the wait and ptxas may interleave
 * that work with what follows. */
static bool touches_shared(const Accesses *acc, const TirInst *in) {
  int i = pl_acc_lower(acc, in->pos);
  return i < acc->len && acc->items[i].pos <= in->end;
}

static void hoist_barriers(Planner *P, TirBlock *blk, const Accesses *acc) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    hoist_barriers(P, &in->cond, acc);
    hoist_barriers(P, &in->body, acc);
    hoist_barriers(P, &in->body2, acc);
    PlanBarrier *bar = P->bar_at[in->pos];
    if (!bar) continue;
    int to = in->pos;
    for (int j = i - 1; j >= 0; j--) {
      const TirInst *x = blk->insts[j];
      if (x->op == TIR_FOR || x->op == TIR_WHILE || x->op == TIR_IF || x->op == TIR_LOAD || touches_shared(acc, x))
        break;
      to = x->pos;
    }
    if (to == in->pos) continue;
    P->bar_at[in->pos] = NULL;
    if (P->bar_at[to]) { /* one barrier there already serves both */
      bar->pos = INT_MIN;
    } else {
      bar->pos = to;
      P->bar_at[to] = bar;
    }
  }
}

static int cmp_barrier(const void *x, const void *y) {
  const PlanBarrier *a = x, *b = y;
  int pa = a->pos < 0 ? -1 - a->pos : a->pos, pb = b->pos < 0 ? -1 - b->pos : b->pos;
  return pa != pb ? pa - pb : a->pos - b->pos;
}

/* The plan's barriers, in program order (a barrier within an instruction
 * before one before the next). */
void pl_place_barriers(Planner *P, Accesses *acc) {
  int n = P->f->ninsts;
  Hazards h = {0};
  P->walked = arena_alloc(P->a, sizeof *P->walked * (size_t)(n + 1));
  P->bar_at = arena_alloc(P->a, sizeof *P->bar_at * (size_t)(n + 2));
  P->bar_within = arena_alloc(P->a, sizeof *P->bar_within * (size_t)(n + 2));
  barrier_walk(P, &P->f->body, &h, acc);
  hoist_barriers(P, &P->f->body, acc);
  int kept = 0; /* less those hoisting merged into another */
  for (int i = 0; i < P->barriers.len; i++)
    if (((PlanBarrier *)P->barriers.items[i])->pos != INT_MIN) P->barriers.items[kept++] = P->barriers.items[i];
  Plan *p = P->p;
  p->nbarriers = kept;
  p->barriers = arena_alloc(P->a, sizeof(PlanBarrier) * (size_t)(kept + 1));
  for (int i = 0; i < kept; i++) p->barriers[i] = *(PlanBarrier *)P->barriers.items[i];
  qsort(p->barriers, (size_t)kept, sizeof *p->barriers, cmp_barrier);
}
