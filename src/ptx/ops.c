/* ops.c: elementwise arithmetic: binary operators (with integer division
 * by constants in shifts and multiplies), the row scaling that skips a
 * factor of 1, math functions, and conversions between element types. */
#include <string.h>

#include "emitter.h"

static const char *ptx_binop(Emitter *e, const TirInst *in, Scalar s) {
  bool fl = px_rc_of(s) == RC_F32 || px_rc_of(s) == RC_F64;
  const char *t = px_arith_type(s);
  switch (in->aux) {
  case '+': return arena_printf(e->a, "add.%s", fl ? (px_rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '-': return arena_printf(e->a, "sub.%s", fl ? (px_rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '*': return arena_printf(e->a, fl ? "mul.rn.%s" : "mul.lo.%s", t);
  case '/': return arena_printf(e->a, fl ? "div.rn.%s" : "div.%s", t);
  case '%': return arena_printf(e->a, "rem.%s", t);
  case '&': return px_rc_of(s) == RC_B64 ? "and.b64" : "and.b32";
  case '|': return px_rc_of(s) == RC_B64 ? "or.b64" : "or.b32";
  case '^': return px_rc_of(s) == RC_B64 ? "xor.b64" : "xor.b32";
  case TOP_MAX: return arena_printf(e->a, "max.%s", t);
  case TOP_MIN: return arena_printf(e->a, "min.%s", t);
  }
  return NULL;
}

static const char *cmp_name(int op) {
  switch (op) {
  case '<': return "lt";
  case '>': return "gt";
  }
  const char *s = ast_op_name(op);
  if (!s) return NULL;
  if (!strcmp(s, "<=")) return "le";
  if (!strcmp(s, ">=")) return "ge";
  if (!strcmp(s, "==")) return "eq";
  if (!strcmp(s, "!=")) return "ne";
  return NULL;
}

/* An integer divisor known at compile time goes in as an immediate: ptxas
 * turns division by an immediate into a multiply-high or shifts, but
 * expands division by a register (even one just moved from a constant) into
 * the general reciprocal sequence, about twenty instructions. */
static const char *divisor(Emitter *e, const TirInst *in, const TirInst *b, int k) {
  bool divides = in->aux == '/' || in->aux == '%' || in->aux == TOP_CDIV;
  RegClass rc = px_rc_of(b->ty.elem);
  if (divides && b->op == TIR_CONST && b->ty.rank == 0 && (rc == RC_B32 || rc == RC_B64) && b->ival != 0)
    return arena_printf(e->a, "%lld", (long long)b->ival);
  return px_operand(e, b, k);
}

/* Integer a / 2^s or a % 2^s, truncating toward zero as C does, in shifts:
 * ptxas expands div.s32 by an immediate power of two into the general
 * reciprocal sequence (about twenty instructions; seen in the q8 split
 * kernel's loop for k / 32). Negative a is biased by 2^s - 1 first. False
 * for anything else (not an integer, not a positive power of two). */
static bool emit_divrem_pow2(Emitter *e, int op, Scalar os, const TirInst *b, const char *d, const char *a) {
  RegClass rc = px_rc_of(os);
  if ((op != '/' && op != '%') || b->op != TIR_CONST || b->ty.rank != 0 || (rc != RC_B32 && rc != RC_B64) ||
      b->ival <= 0 || (b->ival & (b->ival - 1)))
    return false;
  int sh = 0;
  while ((1LL << sh) < b->ival) sh++;
  const char *w = rc == RC_B64 ? "64" : "32";
  int bits = rc == RC_B64 ? 64 : 32;
  bool sgn = px_arith_type(os)[0] == 's';
  const char *t = a;
  if (sgn && sh) { /* t = a + (a < 0 ? 2^s - 1 : 0) */
    const char *x = px_tmp(e, rc);
    px_out(e, "shr.s%s %s, %s, %d;", w, x, a, bits - 1);
    px_out(e, "shr.u%s %s, %s, %d;", w, x, x, bits - sh);
    px_out(e, "add.s%s %s, %s, %s;", w, x, a, x);
    t = x;
  }
  if (op == '/') {
    px_out(e, "shr.%s%s %s, %s, %d;", sgn ? "s" : "u", w, d, t, sh);
  } else {
    const char *m = px_tmp(e, rc);
    px_out(e, "and.b%s %s, %s, %lld;", w, m, t, (long long)~(b->ival - 1));
    px_out(e, "sub.%s%s %s, %s, %s;", sgn ? "s" : "u", w, d, a, m);
  }
  return true;
}

/* x * r, x a fragment value and r a row value broadcast over it
 * (attention's acc * corr): where r is exactly 1 in every row the warp
 * holds, the product is x itself (x * 1 = x for every float), so a
 * warp-uniform branch skips the multiplies. An online softmax that moves
 * its running max only when it grows by a margin (gqa_attention.ph)
 * rescales in a few key blocks only. */
static int scale_rows_arg(Emitter *e, const TirInst *in) {
  if (in->aux != '*' || in->ty.elem != S_F32 || e->replay || !px_is_frag(e, in)) return -1;
  int bi = -1;
  for (int i = 0; i < 2; i++)
    if (in->args[i]->op == TIR_BROADCAST && px_is_rowfrag(e, in->args[i]->args[0]) && px_is_frag(e, in->args[1 - i]))
      bi = i;
  return bi;
}

static bool emit_scale_rows(Emitter *e, const TirInst *in) {
  int bi = scale_rows_arg(e, in);
  if (bi < 0) return false;
  const TirInst *r = in->args[bi]->args[0], *x = in->args[1 - bi];
  const char *one = px_tmp(e, RC_PRED), *all = px_tmp(e, RC_PRED);
  for (int j = 0; j < px_nregs(e, r); j++) {
    if (j) px_out(e, "setp.eq.and.f32 %s, %s, 0f3F800000, %s;", one, px_reg(e, r, j), one);
    else px_out(e, "setp.eq.f32 %s, %s, 0f3F800000;", one, px_reg(e, r, j));
  }
  px_out(e, "vote.sync.all.pred %s, %s, 0xffffffff;", all, one);
  int L = px_new_label(e);
  px_out(e, "@%s bra $Lunit%d;", all, L);
  for (int k = 0; k < px_nregs(e, in); k++)
    px_out(e, "mul.rn.f32 %s, %s, %s;", px_reg(e, in, k), px_reg(e, x, k), px_reg(e, in->args[bi], k));
  px_out(e, "bra.uni $Lunitd%d;", L);
  px_label(e, "unit", L);
  for (int k = 0; k < px_nregs(e, in); k++) px_out(e, "mov.f32 %s, %s;", px_reg(e, in, k), px_reg(e, x, k));
  px_label(e, "unitd", L);
  return true;
}

/* x / r where each element's divisor is one of a few registers: a row
 * value broadcast over x by register moves (a softmax's exp(x - m) / l;
 * blocked or fragment rows), a row vector in the columns layout broadcast
 * down the rows, or a scalar splat. The source of those registers (NULL:
 * not such a division). */
static const TirInst *div_source(Emitter *e, const TirInst *in) {
  if (in->aux != '/' || px_rc_of(in->ty.elem) != RC_F32 || e->replay || in->plan->res != RES_REG) return NULL;
  const TirInst *bc = in->args[1], *r = bc->op == TIR_BROADCAST || bc->op == TIR_SPLAT ? bc->args[0] : NULL;
  if (!r || bc->plan->res != RES_REG || px_rc_of(r->ty.elem) != RC_F32) return NULL;
  if (bc->op == TIR_SPLAT) return r->ty.rank == 0 && px_nregs(e, in) > 1 ? r : NULL;
  if (px_is_frag(e, in) && px_is_frag(e, bc) && px_is_rowfrag(e, r) && r->ty.rank == in->ty.rank &&
      plan_folded_rows(r) == plan_folded_rows(in))
    return r;
  if (!plan_is_blocked(in) || !plan_broadcast_in_regs(bc) || (!plan_is_blocked_rows(r) && !plan_is_columns(r)))
    return NULL;
  /* a row vector pays off only where its registers serve several rows */
  return plan_is_columns(r) && plan_block_geom(in).reps_r < 2 ? NULL : r;
}

/* The register of the divisor's source that element k divides by. */
static int div_reg(Emitter *e, const TirInst *in, const TirInst *r, int k) {
  if (r->ty.rank == 0) return 0;
  if (px_is_frag(e, in)) {
    FragGeom g = px_frag_geom(e, in);
    return k / g.rpt / g.ntn * 2 + (k % 4 >> 1);
  }
  BlockGeom g = plan_block_geom(in);
  int per = g.V * (int)g.reps_c;
  return plan_is_columns(r) ? k % per : k / per;
}

/* ok &= |v| in [2^-60, 2^60): v's bits less 2^-60's, doubled so that the
 * sign falls out, below twice the span up to 2^60's (unsigned, so smaller
 * magnitudes wrap above it). Two integer operations a value (the doubling
 * and the offset are one IADD3), where masking the sign first took three:
 * they are a third of the division's cost an element. */
static void emit_div_range(Emitter *e, const char *ok, const char *t, const char *v) {
  px_out(e, "mov.b32 %s, %s;", t, v);
  px_out(e, "add.u32 %s, %s, %s;", t, t, t);
  px_out(e, "add.u32 %s, %s, 0xBD000000;", t, t); /* -2 * 0x21800000 */
  px_out(e, "setp.lt.and.u32 %s, %s, 0x78000000, %s;", ok, t, ok);
}

/* x / r for a divisor of a few registers (div_source), correctly rounded
 * as div.rn is but from one reciprocal a register: y = rcp.rn(r), then each element
 * q = x y, t = r q - x, q' = q - t y (two fma; the sequence ptxas expands
 * div.rn.f32 into, after its reciprocal, which it computes again for every
 * element: a MUFU.RCP and four FFMA more each, in softmax's hottest loop).
 * It is correctly rounded where nothing underflows or overflows: |r| and
 * |x| from 2^-60 to 2^60 (the checks, two integer operations an
 * element: emit_div_range); a thread for which any element or row fails (zeros, subnormals,
 * infinities, NaN, huge or tiny values) takes div.rn for all of them
 * behind a branch. */
static bool emit_div_rows(Emitter *e, const TirInst *in) {
  const TirInst *r = div_source(e, in);
  if (!r) return false;
  int nr = px_nregs(e, r), n = px_nregs(e, in);
  const char **y = arena_alloc(e->a, sizeof(char *) * (size_t)nr), *ok = px_tmp(e, RC_PRED), *u = px_tmp(e, RC_B32);
  bool *used = arena_alloc(e->a, (size_t)nr);
  memset(used, 0, (size_t)nr);
  for (int k = 0; k < n; k++) used[div_reg(e, in, r, k)] = true;
  px_out(e, "setp.eq.u32 %s, 0, 0;", ok);
  for (int j = 0; j < nr; j++) {
    if (!used[j]) continue;
    const char *b = px_reg(e, r, j);
    y[j] = px_tmp(e, RC_F32);
    px_out(e, "rcp.rn.f32 %s, %s;", y[j], b);
    emit_div_range(e, ok, u, b);
  }
  const char **av = arena_alloc(e->a, sizeof(char *) * (size_t)n); /* the dividends, read once for both paths */
  for (int k = 0; k < n; k++) {
    const char *a = av[k] = px_operand(e, in->args[0], k);
    emit_div_range(e, ok, px_tmp(e, RC_B32), a);
  }
  int L = px_new_label(e);
  px_out(e, "@!%s bra $Ldivr%d;", ok, L);
  for (int k = 0; k < n; k++) {
    int j = div_reg(e, in, r, k);
    const char *a = av[k], *d = px_reg(e, in, k), *q = px_tmp(e, RC_F32),
               *t = px_tmp(e, RC_F32), *na = px_tmp(e, RC_F32), *ny = px_tmp(e, RC_F32);
    px_out(e, "mul.rn.f32 %s, %s, %s;", q, a, y[j]);
    px_out(e, "neg.f32 %s, %s;", na, a);
    px_out(e, "fma.rn.f32 %s, %s, %s, %s;", t, px_reg(e, r, j), q, na);
    px_out(e, "neg.f32 %s, %s;", ny, y[j]);
    px_out(e, "fma.rn.f32 %s, %s, %s, %s;", d, t, ny, q);
    px_round_reg(e, in->ty.elem, d);
  }
  px_out(e, "bra $Ldivrd%d;", L);
  px_label(e, "divr", L);
  for (int k = 0; k < n; k++) {
    const char *d = px_reg(e, in, k);
    px_out(e, "div.rn.f32 %s, %s, %s;", d, av[k], px_reg(e, r, div_reg(e, in, r, k)));
    px_round_reg(e, in->ty.elem, d);
  }
  px_label(e, "divrd", L);
  return true;
}

/* A binary operation emitted over all its registers at once: folded into
 * a dot, a dot's addend, or a row scaling behind a branch. */
bool px_binary_whole(Emitter *e, const TirInst *in) {
  return in->plan->folded || scale_rows_arg(e, in) >= 0 || (e->fused_add && e->fused_add[in->id]) ||
         div_source(e, in);
}

void px_emit_binary(Emitter *e, const TirInst *in) {
  Scalar os = in->args[0]->ty.elem;
  if (in->plan->folded) return; /* acc += dot: the dot accumulated in acc's registers */
  if (emit_scale_rows(e, in)) return;
  if (emit_div_rows(e, in)) return;
  if (e->fused_add && e->fused_add[in->id]) { /* x + dot: the dot's accumulators started at x */
    const TirInst *dot = in->args[0]->op == TIR_DOT ? in->args[0] : in->args[1];
    for (int k = 0; k < px_nregs(e, in); k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(px_rc_of(in->ty.elem)), px_reg(e, in, k), px_reg(e, dot, k));
    return;
  }
  const char *opn = ast_op_name(in->aux);
  for (int k = px_kbeg(e); k < px_kend(e, px_nregs(e, in)); k++) {
    const char *a = px_operand(e, in->args[0], k), *b = divisor(e, in, in->args[1], k), *d = px_reg(e, in, k);
    const char *cmp = cmp_name(in->aux);
    if (cmp) {
      const char *p = px_tmp(e, RC_PRED);
      const char *ct = os == S_BOOL ? "u32" : px_arith_type(os);
      px_out(e, "setp.%s.%s %s, %s, %s;", cmp, ct, p, a, b);
      px_out(e, "selp.u32 %s, 1, 0, %s;", d, p);
      continue;
    }
    if (opn && (!strcmp(opn, "&&") || !strcmp(opn, "||"))) {
      px_out(e, "%s.b32 %s, %s, %s;", opn[0] == '&' ? "and" : "or", d, a, b);
      continue;
    }
    if (opn && (!strcmp(opn, "<<") || !strcmp(opn, ">>"))) {
      const char *sh = px_tmp(e, RC_B32);
      if (px_rc_of(os) == RC_B64) px_out(e, "cvt.u32.u64 %s, %s;", sh, b);
      else px_out(e, "mov.b32 %s, %s;", sh, b);
      px_out(e, "min.u32 %s, %s, %d;", sh, sh, px_rc_of(os) == RC_B64 ? 64 : 32);
      const char *w = px_rc_of(os) == RC_B64 ? "64" : "32";
      if (opn[0] == '<') px_out(e, "shl.b%s %s, %s, %s;", w, d, a, sh);
      else
        px_out(e, "shr.%s %s, %s, %s;", os == S_U8 ? (w[0] == '6' ? "u64" : "u32") : (w[0] == '6' ? "s64" : "s32"), d,
               a, sh);
      px_round_reg(e, in->ty.elem, d);
      continue;
    }
    if (in->aux == TOP_CDIV) {
      /* (a + b - 1) / b for a >= 0, a / b otherwise (as the interpreter) */
      const char *t = px_arith_type(os), *q = px_tmp(e, px_rc_of(os)), *p = px_tmp(e, RC_PRED);
      px_out(e, "add.%s %s, %s, %s;", t, q, a, b);
      px_out(e, "sub.%s %s, %s, 1;", t, q, q);
      px_out(e, "setp.lt.%s %s, %s, 0;", t, p, a);
      px_out(e, "selp.%s %s, %s, %s, %s;", px_rc_of(os) == RC_B64 ? "b64" : "b32", q, a, q, p);
      px_out(e, "div.%s %s, %s, %s;", t, d, q, b);
      continue;
    }
    if (emit_divrem_pow2(e, in->aux, os, in->args[1], d, a)) {
      px_round_reg(e, in->ty.elem, d);
      continue;
    }
    const char *op = ptx_binop(e, in, os);
    if (!op) return px_unsupported(e, in, "this operator");
    px_out(e, "%s %s, %s, %s;", op, d, a, b);
    px_round_reg(e, in->ty.elem, d);
  }
}

void px_emit_math(Emitter *e, const TirInst *in) {
  for (int k = px_kbeg(e); k < px_kend(e, px_nregs(e, in)); k++) {
    const char *a = px_operand(e, in->args[0], k), *d = px_reg(e, in, k);
    switch (in->aux) {
    case TMATH_EXP:
      /* .ftz: results under 2^-126 are 0, which spares the subnormal
       * rescaling ex2.approx.f32 otherwise wraps around the MUFU (a compare,
       * two selects and a multiply) */
      px_out(e, "mul.f32 %s, %s, 0f3FB8AA3B;", d, a); /* log2(e) */
      px_out(e, "ex2.approx.ftz.f32 %s, %s;", d, d);
      break;
    case TMATH_EXP2: /* the softmax's own base: no multiply (see exp) */
      px_out(e, "ex2.approx.ftz.f32 %s, %s;", d, a);
      break;
    case TMATH_LOG:
      px_out(e, "lg2.approx.f32 %s, %s;", d, a);
      px_out(e, "mul.f32 %s, %s, 0f3F317218;", d, d); /* ln(2) */
      break;
    case TMATH_SQRT: px_out(e, "sqrt.rn.f32 %s, %s;", d, a); break;
    case TMATH_FMA: /* one rounding; a 16-bit result rounds once more below */
      px_out(e, "fma.rn.%s %s, %s, %s, %s;", px_rc_of(in->ty.elem) == RC_F64 ? "f64" : "f32", d, a,
             px_operand(e, in->args[1], k), px_operand(e, in->args[2], k));
      break;
    case TMATH_ROUND: /* to nearest, ties to even */
      px_out(e, "cvt.rni.%s %s, %s;", px_rc_of(in->ty.elem) == RC_F64 ? "f64.f64" : "f32.f32", d, a);
      break;
    case TMATH_TANH: {
      /* 1 - 2 / (exp(2x) + 1), saturating for large |x|: exp(2x) + 1 is
       * at least 1 (or +inf), where rcp.approx is within an ulp and needs
       * no range checks; rcp.rn's checks and ex2's scaling of results below
       * 2^-126 (the tanh is -1 there either way) took 13 of the 18
       * instructions (a GELU's tanh, 12-04) */
      const char *t = px_tmp(e, RC_F32);
      px_out(e, "mul.f32 %s, %s, 0f4038AA3B;", t, a); /* 2 log2(e) */
      px_out(e, "ex2.approx.ftz.f32 %s, %s;", t, t);
      px_out(e, "add.f32 %s, %s, 0f3F800000;", t, t);
      px_out(e, "rcp.approx.ftz.f32 %s, %s;", t, t);
      px_out(e, "fma.rn.f32 %s, %s, 0fC0000000, 0f3F800000;", d, t);
      break;
    }
    }
    px_round_reg(e, in->ty.elem, d);
  }
}

void px_emit_convert(Emitter *e, const TirInst *in) {
  Scalar from = in->args[0]->ty.elem, to = in->ty.elem;
  RegClass rf = px_rc_of(from), rt = px_rc_of(to);
  struct Pending *pd = px_fusable_convert(e, in);
  if (pd && px_elem_bytes_mem(pd->elem) == 2) {
    pd->in = in; /* a widening of 16-bit floats: unpacked into its registers at its first use */
    return;
  }
  if (pd) {
    /* bytes of packed words to floats, two instructions a byte: prmt puts
     * the byte (plus 128 when signed: the xor, once a word) under the
     * exponent of 2^23, and a subtraction takes that float off */
    int V = e->V;
    for (int j = 0; j < pd->rows; j++) {
      const char *w = pd->w[j * pd->nw];
      if (from == S_I8) {
        const char *x = px_tmp(e, RC_B32);
        px_out(e, "xor.b32 %s, %s, 0x80808080;", x, w);
        w = x;
      }
      for (int v = 0; v < V; v++) {
        const char *t = px_tmp(e, RC_B32), *d = px_reg(e, in, j * V + v);
        px_out(e, "prmt.b32 %s, %s, 0x4B000000, 0x%x;", t, w, 0x7540 | v);
        px_out(e, "mov.b32 %s, %s;", d, t);
        px_out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
        px_round_reg(e, to, d);
      }
    }
    *pd = e->pending[--e->npending];
    return;
  }
  if (e->store_packed && e->store_packed[in->id]) return; /* its store rounds and packs the f32 source */
  bool packed = px_packed_by_mma(e, in);
  for (int k = px_kbeg(e); k < px_kend(e, px_nregs(e, in)); k++) {
    const char *a = px_operand(e, in->args[0], k), *d = px_reg(e, in, k);
    if (rf == rt && rf != RC_F32) {
      px_out(e, "mov.%s %s, %s;", px_mov_type(rt), d, a);
    } else if (rf == RC_F32 && rt == RC_F32) {
      px_out(e, "mov.f32 %s, %s;", d, a);
    } else if ((rf == RC_F32 || rf == RC_F64) && (rt == RC_F32 || rt == RC_F64)) {
      px_out(e, "cvt%s.%s.%s %s, %s;", rt == RC_F32 ? ".rn" : "", rt == RC_F32 ? "f32" : "f64",
             rf == RC_F32 ? "f32" : "f64", d, a);
    } else if (rt == RC_F32 && (from == S_I8 || from == S_U8 || from == S_BOOL)) {
      /* exact without the conversion unit (a quarter of the FMA rate): the
       * byte plus 128 (signed) as the mantissa of 2^23, minus that float */
      const char *b = px_tmp(e, RC_B32);
      if (from == S_I8) px_out(e, "add.s32 %s, %s, 0x4B000080;", b, a);
      else px_out(e, "or.b32 %s, %s, 0x4B000000;", b, a);
      px_out(e, "mov.b32 %s, %s;", d, b);
      px_out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
    } else if (rt == RC_F32 || rt == RC_F64) {
      px_out(e, "cvt.rn.%s.%s %s, %s;", rt == RC_F32 ? "f32" : "f64", px_arith_type(from), d, a);
    } else if (rf == RC_F32 || rf == RC_F64) {
      /* toward zero, saturating, NaN -> 0 (cvt.rzi.sat) */
      const char *it = to == S_I64 ? "s64" : to == S_U8 ? "u32" : "s32";
      px_out(e, "cvt.rzi.%s.%s %s, %s;", it, rf == RC_F32 ? "f32" : "f64", d, a); /* clamps; NaN gives 0 */
      if (to == S_I8) px_out(e, "max.s32 %s, %s, -128; min.s32 %s, %s, 127;", d, d, d, d);
      if (to == S_U8) px_out(e, "min.u32 %s, %s, 255;", d, d);
    } else {
      px_out(e, "cvt.%s.%s %s, %s;", rt == RC_B64 ? "s64" : "s32",
             rf == RC_B64 ? "s64" : (from == S_U8 ? "u32" : "s32"), d, a);
    }
    if (!packed) px_round_reg(e, to, d);
  }
}

/* A bounds select: where(c0 + iota(..) < bound, x, fill), the mask of a
 * slice's columns past a tensor's end (softmax's -inf before rowmax), its
 * test's values read by nothing else. The test costs about six
 * instructions an element as written (the iota's coordinates, the add,
 * the compare and its bool, the select's test of the bool); the select
 * computes it from the element's coordinate instead. In a loop a thread
 * whose every element passes (all of a blocked thread's columns below the
 * bound: one compare) just moves x. Outside loops (a one-pass copy's whole
 * row), where no reduction reads the select, a blocked select takes no
 * branch, each element's constant column offset compared with the
 * thread's limit: the branch's two paths met with all of the select's
 * registers live, where its elementwise readers would have taken them one
 * at a time (the Triton layer norm's where(cols < N, x - mean, 0.0) over
 * two blocks of 4096: 205 -> 162 registers). A select a reduction reads
 * holds them all at once anyway (softmax's masked x), and keeps the
 * branch: without it softmax's one-pass copies ran 4-7% slower. */
typedef struct BoundSel {
  const TirInst *lt, *add, *iota, *s_splat, *b_splat;
} BoundSel;

static bool only_use(const Emitter *e, const TirInst *x, TirOp op) {
  return x && x->op == op && e->use_count[x->id] == 1 && x->plan->res == RES_REG;
}

static bool bound_select(const Emitter *e, const TirInst *sel, BoundSel *b) {
  if (sel->op != TIR_SELECT || sel->ty.rank == 0 || sel->plan->res != RES_REG) return false;
  const TirInst *lt = sel->args[0];
  if (!only_use(e, lt, TIR_BINARY) || lt->aux != '<') return false;
  const TirInst *add = lt->args[0], *bs = lt->args[1];
  if (!only_use(e, add, TIR_BINARY) || add->aux != '+' || !only_use(e, bs, TIR_SPLAT)) return false;
  const TirInst *io = add->args[0], *ss = add->args[1];
  if (io->op != TIR_IOTA) io = add->args[1], ss = add->args[0];
  if (!only_use(e, io, TIR_IOTA) || !only_use(e, ss, TIR_SPLAT)) return false;
  const TirInst *sv = ss->args[0], *bv = bs->args[0];
  if (sv->ty.rank || bv->ty.rank || sv->ty.elem != S_I32 || bv->ty.elem != S_I32 || io->ty.elem != S_I32) return false;
  if (io->ty.rank != sel->ty.rank) return false;
  for (int d = 0; d < sel->ty.rank; d++)
    if (io->ty.dims[d] != sel->ty.dims[d] || io->plan->phys[d] != sel->plan->phys[d]) return false;
  *b = (BoundSel){lt, add, io, ss, bs};
  return true;
}

/* out[id]: the instruction lies outside every loop of block b */
static void mark_unlooped(const TirBlock *b, bool looped, bool *out) {
  for (int i = 0; i < b->len; i++) {
    const TirInst *x = b->insts[i];
    out[x->id] = !looped;
    bool in = looped || x->op == TIR_FOR || x->op == TIR_WHILE;
    mark_unlooped(&x->cond, in, out), mark_unlooped(&x->body, in, out), mark_unlooped(&x->body2, looped, out);
  }
}

void px_fold_bound_selects(Emitter *e) {
  const TirFunc *f = e->f;
  for (int i = 0; i < f->ninsts; i++) {
    BoundSel b;
    if (!bound_select(e, f->insts[i], &b)) continue;
    if (!e->folded_test) {
      e->folded_test = arena_alloc(e->a, (size_t)f->ninsts + 1);
      e->flat_select = arena_alloc(e->a, (size_t)f->ninsts + 1);
      memset(e->flat_select, 0, (size_t)f->ninsts + 1);
      mark_unlooped(&f->body, false, e->flat_select);
      /* a select a reduction reads holds every register at once anyway (a
       * softmax's masked x, read by rowmax and again after it) */
      for (int j = 0; j < f->ninsts; j++)
        if (f->insts[j] && f->insts[j]->op == TIR_REDUCE) e->flat_select[f->insts[j]->args[0]->id] = false;
    }
    e->folded_test[b.lt->id] = e->folded_test[b.add->id] = e->folded_test[b.iota->id] = true;
    e->folded_test[b.s_splat->id] = e->folded_test[b.b_splat->id] = true;
  }
}

void px_emit_select(Emitter *e, const TirInst *in) {
  RegClass rc = px_rc_of(in->ty.elem);
  int n = px_nregs(e, in), k0 = px_kbeg(e), k1 = px_kend(e, n);
  BoundSel b;
  if (!e->folded_test || !bound_select(e, in, &b)) { /* px_fold_bound_selects folded every match */
    for (int k = k0; k < k1; k++) {
      const char *c = px_operand(e, in->args[0], k), *a = px_operand(e, in->args[1], k),
                 *v = px_operand(e, in->args[2], k);
      const char *p = px_tmp(e, RC_PRED);
      px_out(e, "setp.ne.u32 %s, %s, 0;", p, c);
      px_out(e, "selp.%s %s, %s, %s, %s;", px_mov_type(rc), px_reg(e, in, k), a, v, p);
    }
    return;
  }
  int axis = (int)b.iota->aux;
  const char *s = px_reg(e, b.s_splat->args[0], 0), *bound = px_reg(e, b.b_splat->args[0], 0);
  int L = -1;
  if (plan_is_blocked(in) && axis == in->ty.rank - 1 && e->flat_select[in->id]) {
    BlockGeom g = plan_block_geom(in);
    const char *lim = px_tmp(e, RC_B32);
    px_out(e, "sub.s32 %s, %s, %s;", lim, bound, s);
    px_out(e, "sub.s32 %s, %s, %s;", lim, lim, px_blk_col_base(e, &g));
    for (int k = k0; k < k1; k++) {
      const char *p = px_tmp(e, RC_PRED);
      px_out(e, "setp.gt.s32 %s, %s, %lld;", p, lim, (long long)px_blk_col_off(&g, k));
      px_out(e, "selp.%s %s, %s, %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_operand(e, in->args[1], k),
             px_operand(e, in->args[2], k), p);
    }
    return;
  }
  if (plan_is_blocked(in) && axis == in->ty.rank - 1) {
    /* every column of this thread's below the bound: the first thread's
     * columns are its base plus constant offsets */
    BlockGeom g = plan_block_geom(in);
    int64_t maxoff = 0;
    for (int k = k0; k < k1; k++)
      if (px_blk_col_off(&g, k) > maxoff) maxoff = px_blk_col_off(&g, k);
    const char *t = px_tmp(e, RC_B32), *all = px_tmp(e, RC_PRED);
    px_out(e, "add.s32 %s, %s, %s;", t, px_blk_col_base(e, &g), s);
    px_out(e, "add.s32 %s, %s, %lld;", t, t, (long long)maxoff);
    px_out(e, "setp.lt.s32 %s, %s, %s;", all, t, bound);
    L = px_new_label(e);
    px_out(e, "@!%s bra $Lbsel%d;", all, L);
    for (int k = k0; k < k1; k++)
      px_out(e, "mov.%s %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_operand(e, in->args[1], k));
    px_out(e, "bra.uni $Lbseld%d;", L);
    px_label(e, "bsel", L);
  }
  for (int k = k0; k < k1; k++) {
    const char *c = px_elem_coord(e, in, k, axis), *t = px_tmp(e, RC_B32), *p = px_tmp(e, RC_PRED);
    px_out(e, "add.s32 %s, %s, %s;", t, c, s);
    px_out(e, "setp.lt.s32 %s, %s, %s;", p, t, bound);
    px_out(e, "selp.%s %s, %s, %s, %s;", px_mov_type(rc), px_reg(e, in, k), px_operand(e, in->args[1], k),
           px_operand(e, in->args[2], k), p);
  }
  if (L >= 0) px_label(e, "bseld", L);
}
