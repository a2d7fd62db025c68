#!/bin/bash
# record-mpi.sh: records what Son of Grid Engine 8.1.9 does with parallel
# jobs (PE_HOSTFILE, qrsh -inherit, -pe slot ranges) into t/sge/mpi/.
#
# Run once as root on a host with Grid Engine running (queue all.q@vm);
# it adds the PEs mpi and mpinoctl to all.q's pe_list and leaves the rest.
# The tests compare nowq with these files, after t/e2e normalises job ids,
# host names and paths.
set -u
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
out=$(cd "$(dirname "$0")" && pwd)/mpi
mkdir -p "$out"
work=$(mktemp -d /tmp/record-mpi.XXXXXX)
chmod 755 "$work"
cd "$work" || exit 1

pe() {	# NAME RULE CONTROL_SLAVES JOB_IS_FIRST_TASK
	cat > pe.$1 <<PE
pe_name            $1
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $2
control_slaves     $3
job_is_first_task  $4
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
PE
	/usr/bin/qconf -sp "$1" >/dev/null 2>&1 && /usr/bin/qconf -Mp pe.$1 || /usr/bin/qconf -Ap pe.$1
	/usr/bin/qconf -aattr queue pe_list "$1" all.q >/dev/null 2>&1 || true
}
pe mpi '$round_robin' TRUE FALSE
pe mpinoctl '$round_robin' FALSE TRUE
/usr/bin/qconf -sp mpi > "$out/qconf-sp-mpi.out"

# The job script (t/sge/mpi/job.sh): what a parallel job sees, and what
# qrsh -inherit says; each run's stdout and stderr are kept apart.
cp "$out/job.sh" "$out/limit.sh" .
PATH=/usr/bin:$PATH

run() {	# NAME qsub-args...
	local name=$1; shift
	rm -f "$out/$name.out" "$out/$name.err"
	/usr/bin/qsub -sync y -cwd -o "$out/$name.out" -e "$out/$name.err" "$@" > "$work/$name.qsub" 2>&1
}
run pe-2 -pe mpi 2 job.sh
run pe-noctl -pe mpinoctl 2 job.sh
run pe-range -pe mpi 1-3 job.sh
run pe-limit -pe mpi 2 limit.sh

# qrsh -inherit outside any job.
{ env -u JOB_ID /usr/bin/qrsh -inherit "$(hostname)" echo no; echo "exit $?"; } > "$out/inherit-outside.out" 2>&1

# qsub's answer to a PE that does not exist and to a bad range.
{ /usr/bin/qsub -pe nosuchpe 2 -b y true; echo "exit $?"; } > "$out/qsub-nope.out" 2>&1
# A range written backwards is taken the right way round.
printf '#!/bin/sh\necho NSLOTS=$NSLOTS\n' > nslots.sh
chmod 755 nslots.sh
{ /usr/bin/qsub -sync y -cwd -o "$work/backwards.o" -j y -pe mpi 4-2 nslots.sh; echo "exit $?"
  cat "$work/backwards.o"; } > "$out/qsub-backwards.out" 2>&1
cd / && rm -rf "$work"
