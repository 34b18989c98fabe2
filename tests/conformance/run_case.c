/* run_case: runs conformance cases on the interpreter from the command line
 * and prints one line per case (a debugging aid beside the Criterion suite).
 * Usage: run_case CASE.yaml...   Exit status: the number of failures. */
#include <stdio.h>

#include "harness.h"

int main(int argc, char **argv) {
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    Case c;
    char err[8192];
    bool ok = harness_load(argv[i], &c, err, sizeof err) && harness_run_interp(&c, err, sizeof err);
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", argv[i], ok ? "" : "\n  ", ok ? "" : err);
    harness_free(&c);
    failed += !ok;
  }
  return failed;
}
