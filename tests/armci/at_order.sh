#!/bin/sh
# at_order.sh - runs at_order.c once for each order of starting and ending
# ARMCI, its messaging layer and MPI that ARMCI-MPI 0.3.1 accepts (with
# Global Arrays' armci_msg_init = MPI_Init unless MPI is up, and
# armci_msg_finalize = MPI_Finalize), and fails on the first run that
# fails.  The list was found by running every order of up to three of
# mi/pi/ai and af/mf/pf (then exit) on ARMCI-MPI under mpirun at 2 ranks:
# these 16 exit 0, every other one fails there.
#
# usage: at_order.sh [--no-msg-mpi] -- LAUNCHER... PROGRAM
#   runs LAUNCHER... PROGRAM START END for each order.
#   --no-msg-mpi  armci_msg_init starts no MPI here (libarmci's own under
#                 telemem-run): leave out the orders whose only MPI call
#                 is MPI_Finalize, which would then end an MPI that never
#                 started.
# A run that exits 77 (at_mpirun.sh: Telemem cannot join the job) makes
# the whole test a skip.
set -u
no_msg_mpi=0
while [ $# -gt 0 ]; do
    case "$1" in
    --no-msg-mpi) no_msg_mpi=1; shift ;;
    --) shift; break ;;
    *) echo "at_order.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: at_order.sh [--no-msg-mpi] -- CMD..." >&2; exit 2; }

n=0
for start in mi,ai pi,ai pi,mi,ai pi,ai,mi; do
    for end in mf pf af,mf af,pf; do
        case "$no_msg_mpi:$start:$end" in
        1:mi,ai:pf|1:mi,ai:af,pf) continue ;;
        esac
        echo "at_order.sh: $* $start $end"
        "$@" "$start" "$end"
        status=$?
        if [ "$status" = 77 ]; then
            exit 77
        fi
        if [ "$status" != 0 ]; then
            echo "at_order.sh: FAIL order $start $end: exit status $status"
            exit 1
        fi
        n=$((n + 1))
    done
done
echo "at_order.sh: PASS $n orders"
