/* skip.c: the work a warp would only mask, skipped.
 *
 * A tile sized past its tensor (Triton's `BLOCK_SIZE = next_power_of_2(N)`:
 * 8192 columns for rows of 5000) leaves whole warps whose every element
 * lies past the tensor's end: their loads read nothing and their stores
 * write nothing, yet they issue every instruction of the arithmetic
 * between, and a row kernel is bound by instructions issued (the SwiGLU
 * port over 4093 x 5000: 87% of issue slots busy, 12 of its 32 warps past
 * the row). So this pass marks each chain of a block that only stores: a
 * connected set of tile loads, elementwise operations, splats, broadcasts,
 * `iota`s and stores of one last dim, none of whose values anything
 * outside it reads (no reduction, no variable, no subscript, no nested
 * block). Skipping it changes nothing but the work: each load it would
 * drop feeds only the chain's stores, and those write nothing for the
 * warp. The backend (ptx/ptx.c, px_emit_block) emits each run of a
 * chain's instructions behind one warp-uniform branch: it runs where some
 * store of the chain has a column of the warp inside the tensor and the
 * tile (spec 15.19). Where a chain is more than one run (strips that issue
 * loads ahead of the strip before them, strip.c), each store's column
 * start is computed before the chain's first instruction (pure scalar
 * arithmetic moved up), so that every run tests the same predicate.
 *
 * Chains outside loops only, and chains one after another share a branch
 * (skip_block says why). Only row kernels (no dot) and no staged-rows
 * copy: the fragment layouts
 * and the staged paths keep their own masks and barriers. The backend
 * emits a run without its branch where an instruction of it would exchange
 * or wait (a broadcast through shared memory, a planned barrier, a tensor
 * copy). */
#include <string.h>

#include "tir.h"

typedef struct Skip {
  Arena *a;
  TirFunc *f;
  int n;      /* ids below n are in f->insts */
  int *where; /* by id: index in the block being marked, -1 elsewhere */
  bool moved;  /* some scalar was moved up: the IR needs numbering again */
} Skip;

/* the last dim of a chain member, 0 for any other instruction */
static int64_t member_dim(const TirInst *in) {
  if (in->op == TIR_STORE) return in->nargs && in->args[0] && tir_last_span(in) >= 0 ? tir_last_dim(in->args[0]) : 0;
  if (in->op == TIR_LOAD) return in->nsubs && tir_last_span(in) >= 0 ? tir_last_dim(in) : 0;
  return tir_elementwise_op(in->op) ? tir_last_dim(in) : 0;
}

static int index_in(const Skip *s, const TirInst *v) { return v && v->id >= 0 && v->id < s->n ? s->where[v->id] : -1; }

/* a value of a chain read inside a nested block spoils the chain */
static void nested_reads(const Skip *s, const TirBlock *b, const int *root, bool *bad) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    for (int k = 0; k < in->nargs + in->nsubs + 1; k++) {
      const TirInst *o = k < in->nargs ? in->args[k] : k < in->nargs + in->nsubs ? in->subs[k - in->nargs].start : in->cond_value;
      int j = index_in(s, o);
      if (j >= 0 && root[j] >= 0) bad[root[j]] = true;
    }
    nested_reads(s, &in->cond, root, bad);
    nested_reads(s, &in->body, root, bad);
    nested_reads(s, &in->body2, root, bad);
  }
}

/* Whether scalar v can be computed before index t of the block: defined
 * before it, outside the block, or pure arithmetic (at or after t) whose
 * operands can; mark: set moved[] for those at or after t. */
static bool movable(const Skip *s, const TirBlock *b, const TirInst *v, int t, bool *moved, bool mark, int depth) {
  int i = index_in(s, v);
  if (!v || i < 0 || i < t || moved[i]) return true;
  if (depth > 32 || !tir_scalar_arith(b->insts[i])) return false;
  for (int k = 0; k < v->nargs; k++)
    if (!movable(s, b, v->args[k], t, moved, mark, depth + 1)) return false;
  if (mark) moved[i] = true;
  return true;
}

/* Chains inside a loop are left alone: a branch an iteration costs every
 * iteration its test and keeps ptxas from overlapping one iteration's
 * loads with the last's work, where only the last iteration of a walk over
 * a row has warps past its end (the bf16 softmax over rows of 50257,
 * 349.9 -> 402.6 us, and the f32 584.0 -> 639.4, with a branch in their
 * second loop; 12-04d call 4). A one-pass copy's loops are unrolled to
 * their one iteration, and its chains are marked. */
static void skip_block(Skip *s, TirBlock *b, bool in_loop) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    bool loop = in_loop || in->op == TIR_FOR || in->op == TIR_WHILE;
    skip_block(s, &in->cond, loop);
    skip_block(s, &in->body, loop);
    skip_block(s, &in->body2, loop);
  }
  if (!b->len || in_loop) return;
  size_t n = (size_t)b->len;
  int *parent = arena_alloc(s->a, sizeof(int) * n), *root = arena_alloc(s->a, sizeof(int) * n);
  bool *bad = arena_alloc(s->a, n), *moved = arena_alloc(s->a, n);
  int *first = arena_alloc(s->a, sizeof(int) * n), *last = arena_alloc(s->a, sizeof(int) * n),
      *nst = arena_alloc(s->a, sizeof(int) * n), *count = arena_alloc(s->a, sizeof(int) * n);
  for (int i = 0; i < b->len; i++) {
    parent[i] = i, bad[i] = moved[i] = false, first[i] = last[i] = -1, nst[i] = count[i] = 0;
    s->where[b->insts[i]->id] = i;
  }
  for (int i = 0; i < b->len; i++) { /* members of one last dim that read one another: one chain */
    const TirInst *in = b->insts[i];
    int64_t d = member_dim(in);
    if (!d) continue;
    for (int k = 0; k < in->nargs; k++) {
      int j = index_in(s, in->args[k]);
      if (j >= 0 && b->insts[j]->op != TIR_STORE && member_dim(b->insts[j]) == d) parent[tir_uf_find(parent, i)] = tir_uf_find(parent, j);
    }
  }
  for (int i = 0; i < b->len; i++) root[i] = member_dim(b->insts[i]) ? tir_uf_find(parent, i) : -1;
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    int r = root[i];
    if (r >= 0) {
      if (first[r] < 0) first[r] = i;
      last[r] = i;
      count[r]++;
      nst[r] += in->op == TIR_STORE;
    }
    /* a reader outside a chain (an operand of another chain or of
     * anything else, a subscript, a condition) spoils it; a member's own
     * subscripts and scalar operands are not the chain's values */
    for (int k = 0; k < in->nargs + in->nsubs + 1; k++) {
      const TirInst *o = k < in->nargs ? in->args[k] : k < in->nargs + in->nsubs ? in->subs[k - in->nargs].start : in->cond_value;
      int j = index_in(s, o);
      if (j < 0 || root[j] < 0) continue;
      if (r != root[j] || k >= in->nargs) bad[root[j]] = true;
    }
    nested_reads(s, &in->cond, root, bad);
    nested_reads(s, &in->body, root, bad);
    nested_reads(s, &in->body2, root, bad);
  }
  /* Groups: the good chains in the order of their first members, a chain
   * that starts after the one before it ends (with only scalar arithmetic
   * between) joining its group. The strips of a chain cut without loads
   * ahead (strip.c) so share one branch: a branch between them keeps ptxas
   * from issuing a strip's loads under the one before it (the softmax
   * port over rows of 50257 f32, a branch a strip: 759.9 -> 816.5 us,
   * 12-04d call 3). Strips with loads ahead interleave, and each keeps
   * its own. */
  int *grp = arena_alloc(s->a, sizeof(int) * n), *gfirst = arena_alloc(s->a, sizeof(int) * n),
      *glast = arena_alloc(s->a, sizeof(int) * n), *gnst = arena_alloc(s->a, sizeof(int) * n);
  int ng = 0;
  for (int f0 = 0; f0 < b->len; f0++) {
    int r = root[f0];
    if (r < 0 || first[r] != f0) continue;
    grp[r] = -1;
    if (bad[r] || !nst[r] || nst[r] == count[r]) continue; /* a store alone saves nothing */
    bool join = ng > 0 && f0 > glast[ng - 1] && f0 - glast[ng - 1] <= 64;
    for (int i = join ? glast[ng - 1] + 1 : f0; i < f0 && join; i++) join = tir_scalar_arith(b->insts[i]);
    if (!join) gfirst[ng] = f0, glast[ng] = last[r], gnst[ng] = 0, ng++;
    grp[r] = ng - 1;
    glast[ng - 1] = last[r];
    gnst[ng - 1] += nst[r];
  }
  /* each group: its stores' column starts computed before its first
   * member, then its members marked */
  int *target = arena_alloc(s->a, sizeof(int) * n); /* a moved scalar: the index it goes before */
  bool any = false;
  for (int i = 0; i < b->len; i++) target[i] = -1;
  for (int q = 0; q < ng; q++) {
    int f0 = gfirst[q], l0 = glast[q];
    /* one run (nothing but scalar arithmetic among its members): the
     * backend computes the starts before the branch itself */
    bool one_run = true, ok = true;
    for (int i = f0; i <= l0; i++) {
      bool member = root[i] >= 0 && grp[root[i]] == q;
      one_run &= member || tir_scalar_arith(b->insts[i]);
      if (member && b->insts[i]->op == TIR_STORE && ok)
        ok = movable(s, b, b->insts[i]->subs[tir_last_span(b->insts[i])].start, f0, moved, false, 0);
    }
    if (!one_run && !ok) continue;
    TirSkip *g = arena_alloc(s->a, sizeof *g);
    *g = (TirSkip){.id = s->f->nskip++, .first = b->insts[f0]};
    g->stores = arena_alloc(s->a, sizeof(TirInst *) * (size_t)gnst[q]);
    for (int i = f0; i <= l0; i++) {
      if (root[i] < 0 || grp[root[i]] != q) continue;
      TirInst *in = b->insts[i];
      in->skip = g;
      if (in->op != TIR_STORE) continue;
      g->stores[g->nstores++] = in;
      if (!one_run) movable(s, b, in->subs[tir_last_span(in)].start, f0, moved, true, 0);
    }
    for (int i = f0; i <= l0; i++)
      if (moved[i] && target[i] < 0) target[i] = f0, any = true;
  }
  for (int i = 0; i < b->len; i++) s->where[b->insts[i]->id] = -1;
  if (!any) return;
  s->moved = true;
  /* the block again: each moved scalar just before its chain's first
   * member, in their order */
  int *head = arena_alloc(s->a, sizeof(int) * n), *tail = arena_alloc(s->a, sizeof(int) * n),
      *next = arena_alloc(s->a, sizeof(int) * n);
  for (int i = 0; i < b->len; i++) head[i] = tail[i] = next[i] = -1;
  for (int j = 0; j < b->len; j++) {
    int t = target[j];
    if (t < 0) continue;
    if (head[t] < 0) head[t] = j;
    else next[tail[t]] = j;
    tail[t] = j;
  }
  TirBlock out = {0};
  for (int i = 0; i < b->len; i++) {
    for (int j = head[i]; j >= 0; j = next[j]) tir_append(s->a, &out, b->insts[j]);
    if (target[i] < 0) tir_append(s->a, &out, b->insts[i]);
  }
  b->insts = out.insts, b->len = out.len, b->cap = out.cap;
}

void skip_mark(Arena *a, TirFunc *f) {
  if (f->staged || !early_loads_wanted(f)) return;
  Skip s = {.a = a, .f = f, .n = f->ninsts};
  s.where = arena_alloc(a, sizeof(int) * ((size_t)s.n + 1));
  for (int i = 0; i <= s.n; i++) s.where[i] = -1;
  skip_block(&s, &f->body, false);
  if (s.moved) tir_number(a, f);
}
