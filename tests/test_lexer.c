/* test_lexer.c: every token kind, positions, newline insertion, errors. */
#include <criterion/criterion.h>

#include "testutil.h"

static void expect_tokens(const char *src, const char *want) {
  Run r = run_tokens(src);
  cr_assert_str_eq(r.diag, "", "unexpected diagnostics for %s:\n%s", src, r.diag);
  cr_assert_str_eq(r.out, want, "tokens of <<%s>>", src);
}

Test(lexer, keywords) {
  expect_tokens("kernel let var if else for in while true false",
                "1:1 KW_KERNEL\n1:8 KW_LET\n1:12 KW_VAR\n1:16 KW_IF\n1:19 KW_ELSE\n1:24 KW_FOR\n"
                "1:28 KW_IN\n1:31 KW_WHILE\n1:37 KW_TRUE\n1:42 KW_FALSE\n1:47 NL\n1:47 EOF\n");
}

Test(lexer, identifiers_and_contextual_names) {
  /* type names, builtins, range and ctx are identifiers, not keywords */
  expect_tokens("x _y a1 tensor tile f32 range ctx dot_t kernels",
                "1:1 IDENT x\n1:3 IDENT _y\n1:6 IDENT a1\n1:9 IDENT tensor\n1:16 IDENT tile\n"
                "1:21 IDENT f32\n1:25 IDENT range\n1:31 IDENT ctx\n1:35 IDENT dot_t\n"
                "1:41 IDENT kernels\n1:48 NL\n1:48 EOF\n");
}

Test(lexer, integers) {
  expect_tokens("0 42 0x1F 9223372036854775807",
                "1:1 INT 0\n1:3 INT 42\n1:6 INT 0x1F\n1:11 INT 9223372036854775807\n1:30 NL\n1:30 EOF\n");
}

Test(lexer, floats) {
  expect_tokens("1.0 2. 3.25e-2 4e8 0.5E+3",
                "1:1 FLOAT 1.0\n1:5 FLOAT 2.\n1:8 FLOAT 3.25e-2\n1:16 FLOAT 4e8\n1:20 FLOAT 0.5E+3\n"
                "1:26 NL\n1:26 EOF\n");
}

Test(lexer, float_values) {
  Run r = run_parse("kernel k() { let x = 2.5e-1 }");
  cr_assert_str_eq(r.diag, "");
  Node *let = first_stmt(r.program);
  cr_assert_eq(let->a->kind, N_FLOAT);
  cr_assert_float_eq(let->a->fval, 0.25, 1e-12);
}

Test(lexer, multi_char_operators) {
  expect_tokens(":+ == != <= >= && || << >> += -= *= /=",
                "1:1 COLONPLUS :+\n1:4 EQ ==\n1:7 NE !=\n1:10 LE <=\n1:13 GE >=\n1:16 ANDAND &&\n"
                "1:19 OROR ||\n1:22 SHL <<\n1:25 SHR >>\n1:28 PLUSEQ +=\n1:31 MINUSEQ -=\n"
                "1:34 STAREQ *=\n1:37 SLASHEQ /=\n1:39 EOF\n");
}

Test(lexer, single_char_punctuation) {
  expect_tokens("( ) [ ] { } , ; : . @ < > + - * / % ! ~ & | ^ =",
                "1:1 PUNCT (\n1:3 PUNCT )\n1:5 PUNCT [\n1:7 PUNCT ]\n1:9 PUNCT {\n1:11 PUNCT }\n"
                "1:13 PUNCT ,\n1:15 PUNCT ;\n1:17 PUNCT :\n1:19 PUNCT .\n1:21 PUNCT @\n1:23 PUNCT <\n"
                "1:25 PUNCT >\n1:27 PUNCT +\n1:29 PUNCT -\n1:31 PUNCT *\n1:33 PUNCT /\n1:35 PUNCT %\n"
                "1:37 PUNCT !\n1:39 PUNCT ~\n1:41 PUNCT &\n1:43 PUNCT |\n1:45 PUNCT ^\n1:47 PUNCT =\n"
                "1:48 EOF\n");
}

Test(lexer, colon_plus_is_one_token_even_without_spaces) {
  expect_tokens("a[k:+B]", "1:1 IDENT a\n1:2 PUNCT [\n1:3 IDENT k\n1:4 COLONPLUS :+\n1:6 IDENT B\n"
                           "1:7 PUNCT ]\n1:8 NL\n1:8 EOF\n");
}

Test(lexer, newline_ends_statement_after_name_literal_and_closers) {
  expect_tokens("a\n1\n2.0\n)\n]\n}\ntrue\nfalse\n",
                "1:1 IDENT a\n1:2 NL\n2:1 INT 1\n2:2 NL\n3:1 FLOAT 2.0\n3:4 NL\n4:1 PUNCT )\n4:2 NL\n"
                "5:1 PUNCT ]\n5:2 NL\n6:1 PUNCT }\n6:2 NL\n7:1 KW_TRUE\n7:5 NL\n8:1 KW_FALSE\n8:6 NL\n"
                "9:1 EOF\n");
}

Test(lexer, newline_continues_after_operator_or_comma) {
  expect_tokens("a +\nb ,\nc", "1:1 IDENT a\n1:3 PUNCT +\n2:1 IDENT b\n2:3 PUNCT ,\n3:1 IDENT c\n3:2 NL\n3:2 EOF\n");
}

Test(lexer, newline_inside_parentheses_and_brackets_is_space) {
  expect_tokens("f(a\n, b)\nx[i\n]", "1:1 IDENT f\n1:2 PUNCT (\n1:3 IDENT a\n2:1 PUNCT ,\n2:3 IDENT b\n"
                                     "2:4 PUNCT )\n2:5 NL\n3:1 IDENT x\n3:2 PUNCT [\n3:3 IDENT i\n"
                                     "4:1 PUNCT ]\n4:2 NL\n4:2 EOF\n");
}

Test(lexer, comments_are_skipped_but_end_the_line) {
  expect_tokens("a // note ) here\n// whole line\nb", "1:1 IDENT a\n1:17 NL\n3:1 IDENT b\n3:2 NL\n3:2 EOF\n");
}

Test(lexer, keywords_do_not_end_statements) {
  expect_tokens("else\nin\n", "1:1 KW_ELSE\n2:1 KW_IN\n3:1 EOF\n");
}

Test(lexer, tabs_and_carriage_returns_are_space) {
  expect_tokens("\ta\r\n\tb", "1:2 IDENT a\n1:4 NL\n2:2 IDENT b\n2:3 NL\n2:3 EOF\n");
}

Test(lexer, invalid_character) {
  Run r = run_tokens("a $ b");
  cr_assert_str_eq(r.diag, "t.ph:1:3: error: invalid character '$'\n");
  cr_assert_eq(r.errors, 1);
}

Test(lexer, invalid_byte) {
  Run r = run_tokens("a \x01 b");
  cr_assert_str_eq(r.diag, "t.ph:1:3: error: invalid byte 0x01 in source\n");
}

Test(lexer, invalid_numeric_suffix) {
  Run r = run_tokens("let x = 12abc");
  cr_assert_str_eq(r.diag, "t.ph:1:9: error: invalid numeric literal '12abc'\n");
}

Test(lexer, integer_overflow) {
  Run r = run_tokens("99999999999999999999");
  cr_assert_str_eq(r.diag, "t.ph:1:1: error: integer literal '99999999999999999999' does not fit in 64 bits\n");
}

Test(lexer, float_overflow) {
  Run r = run_tokens("1e999");
  cr_assert_str_eq(r.diag, "t.ph:1:1: error: floating-point literal '1e999' is out of range\n");
}

Test(lexer, empty_input) { expect_tokens("", "1:1 EOF\n"); }
