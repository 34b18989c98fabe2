/* ptx.h: the PTX backend's entry points (src/ptx/, behind ptx/emitter.h). */
#ifndef PHOBOS_PTX_H
#define PHOBOS_PTX_H

#include "plan/plan.h"

/* Whether a variant's entry uses the module's dynamic shared memory
 * (dsmem): a @dynshared kernel, or a staged-rows copy (its rows). */
bool ptx_uses_dynshared(const struct Plan *p);
/* whether the entries of p for arch take l2pf_param (src/l2pf.c, ptx/l2pf.c):
 * marked loads, an arch with the bulk prefetch, asynchronous copies allowed */
bool ptx_l2pf(const struct Plan *p, const char *arch);
/* The module: the header and every plan as its entry (plan_entry_name),
 * the PTX ISA version the kernels need; NULL where emission failed. */
char *ptx_emit_module(Arena *a, Diags *d, struct Plan *const *plans, int nplans, const char *arch, size_t *len);
/* The parameters (bit i: parameter i) whose rows the variant reads or
 * writes through an odd-pitch path (rows not 16-byte aligned, ptx/loads.c),
 * found by emitting it to nowhere, reporting nothing; false where it would
 * not emit or such a parameter is past bit 63. */
bool ptx_odd_row_params(Arena *a, Diags *d, const Plan *p, const char *arch, uint64_t *params);

#endif
