/* cubin.h: running ptxas. */
#ifndef PHOBOS_CUBIN_H
#define PHOBOS_CUBIN_H

#include <stdbool.h>
#include <stdio.h>

/* The ptxas to run, or NULL. */
const char *cubin_find_ptxas(char *buf, size_t len);
/* Assembles ptx_path into cubin_path for `arch` and checks that ptxas
 * wrote a cubin (an ELF64 for EM_CUDA); on failure reports to err, keeps
 * the PTX and prints the command that reproduces it. */
bool cubin_assemble(const char *ptx_path, const char *cubin_path, const char *arch, bool verbose, FILE *err);

#endif
