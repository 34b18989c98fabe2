/* sema_kernel.c: the kernel level of semantic analysis: attributes
 * (@launch, @autotune and its space, @pipeline, @padstage, @aligned,
 * @dynshared, @grid, @no_tma), parameters and their launch bounds, -D
 * constants, and the variants: one check of the kernel's body for each
 * @autotune point (the statement and expression checks are sema.c's). The
 * first point that fails stops the kernel, with a note naming it, so a
 * mistake is reported once and not once per variant. */
#include "sema.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_grid_names(Sema *s, Node *n, bool contract);
static void check_requires(Sema *s, Attrs *at);
static void fill_requires(Sema *s, Attrs *at, KernelInfo *info);

static const char *known_attrs[] = {"launch", "autotune", "pipeline", "padstage", "aligned",   "dynshared",
                                    "grid",   "no_tma",   "requires", "scratch",  "persistent"};

/* Evaluates an attribute argument that must be an integer constant. */
static bool attr_int(Sema *s, Node *attr, Node *arg, const char *what, int64_t *out) {
  if (arg->kind == N_NAMEDARG || arg->kind == N_ATTR_IN) {
    diag_error(s->d, arg->span, "@%s: %s must be a plain integer", attr->name, what);
    return false;
  }
  int r = sema_eval_const(s, arg, out);
  if (r == 0) diag_error(s->d, arg->span, "@%s: %s must be an integer constant", attr->name, what);
  return r == 1;
}

/* The @autotune space, checked once per kernel (it needs no constants). */
static void collect_autotune(Sema *s, Node *attr, Attrs *at) {
  if (!attr->list.len) {
    diag_error(s->d, attr->span, "@autotune needs at least one 'NAME in [values]'");
    return;
  }
  for (int i = 0; i < attr->list.len; i++) {
    Node *arg = attr->list.items[i];
    if (arg->kind != N_ATTR_IN) {
      diag_error(s->d, arg->span, "@autotune arguments are 'NAME in [values]'");
      continue;
    }
    for (int j = 0; j < at->ntune; j++)
      if (strcmp(at->tune[j].name, arg->name) == 0) {
        diag_error(s->d, arg->span, "@autotune names '%s' twice", arg->name);
        diag_note(s->d, at->tune[j].span, "first given here");
        goto next;
      }
    if (at->ntune == MAX_TUNE) {
      diag_error(s->d, arg->span, "@autotune has more than %d dimensions", MAX_TUNE);
      return;
    }
    int n = arg->list.len;
    int64_t vals[64];
    if (n > 64) {
      diag_error(s->d, arg->span, "@autotune '%s' lists %d values; at most 64", arg->name, n);
      continue;
    }
    for (int j = 0; j < n; j++) {
      Node *e = arg->list.items[j];
      int r = sema_eval_const(s, e, &vals[j]);
      if (r == 0) diag_error(s->d, e->span, "@autotune values must be integer constants");
      if (r != 1) goto next;
      if (vals[j] <= 0) {
        diag_error(s->d, e->span, "@autotune value %lld for '%s' must be positive", (long long)vals[j], arg->name);
        goto next;
      }
      for (int k = 0; k < j; k++)
        if (vals[k] == vals[j] && n != 2) {
          diag_error(s->d, e->span, "@autotune lists %lld twice for '%s'", (long long)vals[j], arg->name);
          goto next;
        }
    }
    TuneDim td = {.name = arg->name, .span = arg->span};
    td.values = arena_alloc(s->arena, sizeof(int64_t) * 64);
    if (n == 2 && vals[0] < vals[1]) {
      /* two values: doubling steps from the first up to the second */
      for (int64_t v = vals[0]; td.nvalues < 64; v *= 2) {
        td.values[td.nvalues++] = v;
        if (v > vals[1] / 2) break; /* the next doubling passes the bound (or overflows) */
      }
      if (td.values[td.nvalues - 1] != vals[1])
        diag_warning(s->d, ((Node *)arg->list.items[1])->span,
                     "@autotune '%s': doubling from %lld never reaches %lld; the last value is %lld", arg->name,
                     (long long)vals[0], (long long)vals[1], (long long)td.values[td.nvalues - 1]);
    } else if (n == 2 && vals[0] == vals[1]) {
      td.values[td.nvalues++] = vals[0];
    } else {
      for (int j = 0; j < n; j++) td.values[td.nvalues++] = vals[j];
    }
    TuneDim *grown = arena_alloc(s->arena, sizeof *grown * (size_t)(at->ntune + 1));
    if (at->ntune) memcpy(grown, at->tune, sizeof *grown * (size_t)at->ntune);
    grown[at->ntune++] = td;
    at->tune = grown;
  next:;
  }
}

static void collect_attrs(Sema *s, Node *k, Attrs *at) {
  memset(at, 0, sizeof *at);
  for (int i = 0; i < k->attrs.len; i++) {
    Node *a = k->attrs.items[i];
    bool known = false;
    for (size_t j = 0; j < sizeof known_attrs / sizeof known_attrs[0]; j++)
      if (strcmp(a->name, known_attrs[j]) == 0) known = true;
    if (!known) {
      diag_warning(s->d, a->span, "unknown attribute '@%s' is ignored", a->name);
      continue;
    }
    bool decl = false, other = false; /* NAME: T declarations, and other arguments */
    for (int j = 0; j < a->list.len; j++) {
      if (((Node *)a->list.items[j])->kind == N_PARAM) decl = true;
      else other = true;
    }
    if (strcmp(a->name, "scratch") == 0) {
      /* several @scratch lines add up; the parser made their declarations
       * the kernel's last parameters */
      vec_push(s->arena, &at->scratch, a);
      if (!a->list.len || other)
        diag_error(s->d, a->span, "@scratch declares tensors the runtime allocates: @scratch(NAME: tensor<T>[dims], "
                                  "...), each may end with '= 0' to start at zero");
      continue;
    }
    if (decl) {
      diag_error(s->d, a->span, "@%s takes no declarations (NAME: type): only @scratch does", a->name);
      continue;
    }
    Node **slot = strcmp(a->name, "launch") == 0      ? &at->launch
                  : strcmp(a->name, "autotune") == 0  ? &at->autotune_first
                  : strcmp(a->name, "pipeline") == 0  ? &at->pipeline
                  : strcmp(a->name, "padstage") == 0  ? &at->padstage
                  : strcmp(a->name, "aligned") == 0   ? &at->aligned
                  : strcmp(a->name, "dynshared") == 0 ? &at->dynshared
                  : strcmp(a->name, "no_tma") == 0    ? &at->no_tma
                  : strcmp(a->name, "persistent") == 0 ? &at->persistent
                                                      : &at->grid;
    if (strcmp(a->name, "requires") == 0) {
      /* several @requires lines add up, as @autotune's do */
      vec_push(s->arena, &at->requires, a);
      if (!a->list.len)
        diag_error(s->d, a->span, "@requires needs at least one comparison, e.g. @requires(NC >= cdiv(N, BN))");
      continue;
    }
    if (strcmp(a->name, "autotune") == 0) {
      /* several @autotune lines add up */
      if (!*slot) *slot = a;
      collect_autotune(s, a, at);
      continue;
    }
    if (*slot) {
      diag_error(s->d, a->span, "@%s is given twice", a->name);
      diag_note(s->d, (*slot)->span, "first given here");
      continue;
    }
    *slot = a;
    if ((slot == &at->padstage || slot == &at->dynshared || slot == &at->no_tma || slot == &at->persistent) &&
        a->has_args)
      diag_error(s->d, a->span, "@%s takes no arguments", a->name);
  }
}

/* Checks the attributes whose arguments may use constants; runs once per
 * variant, in the kernel scope. */
static void check_attrs(Sema *s, Attrs *at) {
  int64_t v;
  if (at->launch) {
    Node *a = at->launch;
    static const char *what[] = {"the thread count", "min_blocks", "max_regs"};
    if (a->list.len < 1 || a->list.len > 3) {
      diag_error(s->d, a->span, "@launch takes 1 to 3 arguments (threads[, min_blocks[, max_regs]]), got %d",
                 a->list.len);
    } else {
      for (int i = 0; i < a->list.len; i++) {
        Node *arg = a->list.items[i];
        if (!attr_int(s, a, arg, what[i], &v)) continue;
        if (i == 0 && (v < 32 || v > 1024 || v % 32))
          diag_error(s->d, arg->span, "@launch: %lld threads; the count must be a multiple of 32 from 32 to 1024",
                     (long long)v);
        if (i == 1 && (v < 1 || v > 32))
          diag_error(s->d, arg->span, "@launch: min_blocks %lld must be from 1 to 32", (long long)v);
        if (i == 2 && (v < 16 || v > 255))
          diag_error(s->d, arg->span, "@launch: max_regs %lld must be from 16 to 255", (long long)v);
      }
    }
  }
  if (at->pipeline && at->pipeline->has_args) {
    Node *a = at->pipeline;
    if (a->list.len != 1) diag_error(s->d, a->span, "@pipeline takes one argument, the stage count");
    else if (attr_int(s, a, a->list.items[0], "the stage count", &v) && (v < 2 || v > 8))
      diag_error(s->d, ((Node *)a->list.items[0])->span, "@pipeline(%lld): the stage count must be from 2 to 8",
                 (long long)v);
  }
  if (at->aligned) {
    Node *a = at->aligned;
    if (!a->list.len) diag_error(s->d, a->span, "@aligned needs 'DIM = tile' arguments");
    if (a->list.len > 8) /* KernelInfo keeps 8: a ninth was dropped unsaid */
      diag_error(s->d, ((Node *)a->list.items[8])->span, "@aligned takes at most 8 dims, got %d", a->list.len);
    for (int i = 0; i < a->list.len; i++) {
      Node *arg = a->list.items[i];
      if (arg->kind != N_NAMEDARG) {
        diag_error(s->d, arg->span, "@aligned arguments are 'DIM = tile'");
        continue;
      }
      Symbol *y = sema_lookup(s, arg->name);
      bool is_dim = false;
      for (int p = 0; p < s->kernel->list.len; p++) {
        Node *pt = ((Node *)s->kernel->list.items[p])->type;
        for (int d = 0; pt && strcmp(pt->name, "tensor") == 0 && d < pt->list.len; d++) {
          Node *dn = pt->list.items[d];
          if (dn->kind == N_NAME && strcmp(dn->name, arg->name) == 0) is_dim = true;
        }
      }
      if (!y || !is_dim || (y->kind != SYM_DIM && y->kind != SYM_CONST)) {
        diag_error(s->d, arg->span, "@aligned: '%s' is not a tensor dim of this kernel", arg->name);
        continue;
      }
      if (attr_int(s, a, arg->a, "the tile", &v) && v <= 0)
        diag_error(s->d, arg->a->span, "@aligned: tile %lld must be positive", (long long)v);
      else if (y->kind == SYM_CONST && !y->const_float && v > 0 && y->ival % v)
        diag_error(s->d, arg->span, "@aligned: '%s' is the constant %lld, not a multiple of %lld", arg->name,
                   (long long)y->ival, (long long)v);
    }
  }
  if (at->grid) {
    Node *a = at->grid;
    if (a->list.len < 1 || a->list.len > 3)
      diag_error(s->d, a->span, "@grid takes 1 to 3 expressions (x[, y[, z]]), got %d", a->list.len);
    for (int i = 0; i < a->list.len; i++) {
      Node *arg = a->list.items[i];
      if (arg->kind == N_NAMEDARG || arg->kind == N_ATTR_IN) {
        diag_error(s->d, arg->span, "@grid arguments are expressions over dims and constants");
        continue;
      }
      int e0 = s->d->errors;
      check_grid_names(s, arg, false);
      if (s->d->errors > e0) continue;
      Type *t = sema_check_expr(s, arg);
      if (t->kind == TY_ERROR) continue;
      if (t->kind != TY_SCALAR || !sema_is_int(t->elem)) {
        diag_error(s->d, arg->span, "@grid: the extent must be an integer, got %s", sema_ty_str(s, t));
        continue;
      }
      int64_t max = i == 0 ? INT32_MAX : 65535; /* the hardware's grid limits */
      if (sema_eval_const(s, arg, &v) == 1 && (v <= 0 || v > max))
        diag_error(s->d, arg->span, "@grid: extent %lld along %c must be from 1 to %lld", (long long)v,
                   "xyz"[i < 3 ? i : 2], (long long)max);
    }
  }
  check_requires(s, at);
}

/* Only dims and constants may appear in a @grid expression: the runtime
 * evaluates it before the launch, from the tensors' shapes. A @requires
 * side (contract) may also name the launch grid, ctx.grid.x, .y or .z. */
static void check_names(Sema *s, Node *n, bool contract, bool scratch) {
  if (!n) return;
  const char *attr = scratch ? "@scratch" : contract ? "@requires" : "@grid";
  const char *what = contract ? "tensor dims, constants and ctx.grid" : "tensor dims and constants";
  if (n->kind == N_NAME) {
    Symbol *y = sema_lookup(s, n->name);
    if (y && y->kind != SYM_DIM && y->kind != SYM_CONST)
      diag_error(s->d, n->span, "%s can use %s; '%s' is a %s", attr, what, n->name, sema_sym_kind_name[y->kind]);
    else if (!y && strcmp(n->name, "inf") != 0)
      diag_error(s->d, n->span, "%s can use %s; '%s' is neither (names in the kernel body are not visible to %s)",
                 attr, what, n->name, attr);
    return;
  }
  if (contract && n->kind == N_MEMBER && n->a->kind == N_MEMBER && n->a->a->kind == N_NAME &&
      !strcmp(n->a->a->name, "ctx") && !strcmp(n->a->name, "grid") && !sema_lookup(s, "ctx"))
    return; /* the axis is checked with the expression */
  if (n->kind == N_MEMBER || n->kind == N_INDEX) {
    diag_error(s->d, n->span, "%s can use %s only", attr, what);
    return;
  }
  /* the runtime evaluates the extent as a postfix program (manifest.c,
   * postfix; spec 17.3): + - * / %, unary -, cdiv, min and max; integer
   * conversions pass through. Anything else was an internal error when the
   * manifest was written. */
  const char *runtime_ops = contract ? "(the runtime computes a contract's sides with + - * / %, unary -, cdiv, min and max)"
                            : scratch ? "(the runtime computes a scratch tensor's dims with + - * / %, unary -, cdiv, min and max)"
                                      : "(the runtime computes a grid with + - * / %, unary -, cdiv, min and max)";
  const char *where = contract ? "a launch contract" : scratch ? "a scratch tensor's dim" : "a launch grid";
  if (n->kind == N_CALL) {
    if (n->a->kind == N_NAME && strcmp(n->a->name, "program_id") == 0) {
      diag_error(s->d, n->span, "%s can use %s only; program_id is the block index", attr, what);
      return;
    }
    static const char *ok[] = {"cdiv", "min", "max", "i32", "i64"};
    bool known = false;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0] && n->a->kind == N_NAME; i++) known |= !strcmp(n->a->name, ok[i]);
    if (!known) {
      diag_error(s->d, n->span, "%s: %s%s%s is not available in %s %s", attr, n->a->kind == N_NAME ? "'" : "",
                 n->a->kind == N_NAME ? n->a->name : "this call", n->a->kind == N_NAME ? "'" : "", where, runtime_ops);
      return;
    }
    for (int i = 0; i < n->list.len; i++) check_names(s, n->list.items[i], contract, scratch);
    return;
  }
  bool arith = n->op == '+' || n->op == '-' || n->op == '*' || n->op == '/' || n->op == '%';
  if ((n->kind == N_BINARY && !arith) || (n->kind == N_UNARY && n->op != '-')) {
    diag_error(s->d, n->span, "%s: operator '%s' is not available in %s %s", attr, ast_op_name(n->op), where,
               runtime_ops);
    return;
  }
  check_names(s, n->a, contract, scratch);
  check_names(s, n->b, contract, scratch);
}

static void check_grid_names(Sema *s, Node *n, bool contract) { check_names(s, n, contract, false); }

/* ------------------------------------------------------------ @requires */

/* The comparison a contract states, or NULL. */
static const char *contract_op(const Node *n) {
  static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
  if (n->kind != N_BINARY) return NULL;
  const char *op = ast_op_name(n->op);
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (!strcmp(op, ops[i])) return ops[i];
  return NULL;
}

static bool compare(const char *op, int64_t x, int64_t y) {
  switch (op[0]) {
  case '=': return x == y;
  case '!': return x != y;
  case '<': return op[1] ? x <= y : x < y;
  default: return op[1] ? x >= y : x > y;
  }
}

/* A contract's side as the runtime's postfix program (spec 16.2), with the
 * variant's constants folded; *steps counts its tokens. */
static const char *contract_program(Sema *s, Node *n, int64_t *steps) {
  int64_t v;
  if (sema_eval_const_quiet(s, n, &v) == 1) return ++*steps, arena_printf(s->arena, "%lld", (long long)v);
  switch (n->kind) {
  case N_NAME: return ++*steps, n->name;
  case N_MEMBER: return ++*steps, arena_printf(s->arena, "grid.%s", n->name);
  case N_UNARY: {
    const char *a = contract_program(s, n->a, steps);
    return ++*steps, arena_printf(s->arena, "%s neg", a);
  }
  case N_BINARY: {
    const char *a = contract_program(s, n->a, steps), *b = contract_program(s, n->b, steps);
    return ++*steps, arena_printf(s->arena, "%s %s %s", a, b, ast_op_name(n->op));
  }
  case N_CALL:
    if (n->list.len == 1) return contract_program(s, n->list.items[0], steps); /* i32(), i64() */
    {
      const char *a = contract_program(s, n->list.items[0], steps), *b = contract_program(s, n->list.items[1], steps);
      return ++*steps, arena_printf(s->arena, "%s %s %s", a, b, n->a->name);
    }
  default: diag_ice("contract_program: unexpected node kind %d", n->kind);
  }
}

/* The source text of a span, its lines joined by single spaces, in a copy
 * of the span's lines only (sized to the rest of the file, the copies of a
 * kernel of 4096 variants and 16 contracts over 260 KB of source took 24
 * GB); its first line is found with memchr, as every variant asks again. */
static const char *span_text(Sema *s, Span sp) {
  const char *t = s->d->src->text, *end = t + s->d->src->len, *nl;
  int line = 1;
  for (; line < sp.first_line && (nl = memchr(t, '\n', (size_t)(end - t))); line++) t = nl + 1;
  if (line < sp.first_line) t = end;
  size_t len = 0; /* to the end of the span's last line */
  for (int l = line; t[len] && (l < sp.last_line || t[len] != '\n'); len++) l += t[len] == '\n';
  char *out = arena_alloc(s->arena, len + 1), *o = out;
  for (int col = 1; *t && (line < sp.last_line || (line == sp.last_line && col <= sp.last_column)); t++, col++) {
    bool in = line > sp.first_line || col >= sp.first_column;
    if (*t == '\n') {
      line++, col = 0;
      if (in) *o++ = ' ';
      while (t[1] == ' ' || t[1] == '\t') t++, col++;
      continue;
    }
    if (in) *o++ = *t;
  }
  *o = 0;
  return out;
}

/* The constant parts of a contract's side that the runtime could only fail
 * on, reported: an overflow (sema_eval_const's message) and a division by
 * a constant 0, inside a side that is not constant as a whole (N / 0,
 * N + 2^62 * 4); false after one. */
static bool check_const_parts(Sema *s, Node *n) {
  int64_t v;
  int r = sema_eval_const_quiet(s, n, &v);
  if (r == 1) return true;
  if (r < 0) { /* reported now: the quiet evaluation kept it */
    sema_eval_const(s, n, &v);
    return false;
  }
  Node *kid[2] = {NULL, NULL};
  if (n->kind == N_UNARY) kid[0] = n->a;
  else if (n->kind == N_BINARY) kid[0] = n->a, kid[1] = n->b;
  else if (n->kind == N_CALL && n->list.len >= 1) kid[0] = n->list.items[0], kid[1] = n->list.len > 1 ? n->list.items[1] : NULL;
  bool ok = true;
  for (int k = 0; k < 2; k++) ok = (!kid[k] || check_const_parts(s, kid[k])) && ok;
  bool divides = (n->kind == N_BINARY && (n->op == '/' || n->op == '%')) ||
                 (n->kind == N_CALL && n->a->kind == N_NAME && !strcmp(n->a->name, "cdiv"));
  if (ok && divides && kid[1] && sema_eval_const_quiet(s, kid[1], &v) == 1 && v == 0) {
    diag_error(s->d, kid[1]->span, "@requires: division by zero: every launch would fail");
    ok = false;
  }
  return ok;
}

/* Checks every contract in this variant's scope. */
static void check_requires(Sema *s, Attrs *at) {
  int total = 0;
  for (int r = 0; r < at->requires.len; r++) {
    Node *a = at->requires.items[r];
    for (int i = 0; i < a->list.len; i++) {
      Node *arg = a->list.items[i];
      const char *op = arg->kind == N_BINARY ? contract_op(arg) : NULL;
      if (!op) {
        diag_error(s->d, arg->span, "@requires arguments are comparisons (==, !=, <, <=, >, >=) of expressions over "
                   "dims and constants, e.g. NC >= cdiv(N, BN)");
        continue;
      }
      if (++total == MAX_REQUIRES + 1)
        diag_error(s->d, arg->span, "@requires: a kernel states at most %d contracts; this is contract %d", MAX_REQUIRES,
                   total);
      Node *side[2] = {arg->a, arg->b};
      int64_t v[2];
      int known = 0;
      bool ok = true;
      for (int k = 0; k < 2; k++) {
        int e0 = s->d->errors;
        check_grid_names(s, side[k], true);
        if (s->d->errors > e0) {
          ok = false;
          continue;
        }
        Type *t = sema_check_expr(s, side[k]);
        if (t->kind == TY_ERROR) {
          ok = false;
          continue;
        }
        if (t->kind != TY_SCALAR || !sema_is_int(t->elem)) {
          diag_error(s->d, side[k]->span, "@requires: the %s side must be an integer, got %s", k ? "right" : "left",
                     sema_ty_str(s, t));
          ok = false;
          continue;
        }
        if (!check_const_parts(s, side[k])) {
          ok = false;
          continue;
        }
        int rr = sema_eval_const(s, side[k], &v[k]);
        if (rr < 0) ok = false;
        known += rr == 1;
        int64_t steps = 0;
        contract_program(s, side[k], &steps);
        if (rr != 1 && steps > MAX_PROGRAM_STEPS) {
          diag_error(s->d, side[k]->span, "@requires: this side is a program of %lld steps; the runtime evaluates at "
                     "most %d", (long long)steps, MAX_PROGRAM_STEPS);
          ok = false;
        }
      }
      /* a contract over constants alone is decided here, once per variant */
      if (ok && known == 2 && !compare(op, v[0], v[1])) {
        s->requires_false = true;
        diag_error(s->d, arg->span, "@requires: %s does not hold in this variant (%lld %s %lld)",
                   span_text(s, arg->span), (long long)v[0], op, (long long)v[1]);
      }
    }
  }
}

/* The contracts the runtime checks: those not decided by the constants. */
static void fill_requires(Sema *s, Attrs *at, KernelInfo *info) {
  for (int r = 0; r < at->requires.len; r++) {
    Node *a = at->requires.items[r];
    for (int i = 0; i < a->list.len && info->nrequires < MAX_REQUIRES; i++) {
      Node *arg = a->list.items[i];
      int64_t v;
      if (sema_eval_const_quiet(s, arg->a, &v) == 1 && sema_eval_const_quiet(s, arg->b, &v) == 1) continue;
      int c = info->nrequires++;
      info->requires_op[c] = contract_op(arg);
      info->requires_text[c][0] = span_text(s, arg->span);
      info->requires_text[c][1] = span_text(s, arg->a->span);
      info->requires_text[c][2] = span_text(s, arg->b->span);
      int64_t steps = 0;
      info->requires_prog[c][0] = contract_program(s, arg->a, &steps);
      info->requires_prog[c][1] = contract_program(s, arg->b, &steps);
    }
  }
}

static Define *find_define(Sema *s, const char *name) {
  for (int i = 0; i < s->opts->ndefines; i++)
    if (strcmp(s->opts->defines[i].name, name) == 0) return &s->opts->defines[i];
  return NULL;
}

static void declare_const(Sema *s, const char *name, Span span, const char *text, int64_t ival) {
  Symbol *y = sema_declare(s, SYM_CONST, name, NULL, span);
  if (!y) return;
  if (text) {
    char *end;
    const char *digits = text[0] == '-' || text[0] == '+' ? text + 1 : text;
    bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
    long long v = strtoll(text, &end, hex ? 16 : 10);
    if (*end == 0) {
      y->ival = v;
    } else {
      y->const_float = true;
      y->fval = strtod(text, NULL);
    }
  } else {
    y->ival = ival;
  }
  /* a constant adopts the type it meets, as a literal does */
  y->ty = sema_scalar_ty(s, y->const_float ? S_F32 : (y->ival < INT32_MIN || y->ival > INT32_MAX) ? S_I64 : S_I32);
  y->ty->literal = true;
}

/* Declares parameters and the dims they name. A dim named like a constant
 * is pinned to it; a dim named twice is the same value (checked at launch). */
static void declare_params(Sema *s, Node *k) {
  int nscratch = 0;
  for (int i = 0; i < k->list.len; i++) {
    Node *p = k->list.items[i];
    bool scratch = p->op == PARAM_SCRATCH;
    s->scratch_param = scratch ? p->name : NULL;
    Type *t = sema_resolve_type(s, p->type, true);
    s->scratch_param = NULL;
    if (scratch && t->kind == TY_SCALAR) {
      diag_error(s->d, p->type->span, "@scratch declares tensors: '%s' is a %s", p->name, sema_ty_str(s, t));
      static Type bad = {.kind = TY_ERROR};
      t = &bad;
    }
    if (scratch && ++nscratch == MAX_SCRATCH + 1)
      diag_error(s->d, p->span, "kernel '%s' declares more than %d scratch tensors", k->name, MAX_SCRATCH);
    for (int j = 0; scratch && t->kind == TY_TENSOR && j < p->type->list.len; j++) {
      Node *dn = p->type->list.items[j];
      if (dn->kind != N_NAME && dn->kind != N_INT) check_names(s, dn, false, true);
    }
    if (scratch && p->a && !((p->a->kind == N_INT && p->a->ival == 0) || (p->a->kind == N_FLOAT && p->a->fval == 0)))
      diag_error(s->d, p->a->span, "@scratch: a scratch tensor starts undefined, or at zero ('= 0'); it cannot start "
                 "at another value");
    if (t->kind == TY_TENSOR) {
      for (int j = 0; j < t->rank; j++) {
        if (!t->dimname[j]) continue;
        Symbol *y = sema_lookup(s, t->dimname[j]);
        if (scratch && !y && !strchr(t->dimname[j], '.')) { /* (a synthetic name: an expression's) */
          diag_error(s->d, ((Node *)p->type->list.items[j])->span,
                     "dim '%s' of scratch tensor '%s' is neither a dim of the kernel's tensors nor a constant: the "
                     "runtime sizes scratch tensors from those", t->dimname[j], p->name);
          continue;
        }
        if (y && y->kind == SYM_CONST) {
          if (y->const_float) {
            diag_error(s->d, ((Node *)p->type->list.items[j])->span, "dim '%s' is pinned to a float constant",
                       t->dimname[j]);
            continue;
          }
          if (y->ival < 1 || y->ival > INT32_MAX) {
            diag_error(s->d, ((Node *)p->type->list.items[j])->span,
                       "dim '%s' is pinned to %lld; a tensor extent is from 1 to %d", t->dimname[j], (long long)y->ival,
                       INT32_MAX);
            continue;
          }
          t->dims[j] = y->ival;
        } else if (y && y->kind != SYM_DIM) {
          diag_error(s->d, ((Node *)p->type->list.items[j])->span, "dim '%s' is already a %s", t->dimname[j],
                     sema_sym_kind_name[y->kind]);
          if (y->span.first_line) diag_note(s->d, y->span, "'%s' is defined here", y->name);
        } else if (!y) {
          sema_declare(s, SYM_DIM, t->dimname[j], sema_scalar_ty(s, S_I32), ((Node *)p->type->list.items[j])->span);
        }
      }
    }
    p->ty = t;
    /* a tensor whose type is wrong is still a tensor: no cascade of scalar errors */
    bool tensor = t->kind == TY_TENSOR || (p->type->a && strcmp(p->type->name, "tensor") == 0);
    p->sym = sema_declare(s, tensor ? SYM_TENSOR : SYM_SCALAR, p->name, t, p->span);
    if (p->sym) p->sym->index = i;
  }
}

/* Fills the facts later stages need from the attributes, in the kernel's
 * scope of this variant (the attributes were checked already). */
static void fill_info(Sema *s, Attrs *at, KernelInfo *info) {
  int64_t v;
  /* @scratch's tensors: each dim's extent as the runtime computes it */
  info->nscratch = 0;
  for (int i = 0; i < s->kernel->list.len; i++) {
    Node *p = s->kernel->list.items[i];
    if (p->op != PARAM_SCRATCH || !p->ty || p->ty->kind != TY_TENSOR || info->nscratch == MAX_SCRATCH) continue;
    int c = info->nscratch++;
    for (int d = 0; d < p->ty->rank; d++) {
      int64_t steps = 0;
      Node *dn = p->type->list.items[d];
      info->scratch_prog[c][d] = contract_program(s, dn, &steps);
      if (steps > MAX_PROGRAM_STEPS)
        diag_error(s->d, dn->span, "@scratch: this dim is a program of %lld steps; the runtime evaluates at most %d",
                   (long long)steps, MAX_PROGRAM_STEPS);
    }
  }
  info->threads = LANG_DEFAULT_THREADS;
  if (at->launch)
    for (int i = 0; i < at->launch->list.len && i < 3; i++)
      if (sema_eval_const_quiet(s, at->launch->list.items[i], &v) == 1) {
        if (i == 0) info->threads = (int)v;
        else if (i == 1) info->min_blocks = (int)v;
        else info->max_regs = (int)v;
      }
  if (at->pipeline) {
    info->pipeline_stages = 2;
    if (at->pipeline->list.len == 1 && sema_eval_const_quiet(s, at->pipeline->list.items[0], &v) == 1)
      info->pipeline_stages = (int)v;
  }
  info->padstage = at->padstage != NULL;
  info->dynshared = at->dynshared != NULL;
  info->no_tma = at->no_tma != NULL;
  info->persistent = at->persistent != NULL;
  if (at->grid)
    for (int i = 0; i < at->grid->list.len && i < 3; i++) info->grid[info->ngrid++] = at->grid->list.items[i];
  fill_requires(s, at, info);
  if (at->aligned)
    for (int i = 0; i < at->aligned->list.len && info->naligned < 8; i++) {
      Node *arg = at->aligned->list.items[i];
      if (arg->kind == N_NAMEDARG && sema_eval_const_quiet(s, arg->a, &v) == 1) {
        info->aligned_dim[info->naligned] = arg->name;
        info->aligned_tile[info->naligned++] = v;
      }
    }
}

static void check_variant(Sema *s, Node *k, Attrs *at, const int *choice, KernelInfo *info) {
  sema_push_scope(s); /* constants */
  for (int i = 0; i < at->ntune; i++) {
    Define *def = find_define(s, at->tune[i].name);
    if (def) { /* -D pins it */
      def->used = true;
      continue;
    }
    declare_const(s, at->tune[i].name, at->tune[i].span, NULL, at->tune[i].values[choice[i]]);
  }
  for (int i = 0; i < s->opts->ndefines; i++) {
    Span none = {0};
    declare_const(s, s->opts->defines[i].name, none, s->opts->defines[i].value, 0);
    if (s->scope->syms && strcmp(s->scope->syms->name, s->opts->defines[i].name) == 0)
      s->scope->syms->define = &s->opts->defines[i];
  }
  if (info) {
    for (Symbol *y = s->scope->syms; y && info->nconsts < MAX_TUNE + 64; y = y->next) {
      int c = info->nconsts++;
      info->const_names[c] = y->name;
      info->const_values[c] = y->ival;
      info->const_is_float[c] = y->const_float;
      info->const_fvalues[c] = y->fval;
    }
  }
  sema_push_scope(s); /* parameters and dims */
  declare_params(s, k);
  check_attrs(s, at);
  int e0 = s->d->errors;
  sema_check_block(s, k->body);
  /* a kernel without @grid launches on the grid its slices imply */
  if (!at->grid && s->d->errors == e0) sema_derive_grid(s, k, info);
  if (info) fill_info(s, at, info);
  sema_pop_scope(s);
  sema_pop_scope(s);
}

/* The number of points of the space not pinned by -D; -1 when too many. */
static int64_t space_size(Sema *s, Attrs *at) {
  int64_t total = 1;
  for (int i = 0; i < at->ntune; i++)
    if (!find_define(s, at->tune[i].name)) {
      if (!ck_mul(total, at->tune[i].nvalues, &total) || total > s->opts->max_variants) return -1;
    }
  return total;
}

/* The choice of each @autotune dimension at point `index`; the last
 * dimension moves fastest. */
static void point_choice(Sema *s, Attrs *at, int64_t index, int *choice) {
  for (int i = at->ntune - 1; i >= 0; i--) {
    choice[i] = 0;
    if (find_define(s, at->tune[i].name)) continue;
    choice[i] = (int)(index % at->tune[i].nvalues);
    index /= at->tune[i].nvalues;
  }
}

static const char *point_str(Sema *s, Attrs *at, const int *choice) {
  char buf[512];
  int n = 0;
  buf[0] = 0;
  for (int i = 0; i < at->ntune && n < (int)sizeof buf - 64; i++)
    if (!find_define(s, at->tune[i].name))
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s=%lld", n ? ", " : "", at->tune[i].name,
                    (long long)at->tune[i].values[choice[i]]);
  return arena_strdup(s->arena, buf);
}

/* What a launch can pass (spec 13.3): libphobos packs each tensor as its
 * pointer and extents (1 + rank slots), each scalar in one slot, and each
 * tensor map the plan adds in two, into MF_MAX_SLOTS = 160 slots
 * (runtime/rt.h; its autotuner copies written tensors by parameter index
 * for all MF_MAX_PARAMS = 160). So a kernel takes at most MAX_PARAM_SLOTS
 * slots, 16 left for the plan's up to 8 tensor maps, and so at most as many
 * parameters; that is under 3 KB of .param space, within ptxas's 4 KB for
 * any target. */
static void check_param_bounds(Sema *s, Node *k) {
  int slots = 0, ndims = 0;
  const char *dims[MAX_DIM_NAMES];
  for (int i = 0; i < k->list.len; i++) {
    Node *p = k->list.items[i];
    if (i == MAX_PARAMS) {
      diag_error(s->d, p->span, "kernel '%s' has %d parameters; the limit is %d", k->name, k->list.len, MAX_PARAMS);
      return;
    }
    bool tensor = p->type && p->type->a && strcmp(p->type->name, "tensor") == 0;
    int rank = tensor ? (p->type->list.len < MAX_TENSOR_RANK ? p->type->list.len : MAX_TENSOR_RANK) : 0;
    /* and a launch binds at most 32 dim names (runtime.c, rt_bind) */
    for (int d = 0; d < rank; d++) {
      Node *dn = p->type->list.items[d];
      if (dn->kind != N_NAME) continue;
      int j = 0;
      while (j < ndims && strcmp(dims[j], dn->name)) j++;
      if (j < ndims) continue;
      if (ndims == MAX_DIM_NAMES) {
        diag_error(s->d, dn->span, "kernel '%s' names more than %d tensor dims ('%s' is one more); the limit is %d",
                   k->name, MAX_DIM_NAMES, dn->name, MAX_DIM_NAMES);
        return;
      }
      dims[ndims++] = dn->name;
    }
    slots += tensor ? 1 + rank : 1;
    if (slots > MAX_PARAM_SLOTS) {
      diag_error(s->d, p->span, "kernel '%s' passes more than %d values at launch: at parameter '%s' its parameters "
                 "take %d", k->name, MAX_PARAM_SLOTS, p->name, slots);
      diag_note(s->d, p->span, "a tensor takes one for its data and one for each extent, a scalar one");
      return;
    }
  }
}

/* The syntax nodes of a kernel, its attributes and parameters too,
 * counted without recursion. */
static int64_t count_nodes(Sema *s, Node *k) {
  PtrVec stack = {0};
  vec_push(s->arena, &stack, k);
  int64_t n = 0;
  while (stack.len) {
    Node *x = stack.items[--stack.len];
    n++;
    Node *kids[] = {x->a, x->b, x->c, x->type, x->body};
    for (int i = 0; i < 5; i++)
      if (kids[i]) vec_push(s->arena, &stack, kids[i]);
    for (int i = 0; i < x->list.len; i++) vec_push(s->arena, &stack, x->list.items[i]);
    for (int i = 0; i < x->attrs.len; i++) vec_push(s->arena, &stack, x->attrs.items[i]);
  }
  return n;
}

/* Whether a @requires contract over constants is false at this point:
 * the point checked quietly, its diagnostics dropped */
static bool point_infeasible(Sema *s, Node *k, Attrs *at, const int *choice) {
  Diags *saved = s->d, quiet = *s->d;
  quiet.silent = true, quiet.max_errors = 0, quiet.errors = 0, quiet.warnings = 0, quiet.stopped = false;
  s->d = &quiet;
  s->requires_false = false;
  bool later = s->later_point;
  s->later_point = true;
  check_variant(s, k, at, choice, NULL);
  s->later_point = later;
  s->d = saved;
  return s->requires_false;
}

static void check_kernel(Sema *s, Node *k) {
  s->kernel = k;
  Attrs at;
  int before = s->d->errors;
  check_param_bounds(s, k);
  if (s->d->errors > before) return;
  collect_attrs(s, k, &at);
  if (s->d->errors > before) return;
  int64_t total = space_size(s, &at);
  if (total < 0) {
    diag_error(s->d, at.autotune_first->span, "@autotune space has more than %d points", s->opts->max_variants);
    return;
  }
  /* every variant is checked, lowered, planned and emitted, and kept to
   * the end: the file's work is its kernels' sizes times their variants */
  int64_t nodes = count_nodes(s, k), work;
  if (!ck_mul(nodes, total, &work) || !ck_add(work, s->work, &work) || work > MAX_VARIANT_WORK) {
    diag_error(s->d, k->span, "kernel '%s' has %lld variant%s of %lld syntax nodes, which brings the file to more than "
               "%d variant nodes, the limit", k->name, (long long)total, total == 1 ? "" : "s", (long long)nodes,
               MAX_VARIANT_WORK);
    if (total > 1) diag_note(s->d, k->span, "fewer @autotune points, or -D pinning some, make less to compile");
    return;
  }
  s->work = work;
  int choice[MAX_TUNE];
  /* the points a @requires over constants rules out, each checked once */
  bool *out = arena_alloc(s->arena, sizeof *out * (size_t)total);
  int64_t left = 0;
  for (int64_t v = 0; v < total; v++) {
    point_choice(s, &at, v, choice);
    out[v] = total > 1 && point_infeasible(s, k, &at, choice);
    left += !out[v];
  }
  for (int64_t v = 0; v < total && !s->d->stopped; v++) {
    int e0 = s->d->errors;
    /* left out (sema_point_feasible); with none left, the first point's errors */
    if (left && out[v]) continue;
    point_choice(s, &at, v, choice);
    s->later_point = v > 0;
    check_variant(s, k, &at, choice, NULL);
    s->later_point = false;
    if (s->d->errors > e0) {
      if (total > 1)
        diag_note(s->d, k->span, "in kernel '%s' with @autotune point %s (%lld of %lld)", k->name,
                  point_str(s, &at, choice), (long long)v + 1, (long long)total);
      if (total > 1 && !left)
        diag_note(s->d, k->span, "no point of the %lld satisfies the @requires contracts over constants (a point "
                  "that fails one is left out)", (long long)total);
      return;
    }
  }
}

static void init_sema(Sema *s, Arena *a, Diags *d, SemaOptions *opts, Scope *top) {
  memset(s, 0, sizeof *s);
  s->arena = a;
  s->d = d;
  s->opts = opts;
  memset(top, 0, sizeof *top);
  s->scope = top;
  s->errors_at_start = d->errors;
  sema_new_epoch(s);
}

int sema_variant_count(Arena *a, Diags *d, Node *kernel, SemaOptions *opts) {
  Sema s;
  Scope top;
  init_sema(&s, a, d, opts, &top);
  s.kernel = kernel;
  Attrs at;
  Diags quiet = *d; /* sema_check reported these already */
  quiet.silent = true;
  quiet.max_errors = 0;
  quiet.errors = 0;
  s.d = &quiet;
  collect_attrs(&s, kernel, &at);
  int64_t total = space_size(&s, &at);
  return total < 0 || quiet.errors ? 0 : (int)total;
}

bool sema_point_feasible(Arena *a, Diags *d, Node *kernel, SemaOptions *opts, int index) {
  Sema s;
  Scope top;
  init_sema(&s, a, d, opts, &top);
  Attrs at;
  Diags quiet = *d;
  quiet.silent = true, quiet.max_errors = 0, quiet.errors = 0;
  s.d = &quiet;
  collect_attrs(&s, kernel, &at);
  int64_t total = space_size(&s, &at);
  if (quiet.errors || index < 0 || index >= total || total < 2) return true;
  int choice[MAX_TUNE];
  point_choice(&s, &at, index, choice);
  s.kernel = kernel;
  return !point_infeasible(&s, kernel, &at, choice);
}

bool sema_check_variant(Arena *a, Diags *d, Node *kernel, SemaOptions *opts, int index, KernelInfo *info) {
  Sema s;
  Scope top;
  init_sema(&s, a, d, opts, &top);
  memset(info, 0, sizeof *info);
  Attrs at;
  Diags quiet = *d; /* sema_check reported the attributes' diagnostics already */
  quiet.silent = true;
  quiet.max_errors = 0;
  quiet.errors = 0;
  s.d = &quiet;
  collect_attrs(&s, kernel, &at);
  s.d = d;
  int64_t total = space_size(&s, &at);
  if (quiet.errors || index < 0 || index >= total) return false;
  int choice[MAX_TUNE];
  point_choice(&s, &at, index, choice);
  s.kernel = kernel;
  info->kernel = kernel;
  info->index = index;
  info->count = (int)total;
  s.later_point = true; /* a re-check of a point sema_check checked: its warnings were said */
  check_variant(&s, kernel, &at, choice, info);
  return d->errors == s.errors_at_start;
}

bool sema_check(Arena *a, Diags *d, Node *program, SemaOptions *opts) {
  Sema s;
  Scope top;
  init_sema(&s, a, d, opts, &top);
  /* kernel names, hashed: 50,000 kernels were compared pairwise (12 s) */
  int cap = 16;
  while (cap < 2 * program->list.len) cap *= 2;
  Node **names = arena_alloc(a, sizeof *names * (size_t)cap);
  for (int i = 0; i < program->list.len && !d->stopped; i++) {
    Node *k = program->list.items[i];
    uint32_t h = sema_name_hash(k->name) & (uint32_t)(cap - 1);
    while (names[h] && strcmp(names[h]->name, k->name)) h = (h + 1) & (uint32_t)(cap - 1);
    if (names[h]) {
      diag_error(d, k->span, "kernel '%s' is defined twice", k->name);
      diag_note(d, names[h]->span, "first defined here");
    } else {
      names[h] = k;
    }
    check_kernel(&s, k);
  }
  /* a -D that nothing reads is most likely a typo */
  for (int i = 0; i < opts->ndefines && !d->errors; i++)
    if (!opts->defines[i].used) {
      Span none = {.file = NULL};
      diag_warning(d, none, "-D %s is not used by any kernel", opts->defines[i].name);
    }
  return d->errors == s.errors_at_start;
}
