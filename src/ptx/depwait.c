/* depwait.c: --early-prefetch (experimental): where a programmatic
 * dependent launch waits for the grid before it, and what it asks L2 for
 * first.
 *
 * On sm_90a the runtime launches an entry as a programmatic dependent of
 * the kernel before it in the stream (spec 17.3): its CTAs may start while
 * that kernel still runs, and griddepcontrol.wait holds them until it has
 * finished and its writes are visible. No global access may come before
 * the wait, which is the entry's first instruction (ptx.c). Under
 * --early-prefetch it comes before the first top-level statement that may
 * touch global memory instead (anything but scalar and register arithmetic
 * and variables: a load, a store, an arrive, a loop, a branch), so the
 * block's coordinates and its slices' and loops' bounds are computed while
 * the grid before runs; and where that statement is a loop, each CTA first
 * asks L2 for the rows its loop's first iterations will load
 * (cp.async.bulk.prefetch.L2, a hint that writes nothing: L2 is where every
 * SM's writes meet, so a line fetched before the grid before wrote it is
 * not stale, only fetched for nothing). Meant for a decode step, whose
 * projections read weights no kernel writes after kernels that keep the
 * DRAM idle; measured there it gained nothing (spec 15.27), so it is off.
 * A kernel that never reaches such a statement waits at its end, so that
 * the grids after it, which wait for it alone, never run ahead of the one
 * before it. Its own dependents it releases right after its wait, as the
 * entry does: released at the entry, each grid let the next one launch
 * before it had waited, the next one the one after, and a captured decode
 * step filled the SMs with CTAs of grids to come, each holding its slot
 * while it waited (H100, 12-07 fifth session call 2: the LLM step 4182 ->
 * 5978 us). Never with a producer warp or a cluster (their entries wait
 * first); under --no-tma or @no_tma (no bulk operations) the wait moves,
 * nothing is fetched. */
#include "emitter.h"

/* the bytes of one load's tiles a CTA asks for ahead, at most */
enum { EARLY_PF_BYTES = 16384, EARLY_PF_MIN_ROW = 32 };

/* A statement that touches no global memory: scalar and register tile
 * arithmetic, constants, the launch's coordinates and dims, variables
 * (registers, or shared memory for an exchange). */
static bool no_global(const TirInst *x) {
  switch (x->op) {
  case TIR_CONST: case TIR_PARAM: case TIR_DIM: case TIR_CTX: case TIR_UNARY: case TIR_BINARY: case TIR_MATH:
  case TIR_CONVERT: case TIR_SELECT: case TIR_SPLAT: case TIR_IOTA: case TIR_VAR: case TIR_READ: case TIR_WRITE:
    return true;
  default: return false;
  }
}

bool px_depwait_begin(Emitter *e) {
  e->depwait = e->sm90 && !e->p->producer && !e->p->cluster && e->p->early_pf;
  return e->depwait;
}

/* A load of loop's body whose rows the CTA can ask for before the loop: a
 * tile of a tensor parameter whose last span is the tensor's contiguous
 * dim, at subscripts the body computes by scalar arithmetic alone from the
 * loop variable and values from before the loop. */
static bool early_load(Emitter *e, const TirInst *loop, const TirInst *x) {
  if (x->op != TIR_LOAD || x->ty.rank == 0 || x->nsubs == 0 || x->subs[x->nsubs - 1].point) return false;
  if (x->aux < 0 || x->aux >= e->f->nparams || !e->f->params[x->aux].tensor || !px_cols_contiguous(e, x)) return false;
  if (x->subs[x->nsubs - 1].len * px_elem_bytes_mem(e->f->params[x->aux].elem) < EARLY_PF_MIN_ROW) return false;
  const TirInst *one[1] = {x};
  bool *chain = px_subscript_chains(e, loop, one, 1, false);
  for (int k = 0; k < loop->body.len; k++)
    if (chain[loop->body.insts[k]->id] && !tir_scalar_arith(loop->body.insts[k])) return false;
  return true;
}

/* Each qualifying load of the loop's body: thread t takes row t % R of
 * the tile of iteration t / R (R the tile's rows), for the first n
 * iterations inside the loop's bounds (n tiles within EARLY_PF_BYTES, a
 * row a thread), the body's subscript scalars replayed with the loop
 * variable at that iteration's value (the loop sets its variable at its
 * entry, after this). */
static void early_prefetch(Emitter *e, const TirInst *loop) {
  const TirInst *st = loop->args[2];
  if (e->p->general_strides || e->p->no_async || !st || st->op != TIR_CONST || st->ival <= 0) return;
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *x = loop->body.insts[k];
    if (!early_load(e, loop, x)) continue;
    int last = x->nsubs - 1;
    int64_t rows = 1, len = x->subs[last].len, eb = px_elem_bytes_mem(e->f->params[x->aux].elem);
    for (int q = 0; q < last; q++) rows *= x->subs[q].len;
    if (rows > e->T) continue;
    int64_t n = EARLY_PF_BYTES / (rows * len * eb);
    if (n < 1) n = 1;
    if (n > e->T / rows) n = e->T / rows;
    px_out(e, "// %%%d: the rows of its first %lld iterations into L2 before the grid waits (depwait.c)", x->id,
           (long long)n);
    const char *ok = px_tmp(e, RC_PRED), *it = px_tmp(e, RC_B32), *r = px_tmp(e, RC_B32), *j = px_tmp(e, RC_B32),
               *off = px_tmp(e, RC_B64);
    int L = px_new_label(e);
    px_out(e, "div.u32 %s, %%tid_, %lld;", it, (long long)rows);
    px_out(e, "rem.u32 %s, %%tid_, %lld;", r, (long long)rows);
    px_out(e, "setp.lt.u32 %s, %s, %lld;", ok, it, (long long)n);
    px_out(e, "mad.lo.s32 %s, %s, %lld, %s;", j, it, (long long)st->ival, px_reg(e, loop->args[0], 0));
    px_out(e, "setp.lt.and.s32 %s, %s, %s, %s;", ok, j, px_reg(e, loop->args[1], 0), ok);
    px_out(e, "@!%s bra $Ledpf%d;", ok, L);
    const TirInst *one[1] = {x};
    px_replay_subscripts(e, loop, one, 1, j);
    const char *idx[MAX_TENSOR_RANK];
    px_l2pf_coords(e, x, r, NULL, 0, idx);
    px_l2pf_row(e, x, ok, off, idx, len);
    px_label(e, "edpf", L);
  }
}

/* Before the statements [i, j) of block b (j -1: a run whose end is not
 * known yet): the wait, where b is the kernel's body and one of them may
 * touch global memory; before a loop that comes first, its prefetch. */
void px_depwait_before(Emitter *e, const TirBlock *b, int i, int j) {
  if (!e->depwait || e->replay || b != &e->f->body) return;
  if (j >= 0) {
    int w = i;
    while (w < j && no_global(b->insts[w])) w++;
    if (w == j) return;
  }
  if (b->insts[i]->op == TIR_FOR) early_prefetch(e, b->insts[i]);
  px_out(e, "griddepcontrol.wait;");
  px_out(e, "griddepcontrol.launch_dependents;");
  e->depwait = false;
}

void px_depwait_end(Emitter *e) {
  if (e->depwait) {
    px_out(e, "griddepcontrol.wait;");
    px_out(e, "griddepcontrol.launch_dependents;");
  }
  e->depwait = false;
}
