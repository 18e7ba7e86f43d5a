/* fft.h - the interfaces inside the distributed FFT benchmark (bench/fft,
 * docs/fft.md): the all-to-all backends (MPI_Alltoall, Telemem puts, ARMCI
 * puts) that fft.c drives, and the PAPI counter wrapper (fft_papi.c). */
#ifndef TELEMEM_BENCH_FFT_H
#define TELEMEM_BENCH_FFT_H

#include <stddef.h>

/*
 * One all-to-all variant.  Every function is collective over all ranks
 * (MPI_COMM_WORLD, which the program initialized before calling init) and
 * returns 0 on success; on failure it prints one line naming the call and
 * the status to stderr and returns non-zero (the caller then aborts the
 * job).
 */
typedef struct fft_a2a {
    /** Name given to --alltoall and written in the CSV "alltoall" column. */
    const char *name;
    /** Start the communication library (MPI is already up). */
    int (*init)(int *argc, char ***argv);
    /** A line describing the library and its settings, for the header. */
    const char *(*describe)(void);
    /**
     * Allocate @p bytes on every rank as a valid target of the other ranks'
     * puts; *@p local_p receives this rank's block (64-byte aligned).  May
     * be called several times; blocks are freed with free_array in any
     * order.
     */
    int (*alloc)(size_t bytes, void **local_p);
    /**
     * The all-to-all: block q of @p snd (bytes [q*blk, (q+1)*blk)) goes to
     * rank q's @p rcv at offset myrank*blk.  @p rcv is a block of alloc
     * (the same call on every rank); @p snd is local memory.  When it
     * returns, this rank's @p rcv holds every rank's contribution and
     * @p snd may be overwritten.
     */
    int (*alltoall)(const void *snd, void *rcv, size_t blk);
    /** Free a block of alloc. */
    int (*free_array)(void *local);
    /** Stop the library (MPI is finalized afterwards by the caller). */
    int (*fini)(void);
} fft_a2a_t;

extern const fft_a2a_t fft_a2a_mpi;
#ifdef FFT_HAVE_TELEMEM
extern const fft_a2a_t fft_a2a_telemem;
#endif
extern const fft_a2a_t fft_a2a_armci;

/* ---- symmetric arrays of the put-based all-to-alls (fft.c) ------------- */

/** An array from a library's collective allocation: this rank's address
 *  and every rank's base, found again by the local address. */
#define FFT_SYM_MAX 8
typedef struct fft_sym {
    void *local;
    void **bases;
} fft_sym_t;

/** A free entry of tab[FFT_SYM_MAX] with a zeroed bases array of np
 *  pointers to fill; NULL (said on stderr, naming lib) when full or out of
 *  memory.  Set ->local once the allocation succeeded, else free ->bases. */
fft_sym_t *fft_sym_new(fft_sym_t *tab, int np, const char *lib);
/** The entry of local, or NULL ("fft: <what> memory not from alloc"). */
fft_sym_t *fft_sym_find(fft_sym_t *tab, const void *local, const char *what);
/** Forget e and free its bases array. */
void fft_sym_drop(fft_sym_t *e);

/* ---- PAPI (fft_papi.c) ------------------------------------------------ */

/** Counter slots, in CSV column order. */
enum {
    FFT_PAPI_L1_DCM,
    FFT_PAPI_L2_DCM,
    FFT_PAPI_L3_DCM,
    FFT_PAPI_TOT_CYC,
    FFT_PAPI_TOT_INS,
    FFT_PAPI_NSLOTS
};

/** CSV column names of the slots ("papi_l1_dcm", ...). */
extern const char *const fft_papi_columns[FFT_PAPI_NSLOTS];

/**
 * Set up the counters of this thread.  Never fails: when PAPI was not built
 * in or no counter can be counted, fft_papi_available() is 0 and
 * *@p reason_p says why (a static string); the other calls then do nothing.
 */
void fft_papi_init(const char **reason_p);
/** 1 if at least one slot is counted. */
int fft_papi_available(void);
/** 1 if slot @p s is counted; *@p event_p gets the PAPI event name used. */
int fft_papi_slot(int s, const char **event_p);
/** Start counting (zeroes the running counts). */
void fft_papi_start(void);
/** Add the counts since the last start/resume to @p acc, then pause. */
void fft_papi_pause(long long acc[FFT_PAPI_NSLOTS]);
/** Resume counting after fft_papi_pause (discards what happened since). */
void fft_papi_resume(void);
/** Stop counting (after a final fft_papi_pause). */
void fft_papi_stop(void);

#endif /* TELEMEM_BENCH_FFT_H */
