/* test_conformance.c: every case of spec/conformance/ on the CPU
 * interpreter, one Criterion test per case. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/harness.h"

typedef struct Name {
  char *name;
} Name;

static void free_names(struct criterion_test_params *p) {
  Name *n = p->params;
  for (size_t i = 0; i < p->length; i++) cr_free(n[i].name);
  cr_free(p->params);
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

ParameterizedTestParameters(conformance, interp) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/spec/conformance", getenv("PROJECT_ROOT"));
  DIR *d = opendir(dir);
  char *names[1024];
  size_t n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) && n < 1024) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) names[n++] = strdup(e->d_name);
  }
  if (d) closedir(d);
  qsort(names, n, sizeof names[0], cmp);
  Name *cases = cr_malloc(sizeof(Name) * (n ? n : 1));
  for (size_t i = 0; i < n; i++) {
    cases[i].name = cr_malloc(strlen(names[i]) + 1);
    strcpy(cases[i].name, names[i]);
    free(names[i]);
  }
  return cr_make_param_array(Name, cases, n, free_names);
}

ParameterizedTest(Name *n, conformance, interp, .timeout = 120) {
  char path[4096], err[4096];
  snprintf(path, sizeof path, "%s/spec/conformance/%s", getenv("PROJECT_ROOT"), n->name);
  Case c;
  bool ok = harness_load(path, &c, err, sizeof err) && harness_run_interp(&c, err, sizeof err);
  harness_free(&c);
  cr_assert(ok, "%s", err);
}
