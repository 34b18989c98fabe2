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
  bool quiet; /* eval_const reports nothing: the caller only asks */
  Node *arrive_ok; /* the arrive call that is a let's whole initializer, being checked */
  Symbol **table;  /* the visible names, hashed (lookup) */
  int tcap, tcount;
  uint64_t epoch;  /* of the visible names (new_epoch) */
  int64_t work;    /* the kernels' syntax nodes times their variants, so far (check_kernel) */
} Sema;


typedef struct Attrs {
  Node *launch, *autotune_first, *pipeline, *padstage, *aligned, *dynshared, *grid, *no_tma;
  TuneDim *tune;
  int ntune;
} Attrs;

bool is_int(Scalar s);
Type *scalar_ty(Sema *s, Scalar e);
const char *ty_str(Sema *s, const Type *t);
void new_epoch(Sema *s);
uint32_t name_hash(const char *name);
void push_scope(Sema *s);
void pop_scope(Sema *s);
Symbol *lookup(Sema *s, const char *name);
Symbol *declare(Sema *s, SymKind kind, const char *name, Type *ty, Span span);
int eval_const(Sema *s, Node *n, int64_t *out);
int eval_const_quiet(Sema *s, Node *n, int64_t *out);
Type *check_expr(Sema *s, Node *n);
Type *resolve_type(Sema *s, Node *n, bool param);
void check_block(Sema *s, Node *block);
extern const char *sym_kind_name[];

#endif
