#!/bin/sh
# pmi_check.sh - the launcher cases that need a shell: a Telemem program
# under a fake launcher environment is refused with one message (or runs
# as a singleton when that is the job), and a rank's abort or exit under
# MPICH's Hydra ends the job.
# Usage: pmi_check.sh CASE PROGRAM...   (CASE: see below)
set -u
case_=$1; shift
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# Whatever launcher runs the tests must not leak into the fake ones.
for v in PMIX_NAMESPACE PMIX_RANK PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE \
         PMI_JOBID \
         MPI_LOCALNRANKS SLURM_STEP_ID SLURM_STEP_NUM_TASKS SLURM_NTASKS \
         SLURM_MPI_TYPE SLURM_PROCID SLURM_JOB_ID OMPI_COMM_WORLD_SIZE \
         OMPI_COMM_WORLD_RANK MV2_COMM_WORLD_SIZE TELEMEM_BOOTSTRAP \
         TELEMEM_KVS TELEMEM_RANK TELEMEM_NRANKS TELEMEM_JOBID; do
    unset "$v"
done

# refused VARS... -- PROGRAM: exit 3 (initialize failed), BOOTSTRAP, and
# exactly one error line, which contains $want.
refused() {
    env "$@" >"$out" 2>"$err"
    st=$?
    if [ $st != 3 ] || ! grep -q TELEMEM_ERR_BOOTSTRAP "$out"; then
        echo "FAIL: status $st, expected 3 and TELEMEM_ERR_BOOTSTRAP"
        cat "$out" "$err"; exit 1
    fi
    if [ "$(grep -c . "$err")" != 1 ] || ! grep -qF -- "$want" "$err"; then
        echo "FAIL: expected one line with: $want"; cat "$err"; exit 1
    fi
    echo "refused as expected:"; cat "$err"
}

# singleton VARS... -- PROGRAM: runs as rank 0 of 1, no message.
singleton() {
    env "$@" >"$out" 2>"$err"
    st=$?
    if [ $st != 0 ] || ! grep -q "rank 0 of 1 ok" "$out" || [ -s "$err" ]; then
        echo "FAIL: status $st, expected a quiet singleton"
        cat "$out" "$err"; exit 1
    fi
    echo "a singleton, as expected"
}

SRUN2="SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=2 SLURM_NTASKS=2 SLURM_PROCID=0"
case $case_ in
srun-none)      # srun --mpi=none -n 2
    want="launched by Slurm srun with 2 tasks but no PMI (--mpi=none): use srun --mpi="
    # shellcheck disable=SC2086
    refused $SRUN2 SLURM_MPI_TYPE=none "$1" 2 ;;
srun-ntasks)    # an older srun without SLURM_STEP_NUM_TASKS, no MPI type
    want="launched by Slurm srun with 3 tasks but no PMI (--mpi=none): use srun --mpi="
    refused SLURM_STEP_ID=0 SLURM_NTASKS=3 SLURM_PROCID=0 "$1" 3 ;;
ompi)           # Open MPI's variables without a PMIx server
    want="launched by Open MPI mpirun with 4 ranks but without PMIx"
    refused OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_RANK=0 "$1" 4 ;;
hydra-no-fd)    # Hydra's variables without PMI_FD or PMI_PORT
    want="launched by MPICH mpiexec (Hydra) with 2 ranks, which Telemem cannot join"
    refused PMI_SIZE=2 PMI_RANK=0 MPI_LOCALNRANKS=2 "$1" 2 ;;
mvapich)
    want="launched by MVAPICH mpirun_rsh with 2 ranks, which Telemem cannot join"
    refused MV2_COMM_WORLD_SIZE=2 "$1" 2 ;;
srun-one)       # srun -n 1 --mpi=none: one task is a singleton
    singleton SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=1 SLURM_NTASKS=1 \
        SLURM_PROCID=0 SLURM_MPI_TYPE=none "$1" 1 ;;
batch)          # a batch script of a 4-task job is one process
    singleton SLURM_JOB_ID=5 SLURM_NTASKS=4 "$1" 1 ;;
override)       # asked for: each task is a job of its own
    # shellcheck disable=SC2086
    singleton $SRUN2 SLURM_MPI_TYPE=none TELEMEM_BOOTSTRAP=singleton "$1" 1 ;;
hydra-abort)    # rank 1 aborts with 5 while rank 0 waits in a fence
    hydra=$1 prog=$2
    timeout 50 "$hydra" -n 2 "$prog" abort 1 5 >"$out" 2>"$err"
    st=$?
    # (Hydra may end the job before it forwards the rank's last line, the
    # reason: the status is what is checked.)
    if [ $st != 5 ]; then
        echo "FAIL: mpiexec exited $st, expected 5"
        cat "$out" "$err"; exit 1
    fi
    echo "the abort ended the job with status 5"; cat "$err" ;;
hydra-exit)     # rank 1 exits with 3 while rank 0 waits in a fence
    timeout 50 "$1" -n 2 "$2" exit 1 3 >"$out" 2>"$err"
    st=$?
    if [ $st = 0 ] || [ $st = 124 ]; then
        echo "FAIL: mpiexec exited $st (124: the fence hung)"
        cat "$out" "$err"; exit 1
    fi
    echo "the exit ended the job (status $st)" ;;
mpirun-no-pmix) # Open MPI's mpirun, a build without PMIx: refused
    want="launched by Open MPI mpirun with 2 ranks through PMIx, but this Telemem was built without PMIx (libpmix-dev)"
    timeout 50 "$1" --allow-run-as-root --oversubscribe -n 2 "$2" 2 \
        >"$out" 2>"$err"
    st=$?
    if [ $st = 0 ] || [ "$(grep -c TELEMEM_ERR_BOOTSTRAP "$out")" != 2 ] ||
       ! grep -qF -- "$want" "$err"; then
        echo "FAIL: mpirun exited $st; expected a refusal with: $want"
        cat "$out" "$err"; exit 1
    fi
    echo "refused as expected:"; grep -F -- "$want" "$err" | head -n 1 ;;
*)
    echo "pmi_check.sh: unknown case $case_"; exit 2 ;;
esac
exit 0
