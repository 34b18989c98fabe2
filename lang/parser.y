/* parser.y: the phobos grammar (pure bison parser with locations).
 *
 * The grammar builds the AST and nothing else: names, types, shapes and
 * attribute arguments are checked by sema.c. spec/LANGUAGE.md describes each
 * production. Statements end at NL (inserted by the lexer) or ';', and the
 * last statement of a block may end at its '}'. */
%define api.pure full
%define api.prefix {phx_}
%define api.location.type {Span}
%define parse.error detailed
%define parse.lac full
%locations
%expect 0

%param {void *scanner}
%parse-param {ParseCtx *ctx}

%code requires {
#include "lang.h"
typedef struct ParseCtx {
  Arena *arena;
  Diags *diags;
  LexState *lex;
  Node *program;
} ParseCtx;
}

%code provides {
void *lex_open(LexState *st, const Source *src);
void lex_close(void *scanner);
int lex_next(PHX_STYPE *val, PHX_LTYPE *loc, void *scanner);
}

%code {
#include <string.h>

#define phx_lex lex_next
#define YYMAXDEPTH PARSE_STACK
#define YYLLOC_DEFAULT(Cur, Rhs, N)                                  \
  do {                                                               \
    if (N) {                                                         \
      (Cur).file = YYRHSLOC(Rhs, 1).file;                            \
      (Cur).first_line = YYRHSLOC(Rhs, 1).first_line;                \
      (Cur).first_column = YYRHSLOC(Rhs, 1).first_column;            \
      (Cur).last_line = YYRHSLOC(Rhs, N).last_line;                  \
      (Cur).last_column = YYRHSLOC(Rhs, N).last_column;              \
    } else {                                                         \
      (Cur).file = YYRHSLOC(Rhs, 0).file;                            \
      (Cur).first_line = (Cur).last_line = YYRHSLOC(Rhs, 0).last_line; \
      (Cur).first_column = (Cur).last_column = YYRHSLOC(Rhs, 0).last_column; \
    }                                                                \
  } while (0)

static void phx_error(Span *loc, void *scanner, ParseCtx *ctx, const char *msg);

#define NEW(kind, loc) ast_new(ctx->arena, (kind), (loc))

static int deeper(int a, int b) { return a > b ? a : b; }

/* An expression node `depth` operator levels deep. Past MAX_EXPR_DEPTH no
 * more nodes are made: the expression is an error (check_depth reports it
 * once the file is parsed, with its depth), so its deepest operand stands
 * for it and counts the levels, and a long chain costs no memory. Returns
 * that operand, or a new node for the caller to fill. */
static Node *expr_node(ParseCtx *ctx, NodeKind kind, Span loc, int depth, Node *deepest) {
  if (depth > MAX_EXPR_DEPTH) {
    deepest->depth = depth;
    deepest->span = loc;
    return deepest;
  }
  Node *n = NEW(kind, loc);
  n->depth = depth;
  return n;
}

/* A for loop over range(args): the parts checked here, once for both of
 * its spellings (plain and for<unroll n>). */
static Node *for_node(ParseCtx *ctx, YYLTYPE at, const char *name, const char *range, YYLTYPE range_at, PtrVec args,
                      YYLTYPE args_at, Node *body) {
  Node *n = ast_new(ctx->arena, N_FOR, at);
  n->name = name;
  n->body = body;
  n->depth = 1 + body->depth;
  if (strcmp(range, "range") != 0) {
    diag_error(ctx->diags, range_at, "expected 'range' after 'in', found '%s'", range);
  } else if (args.len < 2 || args.len > 3) {
    diag_error(ctx->diags, args_at, "range takes 2 or 3 arguments (start, end[, step]), found %d", args.len);
  } else {
    n->a = args.items[0];
    n->b = args.items[1];
    n->c = args.len == 3 ? args.items[2] : NULL;
    for (int i = 0; i < args.len; i++)
      if (((Node *)args.items[i])->kind == N_NAMEDARG)
        diag_error(ctx->diags, ((Node *)args.items[i])->span, "range takes no named arguments");
  }
  return n;
}

static Node *binary(ParseCtx *ctx, Span loc, int op, Node *a, Node *b) {
  Node *deepest = a->depth >= b->depth ? a : b;
  Node *n = expr_node(ctx, N_BINARY, loc, 1 + deepest->depth, deepest);
  if (n == deepest) return n;
  n->op = op;
  n->a = a;
  n->b = b;
  return n;
}

static Node *unary(ParseCtx *ctx, Span loc, int op, Node *a) {
  Node *n = expr_node(ctx, N_UNARY, loc, 1 + a->depth, a);
  if (n == a) return n;
  n->op = op;
  n->a = a;
  return n;
}

static Node *list_node(ParseCtx *ctx, NodeKind kind, Span loc, PtrVec list) {
  Node *n = NEW(kind, loc);
  n->list = list;
  return n;
}

/* A call or an index: one level over its base and its arguments. */
static Node *postfix_node(ParseCtx *ctx, NodeKind kind, Span loc, Node *base, PtrVec list) {
  int depth = base->depth;
  for (int i = 0; i < list.len; i++) depth = deeper(depth, ((Node *)list.items[i])->depth);
  Node *n = expr_node(ctx, kind, loc, depth + 1, base);
  if (n == base) return n;
  n->list = list;
  n->a = base;
  return n;
}

/* A block is as deep as its deepest statement; a for, while or if one
 * level deeper than its blocks (an else-if: than the if it is the else of). */
static Node *block_node(ParseCtx *ctx, Span loc, PtrVec list) {
  Node *n = list_node(ctx, N_BLOCK, loc, list);
  for (int i = 0; i < list.len; i++) n->depth = deeper(n->depth, ((Node *)list.items[i])->depth);
  return n;
}

static PtrVec one(ParseCtx *ctx, void *item) {
  PtrVec v = {0};
  vec_push(ctx->arena, &v, item);
  return v;
}
}

%union {
  Node *node;
  const char *str;
  PtrVec vec;
  int op;
}

%token NL "end of line"
%token <str> IDENT "identifier"
%token <node> INT "integer literal"
%token <node> FLOAT "floating-point literal"
%token KERNEL "'kernel'" LET "'let'" VAR "'var'" IF "'if'" ELSE "'else'"
%token FOR "'for'" IN "'in'" WHILE "'while'" TRUE "'true'" FALSE "'false'"
%token BREAK "'break'" CONTINUE "'continue'" RETURN "'return'"
%token COLONPLUS "':+'" EQ "'=='" NE "'!='" LE "'<='" GE "'>='"
%token ANDAND "'&&'" OROR "'||'" SHL "'<<'" SHR "'>>'"
%token PLUSEQ "'+='" MINUSEQ "'-='" STAREQ "'*='" SLASHEQ "'/='"

%left OROR
%left ANDAND
%left '|'
%left '^'
%left '&'
%left EQ NE
%left '<' '>' LE GE
%left SHL SHR
%left '+' '-'
%left '*' '/' '%'
%precedence UNARY

%type <node> kernel attribute attr_arg param type stmt simple_stmt compound_stmt
%type <node> if_stmt else_opt block expr postfix primary subscript arg opt_type
%type <vec> top_items attrs attr_args params params_opt stmts args args_opt
%type <vec> subscripts exprs dims
%type <op> assign_op

%%

program
  : top_items {
      Span start = {.file = ctx->lex->file, 1, 1, 1, 1};
      ctx->program = list_node(ctx, N_PROGRAM, start, $1);
    }
  ;

top_items
  : %empty { $$ = (PtrVec){0}; }
  | top_items sep { $$ = $1; }
  | top_items kernel { $$ = $1; vec_push(ctx->arena, &$$, $2); }
  | top_items error '}' { $$ = $1; yyerrok; }
  ;

kernel
  : attrs KERNEL IDENT '(' params_opt ')' opt_nls block {
      $$ = NEW(N_KERNEL, @3);
      $$->name = $3;
      $$->attrs = $1;
      $$->list = $5;
      $$->body = $8;
      /* @scratch's tensors are parameters the runtime passes itself (spec
       * 11): after the kernel's own, marked */
      for (int i = 0; i < $1.len; i++) {
        Node *at = $1.items[i];
        if (!at->name || strcmp(at->name, "scratch") != 0) continue;
        for (int j = 0; j < at->list.len; j++) {
          Node *p = at->list.items[j];
          if (p->kind != N_PARAM) continue;
          p->op = PARAM_SCRATCH;
          vec_push(ctx->arena, &$$->list, p);
        }
      }
    }
  ;

attrs
  : %empty { $$ = (PtrVec){0}; }
  | attrs attribute opt_nls { $$ = $1; vec_push(ctx->arena, &$$, $2); }
  ;

attribute
  : '@' IDENT { $$ = NEW(N_ATTR, @$); $$->name = $2; }
  | '@' IDENT '(' ')' { $$ = NEW(N_ATTR, @$); $$->name = $2; $$->has_args = true; }
  | '@' IDENT '(' attr_args ')' {
      $$ = NEW(N_ATTR, @$);
      $$->name = $2;
      $$->has_args = true;
      $$->list = $4;
    }
  ;

attr_args
  : attr_arg { $$ = one(ctx, $1); }
  | attr_args ',' attr_arg { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

attr_arg
  : IDENT IN '[' exprs ']' { $$ = list_node(ctx, N_ATTR_IN, @$, $4); $$->name = $1; }
  | IDENT ':' type { $$ = NEW(N_PARAM, @1); $$->name = $1; $$->type = $3; }
  | IDENT ':' type '=' expr { $$ = NEW(N_PARAM, @1); $$->name = $1; $$->type = $3; $$->a = $5; }
  | IDENT '=' expr { $$ = NEW(N_NAMEDARG, @$); $$->name = $1; $$->a = $3; $$->depth = 1 + $3->depth; }
  | expr
  ;

params_opt
  : %empty { $$ = (PtrVec){0}; }
  | params
  ;

params
  : param { $$ = one(ctx, $1); }
  | params ',' param { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

param
  : IDENT ':' type { $$ = NEW(N_PARAM, @1); $$->name = $1; $$->type = $3; }
  ;

type
  : IDENT { $$ = NEW(N_TYPE, @$); $$->name = $1; }
  | IDENT '<' type '>' '[' dims ']' {
      $$ = list_node(ctx, N_TYPE, @$, $6);
      $$->name = $1;
      $$->a = $3;
    }
  ;

dims
  : expr { $$ = one(ctx, $1); }
  | dims ',' expr { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

opt_nls
  : %empty
  | opt_nls NL
  ;

sep
  : NL
  | ';'
  ;

block
  : '{' stmts '}' { $$ = block_node(ctx, @$, $2); }
  | '{' stmts stmt '}' { vec_push(ctx->arena, &$2, $3); $$ = block_node(ctx, @$, $2); }
  | '{' stmts error '}' { $$ = block_node(ctx, @$, $2); yyerrok; }
  ;

stmts
  : %empty { $$ = (PtrVec){0}; }
  | stmts sep { $$ = $1; }
  | stmts stmt sep { $$ = $1; vec_push(ctx->arena, &$$, $2); }
  | stmts error sep { $$ = $1; yyerrok; }
  | stmts error block sep { $$ = $1; yyerrok; } /* a bad header: skip its whole block */
  | stmts stray_else sep { $$ = $1; }
  ;

/* An 'else' that starts a line: the newline after '}' ended the if. Said
 * plainly here, and parsing goes on as if it were attached. */
stray_else
  : ELSE opt_nls block {
      diag_error(ctx->diags, @1, "'else' must follow the '}' of its if block on the same line");
    }
  | ELSE if_stmt {
      diag_error(ctx->diags, @1, "'else' must follow the '}' of its if block on the same line");
    }
  ;

stmt
  : simple_stmt
  | compound_stmt
  ;

simple_stmt
  : LET IDENT opt_type '=' expr {
      $$ = NEW(N_LET, @2);
      $$->name = $2;
      $$->type = $3;
      $$->a = $5;
    }
  | VAR IDENT ':' type { $$ = NEW(N_VAR, @2); $$->name = $2; $$->type = $4; }
  | VAR IDENT ':' type '=' expr {
      $$ = NEW(N_VAR, @2);
      $$->name = $2;
      $$->type = $4;
      $$->a = $6;
    }
  | VAR IDENT '=' expr { $$ = NEW(N_VAR, @2); $$->name = $2; $$->a = $4; }
  | expr assign_op expr {
      $$ = NEW(N_ASSIGN, @2);
      $$->op = $2;
      $$->a = $1;
      $$->b = $3;
    }
  | expr { $$ = NEW(N_EXPR, @$); $$->a = $1; }
  | BREAK { $$ = NEW(N_BREAK, @$); }
  | CONTINUE { $$ = NEW(N_CONTINUE, @$); }
  | RETURN { $$ = NEW(N_RETURN, @$); }
  ;

opt_type
  : %empty { $$ = NULL; }
  | ':' type { $$ = $2; }
  ;

assign_op
  : '=' { $$ = '='; }
  | PLUSEQ { $$ = PLUSEQ; }
  | MINUSEQ { $$ = MINUSEQ; }
  | STAREQ { $$ = STAREQ; }
  | SLASHEQ { $$ = SLASHEQ; }
  ;

compound_stmt
  : FOR IDENT IN IDENT '(' args_opt ')' opt_nls block { $$ = for_node(ctx, @2, $2, $4, @4, $6, @6, $9); }
  | FOR '<' IDENT INT '>' IDENT IN IDENT '(' args_opt ')' opt_nls block {
      /* Phobos's for<unroll n>: the body n times an iteration (lower.c) */
      $$ = for_node(ctx, @6, $6, $8, @8, $10, @10, $13);
      if (strcmp($3, "unroll") != 0) diag_error(ctx->diags, @3, "expected 'unroll' in 'for<unroll n>', found '%s'", $3);
      else if ($4->ival < 1 || $4->ival > 64) diag_error(ctx->diags, @4, "for<unroll %lld>: the count must be from 1 to 64", (long long)$4->ival);
      else $$->ival = $4->ival;
    }
  | WHILE expr opt_nls block { $$ = NEW(N_WHILE, @1); $$->a = $2; $$->body = $4; $$->depth = 1 + $4->depth; }
  | if_stmt
  ;

if_stmt
  : IF expr opt_nls block else_opt {
      $$ = NEW(N_IF, @1);
      $$->a = $2;
      $$->body = $4;
      $$->c = $5;
      $$->depth = 1 + deeper($4->depth, $5 ? $5->depth : 0);
    }
  ;

else_opt
  : %empty { $$ = NULL; }
  | ELSE opt_nls block { $$ = $3; }
  | ELSE if_stmt { $$ = $2; }
  ;

expr
  : postfix
  | '-' expr %prec UNARY { $$ = unary(ctx, @$, '-', $2); }
  | '!' expr %prec UNARY { $$ = unary(ctx, @$, '!', $2); }
  | '~' expr %prec UNARY { $$ = unary(ctx, @$, '~', $2); }
  | expr OROR expr { $$ = binary(ctx, @$, OROR, $1, $3); }
  | expr ANDAND expr { $$ = binary(ctx, @$, ANDAND, $1, $3); }
  | expr '|' expr { $$ = binary(ctx, @$, '|', $1, $3); }
  | expr '^' expr { $$ = binary(ctx, @$, '^', $1, $3); }
  | expr '&' expr { $$ = binary(ctx, @$, '&', $1, $3); }
  | expr EQ expr { $$ = binary(ctx, @$, EQ, $1, $3); }
  | expr NE expr { $$ = binary(ctx, @$, NE, $1, $3); }
  | expr '<' expr { $$ = binary(ctx, @$, '<', $1, $3); }
  | expr '>' expr { $$ = binary(ctx, @$, '>', $1, $3); }
  | expr LE expr { $$ = binary(ctx, @$, LE, $1, $3); }
  | expr GE expr { $$ = binary(ctx, @$, GE, $1, $3); }
  | expr SHL expr { $$ = binary(ctx, @$, SHL, $1, $3); }
  | expr SHR expr { $$ = binary(ctx, @$, SHR, $1, $3); }
  | expr '+' expr { $$ = binary(ctx, @$, '+', $1, $3); }
  | expr '-' expr { $$ = binary(ctx, @$, '-', $1, $3); }
  | expr '*' expr { $$ = binary(ctx, @$, '*', $1, $3); }
  | expr '/' expr { $$ = binary(ctx, @$, '/', $1, $3); }
  | expr '%' expr { $$ = binary(ctx, @$, '%', $1, $3); }
  ;

postfix
  : primary
  | postfix '(' args_opt ')' { $$ = postfix_node(ctx, N_CALL, @$, $1, $3); }
  | postfix '[' subscripts ']' { $$ = postfix_node(ctx, N_INDEX, @$, $1, $3); }
  | postfix '.' IDENT {
      $$ = expr_node(ctx, N_MEMBER, @$, 1 + $1->depth, $1);
      if ($$ != $1) {
        $$->a = $1;
        $$->name = $3;
      }
    }
  ;

primary
  : INT
  | FLOAT
  | TRUE { $$ = NEW(N_BOOL, @$); $$->ival = 1; }
  | FALSE { $$ = NEW(N_BOOL, @$); $$->ival = 0; }
  | IDENT { $$ = NEW(N_NAME, @$); $$->name = $1; }
  | '(' expr ')' { $$ = $2; }
  ;

args_opt
  : %empty { $$ = (PtrVec){0}; }
  | args
  ;

args
  : arg { $$ = one(ctx, $1); }
  | args ',' arg { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

arg
  : expr
  | IDENT '=' expr { $$ = NEW(N_NAMEDARG, @$); $$->name = $1; $$->a = $3; $$->depth = 1 + $3->depth; }
  ;

exprs
  : expr { $$ = one(ctx, $1); }
  | exprs ',' expr { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

subscripts
  : subscript { $$ = one(ctx, $1); }
  | subscripts ',' subscript { $$ = $1; vec_push(ctx->arena, &$$, $3); }
  ;

subscript
  : ':' { $$ = NEW(N_SUB, @$); $$->op = SUB_FULL; }
  | ':' expr { /* Phobos's A[:e]: from 0 up to e, as A[0 : e] */
      Node *zero = NEW(N_INT, @1);
      zero->text = "0";
      zero->ival = 0;
      $$ = NEW(N_SUB, @$);
      $$->op = SUB_RANGE;
      $$->a = zero;
      $$->b = $2;
      $$->depth = 1 + $2->depth;
    }
  | expr { $$ = NEW(N_SUB, @$); $$->op = SUB_POINT; $$->a = $1; $$->depth = 1 + $1->depth; }
  | expr ':' expr {
      $$ = NEW(N_SUB, @$);
      $$->op = SUB_RANGE;
      $$->a = $1;
      $$->b = $3;
      $$->depth = 1 + deeper($1->depth, $3->depth);
    }
  | expr COLONPLUS expr {
      $$ = NEW(N_SUB, @$);
      $$->op = SUB_SPAN;
      $$->a = $1;
      $$->b = $3;
      $$->depth = 1 + deeper($1->depth, $3->depth);
    }
  ;

%%

/* Bison's message names the unexpected token and what would have fit; the
 * notes below explain the mistakes people actually make. */
static void phx_error(Span *loc, void *scanner, ParseCtx *ctx, const char *msg) {
  (void)scanner;
  LexState *lx = ctx->lex;
  if (strcmp(msg, "memory exhausted") == 0) { /* bison's stack is full: YYMAXDEPTH */
    diag_error(ctx->diags, *loc, "nested too deeply for the parser (its stack holds %d entries)", PARSE_STACK);
    return;
  }
  const char *text = msg;
  if (strncmp(text, "syntax error, ", 14) == 0) text += 14;
  diag_error(ctx->diags, *loc, "%s", text);
  /* the innermost open bracket, unless the error is that bracket itself */
  bool at_open = lx->depth > 0 && lx->depth <= 64 && lx->parens[lx->depth - 1].first_line == loc->first_line &&
                 lx->parens[lx->depth - 1].first_column == loc->first_column;
  if (lx->depth > 0 && lx->depth <= 64 && !at_open) {
    Span open = lx->parens[lx->depth - 1];
    diag_note(ctx->diags, open, "the '%c' opened here is not closed", ctx->lex->open_char[lx->depth - 1]);
  } else if (lx->last_token == 0 && lx->braces > 0 && lx->braces <= 64) {
    diag_note(ctx->diags, lx->brace_at[lx->braces - 1], "the '{' opened here is not closed");
  } else if ((lx->last_token == ']' || lx->last_token == ',') && lx->prev_token == ':')
    diag_note(ctx->diags, *loc, "open-ended slices are not supported: write 'start : end', "
                                "'start :+ length' or ':'");
  else if (lx->last_token == NL && lx->prev_token == '}')
    diag_note(ctx->diags, *loc, "a newline after '}' ends the statement");
}

static bool is_expr(const Node *n) { return n->kind >= N_INT && n->kind <= N_SUB; }

/* The bounds on nesting (spec 13.3), over the whole tree without recursion:
 * an expression deeper than MAX_EXPR_DEPTH or statements nested deeper than
 * MAX_STMT_DEPTH are an error at their start, reported once, so that the
 * passes after the parser, which recurse, never go deeper. */
static void check_depth(ParseCtx *ctx, Node *program) {
  PtrVec stack = {0};
  vec_push(ctx->arena, &stack, program);
  while (stack.len) {
    Node *n = stack.items[--stack.len];
    if (is_expr(n)) {
      if (n->depth > MAX_EXPR_DEPTH)
        diag_error(ctx->diags, n->span, "expression nested too deeply (%d levels; the limit is %d)", n->depth,
                   MAX_EXPR_DEPTH);
      continue; /* every operand is shallower */
    }
    if ((n->kind == N_FOR || n->kind == N_WHILE || n->kind == N_IF) && n->depth > MAX_STMT_DEPTH) {
      diag_error(ctx->diags, n->span, "statements nested too deeply (%d levels; the limit is %d)", n->depth,
                 MAX_STMT_DEPTH);
      diag_note(ctx->diags, n->span, "for, while and if each nest one level, and so does each 'else if' "
                                     "(it is the else of the if before it)");
      continue;
    }
    /* children pushed last to first, so reported in source order: an if's
     * c (its else) follows its body, a for's c (its step) precedes it */
    bool if_ = n->kind == N_IF;
    Node *kids[] = {if_ ? n->c : NULL, n->body, if_ ? NULL : n->c, n->b, n->a, n->type};
    for (int i = 0; i < 6; i++)
      if (kids[i]) vec_push(ctx->arena, &stack, kids[i]);
    for (int i = n->list.len - 1; i >= 0; i--) vec_push(ctx->arena, &stack, n->list.items[i]);
    for (int i = n->attrs.len - 1; i >= 0; i--) vec_push(ctx->arena, &stack, n->attrs.items[i]);
  }
}

Node *parse_program(Arena *a, Diags *d, const Source *src) {
  LexState lx = {.arena = a, .diags = d, .file = src->name, .line = 1, .column = 1};
  ParseCtx ctx = {.arena = a, .diags = d, .lex = &lx};
  void *scanner = lex_open(&lx, src);
  int errors = d->errors;
  int rc = phx_parse(scanner, &ctx);
  lex_close(scanner);
  if (rc == 2 && d->errors == errors) diag_ice("parser ran out of memory");
  if (rc != 0 || d->errors > errors || !ctx.program) return NULL;
  check_depth(&ctx, ctx.program);
  if (d->errors > errors) return NULL;
  return ctx.program;
}
