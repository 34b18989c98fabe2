/* test_parser.c: every production of lang/parser.y, and its errors. */
#include <criterion/criterion.h>
#include <string.h>

#include "testutil.h"

/* Parses `body` as the body of a kernel; returns its first statement. */
static Node *stmt_of(const char *body) {
  char buf[1024];
  snprintf(buf, sizeof buf, "kernel k() {\n%s\n}\n", body);
  Run r = run_parse(buf);
  cr_assert_str_eq(r.diag, "", "diagnostics for <<%s>>:\n%s", body, r.diag);
  Node *s = first_stmt(r.program);
  cr_assert_not_null(s, "no statement in <<%s>>", body);
  return s;
}

static void expect_expr(const char *expr, const char *want) {
  char buf[512];
  snprintf(buf, sizeof buf, "let x = %s", expr);
  Node *s = stmt_of(buf);
  cr_assert_eq(s->kind, N_LET);
  cr_assert_str_eq(sexpr(s->a), want, "%s", expr);
}

static void expect_syntax_error(const char *src, const char *want) {
  Run r = run_parse(src);
  cr_assert_null(r.program, "<<%s>> parsed", src);
  cr_assert_str_eq(r.diag, want, "<<%s>>", src);
}

/* ---- program, kernel, attributes, parameters, types */

Test(parser, empty_program) {
  Run r = run_parse("\n\n");
  cr_assert_str_eq(r.out, "program <1:1>\n");
}

Test(parser, two_kernels) {
  Run r = run_parse("kernel a() {}\nkernel b() {}\n");
  cr_assert_eq(r.program->list.len, 2);
  cr_assert_str_eq(((Node *)r.program->list.items[1])->name, "b");
}

Test(parser, kernel_body_on_next_line) {
  Run r = run_parse("kernel a()\n{\n}\n");
  cr_assert_str_eq(r.diag, "");
  cr_assert_eq(r.program->list.len, 1);
}

Test(parser, attributes_all_forms) {
  Run r = run_parse("@padstage\n@pipeline()\n@launch(256, 2)\n@autotune(A in [1, 2], B in [4])\n"
                    "@aligned(M = 64) @grid(cdiv(N, 4), 1)\nkernel k() {}");
  cr_assert_str_eq(r.diag, "");
  Node *k = r.program->list.items[0];
  cr_assert_eq(k->attrs.len, 6);
  Node *pad = k->attrs.items[0], *pipe = k->attrs.items[1], *launch = k->attrs.items[2];
  Node *tune = k->attrs.items[3], *aligned = k->attrs.items[4], *grid = k->attrs.items[5];
  cr_assert(!pad->has_args);
  cr_assert(pipe->has_args);
  cr_assert_eq(pipe->list.len, 0);
  cr_assert_eq(launch->list.len, 2);
  cr_assert_eq(((Node *)tune->list.items[0])->kind, N_ATTR_IN);
  cr_assert_eq(((Node *)((Node *)tune->list.items[0])->list.items[1])->ival, 2);
  cr_assert_eq(((Node *)aligned->list.items[0])->kind, N_NAMEDARG);
  cr_assert_str_eq(sexpr(grid->list.items[0]), "(call cdiv N 4)");
}

Test(parser, params_and_types) {
  Run r = run_parse("kernel k(A: tensor<f16>[M, 64], s: f32, n: i32) {}");
  Node *k = r.program->list.items[0];
  cr_assert_eq(k->list.len, 3);
  Node *a = k->list.items[0];
  cr_assert_str_eq(a->type->name, "tensor");
  cr_assert_str_eq(a->type->a->name, "f16");
  cr_assert_eq(a->type->list.len, 2);
  cr_assert_str_eq(((Node *)k->list.items[1])->type->name, "f32");
}

Test(parser, ast_dump_has_positions) {
  Run r = run_parse("kernel k(x: f32) {\n  let y = x\n}");
  cr_assert_str_eq(r.out, "program <1:1>\n"
                          "  kernel k <1:8>\n"
                          "    param x <1:10>\n"
                          "      type f32 <1:13>\n"
                          "    block <1:18>\n"
                          "      let y <2:7>\n"
                          "        init: name x <2:11>\n");
}

/* ---- statements */

Test(parser, let_with_and_without_type) {
  Node *a = stmt_of("let a = 1");
  cr_assert_null(a->type);
  Node *b = stmt_of("let b: f32 = 1");
  cr_assert_str_eq(b->type->name, "f32");
}

Test(parser, var_three_forms) {
  Node *a = stmt_of("var a: tile<f32>[4, 4]");
  cr_assert_eq(a->kind, N_VAR);
  cr_assert_null(a->a);
  Node *b = stmt_of("var b: tile<f32>[4] = 0.0");
  cr_assert_not_null(b->type);
  cr_assert_not_null(b->a);
  Node *c = stmt_of("var c = 1");
  cr_assert_null(c->type);
}

Test(parser, assignments) {
  cr_assert_str_eq(sexpr(stmt_of("a = 1")), "(= a 1)");
  cr_assert_str_eq(sexpr(stmt_of("a += 1")), "(+= a 1)");
  cr_assert_str_eq(sexpr(stmt_of("a -= 1")), "(-= a 1)");
  cr_assert_str_eq(sexpr(stmt_of("a *= 1")), "(*= a 1)");
  cr_assert_str_eq(sexpr(stmt_of("a /= 1")), "(/= a 1)");
  cr_assert_str_eq(sexpr(stmt_of("C[i :+ 4, :] = t")), "(= (index C (:+ i 4) (all)) t)");
}

Test(parser, expression_statement) {
  Node *s = stmt_of("f(x)");
  cr_assert_eq(s->kind, N_EXPR);
  cr_assert_str_eq(sexpr(s), "(call f x)");
}

Test(parser, for_two_and_three_arguments) {
  Node *a = stmt_of("for i in range(0, N) {}");
  cr_assert_eq(a->kind, N_FOR);
  cr_assert_null(a->c);
  Node *b = stmt_of("for i in range(0, N, 4) {\n}");
  cr_assert_str_eq(sexpr(b->c), "4");
}

Test(parser, while_loop) {
  Node *w = stmt_of("while i < n {\n  i += 1\n}");
  cr_assert_eq(w->kind, N_WHILE);
  cr_assert_eq(w->body->list.len, 1);
}

Test(parser, if_else_chain) {
  Node *s = stmt_of("if a {\n} else if b {\n} else {\n  x = 1\n}");
  cr_assert_eq(s->kind, N_IF);
  cr_assert_eq(s->c->kind, N_IF);
  cr_assert_eq(s->c->c->kind, N_BLOCK);
  cr_assert_eq(s->c->c->list.len, 1);
}

Test(parser, semicolons_and_last_statement_before_brace) {
  Run r = run_parse("kernel k() { let a = 1; let b = 2; a = b }");
  cr_assert_str_eq(r.diag, "");
  Node *k = r.program->list.items[0];
  cr_assert_eq(k->body->list.len, 3);
}

Test(parser, blank_lines_and_empty_statements) {
  Run r = run_parse("kernel k() {\n\n;;\n  let a = 1\n\n}");
  cr_assert_str_eq(r.diag, "");
  cr_assert_eq(((Node *)r.program->list.items[0])->body->list.len, 1);
}

/* ---- expressions */

Test(parser, literals_and_names) {
  expect_expr("42", "42");
  expect_expr("1.5", "1.5");
  expect_expr("true", "true");
  expect_expr("false", "false");
  expect_expr("x", "x");
  expect_expr("(x)", "x");
}

Test(parser, arithmetic_precedence) {
  expect_expr("a + b * c", "(+ a (* b c))");
  expect_expr("a * b + c", "(+ (* a b) c)");
  expect_expr("a - b - c", "(- (- a b) c)");
  expect_expr("a / b % c", "(% (/ a b) c)");
  expect_expr("(a + b) * c", "(* (+ a b) c)");
}

Test(parser, comparison_logic_and_bits) {
  expect_expr("a < b && c >= d || e", "(|| (&& (< a b) (>= c d)) e)");
  expect_expr("a == b != c", "(!= (== a b) c)");
  expect_expr("a <= b", "(<= a b)");
  expect_expr("a > b", "(> a b)");
  expect_expr("a | b ^ c & d", "(| a (^ b (& c d)))");
  expect_expr("a << 2 + 1", "(<< a (+ 2 1))");
  expect_expr("a >> b", "(>> a b)");
  expect_expr("a & b == c", "(& a (== b c))");
}

Test(parser, unary_operators) {
  expect_expr("-a * b", "(* (- a) b)");
  expect_expr("!a && b", "(&& (! a) b)");
  expect_expr("~a", "(~ a)");
  expect_expr("-inf", "(- inf)");
  expect_expr("- -a", "(- (- a))");
}

Test(parser, calls_and_named_arguments) {
  expect_expr("f()", "(call f)");
  expect_expr("dot(a, b)", "(call dot a b)");
  expect_expr("iota(4, 8, axis = 0)", "(call iota 4 8 (axis= 0))");
}

Test(parser, subscripts_all_kinds) {
  expect_expr("A[i]", "(index A i)");
  expect_expr("A[s : e, :]", "(index A (: s e) (all))");
  expect_expr("A[k :+ BLK, pn * T :+ T]", "(index A (:+ k BLK) (:+ (* pn T) T))");
}

Test(parser, postfix_chains_and_members) {
  expect_expr("ctx.block.x", "(. (. ctx block) x)");
  expect_expr("f(a)[0]", "(index (call f a) 0)");
  expect_expr("-A[i]", "(- (index A i))");
}

Test(parser, continuation_lines) {
  expect_expr("a +\n  b", "(+ a b)");
  expect_expr("f(a,\n  b)", "(call f a b)");
  expect_expr("f(a\n  , b)", "(call f a b)");
}

/* ---- syntax errors */

Test(parser, error_missing_paren) {
  expect_syntax_error("kernel k(A: f32 {}", "t.ph:1:17: error: unexpected '{', expecting '<' or ')' or ','\n");
}

Test(parser, error_else_on_next_line) {
  expect_syntax_error("kernel k() {\n  if a {\n  }\n  else {\n  }\n}",
                      "t.ph:4:3: error: 'else' must follow the '}' of its if block on the same line\n");
}

Test(parser, error_open_ended_slice) {
  expect_syntax_error("kernel k() { let a = A[1:] }",
                      "t.ph:1:26: error: unexpected ']'\n"
                      "t.ph:1:26: note: open-ended slices are not supported: write 'start : end', "
                      "'start :+ length' or ':'\n");
}

Test(parser, error_two_statements_on_one_line) {
  expect_syntax_error("kernel k() { let a = 1 let b = 2 }",
                      "t.ph:1:24: error: unexpected 'let'\n");
}

Test(parser, error_recovery_reports_several) {
  Run r = run_parse("kernel k() {\n  let = 1\n  let b = )\n  let c = 3\n}");
  cr_assert_null(r.program);
  cr_assert_eq(r.errors, 2, "%s", r.diag);
}

Test(parser, error_range_keyword) {
  expect_syntax_error("kernel k() { for i in span(0, 4) {} }",
                      "t.ph:1:23: error: expected 'range' after 'in', found 'span'\n");
}

Test(parser, error_range_arity) {
  expect_syntax_error("kernel k() { for i in range(4) {} }",
                      "t.ph:1:29: error: range takes 2 or 3 arguments (start, end[, step]), found 1\n");
}

Test(parser, error_unterminated_block) {
  expect_syntax_error("kernel k() {\n  let a = 1\n", "t.ph:3:1: error: unexpected end of file\n"
                                                  "t.ph:1:12: note: the '{' opened here is not closed\n");
}

Test(parser, error_unclosed_paren_points_at_the_opener) {
  expect_syntax_error("kernel k() {\n  let y = f(1 + g(2)\n  let z = 1\n}",
                      "t.ph:3:3: error: unexpected 'let'\n"
                      "t.ph:2:12: note: the '(' opened here is not closed\n");
}

Test(parser, error_in_if_header_skips_its_block) {
  expect_syntax_error("kernel k() {\n  if a = 0 {\n    let b = 1\n  }\n}", "t.ph:2:8: error: unexpected '='\n");
}

Test(parser, error_missing_kernel_keyword) {
  expect_syntax_error("@launch(32)\nk() {}", "t.ph:2:1: error: unexpected identifier, expecting end of line or 'kernel' or '@'\n");
}
