/* interp.h: the CPU reference interpreter of a planned kernel (interp.c),
 * which runs the conformance suite without a GPU. */
#ifndef PHOBOS_INTERP_H
#define PHOBOS_INTERP_H

#include "plan/plan.h"

/* A tensor argument: row-major contents as doubles (rounded to the element
 * type on store), and its extents. */
typedef struct InterpTensor {
  double *data;
  int rank;
  int64_t dims[MAX_TENSOR_RANK];
} InterpTensor;

typedef struct InterpArg {
  bool tensor;
  InterpTensor t;
  double scalar;
} InterpArg;

/* Runs every CTA of the grid (`grid`, three extents, or NULL for the
 * kernel's @grid) on the CPU, executing physical tiles with the
 * plan's masks and staging shared buffers through a simulated shared memory.
 * Returns false with a message in *err (dims that do not bind, a grid that
 * is not positive). */
bool interp_run(const Plan *p, InterpArg *args, int nargs, const int64_t *grid, char *err, size_t errlen);

/* The CTAs of a @persistent kernel's grid (axis x) the interpreter runs,
 * as if the device held that many at once (spec 9.8): few, and odd, so
 * that a kernel's loop over its work by ctx.grid.x strides is exercised. */
enum { INTERP_RESIDENT_CTAS = 3 };

/* Rounds a double to what an element of type e holds. */
double interp_round(Scalar e, double v);
/* An element's bytes in memory (little-endian; f16 and bf16 as their 16-bit
 * patterns), from and to a double that holds a value of that type. */
void interp_encode(unsigned char *p, Scalar e, double v);
double interp_decode(const unsigned char *p, Scalar e);

#endif
