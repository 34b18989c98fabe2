/* sema.c: semantic analysis of a kernel's body.
 *
 * Resolves names, computes the type and static shape of every expression,
 * applies implicit conversions, and checks slice bounds where they are
 * known at compile time. Shapes depend on constants, and constants on the
 * @autotune point, so sema_kernel.c (attributes, parameters, variants)
 * checks the body once per point, with -D constants pinned. */
#include "sema.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int eval_const_node(Sema *s, Node *n, int64_t *out);
static Type *check_expr_kind(Sema *s, Node *n);

static const char *scalar_names[] = {"f16", "bf16", "f32", "f64", "i8", "u8", "i32", "i64", "bool"};
static const int scalar_bytes[] = {2, 2, 4, 8, 1, 1, 4, 8, 1};

const char *sema_scalar_name(Scalar s) { return s < S_NONE ? scalar_names[s] : "?"; }
int sema_scalar_bytes(Scalar s) { return s < S_NONE ? scalar_bytes[s] : 0; }

bool sema_scalar_from_name(const char *name, Scalar *out) {
  for (int i = 0; i < S_NONE; i++)
    if (strcmp(name, scalar_names[i]) == 0) {
      *out = (Scalar)i;
      return true;
    }
  return false;
}

static bool is_float(Scalar s) { return s <= S_F64; }
bool sema_is_int(Scalar s) { return s >= S_I8 && s <= S_I64; }
static bool is_numeric(Scalar s) { return s < S_BOOL; }

static int float_rank(Scalar s) { return s == S_F64 ? 3 : s == S_F32 ? 2 : 1; }
static int int_rank(Scalar s) { return s == S_I64 ? 3 : s == S_I32 ? 2 : s == S_I8 || s == S_U8 ? 1 : 0; }

const char *sema_sym_kind_name[] = {"tensor parameter", "scalar parameter", "tensor dimension",
                                      "constant", "let binding", "variable", "loop variable"};

static Type ty_error_v = {.kind = TY_ERROR};
static Type *const ty_error = &ty_error_v;

Type *sema_scalar_ty(Sema *s, Scalar e) {
  Type *t = arena_alloc(s->arena, sizeof *t);
  t->kind = TY_SCALAR;
  t->elem = e;
  return t;
}

static Type *copy_ty(Sema *s, const Type *src) {
  Type *t = arena_alloc(s->arena, sizeof *t);
  *t = *src;
  return t;
}

static Type *tile_ty(Sema *s, Scalar e, int rank, const int64_t *dims) {
  Type *t = arena_alloc(s->arena, sizeof *t);
  t->kind = TY_TILE;
  t->elem = e;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
  return t;
}

/* "[B, S, 12]": any length (a dim name may be long) */
static const char *shape_str(Sema *s, const Type *t) {
  const char *r = "[";
  for (int i = 0; i < t->rank; i++) {
    if (t->kind == TY_TENSOR && t->dims[i] < 0) r = arena_printf(s->arena, "%s%s%s", r, i ? ", " : "", t->dimname[i]);
    else r = arena_printf(s->arena, "%s%s%lld", r, i ? ", " : "", (long long)t->dims[i]);
  }
  return arena_printf(s->arena, "%s]", r);
}

const char *sema_ty_str(Sema *s, const Type *t) {
  switch (t->kind) {
  case TY_ERROR: return "<error>";
  case TY_SCALAR: return sema_scalar_name(t->elem);
  case TY_TILE: return arena_printf(s->arena, "tile<%s>%s", sema_scalar_name(t->elem), shape_str(s, t));
  case TY_TENSOR: return arena_printf(s->arena, "tensor<%s>%s", sema_scalar_name(t->elem), shape_str(s, t));
  }
  return "?";
}

/* A tile's element count is at most MAX_TILE_ELEMS; the product is checked,
 * so extents whose product passes 64 bits are refused too. */
static bool tile_fits(Sema *s, Span at, const Type *t) {
  int64_t elems;
  if (ck_prod(t->dims, t->rank, &elems) && elems <= MAX_TILE_ELEMS) return true;
  if (ck_prod(t->dims, t->rank, &elems))
    diag_error(s->d, at, "this tile has %lld elements; a tile holds at most %d", (long long)elems, MAX_TILE_ELEMS);
  else
    diag_error(s->d, at, "this tile of shape %s has more elements than 64 bits count; a tile holds at most %d",
               shape_str(s, t), MAX_TILE_ELEMS);
  return false;
}

/* The names in scope are hashed: a kernel of 20,000 lets looks each name
 * up in constant time, not by walking every scope. A name is never
 * declared twice while visible (declare refuses it), so the table maps each
 * name to one symbol; a scope's symbols leave the table when it closes.
 * Every change of the visible names starts a new epoch, which is what the
 * constant evaluator's cache (sema_eval_const) is valid for. */
static uint64_t epochs; /* process-wide: nodes keep the epoch of their cached value */

void sema_new_epoch(Sema *s) { s->epoch = ++epochs; }

uint32_t sema_name_hash(const char *name) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) h = (h ^ *p) * 16777619u;
  return h;
}

static void table_put(Symbol **table, int cap, Symbol *y) {
  Symbol **slot = &table[sema_name_hash(y->name) & (uint32_t)(cap - 1)];
  y->hnext = *slot;
  *slot = y;
}

static void table_insert(Sema *s, Symbol *y) {
  if (s->tcount >= s->tcap / 2) {
    int cap = s->tcap ? s->tcap * 2 : 64;
    Symbol **t = arena_alloc(s->arena, sizeof *t * (size_t)cap);
    for (int i = 0; i < s->tcap; i++)
      for (Symbol *x = s->table[i], *next; x; x = next) {
        next = x->hnext;
        table_put(t, cap, x);
      }
    s->table = t;
    s->tcap = cap;
  }
  table_put(s->table, s->tcap, y);
  s->tcount++;
}

static void table_remove(Sema *s, Symbol *y) {
  Symbol **p = &s->table[sema_name_hash(y->name) & (uint32_t)(s->tcap - 1)];
  while (*p && *p != y) p = &(*p)->hnext;
  if (*p) {
    *p = y->hnext;
    s->tcount--;
  }
}

void sema_push_scope(Sema *s) {
  Scope *sc = arena_alloc(s->arena, sizeof *sc);
  sc->up = s->scope;
  s->scope = sc;
  sema_new_epoch(s);
}

void sema_pop_scope(Sema *s) {
  for (Symbol *y = s->scope->syms; y; y = y->next) table_remove(s, y);
  s->scope = s->scope->up;
  sema_new_epoch(s);
}

Symbol *sema_lookup(Sema *s, const char *name) {
  if (!s->tcap) return NULL;
  for (Symbol *y = s->table[sema_name_hash(name) & (uint32_t)(s->tcap - 1)]; y; y = y->hnext)
    if (strcmp(y->name, name) == 0) {
      if (y->define) y->define->used = true;
      return y;
    }
  return NULL;
}

/* Declares a name. A name may not hide another one of the same kernel:
 * shadowing a dim or a parameter is always a mistake in kernels this size. */
Symbol *sema_declare(Sema *s, SymKind kind, const char *name, Type *ty, Span span) {
  Symbol *old = sema_lookup(s, name);
  if (old) {
    diag_error(s->d, span, "redefinition of '%s'", name);
    if (old->span.first_line > 0)
      diag_note(s->d, old->span, "'%s' was defined here as a %s", name, sema_sym_kind_name[old->kind]);
    else
      diag_note_plain(s->d, "'%s' is a %s given with -D", name, sema_sym_kind_name[old->kind]);
    return NULL;
  }
  Symbol *y = arena_alloc(s->arena, sizeof *y);
  y->kind = kind;
  y->name = name;
  y->ty = ty;
  y->span = span;
  y->next = s->scope->syms;
  s->scope->syms = y;
  table_insert(s, y);
  sema_new_epoch(s);
  return y;
}

/* Evaluates an integer constant expression. Returns 1 with *out set, 0 when
 * the expression is not constant, -1 after reporting an error (division by
 * zero, overflow). Each node keeps its result for the epoch of the names in
 * scope, so checking a 20,000-term sum, which asks about every partial sum,
 * evaluates each node once. An error found quietly is reported by the first
 * evaluation that is not quiet. */
int sema_eval_const(Sema *s, Node *n, int64_t *out) {
  if (n->const_epoch == s->epoch && (n->const_res != -1 || s->quiet || n->const_reported)) {
    *out = n->const_val;
    return n->const_res;
  }
  int r = eval_const_node(s, n, out);
  n->const_epoch = s->epoch;
  n->const_res = (signed char)r;
  n->const_val = r == 1 ? *out : 0;
  n->const_reported = r == -1 && !s->quiet;
  return r;
}

static int eval_const_node(Sema *s, Node *n, int64_t *out) {
  int64_t a, b;
  int r;
  switch (n->kind) {
  case N_INT: *out = n->ival; return 1;
  case N_NAME: {
    Symbol *y = sema_lookup(s, n->name);
    if (!y || y->kind != SYM_CONST || y->const_float) return 0;
    *out = y->ival;
    return 1;
  }
  case N_UNARY:
    if (n->op != '-' && n->op != '~') return 0;
    if ((r = sema_eval_const(s, n->a, &a)) != 1) return r;
    if (n->op == '-' && a == INT64_MIN) goto overflow;
    *out = n->op == '-' ? -a : ~a;
    return 1;
  case N_BINARY:
    if ((r = sema_eval_const(s, n->a, &a)) != 1) return r;
    if ((r = sema_eval_const(s, n->b, &b)) != 1) return r;
    switch (n->op) {
    case '+': if (__builtin_add_overflow(a, b, out)) goto overflow; return 1;
    case '-': if (__builtin_sub_overflow(a, b, out)) goto overflow; return 1;
    case '*': if (__builtin_mul_overflow(a, b, out)) goto overflow; return 1;
    case '/':
    case '%':
      if (b == 0) {
        if (!s->quiet) diag_error(s->d, n->span, "division by zero in a constant expression");
        return -1;
      }
      if (a == INT64_MIN && b == -1) goto overflow;
      *out = n->op == '/' ? a / b : a % b;
      return 1;
    case '&': *out = a & b; return 1;
    case '|': *out = a | b; return 1;
    case '^': *out = a ^ b; return 1;
    default: {
      const char *op = ast_op_name(n->op);
      if (strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0) {
        if (b < 0 || b > 62) {
          if (!s->quiet) diag_error(s->d, n->span, "shift count %lld is out of range 0..62", (long long)b);
          return -1;
        }
        if (op[0] == '<') {
          if (a < 0 || a > (INT64_MAX >> b)) goto overflow;
          *out = a << b;
        } else {
          *out = a >> b;
        }
        return 1;
      }
      return 0;
    }
    }
  case N_CALL: {
    if (n->a->kind != N_NAME || n->list.len != 2 || sema_lookup(s, n->a->name)) return 0;
    const char *f = n->a->name;
    if (strcmp(f, "cdiv") && strcmp(f, "min") && strcmp(f, "max")) return 0;
    Node *x = n->list.items[0], *y = n->list.items[1];
    if (x->kind == N_NAMEDARG || y->kind == N_NAMEDARG) return 0;
    if ((r = sema_eval_const(s, x, &a)) != 1) return r;
    if ((r = sema_eval_const(s, y, &b)) != 1) return r;
    if (f[0] == 'c') {
      if (b <= 0) {
        if (!s->quiet) diag_error(s->d, n->span, "cdiv by %lld: the divisor must be positive", (long long)b);
        return -1;
      }
      if (a > INT64_MAX - b) goto overflow;
      *out = a >= 0 ? (a + b - 1) / b : a / b;
    } else {
      *out = (f[1] == 'i') == (a < b) ? a : b;
    }
    return 1;
  }
  default: return 0;
  }
overflow:
  if (!s->quiet) diag_error(s->d, n->span, "constant expression overflows 64 bits");
  return -1;
}

int sema_eval_const_quiet(Sema *s, Node *n, int64_t *out) {
  bool was = s->quiet;
  s->quiet = true;
  int r = sema_eval_const(s, n, out);
  s->quiet = was;
  return r;
}

/* A linear form c + sum(coef[i] * atom[i]) over names that are not
 * constant, used to prove that `start : end` has a static length. */
typedef struct Lin {
  int64_t c;
  int n;
  const void *atom[8];
  int64_t coef[8];
} Lin;

/* l += k * m; false when it does not fit (8 atoms, 64-bit coefficients) */
static bool lin_add(Lin *l, const Lin *m, int64_t k) {
  if (!ck_muladd(m->c, k, l->c, &l->c)) return false;
  for (int i = 0; i < m->n; i++) {
    int j = 0;
    while (j < l->n && l->atom[j] != m->atom[i]) j++;
    if (j == l->n) {
      if (l->n == 8) return false;
      l->atom[l->n] = m->atom[i];
      l->coef[l->n++] = 0;
    }
    if (!ck_muladd(m->coef[i], k, l->coef[j], &l->coef[j])) return false;
  }
  return true;
}

static const char ctx_atoms[2][3]; /* addresses stand for ctx.block.* and ctx.grid.* */

static bool linearize(Sema *s, Node *n, Lin *out) {
  memset(out, 0, sizeof *out);
  int64_t v;
  if (sema_eval_const_quiet(s, n, &v) == 1) {
    out->c = v;
    return true;
  }
  Lin a, b;
  switch (n->kind) {
  case N_NAME: {
    Symbol *y = sema_lookup(s, n->name);
    if (!y) return false;
    out->n = 1;
    out->atom[0] = y;
    out->coef[0] = 1;
    return true;
  }
  case N_MEMBER: {
    /* ctx.block.x and friends: one atom per (block|grid, axis) */
    if (n->a->kind != N_MEMBER || !n->name[0] || n->name[1] || n->name[0] < 'x' || n->name[0] > 'z')
      return false;
    out->n = 1;
    out->atom[0] = &ctx_atoms[n->a->name[0] == 'g'][n->name[0] - 'x'];
    out->coef[0] = 1;
    return true;
  }
  case N_CALL: {
    /* program_id(d) is ctx.block.<d> */
    int64_t axis;
    if (n->a->kind != N_NAME || strcmp(n->a->name, "program_id") || sema_lookup(s, "program_id") || n->list.len != 1 ||
        sema_eval_const_quiet(s, n->list.items[0], &axis) != 1 || axis < 0 || axis > 2)
      return false;
    out->n = 1;
    out->atom[0] = &ctx_atoms[0][axis];
    out->coef[0] = 1;
    return true;
  }
  case N_UNARY:
    if (n->op != '-' || !linearize(s, n->a, &a)) return false;
    return lin_add(out, &a, -1);
  case N_BINARY:
    if (n->op == '+' || n->op == '-') {
      if (!linearize(s, n->a, &a) || !linearize(s, n->b, &b)) return false;
      return lin_add(out, &a, 1) && lin_add(out, &b, n->op == '+' ? 1 : -1);
    }
    if (n->op == '*') {
      if (sema_eval_const_quiet(s, n->a, &v) == 1 && linearize(s, n->b, &b)) return lin_add(out, &b, v);
      if (sema_eval_const_quiet(s, n->b, &v) == 1 && linearize(s, n->a, &a)) return lin_add(out, &a, v);
    }
    return false;
  default: return false;
  }
}

/* The element type two operands meet at. Returns S_NONE when they cannot. */
Scalar sema_join_elem(const Type *a, const Type *b) {
  Scalar x = a->elem, y = b->elem;
  if (x == y) return x;
  if (x == S_BOOL || y == S_BOOL) return S_NONE;
  if (a->literal && !b->literal) return sema_is_int(x) || is_float(y) ? y : S_F32;
  if (b->literal && !a->literal) return sema_is_int(y) || is_float(x) ? x : S_F32;
  if (is_float(x) && is_float(y)) {
    if ((x == S_F16 && y == S_BF16) || (x == S_BF16 && y == S_F16)) return S_F32;
    return float_rank(x) >= float_rank(y) ? x : y;
  }
  if (is_float(x)) return x;
  if (is_float(y)) return y;
  /* two integer types: the wider one; bytes of different signedness meet at i32 */
  int rx = int_rank(x), ry = int_rank(y);
  if (rx == ry) return S_I32;
  return rx > ry ? x : y;
}

/* NumPy broadcasting: trailing dims align; each pair equal or one of them 1. */
static bool broadcast(const Type *a, const Type *b, int *rank, int64_t *dims, int *bad_dim) {
  int ra = a->kind == TY_TILE ? a->rank : 0, rb = b->kind == TY_TILE ? b->rank : 0;
  int r = ra > rb ? ra : rb;
  *rank = r;
  for (int i = 0; i < r; i++) {
    int ia = ra - r + i, ib = rb - r + i;
    int64_t x = ia >= 0 ? a->dims[ia] : 1, y = ib >= 0 ? b->dims[ib] : 1;
    if (x != y && x != 1 && y != 1) {
      *bad_dim = i;
      return false;
    }
    dims[i] = x == 1 ? y : x;
  }
  *rank = r;
  return true;
}

/* Whether a value of type src may be stored where dst is expected without
 * an explicit conversion. Widening is implicit; narrowing is not. */
static bool implicit_elem_ok(Scalar src, bool literal, Scalar dst) {
  if (src == dst) return true;
  if (src == S_BOOL || dst == S_BOOL) return false;
  if (literal) return sema_is_int(src) || is_float(dst);
  if (is_float(src)) return is_float(dst) && float_rank(dst) > float_rank(src);
  /* an integer converts implicitly only to a float that holds all its values */
  if (is_float(dst)) return int_rank(src) == 1 || (dst == S_F64 && int_rank(src) == 2);
  return int_rank(dst) > int_rank(src) || (int_rank(dst) == 2 && int_rank(src) == 1);
}

/* Complains when an operand is a whole tensor or not a value. */
static bool need_value(Sema *s, Node *n, const Type *t, const char *what) {
  if (t->kind == TY_ERROR) return false;
  if (t->kind == TY_TENSOR) {
    diag_error(s->d, n->span, "%s: tensor '%s' must be sliced to read it; write %s[...]", what,
               n->kind == N_NAME ? n->name : "?", n->kind == N_NAME ? n->name : "T");
    return false;
  }
  return true;
}

/* A literal or constant that adopts a type must fit it: var b: i8 = 1000 is
 * an error, not a silent wrap. */
static bool check_fits(Sema *s, Node *value, Scalar dst) {
  if (!value->ty || !value->ty->literal) return true;
  int64_t v;
  double f;
  Node *x = value->kind == N_UNARY && value->op == '-' ? value->a : value;
  if (sema_is_int(dst) && sema_eval_const_quiet(s, value, &v) == 1) {
    static const int64_t lo[] = {-128, 0, INT32_MIN, INT64_MIN}, hi[] = {127, 255, INT32_MAX, INT64_MAX};
    int k = dst == S_I8 ? 0 : dst == S_U8 ? 1 : dst == S_I32 ? 2 : 3;
    if (v < lo[k] || v > hi[k]) {
      diag_error(s->d, value->span, "the value %lld does not fit in %s (%lld to %lld)", (long long)v,
                 sema_scalar_name(dst), (long long)lo[k], (long long)hi[k]);
      return false;
    }
    return true;
  }
  if (!is_float(dst)) return true;
  /* a float literal, or a float constant from -D */
  Symbol *fy = x->kind == N_NAME ? sema_lookup(s, x->name) : NULL;
  if (x->kind == N_FLOAT) f = x->fval;
  else if (fy && fy->kind == SYM_CONST && fy->const_float) f = fy->fval;
  else return true;
  if (x != value) f = -f;
  double max = dst == S_F16    ? 65504.0
               : dst == S_BF16 ? 3.3895313892515355e38
               : dst == S_F32  ? 3.4028234663852886e38
                               : INFINITY;
  if (fabs(f) > max && !isinf(f)) {
    diag_error(s->d, value->span, "the value %g is out of range for %s (largest finite: %g)", f, sema_scalar_name(dst),
               max);
    return false;
  }
  return true;
}

/* narrow: a store or an assignment, where a float narrows implicitly as
 * Phobos's does (its examples store an f32 accumulator into an f16 tensor
 * and accumulate dot(a, b) into an f16 tile), rounding to nearest even as
 * the explicit conversion does; -Wnarrowing warns at each */
static bool check_assignable(Sema *s, Span at, const Type *dst, const Type *src, const char *what, bool narrow) {
  if (dst->kind == TY_ERROR || src->kind == TY_ERROR) return true;
  if (narrow && is_float(src->elem) && is_float(dst->elem) && !implicit_elem_ok(src->elem, src->literal, dst->elem)) {
    if (s->opts && s->opts->warn_narrowing && !s->later_point && !s->quiet) {
      diag_warning(s->d, at, "%s: %s narrowed to %s implicitly (rounded to nearest even)", what,
                   sema_scalar_name(src->elem), sema_scalar_name(dst->elem));
      diag_note(s->d, at, "write %s(...) to say so", sema_scalar_name(dst->elem));
    }
  } else if (!implicit_elem_ok(src->elem, src->literal, dst->elem)) {
    diag_error(s->d, at, "%s: cannot convert %s to %s implicitly", what, sema_scalar_name(src->elem),
               sema_scalar_name(dst->elem));
    if (src->elem != S_BOOL && dst->elem != S_BOOL)
      diag_note(s->d, at, "write %s(...) to convert explicitly", sema_scalar_name(dst->elem));
    return false;
  }
  if (dst->kind == TY_SCALAR && src->kind == TY_TILE) {
    diag_error(s->d, at, "%s: cannot store a %s in a scalar", what, sema_ty_str(s, src));
    return false;
  }
  if (dst->kind == TY_TILE && src->kind == TY_TILE) {
    int rank, bad;
    int64_t dims[MAX_TENSOR_RANK];
    if (src->rank > dst->rank || !broadcast(dst, src, &rank, dims, &bad) || rank != dst->rank ||
        memcmp(dims, dst->dims, sizeof(int64_t) * (size_t)rank) != 0) {
      diag_error(s->d, at, "%s: shape %s does not fit %s", what, shape_str(s, src), shape_str(s, dst));
      return false;
    }
  }
  return true;
}

static Type *check_binary(Sema *s, Node *n) {
  Type *a = sema_check_expr(s, n->a), *b = sema_check_expr(s, n->b);
  const char *op = ast_op_name(n->op);
  const char *what = arena_printf(s->arena, "operator '%s'", op);
  if (!need_value(s, n->a, a, what) | !need_value(s, n->b, b, what)) return ty_error;
  bool logical = strcmp(op, "&&") == 0 || strcmp(op, "||") == 0;
  bool compare = strchr("<>", op[0]) && strcmp(op, "<<") && strcmp(op, ">>");
  compare = compare || strcmp(op, "==") == 0 || strcmp(op, "!=") == 0;
  bool bitwise = strchr("&|^", op[0]) && !logical;
  bool shift = strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0;
  Scalar e = sema_join_elem(a, b);
  if (e == S_NONE) {
    diag_error(s->d, n->span, "operator '%s' cannot combine %s and %s", op, sema_scalar_name(a->elem),
               sema_scalar_name(b->elem));
    return ty_error;
  }
  if (logical && e != S_BOOL) {
    diag_error(s->d, n->span, "operator '%s' needs bool operands, got %s", op, sema_scalar_name(e));
    return ty_error;
  }
  if ((shift || n->op == '%') && !sema_is_int(e)) {
    diag_error(s->d, n->span, "operator '%s' needs integer operands, got %s", op, sema_scalar_name(e));
    return ty_error;
  }
  if (bitwise && !sema_is_int(e) && e != S_BOOL) {
    diag_error(s->d, n->span, "operator '%s' needs integer or bool operands, got %s", op,
               sema_scalar_name(e));
    return ty_error;
  }
  if (!logical && !compare && !bitwise && !shift && e == S_BOOL) {
    diag_error(s->d, n->span, "operator '%s' needs numeric operands, got bool", op);
    return ty_error;
  }
  /* a literal meeting a typed operand takes its type: q + 1000 with an i8 q */
  if (a->literal != b->literal && !logical && !shift) {
    Node *lit = a->literal ? n->a : n->b;
    if (!check_fits(s, lit, e)) return ty_error;
  }
  int rank, bad;
  int64_t dims[MAX_TENSOR_RANK];
  if (!broadcast(a, b, &rank, dims, &bad)) {
    diag_error(s->d, n->span, "shapes %s and %s do not broadcast (dim %d: %lld vs %lld)", shape_str(s, a),
               shape_str(s, b), bad, (long long)a->dims[a->rank - rank + bad],
               (long long)b->dims[b->rank - rank + bad]);
    return ty_error;
  }
  Type *t = rank ? tile_ty(s, compare ? S_BOOL : e, rank, dims) : sema_scalar_ty(s, compare ? S_BOOL : e);
  t->literal = !compare && a->literal && b->literal;
  int64_t v;
  if (t->literal && t->elem == S_I32 && sema_eval_const_quiet(s, n, &v) == 1 && (v < INT32_MIN || v > INT32_MAX))
    t->elem = S_I64; /* 1 << 40 */
  return t;
}

static Type *check_unary(Sema *s, Node *n) {
  Type *a = sema_check_expr(s, n->a);
  const char *what = arena_printf(s->arena, "operator '%c'", n->op);
  if (!need_value(s, n->a, a, what)) return ty_error;
  if (n->op == '!' && a->elem != S_BOOL) {
    diag_error(s->d, n->span, "operator '!' needs a bool operand, got %s", sema_scalar_name(a->elem));
    return ty_error;
  }
  if (n->op == '~' && !sema_is_int(a->elem)) {
    diag_error(s->d, n->span, "operator '~' needs an integer operand, got %s", sema_scalar_name(a->elem));
    return ty_error;
  }
  if (n->op == '-' && !is_numeric(a->elem)) {
    diag_error(s->d, n->span, "operator '-' needs a numeric operand, got %s", sema_scalar_name(a->elem));
    return ty_error;
  }
  if (n->op == '-' && a->elem == S_U8) {
    diag_error(s->d, n->span, "operator '-' on an unsigned u8 value; convert it first, e.g. i32(x)");
    return ty_error;
  }
  Type *t = copy_ty(s, a);
  t->view = false;
  return t;
}

/* ctx.NAME that is neither block nor grid. Phobos v0.2's thread, warp and
 * lane name one thread of the CTA; a phobos kernel is a tile program whose
 * spread over the threads the planner chooses (spec 14.4), so they say so
 * rather than only listing the members. */
static void ctx_no_member(Sema *s, Span at, const char *name) {
  if (!strcmp(name, "thread") || !strcmp(name, "warp") || !strcmp(name, "lane"))
    diag_error(s->d, at,
               "'ctx.%s' is not available: a kernel here is a tile program, whose elements the planner spreads "
               "over the threads (members: block, grid)",
               name);
  else diag_error(s->d, at, "'ctx' has no member '%s' (members: block, grid)", name);
}

static Type *check_member(Sema *s, Node *n) {
  /* The only members are ctx.block.{x,y,z} and ctx.grid.{x,y,z}. */
  Node *mid = n->a;
  if (mid->kind == N_MEMBER && mid->a->kind == N_NAME && strcmp(mid->a->name, "ctx") == 0 &&
      !sema_lookup(s, "ctx")) {
    if (strcmp(mid->name, "block") != 0 && strcmp(mid->name, "grid") != 0) {
      ctx_no_member(s, mid->span, mid->name);
      return ty_error;
    }
    if (strcmp(n->name, "x") && strcmp(n->name, "y") && strcmp(n->name, "z")) {
      diag_error(s->d, n->span, "'ctx.%s' has no axis '%s' (axes: x, y, z)", mid->name, n->name);
      return ty_error;
    }
    return sema_scalar_ty(s, S_I32);
  }
  if (n->a->kind == N_NAME && strcmp(n->a->name, "ctx") == 0 && !sema_lookup(s, "ctx")) {
    if (strcmp(n->name, "block") != 0 && strcmp(n->name, "grid") != 0) ctx_no_member(s, n->span, n->name);
    else diag_error(s->d, n->span, "'ctx.%s' needs an axis: write ctx.%s.x, .y or .z", n->name, n->name);
    return ty_error;
  }
  Type *t = sema_check_expr(s, n->a);
  if (t->kind != TY_ERROR)
    diag_error(s->d, n->span, "a value of type %s has no member '%s'", sema_ty_str(s, t), n->name);
  return ty_error;
}

/* Checks a subscript index expression: an integer scalar. */
static bool check_index_expr(Sema *s, Node *e) {
  Type *t = sema_check_expr(s, e);
  if (t->kind == TY_ERROR) return false;
  if (t->kind != TY_SCALAR || !sema_is_int(t->elem)) {
    diag_error(s->d, e->span, "a subscript must be an integer scalar, got %s", sema_ty_str(s, t));
    return false;
  }
  return true;
}

static Type *check_index(Sema *s, Node *n) {
  Type *base = sema_check_expr(s, n->a);
  if (base->kind == TY_ERROR) {
    for (int i = 0; i < n->list.len; i++) {
      Node *sub = n->list.items[i];
      if (sub->a) sema_check_expr(s, sub->a);
      if (sub->b) sema_check_expr(s, sub->b);
    }
    return ty_error;
  }
  const char *bname = n->a->kind == N_NAME ? n->a->name : "value";
  if (base->kind == TY_SCALAR) {
    diag_error(s->d, n->span, "cannot subscript '%s': it is a scalar of type %s", bname, sema_scalar_name(base->elem));
    return ty_error;
  }
  bool tensor = base->kind == TY_TENSOR;
  if (n->list.len != base->rank) {
    diag_error(s->d, n->span, "%s '%s' has rank %d but %d subscript%s given", tensor ? "tensor" : "tile",
               bname, base->rank, n->list.len, n->list.len == 1 ? " is" : "s are");
    return ty_error;
  }
  int64_t out[MAX_TENSOR_RANK];
  int rank = 0;
  bool ok = true;
  for (int i = 0; i < n->list.len; i++) {
    Node *sub = n->list.items[i];
    int64_t dim = base->dims[i]; /* -1: symbolic */
    const char *dname = tensor && base->dimname[i] ? base->dimname[i] : NULL;
    int64_t start = 0, len = -1, v;
    bool start_known = false;
    if (sub->op == SUB_FULL) {
      if (dim < 0) {
        diag_error(s->d, sub->span,
                   "':' over dim %d of '%s' takes its whole extent '%s', which is known only at launch",
                   i, bname, dname);
        diag_note(s->d, sub->span, "a tile needs a static extent: write 'start :+ n' with a constant n, "
                                   "or pin '%s' with @autotune or -D", dname);
        ok = false;
        continue;
      }
      out[rank++] = dim;
      continue;
    }
    if (!check_index_expr(s, sub->a)) ok = false;
    int r = sema_eval_const(s, sub->a, &v);
    if (r < 0) ok = false;
    if (r == 1) {
      start = v;
      start_known = true;
    }
    if (sub->op == SUB_POINT) {
      if (start_known && (start < 0 || (dim >= 0 && start >= dim))) {
        if (dim >= 0)
          diag_error(s->d, sub->span, "index %lld is out of range for dim %d of '%s' (size %lld)", (long long)start, i,
                     bname, (long long)dim);
        else
          diag_error(s->d, sub->span, "index %lld of dim %d of '%s' is negative", (long long)start, i, bname);
        ok = false;
      }
      continue;
    }
    if (!check_index_expr(s, sub->b)) {
      ok = false;
      continue;
    }
    if (sub->op == SUB_SPAN) {
      r = sema_eval_const(s, sub->b, &v);
      if (r < 0) {
        ok = false;
        continue;
      }
      if (r == 0) {
        diag_error(s->d, sub->b->span, "the length of a ':+' slice must be a compile-time constant");
        diag_note(s->d, sub->b->span, "constants are integers, @autotune names, -D names and dims they pin");
        ok = false;
        continue;
      }
      len = v;
    } else {
      Lin a, b;
      if (!linearize(s, sub->a, &a) || !linearize(s, sub->b, &b) || !lin_add(&b, &a, -1)) {
        b.n = 1, b.coef[0] = 1;
      }
      bool constant = true;
      for (int j = 0; j < b.n; j++)
        if (b.coef[j] != 0) constant = false;
      if (!constant) {
        diag_error(s->d, sub->span, "cannot tell the length of 'start : end' at compile time");
        diag_note(s->d, sub->span, "write 'start :+ n' with a constant length n");
        ok = false;
        continue;
      }
      len = b.c;
    }
    if (len <= 0) {
      diag_error(s->d, sub->span, "slice of dim %d of '%s' is empty (length %lld)", i, bname, (long long)len);
      ok = false;
      continue;
    }
    if (start_known && start < 0) {
      diag_error(s->d, sub->span, "slice of dim %d of '%s' starts at %lld, before the start", i, bname,
                 (long long)start);
      ok = false;
      continue;
    }
    if (dim >= 0 && start_known && start >= dim) {
      diag_error(s->d, sub->span, "slice of dim %d of '%s' starts at %lld, past its end (size %lld)", i,
                 bname, (long long)start, (long long)dim);
      ok = false;
      continue;
    }
    /* A tensor slice may run past the tensor's end: the slack is masked.
     * A tile has no slack to mask, so its slices must fit. */
    int64_t end;
    if (!tensor && start_known && (!ck_add(start, len, &end) || end > dim)) {
      diag_error(s->d, sub->span, "slice %lld :+ %lld runs past dim %d of tile '%s' (size %lld)",
                 (long long)start, (long long)len, i, bname, (long long)dim);
      ok = false;
      continue;
    }
    if (!tensor && len > dim) {
      diag_error(s->d, sub->span, "slice of length %lld is longer than dim %d of tile '%s' (size %lld)",
                 (long long)len, i, bname, (long long)dim);
      ok = false;
      continue;
    }
    out[rank++] = len;
  }
  if (!ok) return ty_error;
  if (rank == 0) return sema_scalar_ty(s, base->elem);
  if (rank > MAX_TILE_RANK) {
    diag_error(s->d, n->span, "this slice has %d dims; a tile has at most %d (index some dims with a point)",
               rank, MAX_TILE_RANK);
    return ty_error;
  }
  Type *t = tile_ty(s, base->elem, rank, out);
  t->view = tensor || base->view;
  return t;
}

typedef struct Builtin {
  const char *name;
  int min_args, max_args;
  Type *(*check)(Sema *s, Node *call, Type **args);
} Builtin;

static Type *as_value(Sema *s, const Type *t) {
  Type *r = copy_ty(s, t);
  r->view = false;
  return r;
}

static bool need_tile(Sema *s, Node *call, int i, Type *t, int min_rank, int max_rank) {
  Node *arg = call->list.items[i];
  if (t->kind != TY_TILE || t->rank < min_rank || t->rank > max_rank) {
    if (min_rank == max_rank)
      diag_error(s->d, arg->span, "argument %d of %s must be a rank-%d tile, got %s", i + 1,
                 call->a->name, min_rank, sema_ty_str(s, t));
    else
      diag_error(s->d, arg->span, "argument %d of %s must be a tile of rank %d to %d, got %s", i + 1,
                 call->a->name, min_rank, max_rank, sema_ty_str(s, t));
    return false;
  }
  return true;
}

static Type *b_dot(Sema *s, Node *call, Type **args) {
  bool trans = strcmp(call->a->name, "dot_t") == 0;
  if (!need_tile(s, call, 0, args[0], 2, 3) || !need_tile(s, call, 1, args[1], 2, 2)) return ty_error;
  Type *a = args[0], *b = args[1];
  bool fa = is_float(a->elem), fb = is_float(b->elem);
  if (a->elem == S_BOOL || b->elem == S_BOOL || fa != fb ||
      (!fa && (int_rank(a->elem) != 1 || int_rank(b->elem) != 1))) {
    diag_error(s->d, call->span, "%s needs two floating-point operands or two 8-bit integer operands, got %s and %s",
               call->a->name, sema_scalar_name(a->elem), sema_scalar_name(b->elem));
    return ty_error;
  }
  int64_t k = a->dims[a->rank - 1];
  int64_t kb = trans ? b->dims[1] : b->dims[0];
  if (k != kb) {
    diag_error(s->d, call->span, "%s: contraction dims differ: %s is %s and %s is %s (%lld vs %lld)",
               call->a->name, "a", shape_str(s, a), "b", shape_str(s, b), (long long)k, (long long)kb);
    if (!trans && b->dims[1] == k)
      diag_note(s->d, call->span, "dot contracts b's first dim; dot_t contracts its last");
    return ty_error;
  }
  int64_t dims[MAX_TILE_RANK];
  for (int i = 0; i < a->rank - 1; i++) dims[i] = a->dims[i];
  dims[a->rank - 1] = trans ? b->dims[0] : b->dims[1];
  Scalar e = fa ? (a->elem == S_F64 || b->elem == S_F64 ? S_F64 : S_F32) : S_I32;
  return tile_ty(s, e, a->rank, dims);
}

static Type *b_unary_float(Sema *s, Node *call, Type **args) {
  if (args[0]->literal && sema_is_int(args[0]->elem)) return sema_scalar_ty(s, S_F32); /* exp(2) */
  if (!is_float(args[0]->elem)) {
    diag_error(s->d, call->span, "%s needs a floating-point operand, got %s", call->a->name,
               sema_scalar_name(args[0]->elem));
    if (sema_is_int(args[0]->elem))
      diag_note(s->d, call->span, "convert first, e.g. %s(f32(x))", call->a->name);
    return ty_error;
  }
  Type *t = as_value(s, args[0]);
  t->literal = false;
  return t;
}

/* abs(x): any numeric x, its own type */
static Type *b_abs(Sema *s, Node *call, Type **args) {
  if (!is_numeric(args[0]->elem) || args[0]->elem == S_U8) {
    diag_error(s->d, call->span, "abs needs a signed numeric operand, got %s", sema_scalar_name(args[0]->elem));
    return ty_error;
  }
  Type *t = as_value(s, args[0]);
  t->literal = false;
  return t;
}

/* rowmin(x): a float or signed integer tile, as rowmax (the least is
 * -rowmax(-x), which an unsigned tile would wrap) */
static Type *b_rowmin(Sema *s, Node *call, Type **args);

static Type *b_rowreduce(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 1, 3)) return ty_error;
  if (!is_numeric(args[0]->elem)) {
    diag_error(s->d, call->span, "%s needs a numeric tile, got %s", call->a->name, sema_ty_str(s, args[0]));
    return ty_error;
  }
  Type *t = as_value(s, args[0]);
  t->dims[t->rank - 1] = 1;
  /* a sum of bytes overflows a byte at once: it is an i32 */
  if (strcmp(call->a->name, "rowsum") == 0 && int_rank(t->elem) == 1) t->elem = S_I32;
  return t;
}

static Type *b_elementwise2(Sema *s, Node *call, Type **args) {
  Scalar e = sema_join_elem(args[0], args[1]);
  if (e == S_NONE || !is_numeric(e)) {
    diag_error(s->d, call->span, "%s needs numeric operands, got %s and %s", call->a->name,
               sema_scalar_name(args[0]->elem), sema_scalar_name(args[1]->elem));
    return ty_error;
  }
  int rank, bad;
  int64_t dims[MAX_TENSOR_RANK];
  if (!broadcast(args[0], args[1], &rank, dims, &bad)) {
    diag_error(s->d, call->span, "%s: shapes %s and %s do not broadcast", call->a->name,
               shape_str(s, args[0]), shape_str(s, args[1]));
    return ty_error;
  }
  Type *t = rank ? tile_ty(s, e, rank, dims) : sema_scalar_ty(s, e);
  t->literal = args[0]->literal && args[1]->literal;
  return t;
}

/* Whether the first n operands of call are floats or integer literals
 * (taken as floats: fma, pow); an error at the first that is not */
static bool float_operands(Sema *s, Node *call, Type **args, int n) {
  for (int i = 0; i < n; i++)
    if (!is_float(args[i]->elem) && !(args[i]->literal && sema_is_int(args[i]->elem))) {
      diag_error(s->d, ((Node *)call->list.items[i])->span, "%s needs floating-point operands, got %s", call->a->name,
                 sema_ty_str(s, args[i]));
      return false;
    }
  return true;
}

/* pow(x, y): floats (integer literals taken as floats), broadcast
 * together, their type joined as x * y's would be (f32 for two literals) */
static Type *b_pow(Sema *s, Node *call, Type **args) {
  if (!float_operands(s, call, args, 2)) return ty_error;
  Scalar e = sema_join_elem(args[0], args[1]);
  if (!is_float(e)) e = S_F32; /* pow(2, 3) */
  int rank, bad;
  int64_t dims[MAX_TENSOR_RANK];
  if (!broadcast(args[0], args[1], &rank, dims, &bad)) {
    diag_error(s->d, call->span, "pow: shapes %s and %s do not broadcast", shape_str(s, args[0]),
               shape_str(s, args[1]));
    return ty_error;
  }
  Type *t = rank ? tile_ty(s, e, rank, dims) : sema_scalar_ty(s, e);
  t->literal = false;
  return t;
}

/* fma(a, b, c): a * b + c with one rounding, floats (integer literals
 * taken as floats), the three broadcast together, their type joined as
 * a * b + c's would be (a literal takes the other operands' type) */
static Type *b_fma(Sema *s, Node *call, Type **args) {
  if (!float_operands(s, call, args, 3)) return ty_error;
  Type *ab = sema_scalar_ty(s, sema_join_elem(args[0], args[1]));
  ab->literal = args[0]->literal && args[1]->literal;
  Scalar e = sema_join_elem(ab, args[2]);
  if (!is_float(e)) e = S_F32; /* fma(1, 2, 3) */
  int r1, r2, bad;
  int64_t d1[MAX_TENSOR_RANK], d2[MAX_TENSOR_RANK];
  if (!broadcast(args[0], args[1], &r1, d1, &bad)) {
    diag_error(s->d, call->span, "fma: shapes %s and %s do not broadcast", shape_str(s, args[0]), shape_str(s, args[1]));
    return ty_error;
  }
  Type *shp = r1 ? tile_ty(s, e, r1, d1) : sema_scalar_ty(s, e);
  if (!broadcast(shp, args[2], &r2, d2, &bad)) {
    diag_error(s->d, call->span, "fma: shapes %s and %s do not broadcast", shape_str(s, shp), shape_str(s, args[2]));
    return ty_error;
  }
  Type *t = r2 ? tile_ty(s, e, r2, d2) : sema_scalar_ty(s, e);
  t->literal = false;
  return t;
}

static Type *b_scalar_minmax(Sema *s, Node *call, Type **args) {
  for (int i = 0; i < 2; i++)
    if (args[i]->kind != TY_SCALAR) {
      diag_error(s->d, ((Node *)call->list.items[i])->span,
                 "%s takes scalars; for tiles use t%s (elementwise)", call->a->name, call->a->name);
      return ty_error;
    }
  return b_elementwise2(s, call, args);
}

static Type *b_cdiv(Sema *s, Node *call, Type **args) {
  for (int i = 0; i < 2; i++)
    if (args[i]->kind != TY_SCALAR || !sema_is_int(args[i]->elem)) {
      diag_error(s->d, ((Node *)call->list.items[i])->span, "cdiv takes integer scalars, got %s",
                 sema_ty_str(s, args[i]));
      return ty_error;
    }
  int64_t v;
  if (sema_eval_const(s, call->list.items[1], &v) == 1 && v <= 0) {
    diag_error(s->d, ((Node *)call->list.items[1])->span, "cdiv by %lld: the divisor must be positive",
               (long long)v);
    return ty_error;
  }
  return b_elementwise2(s, call, args);
}

static Type *b_transpose(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 2, 2)) return ty_error;
  int64_t dims[2] = {args[0]->dims[1], args[0]->dims[0]};
  return tile_ty(s, args[0]->elem, 2, dims);
}

static Type *b_where(Sema *s, Node *call, Type **args) {
  if (args[0]->elem != S_BOOL) {
    diag_error(s->d, ((Node *)call->list.items[0])->span, "the condition of where must be bool, got %s",
               sema_ty_str(s, args[0]));
    return ty_error;
  }
  Scalar e = sema_join_elem(args[1], args[2]);
  if (e == S_NONE) {
    diag_error(s->d, call->span, "where: the two branches cannot meet: %s and %s", sema_scalar_name(args[1]->elem),
               sema_scalar_name(args[2]->elem));
    return ty_error;
  }
  int r1, r2, bad;
  int64_t d1[MAX_TENSOR_RANK], d2[MAX_TENSOR_RANK];
  if (!broadcast(args[1], args[2], &r1, d1, &bad)) {
    diag_error(s->d, call->span, "where: shapes %s and %s do not broadcast", shape_str(s, args[1]),
               shape_str(s, args[2]));
    return ty_error;
  }
  Type *vals = r1 ? tile_ty(s, e, r1, d1) : sema_scalar_ty(s, e);
  if (!broadcast(args[0], vals, &r2, d2, &bad)) {
    diag_error(s->d, call->span, "where: the condition's shape %s does not broadcast with %s",
               shape_str(s, args[0]), shape_str(s, vals));
    return ty_error;
  }
  Type *t = r2 ? tile_ty(s, e, r2, d2) : sema_scalar_ty(s, e);
  t->literal = args[1]->literal && args[2]->literal;
  return t;
}

static Type *b_program_id(Sema *s, Node *call, Type **args) {
  (void)args;
  int64_t v;
  Node *arg = call->list.items[0];
  int r = sema_eval_const(s, arg, &v);
  if (r == 0) diag_error(s->d, arg->span, "program_id needs a constant axis 0, 1 or 2");
  else if (r == 1 && (v < 0 || v > 2))
    diag_error(s->d, arg->span, "program_id axis %lld is out of range (0, 1 or 2)", (long long)v);
  return r == 1 && v >= 0 && v <= 2 ? sema_scalar_ty(s, S_I32) : ty_error;
}

/* The element types whose old value an atomic gives back: atom.add takes
 * .s32, .u64, .f32 and .f64, atom.cas .b32 and .b64 (spec 9.6). */
static bool atomic_value_elem(const char *what, Scalar e) {
  if (!strcmp(what, "atomic_cas")) return e == S_I32 || e == S_I64;
  return e == S_I32 || e == S_I64 || e == S_F32 || e == S_F64;
}

/* atomic_add(C[slice], v): adds v into the slice of a tensor parameter,
 * each element atomically, so that CTAs adding into the same elements all
 * count (§9.6). The slice is a place, as a store's target is; v is a value
 * of its shape (or one that broadcasts to it) that converts to the
 * tensor's element type as a store's does. It has an effect and no value,
 * so it is a statement of its own (check_stmt marks that call). */
static Type *b_atomic_add(Sema *s, Node *call, Type **args) {
  Node *tn = call->list.items[0], *vn = call->list.items[1];
  Node *base = tn->kind == N_INDEX && tn->a->kind == N_NAME ? tn->a : NULL;
  Symbol *y = base ? sema_lookup(s, base->name) : NULL;
  Type *tt = args[0], *vt = args[1];
  if (!y || y->kind != SYM_TENSOR) {
    diag_error(s->d, tn->span, "atomic_add adds into a slice of a tensor parameter, e.g. atomic_add(C[i :+ M, :], v)");
    return ty_error;
  }
  if (tt->kind == TY_ERROR || vt->kind == TY_ERROR) return ty_error;
  Scalar e = tt->elem;
  if (e != S_F32 && e != S_F64 && e != S_I32 && e != S_I64 && e != S_F16) {
    diag_error(s->d, tn->span, "atomic_add adds into f32, f64, f16, i32 or i64 elements; '%s' holds %s", base->name,
               sema_scalar_name(e));
    return ty_error;
  }
  if (!need_value(s, vn, vt, "atomic_add")) return ty_error;
  if (!check_assignable(s, vn->span, tt, vt, "atomic_add", true)) return ty_error;
  check_fits(s, vn, e);
  if (s->arrive_ok == call) { /* let old = atomic_add(C[i], v): one element's old value */
    if (tt->kind != TY_SCALAR) {
      diag_error(s->d, tn->span, "atomic_add gives back one element's old value: index every dim of '%s' with a "
                                 "point, got %s", base->name, sema_ty_str(s, tt));
      return ty_error;
    }
    if (vt->kind != TY_SCALAR) {
      diag_error(s->d, vn->span, "atomic_add of one element adds a scalar, got %s", sema_ty_str(s, vt));
      return ty_error;
    }
    if (!atomic_value_elem("atomic_add", e)) {
      diag_error(s->d, tn->span, "atomic_add gives back the old value of i32, i64, f32 or f64 elements; '%s' holds %s",
                 base->name, sema_scalar_name(e));
      return ty_error;
    }
    return tt;
  }
  if (s->atomic_ok != call) {
    diag_error(s->d, call->span, "atomic_add changes a tensor, so it is a statement of its own or the whole "
                                 "initializer of a let: let old = atomic_add(C[i], v)");
    return ty_error;
  }
  return tt;
}

/* Where an atomic that gives a value back may stand: a statement of its
 * own (the value dropped) or a let's whole initializer, so that it runs
 * once, where it is written, for the whole CTA. */
static bool atomic_placed(Sema *s, Node *call, const char *what) {
  if (s->atomic_ok == call || s->arrive_ok == call) return true;
  diag_error(s->d, call->span, "%s changes a tensor, so it is a statement of its own or the whole initializer of a let: "
                               "let old = %s(...)", what, what);
  return false;
}

/* The operands of an atomic after its element: atomic_add's v, atomic_cas's
 * cmp and v, each a scalar that converts to the element's type. */
static bool atomic_operands(Sema *s, Node *call, int first, Scalar e, const char *what) {
  bool ok = true;
  for (int i = first; i < call->list.len; i++) {
    Node *vn = call->list.items[i];
    Type *vt = sema_check_expr(s, vn);
    if (vt->kind == TY_ERROR || !need_value(s, vn, vt, what)) {
      ok = false;
    } else if (vt->kind != TY_SCALAR || vt->elem == S_BOOL) {
      diag_error(s->d, vn->span, "%s's operands are numeric scalars, got %s", what, sema_ty_str(s, vt));
      ok = false;
    } else if (!check_assignable(s, vn->span, sema_scalar_ty(s, e), vt, what, true) || !check_fits(s, vn, e)) {
      ok = false;
    }
  }
  return ok;
}

/* Phobos's spelling of one element of a tensor parameter: atomic_add(t, i,
 * v), atomic_cas(t, i, cmp, v) and grid_barrier(t) name the tensor itself,
 * which is of rank 1 or an [N, 1] column (spec 9.6). Gives its symbol, or
 * NULL after an error. */
static Symbol *element_tensor(Sema *s, Node *call, const char *what, const char *form) {
  Node *tn = call->list.items[0];
  Symbol *y = tn->kind == N_NAME ? sema_lookup(s, tn->name) : NULL;
  if (!y || y->kind != SYM_TENSOR) {
    if (tn->kind != N_NAME) sema_check_expr(s, tn);
    diag_error(s->d, tn->span, "the first argument of %s names a tensor parameter: %s", what, form);
    return NULL;
  }
  Type *t = y->ty;
  tn->sym = y, tn->ty = t;
  if (!(t->rank == 1 || (t->rank == 2 && t->dims[1] == 1))) {
    diag_error(s->d, tn->span, "%s names a tensor of rank 1 or an [N, 1] column; '%s' is %s", what, y->name,
               sema_ty_str(s, t));
    if (strcmp(what, "grid_barrier")) diag_note(s->d, tn->span, "index it instead: %s(%s[...], ...)", what, y->name);
    return NULL;
  }
  return y;
}

/* atomic_add(t, i, v) and atomic_cas(t, i, cmp, v): Phobos's form of one
 * element, t[i] (t[i, 0] of a column); the same operation as on t[i]. */
static Type *check_atomic_index_form(Sema *s, Node *call, const char *what) {
  const char *form = strcmp(what, "atomic_cas") ? "atomic_add(Cnt, i, v)" : "atomic_cas(Lock, i, cmp, v)";
  Symbol *y = element_tensor(s, call, what, form);
  bool ok = y != NULL;
  Node *in = call->list.items[1];
  Type *it = sema_check_expr(s, in);
  if (it->kind == TY_ERROR) ok = false;
  else if (it->kind != TY_SCALAR || !sema_is_int(it->elem)) {
    diag_error(s->d, in->span, "the index of %s must be an integer scalar, got %s", what, sema_ty_str(s, it));
    ok = false;
  }
  if (!ok) {
    for (int i = 2; i < call->list.len; i++) sema_check_expr(s, call->list.items[i]);
    return ty_error;
  }
  Scalar e = y->ty->elem;
  /* as a statement, atomic_add(t, i, v) is atomic_add(t[i], v): the types
   * red.global.add takes (f16 too); with its value, atom's */
  bool stmt_add = !strcmp(what, "atomic_add") && s->atomic_ok == call;
  if (stmt_add ? e != S_F32 && e != S_F64 && e != S_F16 && e != S_I32 && e != S_I64 : !atomic_value_elem(what, e)) {
    diag_error(s->d, ((Node *)call->list.items[0])->span, "%s works on %s elements; '%s' holds %s", what,
               stmt_add ? "f32, f64, f16, i32 or i64" : strcmp(what, "atomic_cas") ? "i32, i64, f32 or f64" : "i32 or i64",
               y->name, sema_scalar_name(e));
    return ty_error;
  }
  if (!atomic_operands(s, call, 2, e, what) || !atomic_placed(s, call, what)) return ty_error;
  return sema_scalar_ty(s, e);
}

/* atomic_cas(C[i, ...], cmp, v): where the element holds cmp, v replaces
 * it; either way the old value comes back (spec 9.6). */
static Type *b_atomic_cas(Sema *s, Node *call, Type **args) {
  Node *tn = call->list.items[0];
  Node *base = tn->kind == N_INDEX && tn->a->kind == N_NAME ? tn->a : NULL;
  Symbol *y = base ? sema_lookup(s, base->name) : NULL;
  if (!y || y->kind != SYM_TENSOR) {
    diag_error(s->d, tn->span, "atomic_cas swaps one element of a tensor parameter, e.g. atomic_cas(Lock[0], 0, 1)");
    return ty_error;
  }
  if (args[0]->kind != TY_SCALAR) {
    diag_error(s->d, tn->span, "atomic_cas works on one element: index every dim of '%s' with a point, got %s",
               base->name, sema_ty_str(s, args[0]));
    return ty_error;
  }
  Scalar e = args[0]->elem;
  if (!atomic_value_elem("atomic_cas", e)) {
    diag_error(s->d, tn->span, "atomic_cas works on i32 or i64 elements; '%s' holds %s", base->name,
               sema_scalar_name(e));
    return ty_error;
  }
  for (int i = 1; i < 3; i++) {
    Node *vn = call->list.items[i];
    if (args[i]->kind != TY_SCALAR || args[i]->elem == S_BOOL) {
      diag_error(s->d, vn->span, "atomic_cas's operands are numeric scalars, got %s", sema_ty_str(s, args[i]));
      return ty_error;
    }
    if (!check_assignable(s, vn->span, args[0], args[i], "atomic_cas", true) || !check_fits(s, vn, e))
      return ty_error;
  }
  if (!atomic_placed(s, call, "atomic_cas")) return ty_error;
  return sema_scalar_ty(s, e);
}

/* grid_barrier(bar): every CTA of the grid waits for every other (spec
 * 9.8). bar is an i32 tensor parameter of at least two elements, rank 1 or
 * an [N, 1] column: the arrival counter and the generation. A statement. */
static Type *check_grid_barrier(Sema *s, Node *call) {
  if (call->list.len != 1) {
    for (int i = 0; i < call->list.len; i++) sema_check_expr(s, call->list.items[i]);
    diag_error(s->d, call->span, "grid_barrier takes 1 argument, got %d", call->list.len);
    return ty_error;
  }
  Symbol *y = element_tensor(s, call, "grid_barrier", "grid_barrier(Bar), Bar: tensor<i32>[2]");
  if (!y) return ty_error;
  Node *tn = call->list.items[0];
  if (y->ty->elem != S_I32) {
    diag_error(s->d, tn->span, "grid_barrier counts in an i32 tensor; '%s' holds %s", y->name,
               sema_scalar_name(y->ty->elem));
    return ty_error;
  }
  if (y->ty->dims[0] >= 0 && y->ty->dims[0] < 2) {
    diag_error(s->d, tn->span, "grid_barrier needs two elements (the arrivals and the generation); '%s' has %lld",
               y->name, (long long)y->ty->dims[0]);
    return ty_error;
  }
  if (s->atomic_ok != call) {
    diag_error(s->d, call->span, "grid_barrier waits and gives nothing back, so it is a statement of its own");
    return ty_error;
  }
  return sema_scalar_ty(s, S_BOOL);
}

/* barrier(): every thread of the CTA waits for the others (§10.6). The
 * compiler places the barriers its own shared memory needs; this one is
 * the user's (Phobos's statement). A statement of its own. */
static Type *b_barrier(Sema *s, Node *call, Type **args) {
  (void)args;
  if (s->atomic_ok != call) {
    diag_error(s->d, call->span, "barrier() waits and gives nothing back, so it is a statement of its own");
    return ty_error;
  }
  return sema_scalar_ty(s, S_BOOL);
}

/* arrive(C[i, ...], n): counts this CTA's arrival in one element of an
 * i32 tensor parameter and is true in the CTA whose arrival is the n-th
 * (§9.5). Its counter is a place, not a value: the call's first argument
 * must index a tensor parameter down to one element. It has an effect, so
 * it must be a let's whole initializer (check_decl marks that call): it
 * then runs once, where it is written, and never inside an expression that
 * might be evaluated twice or not at all. */
static Type *b_arrive(Sema *s, Node *call, Type **args) {
  Node *cn = call->list.items[0], *nn = call->list.items[1];
  Node *base = cn->kind == N_INDEX && cn->a->kind == N_NAME ? cn->a : NULL;
  Symbol *y = base ? sema_lookup(s, base->name) : NULL;
  Type *ct = args[0], *nt = args[1];
  bool ok = false;
  int64_t v;
  if (!y || y->kind != SYM_TENSOR)
    diag_error(s->d, cn->span,
               "arrive counts in one element of a tensor parameter, e.g. arrive(Count[ctx.block.x], n)");
  else if (ct->kind != TY_SCALAR)
    diag_error(s->d, cn->span, "arrive's counter must be one element: index every dim of '%s' with a point, got %s",
               base->name, sema_ty_str(s, ct));
  else if (ct->elem != S_I32)
    diag_error(s->d, cn->span, "arrive's counter must be an element of an i32 tensor; '%s' holds %s", base->name,
               sema_scalar_name(ct->elem));
  else
    ok = true;
  if (nt->kind != TY_SCALAR || !sema_is_int(nt->elem)) {
    diag_error(s->d, nn->span, "the count of arrive must be an integer scalar, got %s", sema_ty_str(s, nt));
    ok = false;
  } else if (nt->elem == S_I64 && !nt->literal) {
    diag_error(s->d, nn->span, "the count of arrive is i64; counters are i32: convert with i32(...)");
    ok = false;
  } else if (sema_eval_const_quiet(s, nn, &v) == 1 && v < 1) {
    diag_error(s->d, nn->span, "the count of arrive must be at least 1, got %lld", (long long)v);
    ok = false;
  } else {
    check_fits(s, nn, S_I32);
  }
  if (ok && s->arrive_ok != call) {
    diag_error(s->d, call->span, "arrive counts an arrival, so it must be the whole initializer of a let: "
                                 "let last = arrive(...)");
    ok = false;
  }
  return ok ? sema_scalar_ty(s, S_BOOL) : ty_error;
}

static Type *b_rowmin(Sema *s, Node *call, Type **args) {
  if (args[0]->kind != TY_ERROR && (args[0]->elem == S_U8 || args[0]->elem == S_BOOL)) {
    diag_error(s->d, call->span, "rowmin needs a float or signed integer tile, got %s", sema_scalar_name(args[0]->elem));
    if (args[0]->elem == S_U8) diag_note(s->d, call->span, "convert first, e.g. rowmin(i32(x))");
    return ty_error;
  }
  return b_rowreduce(s, call, args);
}

/* cumsum(t): the inclusive prefix sum of a rank-1 or rank-2 tile down its
 * first dim (Phobos's: out[i, j] = sum over r <= i of t[r, j]), in the
 * tile's type; 32- and 64-bit elements, which the scan adds exactly as
 * written (a 16-bit running sum would round at every step). */
static Type *b_cumsum(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 1, 2)) return ty_error;
  Scalar e = args[0]->elem;
  if (e != S_F32 && e != S_F64 && e != S_I32 && e != S_I64) {
    diag_error(s->d, call->span, "cumsum needs an f32, f64, i32 or i64 tile, got %s", sema_scalar_name(e));
    diag_note(s->d, call->span, "convert first, e.g. cumsum(f32(x)) or cumsum(i32(x))");
    return ty_error;
  }
  return args[0];
}

/* flat(t): a tile's elements as one row, [1, R C] (Phobos's view of a
 * declared tile; here any tile value of rank 1 to 3, row-major order) */
static Type *b_flat(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 1, 3)) return ty_error;
  int64_t n = 1;
  for (int i = 0; i < args[0]->rank; i++) n *= args[0]->dims[i];
  Type *t = tile_ty(s, args[0]->elem, 2, (int64_t[]){1, n});
  return tile_fits(s, call->span, t) ? t : ty_error;
}

/* colsum / colmax / colmin(t): a rank-2 tile reduced over its rows,
 * [R, C] -> [1, C] (types as rowsum's, rowmax's, rowmin's); sum(t): a
 * rank-1 or rank-2 tile reduced whole, to [1] or [1, 1] */
static Type *b_colreduce(Sema *s, Node *call, Type **args) {
  bool whole = !strcmp(call->a->name, "sum");
  if (!need_tile(s, call, 0, args[0], whole ? 1 : 2, 2)) return ty_error;
  if (!is_numeric(args[0]->elem)) {
    diag_error(s->d, call->span, "%s needs a numeric tile, got %s", call->a->name, sema_ty_str(s, args[0]));
    return ty_error;
  }
  if (!strcmp(call->a->name, "colmin") && (args[0]->elem == S_U8 || args[0]->elem == S_BOOL)) {
    diag_error(s->d, call->span, "colmin needs a float or signed integer tile, got %s", sema_scalar_name(args[0]->elem));
    return ty_error;
  }
  Type *t = as_value(s, args[0]);
  t->dims[0] = 1;
  if (whole) t->dims[t->rank - 1] = 1;
  if (strcmp(call->a->name, "colmax") && strcmp(call->a->name, "colmin") && int_rank(t->elem) == 1) t->elem = S_I32;
  return t;
}

/* rowargmax(t): the index (i32) of each row's largest element, the first
 * where several tie; the last dim becomes 1 */
static Type *b_rowargmax(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 1, 3)) return ty_error;
  if (!is_numeric(args[0]->elem)) {
    diag_error(s->d, call->span, "rowargmax needs a numeric tile, got %s", sema_ty_str(s, args[0]));
    return ty_error;
  }
  Type *t = as_value(s, args[0]);
  t->dims[t->rank - 1] = 1;
  t->elem = S_I32;
  return t;
}


/* tril(t): t where its column is at most its row, zero above (a causal
 * mask of a rank-2 tile), in the tile's type. */
/* qdot_t(a, a_scales, w, w_scales) and qmma_t (§9.7): the Q8_0
 * contraction of two int8 tiles with their block scales folded in,
 * [M, K] x [N, K] -> [M, N] f32, K a whole number of 32-element blocks;
 * qdot_t's w_scales is [N, K / 32], qmma_t's [K / 32, N] with M and N
 * multiples of 8 (Phobos's forms). */
static Type *b_qdot(Sema *s, Node *call, Type **args) {
  const char *fn = call->a->name;
  bool mma = fn[1] == 'm';
  for (int i = 0; i < 4; i++)
    if (!need_tile(s, call, i, args[i], 2, 2)) return ty_error;
  Type *a = args[0], *as = args[1], *w = args[2], *ws = args[3];
  if ((a->elem != S_I8) || (w->elem != S_I8)) {
    diag_error(s->d, call->span, "%s contracts two i8 tiles, got %s and %s", fn, sema_scalar_name(a->elem),
               sema_scalar_name(w->elem));
    return ty_error;
  }
  if (!is_float(as->elem) || !is_float(ws->elem)) {
    diag_error(s->d, call->span, "%s's scales are floats, got %s and %s", fn, sema_scalar_name(as->elem),
               sema_scalar_name(ws->elem));
    return ty_error;
  }
  int64_t M = a->dims[0], K = a->dims[1], N = w->dims[0];
  if (w->dims[1] != K) {
    diag_error(s->d, call->span, "%s: a is %s and w is %s; both are [rows, K] with one K", fn, shape_str(s, a),
               shape_str(s, w));
    return ty_error;
  }
  if (K % 32 || K / 32 > 64) {
    diag_error(s->d, call->span, "%s: K is %lld; it must be a whole number of Q8_0 blocks of 32, at most 64 of them",
               fn, (long long)K);
    return ty_error;
  }
  int64_t want_as[2] = {M, K / 32}, want_ws[2] = {mma ? K / 32 : N, mma ? N : K / 32};
  if (as->dims[0] != want_as[0] || as->dims[1] != want_as[1] || ws->dims[0] != want_ws[0] || ws->dims[1] != want_ws[1]) {
    diag_error(s->d, call->span, "%s: the scales must be [%lld, %lld] and [%lld, %lld] for a %s and a w %s, got %s and %s",
               fn, (long long)want_as[0], (long long)want_as[1], (long long)want_ws[0], (long long)want_ws[1],
               shape_str(s, a), shape_str(s, w), shape_str(s, as), shape_str(s, ws));
    return ty_error;
  }
  if (mma && (M % 8 || N % 8)) {
    diag_error(s->d, call->span, "qmma_t: M and N must be multiples of 8, got %lld and %lld (qdot_t takes any)",
               (long long)M, (long long)N);
    return ty_error;
  }
  int64_t dims[2] = {M, N};
  return tile_ty(s, S_F32, 2, dims);
}

/* An argument of Phobos's dynamic-K qdot_t: a slice of a rank-2 tensor
 * parameter whose last subscript is ':' over a dim known only at launch. */
static bool dynamic_k_slice(Sema *s, const Node *arg) {
  if (arg->kind != N_INDEX || arg->a->kind != N_NAME || arg->list.len != 2) return false;
  Symbol *y = sema_lookup(s, arg->a->name);
  const Node *last = arg->list.items[1];
  return y && y->kind == SYM_TENSOR && y->ty->rank == 2 && last->op == SUB_FULL && y->ty->dims[1] < 0;
}

/* the name of the dim a dynamic-K slice's ':' walks */
static const char *dynamic_k_dim(Sema *s, const Node *arg) { return sema_lookup(s, arg->a->name)->ty->dimname[1]; }

/* qdot_t(A[m :+ M, :], AS[m :+ M, :], W[n :+ N, :], WS[n :+ N, :]) with K
 * known only at launch (Phobos's: the contraction is not tiled). Each
 * slice is checked with its ':' read as a block of 32 (the loop lower.c
 * makes walks K in such blocks); the call is marked for that lowering. */
static Type *check_qdot_dynamic(Sema *s, Node *call) {
  Type *args[4];
  bool ok = true;
  for (int i = 0; i < 4; i++) {
    Node *arg = call->list.items[i];
    if (!dynamic_k_slice(s, arg)) {
      sema_check_expr(s, arg);
      diag_error(s->d, arg->span, "qdot_t over a K known at launch takes four tensor slices whose last subscript is "
                                  "':' over that dim, e.g. qdot_t(A[m :+ M, :], AS[m :+ M, :], W[n :+ N, :], "
                                  "WS[n :+ N, :])");
      ok = false;
      continue;
    }
    Node *first = arg->list.items[0], *last = arg->list.items[1];
    if (first->op == SUB_POINT) {
      diag_error(s->d, first->span, "qdot_t over a K known at launch takes its rows as a span of constant length "
                                    "(m :+ M) or ':' over a constant dim, got a point");
      ok = false;
      continue;
    }
    Node *start = ast_new(s->arena, N_INT, last->span), *len = ast_new(s->arena, N_INT, last->span);
    start->text = "0", len->text = "32", len->ival = 32;
    last->op = SUB_SPAN, last->a = start, last->b = len;
    args[i] = sema_check_expr(s, arg);
    last->op = SUB_FULL, last->a = last->b = NULL;
    if (args[i]->kind == TY_ERROR || !need_tile(s, call, i, args[i], 2, 2)) ok = false;
  }
  if (!ok) return ty_error;
  if (args[0]->elem != S_I8 || args[2]->elem != S_I8) {
    diag_error(s->d, call->span, "qdot_t contracts two i8 tiles, got %s and %s", sema_scalar_name(args[0]->elem),
               sema_scalar_name(args[2]->elem));
    return ty_error;
  }
  if (!is_float(args[1]->elem) || !is_float(args[3]->elem)) {
    diag_error(s->d, call->span, "qdot_t's scales are floats, got %s and %s", sema_scalar_name(args[1]->elem),
               sema_scalar_name(args[3]->elem));
    return ty_error;
  }
  const char *ka = dynamic_k_dim(s, call->list.items[0]), *kw = dynamic_k_dim(s, call->list.items[2]);
  const char *ba = dynamic_k_dim(s, call->list.items[1]), *bw = dynamic_k_dim(s, call->list.items[3]);
  if (strcmp(ka, kw) || strcmp(ba, bw)) {
    diag_error(s->d, call->span, "qdot_t over a K known at launch contracts one K: a and w walk '%s' and '%s', their "
                                 "scales '%s' and '%s'", ka, kw, ba, bw);
    return ty_error;
  }
  if (args[1]->dims[0] != args[0]->dims[0] || args[3]->dims[0] != args[2]->dims[0]) {
    diag_error(s->d, call->span, "qdot_t: the scales' rows must be a's and w's (%lld and %lld), got %lld and %lld",
               (long long)args[0]->dims[0], (long long)args[2]->dims[0], (long long)args[1]->dims[0],
               (long long)args[3]->dims[0]);
    return ty_error;
  }
  call->op = 'K';
  return tile_ty(s, S_F32, 2, (int64_t[]){args[0]->dims[0], args[2]->dims[0]});
}

static Type *b_tril(Sema *s, Node *call, Type **args) {
  if (!need_tile(s, call, 0, args[0], 2, 2)) return ty_error;
  return args[0];
}

static const Builtin builtins[] = {
    {"dot", 2, 2, b_dot},
    {"dot_t", 2, 2, b_dot},
    {"qdot_t", 4, 4, b_qdot},
    {"qmma_t", 4, 4, b_qdot},
    {"exp", 1, 1, b_unary_float},
    {"exp2", 1, 1, b_unary_float},
    {"log", 1, 1, b_unary_float},
    {"sqrt", 1, 1, b_unary_float},
    {"tanh", 1, 1, b_unary_float},
    {"rowmax", 1, 1, b_rowreduce},
    {"rowmin", 1, 1, b_rowmin},
    {"abs", 1, 1, b_abs},
    {"rsqrt", 1, 1, b_unary_float},
    {"sigmoid", 1, 1, b_unary_float},
    {"erf", 1, 1, b_unary_float},
    {"rowsum", 1, 1, b_rowreduce},
    {"tmax", 2, 2, b_elementwise2},
    {"fma", 3, 3, b_fma},
    {"pow", 2, 2, b_pow},
    {"tmin", 2, 2, b_elementwise2},
    {"min", 2, 2, b_scalar_minmax},
    {"max", 2, 2, b_scalar_minmax},
    {"cdiv", 2, 2, b_cdiv},
    {"transpose", 1, 1, b_transpose},
    {"cumsum", 1, 1, b_cumsum},
    {"flat", 1, 1, b_flat},
    {"colsum", 1, 1, b_colreduce},
    {"colmax", 1, 1, b_colreduce},
    {"colmin", 1, 1, b_colreduce},
    {"sum", 1, 1, b_colreduce},
    {"round", 1, 1, b_unary_float}, /* to the nearest integer, ties to even */
    {"rowargmax", 1, 1, b_rowargmax},
    {"tril", 1, 1, b_tril},
    {"where", 3, 3, b_where},
    {"program_id", 1, 1, b_program_id},
    {"iota", 1, MAX_TILE_RANK, NULL}, /* checked by check_iota: its extents are constants */
    {"arrive", 2, 2, b_arrive},
    {"atomic_add", 2, 3, b_atomic_add},   /* 3: Phobos's atomic_add(t, i, v), check_atomic_index_form */
    {"atomic_cas", 3, 4, b_atomic_cas},   /* 4: atomic_cas(t, i, cmp, v) */
    {"grid_barrier", 1, 1, NULL},         /* check_grid_barrier: its argument names a tensor */
    {"barrier", 0, 0, b_barrier},
};

/* Names the checker knows without a declaration. */

static bool is_builtin_function(const char *name) {
  Scalar sc;
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strcmp(builtins[i].name, name) == 0) return true;
  return sema_scalar_from_name(name, &sc) && sc != S_BOOL;
}

/* iota(d0, ..., axis = k): an i32 tile of shape [d0, ...] whose element is
 * its own coordinate along axis k (default: the last). */
static Type *check_iota(Sema *s, Node *call) {
  int64_t dims[MAX_TILE_RANK];
  int rank = 0;
  int64_t axis = -1;
  Node *axis_node = NULL;
  bool ok = true;
  for (int i = 0; i < call->list.len; i++) {
    Node *arg = call->list.items[i];
    if (arg->kind == N_NAMEDARG) {
      if (strcmp(arg->name, "axis") != 0 || axis_node) {
        if (axis_node && strcmp(arg->name, "axis") == 0)
          diag_error(s->d, arg->span, "iota's axis is given twice");
        else
          diag_error(s->d, arg->span, "iota takes one named argument, 'axis'; got '%s'", arg->name);
        ok = false;
        continue;
      }
      axis_node = arg;
      if (sema_check_expr(s, arg->a)->kind == TY_ERROR) {
        ok = false;
        continue;
      }
      if (sema_eval_const(s, arg->a, &axis) != 1) {
        diag_error(s->d, arg->a->span, "iota's axis must be a constant");
        ok = false;
      }
      continue;
    }
    if (axis_node) {
      diag_error(s->d, arg->span, "iota's extents come before 'axis ='");
      ok = false;
      continue;
    }
    if (rank == MAX_TILE_RANK) {
      diag_error(s->d, arg->span, "iota makes tiles of at most %d dims", MAX_TILE_RANK);
      return ty_error;
    }
    int64_t v;
    Type *t = sema_check_expr(s, arg);
    if (t->kind == TY_ERROR) {
      ok = false;
      continue;
    }
    int r = sema_eval_const(s, arg, &v);
    if (r == 0) diag_error(s->d, arg->span, "iota's extents must be compile-time constants");
    else if (r == 1 && v <= 0) diag_error(s->d, arg->span, "iota extent %lld must be positive", (long long)v);
    else if (r == 1 && v > MAX_TILE_ELEMS)
      diag_error(s->d, arg->span, "iota extent %lld is too large (at most %d)", (long long)v, MAX_TILE_ELEMS);
    if (r != 1 || v <= 0 || v > MAX_TILE_ELEMS) {
      ok = false;
      continue;
    }
    dims[rank++] = v;
  }
  if (!ok) return ty_error;
  if (rank == 0) {
    diag_error(s->d, call->span, "iota needs at least one extent");
    return ty_error;
  }
  if (axis_node && (axis < 0 || axis >= rank)) {
    diag_error(s->d, axis_node->span, "iota axis %lld is out of range for a rank-%d tile (0 to %d)", (long long)axis,
               rank, rank - 1);
    return ty_error;
  }
  return tile_ty(s, S_I32, rank, dims);
}

static Type *check_call(Sema *s, Node *n) {
  if (n->a->kind != N_NAME) {
    sema_check_expr(s, n->a);
    diag_error(s->d, n->a->span, "only builtin functions can be called");
    return ty_error;
  }
  const char *name = n->a->name;
  Symbol *y = sema_lookup(s, name);
  if (y) {
    diag_error(s->d, n->a->span, "'%s' is a %s, not a function", name, sema_sym_kind_name[y->kind]);
    return ty_error;
  }
  if (strcmp(name, "iota") == 0) return check_iota(s, n);
  if (strcmp(name, "grid_barrier") == 0) return check_grid_barrier(s, n);
  n->op = 0;
  if (!strcmp(name, "qdot_t") && n->list.len == 4) {
    for (int i = 0; i < 4; i++)
      if (dynamic_k_slice(s, n->list.items[i])) return check_qdot_dynamic(s, n);
  }
  if ((!strcmp(name, "atomic_add") && n->list.len == 3) || (!strcmp(name, "atomic_cas") && n->list.len == 4))
    return check_atomic_index_form(s, n, name);
  Scalar conv;
  const Builtin *b = NULL;
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    if (strcmp(builtins[i].name, name) == 0) b = &builtins[i];
  bool is_conv = !b && sema_scalar_from_name(name, &conv);
  if (!b && !is_conv) {
    diag_error(s->d, n->a->span, "unknown function '%s'", name);
    return ty_error;
  }
  if (is_conv && conv == S_BOOL) {
    diag_error(s->d, n->a->span, "there is no bool(x) conversion; compare instead, e.g. x != 0");
    return ty_error;
  }
  int min = b ? b->min_args : 1, max = b ? b->max_args : 1;
  Type *args[4];
  bool ok = true;
  for (int i = 0; i < n->list.len; i++) {
    Node *arg = n->list.items[i];
    if (arg->kind == N_NAMEDARG) {
      diag_error(s->d, arg->span, "%s takes no named arguments", name);
      sema_check_expr(s, arg->a);
      ok = false;
      continue;
    }
    Type *t = sema_check_expr(s, arg);
    if (i < 4) args[i] = t;
    if (t->kind == TY_ERROR || !need_value(s, arg, t, name)) ok = false;
  }
  if (!ok) return ty_error;
  if (n->list.len < min || n->list.len > max) {
    if (min == max)
      diag_error(s->d, n->span, "%s takes %d argument%s, got %d", name, min, min == 1 ? "" : "s", n->list.len);
    else
      diag_error(s->d, n->span, "%s takes %d to %d arguments, got %d", name, min, max, n->list.len);
    return ty_error;
  }
  if (!ok) return ty_error;
  if (is_conv) {
    if (args[0]->elem == S_BOOL) {
      diag_error(s->d, n->span, "cannot convert bool to %s; use where(c, 1, 0)", name);
      return ty_error;
    }
    Type *t = as_value(s, args[0]);
    t->elem = conv;
    t->literal = false;
    return t;
  }
  return b->check(s, n, args);
}

static Type *check_name(Sema *s, Node *n) {
  Symbol *y = sema_lookup(s, n->name);
  n->sym = y;
  if (y) return y->ty;
  if (strcmp(n->name, "inf") == 0) {
    Type *t = sema_scalar_ty(s, S_F32);
    t->literal = true;
    return t;
  }
  if (strcmp(n->name, "ctx") == 0) {
    diag_error(s->d, n->span, "'ctx' is not a value: write ctx.block.x (or .y, .z) or ctx.grid.x");
    return ty_error;
  }
  if (is_builtin_function(n->name)) {
    diag_error(s->d, n->span, "'%s' is a builtin function: call it, e.g. %s(...)", n->name, n->name);
    return ty_error;
  }
  diag_error(s->d, n->span, "use of undeclared name '%s'", n->name);
  return ty_error;
}

/* Every expression node remembers its type for the lowering that follows. */
Type *sema_check_expr(Sema *s, Node *n) {
  n->ty = check_expr_kind(s, n);
  if (n->ty->kind == TY_TILE && !tile_fits(s, n->span, n->ty)) n->ty = ty_error;
  return n->ty;
}

static Type *check_expr_kind(Sema *s, Node *n) {
  switch (n->kind) {
  case N_INT: {
    Type *t = sema_scalar_ty(s, n->ival > INT32_MAX ? S_I64 : S_I32);
    t->literal = true;
    return t;
  }
  case N_FLOAT: {
    Type *t = sema_scalar_ty(s, S_F32);
    t->literal = true;
    return t;
  }
  case N_BOOL: return sema_scalar_ty(s, S_BOOL);
  case N_NAME: return check_name(s, n);
  case N_UNARY: return check_unary(s, n);
  case N_BINARY: return check_binary(s, n);
  case N_CALL: return check_call(s, n);
  case N_INDEX: return check_index(s, n);
  case N_MEMBER: return check_member(s, n);
  case N_NAMEDARG:
    diag_error(s->d, n->span, "a named argument '%s = ...' is allowed only in iota and attributes", n->name);
    sema_check_expr(s, n->a);
    return ty_error;
  default: diag_ice("check_expr: unexpected node kind %d", n->kind);
  }
}

/* Resolves a written type. Kernel parameters may be tensors or scalars;
 * locals may be scalars or tiles. */
Type *sema_resolve_type(Sema *s, Node *n, bool param) {
  Scalar e;
  if (!n->a) {
    if (strcmp(n->name, "tensor") == 0 || strcmp(n->name, "tile") == 0) {
      diag_error(s->d, n->span, "'%s' needs an element type and dims, e.g. %s<f32>[M, N]", n->name, n->name);
      return ty_error;
    }
    if (!sema_scalar_from_name(n->name, &e)) {
      diag_error(s->d, n->span, "unknown type '%s'", n->name);
      diag_note(s->d, n->span, "types: f16 bf16 f32 f64 i8 u8 i32 i64 bool, tensor<T>[dims], tile<T>[dims]");
      return ty_error;
    }
    return sema_scalar_ty(s, e);
  }
  bool tensor = strcmp(n->name, "tensor") == 0;
  if (!tensor && strcmp(n->name, "tile") != 0) {
    diag_error(s->d, n->span, "unknown type '%s<...>' (only tensor<T> and tile<T> take an element type)", n->name);
    return ty_error;
  }
  if (n->a->a || !sema_scalar_from_name(n->a->name, &e)) {
    diag_error(s->d, n->a->span, "the element type of a %s must be a scalar type, got '%s'", n->name, n->a->name);
    return ty_error;
  }
  if (tensor && !param) {
    diag_error(s->d, n->span, "a local cannot be a tensor: tensors are kernel parameters; slice one into a tile");
    return ty_error;
  }
  if (!tensor && param) {
    diag_error(s->d, n->span, "a kernel parameter cannot be a tile: pass a tensor and slice it");
    return ty_error;
  }
  int max = tensor ? MAX_TENSOR_RANK : MAX_TILE_RANK;
  if (n->list.len > max) {
    diag_error(s->d, n->span, "a %s has at most %d dims, this one has %d", n->name, max, n->list.len);
    return ty_error;
  }
  Type *t = arena_alloc(s->arena, sizeof *t);
  t->kind = tensor ? TY_TENSOR : TY_TILE;
  t->elem = e;
  t->rank = n->list.len;
  for (int i = 0; i < t->rank; i++) {
    Node *d = n->list.items[i];
    int64_t v;
    if (tensor) {
      if (d->kind == N_NAME) {
        t->dimname[i] = d->name;
        t->dims[i] = -1;
        continue;
      }
      if (d->kind != N_INT && s->scratch_param) {
        /* a scratch tensor's dim may be an integer expression over the
         * dims and constants (spec 11): a constant one is its value, any
         * other a dim of its own, "NAME.d", that the runtime computes */
        Type *dt = sema_check_expr(s, d);
        if (dt->kind == TY_ERROR) return ty_error;
        if (dt->kind != TY_SCALAR || !sema_is_int(dt->elem)) {
          diag_error(s->d, d->span, "a scratch tensor's dim must be an integer expression, got %s", sema_ty_str(s, dt));
          return ty_error;
        }
        int r = sema_eval_const(s, d, &v);
        if (r < 0) return ty_error;
        if (r == 0) {
          t->dimname[i] = arena_printf(s->arena, "%s.%d", s->scratch_param, i);
          t->dims[i] = -1;
          continue;
        }
      } else if (d->kind != N_INT) {
        diag_error(s->d, d->span, "a tensor dim is a name or an integer literal");
        return ty_error;
      } else {
        v = d->ival;
      }
    } else {
      Type *dt = sema_check_expr(s, d);
      if (dt->kind == TY_ERROR) return ty_error;
      int r = sema_eval_const(s, d, &v);
      if (r < 0) return ty_error;
      Symbol *fy = d->kind == N_NAME ? sema_lookup(s, d->name) : NULL;
      if (r == 0 && fy && fy->kind == SYM_CONST && fy->const_float) {
        diag_error(s->d, d->span, "'%s' is the float constant %g; a tile dim must be an integer", d->name, fy->fval);
        return ty_error;
      }
      if (r == 0) {
        diag_error(s->d, d->span, "a tile dim must be a compile-time constant");
        diag_note(s->d, d->span, "constants are integers, @autotune names, -D names and dims they pin");
        return ty_error;
      }
    }
    if (v <= 0) {
      diag_error(s->d, d->span, "dim %d of the %s is %lld; dims must be positive", i, n->name, (long long)v);
      return ty_error;
    }
    if (!tensor && v > MAX_TILE_ELEMS) {
      diag_error(s->d, d->span, "tile dim %lld is too large (at most %d)", (long long)v, MAX_TILE_ELEMS);
      return ty_error;
    }
    if (tensor && v > INT32_MAX) { /* a launch passes extents as s32, and libphobos refuses larger ones */
      diag_error(s->d, d->span, "tensor dim %lld is too large (extents are at most %d)", (long long)v, INT32_MAX);
      return ty_error;
    }
    t->dims[i] = v;
  }
  if (!tensor && !tile_fits(s, n->span, t)) return ty_error;
  return t;
}

static void check_cond(Sema *s, Node *e, const char *what) {
  Type *t = sema_check_expr(s, e);
  if (t->kind == TY_ERROR) return;
  if (t->kind != TY_SCALAR || t->elem != S_BOOL)
    diag_error(s->d, e->span, "the condition of '%s' must be a bool scalar, got %s", what, sema_ty_str(s, t));
}

static void check_decl(Sema *s, Node *n) {
  bool is_let = n->kind == N_LET;
  Type *declared = n->type ? sema_resolve_type(s, n->type, false) : NULL;
  if (is_let && n->a && n->a->kind == N_CALL && n->a->a->kind == N_NAME &&
      (!strcmp(n->a->a->name, "arrive") || !strcmp(n->a->a->name, "atomic_add") ||
       !strcmp(n->a->a->name, "atomic_cas")))
    s->arrive_ok = n->a;
  Type *init = n->a ? sema_check_expr(s, n->a) : NULL;
  s->arrive_ok = NULL;
  if (init && init->kind != TY_ERROR)
    if (!need_value(s, n->a, init, is_let ? "let" : "var")) init = ty_error;
  Type *t;
  if (declared) {
    t = declared;
    if (init) {
      if (check_assignable(s, n->a->span, declared, init, arena_printf(s->arena, "initializer of '%s'", n->name),
                           false) &&
          declared->kind != TY_ERROR)
        check_fits(s, n->a, declared->elem);
    } else if (declared->kind != TY_TILE && declared->kind != TY_ERROR) {
      diag_error(s->d, n->span, "'var %s: %s' needs an initializer: only tiles may start undefined", n->name,
                 sema_ty_str(s, declared));
      t = ty_error;
    }
  } else if (!init) {
    diag_error(s->d, n->span, "'var %s' needs a type or an initializer", n->name);
    t = ty_error;
  } else {
    t = copy_ty(s, init);
    /* A literal takes its default type: i32 or f32. A var copies a view. */
    t->literal = false;
    if (!is_let) t->view = false;
  }
  n->ty = t;
  n->sym = sema_declare(s, is_let ? SYM_LET : SYM_VAR, n->name, t, n->span);
  if (n->sym && is_let) n->sym->init = n->a;
}

static void check_assign(Sema *s, Node *n) {
  Node *target = n->a;
  Node *root = target->kind == N_INDEX ? target->a : target;
  Type *value = sema_check_expr(s, n->b);
  if (root->kind != N_NAME) {
    sema_check_expr(s, target);
    diag_error(s->d, target->span, "cannot assign to this expression: the target must be a variable or a slice");
    return;
  }
  Symbol *y = sema_lookup(s, root->name);
  if (!y) {
    if (strcmp(root->name, "inf") == 0) { /* the one name that is a value without a symbol */
      diag_error(s->d, target->span, "cannot %s 'inf': it is a constant",
                 target->kind == N_INDEX ? "store into" : "assign to");
      return;
    }
    sema_check_expr(s, target); /* reports the undeclared name */
    return;
  }
  if (target->kind == N_NAME && y->kind == SYM_TENSOR) {
    diag_error(s->d, target->span, "cannot assign to tensor '%s' as a whole; store to a slice: %s[...] = value",
               y->name, y->name);
    return;
  }
  if (y->kind != SYM_VAR && !(y->kind == SYM_TENSOR && target->kind == N_INDEX)) {
    diag_error(s->d, target->span, "cannot %s '%s': it is a %s", target->kind == N_INDEX ? "store into" : "assign to",
               y->name, sema_sym_kind_name[y->kind]);
    if (y->kind == SYM_LET) diag_note(s->d, y->span, "declare it with 'var' to make it mutable");
    return;
  }
  Type *tt = sema_check_expr(s, target);
  if (tt->kind == TY_ERROR || value->kind == TY_ERROR) return;
  if (!need_value(s, n->b, value, "assignment")) return;
  if (n->op != '=' && (!is_numeric(tt->elem) || !is_numeric(value->elem))) {
    diag_error(s->d, n->span, "operator '%s' needs numeric operands, got %s and %s", ast_op_name(n->op),
               sema_ty_str(s, tt), sema_ty_str(s, value));
    return;
  }
  if (check_assignable(s, n->b->span, tt, value, "assignment", true)) check_fits(s, n->b, tt->elem);
}

static void check_for(Sema *s, Node *n) {
  if (!n->a) { /* the parser reported a malformed range */
    sema_push_scope(s);
    sema_declare(s, SYM_LOOP, n->name, sema_scalar_ty(s, S_I32), n->span);
    sema_check_block(s, n->body);
    sema_pop_scope(s);
    return;
  }
  Node *parts[3] = {n->a, n->b, n->c};
  const char *names[3] = {"start", "end", "step"};
  for (int i = 0; i < 3; i++) {
    if (!parts[i]) continue;
    Type *t = sema_check_expr(s, parts[i]);
    if (t->kind == TY_ERROR) continue;
    if (t->kind != TY_SCALAR || !sema_is_int(t->elem))
      diag_error(s->d, parts[i]->span, "the %s of a range must be an integer scalar, got %s", names[i],
                 sema_ty_str(s, t));
    else if (t->elem == S_I64 && !t->literal)
      diag_error(s->d, parts[i]->span, "the %s of a range is i64; loop variables are i32: convert with i32(...)",
                 names[i]);
    else
      check_fits(s, parts[i], S_I32); /* range(0, 5000000000) */
  }
  int64_t step;
  if (n->c && sema_eval_const(s, n->c, &step) == 1 && step <= 0)
    diag_error(s->d, n->c->span, "the step of a range must be positive, got %lld", (long long)step);
  sema_push_scope(s);
  n->sym = sema_declare(s, SYM_LOOP, n->name, sema_scalar_ty(s, S_I32), n->span);
  if (n->sym) n->sym->init = n; /* the derived grid bounds a loop variable by its range's start (sema_grid.c); NULL: a name already taken, reported */
  s->loops++;
  sema_check_block(s, n->body);
  s->loops--;
  sema_pop_scope(s);
}

static void check_stmt(Sema *s, Node *n) {
  switch (n->kind) {
  case N_LET:
  case N_VAR: check_decl(s, n); break;
  case N_ASSIGN: check_assign(s, n); break;
  case N_FOR: check_for(s, n); break;
  case N_WHILE:
    check_cond(s, n->a, "while");
    s->loops++;
    sema_check_block(s, n->body);
    s->loops--;
    break;
  case N_RETURN: break; /* the whole CTA ends (a kernel returns nothing) */
  case N_BREAK:
  case N_CONTINUE:
    /* every statement runs for the whole CTA and conditions are scalars,
     * so the whole CTA leaves the loop (or its iteration) together */
    if (!s->loops)
      diag_error(s->d, n->span, "'%s' outside a loop: it leaves the innermost for or while loop",
                 n->kind == N_BREAK ? "break" : "continue");
    break;
  case N_IF:
    check_cond(s, n->a, "if");
    sema_check_block(s, n->body);
    if (n->c) {
      if (n->c->kind == N_IF) check_stmt(s, n->c);
      else sema_check_block(s, n->c);
    }
    break;
  case N_EXPR: {
    /* the builtins that are statements: they act and give nothing back */
    bool atomic = n->a->kind == N_CALL && n->a->a->kind == N_NAME &&
                  (!strcmp(n->a->a->name, "atomic_add") || !strcmp(n->a->a->name, "atomic_cas") ||
                   !strcmp(n->a->a->name, "barrier") || !strcmp(n->a->a->name, "grid_barrier"));
    if (atomic) s->atomic_ok = n->a;
    Type *t = sema_check_expr(s, n->a);
    s->atomic_ok = NULL;
    if (t->kind != TY_ERROR && !atomic)
      diag_error(s->d, n->span, "this expression's value is unused; assign it or remove it");
    break;
  }
  default: diag_ice("check_stmt: unexpected node kind %d", n->kind);
  }
}

void sema_check_block(Sema *s, Node *block) {
  sema_push_scope(s);
  for (int i = 0; i < block->list.len && !s->d->stopped; i++) check_stmt(s, block->list.items[i]);
  sema_pop_scope(s);
}
