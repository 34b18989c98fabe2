/* plan.c: where every value lives and how it is laid out.
 *
 * Decides, for one variant:
 *   - physical shapes: every tile extent rounded up to a power of two, and
 *     to the granule of its layout (16 rows and 8 columns for an m16n8k16
 *     accumulator); the lanes past the logical extent are slack, masked by
 *     every load, reduction and store;
 *   - residence: scalars are uniform (each thread computes the same value);
 *     tiles live in registers with a layout, or in shared memory when they
 *     are staging tiles (`var t = <slice>`, and loaded views that a dot
 *     reads) or when a layout change needs a scratch buffer;
 *   - shared memory: sizes (with @padstage's +8 elements per row for rows
 *     that are a multiple of 128 bytes), live ranges, byte reuse between
 *     buffers whose lives do not overlap, 16-byte aligned offsets, budget;
 *   - barriers: only where a thread reads bytes another thread wrote (or
 *     writes bytes another thread may still read).
 */
#include "tir.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { STATIC_SHARED = 48 * 1024, SHARED_OPTIN_SM90 = 227 * 1024, SHARED_OPTIN_SM80 = 163 * 1024 };

typedef struct Planner {
  Arena *a;
  Diags *d;
  TirFunc *f;
  Plan *p;
  int *parent; /* union-find over instruction ids: values tied elementwise */
  bool mma_ok; /* the target has m16n8k16 */
  PtrVec bufs;
  PtrVec barriers;
  int *uses; /* tir_use_counts */
  int nlayouts; /* Layout.id: layouts made so far (at most one a class) */
  struct WalkMemo **walked; /* by loop id: the barrier walks done (barrier_walk) */
  /* indexes, so that no pass scans the whole kernel for each instruction
   * (a kernel of 40,000 statements planned in quadratic time) */
  TirInst **encl;          /* by position: the innermost loop strictly containing it (enclosing_loops) */
  PtrVec *users;           /* by id: the instructions that take it as an operand or subscript (written_while_alive) */
  PtrVec *writes;          /* by slot id: its WRITEs in program order (written_while_alive) */
  PtrVec *scratch_of;      /* by id: the scratch buffers it owns, in buffer order (collect_accesses) */
  struct PlanBarrier **bar_at, **bar_within; /* by position: the barrier before it, within it (add_barrier) */
} Planner;

static int64_t pow2_ceil(int64_t v) { /* v <= MAX_TILE_ELEMS (tir_verify) */
  int64_t p = 1;
  while (p < v && p < INT64_MAX / 2) p <<= 1;
  return p;
}

static int find(Planner *P, int x) {
  while (P->parent[x] != x) x = P->parent[x] = P->parent[P->parent[x]];
  return x;
}

static void unite(Planner *P, const TirInst *x, const TirInst *y) {
  if (x->ty.rank == 0 || y->ty.rank == 0 || x->ty.rank != y->ty.rank) return;
  int a = find(P, x->id), b = find(P, y->id);
  if (a != b) P->parent[a] = b;
}

static PlanVal *pv(const TirInst *in) { return in->plan; }

static void walk(TirBlock *b, void (*fn)(Planner *, TirInst *), Planner *P) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    fn(P, in);
    walk(&in->cond, fn, P);
    walk(&in->body, fn, P);
    walk(&in->body2, fn, P);
  }
}

/* ---------------------------------------------------------- dot paths */

static bool is_int8(Scalar s) { return s == S_I8 || s == S_U8; }

/* The tensor cores take 16-bit float operands of one type (m16n8k16, f32
 * accumulators), and 8-bit integer operands of a dot_t (m16n8k32, i32
 * accumulators: its b, [N, K], is the "col" operand as it lies; a dot's
 * [K, N] b would need a byte transpose that ldmatrix cannot do). Anything
 * else (f32, f64, an 8-bit dot) runs on FMA. */
static bool dot_uses_mma(Planner *P, const TirInst *dot) {
  Scalar ea = dot->args[0]->ty.elem, eb = dot->args[1]->ty.elem;
  return P->mma_ok && ((ea == eb && (ea == S_F16 || ea == S_BF16)) || (is_int8(ea) && is_int8(eb) && dot->aux));
}

/* K of one mma: 16 elements of 16 bits, or 32 of 8 */
static int64_t mma_k(const TirInst *dot) { return is_int8(dot->args[0]->ty.elem) ? 32 : 16; }

/* what the plan prints as a dot's path */
static const char *dot_path_name(const TirInst *dot, char buf[32]) {
  switch (dot->plan->dot) {
  case DOT_FMA: return "fma";
  case DOT_COLUMNS: return "fma.columns";
  case DOT_MMA: return mma_k(dot) == 32 ? "mma.m16n8k32" : "mma.m16n8k16";
  case DOT_WGMMA: snprintf(buf, 32, "wgmma.m64n%dk16", dot->plan->wgmma_n); return buf;
  }
  return "?";
}

/* ------------------------------------------------------ physical shapes */

static void tie_values(Planner *P, TirInst *in) {
  switch (in->op) {
  case TIR_UNARY:
  case TIR_MATH:
  case TIR_CONVERT:
    unite(P, in, in->args[0]);
    break;
  case TIR_BINARY:
    unite(P, in, in->args[0]);
    unite(P, in, in->args[1]);
    break;
  case TIR_SELECT:
    for (int i = 0; i < 3; i++) unite(P, in, in->args[i]);
    break;
  case TIR_READ: unite(P, in, in->args[0]); break;
  case TIR_WRITE:
    if (!in->nsubs) unite(P, in->args[0], in->args[1]);
    break;
  default: break;
  }
}

static void init_phys(Planner *P, TirInst *in) {
  PlanVal *v = arena_alloc(P->a, sizeof *v);
  in->plan = v;
  v->res = in->ty.rank ? RES_REG : RES_UNIFORM;
  if (in->op == TIR_STORE || in->op == TIR_WRITE || in->op == TIR_IF || in->op == TIR_WHILE) v->res = RES_NONE;
  for (int i = 0; i < in->ty.rank; i++) v->phys[i] = pow2_ceil(in->ty.dims[i]);
}

/* Raises the physical rows of a (possibly rank-3) value so its folded rows
 * are a multiple of `rows`, and its last dim a multiple of `cols`. */
static void granule(PlanVal *v, const TirType *t, int64_t rows, int64_t cols) {
  int r = t->rank;
  if (v->phys[r - 1] < cols) v->phys[r - 1] = cols;
  int64_t folded = 1;
  for (int i = 0; i < r - 1; i++) folded *= v->phys[i];
  if (folded < rows) v->phys[0] *= rows / folded;
}

static void dot_granules(Planner *P, TirInst *in) {
  if (in->op != TIR_DOT) return;
  PlanVal *v = pv(in);
  v->dot_fma = !dot_uses_mma(P, in);
  if (v->dot_fma) return;
  granule(v, &in->ty, 16, 8);
  TirInst *a = in->args[0], *b = in->args[1];
  int64_t kg = mma_k(in);
  granule(pv(a), &a->ty, 16, kg);
  /* b is [K, N] (or [N, K] for dot_t): K to the mma's K, N to 8 */
  PlanVal *bv = pv(b);
  int kdim = in->aux ? 1 : 0;
  if (bv->phys[kdim] < kg) bv->phys[kdim] = kg;
  if (bv->phys[1 - kdim] < 8) bv->phys[1 - kdim] = 8;
}

/* Values tied elementwise share one physical shape: the largest. */
static void unify_phys(Planner *P) {
  int n = P->f->ninsts;
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (!in->ty.rank) continue;
    TirInst *root = P->f->insts[find(P, i)];
    for (int d = 0; d < in->ty.rank; d++)
      if (pv(root)->phys[d] < pv(in)->phys[d]) pv(root)->phys[d] = pv(in)->phys[d];
  }
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (!in->ty.rank) continue;
    TirInst *root = P->f->insts[find(P, i)];
    for (int d = 0; d < in->ty.rank; d++) {
      pv(in)->phys[d] = pv(root)->phys[d];
      if (pv(in)->phys[d] > in->ty.dims[d]) pv(in)->slack = true;
    }
  }
}

/* ------------------------------------------------------------- layouts */

static Layout *new_layout(Planner *P) {
  Layout *l = arena_alloc(P->a, sizeof *l);
  l->id = P->nlayouts++;
  return l;
}

static Layout *blocked(Planner *P, const PlanVal *v, int rank, Scalar elem) {
  Layout *l = new_layout(P);
  l->kind = LAYOUT_BLOCKED;
  l->rank = rank;
  int64_t left[MAX_TILE_RANK] = {1, 1, 1};
  if (rank < 1) rank = 1;
  for (int i = 0; i < rank; i++) {
    left[i] = v->phys[i] ? v->phys[i] : 1;
    l->spt[i] = l->tpw[i] = l->wpc[i] = 1;
  }
  /* 16-byte vectors along the innermost dim */
  int64_t vec = 16 / sema_scalar_bytes(elem);
  if (vec < 1) vec = 1;
  if (vec > left[rank - 1]) vec = left[rank - 1];
  l->spt[rank - 1] = (int)vec;
  left[rank - 1] /= vec;
  int lanes = 32, warps = P->p->threads / 32;
  for (int i = rank - 1; i >= 0 && lanes > 1; i--) {
    int64_t t = left[i] < lanes ? left[i] : lanes;
    l->tpw[i] = (int)t;
    lanes /= (int)t;
    left[i] /= t;
  }
  for (int i = 0; i < rank && warps > 1; i++) {
    int64_t w = left[i] < warps ? left[i] : warps;
    if (w < 1) w = 1;
    l->wpc[i] = (int)w;
    warps /= (int)w;
    left[i] /= w;
  }
  int64_t reps = 1;
  for (int i = 0; i < rank; i++) reps *= left[i];
  l->reps = (int)reps;
  return l;
}

static Layout *mma_layout(Planner *P, LayoutKind kind, const PlanVal *v, int rank) {
  Layout *l = new_layout(P);
  l->kind = kind;
  l->rank = rank;
  int64_t rows = 1;
  for (int i = 0; i < rank - 1; i++) rows *= v->phys[i];
  int64_t cols = v->phys[rank - 1];
  int warps = P->p->threads / 32;
  int64_t slabs = rows / 16;
  int w = (int)(slabs < warps ? slabs : warps);
  if (w < 1) w = 1;
  l->wpc[0] = w;
  int64_t per_warp = (slabs / w) * (cols / 8);
  l->reps = (int)(per_warp < 1 ? 1 : per_warp);
  return l;
}

/* The B operand of an FMA dot, [K, N]: each thread keeps whole columns (all
 * of K) of the output columns it owns, so the product needs no exchange. */
static Layout *dot_b_layout(Planner *P, const PlanVal *v, Scalar elem, bool trans) {
  int kd = trans ? 1 : 0, nd = 1 - kd;
  int64_t k = v->phys[kd], nn = v->phys[nd];
  Layout *l = new_layout(P);
  l->kind = LAYOUT_BLOCKED;
  l->rank = 2;
  int64_t vec = trans ? 1 : 16 / sema_scalar_bytes(elem);
  if (vec < 1) vec = 1;
  if (vec > nn) vec = nn;
  int64_t lanes = nn / vec < 32 ? nn / vec : 32;
  int64_t warps = P->p->threads / 32;
  if (warps > nn / (vec * lanes)) warps = nn / (vec * lanes);
  if (warps < 1) warps = 1;
  l->spt[kd] = (int)k;
  l->tpw[kd] = l->wpc[kd] = 1;
  l->spt[nd] = (int)vec;
  l->tpw[nd] = (int)lanes;
  l->wpc[nd] = (int)warps;
  l->reps = (int)(nn / (vec * lanes * warps));
  if (l->reps < 1) l->reps = 1;
  return l;
}

/* The layout each class of tied values takes: a dot result fixes its class
 * (accumulator or FMA blocked), then an FMA dot's B operand fixes its own;
 * everything else is blocked. */
static void assign_layouts(Planner *P) {
  int n = P->f->ninsts;
  Layout **cls = arena_alloc(P->a, sizeof(Layout *) * (size_t)n);
  /* 1. dot results */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT) continue;
    int root = find(P, i);
    if (!cls[root])
      cls[root] = pv(in)->dot_fma ? blocked(P, pv(in), in->ty.rank, in->ty.elem)
                                  : mma_layout(P, LAYOUT_MMA_ACC, pv(in), in->ty.rank);
  }
  /* 2. an FMA dot's B operand */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT || !pv(in)->dot_fma || pv(in->args[1])->res != RES_REG) continue;
    int root = find(P, in->args[1]->id);
    if (!cls[root]) cls[root] = dot_b_layout(P, pv(in->args[1]), in->args[1]->ty.elem, in->aux);
  }
  /* 3. row reductions: their input's layout with the rows kept, for the
   * whole class they feed (the running max and sum of a softmax) */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_REDUCE) continue;
    TirInst *x = in->args[0];
    int xr = find(P, x->id), root = find(P, i);
    if (!cls[xr]) cls[xr] = blocked(P, pv(x), x->ty.rank, x->ty.elem);
    if (!cls[root]) {
      Layout *l = new_layout(P);
      l->kind = LAYOUT_SLICED;
      l->rank = in->ty.rank;
      l->parent = cls[xr];
      cls[root] = l;
    }
  }
  /* 4. the rest */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    PlanVal *v = pv(in);
    if (v->res != RES_REG) continue;
    int root = find(P, i);
    if (!cls[root]) cls[root] = blocked(P, v, in->ty.rank, in->ty.elem);
    v->layout = cls[root];
  }
}

/* ------------------------------------------------- the layouts kept */

/* the elements of a planned value */
static int64_t phys_elems(const TirInst *x) {
  int64_t n = 1;
  for (int i = 0; i < x->ty.rank; i++) n *= pv(x)->phys[i];
  return n;
}

static bool mma_fits(Planner *P, const TirInst *dot) {
  return !pv(dot)->dot_fma && !plan_dot_fallback(P->a, P->p, dot);
}

/* a register value of the fragment layout (after choose_frags) */
static bool is_frag(const TirInst *x) {
  return x->plan && x->ty.rank >= 2 && x->plan->res == RES_REG && x->plan->layout &&
         x->plan->layout->kind == LAYOUT_MMA_ACC;
}

/* A row value in the row layout beside a fragment value (choose_frags). */
static bool is_rowfrag(const TirInst *x) {
  return x->plan && x->ty.rank >= 2 && x->plan->res == RES_REG && x->plan->layout &&
         x->plan->layout->kind == LAYOUT_SLICED;
}

/* Whether member x of a class allows a register layout other than the
 * flat one: a register value of the class's physical shape (with a last
 * dim of 1 for a row class) whose operation the backend spells register by
 * register or by asking where an element is (ptx/layout.c). A fragment
 * class (rows false) may hold tensor-core dots, broadcasts and iotas; a
 * row class (rows true) rowmax and rowsum of f32 fragment values with its
 * rows. first: the class's first member. */
static bool member_allows(Planner *P, const TirInst *x, const TirInst *first, bool rows) {
  /* the backend reads a staged tile operand at the flat index of register
   * k: an elementwise member must take its tiles from registers (a dot
   * reads its staged operands through ldmatrix, a broadcast its source
   * through the exchange area, in the source's own layout) */
  if (x->op != TIR_DOT && x->op != TIR_BROADCAST)
    for (int i = 0; i < x->nargs; i++)
      if (x->args[i] && x->args[i]->ty.rank && x->args[i]->plan && x->args[i]->plan->res != RES_REG) return false;
  int r = x->ty.rank;
  if (r < 2 || r != first->ty.rank || (rows && x->plan->phys[r - 1] != 1)) return false;
  for (int d = 0; d < r; d++)
    if (x->plan->phys[d] != first->plan->phys[d]) return false;
  switch (x->op) {
  case TIR_DOT: return !rows && mma_fits(P, x);
  case TIR_REDUCE:
    return rows && is_frag(x->args[0]) && x->ty.elem == S_F32 && x->args[0]->ty.elem == S_F32 &&
           plan_folded_rows(x->args[0]) == plan_folded_rows(x) && (x->aux == TRED_MAX || x->aux == TRED_SUM);
  case TIR_BROADCAST: case TIR_IOTA: return !rows;
  case TIR_READ: return x->args[0]->plan->res == RES_REG;
  case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_SPLAT: case TIR_VAR:
    return true;
  default: return false;
  }
}

/* The layouts the backend keeps: the fragment layout for each tensor-core
 * accumulator class whose every member allows it (member_allows), whose
 * values are written whole into register vars only, and whose row tiles
 * divide evenly among the warps; then the row layout beside it for each
 * row class fed by a reduction of such a class. Every other register class
 * is flat: chunks of Plan.chunk elements dealt round the threads
 * (choose_chunk). One pass over the kernel a kind. */
static void choose_frags(Planner *P) {
  const TirFunc *f = P->f;
  int T = P->p->threads, W = T / 32, n = f->ninsts;
  const TirInst **first = arena_alloc(P->a, sizeof *first * (size_t)(n + 1)); /* by layout id */
  bool *bad = arena_alloc(P->a, (size_t)(n + 1));
  for (int pass = 0; pass < 2; pass++) {
    bool rows = pass == 1;
    LayoutKind kind = rows ? LAYOUT_SLICED : LAYOUT_MMA_ACC;
    memset(first, 0, sizeof *first * (size_t)(n + 1));
    memset(bad, 0, (size_t)(n + 1));
    for (int j = 0; j < n; j++) {
      const TirInst *x = f->insts[j];
      if (x->op == TIR_WRITE) { /* whole writes between register values only */
        const Layout *lv = x->args[1]->plan ? x->args[1]->plan->layout : NULL;
        const Layout *ls = x->args[0]->plan && x->args[0]->plan->res == RES_REG ? x->args[0]->plan->layout : NULL;
        if (lv && lv->kind == kind && (x->nsubs || x->args[0]->plan->res != RES_REG)) bad[lv->id] = true;
        if (ls && ls->kind == kind && (x->nsubs || (x->args[1]->ty.rank && x->args[1]->plan->res != RES_REG)))
          bad[ls->id] = true;
      }
      const Layout *L = x->plan && x->plan->res == RES_REG ? x->plan->layout : NULL;
      if (!L || L->kind != kind) continue;
      if (!first[L->id]) first[L->id] = x;
      if (!bad[L->id] && !member_allows(P, x, first[L->id], rows)) bad[L->id] = true;
    }
    for (int j = 0; j < n; j++) {
      const TirInst *x = first[j];
      if (!x) continue;
      Layout *L = x->plan->layout;
      int64_t M = plan_folded_rows(x), N = x->plan->phys[x->ty.rank - 1];
      bool keep = T % 32 == 0 && !bad[j] && (!rows || (L->parent && L->parent->kind == LAYOUT_MMA_ACC)) &&
                  M % 16 == 0 && (rows || N % 8 == 0) && (M / 16) % W == 0;
      if (!keep) L->kind = LAYOUT_FLAT;
    }
  }
  for (int i = 0; i < n; i++) {
    Layout *L = f->insts[i]->plan ? f->insts[i]->plan->layout : NULL;
    if (L && L->kind == LAYOUT_BLOCKED) L->kind = LAYOUT_FLAT;
    if (L && L->kind == LAYOUT_MMA_ACC) P->p->frags = true;
  }
}

/* The widest chunk (4, 2, 1) that divides every register tile of the
 * kernel into whole rounds of T chunks along whole rows: then no thread
 * holds a partial chunk, every chunk lies in one row, and a thread that
 * owns a column of one tile owns it in every tile of that row length. */
static bool chunks_fit(const TirBlock *b, int64_t T, int64_t v) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->plan && in->ty.rank && in->plan->res == RES_REG) {
      int64_t inner = in->plan->phys[in->ty.rank - 1];
      if (inner % v || phys_elems(in) % (T * v)) return false;
    }
    if (!chunks_fit(&in->body, T, v) || !chunks_fit(&in->body2, T, v) || !chunks_fit(&in->cond, T, v)) return false;
  }
  return true;
}

/* Plan.chunk, and each flat class's registers a thread. */
static void choose_chunk(Planner *P) {
  int T = P->p->threads;
  P->p->chunk = 1;
  for (int v = 4; v > 1 && P->p->chunk == 1; v /= 2)
    if (chunks_fit(&P->f->body, T, v)) P->p->chunk = v;
  int64_t round = (int64_t)T * P->p->chunk;
  for (int i = 0; i < P->f->ninsts; i++) {
    const TirInst *x = P->f->insts[i];
    Layout *L = x->plan ? x->plan->layout : NULL;
    if (L && L->kind == LAYOUT_FLAT && x->ty.rank && x->plan->res == RES_REG) {
      L->chunk = P->p->chunk;
      L->reps = (int)((phys_elems(x) + round - 1) / round * P->p->chunk);
    }
  }
}

/* An operand ldmatrix can read where it is: a staged buffer of its element
 * type laid out as the value's physical shape, rows on 16-byte boundaries
 * (offsets are 16-byte aligned: allocate). */
static bool mma_direct(const TirInst *x) {
  const PlanBuf *b = x->plan->res == RES_SHARED ? x->plan->buf : NULL;
  if (!b || b->elem != x->ty.elem || b->rank != x->ty.rank || (b->pitch * sema_scalar_bytes(b->elem)) % 16) return false;
  for (int i = 0; i < b->rank; i++)
    if (b->dims[i] != x->plan->phys[i]) return false;
  return true;
}

/* A tensor-core dot whose a is in the fragment layout with 16-column tiles,
 * the result's rows and K columns: the accumulators of a's column tile s
 * are, packed in pairs, the A fragment of k-step s (FlashAttention's P kept
 * in registers). */
bool plan_a_from_regs(const TirInst *dot) {
  const TirInst *a = dot->args[0];
  if ((a->ty.elem != S_F16 && a->ty.elem != S_BF16) || !is_frag(dot) || !is_frag(a)) return false;
  int64_t N = a->plan->phys[a->ty.rank - 1];
  return N % 16 == 0 && plan_folded_rows(a) == plan_folded_rows(dot) && N == a->ty.dims[a->ty.rank - 1];
}

/* Each dot's instruction. wgmma (sm_90a, Plan.wgmma) where the result
 * keeps the fragment layout in whole warpgroups (the row tile mi of warp w
 * holds rows 16 (mi W + w), so for each mi the four warps of warpgroup g
 * hold wgmma's m64 accumulator of the 64 rows from 16 (mi W + 4 g)), its
 * operands are f16 or bf16 into f32, b is a swizzled buffer (its panels
 * are wgmma's canonical layouts: K-major for dot_t's [N, K], MN-major for
 * dot's [K, N]), a is in registers or a swizzled buffer, and N is a
 * multiple of 8 up to 256; mma.sync for the other tensor-core shapes; a
 * [1, K] row times columns the threads own (a flat b whose columns are
 * whole rounds of chunks); FMA otherwise. */
static void choose_dot_paths(Planner *P) {
  const Plan *p = P->p;
  int64_t TV = (int64_t)p->threads * p->chunk;
  for (int i = 0; i < P->f->ninsts; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT) continue;
    PlanVal *v = pv(in);
    const TirInst *a = in->args[0], *b = in->args[1];
    int64_t N = v->phys[in->ty.rank - 1];
    if (mma_fits(P, in)) {
      bool areg = plan_a_from_regs(in), da = areg || mma_direct(a), db = mma_direct(b);
      bool sa = da && !areg && a->plan->buf->swizzle, sb = db && b->plan->buf->swizzle;
      bool wg = p->wgmma && (a->ty.elem == S_BF16 || a->ty.elem == S_F16) && in->ty.elem == S_F32 &&
                p->threads % 128 == 0 && sb && (areg || sa) && N % 8 == 0 && N <= 256;
      v->dot = is_frag(in) && wg ? DOT_WGMMA : DOT_MMA;
      v->wgmma_n = v->dot == DOT_WGMMA ? (int)N : 0;
    } else if (!in->aux && a->ty.rank == 2 && a->plan->phys[0] == 1 && b->plan->res == RES_REG && !is_frag(b) &&
               b->plan->phys[1] % TV == 0 && v->phys[1] == b->plan->phys[1] &&
               (a->op == TIR_SPLAT || (a->plan->res == RES_SHARED && !a->plan->buf->swizzle))) {
      v->dot = DOT_COLUMNS;
    } else {
      v->dot = DOT_FMA;
    }
  }
}

/* -------------------------------------------------------- shared memory */

static PlanBuf *new_buf(Planner *P, BufKind kind, const char *name, Scalar elem, int rank, const int64_t *phys,
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
  b->pitch = rank ? phys[rank - 1] : 1;
  /* @padstage: a staging tile whose rows are a whole number of 128-byte
   * lines gets 8 more elements per row, so a column spreads over banks */
  int64_t row_bytes = b->pitch * sema_scalar_bytes(elem);
  if (P->p->padstage && (kind == BUF_STAGE_VAR || kind == BUF_STAGE_DOT) && row_bytes % 128 == 0) {
    b->pitch += 8;
    b->padded = true;
  }
  int64_t rows;
  if (!ck_prod(phys, rank - 1 > 0 ? rank - 1 : 0, &rows) || !ck_mul(rows, b->pitch, &b->bytes) ||
      !ck_mul(b->bytes, sema_scalar_bytes(elem), &b->bytes))
    diag_ice("plan: the size of buffer '%s' overflows", name); /* tiles are bounded: it cannot */
  vec_push(P->a, &P->bufs, b);
  return b;
}

/* The innermost loop (for or while) strictly containing each position:
 * every loop that contains a position is on the chain from it upward. */
static void enclosing_loops(Planner *P, TirBlock *blk, TirInst *loop) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    P->encl[in->pos] = loop;
    TirInst *inner = in->op == TIR_FOR || in->op == TIR_WHILE ? in : loop;
    enclosing_loops(P, &in->cond, inner);
    enclosing_loops(P, &in->body, inner);
    enclosing_loops(P, &in->body2, inner);
  }
}

static bool contains(const TirInst *loop, int pos) { return loop->pos < pos && pos <= loop->end; }

/* Whether the slot a READ reads is written again while the value read is
 * still in use: then the value needs its own copy, it cannot stay an alias
 * of the slot's shared buffer. */
static bool written_while_alive(Planner *P, const TirInst *read) {
  int n = P->f->ninsts;
  if (!P->users) { /* who uses what, and where slots are written: once */
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
static void choose_staging(Planner *P, TirInst *in) {
  if (in->op == TIR_WRITE && !in->nsubs && in->args[1]->op == TIR_LOAD && in->args[0]->ty.rank &&
      !pv(in->args[0])->buf) {
    TirInst *slot = in->args[0], *load = in->args[1];
    PlanBuf *b = new_buf(P, BUF_STAGE_VAR, slot->name, slot->ty.elem, slot->ty.rank, pv(slot)->phys, slot);
    pv(slot)->res = RES_SHARED;
    pv(slot)->buf = b;
    /* the load copies global straight into the slot's buffer, when this
     * write is all it is for (a let-bound load read elsewhere keeps its own
     * value: the slot may be rewritten while it lives) */
    if (P->uses[load->id] == 1 && !pv(load)->buf && load->pos == in->pos - 1) {
      pv(load)->res = RES_SHARED;
      pv(load)->buf = b;
    }
  }
  /* reading a shared slot is reading its buffer: a dot takes its operand
   * from there, not through registers and a scratch buffer */
  if (in->op == TIR_READ && pv(in->args[0])->res == RES_SHARED && !written_while_alive(P, in)) {
    pv(in)->res = RES_SHARED;
    pv(in)->buf = pv(in->args[0])->buf;
  }
  if (in->op == TIR_DOT) {
    for (int k = 0; k < 2; k++) {
      TirInst *opnd = in->args[k];
      if (opnd->op == TIR_LOAD && !pv(opnd)->buf) {
        const char *name = opnd->name ? opnd->name : arena_printf(P->a, "%s view (%%%d)", P->f->params[opnd->aux].name, opnd->id);
        PlanBuf *b = new_buf(P, BUF_STAGE_DOT, name, opnd->ty.elem, opnd->ty.rank, pv(opnd)->phys, opnd);
        pv(opnd)->res = RES_SHARED;
        pv(opnd)->buf = b;
      }
    }
  }
}

/* Registers a thread spends on value x in its layout: one for a scalar;
 * in the fragment layout N / 2 a row tile of 16 rows it owns, two for its
 * row value beside it; flat, whole rounds of T chunks (ptx/layout.c,
 * px_nregs, names each register's element). */
int64_t plan_regs(const Plan *p, const TirInst *x) {
  if (!x->ty.rank) return 1;
  int64_t W = p->threads / 32, M = plan_folded_rows(x), N = x->plan->phys[x->ty.rank - 1];
  if (is_frag(x)) return M / 16 / W * (N / 2);
  if (is_rowfrag(x)) return M / 16 / W * 2;
  int64_t round = (int64_t)p->threads * p->chunk;
  return (phys_elems(x) + round - 1) / round * p->chunk;
}

/* What the PTX backend cannot compile, found before it runs (so a plain
 * check and --emit=plan report it too): register tiles past
 * MAX_REGS_PER_VALUE a thread (unrolled, they would be huge and spill; a
 * tile the plan stages is exempt), and the math functions on f64. */
static void check_backend_limits(Planner *P) {
  for (int i = 0; i < P->f->ninsts; i++) {
    const TirInst *in = P->f->insts[i];
    if (in->op == TIR_MATH && in->ty.elem == S_F64)
      diag_error(P->d, in->span, "the PTX backend cannot compile this yet: exp, exp2, log, sqrt and tanh on f64");
    if (!in->ty.rank || in->plan->res == RES_SHARED || in->op == TIR_STORE || in->op == TIR_WRITE) continue;
    int64_t n = plan_regs(P->p, in);
    if (n > MAX_REGS_PER_VALUE)
      diag_error(P->d, in->span,
                 "the PTX backend cannot compile this yet: a register tile of %lld elements is %lld per thread with %d "
                 "threads (at most %d): use smaller tiles or more threads",
                 (long long)phys_elems(in), (long long)n, P->p->threads, MAX_REGS_PER_VALUE);
  }
}

/* A value read from global memory into registers (a load, or the
 * transpose of one) is read again at any coordinates instead of being
 * exchanged (ptx/exchange.c). */
static bool reloadable(const TirInst *x) {
  if (x->plan->res != RES_REG) return false;
  if (x->op == TIR_LOAD) return true;
  return x->op == TIR_TRANSPOSE && x->args[0]->op == TIR_LOAD && x->args[0]->plan->res == RES_REG;
}

/* x stored for other threads: every physical element in a 32- or 64-bit
 * word (a scalar, one), in 16-byte units */
static int64_t value_exchange_bytes(const TirInst *x) {
  int64_t eb = x->ty.elem == S_F64 || x->ty.elem == S_I64 ? 8 : 4;
  return ((x->ty.rank ? phys_elems(x) : 1) * eb + 15) / 16 * 16;
}

/* A dot on mma.sync copies the operands ldmatrix cannot read where they
 * are (rows padded by 16 bytes) and, with a flat result, writes the
 * accumulators as [M, N] words for the threads to read (ptx/mma.c). */
static int64_t mma_exchange_bytes(const TirInst *in) {
  const TirInst *a = in->args[0], *b = in->args[1];
  int r = in->ty.rank;
  int64_t M = plan_folded_rows(in), N = pv(in)->phys[r - 1];
  bool areg = plan_a_from_regs(in), da = areg || mma_direct(a), db = mma_direct(b);
  int eb = sema_scalar_bytes(a->ty.elem), ce = 16 / eb;
  int64_t pa = areg ? 0 : da ? a->plan->buf->pitch : a->plan->phys[r - 1] + ce;
  int64_t pb = db ? b->plan->buf->pitch : b->plan->phys[1] + ce;
  int64_t at_b = da ? 0 : (M * pa * eb + 15) / 16 * 16;
  int64_t at_c = at_b + (db ? 0 : (b->plan->phys[0] * pb * eb + 15) / 16 * 16);
  return at_c + (is_frag(in) ? 0 : M * N * 4);
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
  case TIR_BROADCAST:
    if (is_frag(in) && is_rowfrag(x) && x->ty.rank == in->ty.rank && plan_folded_rows(x) == plan_folded_rows(in))
      return 0;
    return reloadable(x) ? 0 : value_exchange_bytes(x);
  case TIR_TRANSPOSE: return reloadable(in) ? 0 : value_exchange_bytes(x);
  case TIR_REDUCE: return is_rowfrag(in) ? 0 : value_exchange_bytes(x);
  case TIR_EXTRACT: return x->plan->res == RES_SHARED ? 0 : value_exchange_bytes(x);
  case TIR_WRITE: return in->nsubs && in->args[1]->ty.rank ? value_exchange_bytes(in->args[1]) : 0;
  case TIR_DOT:
    switch (pv(in)->dot) {
    case DOT_MMA: return mma_exchange_bytes(in);
    case DOT_FMA: {
      int64_t n = 0;
      for (int k = 0; k < 2; k++)
        if (in->args[k]->plan->res != RES_SHARED) n += value_exchange_bytes(in->args[k]);
      return n;
    }
    default: return 0;
    }
  default: return 0;
  }
}

/* Each exchange is a scratch buffer of its own, alive at its operation
 * only, planned like every other buffer (live ranges, byte reuse, the
 * barrier before it where other threads may still read those bytes). */
static void choose_exchange(Planner *P, TirInst *in) {
  int64_t n = exchange_bytes(in);
  if (!n) return;
  int64_t words = n / 4;
  pv(in)->scratch = new_buf(P, BUF_SCRATCH, arena_printf(P->a, "exchange of %%%d", in->id), S_I32, 1, &words, in);
}

/* ---------------------------------------------------------- live ranges */

/* Uses of buffer contents: (position, write?) */
typedef struct Access {
  int pos;
  bool write;
  PlanBuf *buf;
} Access;

typedef struct Accesses {
  Access *items;
  int len, cap;
} Accesses;

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
      if (pv(x)->res != RES_SHARED || x->op == TIR_VAR) continue;
      if (in->op == TIR_WRITE && k == 1 && pv(in->args[0])->buf == pv(x)->buf) continue; /* the staging copy itself */
      add_access(P, acc, in->pos, false, pv(x)->buf);
    }
    /* (a READ of a shared slot is counted where its value is used) */
    /* (a staged ring's copies inside its loop are ordered by the ring: the
     * loop waits for a stage and syncs at the top of the iteration that
     * reads it, and refills a stage only after that barrier; its first
     * copies, before the loop, count as a write at the loop's position:
     * the ring's bytes may have held a buffer other threads still read) */
    if (in->op == TIR_LOAD && pv(in)->res == RES_SHARED && !pv(in)->buf->stages)
      add_access(P, acc, in->pos, true, pv(in)->buf);
    if (in->op == TIR_FOR)
      for (int k = 0; k < in->body.len; k++) {
        const TirInst *x = in->body.insts[k];
        if (x->op == TIR_LOAD && pv(x)->res == RES_SHARED && pv(x)->buf->stages)
          add_access(P, acc, in->pos, true, pv(x)->buf);
      }
    /* writes into a shared slot, except the staging copy (the load wrote
     * the buffer itself, at the load) */
    if (in->op == TIR_WRITE && pv(in->args[0])->res == RES_SHARED &&
        (in->nsubs || pv(in->args[1])->buf != pv(in->args[0])->buf))
      add_access(P, acc, in->pos, true, pv(in->args[0])->buf);
    /* a read of a shared slot into registers reads the buffer here */
    if (in->op == TIR_READ && pv(in->args[0])->res == RES_SHARED && pv(in)->res != RES_SHARED)
      add_access(P, acc, in->pos, false, pv(in->args[0])->buf);
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

/* The first access at a position >= pos: collect_accesses lists them in
 * program order (an instruction's own, then those of its blocks, numbered
 * after it in the same order). */
static int acc_lower(const Accesses *acc, int pos) {
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
static void live_ranges(Planner *P, Accesses *acc) {
  int nb = P->bufs.len;
  int *count = arena_alloc(P->a, sizeof(int) * (size_t)(nb + 1)), *start = arena_alloc(P->a, sizeof(int) * (size_t)(nb + 2));
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
    if (buf->kind == BUF_RING || buf->kind == BUF_MBAR || buf->stages) continue; /* live over their loop, set when made */
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
    buf->first = first;
    buf->last = last;
  }
}

static int cmp_buf(const void *x, const void *y) {
  const PlanBuf *a = *(PlanBuf *const *)x, *b = *(PlanBuf *const *)y;
  if (a->first != b->first) return a->first < b->first ? -1 : 1;
  if (a->bytes != b->bytes) return a->bytes > b->bytes ? -1 : 1;
  return a->id - b->id;
}

static bool lives_overlap(const PlanBuf *a, const PlanBuf *b) { return a->first <= b->last && b->first <= a->last; }
static bool bytes_overlap(const PlanBuf *a, const PlanBuf *b) {
  return a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* First fit: each buffer takes the lowest 16-byte aligned offset that no
 * buffer alive at the same time occupies. */
static void allocate(Planner *P) {
  int n = P->bufs.len;
  PlanBuf **order = arena_alloc(P->a, sizeof(PlanBuf *) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) order[i] = P->bufs.items[i];
  qsort(order, (size_t)n, sizeof *order, cmp_buf);
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    PlanBuf *b = order[i];
    int64_t off = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (int j = 0; j < i; j++) {
        PlanBuf *o = order[j];
        b->offset = off;
        if (lives_overlap(b, o) && bytes_overlap(b, o)) {
          off = (o->offset + o->bytes + b->align - 1) / b->align * b->align;
          moved = true;
        }
      }
    }
    b->offset = off;
    int64_t end;
    if (!ck_add(off, b->bytes, &end)) diag_ice("plan: shared memory offsets overflow");
    if (end > top) top = end;
  }
  P->p->shared_bytes = top;
}

/* ------------------------------------------------------------ pipeline */

/* @pipeline(S) on sm_90a: a register load directly in a for loop's body
 * whose tile rows are whole 16-byte runs of the tensor's rows gets a ring
 * of S stage buffers, filled by bulk copies (cp.async.bulk) completing on
 * one mbarrier per stage, S - 1 iterations ahead of the threads that read
 * it (the backend emits the producer and the consumer). Its subscripts
 * must be computable for a later iteration: pure scalar arithmetic on the
 * loop variable and values from before the loop. */
/* x is pure scalar arithmetic (on the loop variable, parameters, dims,
 * the CTA index and constants; no variable, whose value may change
 * between iterations). Values from before `loop` are taken as they are
 * unless `before` too: then they must be pure as well (a producer warp
 * computes them by itself). loop NULL: every value counts as before. */
static bool pure_chain(const TirInst *x, const TirInst *loop, bool before, int depth) {
  if (x == loop) return true;
  bool outside = !loop || x->pos < loop->pos || x->pos > loop->end;
  if (outside && !before) return true;
  if (x->ty.rank || depth > 64) return false;
  switch (x->op) {
  case TIR_CONST: case TIR_DIM: case TIR_CTX: case TIR_PARAM: case TIR_BINARY: case TIR_UNARY: case TIR_CONVERT:
  case TIR_SELECT:
    break;
  default: return false;
  }
  for (int i = 0; i < x->nargs; i++)
    if (x->args[i] && !pure_chain(x->args[i], loop, before, depth + 1)) return false;
  return true;
}

/* NULL when the load can take a ring, else why not. Both kinds need a
 * rank-2 tile whose rows run along the tensor's last dim and subscripts
 * computable for a later iteration. A register tile takes a bulk-copy
 * ring (whole 16-byte rows, no slack: the bulk copy fills no zeros). A
 * staged tile (its buffer read in place) takes a staged ring filled by
 * cp.async: 16-byte chunks of rows at the buffer's pitch (@padstage's
 * too), rows past the tensor's end as zeros, and the threads' own loads
 * into the same stage at run time when the tile is misaligned or its
 * columns leave the tensor. */
static const char *pipe_reject(Planner *P, const TirInst *loop, const TirInst *ld) {
  const PlanVal *v = ld->plan;
  if (ld->ty.rank != 2) return arena_printf(P->a, "its tile has rank %d (a ring takes rank 2)", ld->ty.rank);
  int spans = 0;
  for (int i = 0; i < ld->nsubs; i++) spans += !ld->subs[i].point;
  if (spans != 2 || ld->subs[ld->nsubs - 1].point) return "its rows do not run along the tensor's last dimension";
  for (int i = 0; i < ld->nsubs; i++)
    if (!pure_chain(ld->subs[i].start, loop, false, 0))
      return "a subscript depends on a value that changes inside the loop other than the loop variable";
  int eb = sema_scalar_bytes(ld->ty.elem);
  if (v->res == RES_SHARED) {
    const PlanBuf *b = v->buf;
    if (!b || b->owner != ld) return "it is staged in a buffer it shares with a variable";
    if (eb != 2 && eb != 4) return "its elements are neither 2 nor 4 bytes (cp.async copies 16-byte chunks)";
    if ((v->phys[1] * eb) % 16 || (b->pitch * eb) % 16 || ld->subs[ld->nsubs - 1].len % (16 / eb))
      return "its rows are not whole 16-byte chunks";
    if (tir_stores_to(&P->f->body, ld->aux)) return "the kernel also stores to its tensor";
    return NULL;
  }
  if (v->slack) return "an extent is not a power of two (the slack needs the tensor copy's zero fill)";
  int64_t row = v->phys[1] * eb;
  if (row % 16) return arena_printf(P->a, "its rows are %lld bytes, not a multiple of 16", (long long)row);
  if (v->phys[0] > 256) return arena_printf(P->a, "it has %lld rows (at most 256)", (long long)v->phys[0]);
  return NULL;
}

/* inside: the enclosing loop with rings, if any; the backend streams one
 * loop at a time, so a loop inside it keeps plain loads. */
static int pipe_loops(Planner *P, TirBlock *blk, int stages, const char **why, const TirInst *inside, bool staged) {
  int n = 0;
  for (int i = 0; i < blk->len; i++) {
    TirInst *loop = blk->insts[i];
    PlanBuf *mbar = NULL;
    int nbulk = 0, nstaged = 0; /* the backend streams at most 8 of each kind a loop */
    for (int k = 0; loop->op == TIR_FOR && k < loop->body.len; k++) {
      TirInst *ld = loop->body.insts[k];
      if (ld->op != TIR_LOAD) continue;
      bool sh = ld->plan->res == RES_SHARED;
      const char *r = inside ? arena_printf(P->a, "the enclosing loop at %d:%d has the rings", inside->span.first_line,
                                            inside->span.first_column)
                      : !staged && sh ? "a producer warp (--producer-warp) fills bulk rings only"
                      : (sh ? nstaged : nbulk) == 8 ? "the loop has 8 rings of this kind already"
                                                    : pipe_reject(P, loop, ld);
      if (r) {
        ld->plan->path = arena_printf(P->a, "%s: %s",
                                      ld->plan->res == RES_SHARED ? "staged, not ringed" : "plain loads", r);
        if (!*why) *why = arena_printf(P->a, "the load at %d:%d: %s", ld->span.first_line, ld->span.first_column, r);
        continue;
      }
      if (ld->plan->res == RES_SHARED) { /* its own buffer, stages copies of it, alive over the loop */
        PlanBuf *b = ld->plan->buf;
        b->stage_bytes = (b->bytes + 15) / 16 * 16;
        b->stages = stages;
        b->bytes = b->stage_bytes * stages;
        b->first = loop->pos, b->last = loop->end;
        ld->plan->path = arena_printf(P->a, "cp.async into a ring of %d stages (buffer #%d), %d iteration%s ahead", stages,
                                      b->id, stages - 1, stages > 2 ? "s" : "");
        n++, nstaged++;
        continue;
      }
      if (!mbar) {
        int64_t d[1] = {stages};
        mbar = new_buf(P, BUF_MBAR, "mbarriers", S_I64, 1, d, loop);
        mbar->first = loop->pos, mbar->last = loop->end;
      }
      int64_t d[3] = {stages, ld->plan->phys[0], ld->plan->phys[1]};
      PlanBuf *ring = new_buf(P, BUF_RING, arena_printf(P->a, "ring of %%%d", ld->id), ld->ty.elem, 3, d, ld);
      ring->first = loop->pos, ring->last = loop->end;
      ld->plan->ring = ring;
      ld->plan->mbar = mbar;
      ld->plan->path = arena_printf(P->a, "bulk copies into ring #%d, %d stages", ring->id, stages);
      n++, nbulk++;
    }
    /* one ringed loop at a time: the loads of a loop inside a ringed one stay plain */
    const TirInst *in = mbar || nstaged ? loop : inside;
    n += pipe_loops(P, &loop->body, stages, why, in, staged) + pipe_loops(P, &loop->body2, stages, why, in, staged);
  }
  return n;
}

static void mark_no_async(TirBlock *blk, const char *why) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    mark_no_async(&in->body, why);
    mark_no_async(&in->body2, why);
    for (int k = 0; in->op == TIR_FOR && k < in->body.len; k++)
      if (in->body.insts[k]->op == TIR_LOAD) in->body.insts[k]->plan->path = why;
  }
}

/* A ringed loop alone at the top of the kernel, whose bounds and ringed
 * subscripts a warp can compute without the other threads, gets a
 * producer warp: threads T .. T + 31 issue the copies, waiting on one
 * "empty" mbarrier per stage that the consumer warps arrive at when they
 * are done with it, so the issue work is off the consumers' path and no
 * CTA barrier is needed for the ring. The rings and mbarriers then live
 * the whole kernel (the producer starts at once). */
static void choose_producer(Planner *P) {
  Plan *p = P->p;
  const TirInst *loop = NULL;
  int nloops = 0;
  PlanBuf *mbar = NULL;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_MBAR) nloops++, mbar = b, loop = b->owner;
    if (b->stages) return; /* a staged ring's copies are the consumers' own (their cp.async groups) */
  }
  if (nloops != 1 || p->threads + 32 > 1024) return;
  bool top = false;
  for (int i = 0; i < P->f->body.len; i++) top = top || P->f->body.insts[i] == loop;
  if (!top) return;
  for (int i = 0; i < 3; i++)
    if (!pure_chain(loop->args[i], NULL, true, 0)) return;
  for (int k = 0; k < loop->body.len; k++) {
    const TirInst *ld = loop->body.insts[k];
    if (ld->op != TIR_LOAD || !ld->plan->ring) continue;
    for (int j = 0; j < ld->nsubs; j++)
      if (!pure_chain(ld->subs[j].start, loop, true, 0)) return;
  }
  p->producer = true;
  p->launch_threads = p->threads + 32;
  mbar->dims[0] *= 2; /* full, then empty */
  mbar->pitch = mbar->dims[0];
  mbar->bytes *= 2;
  for (int i = 0; i < P->bufs.len; i++) {
    PlanBuf *b = P->bufs.items[i];
    if (b->kind == BUF_MBAR || b->kind == BUF_RING) b->first = 0, b->last = P->f->ninsts;
  }
}

/* Whether any for loop loads from a tensor directly in its body. */
static bool loop_loads(const TirBlock *blk) {
  for (int i = 0; i < blk->len; i++) {
    const TirInst *in = blk->insts[i];
    if (loop_loads(&in->body) || loop_loads(&in->body2)) return true;
    if (in->op != TIR_FOR) continue;
    for (int k = 0; k < in->body.len; k++)
      if (in->body.insts[k]->op == TIR_LOAD) return true;
  }
  return false;
}

/* A kernel with no loop load at all is an error; loads the ring does not
 * take yet (staged ones, for one) say why in their plan's path. */
static void choose_pipeline(Planner *P, bool sm90, unsigned flags) {
  const KernelInfo *info = P->f->info;
  if (!info->pipeline_stages) return;
  if (!loop_loads(&P->f->body)) {
    Span at = info->kernel->span;
    for (int i = 0; i < info->kernel->attrs.len; i++) {
      const Node *n = info->kernel->attrs.items[i];
      if (n->name && strcmp(n->name, "pipeline") == 0) at = n->span;
    }
    diag_error(P->d, at,
               "@pipeline: nothing in kernel '%s' can be pipelined: no for loop loads a tile from a tensor", P->f->name);
    return;
  }
  if (!sm90) return; /* sm_80 has no bulk copies: the loads stay plain */
  if (P->p->no_async) { /* the same kernel on the threads' loads, to compare */
    mark_no_async(&P->f->body, info->no_tma ? "plain loads: @no_tma" : "plain loads: --no-tma");
    return;
  }
  const char *why = NULL;
  P->p->stages = info->pipeline_stages;
  if (!pipe_loops(P, &P->f->body, P->p->stages, &why, NULL, !(flags & PLAN_PRODUCER_WARP))) P->p->stages = 0;
  else if (flags & PLAN_PRODUCER_WARP) choose_producer(P);
}

/* ------------------------------------------------------------------ TMA */

/* sm_90a, unless --no-tensor-copies: a staged load (its tile into a
 * planned buffer, or a staged ring's stage) that a tensor copy can write:
 * no slack unless a map of one more dim puts it past a dim's end (the copy
 * fills zeros there), a box of at most 256 a dim whose innermost row is a
 * multiple of 16 bytes, a tensor of rank 5 or less that the kernel never
 * stores to, not under an if (every thread waits for the copy), and not a
 * tile under 1 KiB in a loop outside a ring. It gets a tensor map (shared
 * by loads and stores of the same tensor, box and swizzle), a dense or
 * swizzled buffer (tma_swizzle) aligned for the copy; the backend keeps the
 * pointer path beside it for launches whose tensor the map cannot describe
 * (tmok = 0). choose_tma_store gives padded tiles' stores the same. spec
 * 15.11. */
/* A span start that is provably x * len: x (an instruction), or with
 * *konst set a constant x. */
static bool start_multiple(const TirInst *st, int64_t len, const TirInst **x, int64_t *konst) {
  *x = NULL;
  if (st->op == TIR_CONST) {
    *konst = st->ival / len;
    return st->ival % len == 0;
  }
  if (st->op != TIR_BINARY || st->aux != '*' || st->ty.rank) return false;
  for (int k = 0; k < 2; k++) {
    const TirInst *c = st->args[k];
    if (c->op == TIR_CONST && c->ival == len) {
      *x = st->args[1 - k];
      return true;
    }
  }
  return false;
}

static const char ring_mbar_name[] = "staged ring mbarriers";

/* the bytes of a dense tile of physical dims phys */
static int64_t phys_bytes(const int64_t *phys, int rank, Scalar elem) {
  int64_t n;
  if (!ck_prod(phys, rank, &n) || !ck_mul(n, sema_scalar_bytes(elem), &n)) diag_ice("plan: a tile's bytes overflow");
  return n;
}

/* a staged tile's bytes, dense: what its copy writes */
static int64_t tile_bytes(const PlanBuf *b) { return phys_bytes(b->dims, b->rank, b->elem); }

int64_t plan_buf_rows(const PlanBuf *b) {
  int64_t r = 1;
  for (int d = 0; d + 1 < b->rank; d++) r *= b->dims[d];
  return r;
}

int64_t plan_copy_extra(const Plan *p, int64_t *rounding) {
  *rounding = 0;
  for (int i = 0; i < p->nbufs; i++)
    if (p->bufs[i]->swizzle) *rounding = 1024;
  return *rounding + (p->ntma_loads ? 8 * p->ntma_loads + 128 : 0);
}

/* The swizzle of a tensor copy's tile (bytes; 0 none). ldmatrix reads
 * eight rows of 16 bytes at once: dense rows a multiple of 128 bytes apart
 * put all eight in the same banks (what @padstage's pitch avoids, and a
 * copy cannot write). A tensor-core operand's tile is swizzled instead, and
 * so is a tile @padstage padded (its kernel asked for spread banks): the
 * widest mode that divides its rows, a row wider than that cut into panels
 * (one copy each), rows a multiple of 8 so that every panel starts where
 * the pattern does (ptx.c, buf_addr). The panels are also wgmma's
 * canonical layouts (ptx.c, emit_dot_wgmma). Other tiles are read along
 * rows and stay dense. */
static int tma_swizzle(const PlanBuf *b, int eb) {
  if (!(b->kind == BUF_STAGE_DOT && eb <= 2) && !b->padded) return 0;
  if (b->rank < 2) return 0;
  int64_t rb = b->dims[b->rank - 1] * eb;
  if (plan_buf_rows(b) % 8) return 0;
  return rb % 128 == 0 ? 128 : rb % 64 == 0 ? 64 : rb % 32 == 0 ? 32 : 0;
}

/* The tensor map of load or store `in` (its subscripts over tensor tp)
 * moving a tile of physical dims phys: false when no map can. */
static bool tma_map(const TirInst *in, const TirParam *tp, const int64_t *phys, Scalar elem, PlanTmap *m,
                    const TirInst **outer, int64_t *outer_const) {
  *m = (PlanTmap){.param = in->aux, .rank = tp->rank, .elem = elem, .split_dim = -1, .boxes = 1};
  *outer = NULL, *outer_const = 0;
  if (tp->rank > 5 || in->nsubs != tp->rank) return false;
  int j = 0, md = 0;
  for (int i = 0; i < in->nsubs; i++) {
    if (in->subs[i].point) {
      m->box[md++] = 1;
      continue;
    }
    int64_t len = in->subs[i].len, ph = phys[j++];
    if (ph != len) {
      /* slack: past the end of a dim of its own, when the start is a
       * multiple of the span (one such dim, the map's rank at most 5) */
      if (m->split_dim >= 0 || tp->rank == 5 || !start_multiple(in->subs[i].start, len, outer, outer_const)) return false;
      m->split_dim = i, m->split_inner = len;
      m->box[md++] = 1;
    }
    m->box[md++] = ph;
  }
  for (int d = 0; d < md; d++)
    if (m->box[d] < 1 || m->box[d] > 256) return false;
  for (int i = 0; i < in->nsubs; i++) /* a copy's coordinates are 32-bit */
    if (sema_scalar_bytes(in->subs[i].start->ty.elem) > 4) return false;
  if (*outer && sema_scalar_bytes((*outer)->ty.elem) > 4) return false;
  return (m->box[md - 1] * sema_scalar_bytes(elem)) % 16 == 0;
}

/* m's index in the plan's maps, added if new (loads and stores of one
 * tensor with one box, swizzle and panel count share a map: a load issues
 * its map's `boxes` copies) */
static int tma_map_index(Plan *p, const PlanTmap *m) {
  for (int i = 0; i < p->ntmaps; i++)
    if (p->tmaps[i].param == m->param && p->tmaps[i].split_dim == m->split_dim &&
        p->tmaps[i].split_inner == m->split_inner && p->tmaps[i].swizzle == m->swizzle &&
        p->tmaps[i].boxes == m->boxes && !memcmp(p->tmaps[i].box, m->box, sizeof m->box))
      return i;
  p->tmaps[p->ntmaps] = *m;
  return p->ntmaps++;
}

/* A store of a padded tile (slack in one dim, which a map of one more dim
 * puts past that dim's end) takes a TMA tensor store: the threads write the
 * tile into shared memory, thread 0 stores it by one copy and the hardware
 * clips what lies outside the map (the slack, and rows past the tensor's
 * end), where the pointer path masks them element by element. Not for a
 * tensor the kernel also loads (the copy writes through the async proxy)
 * or stores to elsewhere, nor in a loop, nor for a tile without slack (the
 * threads' stores are as good). */
static void choose_tma_store(Planner *P, TirInst *in, bool looped) {
  Plan *p = P->p;
  const TirInst *val = in->op == TIR_STORE ? in->args[0] : NULL;
  if (!val || !val->ty.rank || !val->plan->slack || val->ty.elem == S_BOOL || p->ntmaps == MAX_TMAPS) return;
  /* the copy's global writes land after the kernel's later instructions
   * (its wait is for the reads of the staging only): the tensor's one
   * store, outside loops, and a tensor the kernel does not load */
  if (looped || tir_count_accesses(&P->f->body, TIR_STORE, in->aux) != 1 ||
      tir_count_accesses(&P->f->body, TIR_LOAD, in->aux))
    return;
  const TirParam *tp = &P->f->params[in->aux];
  PlanTmap m;
  const TirInst *outer;
  int64_t outer_const;
  if (tp->elem != val->ty.elem || !tma_map(in, tp, val->plan->phys, tp->elem, &m, &outer, &outer_const) ||
      m.split_dim < 0)
    return;
  /* the staging must not be what puts the kernel over its shared memory:
   * taken only when every buffer so far and it fit side by side */
  int64_t sum = phys_bytes(val->plan->phys, val->ty.rank, tp->elem) + 128;
  for (int i = 0; i < P->bufs.len; i++) sum += ((PlanBuf *)P->bufs.items[i])->bytes + 128;
  PlanVal *v = in->plan;
  if (sum > p->shared_limit) {
    v->path = arena_printf(P->a, "the threads' masked stores: a tensor store's staging (%lld bytes beside the other "
                                 "buffers) could exceed the shared memory limit of %lld",
                           (long long)phys_bytes(val->plan->phys, val->ty.rank, tp->elem), (long long)p->shared_limit);
    return;
  }
  int idx = tma_map_index(p, &m);
  v->tma = idx + 1;
  v->tma_outer = outer, v->tma_outer_const = outer_const;
  /* the tile's staging: a dense buffer alive at the store only (GQA's O
   * takes the bytes its Q and K/V rings held) */
  v->buf = new_buf(P, BUF_SCRATCH, arena_printf(P->a, "tensor store of %%%d", val->id), tp->elem, val->ty.rank,
                   val->plan->phys, in);
  v->buf->align = 128;
  v->path = arena_printf(P->a,
                         "tensor store (TMA) through map %d from buffer #%d, dim %d viewed as [extent / %lld, %lld] so "
                         "the slack lies past its end (clipped), the threads' masked stores when the map cannot be built",
                         idx, v->buf->id, m.split_dim, (long long)m.split_inner, (long long)m.split_inner);
}

/* loop: the for whose body holds the load directly (a staged ring's);
 * looped: the load is inside some loop */
static void choose_tma(Planner *P, TirInst *in, TirInst *loop, bool looped) {
  PlanVal *v = in->plan;
  Plan *p = P->p;
  if (in->op != TIR_LOAD || v->res != RES_SHARED || !v->buf || v->ring || in->ty.elem == S_BOOL ||
      p->ntmaps == MAX_TMAPS || (v->buf->stages && !loop))
    return;
  /* A copy outside a ring is waited for at once: in a loop, a small tile's
   * copy only adds the copy unit's latency to each iteration (the seed q8
   * kernel's 128-byte activation tile: 165 against 137 us on the H200), so
   * tiles under 1 KiB keep the pointer path there. */
  if (looped && !v->buf->stages && tile_bytes(v->buf) < 1024) {
    v->path = arena_printf(P->a, "pointer path: a %lld-byte tile in a loop, waited for at once (tensor copies from 1 KiB)",
                           (long long)tile_bytes(v->buf));
    return;
  }
  /* a tensor the kernel also stores to: the copy reads through the async
   * proxy, which the threads' stores are not ordered with */
  if (tir_stores_to(&P->f->body, in->aux)) return;
  const TirParam *tp = &P->f->params[in->aux];
  PlanBuf *b = v->buf;
  int64_t dense = b->dims[b->rank - 1];
  if ((b->pitch != dense && !b->padded) || b->rank != in->ty.rank) return;
  PlanTmap m;
  const TirInst *outer;
  int64_t outer_const;
  if (!tma_map(in, tp, b->dims, in->ty.elem, &m, &outer, &outer_const)) return;
  int eb = sema_scalar_bytes(in->ty.elem), md = m.rank + (m.split_dim >= 0);
  int swz = tma_swizzle(b, eb);
  if (swz) { /* one copy a panel: the inner box is the swizzle's width */
    m.swizzle = swz;
    m.boxes = (int)(m.box[md - 1] * eb / swz);
    m.box[md - 1] = swz / eb;
  }
  int idx = tma_map_index(p, &m);
  v->tma = idx + 1;
  v->tma_outer = outer, v->tma_outer_const = outer_const;
  const char *swzs = swz ? arena_printf(P->a, ", swizzled %dB (%d %s a row)", swz, m.boxes, m.boxes > 1 ? "boxes" : "box")
                         : "";
  b->swizzle = swz;
  b->align = swz ? 1024 : 128;
  if (b->stages) {
    /* a staged ring: each stage dense (or swizzled) and aligned as a
     * copy's destination must be, one mbarrier per stage for the loop's
     * copies (the first load of the loop makes them) */
    b->stage_bytes = (tile_bytes(b) + b->align - 1) / b->align * b->align;
    b->bytes = b->stage_bytes * b->stages;
    b->pitch = dense;
    b->padded = false;
    for (int i = 0; i < P->bufs.len && !v->mbar; i++) {
      PlanBuf *o = P->bufs.items[i];
      if (o->kind == BUF_MBAR && o->owner == loop && o->name == ring_mbar_name) v->mbar = o;
    }
    if (!v->mbar) {
      int64_t d[1] = {b->stages};
      v->mbar = new_buf(P, BUF_MBAR, ring_mbar_name, S_I64, 1, d, loop);
      v->mbar->first = loop->pos, v->mbar->last = loop->end;
    }
    v->path = arena_printf(P->a,
                           "tensor copies (TMA) through map %d%s into a ring of %d stages (buffer #%d), %d iteration%s "
                           "ahead, one mbarrier a stage; the threads' own loads when the map cannot be built",
                           idx, swzs, b->stages, b->id, b->stages - 1, b->stages > 2 ? "s" : "");
    return;
  }
  if (b->padded) { /* the copy writes rows dense: TMA over @padstage's pitch (the swizzle spreads the banks) */
    b->bytes = b->bytes / b->pitch * dense;
    b->pitch = dense;
    b->padded = false;
  }
  v->path = m.split_dim < 0
                ? arena_printf(P->a, "tensor copy (TMA) through map %d%s, pointer path when the map cannot be built", idx,
                               swzs)
                : arena_printf(P->a,
                               "tensor copy (TMA) through map %d%s, dim %d viewed as [extent / %lld, %lld] so the "
                               "slack lies past its end (zero-filled), pointer path when the map cannot be built",
                               idx, swzs, m.split_dim, (long long)m.split_inner, (long long)m.split_inner);
  p->ntma_loads++;
}

/* looped: inside any loop; loop: the for whose body blk is */
static void walk_tma(Planner *P, TirBlock *blk, bool in_if, bool looped, TirInst *loop) {
  for (int i = 0; i < blk->len; i++) {
    TirInst *in = blk->insts[i];
    if (!in_if) choose_tma(P, in, loop, looped);
    if (!in_if) choose_tma_store(P, in, looped);
    bool lp = looped || in->op == TIR_FOR || in->op == TIR_WHILE;
    walk_tma(P, &in->body, in_if || in->op == TIR_IF, lp, in->op == TIR_FOR ? in : NULL);
    walk_tma(P, &in->body2, in_if || in->op == TIR_IF, lp, NULL);
    walk_tma(P, &in->cond, in_if || in->op == TIR_IF, lp, NULL);
  }
}

/* ------------------------------------------------------------ barriers */

typedef struct Hazards {
  PlanBuf *dirty[64]; /* written since the last barrier */
  int ndirty;
  PlanBuf *read[64];  /* read since the last barrier */
  int nread;
} Hazards;

static bool overlaps_any(PlanBuf **set, int n, const PlanBuf *b, bool other_only) {
  for (int i = 0; i < n; i++)
    if (bytes_overlap(set[i], b) && (!other_only || set[i] != b)) return true;
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
  for (int i = acc_lower(acc, pos); i < acc->len && acc->items[i].pos == pos; i++) {
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
        /* written and read back within the instruction: one barrier inside */
        add_barrier(P, -1 - pos, arena_printf(P->a, "%s is written and read back", x->buf->name));
        h->ndirty = 0;
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

static void barrier_walk(Planner *P, TirBlock *blk, Hazards *h, Accesses *acc);

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

static void walk_inst(Planner *P, TirInst *in, Hazards *h, Accesses *acc) {
  /* a value's operands are read before the instruction writes its result */
  hazards_at(P, h, acc, in->pos);
  if ((in->op == TIR_FOR || in->op == TIR_WHILE) && h->ndirty) {
    /* a buffer written before the loop and read in it, but not written
     * in it: one barrier before the loop, not one in every iteration */
    int from = acc_lower(acc, in->pos + 1), to = acc_lower(acc, in->end + 1); /* the accesses in the loop */
    for (int k = from; k < to; k++) {
      const Access *x = &acc->items[k];
      if (x->write || !overlaps_any(h->dirty, h->ndirty, x->buf, false)) continue;
      bool rewritten = false;
      for (int w = from; w < to && !rewritten; w++)
        rewritten = acc->items[w].write && bytes_overlap(acc->items[w].buf, x->buf);
      if (!rewritten) {
        add_barrier(P, in->pos, arena_printf(P->a, "%s is read in the loop after other threads wrote it before", x->buf->name));
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
  int i = acc_lower(acc, in->pos);
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
      if (x->op == TIR_FOR || x->op == TIR_WHILE || x->op == TIR_IF || x->op == TIR_LOAD || touches_shared(acc, x)) break;
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

/* ------------------------------------------------------------- driver */

static int cmp_barrier(const void *x, const void *y) {
  const PlanBarrier *a = x, *b = y;
  int pa = a->pos < 0 ? -1 - a->pos : a->pos, pb = b->pos < 0 ? -1 - b->pos : b->pos;
  return pa != pb ? pa - pb : a->pos - b->pos;
}

Plan *plan_kernel(Arena *a, Diags *d, TirFunc *f, const char *arch, unsigned flags) {
  Plan *p = arena_alloc(a, sizeof *p);
  p->f = f;
  p->threads = f->info->threads;
  p->launch_threads = p->threads;
  p->padstage = f->info->padstage;
  p->prefetch = flags & PLAN_PREFETCH;
  p->no_async = (flags & PLAN_NO_ASYNC) || f->info->no_tma;
  bool sm90 = !arch || strcmp(arch, "sm_90a") == 0;
  p->wgmma = sm90 && !(flags & PLAN_NO_WGMMA);
  p->shared_limit = f->info->dynshared ? (sm90 ? SHARED_OPTIN_SM90 : SHARED_OPTIN_SM80) : STATIC_SHARED;
  Planner P = {.a = a, .d = d, .f = f, .p = p, .mma_ok = true, .uses = tir_use_counts(a, f)};
  P.parent = arena_alloc(a, sizeof(int) * (size_t)(f->ninsts + 1));
  for (int i = 0; i < f->ninsts; i++) P.parent[i] = i;
  P.encl = arena_alloc(a, sizeof *P.encl * (size_t)(f->ninsts + 1));
  enclosing_loops(&P, &f->body, NULL);

  walk(&f->grid, init_phys, &P);
  walk(&f->body, init_phys, &P);
  walk(&f->body, tie_values, &P);
  walk(&f->body, dot_granules, &P);
  unify_phys(&P);
  walk(&f->body, choose_staging, &P);
  assign_layouts(&P);
  choose_pipeline(&P, sm90, flags);
  if (sm90 && !(flags & PLAN_NO_TENSOR_COPIES) && !p->no_async && !p->producer)
    walk_tma(&P, &f->body, false, false, NULL);
  choose_frags(&P);
  choose_chunk(&P);
  choose_dot_paths(&P);
  walk(&f->body, choose_exchange, &P);
  int errors = d->errors;
  check_backend_limits(&P);
  if (d->errors > errors) return NULL;

  P.scratch_of = arena_alloc(a, sizeof *P.scratch_of * (size_t)(f->ninsts + 1));
  for (int i = 0; i < P.bufs.len; i++) {
    PlanBuf *b = P.bufs.items[i];
    if (b->kind == BUF_SCRATCH) vec_push(a, &P.scratch_of[b->owner->id], b);
  }
  Accesses acc = {0};
  collect_accesses(&P, &f->body, &acc);
  for (int i = 1; i < acc.len; i++)
    if (acc.items[i].pos < acc.items[i - 1].pos) diag_ice("plan: shared accesses out of program order");
  live_ranges(&P, &acc);
  allocate(&P);
  Hazards h = {0};
  P.walked = arena_alloc(a, sizeof *P.walked * (size_t)(f->ninsts + 1));
  P.bar_at = arena_alloc(a, sizeof *P.bar_at * (size_t)(f->ninsts + 2));
  P.bar_within = arena_alloc(a, sizeof *P.bar_within * (size_t)(f->ninsts + 2));
  barrier_walk(&P, &f->body, &h, &acc);
  hoist_barriers(&P, &f->body, &acc);
  int kept = 0; /* less those hoisting merged into another */
  for (int i = 0; i < P.barriers.len; i++)
    if (((PlanBarrier *)P.barriers.items[i])->pos != INT_MIN) P.barriers.items[kept++] = P.barriers.items[i];
  P.barriers.len = kept;

  p->nbufs = P.bufs.len;
  p->bufs = (PlanBuf **)P.bufs.items;
  p->nbarriers = P.barriers.len;
  p->barriers = arena_alloc(a, sizeof(PlanBarrier) * (size_t)(p->nbarriers + 1));
  for (int i = 0; i < p->nbarriers; i++) p->barriers[i] = *(PlanBarrier *)P.barriers.items[i];
  qsort(p->barriers, (size_t)p->nbarriers, sizeof *p->barriers, cmp_barrier);

  /* Tensor copies cost shared memory of their own (a swizzled buffer's
   * 1024-byte alignment and the rounded base, the copies' mbarriers): a
   * kernel they push over the limit is planned without them. */
  int64_t rounding;
  if (p->ntmaps && !(flags & PLAN_NO_TENSOR_COPIES) && p->shared_bytes + plan_copy_extra(p, &rounding) > p->shared_limit)
    return plan_kernel(a, d, f, arch, flags | PLAN_NO_TENSOR_COPIES);
  if (p->shared_bytes > p->shared_limit) {
    diag_error(d, f->info->kernel->span,
               "kernel '%s' needs %lld bytes of shared memory; the limit is %lld%s", f->name,
               (long long)p->shared_bytes, (long long)p->shared_limit,
               f->info->dynshared ? " (the device's opt-in maximum)" : " (static; @dynshared raises it)");
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
      plan_print(mem, p);
      fclose(mem);
      if (len && text[len - 1] == '\n') text[len - 1] = 0;
      const char *v = tir_variant_str(a, f->info);
      diag_note(d, f->info->kernel->span, "the plan%s%s%s:\n%s", *v ? ", for @autotune point [" : "", v, *v ? "]" : "",
                text);
      free(text);
    }
    return NULL;
  }
  return p;
}

int64_t plan_launch_shared(const Plan *p) {
  int64_t rounding;
  plan_copy_extra(p, &rounding);
  return p->shared_bytes + rounding;
}

/* ------------------------------------------------------------ printing */

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
  case LAYOUT_NONE: break;
  }
  return "-";
}

int64_t plan_folded_rows(const TirInst *x) {
  int64_t n = 1;
  for (int i = 0; i + 1 < x->ty.rank; i++) n *= x->plan->phys[i];
  return n;
}

/* Why a dot the planner gave the tensor-core shapes still runs on FMA in
 * the PTX backend (ptx.c asks this too, so the plan and the code agree),
 * or NULL when it takes the tensor cores. NULL for a dot planned on FMA. */
const char *plan_dot_fallback(Arena *a, const Plan *p, const TirInst *dot) {
  const TirInst *x = dot->args[0], *y = dot->args[1];
  if (dot->plan->dot_fma) return NULL;
  int r = dot->ty.rank, tr = dot->aux;
  int64_t K = x->ty.dims[x->ty.rank - 1], N = dot->plan->phys[r - 1];
  bool i8 = is_int8(x->ty.elem);
  if (dot->ty.elem != (i8 ? S_I32 : S_F32)) return i8 ? "the result is not i32" : "the result is not f32";
  if (x->op == TIR_SPLAT || y->op == TIR_SPLAT) return "an operand is a splat scalar";
  if (y->ty.rank != 2 || x->ty.rank != r || r < 2) return "b is not rank 2, or a's rank is not the result's";
  if (p->threads % 32) return arena_printf(a, "%d threads are not whole warps", p->threads);
  if (K % mma_k(dot)) return arena_printf(a, "K = %lld is not a multiple of %lld", (long long)K, (long long)mma_k(dot));
  int64_t M = plan_folded_rows(dot);
  if (M % 16 || N % 8 || plan_folded_rows(x) != M || y->plan->phys[tr ? 0 : 1] != N || x->plan->phys[r - 1] < K ||
      y->plan->phys[tr ? 1 : 0] < K)
    return "the operands' physical shapes do not match the result's";
  for (int i = 0; i + 1 < r; i++)
    if (x->plan->phys[i] != dot->plan->phys[i]) return "a's leading physical dims are not the result's";
  return NULL;
}

void plan_print(FILE *out, const Plan *p) {
  const TirFunc *f = p->f;
  Arena *a = arena_new();
  fprintf(out, "plan %s [%s] threads %d%s\n", f->name, tir_variant_str(a, f->info), p->threads,
          p->producer ? " + a producer warp" : "");
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
    if (fb) fprintf(out, "\n        path: fma, not the tensor cores: %s", fb);
    if (v->path) fprintf(out, "\n        path: %s", v->path);
    fputc('\n', out);
  }
  fputs("shared buffers:\n", out);
  for (int i = 0; i < p->nbufs; i++) {
    const PlanBuf *b = p->bufs[i];
    fprintf(out, "  #%d %-24s %-20s %s ", b->id, b->name, buf_kinds[b->kind], sema_scalar_name(b->elem));
    shape(out, b->rank, b->dims);
    fprintf(out, " pitch %lld (%lld B)%s  %lld B at %lld  live %d..%d", (long long)b->pitch,
            (long long)(b->pitch * sema_scalar_bytes(b->elem)), b->padded ? " +8 padstage" : "", (long long)b->bytes,
            (long long)b->offset, b->first, b->last);
    if (b->stages) fprintf(out, "  ring of %d stages of %lld B", b->stages, (long long)b->stage_bytes);
    if (b->swizzle) fprintf(out, "  swizzled %dB", b->swizzle);
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
  fprintf(out, "- kernel: %s\n  variant: \"%s\"\n  threads: %d\n  producer_warp: %s\n  shared_bytes: %lld\n"
          "  shared_limit: %lld\n", f->name, tir_variant_str(a, f->info), p->threads, p->producer ? "true" : "false",
          (long long)p->shared_bytes, (long long)p->shared_limit);
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
    fprintf(out, "    - {id: %d, op: %s, elem: %s, shape: ", in->id, tir_op_name(in->op), sema_scalar_name(in->ty.elem));
    yaml_shape(out, in->ty.rank, logical);
    fputs(", phys: ", out);
    yaml_shape(out, in->ty.rank, v->phys);
    fprintf(out, ", masked: %s, residence: %s", v->slack ? "true" : "false", res_names[v->res]);
    if (v->res == RES_SHARED) fprintf(out, ", buffer: %d", v->buf->id);
    else if (v->layout) fprintf(out, ", layout: \"%s\"", plan_layout_str(a, v->layout));
    if (in->op == TIR_DOT) {
      const char *fb = plan_dot_fallback(a, p, in);
      char pb[32];
      fprintf(out, ", dot: %s", dot_path_name(in, pb));
      if (fb) fprintf(out, ", path: \"fma, not the tensor cores: %s\"", fb);
    }
    if (v->path) fprintf(out, ", path: \"%s\"", v->path);
    fputs("}\n", out);
  }
  fputs("  buffers:\n", out);
  for (int i = 0; i < p->nbufs; i++) {
    const PlanBuf *b = p->bufs[i];
    fprintf(out, "    - {id: %d, name: \"%s\", kind: %s, elem: %s, dims: ", b->id, b->name,
            b->kind == BUF_SCRATCH ? "scratch" : b->kind == BUF_RING ? "ring" : b->kind == BUF_MBAR ? "mbarriers" : "staging",
            sema_scalar_name(b->elem));
    yaml_shape(out, b->rank, b->dims);
    fprintf(out, ", pitch: %lld, padded: %s, bytes: %lld, offset: %lld, live: [%d, %d]", (long long)b->pitch,
            b->padded ? "true" : "false", (long long)b->bytes, (long long)b->offset, b->first, b->last);
    if (b->stages) fprintf(out, ", stages: %d, stage_bytes: %lld", b->stages, (long long)b->stage_bytes);
    if (b->swizzle) fprintf(out, ", swizzle: %d", b->swizzle);
    fputs("}\n", out);
  }
  fprintf(out, "  barriers: %d\n", p->nbarriers);
  arena_free(a);
}
