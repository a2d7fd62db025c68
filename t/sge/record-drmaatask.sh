#!/bin/bash
# record-drmaatask.sh: records how Grid Engine 8.1.9 answers qhold, qrls,
# qmod -sj/-usj and qdel given one task of an array (JOB.TASK), and how
# qstat shows such a task, into t/sge/drmaatask/.
#
# Run once as root where Grid Engine runs (queue all.q); it changes nothing
# of Grid Engine's configuration.  Each case CASE leaves CASE.out (stdout,
# job ids replaced by ID) and CASE.rc (exit status); a qstat-CASE file holds
# qstat's state and task columns at that point.  t/e2e/arrays.bats compares
# nowq's with them.
set -u
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
B=/usr/bin
out=$(cd "$(dirname "$0")" && pwd)/drmaatask
mkdir -p "$out"
cd /tmp || exit 1

# rec CASE CMD...: runs CMD, keeping its stdout (ids as ID) and exit status.
rec() {
	local c=$1
	shift
	"$@" 2>&1 | sed -E "s/\b$id\b/ID/g" > "$out/$c.out"
	echo "${PIPESTATUS[0]}" > "$out/$c.rc"
}
# lines CASE: qstat's state and task columns of the job's lines.
lines() {
	$B/qstat | awk -v id="$id" '$1 == id { print $5, $NF }' > "$out/qstat-$1"
}

# Pending tasks (a start time an hour ahead keeps them so): holds per task.
id=$($B/qsub -terse -a "$(date -d '+1 hour' +%Y%m%d%H%M)" -t 1-4 -o /dev/null -e /dev/null \
    -b y sleep 60 | cut -d. -f1)
rec qhold-task $B/qhold "$id.3"
lines held-3
rec qrls-task $B/qrls "$id.3"
lines released-3
rec qrls-task-again $B/qrls "$id.3"
rec qhold-range $B/qhold "$id.2-3"
lines held-2-3
rec qrls-job $B/qrls "$id"
rec qdel-task-pending $B/qdel "$id.4"
$B/qdel "$id" > /dev/null

# Running tasks: suspension per task.
id=$($B/qsub -terse -t 1-2 -o /dev/null -e /dev/null -b y sleep 60 | cut -d. -f1)
until [ "$($B/qstat | awk -v id="$id" '$1 == id && $5 == "r"' | wc -l)" = 2 ]; do sleep 1; done
rec qmod-sj-task $B/qmod -sj "$id.2"
rec qmod-sj-task-again $B/qmod -sj "$id.2"
lines suspended-2
rec qmod-usj-task $B/qmod -usj "$id.2"
rec qmod-usj-task-again $B/qmod -usj "$id.2"
rec qmod-sj-job $B/qmod -sj "$id"
lines suspended-all
rec qmod-usj-job $B/qmod -usj "$id"
rec qdel-task-running $B/qdel "$id.1"
$B/qdel "$id" > /dev/null
