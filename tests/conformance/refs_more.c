/* refs_more.c: references for the conformance cases that pin down single
 * statements and builtins. */
#include "harness.h"

const RefEntry harness_refs_more[] = {
    {NULL, NULL},
};
