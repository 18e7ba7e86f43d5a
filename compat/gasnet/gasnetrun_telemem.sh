#!/bin/sh
# gasnetrun_telemem - GASNet's launcher for the telemem conduit: takes the
# command line of GASNet's gasnetrun_<conduit> scripts and starts the
# program through telemem-run, which is installed beside it (installed as
# bin/gasnetrun_telemem; docs/gasnet.md, "Installed layout").
#
#   gasnetrun_telemem -n N [options] [--] prog [args...]
#
# -n/-np N (also -nN, -npN) ranks; -N N (nodes), -c N (CPUs per process)
# and -E VAR,... (variables to pass on: a rank gets the whole environment
# of this host) are accepted as GASNet's launchers accept them; -v prints
# the command, -t prints it without running it, -k is accepted.  Every
# rank runs on this host: for several hosts call telemem-run -H directly.
# The exit status is telemem-run's (the program's own, or 124/125/127).
me=gasnetrun_telemem
usage() {
    [ $# -gt 0 ] && echo "$me: $*" >&2
    cat >&2 <<EOF
usage: $me -n <n> [options] [--] prog [program args]
    -n <n>              number of processes to run
    -N <n>              number of nodes (accepted; ranks run on this host)
    -c <n>              CPUs per process (accepted, not used)
    -E <VAR1[,VAR2...]> environment variables to propagate (all are)
    -v                  be verbose: print the command run
    -t                  test only: print the command, run nothing
    -k                  keep temporary files (there are none)
    --                  ends option parsing
EOF
    exit 1
}
posint() { case "$1" in ''|*[!0-9]*|0*) return 1 ;; esac; return 0; }

np="" verbose=0 dry=0
while [ $# -gt 0 ]; do
    case "$1" in
    --) shift; break ;;
    -n|-np)
        [ $# -ge 2 ] || usage "$1 option given without an argument"
        posint "$2" || usage "$1 option with invalid argument '$2'"
        np=$2; shift ;;
    -n[0-9]*|-np[0-9]*)
        v=${1#-n}; v=${v#p}
        posint "$v" || usage "option with invalid argument '$1'"
        np=$v ;;
    -N|-c|-E)
        [ $# -ge 2 ] || usage "$1 option given without an argument"
        shift ;;
    -N[0-9]*) ;;
    -v) verbose=1 ;;
    -t) dry=1; verbose=1 ;;
    -k) verbose=1 ;;
    -encode*|--encode*|-noencode*|--noencode*) ;;
    -h|-help|--help) usage ;;
    -*) usage "unrecognized option '$1'" ;;
    *) break ;;
    esac
    shift
done
[ -n "$np" ] || usage "Required option -n was not given"
[ $# -gt 0 ] || usage "No program specified"

here=$(dirname "$0")
run="$here/telemem-run"
[ -x "$run" ] || { echo "$me: no telemem-run beside $0" >&2; exit 125; }
[ "$verbose" = 0 ] || echo "$me: $run -n $np -- $*" >&2
[ "$dry" = 0 ] || exit 0
exec "$run" -n "$np" -- "$@"
