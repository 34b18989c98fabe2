/* test_mutation.c: the conformance suite must catch a broken mask.
 *
 * This binary links an interpreter built with PHOBOS_BREAK_SLACK_MASK,
 * which forgets that lanes past a slice's logical extent are slack: the
 * padded eighth head of GQA's [BQ, 7, D] tile then reads the next group's
 * first head and its store lands on it (the seed's aliasing bug). The
 * case must fail, and say why; the power-of-two case has no slack and
 * must still pass. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "conformance/harness.h"

static bool run(const char *name, char *err, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/spec/conformance/%s", getenv("PROJECT_ROOT"), name);
  Case c;
  bool ok = harness_load(path, &c, err, len) && harness_run_interp(&c, err, len);
  harness_free(&c);
  return ok;
}

Test(mutation, broken_slack_mask_fails_gqa_with_seven_heads) {
  char err[8192];
  cr_assert_not(run("gqa_nq7_causal.yaml", err, sizeof err), "a broken mask went unnoticed");
  cr_assert(strstr(err, "both store O[") || strstr(err, "elements of O differ"), "%s", err);
}

Test(mutation, power_of_two_heads_have_no_slack) {
  char err[8192];
  cr_assert(run("gqa_nq4_causal.yaml", err, sizeof err), "%s", err);
}
