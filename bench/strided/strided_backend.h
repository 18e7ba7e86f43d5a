/* strided_backend.h - what bench/strided/strided.c needs from a
 * communication library: one implementation over telemem.h
 * (backend_telemem.c -> telemem-strided) and one over ARMCI-MPI
 * (backend_armci.c -> armci-mpi-strided), so that both programs share the
 * measurement code line for line.
 *
 * Every function either succeeds or prints the failing call and ends the
 * process with exit status 1 (the launcher then ends the job). */
#ifndef STRIDED_BACKEND_H
#define STRIDED_BACKEND_H

#include <stddef.h>
#include <stdio.h>

/* Program name and the default implementation label of the CSV. */
const char *sb_prog(void);
const char *sb_label(void);

/* This process's rank as the launcher announced it in the environment,
 * before initialization (-1 when started without a launcher). */
int sb_env_rank(void);

void sb_init(int *argc, char ***argv);
void sb_finalize(void);
int sb_rank(void);
int sb_nranks(void);

/* Collective: one block of @p bytes per rank; bases[i] = rank i's block. */
void sb_malloc_all(size_t bytes, void **bases);
void sb_free_all(void *mine);

/* Collective; serves incoming requests while it waits. */
void sb_barrier(void);
void sb_broadcast(void *buf, size_t bytes, int root);
void sb_allgather(const void *in, void *out, size_t bytes_per_rank);

/* A strided put (get) in ARMCI's convention with size_t arrays, complete
 * at the target (holding the data) when the call returns: the library's
 * put followed by its completion call (quiet / fence), so that both
 * libraries are measured for the same work. */
void sb_put_strided(int rank, void *remote, const size_t *remote_strides,
                    const void *local, const size_t *local_strides,
                    const size_t *count, int levels);
void sb_get_strided(int rank, void *local, const size_t *local_strides,
                    const void *remote, const size_t *remote_strides,
                    const size_t *count, int levels);

/* "# key = value" header lines describing the library and its settings. */
void sb_print_header(FILE *out);

#endif
