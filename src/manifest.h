/* manifest.h: the YAML manifest phobosc writes beside a cubin. */
#ifndef PHOBOS_MANIFEST_H
#define PHOBOS_MANIFEST_H

#include "plan/plan.h"

/* FNV-1a, 64 bits: the source hash the autotune cache is keyed by. */
uint64_t manifest_hash(const char *text, size_t len);
/* Writes the manifest of the planned variants (grouped by kernel, in
 * order); false with a message. */
bool manifest_write(FILE *out, const Source *src, const char *arch, const char *cubin, Plan **plans, int nplans,
                    char *err, size_t errlen);

#endif
