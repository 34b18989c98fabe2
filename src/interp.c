/* interp.c: the CPU reference interpreter of a planned kernel.
 *
 * It runs what the GPU will run, as far as data goes: every tile value has
 * the plan's physical shape; loads fill slack lanes (past the logical
 * extent, or past the tensor's end) with zero; reductions and dot
 * contractions skip slack; stores skip it. Values the plan puts in shared
 * memory are written to a simulated shared memory at their planned offset
 * and pitch and read back from there, scratch buffers are clobbered when
 * their owner runs, and slots start as NaN. So a wrong mask, a wrong pitch,
 * or two buffers sharing bytes while both are alive shows up as a wrong
 * answer without a GPU.
 *
 * Arithmetic is done in double and rounded to the element type after every
 * operation (f16 and bf16 round to nearest even), integers wrap. */
#include "interp.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ rounding */

static double round_f16(double v) {
  if (isnan(v) || isinf(v)) return v;
  double a = fabs(v);
  if (a >= 65520.0) return v > 0 ? INFINITY : -INFINITY; /* past the largest finite half, rounded */
  int e;
  frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exp = e - 1;
  if (exp < -14) exp = -14;       /* subnormals share the smallest exponent */
  double ulp = ldexp(1.0, exp - 10);
  double q = a / ulp;
  double r = nearbyint(q);        /* the default mode: nearest, ties to even */
  return copysign(r * ulp, v);
}

static double round_bf16(double v) {
  float f = (float)v;
  if (isnan(f)) return v;
  uint32_t bits;
  memcpy(&bits, &f, 4);
  uint32_t lsb = (bits >> 16) & 1;
  bits += 0x7fff + lsb;
  bits &= 0xffff0000u;
  memcpy(&f, &bits, 4);
  return f;
}

static int64_t wrap(int64_t v, int bits, bool is_signed) {
  uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
  uint64_t u = (uint64_t)v & m;
  if (is_signed && bits < 64 && (u >> (bits - 1))) u |= ~m;
  return (int64_t)u;
}

/* every double -> int64 here: a plain cast is undefined past int64 (a
 * float operand of a binop, an f32 -inf) */
static int64_t i64(double v) { return tir_float_to_int(v, S_I64); }

double interp_round(Scalar e, double v) {
  switch (e) {
  case S_F16: return round_f16(v);
  case S_BF16: return round_bf16(v);
  case S_F32: return (double)(float)v;
  case S_F64: return v;
  case S_I8: return (double)wrap(i64(v), 8, true);
  case S_U8: return (double)wrap(i64(v), 8, false);
  case S_I32: return (double)wrap(i64(v), 32, true);
  case S_I64: return v;
  case S_BOOL: return v != 0;
  case S_NONE: break;
  }
  return v;
}

/* ------------------------------------------------------------- values */

typedef struct Val {
  int rank;
  int64_t phys[MAX_TILE_RANK];
  int64_t n; /* physical elements */
  double *d;
} Val;

typedef struct Interp {
  int jump;         /* a break (1) or continue (2) leaving blocks up to its loop */
  const Plan *p;
  const TirFunc *f;
  InterpArg *args;
  int nargs;
  int64_t *dims;    /* per param and dim: bound extents */
  Val **vals;       /* by instruction id */
  unsigned char *smem;
  int64_t block[3], grid[3];
  int64_t cta;           /* the running CTA's number */
  int64_t **writer;      /* per tensor param: which CTA (+1) stored each element */
  char *err;
  size_t errlen;
  bool failed;
  struct GridRun *grun;  /* a kernel with grid_barrier: its CTAs run in turns (run_grid) */
  int64_t slot;          /* ... this CTA's turn */
} Interp;

static bool fail(Interp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(Interp *I, const char *fmt, ...) {
  if (!I->failed) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(I->err, I->errlen, fmt, ap);
    va_end(ap);
  }
  I->failed = true;
  return false;
}

static Val *new_val(const TirInst *in) {
  Val *v = calloc(1, sizeof *v);
  if (!v) diag_ice("interp: out of memory");
  v->rank = in->ty.rank;
  v->n = 1;
  for (int i = 0; i < v->rank; i++) {
    v->phys[i] = in->plan ? in->plan->phys[i] : in->ty.dims[i];
    v->n *= v->phys[i];
  }
  v->d = calloc((size_t)v->n, sizeof(double));
  if (!v->d) diag_ice("interp: out of memory for %lld elements", (long long)v->n);
  return v;
}

static void free_val(Val *v) {
  if (!v) return;
  free(v->d);
  free(v);
}

static void set_val(Interp *I, const TirInst *in, Val *v) {
  free_val(I->vals[in->id]);
  I->vals[in->id] = v;
}

/* physical coordinates of flat index i */
static void coords(const Val *v, int64_t i, int64_t *c) {
  for (int d = v->rank - 1; d >= 0; d--) {
    c[d] = i % v->phys[d];
    i /= v->phys[d];
  }
}

static int64_t flat(const Val *v, const int64_t *c) {
  int64_t i = 0;
  for (int d = 0; d < v->rank; d++) i = i * v->phys[d] + c[d];
  return i;
}

/* ------------------------------------------------------ shared memory */

void interp_encode(unsigned char *p, Scalar e, double v) {
  switch (e) {
  case S_F16:
  case S_BF16: {
    /* stored as the 16-bit pattern of the rounded value */
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    uint16_t h;
    if (e == S_BF16) {
      h = (uint16_t)(b >> 16);
    } else {
      /* exact: v is already a half value */
      uint32_t sign = (b >> 16) & 0x8000;
      double a = fabs(v);
      if (isnan(v)) h = 0x7e00;
      else if (isinf(v)) h = (uint16_t)(sign | 0x7c00);
      else if (a < ldexp(1.0, -14)) h = (uint16_t)(sign | (uint32_t)(a / ldexp(1.0, -24)));
      else {
        int ex;
        double m = frexp(a, &ex); /* a = m 2^ex */
        h = (uint16_t)(sign | (uint32_t)(ex + 14) << 10 | (uint32_t)((m * 2 - 1) * 1024));
      }
    }
    memcpy(p, &h, 2);
    return;
  }
  case S_F32: {
    float f = (float)v;
    memcpy(p, &f, 4);
    return;
  }
  case S_F64: memcpy(p, &v, 8); return;
  case S_I8:
  case S_U8:
  case S_BOOL: *p = (unsigned char)i64(v); return;
  case S_I32: {
    int32_t x = (int32_t)i64(v);
    memcpy(p, &x, 4);
    return;
  }
  case S_I64: {
    int64_t x = i64(v);
    memcpy(p, &x, 8);
    return;
  }
  case S_NONE: return;
  }
}

double interp_decode(const unsigned char *p, Scalar e) {
  switch (e) {
  case S_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    int ex = (h >> 10) & 31, m = h & 1023;
    double v = ex == 0 ? ldexp(m, -24) : ex == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, ex - 25);
    return h & 0x8000 ? -v : v;
  }
  case S_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    uint32_t b = (uint32_t)h << 16;
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  case S_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case S_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  case S_I8: return (int8_t)*p;
  case S_U8: return *p;
  case S_BOOL: return *p != 0;
  case S_I32: {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
  }
  case S_I64: {
    int64_t x;
    memcpy(&x, p, 8);
    return (double)x;
  }
  case S_NONE: break;
  }
  return 0;
}

/* byte address of an element of a buffer, at physical coordinates c */
static int64_t buf_addr(const PlanBuf *b, const int64_t *c) {
  int64_t row = 0;
  for (int d = 0; d + 1 < b->rank; d++) row = row * b->dims[d] + c[d];
  return b->offset + (row * b->pitch + c[b->rank - 1]) * sema_scalar_bytes(b->elem);
}

static void store_shared(Interp *I, const PlanBuf *b, const Val *v) {
  int64_t c[MAX_TILE_RANK];
  for (int64_t i = 0; i < v->n; i++) {
    coords(v, i, c);
    interp_encode(I->smem + buf_addr(b, c), b->elem, v->d[i]);
  }
}

static Val *load_shared(Interp *I, const PlanBuf *b, const TirInst *shape) {
  Val *v = new_val(shape);
  int64_t c[MAX_TILE_RANK];
  for (int64_t i = 0; i < v->n; i++) {
    coords(v, i, c);
    v->d[i] = interp_decode(I->smem + buf_addr(b, c), b->elem);
  }
  return v;
}

/* A scratch buffer's bytes hold nothing useful once its owner ran. */
static void clobber_scratch(Interp *I, const TirInst *owner) {
  for (int i = 0; i < I->p->nbufs; i++) {
    const PlanBuf *b = I->p->bufs[i];
    if (b->kind == BUF_SCRATCH && b->owner == owner) memset(I->smem + b->offset, 0xa5, (size_t)b->bytes);
  }
}

/* The current value of an operand: from shared memory when it lives there. */
static Val *get(Interp *I, const TirInst *x, bool *owned) {
  *owned = false;
  if (x->plan && x->plan->res == RES_SHARED && x->op != TIR_VAR) {
    *owned = true;
    return load_shared(I, x->plan->buf, x);
  }
  return I->vals[x->id];
}

/* ------------------------------------------------------------ operations */

static double scalar_of(Interp *I, const TirInst *x) {
  bool owned;
  Val *v = get(I, x, &owned);
  double r = v->d[0];
  if (owned) free_val(v);
  return r;
}

static double binop(int op, Scalar e, double a, double b) {
  bool f = tir_float_elem(e);
  int64_t x = i64(a), y = i64(b);
  switch (op) {
  case '+': return a + b;
  case '-': return a - b;
  case '*': return f ? a * b : (double)(int64_t)((uint64_t)x * (uint64_t)y);
  case '/':
    if (f) return a / b;
    if (y == 0) return 0; /* undefined on the GPU; 0 here */
    if (x == INT64_MIN && y == -1) return (double)x;
    return (double)(x / y);
  case '%':
    if (y == 0) return 0;
    if (x == INT64_MIN && y == -1) return 0;
    return (double)(x % y);
  case '<': return a < b;
  case '>': return a > b;
  case '&': return (double)(x & y);
  case '|': return (double)(x | y);
  case '^': return (double)(x ^ y);
  case TOP_MAX: return f ? fmax(a, b) : (a > b ? a : b);
  case TOP_MIN: return f ? fmin(a, b) : (a < b ? a : b);
  case TOP_CDIV:
    if (y <= 0) return 0;
    return (double)(x >= 0 ? (x + y - 1) / y : x / y);
  }
  const char *s = ast_op_name(op);
  if (!s) return 0;
  if (!strcmp(s, "==")) return a == b;
  if (!strcmp(s, "!=")) return a != b;
  if (!strcmp(s, "<=")) return a <= b;
  if (!strcmp(s, ">=")) return a >= b;
  if (!strcmp(s, "&&")) return a != 0 && b != 0;
  if (!strcmp(s, "||")) return a != 0 || b != 0;
  if (!strcmp(s, "<<")) return y < 0 || y > 63 ? 0 : (double)(int64_t)((uint64_t)x << y);
  if (!strcmp(s, ">>")) return y < 0 || y > 63 ? (x < 0 ? -1 : 0) : (double)(x >> y);
  return 0;
}

static double mathop(int m, double v) {
  switch (m) {
  case TMATH_EXP: return exp(v);
  case TMATH_LOG: return log(v);
  case TMATH_SQRT: return sqrt(v);
  case TMATH_TANH: return tanh(v);
  case TMATH_EXP2: return exp2(v);
  case TMATH_ROUND: return nearbyint(v); /* to nearest, ties to even: cvt.rni */
  }
  return v;
}

/* the element of src at the coordinates of an output element, broadcasting
 * NumPy-style (trailing dims aligned; an extent-1 dim repeats) */
static double bcast_at(const Val *src, const TirInst *sx, int out_rank, const int64_t *c) {
  if (src->rank == 0) return src->d[0];
  int64_t sc[MAX_TILE_RANK];
  for (int d = 0; d < src->rank; d++) {
    int64_t cd = c[out_rank - src->rank + d];
    if (sx->ty.dims[d] == 1) cd = 0;
    if (cd >= src->phys[d]) return 0; /* slack of a narrower physical shape */
    sc[d] = cd;
  }
  return src->d[flat(src, sc)];
}

static bool exec_block(Interp *I, const TirBlock *b);

/* start values and lengths of an access's subscripts */
static void sub_starts(Interp *I, const TirInst *in, int64_t *start) {
  for (int i = 0; i < in->nsubs; i++) start[i] = i64(scalar_of(I, in->subs[i].start));
}

static int64_t tensor_dim(Interp *I, int param, int d) { return I->dims[param * MAX_TENSOR_RANK + d]; }

static int64_t tensor_offset(Interp *I, int param, const int64_t *g) {
  const InterpTensor *t = &I->args[param].t;
  int64_t off = 0;
  for (int d = 0; d < t->rank; d++) off = off * t->dims[d] + g[d];
  return off;
}

/* Global coordinates of output element c of a load or store; false when
 * the lane is slack (past the logical extent) or past the tensor's end. */
static bool global_coords(Interp *I, const TirInst *in, const int64_t *start, const int64_t *c, int64_t *g) {
  int k = 0;
  for (int i = 0; i < in->nsubs; i++) {
    int64_t off = 0;
    if (!in->subs[i].point) {
      off = c[k++];
#ifndef PHOBOS_BREAK_SLACK_MASK /* tests/test_mutation.c proves the suite notices */
      if (off >= in->subs[i].len) return false; /* slack: masked */
#endif
    }
    g[i] = start[i] + off;
    if (g[i] < 0 || g[i] >= tensor_dim(I, in->aux, i)) return false; /* past the tensor: masked */
  }
  return true;
}

static bool exec_load(Interp *I, const TirInst *in) {
  Val *v = new_val(in);
  int64_t start[MAX_TENSOR_RANK], c[MAX_TILE_RANK] = {0}, g[MAX_TENSOR_RANK];
  sub_starts(I, in, start);
  const InterpTensor *t = &I->args[in->aux].t;
  for (int64_t i = 0; i < v->n; i++) {
    coords(v, i, c);
    v->d[i] = global_coords(I, in, start, c, g) ? t->data[tensor_offset(I, in->aux, g)] : 0.0;
  }
  if (in->plan && in->plan->res == RES_SHARED) store_shared(I, in->plan->buf, v);
  set_val(I, in, v);
  return true;
}

static bool grid_wait(Interp *I, const TirInst *in, double *counter, double *generation);
static int64_t *writers(Interp *I, int param);

/* The element of an atomic (TIR_ARRIVE), or NULL after reporting it
 * outside its tensor. */
static double *atomic_element(Interp *I, const TirInst *in, const char *what) {
  int64_t start[MAX_TENSOR_RANK];
  sub_starts(I, in, start);
  for (int d = 0; d < in->nsubs; d++)
    if (start[d] < 0 || start[d] >= tensor_dim(I, in->aux, d)) {
      fail(I, "%s's element %s is outside the tensor: index %lld of dim %d (size %lld) (%s at line %d)", what,
           I->f->params[in->aux].name, (long long)start[d], d, (long long)tensor_dim(I, in->aux, d), what,
           in->span.first_line);
      return NULL;
    }
  return &I->args[in->aux].t.data[tensor_offset(I, in->aux, start)];
}

/* atomic_add and atomic_cas of one element (spec 9.6): once a CTA, the old
 * value back. Atomics do not race with each other, only with another CTA's
 * store to the element, which exec_store reports (the writer mark -1). */
static bool exec_atomic(Interp *I, const TirInst *in) {
  Val *v = new_val(in);
  set_val(I, in, v);
  bool cas = in->aux2 == TARRIVE_CAS;
  double *c = atomic_element(I, in, cas ? "atomic_cas" : "atomic_add");
  if (!c) return false;
  Scalar e = I->f->params[in->aux].elem;
  int64_t off = c - I->args[in->aux].t.data, *w = &writers(I, in->aux)[off];
  if (*w > 0 && *w != I->cta + 1)
    return fail(I, "CTA %lld changes %s[%lld] with %s, which CTA %lld stores: a race on the GPU (line %d)",
                (long long)I->cta, I->f->params[in->aux].name, (long long)off, cas ? "atomic_cas" : "atomic_add",
                (long long)*w - 1, in->span.first_line);
  if (!*w) *w = -1;
  double old = *c, a0 = scalar_of(I, in->args[0]);
  v->d[0] = old;
  if (!cas) *c = interp_round(e, old + interp_round(e, a0));
  else if (old == a0) *c = interp_round(e, scalar_of(I, in->args[1]));
  return true;
}

/* arrive(C[g], n): the GPU's atom.inc with bound n - 1 (the counter
 * counts arrivals modulo n) on the element, true for the arrival that
 * finds n - 1 there. CTAs run one after another here, so the n-th CTA to
 * arrive reads what the others stored. An element outside the tensor is
 * reported as the program error it is (the GPU masks it: no arrival); a
 * count below 1 never arrives (nothing is counted). */
static bool exec_arrive(Interp *I, const TirInst *in) {
  Val *v = new_val(in);
  int64_t start[MAX_TENSOR_RANK];
  sub_starts(I, in, start);
  int64_t n = i64(scalar_of(I, in->args[0]));
  for (int d = 0; d < in->nsubs; d++)
    if (start[d] < 0 || start[d] >= tensor_dim(I, in->aux, d)) {
      fail(I, "arrive's counter %s is outside the tensor: index %lld of dim %d (size %lld) (arrive at line %d)",
           I->f->params[in->aux].name, (long long)start[d], d, (long long)tensor_dim(I, in->aux, d), in->span.first_line);
      set_val(I, in, v);
      return false;
    }
  if (n >= 1) {
    double *c = &I->args[in->aux].t.data[tensor_offset(I, in->aux, start)];
    uint32_t old = (uint32_t)wrap(i64(*c), 32, false);
    v->d[0] = old == (uint32_t)(n - 1);
    *c = (double)(int32_t)(old >= (uint32_t)(n - 1) ? 0u : old + 1u);
  }
  set_val(I, in, v);
  return true;
}

/* Which CTA (+1) stored each element of tensor parameter `param` (-1: CTAs
 * add into it), made at the first store or atomic. */
static int64_t *writers(Interp *I, int param) {
  if (!I->writer[param]) {
    const InterpTensor *t = &I->args[param].t;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->dims[d];
    I->writer[param] = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    if (!I->writer[param]) diag_ice("interp: out of memory");
  }
  return I->writer[param];
}

static bool exec_store(Interp *I, const TirInst *in) {
  bool owned;
  Val *v = get(I, in->args[0], &owned);
  int64_t start[MAX_TENSOR_RANK], c[MAX_TILE_RANK] = {0}, g[MAX_TENSOR_RANK];
  sub_starts(I, in, start);
  InterpTensor *t = &I->args[in->aux].t;
  Scalar e = I->f->params[in->aux].elem;
  writers(I, in->aux);
  for (int64_t i = 0; i < v->n && !I->failed; i++) {
    coords(v, i, c);
    if (!global_coords(I, in, start, c, g)) continue;
    int64_t off = tensor_offset(I, in->aux, g);
    /* two CTAs storing one element race on the GPU, whatever order runs
     * here; atomic adds (marked -1) do not race with each other, only with
     * another CTA's store */
    int64_t *w = &I->writer[in->aux][off];
    bool add = in->aux2 == TSTORE_ADD;
    if (add ? *w > 0 && *w != I->cta + 1 : *w && *w != I->cta + 1) {
      char gs[MAX_TENSOR_RANK * 24]; /* ", " and 20 digits and a sign a dim */
      int k = 0;
      for (int d = 0; d < in->nsubs && k < (int)sizeof gs; d++)
        k += snprintf(gs + k, sizeof gs - (size_t)k, "%s%lld", d ? ", " : "", (long long)g[d]);
      if (*w < 0)
        fail(I, "CTA %lld stores %s[%s], which CTAs add into with atomic_add: a race on the GPU (store at line %d)",
             (long long)I->cta, I->f->params[in->aux].name, gs, in->span.first_line);
      else if (add)
        fail(I, "CTA %lld adds into %s[%s], which CTA %lld stores: a race on the GPU (atomic_add at line %d)",
             (long long)I->cta, I->f->params[in->aux].name, gs, (long long)*w - 1, in->span.first_line);
      else
        fail(I, "CTAs %lld and %lld both store %s[%s]: a race on the GPU (store at line %d)", (long long)*w - 1,
             (long long)I->cta, I->f->params[in->aux].name, gs, in->span.first_line);
      break;
    }
    if (add) {
      if (!*w) *w = -1;
      t->data[off] = interp_round(e, t->data[off] + interp_round(e, v->d[i]));
      continue;
    }
    *w = I->cta + 1;
    t->data[off] = interp_round(e, v->d[i]);
  }
  if (owned) free_val(v);
  return true;
}

/* extract from a tile, or write into part of a slot: the element of the
 * whole at sub-tile coordinate c */
static bool sub_coords(const TirInst *in, const int64_t *start, const int64_t *c, const Val *whole,
                       const TirInst *whole_inst, int64_t *wc) {
  int k = 0;
  for (int i = 0; i < in->nsubs; i++) {
    int64_t off = 0;
    if (!in->subs[i].point) {
      off = c[k++];
      if (off >= in->subs[i].len) return false;
    }
    wc[i] = start[i] + off;
    if (wc[i] < 0 || wc[i] >= whole_inst->ty.dims[i] || wc[i] >= whole->phys[i]) return false;
  }
  return true;
}

static void exec_dot(Interp *I, const TirInst *in, const Val *a, const Val *b) {
  Val *v = new_val(in);
  const TirInst *ai = in->args[0];
  int ar = ai->ty.rank;
  int64_t K = ai->ty.dims[ar - 1]; /* logical: the contraction skips slack */
  int64_t c[MAX_TILE_RANK], ac[MAX_TILE_RANK], bc[2];
  for (int64_t i = 0; i < v->n; i++) {
    coords(v, i, c);
    int64_t n = c[ar - 1];
    double sum = 0;
    for (int d = 0; d < ar - 1; d++) ac[d] = c[d];
    bool out = false;
    for (int d = 0; d < ar - 1; d++)
      if (ac[d] >= a->phys[d]) out = true;
    for (int64_t k = 0; k < K && !out; k++) {
      ac[ar - 1] = k;
      if (in->aux) bc[0] = n, bc[1] = k;
      else bc[0] = k, bc[1] = n;
      if (bc[0] >= b->phys[0] || bc[1] >= b->phys[1]) continue;
      sum += a->d[flat(a, ac)] * b->d[flat(b, bc)];
    }
    v->d[i] = interp_round(in->ty.elem, sum);
  }
  set_val(I, in, v);
}

static bool exec_inst(Interp *I, const TirInst *in) {
  bool own[3] = {false, false, false};
  Val *a = NULL, *b = NULL, *c3 = NULL;
  if (in->op != TIR_VAR && in->op != TIR_READ && in->op != TIR_WRITE && in->op != TIR_FOR && in->op != TIR_STORE) {
    if (in->nargs > 0) a = get(I, in->args[0], &own[0]);
    if (in->nargs > 1) b = get(I, in->args[1], &own[1]);
    if (in->nargs > 2) c3 = get(I, in->args[2], &own[2]);
  }
  clobber_scratch(I, in);
  Scalar e = in->ty.elem;
  Val *v = NULL;
  int64_t c[MAX_TILE_RANK] = {0};
  switch (in->op) {
  case TIR_BREAK: I->jump = 1; break;
  case TIR_CONTINUE: I->jump = 2; break;
  case TIR_RETURN: I->jump = 3; break;
  case TIR_BARRIER: break; /* the CTA's threads are one here: nothing to wait for */
  case TIR_CONST:
    v = new_val(in);
    v->d[0] = tir_float_elem(e) ? interp_round(e, in->fval) : (double)in->ival;
    break;
  case TIR_PARAM: v = new_val(in), v->d[0] = interp_round(e, I->args[in->aux].scalar); break;
  case TIR_DIM: v = new_val(in), v->d[0] = (double)tensor_dim(I, in->aux, in->aux2); break;
  case TIR_CTX: v = new_val(in), v->d[0] = (double)(in->aux < 3 ? I->block[in->aux] : I->grid[in->aux - 3]); break;
  case TIR_UNARY:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) {
      double x = a->d[i < a->n ? i : 0];
      v->d[i] = interp_round(e, in->aux == '-' ? -x : in->aux == '!' ? (double)(x == 0) : (double)~i64(x));
    }
    break;
  case TIR_BINARY: {
    Scalar oe = in->args[0]->ty.elem;
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) v->d[i] = interp_round(e, binop(in->aux, oe, a->d[i], b->d[i]));
    break;
  }
  case TIR_MATH:
    v = new_val(in);
    if (in->aux == TMATH_FMA) /* one rounding: fmaf in f32 (then to a 16-bit type), fma in f64 */
      for (int64_t i = 0; i < v->n; i++)
        v->d[i] = e == S_F64 ? fma(a->d[i], b->d[i], c3->d[i])
                             : interp_round(e, (double)fmaf((float)a->d[i], (float)b->d[i], (float)c3->d[i]));
    else
      for (int64_t i = 0; i < v->n; i++) v->d[i] = interp_round(e, mathop(in->aux, a->d[i]));
    break;
  case TIR_CONVERT:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++)
      v->d[i] = tir_float_elem(e) ? interp_round(e, a->d[i])
                : tir_float_elem(in->args[0]->ty.elem) ? (double)tir_float_to_int(a->d[i], e)
                                                       : interp_round(e, a->d[i]);
    break;
  case TIR_SELECT:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) v->d[i] = a->d[i] != 0 ? b->d[i] : c3->d[i];
    break;
  case TIR_SPLAT:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) v->d[i] = a->d[0];
    break;
  case TIR_BROADCAST:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      v->d[i] = bcast_at(a, in->args[0], v->rank, c);
    }
    break;
  case TIR_IOTA:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      v->d[i] = (double)c[in->aux];
    }
    break;
  case TIR_REDUCE: {
    v = new_val(in);
    int r = in->ty.rank;
    int64_t len = in->args[0]->ty.dims[r - 1]; /* logical: slack gives the identity */
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      double acc = in->aux == TRED_MAX ? -INFINITY : in->aux == TRED_MIN ? INFINITY : 0;
      bool outside = false; /* a row the input's physical shape does not have: slack */
      for (int d = 0; d < r - 1; d++) outside |= c[d] >= a->phys[d];
      for (int64_t k = 0; k < len && k < a->phys[r - 1] && !outside; k++) {
        c[r - 1] = k;
        double x = a->d[flat(a, c)];
        acc = in->aux == TRED_MAX   ? (x > acc || isnan(x) ? x : acc)
              : in->aux == TRED_MIN ? (x < acc || isnan(x) ? x : acc)
                                    : acc + x;
      }
      v->d[i] = interp_round(e, acc);
    }
    break;
  }
  case TIR_DOT: exec_dot(I, in, a, b); break;
  case TIR_SCAN: { /* down dim 0, rounded at each step as the GPU's adds are */
    v = new_val(in);
    int64_t cols = in->ty.rank == 2 ? v->phys[1] : 1;
    for (int64_t j = 0; j < cols; j++) {
      double acc = 0;
      for (int64_t r = 0; r < v->phys[0]; r++) {
        int64_t sc[2] = {r, j};
        bool inside = r < a->phys[0] && (in->ty.rank < 2 || j < a->phys[1]);
        acc = interp_round(in->ty.elem, acc + (inside ? a->d[flat(a, sc)] : 0));
        v->d[flat(v, sc)] = acc;
      }
    }
    break;
  }
  case TIR_RESHAPE: { /* logical element i of the result is the source's i, both row-major */
    v = new_val(in);
    int64_t sc[MAX_TILE_RANK];
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      bool inside = true;
      int64_t li = 0;
      for (int d = 0; d < v->rank; d++) {
        inside &= c[d] < in->ty.dims[d];
        li = li * in->ty.dims[d] + c[d];
      }
      if (!inside) continue; /* slack: 0 */
      for (int d = a->rank - 1; d >= 0; d--) sc[d] = li % in->args[0]->ty.dims[d], li /= in->args[0]->ty.dims[d];
      v->d[i] = a->d[flat(a, sc)];
    }
    break;
  }
  case TIR_TRANSPOSE:
    v = new_val(in);
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      int64_t sc[2] = {c[1], c[0]};
      v->d[i] = sc[0] < a->phys[0] && sc[1] < a->phys[1] ? a->d[flat(a, sc)] : 0;
    }
    break;
  case TIR_LOAD: exec_load(I, in); break;
  case TIR_STORE: exec_store(I, in); break;
  case TIR_ARRIVE:
    if (in->aux2 == TARRIVE_ADD || in->aux2 == TARRIVE_CAS) {
      exec_atomic(I, in);
    } else if (in->aux2 == TARRIVE_GRID) {
      set_val(I, in, new_val(in));
      double *gen = atomic_element(I, in, "grid_barrier");
      if (gen) {
        int64_t zero[MAX_TENSOR_RANK] = {0};
        grid_wait(I, in, &I->args[in->aux].t.data[tensor_offset(I, in->aux, zero)], gen);
      }
    } else {
      exec_arrive(I, in);
    }
    break;
  case TIR_EXTRACT: {
    v = new_val(in);
    int64_t start[MAX_TENSOR_RANK], wc[MAX_TILE_RANK];
    sub_starts(I, in, start);
    for (int64_t i = 0; i < v->n; i++) {
      coords(v, i, c);
      v->d[i] = sub_coords(in, start, c, a, in->args[0], wc) ? a->d[flat(a, wc)] : 0;
    }
    break;
  }
  case TIR_VAR: {
    v = new_val(in);
    /* slots start undefined: NaN for floats, a pattern for integers */
    for (int64_t i = 0; i < v->n; i++) v->d[i] = tir_float_elem(e) ? NAN : (e == S_BOOL ? 1 : -0x5a5a);
    /* a shared slot's bytes hold garbage already (poisoned at the CTA's
     * start); its buffer's life begins at its first write, not here */
    break;
  }
  case TIR_READ: {
    const TirInst *slot = in->args[0];
    if (slot->plan && slot->plan->res == RES_SHARED) {
      v = load_shared(I, slot->plan->buf, slot);
    } else {
      Val *s = I->vals[slot->id];
      v = new_val(in);
      memcpy(v->d, s->d, sizeof(double) * (size_t)v->n);
    }
    break;
  }
  case TIR_WRITE: {
    const TirInst *slot = in->args[0];
    bool shared = slot->plan && slot->plan->res == RES_SHARED;
    bool vown;
    Val *val = get(I, in->args[1], &vown);
    Val *s = shared ? load_shared(I, slot->plan->buf, slot) : I->vals[slot->id];
    if (!in->nsubs) {
      memcpy(s->d, val->d, sizeof(double) * (size_t)s->n);
    } else {
      int64_t start[MAX_TENSOR_RANK], wc[MAX_TILE_RANK];
      sub_starts(I, in, start);
      for (int64_t i = 0; i < val->n; i++) {
        coords(val, i, c);
        if (sub_coords(in, start, c, s, slot, wc)) s->d[flat(s, wc)] = val->d[i];
      }
    }
    if (shared) {
      store_shared(I, slot->plan->buf, s);
      free_val(s);
    }
    if (vown) free_val(val);
    break;
  }
  case TIR_FOR: {
    int64_t lo = i64(scalar_of(I, in->args[0])), hi = i64(scalar_of(I, in->args[1]));
    int64_t step = i64(scalar_of(I, in->args[2]));
    if (step <= 0 && lo < hi) return fail(I, "loop %s: step %lld is not positive", in->name, (long long)step);
    Val *iv = new_val(in);
    set_val(I, in, iv);
    for (int64_t k = lo; k < hi && !I->failed; k += step) {
      iv->d[0] = (double)k;
      if (!exec_block(I, &in->body)) return false;
      int j = I->jump;
      if (j == 3) break; /* return: on out of every loop */
      I->jump = 0;
      if (j == 1) break;
    }
    break;
  }
  case TIR_WHILE: {
    for (int64_t iter = 0;; iter++) {
      if (iter > 100000000) return fail(I, "a while loop ran 1e8 iterations; giving up");
      if (!exec_block(I, &in->cond)) return false;
      if (I->vals[in->cond_value->id]->d[0] == 0) break;
      if (!exec_block(I, &in->body)) return false;
      int j = I->jump;
      if (j == 3) break; /* return: on out of every loop */
      I->jump = 0;
      if (j == 1) break;
    }
    break;
  }
  case TIR_IF:
    if (!exec_block(I, a->d[0] != 0 ? &in->body : &in->body2)) return false;
    break;
  }
  if (own[0]) free_val(a);
  if (own[1]) free_val(b);
  if (own[2]) free_val(c3);
  if (v) set_val(I, in, v);
  return !I->failed;
}

static bool exec_block(Interp *I, const TirBlock *b) {
  for (int i = 0; i < b->len && !I->jump; i++) /* a break or continue skips the rest */
    if (!exec_inst(I, b->insts[i])) return false;
  return true;
}

/* Binds every symbolic dim from the tensors' shapes. */
static bool bind_dims(Interp *I) {
  const TirFunc *f = I->f;
  enum { MAX_NAMES = MAX_DIM_NAMES }; /* a kernel names at most MAX_DIM_NAMES dims (sema) */
  const char *names[MAX_NAMES];
  int64_t values[MAX_NAMES];
  int from[MAX_NAMES], nb = 0;
  for (int p = 0; p < f->nparams; p++) {
    const TirParam *tp = &f->params[p];
    if (!tp->tensor) continue;
    const InterpArg *arg = &I->args[p];
    if (!arg->tensor || arg->t.rank != tp->rank)
      return fail(I, "parameter '%s': expected a rank-%d tensor", tp->name, tp->rank);
    for (int d = 0; d < tp->rank; d++) {
      int64_t got = arg->t.dims[d];
      I->dims[p * MAX_TENSOR_RANK + d] = got;
      if (got <= 0) return fail(I, "parameter '%s' dim %d is %lld; dims must be positive", tp->name, d, (long long)got);
      if (tp->dims[d] >= 0 && got != tp->dims[d])
        return fail(I, "parameter '%s' dim %d (%s) is %lld, but this variant needs %lld", tp->name, d,
                    tp->dimname[d] ? tp->dimname[d] : "literal", (long long)got, (long long)tp->dims[d]);
      if (!tp->dimname[d]) continue;
      int k = 0;
      while (k < nb && strcmp(names[k], tp->dimname[d])) k++;
      if (k < nb && values[k] != got)
        return fail(I, "parameter '%s' dim %d (%s) is %lld, but '%s' gave %s = %lld", tp->name, d, tp->dimname[d],
                    (long long)got, f->params[from[k]].name, names[k], (long long)values[k]);
      if (k == nb && nb < MAX_NAMES) {
        names[nb] = tp->dimname[d];
        values[nb] = got;
        from[nb++] = p;
      }
    }
  }
  return true;
}

/* ------------------------------------------------------ grid_barrier */

/* A kernel with grid_barrier (spec 9.8) needs every CTA alive at once: one
 * thread a CTA, of which exactly one runs at a time (the turn passes in
 * the order the CTAs would run one after another), so the CTAs share the
 * tensors and the race marks as they do when run in sequence. A CTA at the
 * barrier passes the turn on; the last to arrive starts the next phase
 * and a new round of turns. A CTA that ends while others wait, or waits
 * after one ended, would hang the GPU: that is reported. */
typedef struct GridRun {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int64_t n, turn, arrived, ended;
  bool *done;
  bool failed;
  const TirInst *waiting_at; /* the barrier the arrived CTAs wait at */
} GridRun;

enum { INTERP_GRID_BARRIER_CTAS = 256, INTERP_CTA_STACK = 32 << 20 };

/* the next CTA's turn after slot (one that has not ended) */
static void pass_turn(GridRun *g, int64_t slot) {
  for (int64_t k = 1; k <= g->n; k++)
    if (!g->done[(slot + k) % g->n]) {
      g->turn = (slot + k) % g->n;
      break;
    }
  pthread_cond_broadcast(&g->cv);
}

/* After a phase, stores to one element by two CTAs are no race: the
 * barrier orders them. */
static void forget_writers(Interp *I) {
  for (int p = 0; p < I->f->nparams; p++)
    if (I->writer[p]) {
      int64_t n = 1;
      for (int d = 0; d < I->args[p].t.rank; d++) n *= I->args[p].t.dims[d];
      memset(I->writer[p], 0, sizeof(int64_t) * (size_t)n);
    }
}

/* The GPU's protocol on the two slots, in place under the lock: the
 * counter counts arrivals and the last one resets it and advances the
 * generation (an i32 that wraps). */
static bool grid_wait(Interp *I, const TirInst *in, double *counter, double *generation) {
  GridRun *g = I->grun;
  if (!g) diag_ice("interp: grid_barrier outside a grid run");
  pthread_mutex_lock(&g->mu);
  bool ok = !g->failed;
  if (ok && g->ended) {
    ok = fail(I, "CTA %lld waits at the grid barrier at line %d after %lld CTA%s ended without it: the GPU would "
                 "hang (every CTA must reach each grid_barrier)",
              (long long)I->cta, in->span.first_line, (long long)g->ended, g->ended == 1 ? "" : "s");
  } else if (ok && g->arrived && g->waiting_at != in) {
    ok = fail(I, "CTA %lld waits at the grid barrier at line %d while others wait at line %d: every CTA must reach "
                 "the same grid_barrier",
              (long long)I->cta, in->span.first_line, g->waiting_at->span.first_line);
  }
  if (!ok) {
    g->failed = I->failed = true;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
    return false;
  }
  g->waiting_at = in;
  *counter = (double)(int32_t)(uint32_t)((uint32_t)i64(*counter) + 1u);
  if (++g->arrived == g->n) { /* the last: the next phase */
    g->arrived = 0;
    *counter = 0;
    *generation = (double)(int32_t)(uint32_t)((uint32_t)i64(*generation) + 1u);
    forget_writers(I);
  }
  pass_turn(g, I->slot);
  while (g->turn != I->slot && !g->failed) pthread_cond_wait(&g->cv, &g->mu);
  ok = !g->failed;
  if (!ok) I->failed = true;
  pthread_mutex_unlock(&g->mu);
  return ok;
}

static void *run_cta(void *arg) {
  Interp *I = arg;
  GridRun *g = I->grun;
  pthread_mutex_lock(&g->mu);
  while (g->turn != I->slot && !g->failed) pthread_cond_wait(&g->cv, &g->mu);
  bool go = !g->failed;
  pthread_mutex_unlock(&g->mu);
  bool ok = go && exec_block(I, &I->f->body);
  pthread_mutex_lock(&g->mu);
  if (go && ok && g->arrived) {
    ok = fail(I, "CTA %lld ended while %lld CTA%s wait at the grid barrier at line %d: the GPU would hang (every CTA "
                 "must reach each grid_barrier)",
              (long long)I->cta, (long long)g->arrived, g->arrived == 1 ? "" : "s", g->waiting_at->span.first_line);
  }
  if (!ok) g->failed = true;
  g->done[I->slot] = true;
  g->ended++;
  pass_turn(g, I->slot);
  pthread_mutex_unlock(&g->mu);
  return NULL;
}

/* Every CTA on a thread of its own, in turns (GridRun). */
static bool run_grid(Interp *I) {
  const Plan *p = I->p;
  int64_t n = I->grid[0] * I->grid[1] * I->grid[2];
  if (n > INTERP_GRID_BARRIER_CTAS)
    return fail(I, "the interpreter runs a kernel with grid_barrier on at most %d CTAs; this grid has %lld",
                INTERP_GRID_BARRIER_CTAS, (long long)n);
  GridRun g = {.n = n};
  pthread_mutex_init(&g.mu, NULL);
  pthread_cond_init(&g.cv, NULL);
  g.done = calloc((size_t)n, sizeof(bool));
  Interp *ctas = calloc((size_t)n, sizeof(Interp));
  pthread_t *th = calloc((size_t)n, sizeof(pthread_t));
  if (!g.done || !ctas || !th) diag_ice("interp: out of memory");
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, INTERP_CTA_STACK);
  int64_t started = 0, unstarted = -1;
  bool ok = true;
  /* the order of the sequential run: last to first */
  for (int64_t k = 0; k < n && ok; k++) {
    int64_t id = n - 1 - k;
    Interp *c = &ctas[k];
    *c = *I;
    c->grun = &g;
    c->slot = k;
    c->cta = id;
    c->block[0] = id % I->grid[0], c->block[1] = id / I->grid[0] % I->grid[1], c->block[2] = id / (I->grid[0] * I->grid[1]);
    c->vals = calloc((size_t)I->f->ninsts + 1, sizeof(Val *));
    c->smem = malloc((size_t)p->shared_bytes + 16);
    if (!c->vals || !c->smem) diag_ice("interp: out of memory");
    memset(c->smem, 0xcd, (size_t)p->shared_bytes); /* shared memory starts as garbage */
    if (pthread_create(&th[k], &attr, run_cta, c) != 0) {
      ok = false;
      unstarted = id;
      pthread_mutex_lock(&g.mu);
      g.failed = true;
      pthread_cond_broadcast(&g.cv);
      pthread_mutex_unlock(&g.mu);
      break;
    }
    started++;
  }
  for (int64_t k = 0; k < started; k++) pthread_join(th[k], NULL);
  if (unstarted >= 0 && !(I->err && I->err[0]))
    fail(I, "the interpreter could not start a thread for CTA %lld of a kernel with grid_barrier", (long long)unstarted);
  for (int64_t k = 0; k < n; k++) {
    if (ctas[k].failed) I->failed = true;
    if (ctas[k].vals)
      for (int i = 0; i < I->f->ninsts; i++) free_val(ctas[k].vals[i]);
    free(ctas[k].vals);
    free(ctas[k].smem);
  }
  ok = ok && !g.failed;
  pthread_attr_destroy(&attr);
  pthread_mutex_destroy(&g.mu);
  pthread_cond_destroy(&g.cv);
  free(g.done);
  free(ctas);
  free(th);
  return ok;
}

bool interp_run(const Plan *p, InterpArg *args, int nargs, const int64_t *grid, char *err, size_t errlen) {
  const TirFunc *f = p->f;
  Interp I = {.p = p, .f = f, .args = args, .nargs = nargs, .err = err, .errlen = errlen};
  if (err && errlen) err[0] = 0;
  if (nargs != f->nparams) {
    fail(&I, "kernel '%s' takes %d arguments, got %d", f->name, f->nparams, nargs);
    return false;
  }
  I.dims = calloc((size_t)(f->nparams + 1) * MAX_TENSOR_RANK, sizeof(int64_t));
  I.vals = calloc((size_t)f->ninsts + 1, sizeof(Val *));
  I.smem = calloc((size_t)p->shared_bytes + 16, 1);
  I.writer = calloc((size_t)f->nparams + 1, sizeof(int64_t *));
  if (!I.dims || !I.vals || !I.smem || !I.writer) diag_ice("interp: out of memory");
  bool ok = bind_dims(&I);
  if (ok) {
    ok = exec_block(&I, &f->grid);
    for (int d = 0; d < 3; d++) I.grid[d] = 1;
    for (int d = 0; ok && d < f->ngrid; d++) {
      I.grid[d] = i64(I.vals[f->grid_value[d]->id]->d[0]);
      if (I.grid[d] <= 0) ok = fail(&I, "@grid extent %c evaluates to %lld", "xyz"[d], (long long)I.grid[d]);
    }
    if (ok && grid)
      for (int d = 0; d < 3; d++) I.grid[d] = grid[d];
    if (ok && !f->ngrid && !grid) ok = fail(&I, "kernel '%s' has no @grid and no grid was given", f->name);
  }
  if (ok && !grid && f->info->persistent && I.grid[0] > INTERP_RESIDENT_CTAS)
    I.grid[0] = INTERP_RESIDENT_CTAS; /* the CTAs a device holds at once, as the runtime's cap (spec 9.8) */
  if (ok && tir_has_grid_barrier(&f->body)) {
    ok = run_grid(&I);
    goto done;
  }
  /* CTAs run last to first: a CTA that stores outside its own tile is then
   * not hidden by a later neighbour overwriting the same elements (and the
   * writer check above names the race either way) */
  for (int64_t z = I.grid[2] - 1; ok && z >= 0; z--)
    for (int64_t y = I.grid[1] - 1; ok && y >= 0; y--)
      for (int64_t x = I.grid[0] - 1; ok && x >= 0; x--) {
        I.block[0] = x, I.block[1] = y, I.block[2] = z;
        I.cta = (z * I.grid[1] + y) * I.grid[0] + x;
        memset(I.smem, 0xcd, (size_t)p->shared_bytes); /* shared memory starts as garbage */
        I.jump = 0; /* (a return ended the CTA before) */
        ok = exec_block(&I, &f->body);
      }
done:
  for (int i = 0; i < f->ninsts; i++) free_val(I.vals[i]);
  for (int i = 0; i < f->nparams; i++) free(I.writer[i]);
  free(I.writer);
  free(I.vals);
  free(I.dims);
  free(I.smem);
  return ok;
}
