/* sema.h: what sema.c (expressions, statements, scopes, constants) and
 * sema_kernel.c (attributes, parameters, variants) share; lang.h is the
 * public interface of both. */
#ifndef PHOBOS_SEMA_H
#define PHOBOS_SEMA_H

#include "lang.h"

typedef struct Scope {
  Symbol *syms;
  struct Scope *up;
} Scope;

typedef struct Sema {
  Arena *arena;
  Diags *d;
  SemaOptions *opts;
  Scope *scope;
  Node *kernel;
  int errors_at_start;
  bool quiet; /* sema_eval_const reports nothing: the caller only asks */
  Node *arrive_ok; /* the arrive call that is a let's whole initializer, being checked */
  Node *atomic_ok; /* the atomic_add or barrier call that is a whole statement, being checked */
  bool requires_false; /* check_requires found a contract over constants false at this point */
  Symbol **table;  /* the visible names, hashed (lookup) */
  int tcap, tcount;
  uint64_t epoch;  /* of the visible names (sema_new_epoch) */
  int64_t work;    /* the kernels' syntax nodes times their variants, so far (check_kernel) */
  bool later_point; /* a point past the first, or one checked again: its warnings were said once */
  const char *scratch_param; /* the @scratch tensor whose type is being resolved: its dims may be expressions */
  int loops; /* for and while loops around the statement being checked (break, continue) */
} Sema;


typedef struct Attrs {
  Node *launch, *autotune_first, *pipeline, *padstage, *aligned, *dynshared, *grid, *no_tma, *persistent;
  PtrVec requires; /* every @requires line: they add up */
  PtrVec scratch;  /* every @scratch line: they add up */
  TuneDim *tune;
  int ntune;
} Attrs;

bool sema_is_int(Scalar s);
Type *sema_scalar_ty(Sema *s, Scalar e);
const char *sema_ty_str(Sema *s, const Type *t);
void sema_new_epoch(Sema *s);
uint32_t sema_name_hash(const char *name);
void sema_push_scope(Sema *s);
void sema_pop_scope(Sema *s);
Symbol *sema_lookup(Sema *s, const char *name);
Symbol *sema_declare(Sema *s, SymKind kind, const char *name, Type *ty, Span span);
int sema_eval_const(Sema *s, Node *n, int64_t *out);
int sema_eval_const_quiet(Sema *s, Node *n, int64_t *out);
Type *sema_check_expr(Sema *s, Node *n);
Type *sema_resolve_type(Sema *s, Node *n, bool param);
void sema_check_block(Sema *s, Node *block);
extern const char *sema_sym_kind_name[];
/* sema_grid.c: the grid of a kernel without @grid, derived from its
 * slices after its body was checked (in the kernel's scope); false after
 * an error. With info, the extents go to info->grid. */
bool sema_derive_grid(Sema *s, Node *kernel, KernelInfo *info);

#endif
