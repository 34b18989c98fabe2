/* ops.c: elementwise arithmetic: binary operators (with integer division
 * by constants in shifts and multiplies), the row scaling that skips a
 * factor of 1, math functions, and conversions between element types. */
#include "emitter.h"

static const char *ptx_binop(Emitter *e, const TirInst *in, Scalar s) {
  bool fl = rc_of(s) == RC_F32 || rc_of(s) == RC_F64;
  const char *t = arith_type(s);
  switch (in->aux) {
  case '+': return arena_printf(e->a, "add.%s", fl ? (rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '-': return arena_printf(e->a, "sub.%s", fl ? (rc_of(s) == RC_F64 ? "rn.f64" : "rn.f32") : t);
  case '*': return arena_printf(e->a, fl ? "mul.rn.%s" : "mul.lo.%s", t);
  case '/': return arena_printf(e->a, fl ? "div.rn.%s" : "div.%s", t);
  case '%': return arena_printf(e->a, "rem.%s", t);
  case '&': return rc_of(s) == RC_B64 ? "and.b64" : "and.b32";
  case '|': return rc_of(s) == RC_B64 ? "or.b64" : "or.b32";
  case '^': return rc_of(s) == RC_B64 ? "xor.b64" : "xor.b32";
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
  RegClass rc = rc_of(b->ty.elem);
  if (divides && b->op == TIR_CONST && b->ty.rank == 0 && (rc == RC_B32 || rc == RC_B64) && b->ival != 0)
    return arena_printf(e->a, "%lld", (long long)b->ival);
  return operand(e, b, k);
}

/* Integer a / 2^s or a % 2^s, truncating toward zero as C does, in shifts:
 * ptxas expands div.s32 by an immediate power of two into the general
 * reciprocal sequence (about twenty instructions; seen in the q8 split
 * kernel's loop for k / 32). Negative a is biased by 2^s - 1 first. False
 * for anything else (not an integer, not a positive power of two). */
static bool emit_divrem_pow2(Emitter *e, int op, Scalar os, const TirInst *b, const char *d, const char *a) {
  RegClass rc = rc_of(os);
  if ((op != '/' && op != '%') || b->op != TIR_CONST || b->ty.rank != 0 || (rc != RC_B32 && rc != RC_B64) ||
      b->ival <= 0 || (b->ival & (b->ival - 1)))
    return false;
  int sh = 0;
  while ((1LL << sh) < b->ival) sh++;
  const char *w = rc == RC_B64 ? "64" : "32";
  int bits = rc == RC_B64 ? 64 : 32;
  bool sgn = arith_type(os)[0] == 's';
  const char *t = a;
  if (sgn && sh) { /* t = a + (a < 0 ? 2^s - 1 : 0) */
    const char *x = tmp(e, rc);
    out(e, "shr.s%s %s, %s, %d;", w, x, a, bits - 1);
    out(e, "shr.u%s %s, %s, %d;", w, x, x, bits - sh);
    out(e, "add.s%s %s, %s, %s;", w, x, a, x);
    t = x;
  }
  if (op == '/') {
    out(e, "shr.%s%s %s, %s, %d;", sgn ? "s" : "u", w, d, t, sh);
  } else {
    const char *m = tmp(e, rc);
    out(e, "and.b%s %s, %s, %lld;", w, m, t, (long long)~(b->ival - 1));
    out(e, "sub.%s%s %s, %s, %s;", sgn ? "s" : "u", w, d, a, m);
  }
  return true;
}

/* x * r, x a fragment value and r a row value broadcast over it
 * (attention's acc * corr): where r is exactly 1 in every row the warp
 * holds, the product is x itself (x * 1 = x for every float), so a
 * warp-uniform branch skips the multiplies. An online softmax that moves
 * its running max only when it grows by a margin (gqa_attention.ph)
 * rescales in a few key blocks only. */
static bool emit_scale_rows(Emitter *e, const TirInst *in) {
  if (in->aux != '*' || in->ty.elem != S_F32 || e->replay || !is_frag(e, in)) return false;
  int bi = -1;
  for (int i = 0; i < 2; i++)
    if (in->args[i]->op == TIR_BROADCAST && is_rowfrag(e, in->args[i]->args[0]) && is_frag(e, in->args[1 - i])) bi = i;
  if (bi < 0) return false;
  const TirInst *r = in->args[bi]->args[0], *x = in->args[1 - bi];
  const char *one = tmp(e, RC_PRED), *all = tmp(e, RC_PRED);
  for (int j = 0; j < nregs(e, r); j++) {
    if (j) out(e, "setp.eq.and.f32 %s, %s, 0f3F800000, %s;", one, reg(e, r, j), one);
    else out(e, "setp.eq.f32 %s, %s, 0f3F800000;", one, reg(e, r, j));
  }
  out(e, "vote.sync.all.pred %s, %s, 0xffffffff;", all, one);
  int L = new_label(e);
  out(e, "@%s bra $Lunit%d;", all, L);
  for (int k = 0; k < nregs(e, in); k++)
    out(e, "mul.rn.f32 %s, %s, %s;", reg(e, in, k), reg(e, x, k), reg(e, in->args[bi], k));
  out(e, "bra.uni $Lunitd%d;", L);
  fprintf(e->body, "$Lunit%d:\n", L);
  for (int k = 0; k < nregs(e, in); k++) out(e, "mov.f32 %s, %s;", reg(e, in, k), reg(e, x, k));
  fprintf(e->body, "$Lunitd%d:\n", L);
  return true;
}

void emit_binary(Emitter *e, const TirInst *in) {
  Scalar os = in->args[0]->ty.elem;
  if (emit_scale_rows(e, in)) return;
  if (e->fused_add && e->fused_add[in->id]) { /* x + dot: the dot's accumulators started at x */
    const TirInst *dot = in->args[0]->op == TIR_DOT ? in->args[0] : in->args[1];
    for (int k = 0; k < nregs(e, in); k++)
      out(e, "mov.%s %s, %s;", mov_type(rc_of(in->ty.elem)), reg(e, in, k), reg(e, dot, k));
    return;
  }
  const char *opn = ast_op_name(in->aux);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *b = divisor(e, in, in->args[1], k), *d = reg(e, in, k);
    const char *cmp = cmp_name(in->aux);
    if (cmp) {
      const char *p = tmp(e, RC_PRED);
      const char *ct = os == S_BOOL ? "u32" : arith_type(os);
      out(e, "setp.%s.%s %s, %s, %s;", cmp, ct, p, a, b);
      out(e, "selp.u32 %s, 1, 0, %s;", d, p);
      continue;
    }
    if (opn && (!strcmp(opn, "&&") || !strcmp(opn, "||"))) {
      out(e, "%s.b32 %s, %s, %s;", opn[0] == '&' ? "and" : "or", d, a, b);
      continue;
    }
    if (opn && (!strcmp(opn, "<<") || !strcmp(opn, ">>"))) {
      const char *sh = tmp(e, RC_B32);
      if (rc_of(os) == RC_B64) out(e, "cvt.u32.u64 %s, %s;", sh, b);
      else out(e, "mov.b32 %s, %s;", sh, b);
      out(e, "min.u32 %s, %s, %d;", sh, sh, rc_of(os) == RC_B64 ? 64 : 32);
      const char *w = rc_of(os) == RC_B64 ? "64" : "32";
      if (opn[0] == '<') out(e, "shl.b%s %s, %s, %s;", w, d, a, sh);
      else out(e, "shr.%s %s, %s, %s;", os == S_U8 ? (w[0] == '6' ? "u64" : "u32") : (w[0] == '6' ? "s64" : "s32"), d, a, sh);
      round_reg(e, in->ty.elem, d);
      continue;
    }
    if (in->aux == TOP_CDIV) {
      /* (a + b - 1) / b for a >= 0, a / b otherwise (as the interpreter) */
      const char *t = arith_type(os), *q = tmp(e, rc_of(os)), *p = tmp(e, RC_PRED);
      out(e, "add.%s %s, %s, %s;", t, q, a, b);
      out(e, "sub.%s %s, %s, 1;", t, q, q);
      out(e, "setp.lt.%s %s, %s, 0;", t, p, a);
      out(e, "selp.%s %s, %s, %s, %s;", rc_of(os) == RC_B64 ? "b64" : "b32", q, a, q, p);
      out(e, "div.%s %s, %s, %s;", t, d, q, b);
      continue;
    }
    if (emit_divrem_pow2(e, in->aux, os, in->args[1], d, a)) {
      round_reg(e, in->ty.elem, d);
      continue;
    }
    const char *op = ptx_binop(e, in, os);
    if (!op) return unsupported(e, in, "this operator");
    out(e, "%s %s, %s, %s;", op, d, a, b);
    round_reg(e, in->ty.elem, d);
  }
}

void emit_math(Emitter *e, const TirInst *in) {
  if (rc_of(in->ty.elem) == RC_F64) return unsupported(e, in, "exp, exp2, log, sqrt and tanh on f64");
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *d = reg(e, in, k);
    switch (in->aux) {
    case TMATH_EXP:
      /* .ftz: results under 2^-126 are 0, which spares the subnormal
       * rescaling ex2.approx.f32 otherwise wraps around the MUFU (a compare,
       * two selects and a multiply) */
      out(e, "mul.f32 %s, %s, 0f3FB8AA3B;", d, a); /* log2(e) */
      out(e, "ex2.approx.ftz.f32 %s, %s;", d, d);
      break;
    case TMATH_EXP2: /* the softmax's own base: no multiply (see exp) */
      out(e, "ex2.approx.ftz.f32 %s, %s;", d, a);
      break;
    case TMATH_LOG:
      out(e, "lg2.approx.f32 %s, %s;", d, a);
      out(e, "mul.f32 %s, %s, 0f3F317218;", d, d); /* ln(2) */
      break;
    case TMATH_SQRT: out(e, "sqrt.rn.f32 %s, %s;", d, a); break;
    case TMATH_TANH: {
      /* 1 - 2 / (exp(2x) + 1), saturating for large |x| */
      const char *t = tmp(e, RC_F32);
      out(e, "mul.f32 %s, %s, 0f4038AA3B;", t, a); /* 2 log2(e) */
      out(e, "ex2.approx.f32 %s, %s;", t, t);
      out(e, "add.f32 %s, %s, 0f3F800000;", t, t);
      out(e, "rcp.rn.f32 %s, %s;", t, t);
      out(e, "fma.rn.f32 %s, %s, 0fC0000000, 0f3F800000;", d, t);
      break;
    }
    }
    round_reg(e, in->ty.elem, d);
  }
}

void emit_convert(Emitter *e, const TirInst *in) {
  Scalar from = in->args[0]->ty.elem, to = in->ty.elem;
  RegClass rf = rc_of(from), rt = rc_of(to);
  struct Pending *pd = fusable_convert(e, in);
  if (pd) {
    /* bytes of packed words to floats, two instructions a byte: prmt puts
     * the byte (plus 128 when signed: the xor, once a word) under the
     * exponent of 2^23, and a subtraction takes that float off */
    int V = e->V;
    for (int j = 0; j < pd->rows; j++) {
      const char *w = pd->w[j * pd->nw];
      if (from == S_I8) {
        const char *x = tmp(e, RC_B32);
        out(e, "xor.b32 %s, %s, 0x80808080;", x, w);
        w = x;
      }
      for (int v = 0; v < V; v++) {
        const char *t = tmp(e, RC_B32), *d = reg(e, in, j * V + v);
        out(e, "prmt.b32 %s, %s, 0x4B000000, 0x%x;", t, w, 0x7540 | v);
        out(e, "mov.b32 %s, %s;", d, t);
        out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
        round_reg(e, to, d);
      }
    }
    *pd = e->pending[--e->npending];
    return;
  }
  bool packed = packed_by_mma(e, in);
  for (int k = 0; k < nregs(e, in); k++) {
    const char *a = operand(e, in->args[0], k), *d = reg(e, in, k);
    if (rf == rt && rf != RC_F32) {
      out(e, "mov.%s %s, %s;", mov_type(rt), d, a);
    } else if (rf == RC_F32 && rt == RC_F32) {
      out(e, "mov.f32 %s, %s;", d, a);
    } else if ((rf == RC_F32 || rf == RC_F64) && (rt == RC_F32 || rt == RC_F64)) {
      out(e, "cvt%s.%s.%s %s, %s;", rt == RC_F32 ? ".rn" : "", rt == RC_F32 ? "f32" : "f64", rf == RC_F32 ? "f32" : "f64", d, a);
    } else if (rt == RC_F32 && (from == S_I8 || from == S_U8 || from == S_BOOL)) {
      /* exact without the conversion unit (a quarter of the FMA rate): the
       * byte plus 128 (signed) as the mantissa of 2^23, minus that float */
      const char *b = tmp(e, RC_B32);
      if (from == S_I8) out(e, "add.s32 %s, %s, 0x4B000080;", b, a);
      else out(e, "or.b32 %s, %s, 0x4B000000;", b, a);
      out(e, "mov.b32 %s, %s;", d, b);
      out(e, "sub.f32 %s, %s, %s;", d, d, from == S_I8 ? "0f4B000080" : "0f4B000000");
    } else if (rt == RC_F32 || rt == RC_F64) {
      out(e, "cvt.rn.%s.%s %s, %s;", rt == RC_F32 ? "f32" : "f64", arith_type(from), d, a);
    } else if (rf == RC_F32 || rf == RC_F64) {
      /* toward zero, saturating, NaN -> 0 (cvt.rzi.sat) */
      const char *it = to == S_I64 ? "s64" : to == S_U8 ? "u32" : "s32";
      out(e, "cvt.rzi.%s.%s %s, %s;", it, rf == RC_F32 ? "f32" : "f64", d, a); /* clamps; NaN gives 0 */
      if (to == S_I8) out(e, "max.s32 %s, %s, -128; min.s32 %s, %s, 127;", d, d, d, d);
      if (to == S_U8) out(e, "min.u32 %s, %s, 255;", d, d);
    } else {
      out(e, "cvt.%s.%s %s, %s;", rt == RC_B64 ? "s64" : "s32", rf == RC_B64 ? "s64" : (from == S_U8 ? "u32" : "s32"), d, a);
    }
    if (!packed) round_reg(e, to, d);
  }
}
