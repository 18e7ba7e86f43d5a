/* netpipe_opts.h - the options of the NetPIPE benchmark (netpipe.c): the
 * knobs every rank must agree on, their defaults and limits, and the
 * parser and --help text (netpipe_opts.c). */
#ifndef NETPIPE_OPTS_H
#define NETPIPE_OPTS_H

#include <stdint.h>
#include <stdio.h>

enum {
    MODE_LATENCY = 1u << 0,
    MODE_BURST = 1u << 1,
    MODE_STREAM = 1u << 2,
    MODE_ALL = MODE_LATENCY | MODE_BURST | MODE_STREAM
};

#define MAX_SIZE ((uint64_t)1 << 30) /* 1 GiB: more is surely a typo */
#define MAX_SAMPLES 1000
#define MAX_WINDOW 64
#define MAX_OFFSET 4095

/* Every knob that both ranks must agree on (broadcast from rank 0). */
struct knobs {
    uint64_t min, max;       /* message sizes */
    uint64_t reps;           /* iterations per sample, 0 = automatic */
    double time;             /* seconds per size and mode (automatic reps) */
    double spin_timeout;     /* seconds a flag wait may last */
    double max_seconds;      /* per mode; 0 = no limit */
    uint32_t pert;           /* NetPIPE perturbation */
    uint32_t samples;        /* timed samples per size */
    uint32_t window;         /* target slots rotated over (burst, stream) */
    uint32_t off[2];         /* byte offset of rank 0's / rank 1's buffers */
    uint32_t modes;          /* MODE_* mask */
    int32_t touch, check, inline_flag, verbose;
    int32_t bind;            /* pin rank r to the r-th allowed CPU */
    int32_t poll;            /* waits call the library's progress call */
};

struct opts {
    struct knobs k;
    const char *output; /* NULL = stdout */
    const char *path;   /* --path: TELEMEM_DIRECT, NULL = leave alone */
    int help;
    char err[512];      /* non-empty: bad arguments */
};

/* Parse argv into o (defaults first); o->err says what was wrong. */
void np_parse_args(int argc, char **argv, struct opts *o);
/* The --help text. */
void np_usage(FILE *f);

#endif
