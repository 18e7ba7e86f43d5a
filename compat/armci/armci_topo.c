/* armci_topo.c - topology and odds: SMP domains, ARMCI_Same_node, the
 * shared-memory queries and ARMCIX_Progress.  As in ARMCI-MPI each rank is
 * its own domain: ARMCI memory of another process is never directly
 * load/store accessible here, so programs must not take shortcuts that
 * assume it is (Global Arrays' mirrored arrays, direct access). */
#include "armci_internal.h"

static void check_domain(const char *call, armci_domain_t domain)
{
    tlm_armci_check_ready(call);
    if (domain != ARMCI_DOMAIN_SMP)
        tlm_armci_fail(call, "unknown domain kind %d (ARMCI_DOMAIN_SMP is %d)",
                       domain, ARMCI_DOMAIN_SMP);
}

static void check_id(const char *call, int id)
{
    if (id < 0 || id >= tlm_armci.n)
        tlm_armci_fail(call, "domain %d out of range [0, %d)", id,
                       tlm_armci.n);
}

int armci_domain_nprocs(armci_domain_t domain, int id)
{
    check_domain("armci_domain_nprocs", domain);
    check_id("armci_domain_nprocs", id);
    return 1;
}

int armci_domain_id(armci_domain_t domain, int glob_proc_id)
{
    check_domain("armci_domain_id", domain);
    tlm_armci_check_proc("armci_domain_id", glob_proc_id);
    return glob_proc_id;
}

int armci_domain_glob_proc_id(armci_domain_t domain, int id, int loc_proc_id)
{
    static const char call[] = "armci_domain_glob_proc_id";
    check_domain(call, domain);
    check_id(call, id);
    if (loc_proc_id != 0)
        tlm_armci_fail(call, "loc_proc_id %d out of range [0, 1)",
                       loc_proc_id);
    return id;
}

int armci_domain_my_id(armci_domain_t domain)
{
    check_domain("armci_domain_my_id", domain);
    return tlm_armci.me;
}

int armci_domain_count(armci_domain_t domain)
{
    check_domain("armci_domain_count", domain);
    return tlm_armci.n;
}

int armci_domain_same_id(armci_domain_t domain, int proc)
{
    check_domain("armci_domain_same_id", domain);
    return proc == tlm_armci.me;
}

int PARMCI_Same_node(int proc)
{
    tlm_armci_check_ready("ARMCI_Same_node");
    return proc == tlm_armci.me;
}
TLM_ARMCI_ALIAS(Same_node);

int PARMCI_Uses_shm(void)
{
    return 0;
}
TLM_ARMCI_ALIAS(Uses_shm);

void PARMCI_Set_shm_limit(unsigned long shmemlimit)
{
    (void)shmemlimit; /* Telemem sizes its own buffers (TELEMEM_SHM_*) */
}
TLM_ARMCI_ALIAS(Set_shm_limit);

int PARMCI_Uses_shm_grp(ARMCI_Group *group)
{
    (void)group;
    return 0;
}
TLM_ARMCI_ALIAS(Uses_shm_grp);

void ARMCIX_Progress(void)
{
    tlm_armci_check_ready("ARMCIX_Progress");
    tlm_armci_poll("ARMCIX_Progress");
}
