/* layout.c: shapes and layouts: physical shapes (powers of two, the tensor
 * cores' granules) shared by tied values, each class's distribution over
 * the threads (the fragment layout for tensor-core results, the blocked
 * layout with its row values and row vectors for the other tiles whose
 * operations allow it, flat chunks elsewhere), the registers a value takes
 * and the backend's limits, and each dot's instruction (wgmma, mma.sync,
 * columns, FMA). */
#include "planner.h"

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
int64_t pl_mma_k(const TirInst *dot) { return is_int8(dot->args[0]->ty.elem) ? 32 : 16; }

void pl_tie_values(Planner *P, TirInst *in) {
  switch (in->op) {
  case TIR_UNARY:
  case TIR_MATH: /* fma's three operands too */
  case TIR_CONVERT:
    for (int i = 0; i < in->nargs; i++) unite(P, in, in->args[i]);
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

void pl_init_phys(Planner *P, TirInst *in) {
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

void pl_dot_granules(Planner *P, TirInst *in) {
  if (in->op != TIR_DOT) return;
  PlanVal *v = in->plan;
  v->dot_fma = !dot_uses_mma(P, in);
  if (v->dot_fma) return;
  granule(v, &in->ty, 16, 8);
  TirInst *a = in->args[0], *b = in->args[1];
  int64_t kg = pl_mma_k(in);
  granule(a->plan, &a->ty, 16, kg);
  /* b is [K, N] (or [N, K] for dot_t): K to the mma's K, N to 8 */
  PlanVal *bv = b->plan;
  int kdim = in->aux ? 1 : 0;
  if (bv->phys[kdim] < kg) bv->phys[kdim] = kg;
  if (bv->phys[1 - kdim] < 8) bv->phys[1 - kdim] = 8;
}

/* Values tied elementwise share one physical shape: the largest. */
void pl_unify_phys(Planner *P) {
  int n = P->f->ninsts;
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (!in->ty.rank) continue;
    TirInst *root = P->f->insts[find(P, i)];
    for (int d = 0; d < in->ty.rank; d++)
      if (root->plan->phys[d] < in->plan->phys[d]) root->plan->phys[d] = in->plan->phys[d];
  }
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (!in->ty.rank) continue;
    TirInst *root = P->f->insts[find(P, i)];
    for (int d = 0; d < in->ty.rank; d++) {
      in->plan->phys[d] = root->plan->phys[d];
      if (in->plan->phys[d] > in->ty.dims[d]) in->plan->slack = true;
    }
  }
}

static Layout *new_layout(Planner *P) {
  Layout *l = arena_alloc(P->a, sizeof *l);
  l->id = P->nlayouts++;
  return l;
}

/* Sets l to the blocked layout of a value of folded shape [M, N] (powers
 * of two) over W warps (a power of two), V elements a chunk: lanes along
 * the row first (up to 32 chunks), then warps down the rows (a row spans
 * as few warps as its length allows), the warps left over along the row,
 * rows past M slack (plan.h, BlockGeom). A tile of fewer than V elements
 * a thread takes narrower vectors rather than leave threads idle. */
static void set_blocked(Layout *l, int64_t M, int64_t N, int V, int W) {
  if (V > N) V = (int)N;
  while (V > 1 && M * N / V < 32LL * W) V /= 2; /* narrower vectors before idle threads */
  int64_t chunks = N / V;
  int tc = (int)(chunks < 32 ? chunks : 32), tr = 32 / tc;
  int64_t wr0 = M / tr < 1 ? 1 : M / tr;
  if (wr0 > W) wr0 = W;
  int64_t wc = W / wr0, along = chunks / tc;
  if (wc > along) wc = along;
  l->kind = LAYOUT_BLOCKED;
  l->rank = 2;
  l->spt[0] = 1, l->spt[1] = V;
  l->tpw[0] = tr, l->tpw[1] = tc;
  l->wpc[0] = W / (int)wc, l->wpc[1] = (int)wc;
  int64_t rr = M / ((int64_t)tr * l->wpc[0]);
  l->reps_c = (int)(chunks / ((int64_t)tc * wc));
  l->reps = (int)((rr < 1 ? 1 : rr) * l->reps_c);
}

static Layout *blocked(Planner *P, const PlanVal *v, int rank, Scalar elem) {
  Layout *l = new_layout(P);
  int64_t M = 1;
  for (int i = 0; i + 1 < rank; i++) M *= v->phys[i];
  int64_t N = rank ? v->phys[rank - 1] : 1;
  int vec = 16 / sema_scalar_bytes(elem);
  set_blocked(l, M, N, vec < 1 ? 1 : vec, P->p->threads / 32 < 1 ? 1 : P->p->threads / 32);
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

/* the row values of parent's rows (its last dim sliced away) */
static Layout *sliced(Planner *P, Layout *parent, int rank) {
  Layout *l = new_layout(P);
  l->kind = LAYOUT_SLICED;
  l->rank = rank;
  l->parent = parent;
  return l;
}

/* The layout each class of tied values takes: a dot result fixes its class
 * (accumulator or FMA blocked), then an FMA dot's B operand fixes its own;
 * everything else is blocked. */
void pl_assign_layouts(Planner *P) {
  int n = P->f->ninsts;
  Layout **cls = arena_alloc(P->a, sizeof(Layout *) * (size_t)n);
  /* 1. dot results */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT) continue;
    int root = find(P, i);
    if (!cls[root])
      cls[root] = in->plan->dot_fma ? blocked(P, in->plan, in->ty.rank, in->ty.elem)
                                  : mma_layout(P, LAYOUT_MMA_ACC, in->plan, in->ty.rank);
  }
  /* 2. an FMA dot's B operand */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT || !in->plan->dot_fma || in->args[1]->plan->res != RES_REG) continue;
    int root = find(P, in->args[1]->id);
    if (!cls[root]) cls[root] = dot_b_layout(P, in->args[1]->plan, in->args[1]->ty.elem, in->aux);
  }
  /* 3. row reductions: their input's layout with the rows kept, for the
   * whole class they feed (the running max and sum of a softmax) */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_REDUCE) continue;
    TirInst *x = in->args[0];
    int xr = find(P, x->id), root = find(P, i);
    if (!cls[xr]) cls[xr] = blocked(P, x->plan, x->ty.rank, x->ty.elem);
    if (!cls[root]) cls[root] = sliced(P, cls[xr], in->ty.rank);
  }
  /* 3b. a row vector broadcast down a tile: its columns as the tile holds them */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_BROADCAST || in->ty.rank < 2) continue;
    TirInst *x = in->args[0];
    int xr = x->ty.rank;
    if (xr < 1 || x->plan->res != RES_REG || x->plan->phys[xr - 1] != in->plan->phys[in->ty.rank - 1] ||
        x->plan->phys[xr - 1] == 1 || (xr == 2 && x->plan->phys[0] != 1) || xr > 2)
      continue;
    int root = find(P, i), sr = find(P, x->id);
    if (!cls[root]) cls[root] = blocked(P, in->plan, in->ty.rank, in->ty.elem);
    if (!cls[sr]) {
      Layout *l = new_layout(P);
      l->kind = LAYOUT_COLUMNS;
      l->rank = xr;
      l->parent = cls[root];
      cls[sr] = l;
    }
  }
  /* 3c. a column vector ([.., R, 1]) broadcast across a tile ([.., R, C]),
   * its class not yet placed (no row reduction made it): the tile's rows,
   * each thread holding the row values of the rows it holds, so that the
   * broadcast reads registers, not the exchange area (a decode merge's
   * log-sum-exp weights over its partials). A class that does not allow
   * it (pl_choose_layouts) goes flat, as it would have gone otherwise. */
  for (int i = 0; i < n && P->p->row_broadcasts; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_BROADCAST || in->ty.rank < 2) continue;
    TirInst *x = in->args[0];
    int r = in->ty.rank;
    if (x->ty.rank != r || x->plan->res != RES_REG || x->plan->phys[r - 1] != 1 || in->plan->phys[r - 1] == 1)
      continue;
    bool rows = true;
    for (int d = 0; d < r - 1; d++) rows = rows && x->plan->phys[d] == in->plan->phys[d];
    int root = find(P, i), sr = find(P, x->id);
    if (!rows || cls[sr] || (cls[root] && cls[root]->kind != LAYOUT_BLOCKED)) continue;
    if (!cls[root]) cls[root] = blocked(P, in->plan, in->ty.rank, in->ty.elem);
    cls[sr] = sliced(P, cls[root], r);
  }
  /* 4. the rest */
  for (int i = 0; i < n; i++) {
    TirInst *in = P->f->insts[i];
    PlanVal *v = in->plan;
    if (v->res != RES_REG) continue;
    int root = find(P, i);
    if (!cls[root]) cls[root] = blocked(P, v, in->ty.rank, in->ty.elem);
    v->layout = cls[root];
  }
}

/* the elements of a planned value */
int64_t pl_phys_elems(const TirInst *x) {
  int64_t n = 1;
  for (int i = 0; i < x->ty.rank; i++) n *= x->plan->phys[i];
  return n;
}

static bool mma_fits(Planner *P, const TirInst *dot) {
  return !dot->plan->dot_fma && !plan_dot_fallback(P->a, P->p, dot);
}

/* x's register layout when x is a register tile of at least min_rank
 * whose layout is of kind k (and, for a sliced or columns layout, whose
 * parent is of kind parent), else NULL */
static const Layout *reg_layout(const TirInst *x, int min_rank, LayoutKind k, LayoutKind parent) {
  const Layout *l = x->plan && x->ty.rank >= min_rank && x->plan->res == RES_REG ? x->plan->layout : NULL;
  if (!l || l->kind != k || (l->parent && l->parent->kind != parent)) return NULL;
  return l;
}

/* a register value of the fragment layout (after pl_choose_layouts) */
bool pl_is_frag(const TirInst *x) { return reg_layout(x, 2, LAYOUT_MMA_ACC, LAYOUT_NONE); }

/* A row value in the row layout beside a fragment value (pl_choose_layouts). */
bool pl_is_rowfrag(const TirInst *x) { return reg_layout(x, 2, LAYOUT_SLICED, LAYOUT_MMA_ACC); }

bool plan_is_blocked(const TirInst *x) { return reg_layout(x, 1, LAYOUT_BLOCKED, LAYOUT_NONE); }

bool plan_is_blocked_rows(const TirInst *x) { return reg_layout(x, 1, LAYOUT_SLICED, LAYOUT_BLOCKED); }

BlockGeom plan_block_geom(const TirInst *x) {
  const Layout *l = x->plan->layout;
  bool cols = l->kind == LAYOUT_COLUMNS;
  if (l->kind == LAYOUT_SLICED || cols) l = l->parent;
  BlockGeom g = {.V = l->spt[1], .tr = l->tpw[0], .tc = l->tpw[1], .wr = l->wpc[0], .wc = l->wpc[1]};
  g.reps_c = l->reps_c;
  g.reps_r = cols ? 1 : l->reps / l->reps_c;
  g.M = cols ? 1 : plan_folded_rows(x);
  g.N = (int64_t)g.reps_c * g.tc * g.wc * g.V; /* the parent's row, for a row value */
  return g;
}

bool plan_is_columns(const TirInst *x) { return reg_layout(x, 1, LAYOUT_COLUMNS, LAYOUT_BLOCKED); }

bool plan_is_fragcols(const TirInst *x) { return reg_layout(x, 1, LAYOUT_COLUMNS, LAYOUT_MMA_ACC); }

/* Whether every use of the columns class L beside a fragment class is one
 * the backend spells register by register: elementwise operations (whose
 * results are of L itself), reads and whole writes of register vars, and
 * broadcasts over L's own fragment class. A store or a reduction of it
 * would need an owner per column, which the fragment layout has not. */
static bool fragcols_uses_ok(const TirFunc *f, const Layout *L) {
  for (int j = 0; j < f->ninsts; j++) {
    const TirInst *u = f->insts[j];
    for (int k = 0; k < u->nargs; k++) {
      const TirInst *a = u->args[k];
      if (!a || !a->ty.rank || !a->plan || a->plan->res != RES_REG || a->plan->layout != L) continue;
      switch (u->op) {
      case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_READ: case TIR_WRITE:
        break;
      case TIR_BROADCAST:
        if (u->plan->res != RES_REG || u->plan->layout != L->parent) return false;
        break;
      default: return false;
      }
    }
  }
  return true;
}

bool plan_reduce_in_regs(const TirInst *red) {
  if (red->op != TIR_REDUCE || !plan_is_blocked_rows(red) || !plan_is_blocked(red->args[0])) return false;
  BlockGeom a = plan_block_geom(red), b = plan_block_geom(red->args[0]);
  return plan_same_rows(&a, &b);
}

bool plan_broadcast_in_regs(const TirInst *bc) {
  const TirInst *x = bc->args[0];
  if (bc->op == TIR_BROADCAST && pl_is_frag(bc) && plan_is_fragcols(x) && x->plan->layout->parent == bc->plan->layout)
    return true;
  if (bc->op == TIR_BROADCAST && plan_is_blocked(bc) && plan_is_columns(x)) {
    BlockGeom a = plan_block_geom(bc), b = plan_block_geom(x);
    return a.V == b.V && a.tc == b.tc && a.wc == b.wc && a.reps_c == b.reps_c &&
           bc->plan->phys[bc->ty.rank - 1] == x->plan->phys[x->ty.rank - 1];
  }
  if (bc->op != TIR_BROADCAST || !plan_is_blocked(bc) || !plan_is_blocked_rows(x) || x->ty.rank != bc->ty.rank)
    return false;
  BlockGeom a = plan_block_geom(bc), b = plan_block_geom(x);
  return plan_same_rows(&a, &b);
}

bool plan_transpose_in_smem(const TirInst *t) {
  if (t->op != TIR_TRANSPOSE || !plan_is_blocked(t) || !plan_is_blocked(t->args[0])) return false;
  const int64_t *a = t->plan->phys, *b = t->args[0]->plan->phys;
  return a[0] == b[1] && a[1] == b[0];
}

bool plan_reloads(const TirInst *x) {
  if (x->plan->res != RES_REG) return false;
  if (x->op == TIR_LOAD) return true;
  return x->op == TIR_TRANSPOSE && !plan_transpose_in_smem(x) && x->args[0]->op == TIR_LOAD &&
         x->args[0]->plan->res == RES_REG;
}

bool plan_same_rows(const BlockGeom *a, const BlockGeom *b) {
  return a->M == b->M && a->tr == b->tr && a->wr == b->wr && a->reps_r == b->reps_r;
}

/* The kinds of register layout the planner keeps, one pass each, parents
 * before the row classes sliced from them. */
typedef enum Pass { PASS_FRAG, PASS_FRAG_ROWS, PASS_BLOCKED, PASS_BLOCKED_ROWS, PASS_COLUMNS, NPASSES } Pass;

static bool row_pass(Pass pass) { return pass == PASS_FRAG_ROWS || pass == PASS_BLOCKED_ROWS; }

/* the layout kind a class takes into the pass (a row class of either
 * parent is LAYOUT_SLICED: its parent's kind tells them apart) */
static bool in_pass(const Layout *L, Pass pass) {
  switch (pass) {
  case PASS_FRAG: return L->kind == LAYOUT_MMA_ACC;
  case PASS_FRAG_ROWS: return L->kind == LAYOUT_SLICED && L->parent && L->parent->kind == LAYOUT_MMA_ACC;
  case PASS_BLOCKED: return L->kind == LAYOUT_BLOCKED;
  case PASS_BLOCKED_ROWS: return L->kind == LAYOUT_SLICED && L->parent && L->parent->kind != LAYOUT_MMA_ACC;
  case PASS_COLUMNS: return L->kind == LAYOUT_COLUMNS;
  default: return false;
  }
}

static bool plain_load(const TirInst *x) {
  return x->op == TIR_LOAD && x->plan->res == RES_REG && !x->plan->ring && !x->plan->tma;
}

/* Whether member x of a class allows a register layout other than the
 * flat one: a register value of the class's physical shape (with a last
 * dim of 1 for a row class) whose operation the backend spells register by
 * register or by asking where an element is (ptx/layout.c). A fragment
 * class may hold tensor-core dots, broadcasts and iotas, its row class
 * rowmax and rowsum of f32 fragment values with its rows; a blocked class
 * elementwise operations, iotas, broadcasts, transposes of register values
 * and the threads' own loads,
 * its row class row reductions of it (any type) and loads. first: the
 * class's first member. */
static bool member_allows(Planner *P, const TirInst *x, const TirInst *first, Pass pass) {
  bool rows = row_pass(pass), blk = pass >= PASS_BLOCKED;
  /* the backend reads a staged tile operand at the flat index of register
   * k: an elementwise member must take its tiles from registers (a dot
   * reads its staged operands through ldmatrix, a broadcast its source
   * through the exchange area, in the source's own layout) */
  if (x->op != TIR_DOT && x->op != TIR_BROADCAST)
    for (int i = 0; i < x->nargs; i++)
      if (x->args[i] && x->args[i]->ty.rank && x->args[i]->plan && x->args[i]->plan->res != RES_REG) return false;
  int r = x->ty.rank;
  if (pass == PASS_COLUMNS) { /* [N] or [1, N], as the parent holds its rows' columns */
    if (r != first->ty.rank || x->plan->phys[r - 1] != first->plan->phys[r - 1]) return false;
    switch (x->op) {
    case TIR_LOAD: return plain_load(x);
    case TIR_READ: return x->args[0]->plan->res == RES_REG;
    case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_SPLAT: case TIR_VAR:
      return true;
    default: return false;
    }
  }
  if (r < (blk ? 1 : 2) || r != first->ty.rank || (rows && x->plan->phys[r - 1] != 1)) return false;
  for (int d = 0; d < r; d++)
    if (x->plan->phys[d] != first->plan->phys[d]) return false;
  switch (x->op) {
  case TIR_DOT: return pass == PASS_FRAG && mma_fits(P, x);
  case TIR_REDUCE:
    if (!rows || plan_folded_rows(x->args[0]) != plan_folded_rows(x) || (x->aux != TRED_MAX && x->aux != TRED_MIN && x->aux != TRED_SUM))
      return false;
    if (!blk) return pl_is_frag(x->args[0]) && x->ty.elem == S_F32 && x->args[0]->ty.elem == S_F32;
    { /* of a blocked value whose rows lie as the class's parent's */
      const Layout *xl = x->args[0]->plan->layout, *par = first->plan->layout->parent;
      return plan_is_blocked(x->args[0]) && par && par->kind == LAYOUT_BLOCKED && xl->tpw[0] == par->tpw[0] &&
             xl->wpc[0] == par->wpc[0];
    }
  case TIR_IOTA: return !rows;
  case TIR_TRANSPOSE: return blk && !rows && x->args[0]->plan->res == RES_REG; /* any source layout: ptx/exchange.c */
  case TIR_BROADCAST: return !rows || blk;
  case TIR_LOAD: return blk && plain_load(x);
  case TIR_READ: return x->args[0]->plan->res == RES_REG;
  case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_SPLAT: case TIR_VAR:
    return true;
  default: return false;
  }
}

/* Whether instruction u may read a value of a blocked class (or its row
 * class) as its operand k: by register, or through an exchange that asks
 * where each element is. A dot's operands keep the flat layout (its
 * columns path and the mma exchange read them by flat index). */
static bool use_allows(const TirInst *u, int k, bool rows) {
  if (u->op == TIR_BROADCAST && k == 0 && plan_is_columns(u->args[0])) return true;
  switch (u->op) {
  case TIR_BINARY: case TIR_UNARY: case TIR_MATH: case TIR_CONVERT: case TIR_SELECT: case TIR_READ:
  case TIR_BROADCAST: case TIR_EXTRACT: case TIR_WRITE:
    return true;
  case TIR_REDUCE: case TIR_TRANSPOSE: return !rows;
  case TIR_STORE: return !rows || !u->plan->tma;
  default: (void)k; return false;
  }
}

/* A blocked tile whose warps span several rows: the tile an odd-rows plan
 * gives one element a chunk, where its rows' different shifts would make
 * the warp take their branches one after another (ncu: 62% branch
 * efficiency on the ragged transpose); a warp within one row shares its
 * shift and keeps its vectors. */
static bool spans_rows(const Layout *l) { return l && l->kind == LAYOUT_BLOCKED && l->tpw[0] > 1; }

/* The layout of a load's value or of a stored value (u->aux: the tensor). */
static const Layout *access_layout(const TirInst *u) {
  if (u->op == TIR_LOAD) return u->plan->layout;
  if (u->op == TIR_STORE) return u->args[0]->plan->layout;
  return NULL;
}

bool plan_odd_rows_narrow(const Plan *p, uint64_t params) {
  for (int j = 0; j < p->f->ninsts; j++) {
    const TirInst *u = p->f->insts[j];
    if (u->aux < 64 && params >> u->aux & 1 && spans_rows(access_layout(u))) return true;
  }
  return false;
}

/* The bytes of each class's narrowest memory access (a load of it, or a
 * store of it), by layout id, 0 for none: a blocked class's V is 16 bytes
 * of it, else of its first member's type. One pass over the kernel. In
 * odd, by layout id: the class loads from or stores to a tensor of
 * Plan.scalar_params (an odd-rows plan: V is 1 where a warp spans rows). */
static int *access_bytes(Planner *P, bool **odd) {
  const TirFunc *f = P->f;
  int *eb = arena_alloc(P->a, sizeof(int) * (size_t)(P->nlayouts + 1));
  *odd = arena_alloc(P->a, sizeof(bool) * (size_t)(P->nlayouts + 1));
  for (int j = 0; j < f->ninsts; j++) {
    const TirInst *u = f->insts[j];
    const Layout *l = access_layout(u);
    int b = u->op == TIR_LOAD ? sema_scalar_bytes(u->ty.elem) : l ? sema_scalar_bytes(f->params[u->aux].elem) : 0;
    if (l && (!eb[l->id] || b < eb[l->id])) eb[l->id] = b;
    if (l && u->aux < 64 && P->p->scalar_params >> u->aux & 1) (*odd)[l->id] = true;
  }
  return eb;
}

/* The layouts the backend keeps, one pass over the kernel a kind (Pass):
 * the fragment layout for each tensor-core accumulator class whose every
 * member allows it (member_allows), whose values are written whole into
 * register vars only, and whose row tiles divide evenly among the warps;
 * the row layout beside it for each row class fed by a reduction of such
 * a class; the blocked layout (plan.h, BlockGeom) for each other class of
 * rank 2 or more whose members and readers allow it (use_allows), with
 * whole warps of a power of two (and not under --prefetch, whose loads
 * are the flat layout's); and its row class beside it. Every other
 * register class is flat: chunks of Plan.chunk elements dealt round the
 * threads (pl_choose_chunk). */
void pl_choose_layouts(Planner *P) {
  const TirFunc *f = P->f;
  int T = P->p->threads, W = T / 32, n = f->ninsts;
  const TirInst **first = arena_alloc(P->a, sizeof *first * (size_t)(n + 1)); /* by layout id */
  bool *bad = arena_alloc(P->a, (size_t)(n + 1));
  bool blocked_ok = T % 32 == 0 && W > 0 && (W & (W - 1)) == 0 && !P->p->prefetch;
  int *eb = NULL; /* access_bytes, when a blocked class is kept */
  bool *odd = NULL;
  for (Pass pass = PASS_FRAG; pass < NPASSES; pass++) {
    bool rows = row_pass(pass);
    memset(first, 0, sizeof *first * (size_t)(n + 1));
    memset(bad, 0, (size_t)(n + 1));
    for (int j = 0; j < n; j++) {
      const TirInst *x = f->insts[j];
      if (x->op == TIR_WRITE) { /* whole writes between register values only */
        const Layout *lv = x->args[1]->plan ? x->args[1]->plan->layout : NULL;
        const Layout *ls = x->args[0]->plan && x->args[0]->plan->res == RES_REG ? x->args[0]->plan->layout : NULL;
        if (lv && in_pass(lv, pass) && (x->nsubs || x->args[0]->plan->res != RES_REG)) bad[lv->id] = true;
        if (ls && in_pass(ls, pass) && (x->nsubs || (x->args[1]->ty.rank && x->args[1]->plan->res != RES_REG)))
          bad[ls->id] = true;
      }
      if (pass >= PASS_BLOCKED)
        for (int k = 0; k < x->nargs; k++) {
          const TirInst *a = x->args[k];
          const Layout *la = a && a->ty.rank && a->plan && a->plan->res == RES_REG ? a->plan->layout : NULL;
          if (la && in_pass(la, pass) && !use_allows(x, k, rows)) bad[la->id] = true;
        }
      const Layout *L = x->plan && x->plan->res == RES_REG ? x->plan->layout : NULL;
      if (!L || !in_pass(L, pass)) continue;
      if (!first[L->id]) first[L->id] = x;
      if (!bad[L->id] && !member_allows(P, x, first[L->id], pass)) bad[L->id] = true;
    }
    for (int j = 0; j < n; j++) {
      const TirInst *x = first[j];
      if (!x) continue;
      Layout *L = x->plan->layout;
      int64_t M = plan_folded_rows(x), N = x->plan->phys[x->ty.rank - 1];
      bool keep;
      if (pass <= PASS_FRAG_ROWS)
        keep = T % 32 == 0 && !bad[j] && M % 16 == 0 && (rows || N % 8 == 0) && (M / 16) % W == 0;
      else
        keep = blocked_ok && !bad[j] &&
               (pass == PASS_BLOCKED || L->parent->kind == LAYOUT_BLOCKED ||
                (pass == PASS_COLUMNS && L->parent->kind == LAYOUT_MMA_ACC && N % 8 == 0 && fragcols_uses_ok(f, L)));
      if (!keep) L->kind = LAYOUT_FLAT;
      else if (pass == PASS_BLOCKED) {
        if (!eb) eb = access_bytes(P, &odd);
        int b = eb[L->id] ? eb[L->id] : sema_scalar_bytes(x->ty.elem);
        set_blocked(L, M, N, 16 / b < 1 ? 1 : 16 / b, W);
        if (odd[L->id] && spans_rows(L)) set_blocked(L, M, N, 1, W), P->p->odd_rows = true;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    Layout *L = f->insts[i]->plan ? f->insts[i]->plan->layout : NULL;
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
    if (in->plan && in->ty.rank && in->plan->res == RES_REG && !plan_is_blocked(in) && !plan_is_blocked_rows(in) &&
        !plan_is_columns(in)) {
      int64_t inner = in->plan->phys[in->ty.rank - 1];
      if (inner % v || pl_phys_elems(in) % (T * v)) return false;
    }
    if (!chunks_fit(&in->body, T, v) || !chunks_fit(&in->body2, T, v) || !chunks_fit(&in->cond, T, v)) return false;
  }
  return true;
}

/* Plan.chunk, and each flat class's registers a thread. */
void pl_choose_chunk(Planner *P) {
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
      L->reps = (int)((pl_phys_elems(x) + round - 1) / round * P->p->chunk);
    }
  }
}

/* An operand ldmatrix can read where it is: a staged buffer of its element
 * type laid out as the value's physical shape, rows on 16-byte boundaries
 * (offsets are 16-byte aligned: allocate). */
bool pl_mma_direct(const TirInst *x) {
  const PlanBuf *b = x->plan->res == RES_SHARED ? x->plan->buf : NULL;
  if (!b || b->elem != x->ty.elem || b->rank != x->ty.rank || (b->pitch * sema_scalar_bytes(b->elem)) % 16)
    return false;
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
  if ((a->ty.elem != S_F16 && a->ty.elem != S_BF16) || !pl_is_frag(dot) || !pl_is_frag(a)) return false;
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
 * [M, K] of a few rows (M <= PLAN_DOT_COLUMNS_ROWS) times columns the threads
 * own (a flat b whose columns are whole rounds of chunks, and a flat
 * result: thread t then holds the same columns of every row of both; a
 * staged in shared memory, a splat, or an f32 register tile computed in
 * the kernel, which goes through a small exchange: a normalized or gated
 * activation); FMA otherwise. */
static bool flat_reg(const TirInst *x) { return reg_layout(x, 2, LAYOUT_FLAT, LAYOUT_NONE); }

void pl_choose_dot_paths(Planner *P) {
  const Plan *p = P->p;
  int64_t TV = (int64_t)p->threads * p->chunk;
  for (int i = 0; i < P->f->ninsts; i++) {
    TirInst *in = P->f->insts[i];
    if (in->op != TIR_DOT) continue;
    PlanVal *v = in->plan;
    const TirInst *a = in->args[0], *b = in->args[1];
    int64_t N = v->phys[in->ty.rank - 1];
    if (mma_fits(P, in)) {
      bool areg = plan_a_from_regs(in), da = areg || pl_mma_direct(a), db = pl_mma_direct(b);
      bool sa = da && !areg && plan_swizzle(a->plan->buf), sb = db && plan_swizzle(b->plan->buf);
      bool wg = p->wgmma && (a->ty.elem == S_BF16 || a->ty.elem == S_F16) && in->ty.elem == S_F32 &&
                p->threads % 128 == 0 && sb && (areg || sa) && N % 8 == 0 && N <= 256;
      v->dot = pl_is_frag(in) && wg ? DOT_WGMMA : DOT_MMA;
      v->wgmma_n = v->dot == DOT_WGMMA ? (int)N : 0;
    } else if (!in->aux && a->ty.rank == 2 && a->plan->phys[0] <= PLAN_DOT_COLUMNS_ROWS && v->phys[0] == a->plan->phys[0] &&
               b->plan->res == RES_REG && !pl_is_frag(b) && b->plan->phys[1] % TV == 0 &&
               v->phys[1] == b->plan->phys[1] && flat_reg(in) && flat_reg(b) &&
               (a->op == TIR_SPLAT || (a->plan->res == RES_SHARED && !plan_swizzle(a->plan->buf)) ||
                (a->plan->res == RES_REG && a->ty.elem == S_F32 && !pl_is_frag(a)))) {
      v->dot = DOT_COLUMNS;
    } else {
      v->dot = DOT_FMA;
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
  if (pl_is_frag(x)) return M / 16 / W * (N / 2);
  if (pl_is_rowfrag(x)) return M / 16 / W * 2;
  if (plan_is_fragcols(x)) return N / 4;
  if (plan_is_blocked(x) || plan_is_blocked_rows(x) || plan_is_columns(x)) {
    BlockGeom g = plan_block_geom(x);
    return plan_is_blocked_rows(x) ? g.reps_r : g.reps_r * g.reps_c * g.V;
  }
  int64_t round = (int64_t)p->threads * p->chunk;
  return (pl_phys_elems(x) + round - 1) / round * p->chunk;
}

/* What the PTX backend cannot compile, found before it runs (so a plain
 * check and --emit=plan report it too; false after reporting): register
 * tiles past
 * MAX_REGS_PER_VALUE a thread (unrolled, they would be huge and spill; a
 * tile the plan stages is exempt), and the math functions on f64. */
bool pl_check_backend_limits(Planner *P) {
  int errors = P->d->errors;
  for (int i = 0; i < P->f->ninsts; i++) {
    const TirInst *in = P->f->insts[i];
    if (in->op == TIR_MATH && in->ty.elem == S_F64 && in->aux != TMATH_FMA)
      diag_error(P->d, in->span, "the PTX backend cannot compile this yet: exp, exp2, log, sqrt and tanh on f64");
    if (!in->ty.rank || in->plan->res == RES_SHARED || in->op == TIR_STORE || in->op == TIR_WRITE) continue;
    int64_t n = plan_regs(P->p, in);
    if (n > MAX_REGS_PER_VALUE)
      diag_error(P->d, in->span,
                 "the PTX backend cannot compile this yet: a register tile of %lld elements is %lld per thread with %d "
                 "threads (at most %d): use smaller tiles or more threads",
                 (long long)pl_phys_elems(in), (long long)n, P->p->threads, MAX_REGS_PER_VALUE);
  }
  return P->d->errors == errors;
}

/* The most registers a thread holds for any one blocked register value
 * (§15.12: a row kernel's tiles; a dot's fragments are not counted, their
 * accumulators are what a tensor-core kernel keeps in registers), twice
 * plan_regs for 8-byte elements. driver.c leaves out the @autotune
 * variants past TUNED_BLOCKED_MAX. */
int64_t plan_most_blocked_regs(const Plan *p) {
  int64_t most = 0;
  for (int i = 0; i < p->f->ninsts; i++) {
    const TirInst *in = p->f->insts[i];
    if (in->op == TIR_STORE || in->op == TIR_WRITE) continue;
    if (!plan_is_blocked(in) && !plan_is_blocked_rows(in) && !plan_is_columns(in)) continue;
    int64_t n = plan_regs(p, in) * (sema_scalar_bytes(in->ty.elem) == 8 ? 2 : 1);
    if (n > most) most = n;
  }
  return most;
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
  if (K % pl_mma_k(dot))
    return arena_printf(a, "K = %lld is not a multiple of %lld", (long long)K, (long long)pl_mma_k(dot));
  int64_t M = plan_folded_rows(dot);
  if (M % 16 || N % 8 || plan_folded_rows(x) != M || y->plan->phys[tr ? 0 : 1] != N || x->plan->phys[r - 1] < K ||
      y->plan->phys[tr ? 1 : 0] < K)
    return "the operands' physical shapes do not match the result's";
  for (int i = 0; i + 1 < r; i++)
    if (x->plan->phys[i] != dot->plan->phys[i]) return "a's leading physical dims are not the result's";
  return NULL;
}
