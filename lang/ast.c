/* ast.c: AST nodes and the --emit=ast printer.
 *
 * The printout is an outline: one node a line, its children indented two
 * spaces, each with the line and column where it starts. Golden tests
 * compare it byte for byte. */
#include "lang.h"
#include "parser.h"

#include <string.h>

Node *ast_new(Arena *a, NodeKind kind, Span span) {
  Node *n = arena_alloc(a, sizeof *n);
  n->kind = kind;
  n->span = span;
  return n;
}

/* The token of a two-character comparison, for the stages that build
 * comparisons themselves (lower.c's pow): EQ or NE, else 0. */
int ast_cmp_op(const char *spelling) {
  return !strcmp(spelling, "==") ? EQ : !strcmp(spelling, "!=") ? NE : 0;
}

const char *ast_op_name(int op) {
  switch (op) {
  case COLONPLUS: return ":+";
  case EQ: return "==";
  case NE: return "!=";
  case LE: return "<=";
  case GE: return ">=";
  case ANDAND: return "&&";
  case OROR: return "||";
  case SHL: return "<<";
  case SHR: return ">>";
  case PLUSEQ: return "+=";
  case MINUSEQ: return "-=";
  case STAREQ: return "*=";
  case SLASHEQ: return "/=";
  }
  static const char singles[] = "(),;:.@<>+-*/%!~&|^=[]{}";
  static char names[sizeof singles][2];
  for (size_t i = 0; i + 1 < sizeof singles; i++)
    if (singles[i] == op) {
      names[i][0] = (char)op;
      return names[i];
    }
  return NULL;
}

static const char *sub_name[] = {"point", "range", "span", "full"};

static void print(FILE *out, const Node *n, int depth, const char *role);

static void print_list(FILE *out, const PtrVec *v, int depth, const char *role) {
  for (int i = 0; i < v->len; i++) print(out, v->items[i], depth, role);
}

/* Indentation stops at 64 levels, where a line says its depth instead: an
 * expression 100,000 levels deep prints in linear space. */
enum { INDENT_LEVELS = 64 };

static void print(FILE *out, const Node *n, int depth, const char *role) {
  if (!n) return;
  if (depth <= INDENT_LEVELS) fprintf(out, "%*s", depth * 2, "");
  else fprintf(out, "%*s[%d] ", INDENT_LEVELS * 2, "", depth);
  if (role) fprintf(out, "%s: ", role);
  switch (n->kind) {
  case N_INT: fprintf(out, "int %s", n->text); break;
  case N_FLOAT: fprintf(out, "float %s", n->text); break;
  case N_BOOL: fprintf(out, "bool %s", n->ival ? "true" : "false"); break;
  case N_NAME: fprintf(out, "name %s", n->name); break;
  case N_UNARY: fprintf(out, "unary %s", ast_op_name(n->op)); break;
  case N_BINARY: fprintf(out, "binary %s", ast_op_name(n->op)); break;
  case N_CALL: fputs("call", out); break;
  case N_NAMEDARG: fprintf(out, "named-arg %s", n->name); break;
  case N_INDEX: fputs("index", out); break;
  case N_MEMBER: fprintf(out, "member .%s", n->name); break;
  case N_SUB: fprintf(out, "subscript %s", sub_name[n->op]); break;
  case N_TYPE: fprintf(out, "type %s", n->name); break;
  case N_LET: fprintf(out, "let %s", n->name); break;
  case N_VAR: fprintf(out, "var %s", n->name); break;
  case N_ASSIGN: fprintf(out, "assign %s", ast_op_name(n->op)); break;
  case N_FOR: fprintf(out, "for %s", n->name); break;
  case N_WHILE: fputs("while", out); break;
  case N_IF: fputs("if", out); break;
  case N_EXPR: fputs("expr-stmt", out); break;
  case N_BREAK: fputs("break", out); break;
  case N_CONTINUE: fputs("continue", out); break;
  case N_RETURN: fputs("return", out); break;
  case N_BLOCK: fputs("block", out); break;
  case N_PARAM: fprintf(out, "param %s", n->name); break;
  case N_ATTR: fprintf(out, "attribute @%s", n->name); break;
  case N_ATTR_IN: fprintf(out, "autotune-dim %s", n->name); break;
  case N_KERNEL: fprintf(out, "kernel %s", n->name); break;
  case N_PROGRAM: fputs("program", out); break;
  }
  fprintf(out, " <%d:%d>\n", n->span.first_line, n->span.first_column);
  int d = depth + 1;
  switch (n->kind) {
  case N_KERNEL:
    print_list(out, &n->attrs, d, NULL);
    print_list(out, &n->list, d, NULL);
    print(out, n->body, d, NULL);
    break;
  case N_PARAM: print(out, n->type, d, NULL); break;
  case N_TYPE:
    print(out, n->a, d, "element");
    print_list(out, &n->list, d, "dim");
    break;
  case N_LET:
  case N_VAR:
    print(out, n->type, d, NULL);
    print(out, n->a, d, "init");
    break;
  case N_ASSIGN:
    print(out, n->a, d, "target");
    print(out, n->b, d, "value");
    break;
  case N_FOR:
    print(out, n->a, d, "start");
    print(out, n->b, d, "end");
    print(out, n->c, d, "step");
    print(out, n->body, d, NULL);
    break;
  case N_WHILE:
    print(out, n->a, d, "cond");
    print(out, n->body, d, NULL);
    break;
  case N_IF:
    print(out, n->a, d, "cond");
    print(out, n->body, d, "then");
    print(out, n->c, d, "else");
    break;
  case N_CALL:
    print(out, n->a, d, "callee");
    print_list(out, &n->list, d, "arg");
    break;
  case N_INDEX:
    print(out, n->a, d, "base");
    print_list(out, &n->list, d, NULL);
    break;
  case N_SUB:
    print(out, n->a, d, n->op == SUB_POINT ? "at" : "start");
    print(out, n->b, d, n->op == SUB_SPAN ? "length" : "end");
    break;
  default:
    print(out, n->a, d, NULL);
    print(out, n->b, d, NULL);
    print(out, n->c, d, NULL);
    print_list(out, &n->list, d, NULL);
    break;
  }
}

void ast_print(FILE *out, const Node *program) { print(out, program, 0, NULL); }
