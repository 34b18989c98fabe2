/* regs.c: registers and typed access: the register classes, temporaries
 * and each value's register array, labels, the PTX types of arithmetic, the
 * rounding of narrow types after an operation, and the typed loads and
 * stores of one element (global and shared). */
#include "emitter.h"

#include <stdarg.h>
#include <string.h>

const char *px_rc_decl[] = {".f32", ".f64", ".b32", ".b64", ".pred"};
const char *px_rc_prefix[] = {"%f", "%d", "%r", "%rd", "%p"};

void px_out(Emitter *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("  ", e->body);
  vfprintf(e->body, fmt, ap);
  fputc('\n', e->body);
  va_end(ap);
}

RegClass px_rc_of(Scalar s) {
  switch (s) {
  case S_F16:
  case S_BF16:
  case S_F32: return RC_F32;
  case S_F64: return RC_F64;
  case S_I64: return RC_B64;
  default: return RC_B32;
  }
}

const char *px_tmp(Emitter *e, RegClass rc) {
  return arena_printf(e->a, "%st%d", px_rc_prefix[rc], e->ntemp[rc]++);
}

int px_new_label(Emitter *e) { return e->label++; }

/* Places label $L<name><n> (n from px_new_label; branches spell it alike). */
void px_label(Emitter *e, const char *name, int n) { fprintf(e->body, "$L%s%d:\n", name, n); }

/* the register holding element k of value `in` (k = 0 for scalars) */
const char *px_reg(Emitter *e, const TirInst *in, int k) {
  return arena_printf(e->a, "%sv%d_%d", px_rc_prefix[px_rc_of(in->ty.elem)], in->id, k);
}

void px_declare_value(Emitter *e, const TirInst *in) {
  fprintf(e->declf, "  .reg %s %sv%d_<%d>;\n", px_rc_decl[px_rc_of(in->ty.elem)], px_rc_prefix[px_rc_of(in->ty.elem)],
          in->id, px_nregs(e, in));
}

int px_log2i(int64_t v) {
  int l = 0;
  while ((1ll << l) < v) l++;
  return l;
}

/* PTX type suffixes for arithmetic in a register class */
const char *px_arith_type(Scalar s) {
  switch (s) {
  case S_F16:
  case S_BF16:
  case S_F32: return "f32";
  case S_F64: return "f64";
  case S_I64: return "s64";
  case S_U8: return "u32";
  case S_BOOL: return "u32";
  default: return "s32";
  }
}

/* Rounds a register to what its element type holds, after an operation. */
void px_round_reg(Emitter *e, Scalar s, const char *r) {
  if (s == S_F16) {
    px_out(e, "{ .reg .b16 %%h; cvt.rn.f16.f32 %%h, %s; cvt.f32.f16 %s, %%h; }", r, r);
  } else if (s == S_BF16) {
    /* cvt.rn.bf16x2.f32 (sm_80 and later, both targets) rounds to nearest
     * even and makes NaN a quiet NaN; the upper half is the bf16, whose
     * f32 is that half with zeros below: two instructions, where rounding
     * in integer arithmetic took seven */
    const char *b = px_tmp(e, RC_B32);
    px_out(e, "cvt.rn.bf16x2.f32 %s, %s, %s;", b, r, r);
    px_out(e, "and.b32 %s, %s, 0xffff0000;", b, b);
    px_out(e, "mov.b32 %s, %s;", r, b);
  } else if (s == S_I8) {
    px_out(e, "cvt.s32.s8 %s, %s;", r, r);
  } else if (s == S_U8) {
    px_out(e, "and.b32 %s, %s, 255;", r, r);
  }
}

const char *px_pname(int p, const char *what) {
  static char buf[8][64];
  static int slot;
  char *b = buf[slot++ & 7];
  snprintf(b, 64, "%s%d", what, p);
  return b;
}

int px_elem_bytes_mem(Scalar s) { return sema_scalar_bytes(s); }

const char *px_zero(RegClass rc) {
  return rc == RC_F32 ? "0f00000000" : rc == RC_F64 ? "0d0000000000000000" : "0";
}

const char *px_mov_type(RegClass rc) {
  return rc == RC_F32 ? "f32" : rc == RC_F64 ? "f64" : rc == RC_B64 ? "b64" : "b32";
}

/* How an element of each type lies in memory: the type of a load and of a
 * store of one element, and how many bytes. f16 and bf16 move as their
 * 16-bit patterns, converted to and from the f32 register that holds them
 * (chibicc's cast table, QBE's omap: each instruction spelled once). */
static const struct {
  const char *ld, *st;
} mem_type[] = {
    [S_F16] = {"u16", "u16"}, [S_BF16] = {"u16", "u16"}, [S_F32] = {"f32", "f32"}, [S_F64] = {"f64", "f64"},
    [S_I8] = {"s8", "u8"},    [S_U8] = {"u8", "u8"},     [S_I32] = {"s32", "s32"}, [S_I64] = {"s64", "s64"},
    [S_BOOL] = {"u8", "u8"},
};

const char *px_gmod(Emitter *e, const char *space) {
  if (e->l2h == L2H_NONE || strcmp(space, "global")) return "";
  e->l2h_used = true;
  return ".L2::cache_hint";
}

const char *px_gpol(Emitter *e, const char *space) {
  if (strcmp(space, "global")) return "";
  return e->l2h == L2H_LAST ? ", %l2pol_last" : e->l2h == L2H_FIRST ? ", %l2pol_first" : "";
}

/* Loads the element of type s at `addr` in `space` (global, shared) into
 * register r. Under a predicate (pred non-NULL) a 16-bit element's word is
 * zeroed first, so a lane that loads nothing converts zero. */
void px_ld(Emitter *e, const char *space, Scalar s, const char *r, const char *addr, const char *pred) {
  const char *g = pred ? arena_printf(e->a, "@%s ", pred) : "";
  const char *mod = px_gmod(e, space), *pol = px_gpol(e, space);
  if (s != S_F16 && s != S_BF16) {
    px_out(e, "%sld.%s%s.%s %s, [%s]%s;", g, space, mod, mem_type[s].ld, r, addr, pol);
    return;
  }
  const char *t = px_tmp(e, RC_B32);
  if (pred) px_out(e, "mov.b32 %s, 0;", t);
  px_out(e, "%sld.%s%s.u16 %s, [%s]%s;", g, space, mod, t, addr, pol);
  if (s == S_F16) {
    px_out(e, "{ .reg .b16 %%hl; cvt.u16.u32 %%hl, %s; cvt.f32.f16 %s, %%hl; }", t, r);
  } else { /* bf16: the pattern is the high half of its f32 */
    px_out(e, "shl.b32 %s, %s, 16;", t, t);
    px_out(e, "mov.b32 %s, %s;", r, t);
  }
}

/* Stores register r as an element of type s at `addr` in `space`. */
void px_st(Emitter *e, const char *space, Scalar s, const char *addr, const char *r, const char *pred) {
  const char *g = pred ? arena_printf(e->a, "@%s ", pred) : "";
  const char *mod = px_gmod(e, space), *pol = px_gpol(e, space);
  if (s != S_F16 && s != S_BF16) {
    px_out(e, "%sst.%s%s.%s [%s], %s%s;", g, space, mod, mem_type[s].st, addr, r, pol);
    return;
  }
  const char *t = px_tmp(e, RC_B32);
  if (s == S_F16) {
    px_out(e, "{ .reg .b16 %%hs; cvt.rn.f16.f32 %%hs, %s; cvt.u32.u16 %s, %%hs; }", r, t);
  } else {
    px_out(e, "mov.b32 %s, %s;", t, r);
    px_out(e, "shr.u32 %s, %s, 16;", t, t); /* already rounded to bf16 */
  }
  px_out(e, "%sst.%s%s.u16 [%s], %s%s;", g, space, mod, addr, t, pol);
}

/* The PTX type that moves an element of eb bytes as raw bits. */
const char *px_bits_type(int eb) { return eb == 2 ? "u16" : eb == 1 ? "u8" : eb == 8 ? "b64" : "b32"; }
