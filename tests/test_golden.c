/* test_golden.c: golden files.
 *
 *   golden/diag/NAME.ph  ->  NAME.err   diagnostics (plain) and exit status
 *   golden/ast/NAME.ph   ->  NAME.ast   the --emit=ast dump
 *   golden/plan/NAME.ph  ->  NAME.plan  the --emit=plan dump (offsets, sizes, barriers)
 *   golden/fuzz/NAME.ph                 a fuzzer finding: compiles to PTX text (as the fuzz target does) with exit 0 or 1
 *
 * A first line "// phobosc: -D A=1 -D B=2" passes constants. Regenerate an
 * expected file with tests/update-golden.sh after checking the change. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

typedef struct Case {
  char *dir;  /* "diag" or "ast" */
  char *name; /* file name without .ph */
} Case;

static void free_cases(struct criterion_test_params *p) {
  Case *c = p->params;
  for (size_t i = 0; i < p->length; i++) {
    cr_free(c[i].dir);
    cr_free(c[i].name);
  }
  cr_free(p->params);
}

static char *cr_strdup(const char *s) {
  char *p = cr_malloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t list_dir(const char *sub, Case *out, size_t at, size_t cap) {
  char path[4096];
  snprintf(path, sizeof path, "%s/golden/%s", getenv("TEST_SRCDIR"), sub);
  DIR *d = opendir(path);
  if (!d) return at;
  char *names[1024];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 1024) {
    size_t len = strlen(e->d_name);
    if (len > 3 && strcmp(e->d_name + len - 3, ".ph") == 0) names[n++] = strndup(e->d_name, len - 3);
  }
  closedir(d);
  qsort(names, n, sizeof names[0], cmp_str);
  for (size_t i = 0; i < n; i++) {
    if (at < cap) out[at++] = (Case){cr_strdup(sub), cr_strdup(names[i])};
    free(names[i]);
  }
  return at;
}

ParameterizedTestParameters(golden, file) {
  size_t cap = 2048;
  Case *cases = cr_malloc(sizeof(Case) * cap);
  size_t n = list_dir("diag", cases, 0, cap);
  n = list_dir("ast", cases, n, cap);
  n = list_dir("plan", cases, n, cap);
  n = list_dir("fuzz", cases, n, cap);
  return cr_make_param_array(Case, cases, n, free_cases);
}

/* Reads "-D NAME=VALUE" pairs and the planner switches (--no-tensor-copies, --no-tma,
 * --prefetch, --producer-warp) from a first line "// phobosc: ...". */
static int read_defines(const char *text, Define *defs, int max, DriverOptions *o) {
  const char *tag = "// phobosc:";
  if (strncmp(text, tag, strlen(tag)) != 0) return 0;
  const char *p = text + strlen(tag), *eol = strchr(p, '\n');
  int n = 0;
  while (p < eol && n < max) {
    while (p < eol && *p == ' ') p++;
    static const char *sw[] = {"--no-tensor-copies", "--no-tma", "--prefetch", "--producer-warp"};
    bool *on[] = {&o->no_tensor_copies, &o->no_tma, &o->prefetch, &o->producer_warp};
    bool matched = false;
    for (int i = 0; i < 4 && !matched; i++) {
      size_t l = strlen(sw[i]);
      if (strncmp(p, sw[i], l) == 0 && (p + l == eol || p[l] == ' ')) *on[i] = true, p += l, matched = true;
    }
    if (matched) continue;
    if (strncmp(p, "-D ", 3) != 0) break;
    p += 3;
    const char *eq = strchr(p, '='), *end = p;
    while (end < eol && *end != ' ') end++;
    cr_assert(eq && eq < end, "bad -D in the first line");
    defs[n].name = strndup(p, (size_t)(eq - p));
    defs[n].value = strndup(eq + 1, (size_t)(end - eq - 1));
    n++;
    p = end;
  }
  return n;
}

ParameterizedTest(Case *c, golden, file) {
  char dir[2048], ph[512], expected_path[4096];
  snprintf(dir, sizeof dir, "%s/golden/%s", getenv("TEST_SRCDIR"), c->dir);
  cr_assert_eq(chdir(dir), 0, "cannot enter %s", dir);
  snprintf(ph, sizeof ph, "%s.ph", c->name);
  if (strcmp(c->dir, "fuzz") == 0) {
    char path[3072];
    snprintf(path, sizeof path, "%s/%s.ph", dir, c->name);
    FILE *null = fopen("/dev/null", "w");
    DriverOptions fo = {.input = path, .arch = "sm_90a", .emit = EMIT_PTX, .plain = true, .max_errors = 20};
    int st = driver_compile(&fo, null, null);
    fclose(null);
    cr_assert(st == 0 || st == 1, "fuzz/%s.ph: exit %d", c->name, st);
    return;
  }
  bool plan = strcmp(c->dir, "plan") == 0;
  bool ast = strcmp(c->dir, "ast") == 0 || plan; /* both print output and no diagnostics */
  snprintf(expected_path, sizeof expected_path, "%s/%s.%s", dir, c->name, plan ? "plan" : ast ? "ast" : "err");
  char *expected = slurp(expected_path);
  cr_assert_not_null(expected, "missing expected file %s", expected_path);
  char *text = slurp(ph);
  Define defs[16];
  DriverOptions o = {.input = ph, .arch = "sm_90a", .emit = plan ? EMIT_PLAN : ast ? EMIT_AST : EMIT_CHECK, .plain = true,
                     .max_errors = 20, .defines = defs};
  o.ndefines = read_defines(text, defs, 16, &o);
  char *obuf = NULL, *ebuf = NULL;
  size_t olen = 0, elen = 0;
  FILE *out = open_memstream(&obuf, &olen), *err = open_memstream(&ebuf, &elen);
  int status = driver_compile(&o, out, err);
  fprintf(ast ? out : err, "exit: %d\n", status);
  fclose(out);
  fclose(err);
  if (ast) {
    cr_expect_str_eq(ebuf, "", "%s/%s: diagnostics:\n%s", c->dir, ph, ebuf);
    cr_expect_str_eq(obuf, expected, "%s/%s: the output differs from the expected file", c->dir, ph);
  } else {
    cr_expect_str_eq(obuf, "", "%s/%s printed output", c->dir, ph);
    cr_expect_str_eq(ebuf, expected, "%s/%s: diagnostics differ:\n--- got\n%s--- want\n%s", c->dir, ph, ebuf,
                     expected);
    cr_expect(strstr(ebuf, ": error: ") || strstr(ebuf, ": warning: "), "%s has no diagnostic", ph);
  }
}
