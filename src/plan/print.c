/* print.c: --emit=plan and --emit=plan-yaml: every value's physical shape,
 * residence and layout, each dot's path, the buffers and the barriers, as
 * the backend will spell them. */
#include "planner.h"

/* what the plan prints as a dot's path */
static const char *dot_path_name(const TirInst *dot, char buf[32]) {
  switch (dot->plan->dot) {
  case DOT_FMA: return "fma";
  case DOT_COLUMNS: return "fma.columns";
  case DOT_MMA: return pl_mma_k(dot) == 32 ? "mma.m16n8k32" : "mma.m16n8k16";
  case DOT_WGMMA: snprintf(buf, 32, "wgmma.m64n%dk16", dot->plan->wgmma_n); return buf;
  }
  return "?";
}

static const char *res_names[] = {"uniform", "thread", "reg", "shared", "-"};
static const char *buf_kinds[] = {"staging var", "staging dot operand", "scratch", "pipeline ring", "mbarriers"};

static void shape(FILE *out, int rank, const int64_t *dims) {
  fputc('[', out);
  for (int i = 0; i < rank; i++) fprintf(out, "%s%lld", i ? ", " : "", (long long)dims[i]);
  fputc(']', out);
}

const char *plan_layout_str(Arena *a, const Layout *l) {
  if (!l) return "-";
  switch (l->kind) {
  case LAYOUT_BLOCKED: {
    char buf[160];
    int n = snprintf(buf, sizeof buf, "blocked spt=");
    for (int i = 0; i < l->rank; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", i ? "x" : "", l->spt[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n, " tpw=");
    for (int i = 0; i < l->rank; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", i ? "x" : "", l->tpw[i]);
    n += snprintf(buf + n, sizeof buf - (size_t)n, " wpc=");
    for (int i = 0; i < l->rank; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%d", i ? "x" : "", l->wpc[i]);
    snprintf(buf + n, sizeof buf - (size_t)n, " reps=%d", l->reps);
    return arena_strdup(a, buf);
  }
  case LAYOUT_MMA_ACC: return arena_printf(a, "mma16x8x16.acc warps=%d frags=%d", l->wpc[0], l->reps);
  case LAYOUT_FLAT: return arena_printf(a, "flat chunk=%d regs=%d", l->chunk, l->reps);
  case LAYOUT_SLICED: return arena_printf(a, "sliced(last dim) of %s", plan_layout_str(a, l->parent));
  case LAYOUT_COLUMNS: return arena_printf(a, "columns of %s", plan_layout_str(a, l->parent));
  case LAYOUT_NONE: break;
  }
  return "-";
}

const char *plan_entry_name(Arena *a, const Plan *p) {
  const char *n = tir_entry_name(a, p->f);
  n = p->aligned_copy ? arena_printf(a, "%s_al", n) : p->odd_beside ? arena_printf(a, "%s_odd", n) : n;
  if (p->general_strides) n = arena_printf(a, "%s_strided", n);
  if (p->specialized) n = arena_printf(a, "%s_ws", n);
  if (p->occ_blocks) n = arena_printf(a, "%s_occ", n);
  return p->cluster ? arena_printf(a, "%s_cl%d", n, p->cluster) : n;
}

const char *plan_func_str(Arena *a, const Plan *p) {
  const char *v = tir_func_str(a, p->f);
  if (p->aligned_copy) v = arena_printf(a, "%s%saligned rows", v, *v ? "; " : "");
  else if (p->odd_rows) v = arena_printf(a, "%s%sodd rows", v, *v ? "; " : "");
  if (p->general_strides) v = arena_printf(a, "%s%sgeneral strides", v, *v ? "; " : "");
  if (p->specialized) v = arena_printf(a, "%s%swarp-specialized", v, *v ? "; " : "");
  if (p->occ_blocks) v = arena_printf(a, "%s%s%d CTAs an SM", v, *v ? "; " : "", p->occ_blocks);
  return p->cluster ? arena_printf(a, "%s%sclusters of %d CTAs a row block", v, *v ? "; " : "", p->cluster) : v;
}

void plan_print(FILE *out, const Plan *p) {
  const TirFunc *f = p->f;
  Arena *a = arena_new();
  fprintf(out, "plan %s [%s] threads %d%s\n", f->name, plan_func_str(a, p), p->threads,
          p->specialized ? " + a producer warpgroup" : p->producer ? " + a producer warp" : "");
  if (p->stages_wanted) {
    if (p->stages) fprintf(out, "pipeline: %d stages of @pipeline(%d): more do not fit shared memory\n", p->stages, p->stages_wanted);
    else fprintf(out, "pipeline: no rings: @pipeline(%d)'s do not fit shared memory even at 2 stages\n", p->stages_wanted);
  }
  if (p->cluster)
    fprintf(out, "cluster: %d CTAs a row block; the loops over %s split among them (CTA k: blocks k, k + %d, ...), "
                 "their deferred accumulators met across the cluster\n", p->cluster, p->cluster_dim, p->cluster);
  if (p->raster_group)
    fprintf(out, "blocks: grouped %d rows of block.y at a time, block.y fastest (operand tiles shared through the L2)\n",
            p->raster_group);
  fputs("values:\n", out);
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *in = f->insts[i];
    const PlanVal *v = in->plan;
    if (in->op == TIR_STORE && v->path) { /* a store that takes a path of its own */
      fprintf(out, "  %%%-4d %-9s %-4s ", in->id, tir_op_name(in->op), sema_scalar_name(in->args[0]->ty.elem));
      int64_t logical[MAX_TILE_RANK];
      for (int d = 0; d < in->args[0]->ty.rank; d++) logical[d] = in->args[0]->ty.dims[d];
      shape(out, in->args[0]->ty.rank, logical);
      fprintf(out, " of %%%d\n        path: %s\n", in->args[0]->id, v->path);
      continue;
    }
    if (in->ty.rank == 0 || in->op == TIR_STORE || in->op == TIR_WRITE) continue;
    fprintf(out, "  %%%-4d %-9s %-4s ", in->id, tir_op_name(in->op), sema_scalar_name(in->ty.elem));
    int64_t logical[MAX_TILE_RANK];
    for (int d = 0; d < in->ty.rank; d++) logical[d] = in->ty.dims[d];
    shape(out, in->ty.rank, logical);
    fputs(" phys ", out);
    shape(out, in->ty.rank, v->phys);
    fprintf(out, "%s %s", v->slack ? " masked" : "", res_names[v->res]);
    if (v->res == RES_SHARED) fprintf(out, " buf #%d", v->buf->id);
    else if (v->layout) fprintf(out, " %s", plan_layout_str(a, v->layout));
    const char *fb = in->op == TIR_DOT ? plan_dot_fallback(a, p, in) : NULL;
    char pb[32];
    if (in->op == TIR_DOT) fprintf(out, " %s", dot_path_name(in, pb));
    if (in->op == TIR_DOT && v->acc_slot)
      fprintf(out, "\n        accumulates in %%%d's registers%s", v->acc_slot->id,
              v->wait_deferred ? "; waited for in the next iteration, after its groups are issued" : "");
    if (in->op == TIR_DOT && v->wait_at)
      fprintf(out, "\n        waited for before %%%d: the register work between runs beside it", v->wait_at->id);
    if (v->folded) fprintf(out, " folded into the dot");
    if (v->partial) fprintf(out, "\n        within each thread; its loop's exit meets the row's threads");
    if (fb) fprintf(out, "\n        path: fma, not the tensor cores: %s", fb);
    if (v->path) fprintf(out, "\n        path: %s", v->path);
    fputc('\n', out);
  }
  static const char *defer_kinds[] = {"sum", "max", "online logsumexp"};
  for (int i = 0; i < f->ninsts; i++)
    for (const PlanDefer *d = f->insts[i]->plan->defer; d; d = d->next) {
      fprintf(out, "deferred at the exit of loop %%%d: %s of %%%d", f->insts[i]->id, defer_kinds[d->kind], d->slot[0]->id);
      if (d->slot[1]) fprintf(out, " and %%%d", d->slot[1]->id);
      fputc('\n', out);
    }
  fputs("shared buffers:\n", out);
  for (int i = 0; i < p->nbufs; i++) {
    const PlanBuf *b = p->bufs[i];
    fprintf(out, "  #%d %-24s %-20s %s ", b->id, b->name, buf_kinds[b->kind], sema_scalar_name(b->elem));
    shape(out, b->rank, b->dims);
    fprintf(out, " pitch %lld (%lld B)%s  %lld B at %lld  live %d..%d", (long long)b->pitch,
            (long long)(b->pitch * sema_scalar_bytes(b->elem)), b->rows == ROWS_PAD8 ? " +8 padstage" : "", (long long)b->bytes,
            (long long)b->offset, b->first, b->last);
    if (b->stages) fprintf(out, "  ring of %d stages of %lld B", b->stages, (long long)b->stage_bytes);
    if (plan_swizzle(b)) fprintf(out, "  swizzled %dB", plan_swizzle(b));
    fputc('\n', out);
  }
  fprintf(out, "shared total: %lld bytes (limit %lld)\n", (long long)p->shared_bytes, (long long)p->shared_limit);
  fprintf(out, "barriers: %d\n", p->nbarriers);
  for (int i = 0; i < p->nbarriers; i++) {
    const PlanBarrier *b = &p->barriers[i];
    if (b->pos < 0) fprintf(out, "  within %%%d: %s\n", -1 - b->pos, b->why);
    else fprintf(out, "  before %%%d: %s\n", b->pos, b->why);
  }
  arena_free(a);
}

static void yaml_shape(FILE *out, int rank, const int64_t *dims) {
  fputc('[', out);
  for (int i = 0; i < rank; i++) fprintf(out, "%s%lld", i ? ", " : "", (long long)dims[i]);
  fputc(']', out);
}

/* The same facts as YAML, for tools. Names are quoted: they may hold
 * spaces and '%'. */
void plan_print_yaml(FILE *out, const Plan *p) {
  const TirFunc *f = p->f;
  Arena *a = arena_new();
  fprintf(out, "- kernel: %s\n  entry: %s\n  variant: \"%s\"\n  threads: %d\n  producer_warp: %s\n  shared_bytes: %lld\n"
          "  shared_limit: %lld\n  chunk: %d\n", f->name, plan_entry_name(a, p), plan_func_str(a, p), p->threads,
          p->producer ? "true" : "false", (long long)p->shared_bytes, (long long)p->shared_limit, p->chunk);
  if (p->raster_group) fprintf(out, "  raster_group: %d\n", p->raster_group);
  fputs("  values:\n", out);
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *in = f->insts[i];
    const PlanVal *v = in->plan;
    if (in->op == TIR_STORE && v->path) {
      fprintf(out, "    - {id: %d, op: store, value: %d, path: \"%s\"}\n", in->id, in->args[0]->id, v->path);
      continue;
    }
    if (in->ty.rank == 0 || in->op == TIR_STORE || in->op == TIR_WRITE) continue;
    int64_t logical[MAX_TILE_RANK];
    for (int d = 0; d < in->ty.rank; d++) logical[d] = in->ty.dims[d];
    fprintf(out, "    - {id: %d, op: %s, elem: %s, shape: ", in->id, tir_op_name(in->op),
            sema_scalar_name(in->ty.elem));
    yaml_shape(out, in->ty.rank, logical);
    fputs(", phys: ", out);
    yaml_shape(out, in->ty.rank, v->phys);
    fprintf(out, ", masked: %s, residence: %s", v->slack ? "true" : "false", res_names[v->res]);
    if (v->res == RES_SHARED) fprintf(out, ", buffer: %d", v->buf->id);
    else if (v->layout) fprintf(out, ", layout: \"%s\", regs: %lld", plan_layout_str(a, v->layout), (long long)plan_regs(p, in));
    if (in->op == TIR_DOT) {
      const char *fb = plan_dot_fallback(a, p, in);
      char pb[32];
      fprintf(out, ", dot: %s", dot_path_name(in, pb));
      if (v->acc_slot)
        fprintf(out, ", accumulates_in: %d, wait_deferred: %s", v->acc_slot->id, v->wait_deferred ? "true" : "false");
      if (v->wait_at) fprintf(out, ", wait_at: %d", v->wait_at->id);
      if (fb) fprintf(out, ", path: \"fma, not the tensor cores: %s\"", fb);
    }
    if (v->folded) fputs(", folded: true", out);
    if (v->partial) fputs(", partial: true", out);
    if (v->path) fprintf(out, ", path: \"%s\"", v->path);
    fputs("}\n", out);
  }
  fputs("  buffers:\n", out);
  for (int i = 0; i < p->nbufs; i++) {
    const PlanBuf *b = p->bufs[i];
    fprintf(out, "    - {id: %d, name: \"%s\", kind: %s, elem: %s, dims: ", b->id, b->name,
            b->kind == BUF_SCRATCH ? "scratch"
            : b->kind == BUF_RING  ? "ring"
            : b->kind == BUF_MBAR  ? "mbarriers"
                                   : "staging",
            sema_scalar_name(b->elem));
    yaml_shape(out, b->rank, b->dims);
    fprintf(out, ", pitch: %lld, padded: %s, bytes: %lld, offset: %lld, live: [%d, %d]", (long long)b->pitch,
            b->rows == ROWS_PAD8 ? "true" : "false", (long long)b->bytes, (long long)b->offset, b->first, b->last);
    if (b->stages) fprintf(out, ", stages: %d, stage_bytes: %lld", b->stages, (long long)b->stage_bytes);
    if (plan_swizzle(b)) fprintf(out, ", swizzle: %d", plan_swizzle(b));
    fputs("}\n", out);
  }
  fprintf(out, "  barriers: %d\n", p->nbarriers);
  arena_free(a);
}
