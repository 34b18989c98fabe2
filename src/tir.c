/* tir.c: the tile IR: construction, numbering, the --emit=tir printer and
 * the verifier that runs after every pass. */
#include <math.h>
#include "tir.h"

#include <string.h>

TirType tir_scalar(Scalar e) { return (TirType){.elem = e}; }

int *tir_use_counts(Arena *a, const TirFunc *f) {
  int *n = arena_alloc(a, sizeof(int) * (size_t)(f->ninsts + 1));
  for (int i = 0; i < f->ninsts; i++) {
    const TirInst *x = f->insts[i];
    if (!x) continue;
    for (int j = 0; j < x->nargs; j++)
      if (x->args[j]) n[x->args[j]->id]++;
    for (int j = 0; j < x->nsubs; j++)
      if (x->subs[j].start) n[x->subs[j].start->id]++;
    if (x->cond_value) n[x->cond_value->id]++;
  }
  return n;
}

static int access_kind(TirOp op) { return op == TIR_LOAD ? 0 : op == TIR_STORE ? 1 : op == TIR_ARRIVE ? 2 : -1; }

int tir_count_accesses(const TirBlock *b, TirOp op, int param) {
  int kind = access_kind(op);
  if (b->counts && kind >= 0 && param >= 0 && param < b->counts[0]) return b->counts[1 + 3 * param + kind];
  int n = 0;
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    n += in->op == op && in->aux == param;
    n += tir_count_accesses(&in->body, op, param) + tir_count_accesses(&in->body2, op, param) +
         tir_count_accesses(&in->cond, op, param);
  }
  return n;
}

/* an arrive writes its counter: the tensor is stored to as far as copies
 * and read-only loads are concerned */
bool tir_stores_to(const TirBlock *b, int param) {
  return tir_count_accesses(b, TIR_STORE, param) + tir_count_accesses(b, TIR_ARRIVE, param) > 0;
}

bool tir_inst_writes(const TirInst *in) {
  return in->op == TIR_STORE || in->op == TIR_ARRIVE || tir_writes(&in->cond) || tir_writes(&in->body) ||
         tir_writes(&in->body2);
}

bool tir_has_grid_barrier(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if ((in->op == TIR_ARRIVE && in->aux2 == TARRIVE_GRID) || tir_has_grid_barrier(&in->body) ||
        tir_has_grid_barrier(&in->body2) || tir_has_grid_barrier(&in->cond))
      return true;
  }
  return false;
}

bool tir_writes(const TirBlock *b) {
  for (int i = 0; i < b->len; i++)
    if (tir_inst_writes(b->insts[i])) return true;
  return false;
}

int64_t tir_register_budget(const TirFunc *f) {
  const KernelInfo *info = f->info;
  int64_t t = info->threads > 0 ? info->threads : LANG_DEFAULT_THREADS, per_sm = 65536 / (t * (info->min_blocks > 0 ? info->min_blocks : 1));
  int64_t cap = info->max_regs > 0 && info->max_regs < 255 ? info->max_regs : 255;
  return per_sm < cap ? per_sm : cap;
}

int64_t tir_thread_regs(const TirFunc *f, const TirInst *v) {
  if (v->ty.rank == 0) return 1;
  int64_t t = f->info->threads > 0 ? f->info->threads : LANG_DEFAULT_THREADS;
  /* 16- and 8-bit elements are packed until they are widened; bool takes a register an element */
  int64_t eb = v->ty.elem == S_BOOL ? 4 : sema_scalar_bytes(v->ty.elem);
  int64_t w = (tir_elems(&v->ty) * eb + 3) / 4;
  return (w + t - 1) / t;
}

bool tir_holds_registers(const TirInst *v) {
  return v->ty.rank > 0 && v->op != TIR_SPLAT && v->op != TIR_BROADCAST && v->op != TIR_IOTA;
}

/* Two scalar values equal by construction: the same instruction, equal
 * constants, the same dim, parameter or ctx register, or the same pure
 * operation of equal operands (at most 16 levels deep). resolve, when
 * given, maps each value to the one it stands for first (onepass.c). */
static bool same_value(TirInst *x, TirInst *y, TirInst *(*resolve)(const void *, TirInst *), const void *ctx, int depth) {
  if (resolve) x = resolve(ctx, x), y = resolve(ctx, y);
  if (x == y) return true;
  if (!x || !y || depth > 16 || x->op != y->op || x->aux != y->aux || !tir_same_type(&x->ty, &y->ty)) return false;
  switch (x->op) {
  case TIR_CONST: return x->ival == y->ival && (x->fval == y->fval || (x->fval != x->fval && y->fval != y->fval));
  case TIR_PARAM:
  case TIR_CTX: return true;
  case TIR_DIM: return x->aux2 == y->aux2;
  case TIR_UNARY:
  case TIR_BINARY:
  case TIR_MATH:
  case TIR_CONVERT:
  case TIR_SELECT:
    if (x->ty.rank != 0 || x->nargs != y->nargs) return false;
    for (int i = 0; i < x->nargs; i++)
      if (!same_value(x->args[i], y->args[i], resolve, ctx, depth + 1)) return false;
    return true;
  default: return false;
  }
}

bool tir_same_value(TirInst *x, TirInst *y, TirInst *(*resolve)(const void *, TirInst *), const void *ctx) {
  return same_value(x, y, resolve, ctx, 0);
}

bool tir_elementwise_op(TirOp op) {
  switch (op) {
  case TIR_IOTA:
  case TIR_SPLAT:
  case TIR_BROADCAST:
  case TIR_UNARY:
  case TIR_BINARY:
  case TIR_MATH:
  case TIR_CONVERT:
  case TIR_SELECT: return true;
  default: return false;
  }
}

bool tir_scalar_arith(const TirInst *in) {
  if (in->ty.rank) return false;
  switch (in->op) {
  case TIR_CONST: case TIR_PARAM: case TIR_DIM: case TIR_CTX: case TIR_UNARY: case TIR_BINARY: case TIR_MATH:
  case TIR_CONVERT: case TIR_SELECT:
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i] && in->args[i]->ty.rank) return false;
    return true;
  default: return false;
  }
}

int64_t tir_last_dim(const TirInst *v) { return v->ty.rank > 0 ? v->ty.dims[v->ty.rank - 1] : 0; }

int tir_last_span(const TirInst *in) {
  for (int k = in->nsubs - 1; k >= 0; k--)
    if (!in->subs[k].point) return k;
  return -1;
}

int tir_uf_find(int *parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

bool tir_has_dot(const TirBlock *b) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *in = b->insts[i];
    if (in->op == TIR_DOT || tir_has_dot(&in->cond) || tir_has_dot(&in->body) || tir_has_dot(&in->body2)) return true;
  }
  return false;
}

bool tir_same_type(const TirType *a, const TirType *b) {
  if (a->elem != b->elem || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

int64_t tir_float_to_int(double v, Scalar e) {
  if (isnan(v)) return 0;
  double lo = e == S_I8 ? -128 : e == S_U8 ? 0 : e == S_I32 ? INT32_MIN : -9.2233720368547758e18;
  double hi = e == S_I8 ? 127 : e == S_U8 ? 255 : e == S_I32 ? INT32_MAX : 9.2233720368547748e18;
  v = trunc(v);
  return (int64_t)(v < lo ? lo : v > hi ? hi : v);
}

int64_t tir_elems(const TirType *t) {
  int64_t n;
  return ck_prod(t->dims, t->rank, &n) ? n : INT64_MAX; /* never past MAX_TILE_ELEMS after tir_verify */
}

TirInst *tir_new(Arena *a, TirFunc *f, TirOp op, TirType ty) {
  TirInst *i = arena_alloc(a, sizeof *i);
  i->op = op;
  i->ty = ty;
  i->id = f->ninsts++;
  return i;
}

void tir_append(Arena *a, TirBlock *b, TirInst *inst) {
  if (b->len == b->cap) {
    int cap = b->cap ? b->cap * 2 : 8;
    TirInst **items = arena_alloc(a, sizeof(TirInst *) * (size_t)cap);
    if (b->len) memcpy(items, b->insts, sizeof(TirInst *) * (size_t)b->len);
    b->insts = items;
    b->cap = cap;
  }
  b->insts[b->len++] = inst;
}

/* Instructions are renumbered in program order, so %N in a dump reads
 * top to bottom and id == pos. */
static int number_block(TirFunc *f, TirBlock *b, int pos) {
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    in->id = in->pos = pos++;
    f->insts[in->id] = in;
    pos = number_block(f, &in->cond, pos);
    pos = number_block(f, &in->body, pos);
    pos = number_block(f, &in->body2, pos);
    in->end = pos - 1;
  }
  return pos;
}

/* Blocks of this many instructions or more (nested ones counted) keep a
 * table of their accesses: the planner and the backend ask whether the
 * kernel stores to a tensor once per load, which would cost the kernel's
 * size each time (a 20,000-statement kernel: seconds, quadratically). */
enum { COUNTED_BLOCK = 64 };

static int count_tables(Arena *a, TirBlock *b, int nparams) {
  int size = b->len;
  for (int i = 0; i < b->len; i++) {
    TirInst *in = b->insts[i];
    size += count_tables(a, &in->cond, nparams) + count_tables(a, &in->body, nparams) +
            count_tables(a, &in->body2, nparams);
  }
  b->counts = NULL;
  if (size >= COUNTED_BLOCK && nparams > 0) {
    int *t = arena_alloc(a, sizeof(int) * (size_t)(1 + 3 * nparams));
    for (int p = 0; p < nparams; p++)
      for (int k = 0; k < 3; k++) t[1 + 3 * p + k] = tir_count_accesses(b, k == 0 ? TIR_LOAD : k == 1 ? TIR_STORE : TIR_ARRIVE, p);
    t[0] = nparams;
    b->counts = t;
  }
  return size;
}

void tir_number(Arena *a, TirFunc *f) {
  f->insts = arena_alloc(a, sizeof(TirInst *) * (size_t)(f->ninsts + 1));
  /* a derived grid (no @grid) is numbered after the body, so that the
   * body's numbers, which name its registers and buffers, are those it had
   * before grids were derived */
  if (f->grid_derived) f->ninsts = number_block(f, &f->grid, number_block(f, &f->body, 0));
  else f->ninsts = number_block(f, &f->body, number_block(f, &f->grid, 0));
  count_tables(a, &f->grid, f->nparams);
  count_tables(a, &f->body, f->nparams);
}

static const char *op_names[] = {"const", "param", "dim",     "ctx",    "unary",  "binary", "math",
                                 "convert", "select", "splat", "broadcast", "iota", "reduce", "dot",
                                 "transpose", "load", "store", "extract", "var", "read", "write",
                                 "for", "while", "if", "arrive", "scan", "break", "continue", "return",
                                 "barrier", "reshape"};

const char *tir_op_name(int op) { return op >= 0 && op <= TIR_RESHAPE ? op_names[op] : "?"; }

static const char *type_str(char *buf, size_t n, const TirType *t) {
  if (t->rank == 0) {
    snprintf(buf, n, "%s", sema_scalar_name(t->elem));
    return buf;
  }
  int k = snprintf(buf, n, "tile<%s>[", sema_scalar_name(t->elem));
  for (int i = 0; i < t->rank; i++) k += snprintf(buf + k, n - (size_t)k, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  snprintf(buf + k, n - (size_t)k, "]");
  return buf;
}

static const char *binop_name(int op) {
  switch (op) {
  case TOP_MAX: return "max";
  case TOP_MIN: return "min";
  case TOP_CDIV: return "cdiv";
  }
  const char *s = ast_op_name(op);
  return s ? s : "?";
}

static const char *math_names[] = {"exp", "log", "sqrt", "tanh", "exp2", "round", "fma"};
static const char *ctx_names[] = {"block.x", "block.y", "block.z", "grid.x", "grid.y", "grid.z"};

static void print_subs(FILE *out, const TirInst *in) {
  fputc('[', out);
  for (int i = 0; i < in->nsubs; i++) {
    if (i) fputs(", ", out);
    if (in->subs[i].point) fprintf(out, "%%%d", in->subs[i].start->id);
    else fprintf(out, "%%%d :+ %lld", in->subs[i].start->id, (long long)in->subs[i].len);
  }
  fputc(']', out);
}

static void print_block(FILE *out, const TirFunc *f, const TirBlock *b, int depth);

static void print_inst(FILE *out, const TirFunc *f, const TirInst *in, int depth) {
  char tb[128];
  fprintf(out, "%*s", depth * 2, "");
  bool value = in->op != TIR_STORE && in->op != TIR_WRITE && in->op != TIR_WHILE && in->op != TIR_IF;
  if (value) fprintf(out, "%%%d = ", in->id);
  fputs(tir_op_name(in->op), out);
  switch (in->op) {
  case TIR_CONST:
    if (in->ty.elem <= S_F64) fprintf(out, " %.17g", in->fval);
    else fprintf(out, " %lld", (long long)in->ival);
    break;
  case TIR_PARAM: fprintf(out, " %s", in->name); break;
  case TIR_DIM: fprintf(out, " %s (%s.%d)", in->name, f->params[in->aux].name, in->aux2); break;
  case TIR_CTX: fprintf(out, " %s", ctx_names[in->aux]); break;
  case TIR_UNARY: fprintf(out, " %c", in->aux); break;
  case TIR_BINARY: fprintf(out, " %s", binop_name(in->aux)); break;
  case TIR_MATH: fprintf(out, " %s", math_names[in->aux]); break;
  case TIR_IOTA: fprintf(out, " axis %d", in->aux); break;
  case TIR_REDUCE: fprintf(out, " %s", in->aux == TRED_MAX ? "max" : in->aux == TRED_MIN ? "min" : "sum"); break;
  case TIR_DOT: fprintf(out, "%s", in->aux ? " trans_b" : ""); break;
  case TIR_LOAD:
  case TIR_STORE:
  case TIR_ARRIVE:
    fprintf(out, "%s %s",
            in->op == TIR_STORE && in->aux2 == TSTORE_ADD ? " add"
            : in->op != TIR_ARRIVE                          ? ""
            : in->aux2 == TARRIVE_ADD                       ? " add"
            : in->aux2 == TARRIVE_CAS                       ? " cas"
            : in->aux2 == TARRIVE_GRID                      ? " grid"
                                                            : "",
            f->params[in->aux].name);
    print_subs(out, in);
    break;
  case TIR_VAR: fprintf(out, " %s", in->name); break;
  case TIR_FOR: break;
  default: break;
  }
  for (int i = 0; i < in->nargs; i++)
    fprintf(out, "%s %%%d", i || in->op == TIR_STORE || in->op == TIR_ARRIVE ? "," : "", in->args[i]->id);
  if ((in->op == TIR_EXTRACT || in->op == TIR_WRITE) && in->nsubs) print_subs(out, in);
  if (value) fprintf(out, " : %s", type_str(tb, sizeof tb, &in->ty));
  if (in->op == TIR_WHILE) {
    fputs(" cond {\n", out);
    print_block(out, f, &in->cond, depth + 1);
    fprintf(out, "%*s} -> %%%d do {\n", depth * 2, "", in->cond_value->id);
    print_block(out, f, &in->body, depth + 1);
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  }
  if (in->op == TIR_FOR || in->op == TIR_IF) {
    fputs(" {\n", out);
    print_block(out, f, &in->body, depth + 1);
    if (in->op == TIR_IF && in->body2.len) {
      fprintf(out, "%*s} else {\n", depth * 2, "");
      print_block(out, f, &in->body2, depth + 1);
    }
    fprintf(out, "%*s}\n", depth * 2, "");
    return;
  }
  fputc('\n', out);
}

static void print_block(FILE *out, const TirFunc *f, const TirBlock *b, int depth) {
  for (int i = 0; i < b->len; i++) print_inst(out, f, b->insts[i], depth);
}

const TirInst *tir_dim_loop(const TirFunc *f, const TirInst *in, int64_t *step) {
  if (!in || in->op != TIR_FOR) return NULL;
  const TirInst *lo = in->args[0], *hi = in->args[1], *st = in->args[2];
  if (lo->op != TIR_CONST || lo->ival != 0 || st->op != TIR_CONST || st->ival <= 0 || hi->op != TIR_DIM) return NULL;
  if (hi->aux < 0 || hi->aux >= f->nparams || hi->aux2 < 0 || hi->aux2 >= f->params[hi->aux].rank) return NULL;
  *step = st->ival;
  return hi;
}

const char *tir_dim_loop_name(const TirFunc *f, const TirInst *in, int64_t *step) {
  const TirInst *hi = tir_dim_loop(f, in, step);
  return hi ? f->params[hi->aux].dimname[hi->aux2] : NULL;
}

const char *tir_entry_name(Arena *a, const TirFunc *f) {
  return arena_printf(a, "%s__v%d%s", f->name, f->info->index,
                      f->once_blocks > 1 ? "_twice" : f->once_dim ? "_once" : f->staged ? "_staged" : "");
}

const char *tir_func_str(Arena *a, const TirFunc *f) {
  const char *v = tir_variant_str(a, f->info);
  if (f->staged)
    return arena_printf(a, "%s%s%s rows staged", v, *v ? "; " : "", f->params[f->stage_param].name);
  if (!f->once_dim) return v;
  if (f->once_blocks > 1)
    return arena_printf(a, "%s%s%lld < %s <= %lld, one pass over %d blocks", v, *v ? "; " : "", (long long)f->once_min,
                        f->once_dim, (long long)f->once_max, f->once_blocks);
  return arena_printf(a, "%s%s%s <= %lld, one pass", v, *v ? "; " : "", f->once_dim, (long long)f->once_max);
}

const char *tir_variant_str(Arena *a, const KernelInfo *info) {
  char buf[1024];
  int n = 0;
  buf[0] = 0;
  /* constants were collected innermost first; print them in declaration order */
  for (int i = info->nconsts - 1; i >= 0 && n < (int)sizeof buf - 80; i--) {
    if (info->const_is_float[i])
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s=%g", n ? ", " : "", info->const_names[i],
                    info->const_fvalues[i]);
    else
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s=%lld", n ? ", " : "", info->const_names[i],
                    (long long)info->const_values[i]);
  }
  return arena_strdup(a, buf);
}

void tir_print(FILE *out, const TirFunc *f) {
  char tb[128];
  fprintf(out, "kernel %s", f->name);
  Arena *a = arena_new();
  const char *v = tir_func_str(a, f);
  if (*v) fprintf(out, " [%s]", v);
  arena_free(a);
  fprintf(out, " (variant %d of %d)\n", f->info->index + 1, f->info->count);
  for (int i = 0; i < f->nparams; i++) {
    const TirParam *p = &f->params[i];
    if (!p->tensor) {
      fprintf(out, "  param %s : %s\n", p->name, type_str(tb, sizeof tb, &(TirType){.elem = p->elem}));
      continue;
    }
    fprintf(out, "  param %s : tensor<%s>[", p->name, sema_scalar_name(p->elem));
    for (int d = 0; d < p->rank; d++) {
      if (d) fputs(", ", out);
      if (p->dimname[d] && p->dims[d] >= 0) fprintf(out, "%s=%lld", p->dimname[d], (long long)p->dims[d]);
      else if (p->dimname[d]) fputs(p->dimname[d], out);
      else fprintf(out, "%lld", (long long)p->dims[d]);
    }
    fputs("]\n", out);
  }
  if (f->ngrid) {
    fputs("  grid {\n", out);
    print_block(out, f, &f->grid, 2);
    fputs("  } ->", out);
    for (int i = 0; i < f->ngrid; i++) fprintf(out, " %%%d", f->grid_value[i]->id);
    fputc('\n', out);
  }
  print_block(out, f, &f->body, 1);
}

/* ------------------------------------------------------------- verifier */

typedef struct Verify {
  Diags *d;
  const TirFunc *f;
  const char *after;
  bool ok;
  unsigned char *defined; /* by id: defined and still in scope */
} Verify;

static void fail(Verify *v, const TirInst *in, const char *what) {
  if (v->ok)
    diag_error(v->d, in->span, "internal: tile IR invalid after %s: %%%d (%s): %s", v->after, in->id,
               tir_op_name(in->op), what);
  v->ok = false;
}

static bool is_int_scalar(const TirInst *x) { return x->ty.rank == 0 && x->ty.elem >= S_I8 && x->ty.elem <= S_I64; }

static void verify_block(Verify *v, const TirBlock *b);

static void verify_inst(Verify *v, const TirInst *in) {
  for (int i = 0; i < in->nargs; i++) {
    if (!in->args[i]) return fail(v, in, "missing operand");
    if (!v->defined[in->args[i]->id]) return fail(v, in, "operand used before it is defined or out of scope");
  }
  for (int i = 0; i < in->nsubs; i++) {
    if (!in->subs[i].start || !v->defined[in->subs[i].start->id])
      return fail(v, in, "subscript start not defined");
    if (!is_int_scalar(in->subs[i].start)) return fail(v, in, "subscript start is not an integer scalar");
    if (in->subs[i].len <= 0) return fail(v, in, "subscript length is not positive");
  }
  if (in->ty.rank < 0 || in->ty.rank > MAX_TILE_RANK) return fail(v, in, "bad rank");
  for (int i = 0; i < in->ty.rank; i++)
    if (in->ty.dims[i] <= 0) return fail(v, in, "tile dim is not positive");
  /* what sema bounds, and the planner's and the backend's sizes rely on */
  if (tir_elems(&in->ty) > MAX_TILE_ELEMS) return fail(v, in, "tile holds more than MAX_TILE_ELEMS elements");
  const TirInst *a = in->nargs > 0 ? in->args[0] : NULL, *b = in->nargs > 1 ? in->args[1] : NULL;
  switch (in->op) {
  case TIR_BINARY:
    if (in->nargs != 2 || a->ty.rank != b->ty.rank || a->ty.elem != b->ty.elem)
      return fail(v, in, "operands differ in type");
    for (int i = 0; i < a->ty.rank; i++)
      if (a->ty.dims[i] != b->ty.dims[i] || a->ty.dims[i] != in->ty.dims[i]) return fail(v, in, "operands differ in shape");
    break;
  case TIR_SCAN:
    if (in->nargs != 1 || !tir_same_type(&a->ty, &in->ty) || in->ty.rank < 1 || in->ty.rank > 2)
      return fail(v, in, "a scan's operand is not a rank-1 or rank-2 tile of its type");
    break;
  case TIR_RESHAPE: {
    int64_t na = 1, nr = 1;
    for (int i = 0; in->nargs == 1 && i < a->ty.rank; i++) na *= a->ty.dims[i];
    for (int i = 0; i < in->ty.rank; i++) nr *= in->ty.dims[i];
    if (in->nargs != 1 || !a->ty.rank || !in->ty.rank || a->ty.elem != in->ty.elem || na != nr)
      return fail(v, in, "a reshape's operand is not a tile of its elements");
    break;
  }
  case TIR_MATH:
    if (in->aux == TMATH_FMA) { /* three operands of the result's type */
      if (in->nargs != 3) return fail(v, in, "fma without three operands");
      for (int k = 0; k < 3; k++)
        if (!tir_same_type(&in->args[k]->ty, &in->ty)) return fail(v, in, "an fma operand's type differs from the result");
      break;
    }
    /* fall through */
  case TIR_UNARY:
  case TIR_CONVERT:
    if (in->nargs != 1 || a->ty.rank != in->ty.rank) return fail(v, in, "operand shape differs from the result");
    if (in->op != TIR_CONVERT && a->ty.elem != in->ty.elem) return fail(v, in, "operand type differs from the result");
    break;
  case TIR_SELECT:
    if (in->nargs != 3 || a->ty.elem != S_BOOL) return fail(v, in, "condition is not bool");
    for (int k = 0; k < 3; k++)
      if (in->args[k]->ty.rank != in->ty.rank) return fail(v, in, "operands differ in shape");
    break;
  case TIR_SPLAT:
    if (in->nargs != 1 || a->ty.rank != 0 || in->ty.rank == 0) return fail(v, in, "splat of a non-scalar");
    break;
  case TIR_DOT: {
    if (in->nargs != 2 || b->ty.rank != 2 || a->ty.rank < 2) return fail(v, in, "dot operand ranks");
    int64_t k = a->ty.dims[a->ty.rank - 1], kb = in->aux ? b->ty.dims[1] : b->ty.dims[0];
    if (k != kb) return fail(v, in, "dot contraction dims differ");
    break;
  }
  case TIR_LOAD:
  case TIR_STORE:
    if (in->aux < 0 || in->aux >= v->f->nparams || !v->f->params[in->aux].tensor) return fail(v, in, "not a tensor");
    if (in->nsubs != v->f->params[in->aux].rank) return fail(v, in, "subscript count differs from the tensor rank");
    if (in->op == TIR_STORE && (in->nargs != 1 || a->ty.elem != v->f->params[in->aux].elem))
      return fail(v, in, "stored value's type differs from the tensor's");
    break;
  case TIR_ARRIVE: {
    if (in->aux < 0 || in->aux >= v->f->nparams || !v->f->params[in->aux].tensor)
      return fail(v, in, "arrive's element is not of a tensor");
    Scalar te = v->f->params[in->aux].elem;
    bool counts = in->aux2 == TARRIVE_COUNT || in->aux2 == TARRIVE_GRID;
    if (counts && te != S_I32) return fail(v, in, "arrive's counter is not an i32 tensor");
    if (in->nsubs != v->f->params[in->aux].rank) return fail(v, in, "subscript count differs from the tensor rank");
    for (int i = 0; i < in->nsubs; i++)
      if (!in->subs[i].point) return fail(v, in, "arrive's counter is not one element");
    int nargs = in->aux2 == TARRIVE_COUNT || in->aux2 == TARRIVE_ADD ? 1 : in->aux2 == TARRIVE_CAS ? 2 : 0;
    if (in->nargs != nargs || in->ty.rank) return fail(v, in, "arrive's operands are not of its kind");
    for (int i = 0; i < in->nargs; i++)
      if (in->args[i]->ty.rank || in->args[i]->ty.elem != (in->aux2 == TARRIVE_COUNT ? S_I32 : te))
        return fail(v, in, "an atomic's operand differs from its element's type");
    if (in->ty.elem != (counts ? S_BOOL : te)) return fail(v, in, "an atomic's value is not of its kind");
    break;
  }
  case TIR_READ:
    if (in->nargs != 1 || a->op != TIR_VAR || !tir_same_type(&a->ty, &in->ty)) return fail(v, in, "read of a non-slot");
    break;
  case TIR_WRITE:
    if (in->nargs != 2 || a->op != TIR_VAR) return fail(v, in, "write to a non-slot");
    if (!in->nsubs && !tir_same_type(&a->ty, &b->ty)) return fail(v, in, "written value's type differs from the slot");
    break;
  case TIR_FOR:
    if (in->nargs != 3 || !is_int_scalar(a) || !is_int_scalar(b) || !is_int_scalar(in->args[2]))
      return fail(v, in, "loop bounds are not integer scalars");
    break;
  case TIR_IF:
    if (in->nargs != 1 || a->ty.rank != 0 || a->ty.elem != S_BOOL) return fail(v, in, "condition is not a bool scalar");
    break;
  default: break;
  }
  v->defined[in->id] = 1;
  if (in->op == TIR_WHILE) {
    /* the condition is a value of its own region: check it before the
     * region's values go out of scope */
    for (int i = 0; i < in->cond.len && v->ok; i++) verify_inst(v, in->cond.insts[i]);
    if (!in->cond_value || !v->defined[in->cond_value->id] || in->cond_value->ty.rank != 0 ||
        in->cond_value->ty.elem != S_BOOL)
      return fail(v, in, "while condition is not a bool scalar of its region");
    for (int i = 0; i < in->cond.len; i++) v->defined[in->cond.insts[i]->id] = 0;
  }
  verify_block(v, &in->body);
  verify_block(v, &in->body2);
}

static void verify_block(Verify *v, const TirBlock *b) {
  for (int i = 0; i < b->len && v->ok; i++) verify_inst(v, b->insts[i]);
  /* values defined in a region go out of scope at its end */
  for (int i = 0; i < b->len; i++) v->defined[b->insts[i]->id] = 0;
}

bool tir_verify(Diags *d, const TirFunc *f, const char *after) {
  Verify v = {.d = d, .f = f, .after = after, .ok = true};
  unsigned char small[4096];
  v.defined = f->ninsts <= (int)sizeof small ? small : NULL;
  Arena *a = NULL;
  if (!v.defined) {
    a = arena_new();
    v.defined = arena_alloc(a, (size_t)f->ninsts);
  }
  memset(v.defined, 0, (size_t)f->ninsts);
  for (int i = 0; i < f->grid.len && v.ok; i++) verify_inst(&v, f->grid.insts[i]);
  for (int i = 0; i < f->ngrid && v.ok; i++)
    if (!f->grid_value[i] || f->grid_value[i]->ty.rank || f->grid_value[i]->ty.elem < S_I8 ||
        f->grid_value[i]->ty.elem > S_I64)
      fail(&v, f->grid.len ? f->grid.insts[0] : f->body.insts[0], "grid extent is not an integer scalar");
  /* the top level's values stay visible to the end of the kernel */
  for (int i = 0; i < f->body.len && v.ok; i++) verify_inst(&v, f->body.insts[i]);
  arena_free(a);
  return v.ok;
}
