/* contract.c: what a launch may run beyond the variants that fit their
 * shapes (spec 17.3): the kernel's launch contracts (@requires), and, for
 * phobos_launch_grid, the rule that the caller's grid is a variant's own.
 *
 * A contract is checked per variant, after the dims are bound and the grid
 * the variant would launch with is known, since its sides may use the
 * variant's constants and name the grid. A variant whose contract fails is
 * not launched: the autotuner picks among those that hold, and when none
 * does the launch is PHOBOS_BAD_SHAPE with the first failure's message.
 *
 * phobos_launch_grid (not pinned) runs only a variant whose own grid (its
 * @grid or derived grid, for these shapes) is the caller's: autotuning
 * among variants of different tiles must never launch one on a grid
 * computed for another, which leaves part of the output unwritten. A
 * pinned variant takes the caller's grid as given (an explicit override),
 * and a variant whose manifest gives no grid (older manifests) any grid. */
#include <stdio.h>
#include <string.h>

#include "rt.h"

/* Evaluates a contract's side (rt_eval_program); false with the reason in err. */
static bool eval(const phobos_kernel *k, const MfVariant *v, const MfContract *c, const MfProgram *pg,
                 const RtBinding *b, const int64_t grid[3], int64_t *out, char *err, size_t errlen) {
  RtEvalFail w;
  if (rt_eval_program(pg->ops, pg->nops, b, grid, out, &w)) return true;
  /* the variant's constants are folded into its programs: name it */
  if (w.kind == RT_EVAL_MISSING)
    snprintf(err, errlen, "kernel '%s' variant '%s': contract %s uses dim '%s', which no tensor gave", k->mf->name,
             v->entry, c->text, w.name);
  else if (!strcmp(w.op, "neg"))
    snprintf(err, errlen, "kernel '%s' variant '%s' requires %s: evaluating it overflows at 'neg' (neg %lld)",
             k->mf->name, v->entry, c->text, (long long)w.x);
  else
    snprintf(err, errlen, "kernel '%s' variant '%s' requires %s: evaluating it %s at '%s' (%lld %s %lld)", k->mf->name,
             v->entry, c->text, w.kind == RT_EVAL_ZERO ? "divides by zero" : "overflows", w.op, (long long)w.x, w.op,
             (long long)w.y);
  return false;
}

static bool holds(const char *op, int64_t x, int64_t y) {
  switch (op[0]) {
  case '=': return x == y;
  case '!': return x != y;
  case '<': return op[1] ? x <= y : x < y;
  default: return op[1] ? x >= y : x > y;
  }
}

static bool literal(const char *s) {
  if (*s == '-') s++;
  if (!*s) return false;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return false;
  return true;
}

/* The variant's contracts under `grid`: PHOBOS_OK, or PHOBOS_BAD_SHAPE
 * with "kernel 'k' requires NC >= cdiv(N, BN): NC = 3, cdiv(N, BN) = 4". */
static phobos_status check(const phobos_kernel *k, const MfVariant *v, const RtBinding *b, const int64_t grid[3],
                           char *err, size_t errlen) {
  for (int c = 0; v->requires && c < k->mf->nrequires; c++) {
    const MfContract *ct = &k->mf->requires[c];
    int64_t x, y;
    if (!eval(k, v, ct, &v->requires[c][0], b, grid, &x, err, errlen) ||
        !eval(k, v, ct, &v->requires[c][1], b, grid, &y, err, errlen))
      return PHOBOS_BAD_SHAPE;
    if (holds(ct->op, x, y)) continue;
    /* a side written as a literal is its own value */
    int n = snprintf(err, errlen, "kernel '%s' requires %s:", k->mf->name, ct->text);
    if (!literal(ct->lhs) && n >= 0 && (size_t)n < errlen)
      n += snprintf(err + n, errlen - (size_t)n, " %s = %lld", ct->lhs, (long long)x);
    if (!literal(ct->rhs) && n >= 0 && (size_t)n < errlen)
      snprintf(err + n, errlen - (size_t)n, "%s %s = %lld", literal(ct->lhs) ? "" : ",", ct->rhs, (long long)y);
    return PHOBOS_BAD_SHAPE;
  }
  return PHOBOS_OK;
}

/* The grid a variant launches with: the caller's, or its own; false when
 * its own cannot be evaluated (the launch reports that itself). */
static bool launch_grid(const phobos_kernel *k, const MfVariant *v, const RtBinding *b, int64_t grid[3]) {
  char why[256];
  if (k->explicit_grid) return memcpy(grid, k->grid, sizeof k->grid), true;
  return rt_grid(v, b, k->mod->ctx->max_grid, grid, why, sizeof why);
}

phobos_status ct_check_pinned(phobos_kernel *k, const MfVariant *v, const RtBinding *b, char *err, size_t errlen) {
  int64_t grid[3];
  if (!v->requires || !launch_grid(k, v, b, grid)) return PHOBOS_OK;
  return check(k, v, b, grid, err, errlen);
}

phobos_status ct_filter(phobos_kernel *k, const RtBinding *b, MfVariant **fits, int *nfits, char *err, size_t errlen) {
  int kept = 0, n0 = *nfits;
  phobos_status first = PHOBOS_OK;
  char msg[900] = "";
  int off = 0; /* the grids of the variants the caller's grid is not, for the message */
  for (int i = 0; i < n0; i++) {
    MfVariant *v = fits[i];
    int64_t own[3] = {1, 1, 1}, grid[3];
    char why[256];
    bool have_own = v->ngrid && rt_grid(v, b, NULL, own, why, sizeof why);
    if (k->explicit_grid && v->ngrid &&
        (!have_own || own[0] != k->grid[0] || own[1] != k->grid[1] || own[2] != k->grid[2])) {
      if (off < 4 && have_own)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%s'%s' takes (%lld, %lld, %lld)", off ? ", " : "",
                 v->name, (long long)own[0], (long long)own[1], (long long)own[2]);
      else if (off == 4)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", ...");
      off++;
      continue;
    }
    if (v->requires && launch_grid(k, v, b, grid)) {
      char e[900];
      phobos_status s = check(k, v, b, grid, e, sizeof e);
      if (s != PHOBOS_OK) {
        if (first == PHOBOS_OK) first = s, snprintf(err, errlen, "%s", e);
        continue;
      }
    }
    fits[kept++] = v;
  }
  *nfits = kept;
  if (kept) return PHOBOS_OK;
  if (first != PHOBOS_OK) return first;
  snprintf(err, errlen, "kernel '%s': no variant's own grid for these shapes is the caller's (%lld, %lld, %lld): %s; "
           "launch with phobos_launch, or pin a variant to launch it on another grid", k->mf->name,
           (long long)k->grid[0], (long long)k->grid[1], (long long)k->grid[2],
           msg[0] ? msg : "none of their grids evaluates for these shapes");
  return PHOBOS_NO_VARIANT;
}
