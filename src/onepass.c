/* onepass.c: a kernel's one-pass variant, for rows that fit one block.
 *
 * A row kernel written for rows of any length walks the row in blocks,
 * often twice: softmax's max and sum, then its outputs; LayerNorm's sums,
 * then the normalized row. Each pass loads the row again. When the row fits
 * one block (N <= BN), every such loop runs once, and the second pass's
 * loads read what the first pass's did: the row could stay in registers and
 * the kernel read memory once.
 *
 * onepass_variant makes that kernel from a freshly lowered copy of a
 * variant: every loop `for c in range(0, D, S)` over one tensor dim D with a
 * constant step becomes its body with c = 0 (it runs once when D <= the
 * least such step, and D >= 1 always), then a load that repeats an earlier
 * one (the same tensor, the same subscripts by value, the same tile) with no
 * store or arrive between them in program order reads the earlier one's
 * value. The copy is kept only when a load of one loop is so merged into a
 * load of another: a single loop (a GEMM's K loop, attention's KV loop)
 * gains nothing and adds no variant. The runtime launches the variant only
 * when D is at most the bound (the manifest's dims_at_most, spec 17.3),
 * beside the variant it came from; the autotuner times both.
 *
 * Rows a little longer than the block (LayerNorm over 5120 columns in
 * blocks of 4096, Triton's tutorial shape) get a copy over two blocks:
 * the kernel lowered again with each such loop as exactly two copies of
 * its body (c = 0, then c = S; lower_kernel_unrolled), the same merge,
 * launched where S < D <= 2 S (dims_above and dims_at_most). Every loop's
 * step must be the same S for the trip counts to be exact. Its last pass
 * stores the first block before it reads the second, so a store there
 * kills only the loads of its own tensor; a load merged across a store to
 * another tensor is read before that store, which is right where the two
 * tensors share no bytes: the manifest lists such tensors (apart) and the
 * runtime launches the copy only where no written tensor overlaps them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tir.h"

typedef struct Once {
  TirFunc *f;
  TirInst **map;    /* by id: the value an instruction's uses read instead (NULL: itself) */
  int *loop;        /* by id: 1 + the index of the spliced loop an instruction came from (0: none) */
  const char *dimname; /* the dim the spliced loops run over */
  int64_t bound;    /* the least step of those loops */
  int64_t most;     /* the greatest */
  int nloops;
  TirInst **avail;  /* loads available for reuse, innermost last */
  int navail, floor; /* entries below floor were killed by a store */
  int merged;       /* loads of one spliced loop merged into another's */
  /* a copy over several blocks (across): a store kills only the loads of
   * its own tensor, and a load merged across a store to another tensor
   * puts its tensor in apart (the runtime launches the copy only where no
   * written tensor overlaps it, spec 15.13) */
  bool across;
  uint64_t apart;
  int stores;       /* stores met so far */
  int *avail_stores; /* by entry: stores met when it was made available */
  bool *avail_dead;  /* by entry: killed by a store to its tensor */
} Once;

static TirInst *resolve(const Once *o, TirInst *in) {
  for (int guard = 0; in && o->map[in->id] && guard < 64; guard++) in = o->map[in->id];
  return in;
}

/* The first such loop's dim is the one specialized; the bound is the least
 * step over every loop on a dim of that name (any tensor's). */
static void find_loops(Once *o, const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    int64_t s;
    const char *name = tir_dim_loop_name(o->f, in, &s);
    if (name && (!o->dimname || !strcmp(name, o->dimname))) {
      if (!o->dimname) o->dimname = name, o->bound = o->most = s;
      if (s < o->bound) o->bound = s;
      if (s > o->most) o->most = s;
      o->nloops++;
    }
    find_loops(o, &in->cond);
    find_loops(o, &in->body);
    find_loops(o, &in->body2);
  }
}

static void tag(Once *o, const TirBlock *b, int loop) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    o->loop[in->id] = loop;
    tag(o, &in->cond, loop);
    tag(o, &in->body, loop);
    tag(o, &in->body2, loop);
  }
}

/* Replaces every loop on the chosen dim by its body (innermost first, so a
 * loop inside a spliced one is spliced too); uses of the induction value
 * read the loop's lower bound, the constant 0. */
static void splice(Arena *a, Once *o, TirBlock *b) {
  TirBlock out = {0};
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    splice(a, o, &in->cond);
    splice(a, o, &in->body);
    splice(a, o, &in->body2);
    int64_t s;
    const char *name = tir_dim_loop_name(o->f, in, &s);
    if (name && !strcmp(name, o->dimname)) {
      o->map[in->id] = in->args[0];
      for (int k = 0; k < in->body.len; k++) tir_append(a, &out, in->body.insts[k]);
    } else {
      tir_append(a, &out, in);
    }
  }
  b->insts = out.insts, b->len = out.len, b->cap = out.cap; /* tir_number redoes the access tables */
}


static TirInst *resolve_cb(const void *o, TirInst *in) { return resolve(o, in); }

static bool same_load(const Once *o, const TirInst *x, const TirInst *y) {
  if (x->aux != y->aux || x->nsubs != y->nsubs || !tir_same_type(&x->ty, &y->ty)) return false;
  for (int i = 0; i < x->nsubs; i++) {
    const TirSub *s = &x->subs[i], *t = &y->subs[i];
    if (s->point != t->point || s->len != t->len || !tir_same_value(s->start, t->start, resolve_cb, o)) return false;
  }
  return true;
}

/* Program order, block by block: a load meets the loads before it that no
 * store or arrive has since killed. A loop whose body writes kills
 * everything before it is entered (its next iteration follows the write)
 * and after; an if that writes kills after. Loads inside a nested block are
 * available only inside it. */
static void cse(Once *o, TirBlock *b) {
  int w = 0;
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    if (in->op == TIR_LOAD && in->ty.rank > 0) {
      TirInst *hit = NULL;
      int at = -1;
      for (int k = o->navail - 1; k >= o->floor && !hit; k--)
        if (!o->avail_dead[k] && same_load(o, o->avail[k], in)) hit = o->avail[k], at = k;
      if (hit && o->avail_stores[at] < o->stores) {
        if (in->aux < 0 || in->aux >= 64) hit = NULL;
        else o->apart |= UINT64_C(1) << in->aux;
      }
      if (hit) {
        o->map[in->id] = hit;
        int lh = o->loop[hit->id], li = o->loop[in->id];
        o->merged += lh && li && lh != li;
        continue; /* dropped from the block */
      }
      o->avail_stores[o->navail] = o->stores, o->avail_dead[o->navail] = false;
      o->avail[o->navail++] = in; /* at most one entry a load: sized by ninsts */
    } else if (in->op == TIR_STORE && o->across) {
      for (int k = o->floor; k < o->navail; k++) o->avail_dead[k] |= o->avail[k]->aux == in->aux;
      o->stores++;
    } else if (in->op == TIR_STORE || in->op == TIR_ARRIVE) {
      o->floor = o->navail;
    } else if (in->op == TIR_FOR || in->op == TIR_WHILE || in->op == TIR_IF) {
      bool loop = in->op != TIR_IF;
      bool wr = tir_writes(&in->cond) || tir_writes(&in->body) || tir_writes(&in->body2);
      int n = o->navail, fl = o->floor;
      if (loop && wr) o->floor = o->navail;
      cse(o, &in->cond);
      cse(o, &in->body);
      o->navail = n, o->floor = loop && wr ? n : fl;
      cse(o, &in->body2);
      o->navail = n, o->floor = wr ? n : fl;
    }
    b->insts[w++] = in;
  }
  b->len = w;
}

static void rewrite_uses(Once *o, TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    for (int k = 0; k < in->nargs; k++) in->args[k] = resolve(o, in->args[k]);
    for (int k = 0; k < in->nsubs; k++) in->subs[k].start = resolve(o, in->subs[k].start);
    if (in->cond_value) in->cond_value = resolve(o, in->cond_value);
    rewrite_uses(o, &in->cond);
    rewrite_uses(o, &in->body);
    rewrite_uses(o, &in->body2);
  }
}

static void alloc_maps(Arena *a, Once *o) {
  int n = o->f->ninsts + 1;
  o->map = arena_alloc(a, sizeof(TirInst *) * (size_t)n);
  o->loop = arena_alloc(a, sizeof(int) * (size_t)n);
  o->avail = arena_alloc(a, sizeof(TirInst *) * (size_t)n);
  o->avail_stores = arena_alloc(a, sizeof(int) * (size_t)n);
  o->avail_dead = arena_alloc(a, sizeof(bool) * (size_t)n);
  memset(o->map, 0, sizeof(TirInst *) * (size_t)n);
  memset(o->loop, 0, sizeof(int) * (size_t)n);
}

TirFunc *onepass_variant(Arena *a, Diags *d, const KernelInfo *info, int blocks) {
  TirFunc *f = lower_kernel(a, d, info);
  if (!f) return NULL;
  Once o = {.f = f};
  find_loops(&o, &f->body);
  if (o.nloops < 2) return NULL;
  if (blocks > 1) {
    /* each loop runs exactly `blocks` times only where every step is the
     * same; and a loop on the dim inside another would be lowered once a
     * copy of the outer one */
    int *ids, nl;
    if (o.most != o.bound) return NULL;
    f = lower_kernel_unrolled(a, d, info, o.dimname, blocks, &ids, &nl);
    if (!f || nl != o.nloops) return NULL;
    o.f = f, o.across = true;
    alloc_maps(a, &o);
    for (int j = 0; j < nl; j++)
      for (int id = ids[2 * j]; id < ids[2 * j + 1]; id++) o.loop[id] = j + 1;
  } else {
    alloc_maps(a, &o);
    /* tag each loop's instructions with the loop (outermost spliced loop wins) */
    int nl = 0;
    for (int i = 0; i < f->ninsts; i++) {
      TirInst *in = f->insts[i];
      int64_t s;
      const char *name = in ? tir_dim_loop_name(f, in, &s) : NULL;
      if (name && !strcmp(name, o.dimname) && !o.loop[in->id]) tag(&o, &in->body, ++nl);
    }
    splice(a, &o, &f->body);
  }
  cse(&o, &f->body);
  if (!o.merged) return NULL;
  rewrite_uses(&o, &f->body);
  tir_number(a, f);
  tileacc_rows(a, f);      /* tileacc.c */
  early_loads(a, f, true); /* the loads of the merged passes, issued together (early.c) */
  remat_values(a, f);      /* unless holding them would spill (remat.c) */
  strip_rows(a, f);        /* strip.c */
  l2pf_mark(a, f);         /* l2pf.c */
  l2hint_mark(a, f);       /* l2hint.c */
  skip_mark(a, f);         /* skip.c */
  f->once_dim = o.dimname;
  f->once_max = blocks * o.bound;
  f->once_min = (blocks - 1) * o.bound;
  f->once_blocks = blocks;
  f->once_apart = o.apart;
  if (!tir_verify(d, f, "the one-pass variant")) return NULL;
  return f;
}
