/* plan.c: the planner's pass order, one pass a line (QBE's main.c:func()).
 *
 * For one variant it decides where every value lives and how it is laid
 * out: physical shapes (extents rounded to powers of two and layout
 * granules; the lanes past the logical extent are slack, masked by every
 * load, reduction and store), residence (uniform scalars, register tiles
 * with a layout, staged tiles in shared memory), each register class's
 * distribution over the threads and each dot's instruction, the rings of
 * @pipeline loops, TMA tensor copies and stores, every buffer's bytes and
 * lifetime (exchanges between threads included), and the barriers. The
 * backend (src/ptx/) spells what it decided; the interpreter runs it. */
#include "planner.h"

enum { STATIC_SHARED = 48 * 1024, SHARED_OPTIN_SM90 = 227 * 1024, SHARED_OPTIN_SM80 = 163 * 1024 };

static void walk(TirBlock *b, void (*fn)(Planner *, TirInst *), Planner *P) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    fn(P, in);
    walk(&in->cond, fn, P);
    walk(&in->body, fn, P);
    walk(&in->body2, fn, P);
  }
}

Plan *plan_kernel(Arena *a, Diags *d, TirFunc *f, const char *arch, unsigned flags) {
  return plan_kernel_rows(a, d, f, arch, flags, 0);
}

Plan *plan_kernel_rows(Arena *a, Diags *d, TirFunc *f, const char *arch, unsigned flags, uint64_t scalar_params) {
  if (flags & PLAN_GENERAL_STRIDES) flags |= PLAN_NO_ASYNC | PLAN_NO_TENSOR_COPIES | PLAN_NO_L2PF;
  Plan *p = arena_alloc(a, sizeof *p);
  p->f = f;
  p->general_strides = flags & PLAN_GENERAL_STRIDES;
  p->scalar_params = scalar_params;
  p->threads = f->info->threads;
  p->launch_threads = p->threads;
  p->padstage = f->info->padstage;
  p->prefetch = flags & PLAN_PREFETCH;
  p->no_defer = flags & PLAN_NO_DEFER;
  p->late_waits = flags & PLAN_LATE_WAITS;
  p->no_async = (flags & PLAN_NO_ASYNC) || f->info->no_tma;
  p->no_l2pf = flags & PLAN_NO_L2PF;
  p->early_pf = flags & PLAN_EARLY_PF;
  p->l2_hints = !(flags & PLAN_NO_L2_HINTS);
  p->l2_hint_stores = p->l2_hints && (flags & PLAN_L2_HINT_STORES);
  p->l2_keep_eighths = 8 - (int)((flags & PLAN_L2_KEEP_MASK) >> PLAN_L2_KEEP_SHIFT);
  p->no_skip = flags & PLAN_NO_SKIP;
  p->no_walk_skip = flags & PLAN_NO_WALK_SKIP;
  p->row_broadcasts = flags & PLAN_ROW_BROADCASTS;
  p->shift_walk = flags & PLAN_SHIFT_WALK;
  bool sm90 = !arch || strcmp(arch, "sm_90a") == 0;
  p->wgmma = sm90 && !(flags & PLAN_NO_WGMMA);
  p->shared_limit = f->info->dynshared ? (sm90 ? SHARED_OPTIN_SM90 : SHARED_OPTIN_SM80) : STATIC_SHARED;
  Planner P = {.a = a, .d = d, .f = f, .p = p, .mma_ok = true, .use_count = tir_use_counts(a, f)};
  P.parent = arena_alloc(a, sizeof(int) * (size_t)(f->ninsts + 1));
  for (int i = 0; i < f->ninsts; i++) P.parent[i] = i;
  P.encl = arena_alloc(a, sizeof *P.encl * (size_t)(f->ninsts + 1));
  pl_enclosing_loops(&P, &f->body, NULL);

  walk(&f->grid, pl_init_phys, &P);
  walk(&f->body, pl_init_phys, &P);
  walk(&f->body, pl_tie_values, &P);
  walk(&f->body, pl_dot_granules, &P);
  pl_unify_phys(&P);
  walk(&f->body, pl_choose_staging, &P);
  pl_assign_layouts(&P);
  pl_choose_pipeline(&P, sm90, flags);
  if (sm90 && !(flags & PLAN_NO_TENSOR_COPIES) && !p->no_async && !p->producer)
    pl_walk_tma(&P, &f->body, false, false, NULL);
  if (flags & PLAN_SPECIALIZE) pl_choose_specialize(&P);
  pl_choose_rows(&P);
  pl_choose_layouts(&P);
  pl_choose_chunk(&P);
  pl_choose_dot_paths(&P);
  pl_choose_accumulate(&P);
  pl_choose_deferred(&P);
  pl_choose_raster(&P);
  walk(&f->body, pl_choose_exchange, &P);
  if (!pl_check_backend_limits(&P)) return NULL;
  Accesses acc = pl_accesses(&P);
  pl_live_ranges(&P, &acc);
  pl_allocate(&P);
  pl_place_barriers(&P, &acc);
  pl_choose_wgmma_waits(&P);

  /* Tensor copies cost shared memory of their own (a swizzled buffer's
   * 1024-byte alignment and the rounded base, the copies' mbarriers): a
   * kernel they push over the limit is planned without them. */
  int64_t need = plan_launch_shared(p);
  f->shared_need = need; /* the driver weighs points that do not fit by it */
  if (p->ntmaps && !(flags & PLAN_NO_TENSOR_COPIES) && need > p->shared_limit)
    return plan_kernel(a, d, f, arch, flags | PLAN_NO_TENSOR_COPIES | PLAN_AUTO_NO_TC);
  /* @pipeline's rings that do not fit take a stage fewer (the tensor
   * copies tried again), down to 2, then none: a kernel is never refused
   * for its @pipeline alone */
  if (need > p->shared_limit && p->stages >= 2) {
    unsigned fl = flags & ~PLAN_STAGE_MASK;
    if (flags & PLAN_AUTO_NO_TC) fl &= ~(unsigned)(PLAN_NO_TENSOR_COPIES | PLAN_AUTO_NO_TC);
    return plan_kernel(a, d, f, arch, fl | PLAN_STAGE_CAP(p->stages - 1));
  }
  if (need > p->shared_limit) {
    diag_error(d, f->info->kernel->span,
               "kernel '%s' needs %lld bytes of shared memory; the limit is %lld%s", f->name,
               (long long)need, (long long)p->shared_limit,
               f->info->dynshared ? " (the device's opt-in maximum)" : " (static; @dynshared raises it)");
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
      plan_print(mem, p);
      fclose(mem);
      if (len && text[len - 1] == '\n') text[len - 1] = 0;
      const char *v = tir_func_str(a, f);
      diag_note(d, f->info->kernel->span, "the plan%s%s%s:\n%s", *v ? ", for @autotune point [" : "", v, *v ? "]" : "",
                text);
      free(text);
    }
    return NULL;
  }
  return p;
}

int64_t plan_launch_shared(const Plan *p) { return p->shared_bytes + plan_base_rounding(p); }
