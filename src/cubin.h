/* cubin.h: running ptxas. */
#ifndef PHOBOS_CUBIN_H
#define PHOBOS_CUBIN_H

#include <stdbool.h>
#include <stdio.h>

/* The ptxas to run, or NULL. */
const char *cubin_find_ptxas(char *buf, size_t len);
/* Assembles ptx_path into cubin_path for `arch` and checks that ptxas
 * wrote a cubin (an ELF64 for EM_CUDA); on failure reports to err, keeps
 * the PTX and prints the command that reproduces it. ptxas runs with -v:
 * its report goes to err when verbose, and into *report (malloc'ed, the
 * caller frees it; NULL when there is none) when report is not NULL. */
/* refusal: NULL, or where ptxas's messages (malloc'ed) and exit status go
 * when it exits with a failure; then nothing is printed: the caller may
 * leave the entries it names out and try again, or print it as this would
 * have (cubin_print_refusal; driver.c) */
typedef struct CubinRefusal {
  char *msg;
  int exit_code;
  int threads; /* the --split-compile of the run that failed (0: none) */
} CubinRefusal;
bool cubin_assemble(const char *ptx_path, const char *cubin_path, const char *arch, bool verbose, FILE *err,
                    char **report, CubinRefusal *refusal);
void cubin_print_refusal(FILE *err, const char *ptx_path, const char *cubin_path, const char *arch,
                         const CubinRefusal *r);
/* For each entry of a ptxas -v report that spills: fn(entry, its name's
 * length, bytes of spill stores, bytes of spill loads, ctx). */
void cubin_spills(const char *report, void (*fn)(const char *entry, int len, long stores, long loads, void *ctx),
                  void *ctx);

#endif
