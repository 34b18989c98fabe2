/* lang.h: the internal interface of the phobos front end.
 *
 * One header, one section per file of lang/ (chibicc style). Every name
 * carries its module's prefix: arena_, diag_, lex_, parse_, ast_, sema_.
 */
#ifndef PHOBOS_LANG_H
#define PHOBOS_LANG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PHOBOS_VERSION "0.1.0"

/* ------------------------------------------------------ checked arithmetic */

/* Arithmetic on sizes, shapes, strides, grids and byte counts goes through
 * these: each returns true and sets *out when the result fits in 64 bits,
 * and false (leaving *out unspecified) when it overflows. */
static inline bool ck_add(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool ck_mul(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
/* a * b + c */
static inline bool ck_muladd(int64_t a, int64_t b, int64_t c, int64_t *out) {
  int64_t p;
  return ck_mul(a, b, &p) && ck_add(p, c, out);
}
/* The product of n extents. */
static inline bool ck_prod(const int64_t *dims, int n, int64_t *out) {
  int64_t p = 1;
  for (int i = 0; i < n; i++)
    if (!ck_mul(p, dims[i], &p)) return false;
  *out = p;
  return true;
}

/* ---------------------------------------------------------------- arena.c */

/* An arena per compilation: nodes, types and strings live until the
 * compilation ends and are freed in one go. */
typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed; never NULL (ICE on OOM) */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A growable array of pointers allocated in an arena. */
typedef struct PtrVec {
  void **items;
  int len, cap;
} PtrVec;

void vec_push(Arena *a, PtrVec *v, void *item);

/* ----------------------------------------------------------------- diag.c */

/* A source range. Lines and columns count from 1; last_column is the column
 * of the range's last character. The layout matches what bison's default
 * location code expects, plus the file name. */
typedef struct Span {
  const char *file;
  int first_line, first_column;
  int last_line, last_column;
} Span;

typedef struct Source {
  const char *name; /* as given on the command line */
  const char *text; /* NUL-terminated */
  size_t len;
} Source;

typedef enum DiagKind { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagKind;

typedef struct Diags {
  const Source *src;
  FILE *out;
  bool plain;      /* no source line and caret: stable golden files */
  int max_errors;  /* stop after this many errors (0: no limit) */
  int errors, warnings;
  bool stopped;    /* max_errors reached: later diagnostics are dropped */
  bool silent;     /* count diagnostics, print nothing (re-checks of checked code) */
  bool last_dropped; /* the last error or warning was dropped: so are its notes */
  Span last_shown;   /* span of the last diagnostic printed */
  const Source *seen_src; /* the line shown last (diag.c, line_start) */
  int seen_line;
  const char *seen_at;
} Diags;

void diag_init(Diags *d, const Source *src, FILE *out, bool plain);
void diag_error(Diags *d, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_warning(Diags *d, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_note(Diags *d, Span at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void diag_vreport(Diags *d, DiagKind kind, Span at, const char *fmt, va_list ap);
/* A note with no location ("note: in variant BQ=64"). */
void diag_note_plain(Diags *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Internal compiler error: prints the message and exits with status 4. */
_Noreturn void diag_ice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads a whole file ('-': standard input) of at most MAX_SOURCE_BYTES;
 * returns false and sets *why on failure (not a regular file, too large). */
bool source_load(Arena *a, const char *path, Source *out, const char **why);

/* -------------------------------------------------------- resource bounds */

/* What the compiler accepts, and the error at each bound (spec 13.3). */
enum {
  MAX_SOURCE_BYTES = 1 << 20, /* the input file: 1 MiB (diag.c, source_load; driver.c) */
  MAX_NEST = 256,             /* '(' and '[' open at once, and '{' open at once (lexer.l) */
  MAX_STMT_DEPTH = 1024,      /* for, while and if nested, each 'else if' inside the if before it (parser.y) */
  MAX_EXPR_DEPTH = 100000,    /* operator levels of one expression: a + b + c is 2 (parser.y) */
  /* bison's stack: what the bounds above can fill, with room to spare; a
   * longer run of prefix operators fills it, a located error too */
  PARSE_STACK = MAX_EXPR_DEPTH + 64 * MAX_NEST + 8 * MAX_STMT_DEPTH,
  MAX_PARAM_SLOTS = 144,      /* values a launch passes: 1 + rank a tensor, 1 a scalar (sema.c) */
  MAX_PARAMS = MAX_PARAM_SLOTS, /* parameters of a kernel: each passes a value at least (sema.c) */
  MAX_DIM_NAMES = 32,         /* distinct names of tensor dims in a kernel's parameters (sema.c) */
  MAX_VARIANT_WORK = 1 << 20, /* syntax nodes times variants, summed over a file's kernels (sema.c) */
  CARET_WIDTH = 160,          /* bytes of a long source line shown around a caret (diag.c) */
};

/* ------------------------------------------------------------------ AST */

typedef enum NodeKind {
  /* expressions */
  N_INT,      /* ival, text */
  N_FLOAT,    /* fval, text */
  N_BOOL,     /* ival */
  N_NAME,     /* name */
  N_UNARY,    /* op, a */
  N_BINARY,   /* op, a, b */
  N_CALL,     /* a: callee (N_NAME), list: args */
  N_NAMEDARG, /* name = a (call and attribute arguments) */
  N_INDEX,    /* a: base, list: subscripts */
  N_MEMBER,   /* a: base, name */
  N_SUB,      /* one subscript: op = SUB_*, a: start or point, b: end or length */
  /* types */
  N_TYPE,     /* name: scalar name, or "tensor"/"tile" with a: element (N_TYPE), list: dims */
  /* statements */
  N_LET,      /* name, type (may be NULL), a: init */
  N_VAR,      /* name, type (may be NULL), a: init (may be NULL) */
  N_ASSIGN,   /* op: '=' or a compound token, a: target, b: value */
  N_FOR,      /* name, a: lo, b: hi, c: step (may be NULL), body */
  N_WHILE,    /* a: cond, body */
  N_IF,       /* a: cond, body: then block, c: else (N_BLOCK or N_IF, may be NULL) */
  N_EXPR,     /* a */
  N_BREAK,    /* break: leaves the innermost loop */
  N_CONTINUE, /* continue: the innermost loop's next iteration */
  N_RETURN,   /* return: the CTA's end */
  N_BLOCK,    /* list: statements */
  /* declarations */
  N_PARAM,    /* name, type; op PARAM_SCRATCH for @scratch's (a: its fill, = 0) */
  N_ATTR,     /* name, list: arguments, has_args */
  N_ATTR_IN,  /* name in [list] */
  N_KERNEL,   /* name, list: params, attrs, body */
  N_PROGRAM,  /* list: kernels */
} NodeKind;

/* Subscript kinds. */
enum { SUB_POINT, SUB_RANGE, SUB_SPAN, SUB_FULL };

typedef struct Node Node;
typedef struct Type Type;
typedef struct Symbol Symbol;

typedef enum Scalar {
  S_F16, S_BF16, S_F32, S_F64, S_I8, S_U8, S_I32, S_I64, S_BOOL, S_NONE
} Scalar;

struct Node {
  NodeKind kind;
  Span span;
  int op;           /* operator token, subscript kind, assignment operator */
  const char *name; /* identifier of a name, member, declaration, attribute */
  const char *text; /* spelling of a literal */
  int64_t ival;
  double fval;
  bool has_args;    /* N_ATTR: written with parentheses */
  int depth;        /* expressions: operator levels below (a leaf 0); for, while, if
                       and blocks: statement levels (parser.y, the bounds above) */
  Node *a, *b, *c;
  Node *type;       /* declared type (N_TYPE) of a param, let or var */
  Node *body;       /* N_FOR, N_WHILE, N_IF, N_KERNEL */
  PtrVec list;      /* args, subscripts, statements, params, dims, kernels */
  PtrVec attrs;     /* N_KERNEL: its attributes */
  /* written by sema for the variant checked last */
  Type *ty;         /* expressions: type and static shape; let/var/param: declared */
  Symbol *sym;      /* names: what they resolve to; let/var/for/param: the symbol */
  /* sema's constant evaluation of this node (eval_const), valid while the
   * names in scope are those of epoch const_epoch */
  uint64_t const_epoch;
  int64_t const_val;
  signed char const_res;
  bool const_reported;
};

enum { PARAM_SCRATCH = 1 }; /* N_PARAM.op: a tensor of @scratch, which the runtime passes */

Node *ast_new(Arena *a, NodeKind kind, Span span);
/* Prints the tree as an indented outline, one node a line. */
void ast_print(FILE *out, const Node *program);
const char *ast_op_name(int op); /* spelling of an operator token */
int ast_cmp_op(const char *spelling); /* "==" or "!=": its token (EQ, NE), else 0 */

/* ---------------------------------------------------------- lexer.l */

/* Lexer state shared with the parser (flex's extra data). */
typedef struct LexState {
  Arena *arena;
  Diags *diags;
  const char *file;
  int line, column;  /* position of the next character */
  int depth;         /* open ( and [: newlines inside them end nothing */
  int braces;        /* open { */
  Span parens[64];   /* where the innermost open ( and [ are */
  char open_char[64]; /* and which of the two each is */
  Span brace_at[64]; /* and the innermost open { */
  int last_token;    /* kind of the last token returned (0: none yet) */
  int prev_token;    /* and of the one before it */
  Span last_span;
} LexState;

/* The token dump of --emit=tokens; returns the number of lexical errors. */
int lex_dump_tokens(Arena *a, Diags *d, const Source *src, FILE *out);
const char *lex_token_kind_name(int token);

/* --------------------------------------------------------- parser.y */

/* Parses a whole file; returns the program node, or NULL when the input held
 * errors (all reported through d). */
Node *parse_program(Arena *a, Diags *d, const Source *src);

/* ------------------------------------------------------------ sema.c */

typedef enum TyKind { TY_ERROR, TY_SCALAR, TY_TILE, TY_TENSOR } TyKind;

enum { MAX_TENSOR_RANK = 5, MAX_TILE_RANK = 3, MAX_TUNE = 64 };
/* the most @requires contracts a kernel states (libphobos reads as many, rt.h) */
enum { MAX_REQUIRES = 16 };
/* the most steps of a launch program (a grid extent, a contract's side):
 * libphobos evaluates at most this many (rt.h, MF_MAX_GRID_OPS) */
enum { MAX_PROGRAM_STEPS = 32 };
/* @scratch tensors a kernel may declare */
enum { MAX_SCRATCH = 8 };
/* the most elements a tile holds (its extents' product, each extent too) */
enum { MAX_TILE_ELEMS = 1 << 20 };

struct Type {
  TyKind kind;
  Scalar elem;
  int rank;
  int64_t dims[MAX_TENSOR_RANK];        /* tile extents; tensor: -1 where symbolic */
  const char *dimname[MAX_TENSOR_RANK]; /* tensor: the symbolic name of each dim */
  bool view;    /* a tile read from a tensor slice (staged or loaded on use) */
  bool literal; /* an untyped numeric literal: adopts the type it meets */
};

typedef enum SymKind {
  SYM_TENSOR, /* tensor parameter */
  SYM_SCALAR, /* scalar parameter */
  SYM_DIM,    /* symbolic tensor dim, known at launch */
  SYM_CONST,  /* @autotune or -D constant */
  SYM_LET,
  SYM_VAR,
  SYM_LOOP,
} SymKind;

struct Symbol {
  SymKind kind;
  const char *name;
  Type *ty;
  Span span;
  bool const_float;
  int64_t ival;
  double fval;
  int index;    /* parameters: position in the kernel's list */
  void *lowered; /* what lowering bound the name to (src/lower.c) */
  struct Define *define; /* SYM_CONST from -D: marked used when read */
  Node *init;    /* SYM_LET: its initializer (the derived grid looks through lets, sema_grid.c);
                  * SYM_LOOP: its for statement */
  unsigned char block_axes; /* bit d: the value may depend on ctx.block axis d (sema_grid.c) */
  Symbol *next; /* next symbol of the same scope */
  Symbol *hnext; /* next symbol of the same bucket of sema's name table */
};

/* One @autotune dimension and its values. */
typedef struct TuneDim {
  const char *name;
  Span span;
  int64_t *values;
  int nvalues;
} TuneDim;

const char *sema_scalar_name(Scalar s);
/* The element type two operands of a binary operation meet at (S_NONE when
 * they cannot): the rule sema checks with and lowering converts by. */
Scalar sema_join_elem(const Type *a, const Type *b);
bool sema_scalar_from_name(const char *name, Scalar *out);
int sema_scalar_bytes(Scalar s);

/* A constant from the command line: -D NAME=VALUE. */
typedef struct Define Define;
struct Define {
  const char *name;
  const char *value; /* spelling: an integer or a float */
  bool used;
};

typedef struct SemaOptions {
  Define *defines;
  int ndefines;
  int max_variants; /* largest @autotune space accepted */
  bool warn_narrowing; /* -Wnarrowing: a warning at each implicit narrowing (spec 6) */
} SemaOptions;

/* Checks every kernel, under every @autotune point; returns true when the
 * program is free of errors. */
bool sema_check(Arena *a, Diags *d, Node *program, SemaOptions *opts);

/* The threads a CTA without @launch: Phobos's default (its SPEC.md, @launch),
 * so that a Phobos kernel plans as it was written (spec 11, @launch). */
#define LANG_DEFAULT_THREADS 256

/* One point of a kernel's @autotune space, with -D constants applied: what
 * the later stages compile. Filled by sema_check_variant. */
typedef struct KernelInfo {
  Node *kernel;
  int nconsts;
  const char *const_names[MAX_TUNE + 64];
  int64_t const_values[MAX_TUNE + 64];
  bool const_is_float[MAX_TUNE + 64];
  double const_fvalues[MAX_TUNE + 64];
  int index, count;       /* this point's number and the space's size */
  int threads;            /* @launch; LANG_DEFAULT_THREADS when absent */
  int min_blocks, max_regs; /* 0: not given */
  int pipeline_stages;    /* 0: no @pipeline */
  bool padstage, dynshared;
  bool no_tma;            /* @no_tma: no asynchronous copies in this kernel (phobosc --no-tma for it alone) */
  bool keep_tile_accs;    /* phobosc --no-deferred-reductions: tile accumulators stay tiles (tileacc.c) */
  /* @persistent (spec 9.8): the runtime sizes grid axis x to the CTAs the
   * device holds at once; grid_barrier: the grid must be resident at once */
  bool persistent, grid_barrier;
  int ngrid;
  Node *grid[3];          /* @grid expressions, or the derived grid's (grid_derived), annotated */
  bool grid_derived;      /* no @grid: the grid was derived from the slices (sema_grid.c, spec 11.1) */
  int nrequires;          /* @requires contracts that are not constant (spec 11.2) */
  const char *requires_text[MAX_REQUIRES][3];  /* the contract, its left and its right side, as written */
  const char *requires_op[MAX_REQUIRES];       /* "==", "!=", "<", "<=", ">" or ">=" */
  const char *requires_prog[MAX_REQUIRES][2];  /* each side as a postfix program in this variant */
  int naligned;
  const char *aligned_dim[8];
  int64_t aligned_tile[8];
  /* @scratch (spec 11): its tensors are the kernel's last nscratch
   * parameters; each dim's extent as a postfix program over the dims, in
   * this variant (constants folded) */
  int nscratch;
  const char *scratch_prog[MAX_SCRATCH][MAX_TENSOR_RANK];
} KernelInfo;

/* The number of variants of a kernel (its @autotune space less what -D
 * pins); 0 after errors in its attributes. */
int sema_variant_count(Arena *a, Diags *d, Node *kernel, SemaOptions *opts);
/* Checks variant `index` of a kernel, annotating its AST (Node.ty, Node.sym)
 * and filling *info. Returns false on errors. */
bool sema_check_variant(Arena *a, Diags *d, Node *kernel, SemaOptions *opts, int index, KernelInfo *info);
/* Whether variant `index` can ever launch: false where one of its
 * @requires contracts is over constants alone and false at that point.
 * Such a point is left out, as one whose plan does not fit (spec 11.2,
 * 12); the kernel is an error only when no point is left. */
bool sema_point_feasible(Arena *a, Diags *d, Node *kernel, SemaOptions *opts, int index);

#endif
