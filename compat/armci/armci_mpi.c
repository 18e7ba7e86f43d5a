/* armci_mpi.c - the only MPI calls of libarmci: deciding whether MPI runs
 * over the same ranks (then every group carries a matching communicator in
 * ARMCI_Group.comm, as ARMCI-MPI's does), creating and freeing those
 * communicators, MPI_Abort, armci_msg_init's MPI_Init and
 * armci_msg_finalize's MPI_Finalize, and ending ARMCI inside the program's
 * MPI_Finalize.  ARMCI itself never needs MPI: everything else runs over
 * Telemem. */
#include <stdlib.h>

#include "armci_internal.h"

#if TELEMEM_ARMCI_HAVE_MPI

static bool mpi_running(void)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    return inited && !finalized;
}

void tlm_armci_mpi_detect(void)
{
    int size = 0, rank = -1;
    bool running = mpi_running();
    if (running) {
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    }
    int32_t ok = running && size == tlm_armci.n && rank == tlm_armci.me;
    tlm_armci_rc("ARMCI_Init",
                 telemem_allreduce(&ok, 1, TELEMEM_INT32, TELEMEM_MIN),
                 "allreduce");
    if (running && size > 1 && !ok)
        tlm_armci_fail("ARMCI_Init",
                       "MPI_COMM_WORLD has %d ranks (this is MPI rank %d) "
                       "but Telemem has %d (rank %d): ARMCI ranks must be "
                       "MPI ranks; start the job with an mpirun that "
                       "Telemem joins through PMIx, or with telemem-run",
                       size, rank, tlm_armci.n, tlm_armci.me);
    /* Under telemem-run a program that calls MPI_Init gets a singleton
     * MPI per process: ARMCI works, its groups just have no communicator. */
    tlm_armci.mpi_mode = ok;
}

void tlm_armci_mpi_world(ARMCI_Group *g)
{
    g->comm = MPI_COMM_NULL;
    g->noncoll_pgroup_comm = MPI_COMM_NULL;
    if (tlm_armci.mpi_mode && mpi_running())
        MPI_Comm_dup(MPI_COMM_WORLD, &g->comm);
}

void tlm_armci_mpi_child(const ARMCI_Group *parent, ARMCI_Group *child,
                         int color, int key)
{
    child->comm = MPI_COMM_NULL;
    child->noncoll_pgroup_comm = MPI_COMM_NULL;
    if (!tlm_armci.mpi_mode || !mpi_running() ||
        parent->comm == MPI_COMM_NULL)
        return;
    /* MPI orders by key, then parent rank: the order of our grp_to_abs. */
    MPI_Comm_split(parent->comm, color < 0 ? MPI_UNDEFINED : color, key,
                   &child->comm);
}

void tlm_armci_mpi_free(ARMCI_Group *g)
{
    if (g->comm != MPI_COMM_NULL && mpi_running())
        MPI_Comm_free(&g->comm);
    g->comm = MPI_COMM_NULL;
    g->noncoll_pgroup_comm = MPI_COMM_NULL;
}

void tlm_armci_mpi_abort(int code)
{
    if (tlm_armci.mpi_mode && mpi_running())
        MPI_Abort(MPI_COMM_WORLD, code);
}

void tlm_armci_mpi_init_if_launched(int *argc, char ***argv)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (inited || finalized)
        return;
    /* Started by Open MPI's mpirun (or another PMIx launcher)?  Programs
     * written for ARMCI over MPI expect armci_msg_init to start MPI. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK"))
        return;
    MPI_Init(argc, argv);
    tlm_armci.own_mpi = true;
}

static void finalize_at_exit(void)
{
    if (mpi_running())
        MPI_Finalize();
}

/* GA's armci_msg_finalize is MPI_Finalize, and programs written for it
 * exit without one of their own.  MPI that armci_msg_init started ends
 * now; MPI the program started ends at exit, unless the program finalizes
 * it first (its own MPI_Finalize after armci_msg_finalize stays legal). */
void tlm_armci_mpi_finalize_msg(void)
{
    static bool at_exit;
    if (tlm_armci.own_mpi && mpi_running())
        MPI_Finalize();
    tlm_armci.own_mpi = false;
    if (mpi_running() && !at_exit) {
        at_exit = true;
        atexit(finalize_at_exit);
    }
}

static void (*end_fn)(void);

static int self_deleted(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    if (end_fn)
        end_fn();
    return MPI_SUCCESS;
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI still
 * works (MPI-3.1 section 8.7.1): the callback ends ARMCI, so that a program
 * that ends with MPI_Finalize alone (ARMCI-MPI accepts that) also ends
 * Telemem, whose PMIx client mpirun would otherwise count as a process
 * that exited without finalizing. */
void tlm_armci_mpi_on_finalize(void (*end)(void))
{
    static bool set;
    if (set || !mpi_running())
        return;
    int key = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_deleted, &key,
                               NULL) != MPI_SUCCESS ||
        MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL) != MPI_SUCCESS)
        tlm_armci_fail("ARMCI_Init", "cannot attach to MPI_Finalize "
                                     "(MPI_Comm_set_attr on MPI_COMM_SELF)");
    end_fn = end;
    set = true;
}

#else /* !TELEMEM_ARMCI_HAVE_MPI */

void tlm_armci_mpi_detect(void)
{
    tlm_armci.mpi_mode = false;
}

void tlm_armci_mpi_world(ARMCI_Group *g)
{
    g->comm = NULL;
    g->noncoll_pgroup_comm = NULL;
}

void tlm_armci_mpi_child(const ARMCI_Group *parent, ARMCI_Group *child,
                         int color, int key)
{
    (void)parent;
    (void)color;
    (void)key;
    child->comm = NULL;
    child->noncoll_pgroup_comm = NULL;
}

void tlm_armci_mpi_free(ARMCI_Group *g)
{
    g->comm = NULL;
    g->noncoll_pgroup_comm = NULL;
}

void tlm_armci_mpi_abort(int code)
{
    (void)code;
}

void tlm_armci_mpi_init_if_launched(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
}

void tlm_armci_mpi_finalize_msg(void)
{
}

void tlm_armci_mpi_on_finalize(void (*end)(void))
{
    (void)end;
}

#endif
