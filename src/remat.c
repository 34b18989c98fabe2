/* remat.c: values computed again instead of held across a row reduction.
 *
 * A kernel written as the Triton and Liger tutorials write it holds a whole
 * row in one block: softmax's `x` is read, reduced by `rowmax`, then used
 * again (`x - m`), and `exp(x - m)` is reduced by `rowsum`, then divided.
 * Each value used after its reduction is held in registers across it. When
 * the row is long for the thread count (65536 f32 columns over 1024 threads:
 * 64 registers a value, the most a thread of 1024 may have), ptxas spills
 * what it holds to local memory, and every spilled register costs a store
 * and a load a thread (softmax over 50257 columns in one block of 65536:
 * 1.4 ms, torch 0.78 ms).
 *
 * Such a value whose chain reads only memory no store of the kernel writes
 * (loads of tensors the kernel never stores to or arrives on, `iota`,
 * splats and broadcasts of row values, elementwise operations) can be
 * computed again after the reduction instead: its loads read the row a
 * second time (from the L2 while the row is there), which is what a
 * two-pass kernel written by hand does. The values live across a reduction
 * are weighed against the registers a thread has (65536 / threads, at most
 * 255; @launch's min_blocks and max_regs lower it): where they would take
 * more than half, the reduction splits the block into segments, and each
 * use of a value from an earlier segment reads a copy of its chain made
 * right before the use (one a segment). Nothing else changes: a kernel
 * whose live values fit keeps its IR, plan and PTX. Kernels with a dot
 * (their loads feed staged buffers) and staged-rows copies are left alone. */
#include <stdlib.h>
#include <string.h>

#include "tir.h"

typedef struct Remat {
  Arena *a;
  TirFunc *f;
  int n;          /* ids below n are the originals */
  bool *readonly; /* by tensor parameter: no store or arrive on it in the kernel */
  /* by original id, for the block being rewritten: */
  int *where;     /* index in the block; -1: defined elsewhere */
  int *seg;       /* the segment of its definition */
  bool *ok;       /* its chain can be computed again */
  TirInst **args; /* its operands as written, 3 an id (rewrite changes them) */
  TirInst **memo; /* its copy in segment memo_seg */
  int *memo_seg;
  int changed;
  int *writes_before; /* by index in the block: stores, arrives and writing blocks before it */
  int at;             /* the index of the instruction whose operands are rewritten */
} Remat;

static int64_t per_thread(const Remat *r, const TirInst *v) { return tir_thread_regs(r->f, v); }

static bool big(const Remat *r, const TirInst *v) { return v->ty.rank > 0 && per_thread(r, v) >= 2; }

static bool can_copy(const Remat *r, const TirInst *v) {
  if (v->op == TIR_LOAD) return v->ty.rank > 0 && r->readonly[v->aux];
  if (!tir_elementwise_op(v->op)) return false;
  for (int k = 0; k < v->nargs; k++) {
    const TirInst *o = v->args[k];
    if (!o || !big(r, o)) continue; /* scalars and row values are held anyway */
    if (o->id >= r->n || r->where[o->id] < 0 || !r->ok[o->id]) return false;
  }
  return true;
}

/* v's value in segment s: v itself where it was defined there (or is not
 * a big value of this block that can be copied), else its copy, made
 * before the instruction being placed into out */
static TirInst *value_in(Remat *r, TirInst *v, int s, TirBlock *out) {
  if (!v || v->id >= r->n || r->where[v->id] < 0 || r->seg[v->id] == s || !r->ok[v->id] || !big(r, v)) return v;
  /* parameters may alias: a load is read again only where no store or
   * arrive came between it and its reader (else it is held, as written) */
  if (v->op == TIR_LOAD && r->writes_before[r->at] != r->writes_before[r->where[v->id] + 1]) return v;
  if (r->memo_seg[v->id] == s) return r->memo[v->id];
  TirInst *c = tir_new(r->a, r->f, v->op, v->ty);
  int id = c->id;
  *c = *v;
  c->id = id;
  c->plan = NULL;
  for (int k = 0; k < c->nargs; k++) c->args[k] = value_in(r, r->args[3 * v->id + k], s, out);
  tir_append(r->a, out, c);
  r->memo[v->id] = c, r->memo_seg[v->id] = s;
  r->changed++;
  return c;
}

/* the operands of in and of everything inside it */
static void rewrite(Remat *r, TirInst *in, int s, TirBlock *out) {
  for (int k = 0; k < in->nargs; k++) in->args[k] = value_in(r, in->args[k], s, out);
  for (int k = 0; k < in->nsubs; k++) in->subs[k].start = value_in(r, in->subs[k].start, s, out);
  if (in->cond_value) in->cond_value = value_in(r, in->cond_value, s, out);
  const TirBlock *inner[3] = {&in->cond, &in->body, &in->body2};
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < inner[j]->len; i++) rewrite(r, inner[j]->insts[i], s, out);
}

/* the index in b of the last instruction that reads each value of b (a
 * read inside a nested block counts at the instruction that holds it) */
static void note_uses(const Remat *r, const TirInst *in, int i, int *last) {
  for (int k = 0; k < in->nargs + in->nsubs + 1; k++) {
    const TirInst *o = k < in->nargs ? in->args[k] : k < in->nargs + in->nsubs ? in->subs[k - in->nargs].start : in->cond_value;
    if (o && o->id < r->n && r->where[o->id] >= 0) last[r->where[o->id]] = i;
  }
  const TirBlock *inner[3] = {&in->cond, &in->body, &in->body2};
  for (int j = 0; j < 3; j++)
    for (int k = 0; k < inner[j]->len; k++) note_uses(r, inner[j]->insts[k], i, last);
}

static void remat_block(Remat *r, TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    remat_block(r, &in->cond);
    remat_block(r, &in->body);
    remat_block(r, &in->body2);
  }
  if (b->len < 3) return;
  int *last = arena_alloc(r->a, sizeof(int) * (size_t)b->len);
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    r->where[in->id] = i, last[i] = -1;
    for (int k = 0; k < 3; k++) r->args[3 * in->id + k] = k < in->nargs ? in->args[k] : NULL;
    r->ok[in->id] = can_copy(r, in);
  }
  for (int i = 0; i < b->len; i++) note_uses(r, b->insts[i], i, last);
  /* a row reduction of a big tile splits the block where the values held
   * across it would take more than half a thread's registers */
  int64_t budget = tir_register_budget(r->f) / 2;
  bool *split = arena_alloc(r->a, sizeof(bool) * (size_t)b->len);
  int nsplit = 0;
  /* held[i]: what the values defined before i and read after it take (a
   * value j counts over (j, last[j])), by a difference array: linear */
  int64_t *held = arena_alloc(r->a, sizeof(int64_t) * (size_t)(b->len + 1));
  int *copyable = arena_alloc(r->a, sizeof(int) * (size_t)(b->len + 1));
  for (int i = 0; i <= b->len; i++) held[i] = 0, copyable[i] = 0;
  for (int j = 0; j < b->len; j++) {
    TirInst *v = b->insts[j];
    if (last[j] <= j + 1 || !tir_holds_registers(v) || !big(r, v)) continue;
    held[j + 1] += per_thread(r, v), held[last[j]] -= per_thread(r, v);
    if (r->ok[v->id]) copyable[j + 1]++, copyable[last[j]]--;
  }
  for (int i = 1; i <= b->len; i++) held[i] += held[i - 1], copyable[i] += copyable[i - 1];
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    split[i] = in->op == TIR_REDUCE && big(r, in->args[0]) && held[i] > budget && copyable[i] > 0;
    nsplit += split[i];
  }
  if (nsplit) {
    int s = 0;
    for (int i = 0; i < b->len; i++) {
      r->seg[b->insts[i]->id] = s;
      s += split[i];
    }
    r->writes_before = arena_alloc(r->a, sizeof(int) * (size_t)(b->len + 1));
    r->writes_before[0] = 0;
    for (int i = 0; i < b->len; i++) {
      const TirInst *in = b->insts[i];
      r->writes_before[i + 1] = r->writes_before[i] + tir_inst_writes(in);
    }
    TirBlock out = {0};
    for (int i = 0; i < b->len; i++) {
      TirInst *in = b->insts[i];
      r->at = i;
      rewrite(r, in, r->seg[in->id], &out);
      tir_append(r->a, &out, in);
    }
    b->insts = out.insts, b->len = out.len, b->cap = out.cap;
  }
  for (int i = 0; i < b->len; i++)
    if (b->insts[i]->id < r->n) r->where[b->insts[i]->id] = -1;
}

/* drops the values the copies left unread (an original whose every reader
 * now reads a copy), until none is left; the values that were unread
 * before stay as they were */
static void drop_unread(Remat *r, TirBlock *b, const int *uses, const bool *was_read) {
  int w = 0;
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    drop_unread(r, &in->cond, uses, was_read);
    drop_unread(r, &in->body, uses, was_read);
    drop_unread(r, &in->body2, uses, was_read);
    if (in->id < r->n && was_read[in->id] && uses[in->id] == 0 && (in->op == TIR_LOAD || tir_elementwise_op(in->op))) {
      r->changed++;
      continue;
    }
    b->insts[w++] = in;
  }
  b->len = w;
}

/* readers of each value by id (originals and copies), over the blocks as
 * they are now (f->insts is stale until tir_number) */
static void count_reads(const TirBlock *b, int *uses) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    for (int k = 0; k < in->nargs; k++)
      if (in->args[k]) uses[in->args[k]->id]++;
    for (int k = 0; k < in->nsubs; k++)
      if (in->subs[k].start) uses[in->subs[k].start->id]++;
    if (in->cond_value) uses[in->cond_value->id]++;
    count_reads(&in->cond, uses);
    count_reads(&in->body, uses);
    count_reads(&in->body2, uses);
  }
}

void remat_values(Arena *a, TirFunc *f) {
  if (f->staged || !early_loads_wanted(f)) return;
  Remat r = {.a = a, .f = f, .n = f->ninsts};
  size_t n = (size_t)r.n + 1;
  r.readonly = arena_alloc(a, sizeof(bool) * (size_t)(f->nparams + 1));
  for (int p = 0; p < f->nparams; p++) r.readonly[p] = f->params[p].tensor && !tir_stores_to(&f->body, p);
  r.where = arena_alloc(a, sizeof(int) * n);
  r.seg = arena_alloc(a, sizeof(int) * n);
  r.ok = arena_alloc(a, sizeof(bool) * n);
  r.memo = arena_alloc(a, sizeof(TirInst *) * n);
  r.args = arena_alloc(a, sizeof(TirInst *) * 3 * n);
  r.memo_seg = arena_alloc(a, sizeof(int) * n);
  for (size_t i = 0; i < n; i++) r.where[i] = -1, r.seg[i] = 0, r.ok[i] = false, r.memo[i] = NULL, r.memo_seg[i] = -1;
  int *before = tir_use_counts(a, f);
  bool *was_read = arena_alloc(a, sizeof(bool) * n);
  for (size_t i = 0; i < n; i++) was_read[i] = before[i] > 0;
  remat_block(&r, &f->body);
  if (!r.changed) return;
  size_t m = (size_t)f->ninsts + 1;
  int *uses = arena_alloc(a, sizeof(int) * m);
  for (int changed = 1; changed;) {
    memset(uses, 0, sizeof(int) * m);
    count_reads(&f->grid, uses);
    count_reads(&f->body, uses);
    int before_drop = r.changed;
    drop_unread(&r, &f->body, uses, was_read);
    changed = r.changed != before_drop;
  }
  tir_number(a, f);
}
