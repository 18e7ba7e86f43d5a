#!/bin/sh
# slurm_check.sh - Telemem jobs under Slurm's srun on this host: starts a
# private munged, slurmctld and slurmd (configuration, state, sockets and
# logs in one directory under the build directory), runs 2-rank jobs with
# srun --mpi=pmi2 (libpmi2, and PMI-1 on the same socket), --mpi=pmix and
# --mpi=none (which must be refused with its message) and MPICH's mpiexec
# in an allocation, checks that a rank that aborts or exits ends the job,
# and stops every daemon it started, also on failure.  Exit 77 (skipped) with the reason
# when Slurm cannot start here.
# Usage: slurm_check.sh BUILD_SUBDIR LAUNCHER_JOB LAUNCHER_PMI PMIX PMI2
#        (PMIX, PMI2: yes or no, whether this Telemem has that adapter)
set -u
top=$1 job=$2 pmi=$3 have_pmix=$4 have_pmi2=$5
t0=$(date +%s)

skip() { echo "SKIP: $*"; exit 77; }
say() { echo "[$(( $(date +%s) - t0 ))s] $*"; }

PATH=$PATH:/usr/sbin:/sbin
for p in slurmctld slurmd srun salloc sinfo squeue scancel munged python3; do
    command -v "$p" >/dev/null ||
        skip "$p not found (Debian: slurm-wlm, munge; scripts/install-deps.sh test)"
done
[ "$(id -u)" = 0 ] || skip "slurmd must run as root to start tasks"

# Nothing of an outer launcher or of Telemem's own settings leaks in.
for v in PMIX_NAMESPACE PMIX_RANK PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE \
         PMI_JOBID \
         MPI_LOCALNRANKS OMPI_COMM_WORLD_SIZE MV2_COMM_WORLD_SIZE \
         TELEMEM_BOOTSTRAP TELEMEM_KVS TELEMEM_RANK TELEMEM_NRANKS \
         TELEMEM_JOBID TELEMEM_LOG_LEVEL TELEMEM_LOG_FILTER; do
    unset "$v"
done
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p'); do
    unset "$v"
done

# Unix socket paths (munge's, PMIx's under the spool) hold 107 bytes: a
# build directory deep in the tree gives its place to /tmp.
mkdir -p "$top" || exit 1
d=$(mktemp -d "$(cd "$top" && pwd)/slurm.XXXXXX") || exit 1
if [ ${#d} -gt 60 ]; then
    rmdir "$d"
    d=$(mktemp -d /tmp/telemem-slurm.XXXXXX) || exit 1
fi
mkdir -p "$d/munge" "$d/state" "$d/spool" "$d/log"
chmod 700 "$d/munge"
pids=""
ok=0

stop() {
    # our private cluster's jobs first (SLURM_CONF points at it), then the
    # daemons this script started, by pid
    if [ -n "$pids" ]; then
        scancel --quiet --user=root 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            [ -z "$(squeue -h 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    for p in $pids; do kill "$p" 2>/dev/null; done
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        alive=""
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && break
        sleep 0.5
    done
    for p in $alive; do kill -9 "$p" 2>/dev/null; done
    if [ "$ok" = 1 ]; then
        rm -rf "$d"
    else
        for f in "$d"/log/*; do
            [ -f "$f" ] && { echo "---- tail of $f"; tail -n 15 "$f"; }
        done
        echo "(state and logs kept in $d)"
    fi
}
trap 'stop' EXIT
trap 'exit 130' INT TERM

# munged, with its own key and socket
if command -v mungekey >/dev/null; then
    mungekey -c -k "$d/munge/munge.key" -b 1024 || exit 1
else
    dd if=/dev/urandom of="$d/munge/munge.key" bs=1 count=1024 2>/dev/null
    chmod 600 "$d/munge/munge.key"
fi
chmod 755 "$d/munge"
munged -F -f --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" \
    --pid-file="$d/munge/munged.pid" --seed-file="$d/munge/munged.seed" \
    --log-file="$d/log/munged.log" >"$d/log/munged.out" 2>&1 &
pids="$!"

# two free TCP ports for slurmctld and slurmd
ports=$(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))') || exit 1
set -- $ports
host=$(hostname -s)
export SLURM_CONF="$d/slurm.conf"
# A job id of its own each run: Telemem names shared memory after it.
first=$(( ($$ * 7919 + t0) % 60000000 + 1000 ))
cat >"$SLURM_CONF" <<EOF
ClusterName=tlm$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$1
SlurmdPort=$2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
FirstJobId=$first
ReturnToService=2
InactiveLimit=0
KillWait=2
NodeName=tlmnode NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=tlm Nodes=tlmnode Default=YES MaxTime=5 State=UP OverSubscribe=YES
EOF
for _ in 1 2 3 4 5 6 7 8 9 10; do
    [ -S "$d/munge/munge.sock" ] && break
    sleep 0.3
done
[ -S "$d/munge/munge.sock" ] || { cat "$d/log/munged.out"; skip "munged did not start"; }
slurmctld -D -i -f "$SLURM_CONF" >"$d/log/slurmctld.out" 2>&1 &
pids="$! $pids"
slurmd -D -f "$SLURM_CONF" -N tlmnode >"$d/log/slurmd.out" 2>&1 &
pids="$! $pids"
state=""
for _ in $(seq 60); do
    state=$(sinfo -h -n tlmnode -o %T 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.5
done
[ "$state" = idle ] || {
    tail -n 5 "$d/log/slurmctld.out" "$d/log/slurmd.out"
    skip "Slurm did not start here (node state '${state:-none}')"
}
say "Slurm up: $(srun --version), node tlmnode idle"
if ! out=$(timeout 30 srun -n 1 -t 1 true 2>&1); then
    echo "$out"
    skip "Slurm started but cannot run a task here"
fi
mpis=$(srun --mpi=list 2>&1)
echo "srun --mpi=list: $(echo "$mpis" | tr '\n\t' '  ')"

fails=0
run() { # run NAME ARGS...: srun ARGS, output in $d/log/NAME.{out,err}
    rn=$1; shift
    timeout 60 srun -N 1 -n 2 -O -t 1 "$@" >"$d/log/$rn.out" \
        2>"$d/log/$rn.err"
}
# job NAME MPI [VAR=value...]: a 2-rank Telemem job through the adapter
# named by the log line "... through <adapter>"
job() {
    name=$1 mpi=$2 adapter=$3; shift 3
    if run "$name" --mpi="$mpi" env TELEMEM_LOG_LEVEL=info \
           TELEMEM_LOG_FILTER=boot "$@" "$job" 2 &&
       [ "$(grep -c ' ok$' "$d/log/$name.out")" = 2 ] &&
       [ "$(grep -c "through $adapter\$" "$d/log/$name.err")" = 2 ] &&
       run "$name-kvs" --mpi="$mpi" env "$@" "$pmi" kvs 2 &&
       [ "$(grep -c 'store ok$' "$d/log/$name-kvs.out")" = 2 ]; then
        say "ok   $name: srun --mpi=$mpi $*: 2 ranks through $adapter"
    else
        say "FAIL $name: srun --mpi=$mpi $*"
        cat "$d/log/$name"*.out "$d/log/$name"*.err
        fails=$((fails + 1))
    fi
}

# ends NAME WHAT ARGS...: a job that fails must end, not hang
ends() {
    name=$1 what=$2; shift 2
    run "$name" "$@"
    st=$?
    if [ $st != 0 ] && [ $st != 124 ]; then
        say "ok   $name: $what, srun ended the step (status $st)"
    else
        say "FAIL $name: $what: srun returned $st (124: it hung)"
        cat "$d/log/$name.out" "$d/log/$name.err"
        fails=$((fails + 1))
    fi
}

if echo "$mpis" | grep -qw pmi2; then
    # without libpmi2, srun --mpi=pmi2 jobs are joined over PMI-1
    adapter=pmi1
    [ "$have_pmi2" = yes ] && adapter=pmi2
    job pmi2 pmi2 "$adapter"
    job pmi2-pmi1 pmi2 pmi1 TELEMEM_BOOTSTRAP=pmi1
    # an abort ends the step; so does a rank that exits while the other
    # waits in a fence, with -K (PMI-2 does not end that fence by itself)
    ends pmi2-abort "rank 1 aborted" --mpi=pmi2 "$pmi" abort 1 5
    ends pmi2-exit "rank 1 exited, -K" --mpi=pmi2 -K "$pmi" exit 1 3
else
    say "skip pmi2: this Slurm offers no pmi2 plugin"
fi

if [ "$have_pmix" != yes ] && echo "$mpis" | grep -qw pmix; then
    # a build without PMIx refuses srun --mpi=pmix, and says what works
    want="launched by Slurm srun with 2 tasks through PMIx, but this Telemem was built without PMIx (libpmix-dev): rebuild it with PMIx, use srun --mpi=pmi2, or start the job with telemem-run"
    if ! run pmix-refused --mpi=pmix "$job" 2 &&
       [ "$(grep -cF -- "$want" "$d/log/pmix-refused.err")" = 2 ]; then
        say "ok   pmix: refused by this build without PMIx"
    else
        say "FAIL pmix: not refused with the message"
        cat "$d/log/pmix-refused.out" "$d/log/pmix-refused.err"
        fails=$((fails + 1))
    fi
elif [ "$have_pmix" != yes ]; then
    say "skip pmix: this Telemem is built without PMIx"
elif ! echo "$mpis" | grep -qw pmix; then
    say "skip pmix: this Slurm offers no pmix plugin"
else
    job pmix pmix pmix
    ends pmix-exit "rank 1 exited" --mpi=pmix "$pmi" exit 1 3
fi

# MPICH's mpiexec in an allocation: Hydra starts its proxies with srun,
# the ranks see a Slurm step and Hydra's PMI_FD: PMI-1
if command -v mpiexec.hydra >/dev/null; then
    if timeout 60 salloc -N 1 -n 2 -O -t 1 env TELEMEM_LOG_LEVEL=info \
           TELEMEM_LOG_FILTER=boot mpiexec.hydra -n 2 "$job" 2 \
           >"$d/log/hydra.out" 2>"$d/log/hydra.err" &&
       [ "$(grep -c ' ok$' "$d/log/hydra.out")" = 2 ] &&
       [ "$(grep -c 'through pmi1$' "$d/log/hydra.err")" = 2 ]; then
        say "ok   hydra: salloc -n 2 mpiexec.hydra -n 2: 2 ranks through pmi1"
    else
        say "FAIL hydra: salloc -n 2 mpiexec.hydra -n 2"
        cat "$d/log/hydra.out" "$d/log/hydra.err"
        fails=$((fails + 1))
    fi
else
    say "skip hydra: no mpiexec.hydra (mpich)"
fi

# --mpi=none: 2 tasks and no PMI: each is refused, with the fix
want="launched by Slurm srun with 2 tasks but no PMI (--mpi=none): use srun --mpi="
if run none --mpi=none "$job" 2; then
    say "FAIL none: the job ran"
    fails=$((fails + 1))
elif [ "$(grep -c TELEMEM_ERR_BOOTSTRAP "$d/log/none.out")" = 2 ] &&
     [ "$(grep -cF -- "$want" "$d/log/none.err")" = 2 ]; then
    say "ok   none: refused: $(grep -F -- "$want" "$d/log/none.err" | head -n 1 | sed 's/.*error: //')"
else
    say "FAIL none: not refused with the message"
    cat "$d/log/none.out" "$d/log/none.err"
    fails=$((fails + 1))
fi

[ $fails = 0 ] && ok=1
say "done: $fails failed"
exit $((fails > 0))
