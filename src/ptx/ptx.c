/* ptx.c: the PTX backend's entry: one planned variant as a .entry (its
 * parameters, the registers every kernel declares, the tensor-map and
 * mbarrier prologue), the dispatch of each tile IR instruction to the file
 * that spells it, and structured control flow (if, while; for loops are
 * pipeline.c's).
 *
 * How values map to the machine:
 *   - scalars are uniform: every thread computes the same value in one
 *     register, so every branch and loop is uniform and bar.sync is safe
 *     anywhere;
 *   - a register tile is spread over the CTA's T threads in chunks of V
 *     neighbouring elements, cyclically (layout.c, px_flat_index), or, for a
 *     tensor-core accumulator class and the row values beside it, in the
 *     mma fragment layout (layout.c);
 *   - values the plan puts in shared memory (staging tiles) live in their
 *     planned buffers at their planned offset and pitch, with the plan's
 *     barriers;
 *   - an operation that needs another thread's elements (broadcast, row
 *     reduction, dot, transpose, sub-tile reads and writes, a point read
 *     of a register tile) goes through an exchange area after the planned
 *     buffers (exchange.c), unless a layout lets it skip that;
 *   - f16 and bf16 are computed in f32 registers and rounded back after
 *     every operation, i8 and u8 in 32-bit registers and wrapped, as the
 *     interpreter does; bool is 0 or 1 in a 32-bit register.
 *
 * Masks: a lane past a slice's logical extent (slack) or past the
 * tensor's end loads zero and stores nothing; reductions and dot
 * contractions run over logical extents only. spec/LANGUAGE.md 15. */
#include "emitter.h"

void px_unsupported(Emitter *e, const TirInst *in, const char *what) {
  if (!e->failed)
    diag_error(e->d, in->span, "the PTX backend cannot compile this yet: %s", what);
  e->failed = true;
}

/* What every instruction does before its own code: the barriers and
 * copy waits due before it, the deferred unpacking of its operands, its
 * registers' declarations. */
static void emit_prologue(Emitter *e, const TirInst *in) {
  /* a wgmma group left running to this instruction (plan/accumulate.c,
   * pl_choose_wgmma_waits); a branch or loop waits for all of them */
  if (!e->replay)
    px_wgmma_settle(e, in->op == TIR_IF || in->op == TIR_FOR || in->op == TIR_WHILE ? NULL : in);
  /* a branch or loop may skip the barrier that would wait for copies in
   * flight: wait before entering one */
  if (in->op == TIR_IF || in->op == TIR_FOR || in->op == TIR_WHILE) px_async_wait(e);
  /* A planned barrier waits past scalar arithmetic (a staged load's
   * subscripts) to the staged load, which places it after its global
   * reads (px_emit_stage_rows); anything else takes it first. */
  if (!e->replay && in->pos < e->f->ninsts && e->barrier_before[in->pos]) e->sync_pending = true;
  if (e->sync_pending && !(in->op == TIR_LOAD && in->plan->res == RES_SHARED) && !tir_scalar_arith(in))
    px_emit_pending_sync(e);
  if (in->op == TIR_FOR || in->op == TIR_WHILE || in->op == TIR_IF) px_flush_unpack(e, NULL);
  if (!px_fusable_convert(e, in))
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i]) px_flush_unpack(e, in->args[i]);
  if (in->op != TIR_STORE && in->op != TIR_WRITE && in->op != TIR_IF && in->op != TIR_WHILE && !e->replay)
    px_declare_value(e, in);
}

static void emit_op(Emitter *e, const TirInst *in) {
  if (e->folded_test && e->folded_test[in->id]) return; /* its select tests the bound itself */
  int n = px_nregs(e, in);
  const char *d0 = px_reg(e, in, 0);
  RegClass rc = px_rc_of(in->ty.elem);
  switch (in->op) {
  case TIR_CONST:
    if (rc == RC_F32) {
      float f = (float)in->fval;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      px_out(e, "mov.b32 %s, 0x%08x;", d0, bits);
      px_round_reg(e, in->ty.elem, d0);
    } else if (rc == RC_F64) {
      uint64_t bits;
      double v = in->fval;
      memcpy(&bits, &v, 8);
      px_out(e, "mov.b64 %s, 0x%016llx;", d0, (unsigned long long)bits);
    } else if (rc == RC_B64) {
      px_out(e, "mov.b64 %s, %lld;", d0, (long long)in->ival);
    } else {
      px_out(e, "mov.b32 %s, %d;", d0, (int32_t)in->ival);
      px_round_reg(e, in->ty.elem, d0);
    }
    break;
  case TIR_PARAM: {
    const char *pt = in->ty.elem == S_F64 ? "f64" : rc == RC_F32 ? "f32" : in->ty.elem == S_I64 ? "s64" : "s32";
    px_out(e, "ld.param.%s %s, [%s];", pt, d0, px_pname(in->aux, "p"));
    px_round_reg(e, in->ty.elem, d0);
    break;
  }
  case TIR_DIM: px_out(e, "mov.b32 %s, %%ext32_%d_%d;", d0, in->aux, in->aux2); break;
  case TIR_CTX: {
    static const char *sr[] = {"%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z"};
    static const char *grouped[] = {"%bx_", "%by_"}; /* the plan's block order (raster_prologue) */
    /* a cluster-rows copy's block is its cluster (cluster.c; a grid of one axis) */
    static const char *clustered[] = {"%clusterid.x", "%nclusterid.x"};
    if (e->p->cluster && (in->aux == 0 || in->aux == 3)) px_out(e, "mov.u32 %s, %s;", d0, clustered[in->aux / 3]);
    else px_out(e, "mov.u32 %s, %s;", d0, e->p->raster_group && in->aux < 2 ? grouped[in->aux] : sr[in->aux]);
    break;
  }
  case TIR_UNARY:
    for (int k = px_kbeg(e); k < px_kend(e, n); k++) {
      const char *a = px_operand(e, in->args[0], k), *d = px_reg(e, in, k);
      if (in->aux == '-')
        px_out(e, "neg.%s %s, %s;", px_arith_type(in->ty.elem)[0] == 'u' ? "s32" : px_arith_type(in->ty.elem), d, a);
      else if (in->aux == '!') px_out(e, "xor.b32 %s, %s, 1;", d, a);
      else px_out(e, "not.%s %s, %s;", rc == RC_B64 ? "b64" : "b32", d, a);
      px_round_reg(e, in->ty.elem, d);
    }
    break;
  case TIR_BINARY: px_emit_binary(e, in); break;
  case TIR_MATH: px_emit_math(e, in); break;
  case TIR_CONVERT: px_emit_convert(e, in); break;
  case TIR_SELECT: px_emit_select(e, in); break;
  case TIR_SPLAT:
    for (int k = px_kbeg(e); k < px_kend(e, n); k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_reg(e, in->args[0], 0));
    break;
  case TIR_BROADCAST: px_emit_broadcast(e, in); break;
  case TIR_IOTA:
    for (int k = 0; k < n; k++) {
      const char *c = px_elem_coord(e, in, k, in->aux);
      px_out(e, "mov.b32 %s, %s;", px_reg(e, in, k), c);
    }
    break;
  case TIR_REDUCE: px_emit_reduce(e, in); break;
  case TIR_DOT: px_emit_dot(e, in); break;
  case TIR_TRANSPOSE: px_emit_transpose(e, in); break;
  case TIR_SCAN: px_emit_scan(e, in); break;
  case TIR_RESHAPE: px_emit_reshape(e, in); break;
  case TIR_LOAD: px_emit_load(e, in); break;
  case TIR_STORE: px_emit_store(e, in); break;
  case TIR_ARRIVE: px_emit_arrive(e, in); break;
  case TIR_EXTRACT: px_emit_extract(e, in); break;
  case TIR_VAR:
    /* a register slot starts undefined; a shared one lives in its buffer */
    break;
  case TIR_READ: {
    const TirInst *slot = in->args[0];
    if (slot->plan->res == RES_SHARED && in->plan->res == RES_SHARED) break; /* read from the buffer at use */
    if (in->plan->folded) break; /* acc += dot: the dot accumulates in the slot's registers */
    for (int k = 0; k < n; k++) px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_operand(e, slot, k));
    break;
  }
  case TIR_WRITE: px_emit_write(e, in); break;
  case TIR_FOR: {
    const char ***saved = px_defer_enter(e, in); /* accumulators that meet at the exit (plan/deferred.c) */
    e->loops++;
    px_emit_for(e, in);
    e->loops--;
    px_defer_exit(e, in, saved);
    break;
  }
  case TIR_BARRIER: /* the user's: the T threads that run the kernel's code (control flow is uniform) */
    px_flush_unpack(e, NULL);
    px_cta_sync_why(e, " // barrier()");
    break;
  case TIR_RETURN: /* the whole CTA ends: uniform; no copy left in flight */
    px_async_wait(e);
    px_out(e, "bra.uni $Lreturn;");
    e->returns = true;
    break;
  case TIR_BREAK:
  case TIR_CONTINUE: /* the whole CTA jumps: uniform */
    if (!e->njump) {
      px_unsupported(e, in, "a break or continue outside a loop");
      break;
    }
    px_async_wait(e);
    px_flush_unpack(e, NULL);
    /* the barriers the plan placed later in the body are skipped: one here
     * orders this iteration's shared reads before whatever writes come
     * after the jump (every thread takes it: the condition is uniform) */
    if (e->p->nbufs) px_cta_sync_why(e, in->op == TIR_BREAK ? " // break" : " // continue");
    px_out(e, "bra.uni %s;", in->op == TIR_BREAK ? e->jump_break[e->njump - 1] : e->jump_cont[e->njump - 1]);
    break;
  case TIR_WHILE: {
    int L = px_new_label(e);
    const char *p = px_tmp(e, RC_PRED);
    px_label(e, "while", L);
    px_emit_block(e, &in->cond);
    px_async_wait(e); /* the exit below skips the body's barriers */
    px_out(e, "setp.eq.u32 %s, %s, 0;", p, px_reg(e, in->cond_value, 0));
    px_out(e, "@%s bra $Lwend%d;", p, L);
    e->loops++;
    px_jump_push(e, arena_printf(e->a, "$Lwend%d", L), arena_printf(e->a, "$Lwhile%d", L));
    px_emit_block(e, &in->body);
    e->njump--;
    e->loops--;
    px_async_wait(e);
    px_out(e, "bra.uni $Lwhile%d;", L);
    px_label(e, "wend", L);
    break;
  }
  case TIR_IF: {
    int L = px_new_label(e);
    const char *p = px_tmp(e, RC_PRED);
    px_out(e, "setp.eq.u32 %s, %s, 0;", p, px_reg(e, in->args[0], 0));
    px_out(e, "@%s bra $Lelse%d;", p, L);
    px_emit_block(e, &in->body);
    px_async_wait(e); /* copies of one branch must not wait on a barrier of the other */
    px_out(e, "bra.uni $Lfi%d;", L);
    px_label(e, "else", L);
    px_emit_block(e, &in->body2);
    px_async_wait(e);
    px_label(e, "fi", L);
    break;
  }
  }
}

void px_jump_push(Emitter *e, const char *brk, const char *cont) {
  if (e->njump == 256) diag_ice("loops nested more than 256 deep"); /* the parser bounds nesting at 256 blocks */
  e->jump_break[e->njump] = brk, e->jump_cont[e->njump] = cont;
  e->njump++;
}

void px_emit_inst(Emitter *e, const TirInst *in) {
  if (e->failed) return;
  emit_prologue(e, in);
  emit_op(e, in);
  /* a staged-rows copy's rows are copied once their row start is known */
  if (e->f->staged && in == e->f->stage_row0 && !e->replay && !e->rs_mbar) px_rowstage_issue(e);
}

/* An instruction whose register k depends on its operands' registers k
 * alone, computed by a loop over its registers that emit_chain can cut
 * into slices. */
static bool chainable(Emitter *e, const TirInst *in) {
  /* fragment values only: in the blocked row kernels slicing raised the
   * registers (rmsnorm 169 -> 181, softmax 48 -> 57) where ptxas's own
   * order of whole tiles needed fewer */
  if (e->replay || in->ty.rank == 0 || in->plan->res != RES_REG || !px_is_frag(e, in)) return false;
  switch (in->op) {
  case TIR_UNARY:
  case TIR_MATH:
  case TIR_SELECT:
  case TIR_SPLAT: return true;
  case TIR_BROADCAST: return plan_broadcast_in_regs(in) && plan_is_fragcols(in->args[0]); /* register moves */
  case TIR_BINARY: return !px_binary_whole(e, in);
  case TIR_CONVERT: return !px_fusable_convert(e, in);
  default: return false;
  }
}

/* a scalar constant, which a chain emits before its slices */
static bool chain_const(const TirInst *x) { return x->op == TIR_CONST && x->ty.rank == 0; }

/* The end of the elementwise chain that starts at b->insts[i]: the
 * instructions after it that are chainable, have as many registers, and
 * wait for no planned barrier, or are scalar constants (the operands of
 * the splats between them). */
static int chain_end(Emitter *e, const TirBlock *b, int i) {
  if (!chainable(e, b->insts[i])) return i + 1;
  int n = px_nregs(e, b->insts[i]), j = i + 1, end = j;
  while (j < b->len) {
    const TirInst *x = b->insts[j];
    if (x->pos < e->f->ninsts && e->barrier_before[x->pos]) break;
    if (!chain_const(x) && (!chainable(e, x) || px_nregs(e, x) != n)) break;
    j++;
    if (!chain_const(x)) end = j; /* a chain does not end on a constant */
  }
  return end;
}

/* A run of elementwise instructions emitted a slice of registers at a
 * time, each slice through the whole run, instead of each instruction over
 * all its registers: a chain such as GELU over a [128, 128] accumulator
 * (ten operations) otherwise holds several whole tiles of intermediates at
 * once, and ptxas, which mostly keeps the order it is given, allocated
 * them (145 registers against the GEMM's 102, one CTA an SM). A slice is
 * two registers (a fragment's neighbouring columns, a pair ptxas can
 * schedule together). */
enum { CHAIN_SLICE = 2 };
/* A chain of two operations (an exp of a difference, a scaling and its
 * conversion) keeps at most one intermediate tile either way; emitted in
 * slices it left ptxas spilling more in the 128-register GQA prefill
 * (12 -> 76 bytes, the O normalization and its conversion), so only
 * chains of three operations or more (splats and constants not counted)
 * are sliced. */
enum { CHAIN_MIN_OPS = 3 };
static void emit_chain(Emitter *e, const TirInst *const *run, int len) {
  for (int j = 0; j < len; j++) {
    if (chain_const(run[j])) px_emit_inst(e, run[j]);
    else emit_prologue(e, run[j]);
  }
  int n = px_nregs(e, run[0]);
  for (int k = 0; k < n && !e->failed; k += CHAIN_SLICE) {
    e->klo = k;
    e->khi = k + CHAIN_SLICE;
    for (int j = 0; j < len; j++)
      if (!chain_const(run[j])) emit_op(e, run[j]);
  }
  e->klo = e->khi = 0;
}

/* Instructions [i, j) of b, each as px_emit_block would. */
static void emit_range(Emitter *e, const TirBlock *b, int i, int end) {
  while (i < end && !e->failed) {
    int j = chain_end(e, b, i), ops = 0;
    if (j > end) j = end;
    for (int q = i; q < j; q++) ops += !chain_const(b->insts[q]) && b->insts[q]->op != TIR_SPLAT;
    if (ops >= CHAIN_MIN_OPS) emit_chain(e, (const TirInst *const *)b->insts + i, j - i);
    else
      for (int q = i; q < j; q++) {
        e->cur_block = b, e->cur_index = q;
        px_emit_inst(e, b->insts[q]);
        e->cur_block = NULL;
      }
    i = j;
  }
}

/* Whether member x of a chain that only stores may sit behind the warp's
 * branch: its code neither exchanges through shared memory nor waits on a
 * barrier or a copy that other warps take part in. */
bool px_skip_member_ok(const Emitter *e, const TirInst *x) {
  if (!x->plan || (x->pos < e->f->ninsts && e->barrier_before[x->pos])) return false;
  switch (x->op) {
  case TIR_STORE: return !x->plan->tma && !x->plan->buf;
  case TIR_LOAD: return x->plan->res == RES_REG && !x->plan->tma && !px_rowstage_load(e, x);
  case TIR_BROADCAST: return x->plan->res == RES_REG && plan_broadcast_in_regs(x);
  default: return x->plan->res == RES_REG;
  }
}

/* The lowest column of value v (stored by a chain) that a thread of this
 * warp holds, less the store's start: a blocked or columns layout's warp
 * column base, a flat tile of rank 1's warp index times its chunks; NULL
 * for any other layout. */
const char *px_warp_col0(Emitter *e, const TirInst *v) {
  const char *c = px_tmp(e, RC_B32);
  if (plan_is_blocked(v) || plan_is_columns(v)) {
    BlockGeom g = plan_block_geom(v);
    if (g.wc == 1) return "0";
    px_out(e, "bfe.u32 %s, %%tid_, 5, %d;", c, px_log2i(g.wc));
    px_out(e, "shl.b32 %s, %s, %d;", c, c, px_log2i(g.tc) + px_log2i((int)g.reps_c) + px_log2i(g.V));
    return c;
  }
  if (v->ty.rank != 1 || px_is_frag(e, v) || plan_is_blocked_rows(v) || (e->V & (e->V - 1))) return NULL;
  px_out(e, "and.b32 %s, %%tid_, -32;", c);
  if (e->V > 1) px_out(e, "shl.b32 %s, %s, %d;", c, c, px_log2i(e->V));
  return c;
}

/* The predicate of chain g: some store of it has a column of this warp
 * inside the tensor and inside the tile's logical extent (every column a
 * thread of the warp holds is at least the warp's lowest). "" where a
 * store's layout has no such test, or its start is not computed by
 * program position `pos` (skip.c moves it up where the chain is cut). */
static const char *skip_pred(Emitter *e, const TirSkip *g, int pos) {
  for (int i = 0; i < g->nstores; i++)
    for (int k = 0; k < g->stores[i]->nsubs; k++)
      if (g->stores[i]->subs[k].start && g->stores[i]->subs[k].start->pos > pos) return "";
  const char *run = px_tmp(e, RC_PRED);
  px_out(e, "setp.ne.u32 %s, 0, 0;", run);
  for (int i = 0; i < g->nstores; i++) {
    const TirInst *s = g->stores[i], *v = s->args[0];
    int k = tir_last_span(s);
    const char *c0 = px_warp_col0(e, v);
    if (!c0) return "";
    const char *col = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
    px_or_warp_inside(e, run, v, c0, col, p, px_i32(e, s->subs[k].start), px_ext(e, s->aux, k), s->subs[k].len);
  }
  return run;
}

void px_or_warp_inside(Emitter *e, const char *run, const TirInst *v, const char *c0, const char *col, const char *p,
                       const char *start, const char *bound, int64_t len) {
  px_out(e, "add.s32 %s, %s, %s;", col, start, c0);
  px_out(e, "setp.lt.s32 %s, %s, %s;", p, col, bound);
  if (v->plan->phys[v->ty.rank - 1] > len) /* slack columns past the slice */
    px_out(e, "setp.lt.and.u32 %s, %s, %lld, %s;", p, c0, (long long)len, p);
  px_out(e, "or.pred %s, %s, %s;", run, run, p);
}

/* A run of chain g's members from b->insts[i] (and the scalar arithmetic
 * among them, which reads no tile and so goes first): behind one
 * warp-uniform branch where every member may be, else as they are.
 * Returns the index after the run. */
static int emit_skip_run(Emitter *e, const TirBlock *b, int i) {
  const TirSkip *g = b->insts[i]->skip;
  bool ok = true;
  px_wgmma_settle(e, NULL); /* not behind the run's branch */
  int j = i, last = i;
  for (; j < b->len; j++) {
    const TirInst *x = b->insts[j];
    if (x->skip == g) ok &= px_skip_member_ok(e, x), last = j;
    else if (x->skip || !tir_scalar_arith(x) || (x->pos < e->f->ninsts && e->barrier_before[x->pos])) break;
  }
  j = last + 1;
  if (b->insts[i] == g->first) e->skip_pred[g->id] = NULL; /* this pass over the block computes it afresh */
  if (!ok) {
    emit_range(e, b, i, j);
    return j;
  }
  for (int q = i; q < j; q++) /* the scalars first: they read no member */
    if (b->insts[q]->skip != g) emit_range(e, b, q, q + 1);
  if (!e->skip_pred[g->id]) e->skip_pred[g->id] = skip_pred(e, g, b->insts[j - 1]->pos);
  const char *pred = e->skip_pred[g->id];
  int L = -1;
  if (*pred) {
    /* whatever waits to be done for values from outside the chain is done
     * on every warp's path */
    for (int q = i; q < j; q++)
      for (int k = 0; k < b->insts[q]->nargs; k++)
        if (b->insts[q]->args[k] && b->insts[q]->args[k]->skip != g) px_flush_unpack(e, b->insts[q]->args[k]);
    if (e->sync_pending) px_emit_pending_sync(e);
    L = px_new_label(e);
    px_out(e, "@!%s bra.uni $Lskip%d;", pred, L);
    e->skip_group = g;
  }
  for (int q = i; q < j; q++)
    if (b->insts[q]->skip == g) emit_range(e, b, q, q + 1);
  if (L >= 0) {
    e->skip_group = NULL;
    px_label(e, "skip", L);
  }
  return j;
}

void px_emit_block(Emitter *e, const TirBlock *b) {
  for (int i = 0; i < b->len && !e->failed;) {
    if (b->insts[i]->skip && e->skip_pred && !e->replay) {
      px_depwait_before(e, b, i, -1);
      i = emit_skip_run(e, b, i);
      continue;
    }
    int j = chain_end(e, b, i), ops = 0;
    px_depwait_before(e, b, i, j);
    for (int q = i; q < j; q++) ops += !chain_const(b->insts[q]) && b->insts[q]->op != TIR_SPLAT;
    if (ops >= CHAIN_MIN_OPS) emit_chain(e, (const TirInst *const *)b->insts + i, j - i);
    else /* too short to slice: one at a time (a later start would hold fewer operations) */
      for (int q = i; q < j; q++) {
        e->cur_block = b, e->cur_index = q;
        px_emit_inst(e, b->insts[q]);
        e->cur_block = NULL;
      }
    i = j;
  }
  px_wgmma_settle(e, NULL); /* nor does a wgmma group left running */
  px_emit_pending_sync(e); /* a barrier never leaves its block */
  px_flush_unpack(e, NULL); /* a value may be used after its block, on another path */
}

/* The block coordinates in the plan's grouped order (plan/raster.c): the
 * linear index L = x + X y goes to groups of G rows of y (the last group
 * may be shorter), y fastest within a group: with P = G X, group q = L / P
 * starts at row y0 = q G and is g = min(Y - y0, G) rows tall; r = L - q P
 * gives y = y0 + r % g, x = r / g. A bijection of the grid onto itself
 * (grids too large for 32-bit L or G X keep the hardware's order). */
static void raster_prologue(FILE *out, int G) {
  fprintf(out,
          "  .reg .b32 %%bx_, %%by_, %%bl_, %%bp_, %%bq_, %%bg_;\n"
          "  mov.u32 %%bx_, %%nctaid.x;\n"
          "  mov.u32 %%by_, %%ctaid.y;\n"
          "  mov.u32 %%bl_, %%ctaid.x;\n"
          "  mad.lo.u32 %%bl_, %%by_, %%bx_, %%bl_;\n" /* L */
          "  mul.lo.u32 %%bp_, %%bx_, %d;\n"          /* P = G X */
          "  div.u32 %%bq_, %%bl_, %%bp_;\n"           /* q */
          "  mul.lo.u32 %%by_, %%bq_, %d;\n"          /* y0 */
          "  mov.u32 %%bg_, %%nctaid.y;\n"
          "  sub.u32 %%bg_, %%bg_, %%by_;\n"
          "  min.u32 %%bg_, %%bg_, %d;\n"             /* g */
          "  mul.lo.u32 %%bq_, %%bq_, %%bp_;\n"
          "  sub.u32 %%bl_, %%bl_, %%bq_;\n"           /* r */
          "  rem.u32 %%bp_, %%bl_, %%bg_;\n"
          "  add.u32 %%by_, %%by_, %%bp_;\n"           /* y */
          "  div.u32 %%bx_, %%bl_, %%bg_;\n"           /* x */
          /* a grid of 2^32 blocks or more, or one whose G X wraps: the
           * hardware's order (L and P above are 32-bit) */
          "  .reg .pred %%bo_, %%bw_;\n"
          "  mov.u32 %%bl_, %%nctaid.x;\n"
          "  mov.u32 %%bp_, %%nctaid.y;\n"
          "  mul.hi.u32 %%bq_, %%bl_, %%bp_;\n"
          "  setp.ne.u32 %%bo_, %%bq_, 0;\n"
          "  setp.ge.u32 %%bw_, %%bl_, %d;\n"
          "  or.pred %%bo_, %%bo_, %%bw_;\n"
          "  mov.u32 %%bl_, %%ctaid.x;\n"
          "  selp.u32 %%bx_, %%bl_, %%bx_, %%bo_;\n"
          "  mov.u32 %%bl_, %%ctaid.y;\n"
          "  selp.u32 %%by_, %%bl_, %%by_, %%bo_;\n",
          G, G, G, (int)(0x80000000u / (unsigned)G));
}

static const char *param_ptx_type(Scalar s) {
  return s == S_F64 ? "f64" : s <= S_F32 ? "f32" : s == S_I64 ? "s64" : "s32";
}

/* One planned variant as an entry into out_f (none where NULL); odd, where
 * given, takes what ptx_odd_row_params reports. True where the entry needs
 * PTX ISA 8.1 (Emitter.isa81). */
static bool emit_kernel(Arena *a, Diags *d, const Plan *p, const char *arch, const char *entry, FILE *out_f,
                        Emitter *odd) {
  Emitter e = {.a = a, .d = d, .p = p, .f = p->f, .T = p->threads};
  const TirFunc *f = p->f;
  e.V = p->chunk;
  e.fused_add = arena_alloc(a, (size_t)f->ninsts + 1);
  e.sbase = arena_alloc(a, sizeof(char *) * (size_t)(p->nbufs + 1));
  e.use_count = tir_use_counts(a, f);
  e.l2pf = ptx_l2pf(p, arch);
  e.l2pf_done = arena_alloc(a, (size_t)f->ninsts + 1);
  memset(e.l2pf_done, 0, (size_t)f->ninsts + 1);
  if (!p->no_skip && f->nskip) {
    e.skip_pred = arena_alloc(a, sizeof(char *) * (size_t)f->nskip);
    memset(e.skip_pred, 0, sizeof(char *) * (size_t)f->nskip);
  }
  px_fold_bound_selects(&e);
  px_find_store_packed(&e);
  char *body = NULL, *decls = NULL;
  size_t blen = 0, dlen = 0;
  e.body = open_memstream(&body, &blen);
  e.declf = open_memstream(&decls, &dlen);
  e.barrier_before = arena_alloc(a, (size_t)f->ninsts + 1);
  for (int i = 0; i < p->nbarriers; i++)
    if (p->barriers[i].pos >= 0 && p->barriers[i].pos < f->ninsts) e.barrier_before[p->barriers[i].pos] = true;
  e.sm90 = !strcmp(arch, "sm_90a");
  const PlanBuf *mbar = NULL; /* the ring's (a loop's) */
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i]->kind == BUF_MBAR && p->bufs[i]->owner->op == TIR_FOR) mbar = p->bufs[i];
  if (p->producer && mbar) {
    /* the mbarriers first, seen by every thread (the tensor copies' own
     * too: the barrier below is the last the producer takes part in); then
     * the producer warp goes its own way (px_emit_producer, after the
     * kernel's code) */
    const char *t0 = px_tmp(&e, RC_PRED), *pw = px_tmp(&e, RC_PRED);
    px_out(&e, "setp.eq.u32 %s, %%tid_, 0;", t0);
    px_mbar_init_slots(&e, t0, mbar, 0, p->stages, 1); /* full: the producer's arrival */
    /* empty: every consumer thread's, or (specialized) every consumer warp's */
    px_mbar_init_slots(&e, t0, mbar, p->stages, p->stages, p->specialized ? e.T / 32 : e.T);
    for (int i = 0; i < p->nbufs; i++)
      if (p->bufs[i]->kind == BUF_MBAR && p->bufs[i]->owner->op == TIR_LOAD) px_mbar_init_slots(&e, t0, p->bufs[i], 0, 1, 1);
    px_out(&e, "@%s fence.mbarrier_init.release.cluster;", t0);
    px_out(&e, "bar.sync 0;");
    px_out(&e, "setp.ge.u32 %s, %%tid_, %d;", pw, e.T);
    px_out(&e, "@%s bra $Lproducer;", pw);
    int R, X, Y;
    if (p->specialized && plan_ws_regs(p, &R, &X, &Y)) px_out(&e, "setmaxnreg.inc.sync.aligned.u32 %d;", X);
  } else if (p->ntma_loads) {
    /* each tensor copy's own mbarrier (a BUF_MBAR the copy owns, alive the
     * whole kernel), initialised before any thread waits */
    const char *t0 = px_tmp(&e, RC_PRED);
    px_out(&e, "setp.eq.u32 %s, %%tid_, 0;", t0);
    for (int i = 0; i < p->nbufs; i++)
      if (p->bufs[i]->kind == BUF_MBAR && p->bufs[i]->owner->op == TIR_LOAD) px_mbar_init_slots(&e, t0, p->bufs[i], 0, 1, 1);
    px_out(&e, "@%s fence.mbarrier_init.release.cluster;", t0);
    px_out(&e, "bar.sync 0;");
  }
  bool depwait_moves = px_depwait_begin(&e);
  /* the grid block computes nothing the kernel needs */
  px_emit_block(&e, &f->body);
  px_depwait_end(&e);
  if (e.returns) fputs("$Lreturn:\n", e.body); /* (every return waited for its copies) */
  px_async_wait(&e); /* no copy outstanding at the exit */
  if (p->cluster) px_cluster_end(&e); /* no CTA's exchange goes while another may read it */
  if (p->producer && mbar && !e.failed) {
    px_out(&e, "ret;");
    fputs("$Lproducer:\n", e.body);
    int R, X, Y;
    if (p->specialized && plan_ws_regs(p, &R, &X, &Y)) px_out(&e, "setmaxnreg.dec.sync.aligned.u32 %d;", Y);
    px_out(&e, "sub.u32 %%plane_, %%tid_, %d;", e.T);
    px_emit_producer(&e);
  }
  fclose(e.body);
  fclose(e.declf);
  if (odd) odd->odd_rows = e.odd_rows, odd->odd_rows_wide = e.odd_rows_wide, odd->failed = e.failed;
  if (e.failed || !out_f) {
    free(body);
    free(decls);
    return false;
  }
  /* the plan's buffers, exchanges and mbarriers included; swizzled
   * buffers' offsets are 1024-aligned from a base rounded up to 1024 at run
   * time (the pattern is the shared address's own), and the area holds the
   * bytes that rounding may skip */
  int64_t rounding = plan_base_rounding(p), total = plan_launch_shared(p);
  const KernelInfo *info = f->info;
  fprintf(out_f, "\n.visible .entry %s(\n", entry);
  bool first = true;
  for (int i = 0; i < f->nparams; i++) {
    const TirParam *tp = &f->params[i];
    if (tp->tensor) {
      fprintf(out_f, "%s  .param .u64 base_param%d", first ? "" : ",\n", i);
      first = false;
      for (int dd = 0; dd < tp->rank; dd++) fprintf(out_f, ",\n  .param .s32 ext_param%d_%d", i, dd);
      /* the strides of every dim but the last, in elements, below 2^31
       * (the last is 1: spec 16.3; a general-strides copy takes it too);
       * the runtime passes the row-major ones for a contiguous tensor */
      for (int dd = 0; dd + (p->general_strides ? 0 : 1) < tp->rank; dd++)
        fprintf(out_f, ",\n  .param .s32 str_param%d_%d", i, dd);
    } else {
      fprintf(out_f, "%s  .param .%s p%d", first ? "" : ",\n", param_ptx_type(tp->elem), i);
      first = false;
    }
  }
  for (int m = 0; m < p->ntmaps; m++) /* after the parameters: each map and whether the runtime built it */
    fprintf(out_f, ",\n  .param .align 64 .b8 tmap_param%d[128],\n  .param .u32 tmok_param%d", m, m);
  if (e.l2pf) fputs(",\n  .param .s32 l2pf_param", out_f); /* last: the prefetch distance (l2pf.c) */
  fprintf(out_f, ")\n  .maxntid %d, 1, 1\n", p->launch_threads);
  if (p->occ_blocks || info->min_blocks) fprintf(out_f, "  .minnctapersm %d\n", p->occ_blocks ? p->occ_blocks : info->min_blocks);
  if (info->max_regs) fprintf(out_f, "  .maxnreg %d\n", info->max_regs);
  int wsR, wsX, wsY;
  if (p->specialized && plan_ws_regs(p, &wsR, &wsX, &wsY)) fprintf(out_f, "  .maxnreg %d\n", wsR);
  if (p->cluster) fprintf(out_f, "  .reqnctapercluster %d, 1, 1\n", p->cluster);
  fputs("{\n", out_f);
  if (p->cluster) px_cluster_prologue(&e, out_f);
  if (total > 0) {
    if (info->dynshared) fputs("  .reg .b32 %smem_;\n  mov.u32 %smem_, dsmem;\n", out_f);
    else fprintf(out_f, "  .shared .align %d .b8 smem[%lld];\n  .reg .b32 %%smem_;\n  mov.u32 %%smem_, smem;\n",
                 p->ntmaps ? 128 : 16, (long long)total);
    if (rounding) fputs("  add.u32 %smem_, %smem_, 1023;\n  and.b32 %smem_, %smem_, -1024;\n", out_f);
  } else {
    fputs("  .reg .b32 %smem_;\n  mov.u32 %smem_, 0;\n", out_f);
  }
  fprintf(out_f, "  .reg .b32 %%tid_, %%tidv_%s;\n  mov.u32 %%tid_, %%tid.x;\n  mul.lo.u32 %%tidv_, %%tid_, %d;\n",
          p->producer ? ", %plane_" : "", e.V);
  if (p->raster_group) raster_prologue(out_f, p->raster_group);
  if (p->frags) /* the fragment layout's thread base: 16 w + g and 2 t (px_elem_index) */
    fputs("  .reg .b32 %fwg_, %ft2_;\n  shr.u32 %fwg_, %tid_, 5;\n  shl.b32 %fwg_, %fwg_, 4;\n"
          "  bfe.u32 %ft2_, %tid_, 2, 3;\n  add.u32 %fwg_, %fwg_, %ft2_;\n  and.b32 %ft2_, %tid_, 3;\n"
          "  shl.b32 %ft2_, %ft2_, 1;\n", out_f);
  for (int i = 0; i < f->nparams; i++) {
    const TirParam *tp = &f->params[i];
    if (!tp->tensor) continue;
    fprintf(
        out_f,
        "  .reg .b64 %%base%d;\n  ld.param.u64 %%base%d, [base_param%d];\n  cvta.to.global.u64 %%base%d, %%base%d;\n",
        i, i, i, i, i);
    for (int dd = 0; dd < tp->rank; dd++)
      fprintf(out_f,
              "  .reg .b32 %%ext32_%d_%d;\n  ld.param.s32 %%ext32_%d_%d, [ext_param%d_%d];\n  .reg .b64 %%ext%d_%d;\n"
              "  cvt.s64.s32 %%ext%d_%d, %%ext32_%d_%d;\n",
              i, dd, i, dd, i, dd, i, dd, i, dd, i, dd);
    for (int dd = 0; dd + (p->general_strides ? 0 : 1) < tp->rank; dd++)
      fprintf(out_f, "  .reg .b32 %%str%d_%d;\n  ld.param.s32 %%str%d_%d, [str_param%d_%d];\n", i, dd, i, dd, i, dd);
  }
  if (!strcmp(arch, "sm_90a")) {
    /* Programmatic dependent launch: the runtime may start this grid while
     * the previous kernel in the stream is still running (its launch and
     * this prologue overlap that kernel's tail). The wait holds every
     * thread until that kernel has finished and its writes are visible, so
     * it comes before any global access, read or write. Signalling our own
     * dependents at once is safe for the same reason, and lets the next
     * kernel's CTAs take the slots this grid's last wave frees. Without the
     * launch attribute both are no-ops. Both move to the first
     * statement that touches global memory where depwait.c allows. */
    if (!depwait_moves) fputs("  griddepcontrol.wait;\n  griddepcontrol.launch_dependents;\n", out_f);
  }
  if (e.l2h_used) /* the L2 eviction priorities the accesses name (l2hint.c) */
    fprintf(out_f,
            "  .reg .b64 %%l2pol_last, %%l2pol_first;\n  createpolicy.fractional.L2::evict_last%s.b64 %%l2pol_last, %s;\n"
            "  createpolicy.fractional.L2::evict_first.b64 %%l2pol_first, 1.0;\n",
            p->l2_keep_eighths < 8 ? ".L2::evict_first" : "",
            p->l2_keep_eighths < 8 ? arena_printf(a, "%.3f", p->l2_keep_eighths / 8.0) : "1.0");
  if (e.l2pf)
    fputs("  .reg .b32 %pfd_;\n  ld.param.s32 %pfd_, [l2pf_param];\n  .reg .b64 %pfd64_;\n  cvt.s64.s32 %pfd64_, %pfd_;\n",
          out_f);
  for (int m = 0; m < p->ntmaps; m++)
    fprintf(out_f, "  .reg .b64 %%tmap%d;\n  mov.b64 %%tmap%d, tmap_param%d;\n  cvta.param.u64 %%tmap%d, %%tmap%d;\n"
                   "  .reg .b32 %%tmok%d;\n  ld.param.u32 %%tmok%d, [tmok_param%d];\n",
            m, m, m, m, m, m, m, m);
  /* each tensor copy's phase (px_emit_tma_load) */
  for (int i = 0; i < p->ntma_loads; i++) fprintf(out_f, "  .reg .b32 %%tmaph%d;\n  mov.u32 %%tmaph%d, 0;\n", i, i);
  fputs(decls ? decls : "", out_f);
  for (int rc = 0; rc < RC_COUNT; rc++)
    if (e.ntemp[rc]) fprintf(out_f, "  .reg %s %st<%d>;\n", px_rc_decl[rc], px_rc_prefix[rc], e.ntemp[rc]);
  fputs(body ? body : "", out_f);
  fputs("  ret;\n}\n", out_f);
  free(body);
  free(decls);
  return e.isa81;
}

bool ptx_odd_row_params(Arena *a, Diags *d, const Plan *p, const char *arch, uint64_t *params) {
  Emitter odd = {0};
  Diags quiet = *d;
  quiet.silent = true, quiet.errors = quiet.warnings = 0;
  emit_kernel(a, &quiet, p, arch, "", NULL, &odd);
  *params = odd.odd_rows;
  return !odd.failed && !odd.odd_rows_wide;
}

bool ptx_uses_dynshared(const Plan *p) { return p->f->info->dynshared || p->f->staged; }

/* The module: its header (the PTX ISA version, the target, the dynamic
 * shared symbol, aligned to 128 bytes where a kernel's TMA copies write into
 * it), then every plan as its own entry. The version is 8.0, or 8.1 where a
 * kernel used a vector red (atomic_add's red.global.add.v4.f32, loads.c),
 * which 8.0 lacks; the header comes before the kernels, so its minor digit
 * (at vpos) is raised in place once they are emitted. NULL (d's errors say
 * why) where a kernel could not be emitted; the caller frees the text. */
char *ptx_emit_module(Arena *a, Diags *d, Plan *const *plans, int nplans, const char *arch, size_t *len) {
  char *ptx = NULL;
  *len = 0;
  FILE *pf = open_memstream(&ptx, len);
  if (!pf) diag_ice("cannot open an output buffer");
  bool dyn = false, tma = false;
  for (int i = 0; i < nplans; i++) {
    dyn |= ptx_uses_dynshared(plans[i]);
    tma |= plans[i]->ntmaps > 0;
  }
  fprintf(pf, "// Generated by phobosc %s\n.version 8.", PHOBOS_VERSION);
  long vpos = ftell(pf);
  fprintf(pf, "0\n.target %s\n.address_size 64\n", arch);
  if (dyn) fprintf(pf, ".extern .shared .align %d .b8 dsmem[];\n", tma ? 128 : 16);
  bool isa81 = false;
  for (int i = 0; i < nplans && !d->errors; i++)
    isa81 |= emit_kernel(a, d, plans[i], arch, plan_entry_name(a, plans[i]), pf, NULL);
  fclose(pf);
  if (isa81) ptx[vpos] = '1';
  if (d->errors) {
    free(ptx);
    return NULL;
  }
  return ptx;
}
