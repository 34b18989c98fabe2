/* testutil.h: running the front end on strings, for the unit tests. */
#ifndef PHOBOS_TESTUTIL_H
#define PHOBOS_TESTUTIL_H

#include "driver.h"

/* Results live until the test process exits (each Criterion test forks). */
typedef struct Run {
  char *out;  /* tokens, AST */
  char *diag; /* diagnostics, plain mode */
  int errors;
  Node *program;
} Run;

Run run_tokens(const char *text);
Run run_parse(const char *text);
Run run_check(const char *text); /* parse, then sema with no -D */
/* An expression or statement tree as an S-expression: (+ a (* b c)). */
char *sexpr(const Node *n);
/* The first statement of the first kernel's body. */
Node *first_stmt(Node *program);
/* Reads a whole file; NULL when missing. */
char *slurp(const char *path);

#endif
