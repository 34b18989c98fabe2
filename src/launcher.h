/* launcher.h: `phobosc --emit=header` (launcher.c). */
#ifndef PHOBOS_LAUNCHER_H
#define PHOBOS_LAUNCHER_H

#include "plan/plan.h"

#include <stdio.h>

/* A C header of typed launchers, one a kernel of plans (a kernel's variants
 * consecutive), for the module compiled from `source`. */
void launcher_write(Arena *a, FILE *out, const char *source, Plan **plans, int nplans);

#endif
