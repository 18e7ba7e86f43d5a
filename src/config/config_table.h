/* config_table.h - every TELEMEM_* setting, declared once:
 * TLM_CONFIG(NAME, type, "default", "range", "doc").  From this list come
 * the config struct, the parser, TELEMEM_PRINT_CONFIG and the README table
 * (a lint test keeps the README in step and wants a range on every row).
 * Types: SIZE (units k/m/g/t), INT, BOOL (y/n/1/0), SECONDS ("30", "200ms",
 * "2m"), STRING, LOGLEVEL, SECRET (a string never printed).  Ranges:
 * "min..max" (INT, SIZE, SECONDS; in the type's own syntax), "a|b|c" (one
 * of these words), "list:a,b,c" (a comma list of some of them, or empty),
 * "*" (any text, checked where it is used), "" (BOOL and LOGLEVEL: the
 * type's words).  A value outside its range fails initialization with
 * TELEMEM_ERR_CONFIG, naming the variable and the range.
 * TLM_CONFIG_ENV(NAME) names a variable of another library (libfabric's
 * FI_*) that a layer consults: the config machinery reads it into the
 * struct as a string, NULL when unset; it is no setting of ours (not
 * parsed, printed or listed).  An includer that does not define it skips
 * those rows. */
#ifndef TLM_CONFIG_ENV
#define TLM_CONFIG_ENV(name)
#define TLM_CONFIG_ENV_SKIP
#endif
TLM_CONFIG(TRANSPORT, STRING, "auto", "auto|shm|ofi|ucx|shm+ofi|shm+ucx",
           "Transport to other ranks: auto (shm on this node; to other nodes libfabric with a fabric provider, else UCX, else libfabric over TCP), shm, ofi or ucx (all ranks), shm+ofi or shm+ucx (shm on this node, that network transport to other nodes)")
/* The backends' own rows: each declares its settings in its own directory
 * (src/backends/<name>/<name>_config.h). */
#include "backends/backend_config.h"
TLM_CONFIG(BOOTSTRAP, STRING, "auto", "auto|telemem|pmix|pmi2|pmi1|singleton",
           "How a process joins its job: auto (telemem-run if it started us, else the launcher's PMIx, PMI-2 or PMI-1, else a singleton; refused when a launcher started several ranks that cannot be joined), telemem, pmix, pmi2, pmi1 or singleton")
TLM_CONFIG(TIMEOUT, SECONDS, "0", "0..31536000",
           "Longest a wait (quiet, get, barrier, ...) may take before TELEMEM_ERR_TIMED_OUT; 0 = no limit")
TLM_CONFIG(LIVENESS_INTERVAL, SECONDS, "0.5", "0.01..60",
           "How often a waiting rank checks that its peers are alive (dead peer -> TELEMEM_ERR_PEER_DEAD)")
TLM_CONFIG(WAIT, STRING, "auto", "auto|spin|yield|block",
           "How a waiting rank spends its time: auto (spin for as long as a sleep and wake-up costs here, measured at start and then from the job's own wake-ups, then yield as long, then sleep until a message arrives; no spin while the node has more runnable threads than CPUs or while spinning does not pay), spin (poll without pause), yield (spin, then yield the core between polls, never sleep) or block (sleep as soon as a poll finds nothing); docs/wait.md")
TLM_CONFIG(PROGRESS_THREAD, BOOL, "off", "",
           "on: a thread per process serves requests while the application does not call Telemem (it sleeps when idle; a peer waiting for it wakes it)")
TLM_CONFIG(PROGRESS_CPU, INT, "-1", "-1..1023",
           "Pin the progress thread to this CPU; -1 = let the kernel place it on any CPU of the node")
TLM_CONFIG(LOG_LEVEL, LOGLEVEL, "warn", "",
           "Log level: error, warn, info, debug, trace, data")
TLM_CONFIG(LOG_FILE, STRING, "", "*",
           "Log to this file instead of stderr; %r is replaced by the rank, %p by the pid")
TLM_CONFIG(LOG_FILTER, STRING, "", "list:core,coll,am,boot,direct,regcache,shm,window,loop,ofi,ucx",
           "Comma-separated subsystems to log (core, am, shm, boot, ...); empty = all")
TLM_CONFIG(PRINT_CONFIG, BOOL, "n", "",
           "Rank 0 prints every setting at initialization")
TLM_CONFIG(RANK, INT, "-1", "-1..2147483646",
           "This process's rank (set by telemem-run)")
TLM_CONFIG(NRANKS, INT, "-1", "-1..2147483647",
           "Number of ranks (set by telemem-run)")
TLM_CONFIG(KVS, STRING, "", "*",
           "Address of the launcher's key-value store (set by telemem-run)")
TLM_CONFIG(JOBID, STRING, "", "*",
           "Job identifier, unique on this host (set by telemem-run)")
TLM_CONFIG(KVS_SECRET, SECRET, "", "*",
           "The job's secret, which a rank proves (never sends) to join the launcher's store (set by telemem-run; never printed; docs/bootstrap.md)")
TLM_CONFIG(COLL, STRING, "auto", "auto|flat",
           "Collectives: auto (node-aware: the ranks of a node meet through shared memory, one leader per node exchanges messages with the other nodes' leaders) or flat (messages among all ranks); docs/coll.md")
TLM_CONFIG(COLL_NODE_MEM, SIZE, "64m", "64k..1g",
           "Shared-memory buffers of a node's collectives (one area per node, touched as used): data goes through in pieces of this size over twice the ranks on the node plus two, at most 1 MiB")
TLM_CONFIG(COLL_THRESHOLD, STRING, "", "*",
           "Collectives' choices by size, a comma list name:size: reduce-split (every rank of a node reduces a stripe of an allreduce piece when ranks x piece bytes reach it, else the last to arrive reduces it all), reduce-split-fit (the same where the node's ranks fit its CPUs; the smaller of the two applies there), bcast-cma (from this size each rank of a node reads a broadcast from the root's buffer with process_vm_readv), bcast-piece (the most a broadcast puts in the node area per step where the node's ranks fit its CPUs), reduce-scatter (from this size an allreduce between nodes reduces a block on each leader instead of a tree); empty = the calibration profile's coll-* lines, else the defaults; docs/coll.md")
TLM_CONFIG(DIRECT, STRING, "auto", "auto|never|always",
           "Direct (RDMA) path for put/get: auto (per message, by size: the thresholds below), never (active messages only), always (every transfer a direct driver can take); docs/direct.md")
TLM_CONFIG(DIRECT_THRESHOLD, STRING, "", "*",
           "Under auto, the smallest contiguous put/get that takes the direct path: a size for every driver (64k) or a comma list per driver or transport (window:32k,ofi-rma:256k,ucx:1m); empty = the calibration profile, else the driver's default")
TLM_CONFIG(DIRECT_ROW_THRESHOLD, STRING, "", "*",
           "Under auto, the shortest contiguous row of a strided put/get that takes the direct path as a block-stride chain (shorter rows are packed into messages); same syntax as DIRECT_THRESHOLD")
TLM_CONFIG(DIRECT_PROFILE, STRING, "", "*",
           "Calibration profile read by auto (written by telemem-run --calibrate); empty = $XDG_CACHE_HOME/telemem/direct.profile or ~/.cache/telemem/direct.profile")
TLM_CONFIG(DIRECT_CMA, BOOL, "y", "",
           "The same-node direct path may reach telemem_register ranges with process_vm_writev/readv (n: such ranges take the AM path; blocks of telemem_malloc_all still go direct)")
TLM_CONFIG(REG_CACHE_MAX, SIZE, "512m", "0..1t",
           "Most bytes the direct path's network drivers (ofi-rma, ucx-rma) keep registered (pinned) at once; unused registrations are dropped least recently used first, and memory beyond the cap takes the active-message path")
TLM_CONFIG(NET_MAX_PEERS, INT, "0", "0..2147483647",
           "Most peers a process contacts over a network transport (ofi, ucx), first come first served: each holds a connection and its provider's buffers; a send to one more fails with TELEMEM_ERR_UNREACHABLE, a peer that contacted this process is always answered; 0 = no limit")
#ifdef TLM_CONFIG_ENV_SKIP
#undef TLM_CONFIG_ENV
#undef TLM_CONFIG_ENV_SKIP
#endif
