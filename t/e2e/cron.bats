#!/usr/bin/env bats
# cron.bats: cron entries on a real cluster: listed, paused, removed by their owner only; they survive a master crash, run a missed tick once, and never overlap.

load helpers

setup_file() { cluster_start; work_start; }
teardown_file() { cluster_stop; work_stop; }

cron_id() { sed -n 's/^\(c[0-9]*\)$/\1/p'; }
entry_field() { qstat --cron | awk -v id="$1" -v col="$2" '$1 == id { print $col }'; }
last_job() {
	qstat --cron --json | python3 -c 'import json, sys
for e in json.load(sys.stdin)["cron"]:
    if "c%d" % e["id"] == sys.argv[1]: print(e["last_job"])' "$1"
}

@test "bad schedules are refused with the reason, and nothing is stored" {
	run qsub --cron "* * *" -b y true
	[ "$status" -ne 0 ]
	[ "$output" = 'qsub: error: --cron: a schedule has five fields, MIN HOUR DOM MON DOW, not "* * *"' ]
	run qsub --cron "0 0 30 2 *" -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *'"0 0 30 2 *" never fires'* ]]
	run qsub --cron "@daily" -hold_jid 1 -b y true
	[ "$status" -ne 0 ]
	run qstat --cron
	[ "$output" = "" ]
}

@test "entries are listed, paused, resumed and removed; only their owner may" {
	id=$(qsub -terse --cron "30 4 * * mon-fri" -N nightly -b y true | cron_id)
	[ -n "$id" ]
	[ "$(entry_field "$id" 3)" = nightly ]
	# The log gives the next run as a time a person reads, not epoch ms.
	grep -Eq "cron entry $id \(30 4 \* \* mon-fri\) of $(id -un): next run at ([0-9]{4}-[0-9]{2}-[0-9]{2} )?04:30:00$" \
	    "$CLUSTER/qmaster/qmaster.log"
	[[ "$(qstat --cron)" == *"30 4 * * mon-fri"* ]]
	[[ "$(qstat --cron --json)" == *'"schedule": "30 4 * * mon-fri"'* ]]
	run qhold "$id"
	[ "$output" = "modified hold of cron entry $id" ]
	[[ "$(qstat --cron)" == *"(held)"* ]]
	qrls "$id"
	[[ "$(qstat --cron)" != *"(held)"* ]]
	if [ "$(id -u)" = 0 ] && id -u nobody >/dev/null 2>&1; then
		run setpriv --reuid=nobody --regid=nogroup --clear-groups qdel "$id"
		[ "$status" -ne 0 ]
		[[ "$output" == *"do not have the necessary privileges"* ]]
	fi
	run qdel "$id"
	[ "$output" = "$(id -un) has deleted cron entry $id" ]
	run qdel "$id"
	[ "$status" -ne 0 ]
	[ "$output" = "denied: cron entry \"$id\" does not exist" ]
}

# Waits for the next minute boundary, plus a little.
past_next_minute() {
	local s
	s=$(date +%-S)
	sleep $((62 - s))
}

@test "an entry survives kill -9 of the master, runs a missed tick once, and skips a tick while its job still runs" {
	a=$(qsub -terse --cron "* * * * *" -o /dev/null -e /dev/null -b y sh -c "echo \$JOB_ID >> $WORK/ticks" | cron_id)
	b=$(qsub -terse --cron "* * * * *" -N sleeper -o /dev/null -e /dev/null -b y sleep 300 | cron_id)
	# Down across the minute's tick: it is missed, then run once at start.
	kill -9 "$(cat "$CLUSTER/qmaster/qmaster.pid")"
	past_next_minute
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 test -s "$WORK/ticks"
	wait_until 20 bash -c "qstat | grep -c sleeper | grep -qx 1"
	[ "$(wc -l < "$WORK/ticks")" -eq 1 ]
	first=$(last_job "$b")
	[ "$first" -gt 0 ]
	# Next minute: a second job of a, but none of b while its job runs.
	past_next_minute
	wait_until 20 bash -c "[ \$(wc -l < $WORK/ticks) -eq 2 ]"
	[ "$(sort -u "$WORK/ticks" | wc -l)" -eq 2 ]
	[ "$(qstat | grep -c sleeper)" -eq 1 ]
	[ "$(last_job "$b")" = "$first" ]
	grep -q "cron entry $b: job $first of the previous tick still runs; tick skipped" \
		"$CLUSTER/qmaster/qmaster.log"
	# qdel -f removes the entry and its running job.
	qdel -f "$a" "$b"
	wait_until 20 job_finished "$first"
	run qstat --cron
	[ "$output" = "" ]
}
