#!/usr/bin/env bats
# hostloss.bats: an execd silent for host_timeout is lost: rerunnable jobs and array tasks run again elsewhere (RESTARTED=1), others fail, and none runs twice when the host comes back; exit codes 99 and 100.

load helpers

setup() {
	EXECDS=2 SLOTS=2 cluster_start
	# A short timeout, and LOADs often enough not to trip it.
	echo "host_timeout = 3" >> "$CLUSTER/qmaster.conf"
	# A mailer that keeps each message, for the admin mail of a lost host.
	printf '#!/bin/sh\ncat >> %s/mail.out\n' "$CLUSTER" > "$CLUSTER/mailer"
	chmod 755 "$CLUSTER/mailer"
	printf 'mailer = "%s"\nadmin_mail = {"root"}\n' "$CLUSTER/mailer" >> "$CLUSTER/qmaster.conf"
	sed -i 's/^load_interval = .*/load_interval = 1/' "$CLUSTER"/execd-*.ini
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	H1=$(sed -n 's/^name = //p' "$CLUSTER/execd-1.ini")
	H2=$(sed -n 's/^name = //p' "$CLUSTER/execd-2.ini")
	wait_until 10 host_state_is "$H1" idle
	wait_until 10 host_state_is "$H2" idle
	RUNS="$CLUSTER/runs"
	mkdir -m 777 "$RUNS"
}

teardown() {
	# A stopped execd would keep nowq stop waiting.
	[ -n "${CLUSTER:-}" ] && kill -CONT "$(cat "$CLUSTER/execd-2/execd.pid" 2>/dev/null)" 2>/dev/null
	cluster_stop
}

host_state() { qhost | awk -v h="$1" '$1 == h { print $7 }'; }
host_state_is() { [ "$(host_state "$1")" = "$2" ]; }
runs_of() { cat "$RUNS/$1" 2>/dev/null | wc -l; }
runs_are() { [ "$(runs_of "$1")" -eq "$2" ]; }
dead() { ! kill -0 "$1" 2>/dev/null; }

# A job that records each run (attempt's pid and RESTARTED) and then sleeps.
submit_sleeper() {
	qsub -terse -o /dev/null -e /dev/null "$@" -b y sh -c \
	    "echo \"\$\$ \$RESTARTED \$HOSTNAME\" >> $RUNS/\$JOB_ID; exec sleep 120"
}

@test "a silent host is lost: its rerunnable job runs again elsewhere, its other job fails, and neither runs twice once the host is back" {
	# Everything on host 2: host 1 takes no work while disabled.
	qmod -d "$H1"
	norerun=$(submit_sleeper -r n)
	rerun=$(submit_sleeper -r y)
	wait_until 20 state_is "$norerun" r
	wait_until 20 state_is "$rerun" r
	wait_until 10 runs_are "$norerun" 1
	wait_until 10 runs_are "$rerun" 1
	grep -q " 0 $H2\$" "$RUNS/$rerun"
	pid_norerun=$(awk '{ print $1 }' "$RUNS/$norerun")
	pid_rerun=$(awk 'NR == 1 { print $1 }' "$RUNS/$rerun")
	qmod -e "$H1"

	kill -STOP "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 15 host_state_is "$H2" unknown
	# Not rerunnable: failed, with the reason.
	wait_until 10 job_finished "$norerun"
	[[ "$(job_reason "$norerun")" == *"host lost: $H2"* ]]
	# The managers' mail names the host, when it was last heard from, and
	# what became of each of its jobs.
	wait_until 20 grep -q "Subject: nowq: host lost" "$CLUSTER/mail.out"
	grep -q "^Exec host $H2 stopped answering: last heard from at [0-9: -]*, [0-9]* s ago (host_timeout 3 s)\.$" "$CLUSTER/mail.out"
	grep -q "^It held 2 jobs:$" "$CLUSTER/mail.out"
	grep -q "^  job $norerun (sh, user $(id -un)): failed (not rerunnable)$" "$CLUSTER/mail.out"
	grep -q "^  job $rerun (sh, user $(id -un)): requeued (rerunnable: it runs again)$" "$CLUSTER/mail.out"
	# Rerunnable: queued again, and now runs on host 1 as attempt 2.
	wait_until 20 runs_are "$rerun" 2
	wait_until 10 state_is "$rerun" r
	sed -n 2p "$RUNS/$rerun" | grep -q " 1 $H1\$"
	[ "$(job_field "$rerun" exec_host_list 2>/dev/null || true)" != "$H2" ]
	# Meanwhile the old attempts go on: their execd is only stopped.
	kill -0 "$pid_norerun"
	kill -0 "$pid_rerun"

	kill -CONT "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 15 host_state_is "$H2" idle
	# Back, the host is told to kill both attempts the master has ended.
	wait_until 10 dead "$pid_norerun"
	wait_until 10 dead "$pid_rerun"
	sleep 1
	# The failed job stays failed and ran once; the rerun one is still running.
	runs_are "$norerun" 1
	job_finished "$norerun"
	[[ "$(job_reason "$norerun")" == *"host lost: $H2"* ]]
	runs_are "$rerun" 2
	state_is "$rerun" r
	qdel "$rerun"
}

@test "a rerunnable array's tasks on a lost host run again elsewhere, once each, as a single job does" {
	# Both tasks on host 2; there they sleep, on host 1 they end at once.
	qmod -d "$H1"
	id=$(qsub -terse -r y -t 1-2 -o /dev/null -e /dev/null -b y sh -c \
	    "echo \"\$SGE_TASK_ID \$\$ \$RESTARTED \$HOSTNAME\" >> $RUNS/arr; [ \$HOSTNAME = $H1 ] || exec sleep 120")
	id=${id%%.*}
	wait_until 20 sh -c "[ \$(wc -l < $RUNS/arr) -eq 2 ]"
	pids=$(awk '{ print $2 }' "$RUNS/arr")
	qmod -e "$H1"
	kill -STOP "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 15 host_state_is "$H2" unknown
	# Queued again, each task runs on host 1 as a rerun, and the array is done.
	wait_until 30 job_finished "$id"
	[ "$(job_json "$id" state)" = done ]
	[ "$(awk -v h="$H1" '$4 == h { print $1, $3 }' "$RUNS/arr" | sort)" = "$(printf '1 1\n2 1')" ]
	# Each ended attempt is accounted: the lost ones as Grid Engine's
	# failed 100, the reruns with exit status 0.
	[ "$(qacct -j "$id" | awk '$1 == "failed" { print $2 }' | sort | tr '\n' ' ')" = "0 0 100 100 " ]
	# Back, the host kills the old attempts; no task runs a third time.
	kill -CONT "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 15 host_state_is "$H2" idle
	for p in $pids; do wait_until 10 dead "$p"; done
	[ "$(wc -l < "$RUNS/arr")" -eq 4 ]
}

@test "a host that is not heard from after a master restart is lost too" {
	id=$(submit_sleeper -r n)
	wait_until 20 state_is "$id" r
	nowq stop --dir "$CLUSTER" >/dev/null
	# Only the master comes back; the execds stay down.
	qmaster -c "$CLUSTER/qmaster.conf"
	qhost | grep -q "^$H1 .* unknown\$"
	wait_until 15 job_finished "$id"
	[[ "$(job_reason "$id")" == *"host lost"* ]]
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 15 host_state_is "$H1" idle
	wait_until 15 host_state_is "$H2" idle
	runs_are "$id" 1
}

@test "exit code 99 runs the job again with RESTARTED=1" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c \
	    "echo \"\$RESTARTED\" >> $RUNS/\$JOB_ID; [ \$(wc -l < $RUNS/\$JOB_ID) -ge 2 ] || exit 99")
	wait_until 20 job_finished "$id"
	[ "$(cat "$RUNS/$id")" = "$(printf '0\n1')" ]
	qstat -s z | awk -v id="$id" '$1 == id' | grep -q .
	[ "$(job_field "$id" exit_status)" = 0 ]
}

@test "exit code 100 leaves the job in error (Eqw) until qmod -cj" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c \
	    "echo run >> $RUNS/\$JOB_ID; [ \$(wc -l < $RUNS/\$JOB_ID) -ge 2 ] || exit 100")
	wait_until 20 state_is "$id" Eqw
	qstat -j "$id" | grep -q "exit code 100"
	sleep 1
	state_is "$id" Eqw
	runs_are "$id" 1
	run qmod -cj "$id"
	[ "$status" -eq 0 ]
	[[ "$output" == *"cleared error state of job $id"* ]]
	wait_until 20 job_finished "$id"
	runs_are "$id" 2
	run qmod -cj 999999
	[ "$status" -eq 1 ]
}
