#!/usr/bin/env bats
# limits.bats: the execd enforces -l h_rt, s_rt, h_cpu and h_vmem on real jobs, and a job a limit ended is failed with that limit as its reason.

load helpers

setup() {
	cluster_start
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 777 "$WORK"
	export WORK
}

teardown() {
	cluster_stop
	rm -rf "$WORK"
}

execd_pid() { cat "$CLUSTER/execd-1/execd.pid"; }
reason() { job_reason "$1"; }
acct_state() { sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT state FROM accounting WHERE job_id = $1"; }
acct_failed() { sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT failed FROM accounting WHERE job_id = $1"; }

@test "h_rt: a job past its wall clock is ended and failed with the h_rt reason" {
	start=$(date +%s)
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_rt=2 -b y sleep 60)
	wait_until 15 job_finished "$id"
	elapsed=$(( $(date +%s) - start ))
	echo "ended after ${elapsed}s" >&3
	[ "$elapsed" -ge 2 ] && [ "$elapsed" -le 8 ]
	# Failed (state 4), not done, whatever the job's exit status.
	[ "$(acct_state "$id")" = 4 ]
	[ "$(reason "$id")" = "h_rt limit (2 s) exceeded" ]
	[ "$(acct_failed "$id")" = "h_rt limit (2 s) exceeded" ]
	# SIGKILL ended it, as Grid Engine's h_rt does.
	[ "$(job_field "$id" exit_status)" = 137 ]
}

@test "h_rt is timed by the shepherd: it holds across an execd restart" {
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_rt=2 -b y sleep 61)
	wait_until 20 state_is "$id" r
	kill -9 "$(execd_pid)"
	# With no execd at all, the job still ends at h_rt.
	sleep 3
	! pgrep -x -f "sleep 61" || false
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 job_finished "$id"
	[ "$(reason "$id")" = "h_rt limit (2 s) exceeded" ]
}

@test "s_rt: the job gets SIGUSR1 at its soft limit, and may finish on its own" {
	cd "$WORK"
	cat > warned.sh <<-'EOF'
	#!/bin/sh
	trap 'echo warned > "$WORK/usr1"; exit 0' USR1
	i=0
	while [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	exit 9
	EOF
	id=$(qsub -terse -cwd -o /dev/null -e /dev/null -v WORK="$WORK" -l s_rt=1 warned.sh)
	wait_until 15 job_finished "$id"
	[ "$(cat "$WORK/usr1")" = warned ]
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(reason "$id")" ]
	[ "$(acct_state "$id")" = 3 ]
}

@test "s_rt: a job that does not handle SIGUSR1 dies of it, a signal's end as Grid Engine counts it" {
	id=$(qsub -terse -o /dev/null -e /dev/null -l s_rt=1 -b y sleep 30)
	wait_until 15 job_finished "$id"
	[ "$(reason "$id")" = "killed by signal 10" ]
	[ "$(qacct -j "$id" | awk '$1 == "failed" { print $2 }')" = 100 ]
}

@test "s_rt then h_rt: SIGKILL waits 90 s after the SIGUSR1, as Grid Engine's (t/sge/gaps/srt-hrt.*)" {
	cd "$WORK"
	cat > busy.sh <<-'EOF'
	#!/bin/sh
	trap 'echo warned >> "$WORK/usr1"' USR1
	i=0
	while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	EOF
	id=$(qsub -terse -cwd -o /dev/null -e /dev/null -v WORK="$WORK" -l s_rt=1,h_rt=2 busy.sh)
	wait_until 20 test -s "$WORK/usr1"
	# Well past h_rt the job runs on: Grid Engine's execd holds SIGKILL
	# back 90 s from the warning (limits_rt_kill_at, t/unit/test_limits).
	sleep 4
	state_is "$id" r
	[ "$(grep -c warned "$WORK/usr1")" -eq 1 ]
	qdel "$id" >/dev/null
	wait_until 20 job_finished "$id"
}

@test "h_cpu: a busy loop is stopped after its CPU seconds with the h_cpu reason" {
	start=$(date +%s)
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_cpu=1 -b y sh -c 'while :; do :; done')
	wait_until 20 job_finished "$id"
	echo "ended after $(( $(date +%s) - start ))s" >&3
	[ "$(reason "$id")" = "h_cpu limit (1 s) exceeded" ]
	[ "$(job_field "$id" exit_status)" = $((128 + 24)) ]
	[ "$(acct_failed "$id")" = "h_cpu limit (1 s) exceeded" ]
}

@test "h_cpu does not count sleeping: a job under its CPU limit is done" {
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_cpu=1,h_rt=30 -b y sleep 2)
	wait_until 15 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ -z "$(reason "$id")" ]
}

@test "h_vmem: the execd says how it enforces it, and a job allocating more fails" {
	mode=$(qhost --json | sed -n 's/.*"vmem_limit": "\(.*\)".*/\1/p')
	echo "vmem_limit: $mode" >&3
	[ "$mode" = cgroup ] || [ "$mode" = rlimit ]
	cd "$WORK"
	# The same program, under a limit it fits in and one it does not.
	fits=$(qsub -terse -cwd -o /dev/null -e fits.err -l h_vmem=2G -b y \
	    /usr/bin/python3 -c 'b = bytearray(256 << 20); b[-1] = 1')
	big=$(qsub -terse -cwd -o /dev/null -e big.err -l h_vmem=200M -b y \
	    /usr/bin/python3 -c 'b = bytearray(256 << 20); b[-1] = 1')
	wait_until 20 job_finished "$fits"
	wait_until 20 job_finished "$big"
	[ "$(job_field "$fits" exit_status)" = 0 ]
	[ "$(job_field "$big" exit_status)" != 0 ]
	if [ "$mode" = cgroup ]; then
		[ "$(reason "$big")" = "h_vmem limit (200M) exceeded" ]
	else
		# RLIMIT_AS: the allocation fails inside the job, which ends as it likes.
		grep -q MemoryError big.err
	fi
}

@test "limits far beyond any run (h_rt, s_rt, h_cpu of millennia) are no limits" {
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_rt=99999999999999999,s_rt=9999999999999,h_cpu=99999999999999999 -b y true)
	wait_until 15 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ "$(acct_state "$id")" = 3 ]
}

@test "execd refuses a bad kill_grace or cgroup_parent with the file and line" {
	printf '[execd]\nmasters = unix:%s/none.sock\nkill_grace = soon\n' "$WORK" > "$WORK/bad.ini"
	run execd -c "$WORK/bad.ini"
	[ "$status" -ne 0 ]
	[ "$output" = "execd: $WORK/bad.ini:3: kill_grace \"soon\" is not a number of seconds from 0 to 3600" ]
	printf '[execd]\nmasters = unix:%s/none.sock\ncgroup_parent = nowq\n' "$WORK" > "$WORK/bad.ini"
	run execd -c "$WORK/bad.ini"
	[ "$status" -ne 0 ]
	[ "$output" = "execd: $WORK/bad.ini:3: cgroup_parent \"nowq\" is not an absolute path" ]
}
