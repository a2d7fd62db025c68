#!/usr/bin/env bats
# deps.bats: dependent jobs on a real cluster: -hold_jid and -W depend wait, run in order, fail down the chain when never satisfiable, and qsub -a waits for its time.

load helpers

setup_file() { SLOTS=8 cluster_start; work_start; }
teardown_file() { cluster_stop; work_stop; }

q() { qsub -terse -o /dev/null -e /dev/null "$@"; }

@test "a chain survives kill -9 of the master in the middle and still runs once each, in order" {
	prev=$(q -b y sh -c "sleep 0.1; echo 0 >> $WORK/kchain")
	for i in $(seq 1 39); do
		prev=$(q -W depend=afterok:"$prev" -b y sh -c "sleep 0.1; echo $i >> $WORK/kchain")
	done
	wait_until 20 test -s "$WORK/kchain"
	sleep 1
	kill -9 "$(cat "$CLUSTER/qmaster/qmaster.pid")"
	sleep 0.5
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 60 job_finished "$prev"
	[ "$(cat "$WORK/kchain")" = "$(seq 0 39)" ]
}

@test "-hold_jid waits for the end whatever the exit status, and qstat -j says what for" {
	# a is held until b has been looked at, so b is seen waiting however
	# slow the machine is.
	a=$(q -h -b y sh -c 'exit 1')
	b=$(q -hold_jid "$a" -b y true)
	state_is "$b" hqw
	run qstat -j "$b"
	[[ "$output" == *"jid_predecessor_list (req): $a"* ]]
	[[ "$output" == *"waiting for $a (afterany)"* ]]
	qrls "$a" >/dev/null
	wait_until 20 job_finished "$b"
	[ "$(job_field "$b" exit_status)" = 0 ]
}

@test "a chain of 200 jobs runs in order" {
	prev=$(q -b y sh -c "echo 0 >> $WORK/chain")
	for i in $(seq 1 199); do
		prev=$(q -W depend=afterok:"$prev" -b y sh -c "echo $i >> $WORK/chain")
	done
	wait_until 120 job_finished "$prev"
	[ "$(cat "$WORK/chain")" = "$(seq 0 199)" ]
}

@test "a job waits for 200 jobs named by a pattern, and starts after the last" {
	for i in $(seq 1 200); do
		q -N "fan$i" -b y sh -c "sleep 0.\$((RANDOM % 3)); echo x >> $WORK/fan"
	done
	last=$(q -hold_jid 'fan*' -b y sh -c "wc -l < $WORK/fan > $WORK/fan.count")
	wait_until 120 job_finished "$last"
	[ "$(cat "$WORK/fan.count")" -eq 200 ]
}

@test "afterok on a failed job fails the dependent and everything after it, with the reason" {
	a=$(q -b y false)
	b=$(q -W depend=afterok:"$a" -b y true)
	c=$(q -W depend=afterok:"$b" -b y true)
	d=$(q -W depend=afternotok:"$b" -b y true)
	wait_until 20 job_finished "$d"
	[[ "$(job_reason "$b")" == *"dependency never satisfied: $a failed"* ]]
	[[ "$(job_reason "$c")" == *"dependency never satisfied: $b failed"* ]]
	[[ "$(qacct -j "$c")" == *"dependency never satisfied: $b failed"* ]]
	[ "$(job_field "$d" exit_status)" = 0 ]
	# afternotok on a job that succeeded can never be met either.
	e=$(q -b y true)
	wait_until 20 job_finished "$e"
	f=$(q -W depend=afternotok:"$e" -b y true)
	[[ "$(job_reason "$f")" == *"dependency never satisfied: $e succeeded"* ]]
	[[ "$(qacct -j "$f")" == *"dependency never satisfied: $e succeeded"* ]]
}

@test "deleting a job that others wait for releases afterany and fails afterok" {
	a=$(q -h -b y true)
	b=$(q -hold_jid "$a" -b y true)
	c=$(q -W depend=afterok:"$a" -b y true)
	qdel "$a"
	wait_until 20 job_finished "$b"
	wait_until 20 job_finished "$c"
	[ "$(job_field "$b" exit_status)" = 0 ]
	[[ "$(job_reason "$c")" == *"dependency never satisfied: $a deleted"* ]]
}

@test "-W depend=after starts once the other job started" {
	a=$(q -b y sleep 10)
	b=$(q -W depend=after:"$a" -b y true)
	wait_until 20 job_finished "$b"
	state_is "$a" r
}

@test "a dependency on a job that does not exist, or a name nobody has, is refused and nothing is stored" {
	before=$(qstat -s prz | wc -l)
	run qsub -hold_jid 999999 -b y true
	[ "$status" -ne 0 ]
	[ "$output" = "qsub: error: Unable to run job: job 999999 does not exist, so nothing can depend on it" ]
	run qsub -hold_jid no_such_name -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"is named \"no_such_name\""* ]]
	run qsub -W depend=sometime:1 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-W depend: \"sometime\" is not KIND:ID"* ]]
	run qsub -W group_list=x -b y true
	[ "$status" -ne 0 ]
	[ "$(qstat -s prz | wc -l)" = "$before" ]
}

@test "qsub -a waits for its start time, shown as qw with the time in qstat -j" {
	# 15 s ahead: a loaded machine's qsub and qstat take seconds.
	when=$(date -d '+15 seconds' +%Y%m%d%H%M.%S)
	a=$(q -a "$when" -b y true)
	state_is "$a" qw
	[[ "$(qstat -j "$a")" == *"execution_time:"* ]]
	sleep 1
	state_is "$a" qw
	wait_until 40 job_finished "$a"
	run qsub -a 13450101 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-a wants a date"* ]]
}
