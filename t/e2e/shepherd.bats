#!/usr/bin/env bats
# shepherd.bats: each job runs under the nowq-shepherd program, which execd starts without forking itself, and neither program starts without what it needs; a job starts with 0, 1 and 2 only, and daemons keep nothing of their starter.

load helpers

setup_file() {
	cluster_start
	# A parallel environment on the one execd, for a -pe job's descriptors.
	echo 'pe "smp" { slots = 8  allocation_rule = "$pe_slots" }' >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

teardown_file() {
	cluster_stop
}

setup() {
	work_start
}

teardown() {
	# A second cluster a test started.
	[ -d "${WORK:-}/c/qmaster" ] && nowq stop --dir "$WORK/c" >/dev/null 2>&1
	work_stop
}

@test "a job's parent is the nowq-shepherd program, a child of execd, in the job's own session" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 60)
	wait_until 20 state_is "$id" r
	read -r jobpid _ < "$CLUSTER/execd-1/active/$id.0.1/job.pid"
	shep=$(ps -o ppid= -p "$jobpid" | tr -d ' ')
	# A program of its own, not a fork of execd: its image is nowq-shepherd.
	[ "$(basename "$(readlink "/proc/$shep/exe")")" = nowq-shepherd ]
	[ "$(ps -o comm= -p "$shep")" = nowq-shepherd ]
	[ "$(ps -o ppid= -p "$shep" | tr -d ' ')" = "$(cat "$CLUSTER/execd-1/execd.pid")" ]
	# The job leads its own session and group; the shepherd holds only
	# its folder's lock and the standard descriptors.
	[ "$(ps -o sid= -p "$jobpid" | tr -d ' ')" = "$jobpid" ]
	[ "$(ls "/proc/$shep/fd" | wc -l)" -eq 4 ]
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "execd refuses to start without its shepherd program, with a clear error" {
	mkdir "$WORK/sbin"
	cp "$(readlink -f "$(command -v execd)")" "$WORK/sbin/execd"
	sed "s|^spool_dir *=.*|spool_dir = $WORK/spool|" "$CLUSTER/execd-1.ini" > "$WORK/execd.ini"
	run timeout 10 "$WORK/sbin/execd" -f -c "$WORK/execd.ini"
	echo "$output" >&3
	if [ "$status" -ne 1 ]; then
		# An installed copy was found in the configured sbin directory.
		[[ "$output" != *"cannot find the program nowq-shepherd"* ]]
		skip "a nowq-shepherd is installed where execd looks second"
	fi
	[[ "$output" == "execd: cannot find the program nowq-shepherd beside execd or in "* ]]
	[ ! -e "$WORK/spool" ]
}

@test "nowq-shepherd run by hand with bad arguments says how it is used and changes nothing" {
	shep=$(dirname "$(readlink -f "$(command -v execd)")")/nowq-shepherd
	run "$shep"
	[ "$status" -eq 2 ]
	[[ "$output" == "usage: nowq-shepherd -s SPOOL"* ]]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -k nope -- 1.0.1
	[ "$status" -eq 2 ]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -- ../1.0.1
	[ "$status" -eq 2 ]
	# No lock on an open folder: no job starts.
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 9 -- 1.0.1
	[ "$status" -eq 2 ]
	run "$shep" -s "$CLUSTER/execd-1" -n x -t /tmp -L 3 -- 1.0.1 3</dev/null
	[ "$status" -eq 2 ]
	[ -z "$(ls "$CLUSTER/execd-1/outbox")" ]
}

@test "a job's start waits in the outbox as a second name of its job.pid, and what the outbox cannot read is set aside" {
	master=$(cat "$CLUSTER/qmaster/qmaster.pid")
	execd=$(cat "$CLUSTER/execd-1/execd.pid")
	# The DISPATCH waits in a stopped execd's socket: the job shows "t"
	# once the master has sent it (its loop answered qstat after that).
	# Then a stopped master ACKs nothing, so the start stays in the outbox.
	kill -STOP "$execd"
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 60)
	wait_until 20 state_is "$id" t
	kill -STOP "$master"
	kill -CONT "$execd"
	out="$CLUSTER/execd-1/outbox"
	act="$CLUSTER/execd-1/active/$id.0.1"
	wait_until 20 test -e "$out/$id.0.1.reg"
	# One file under two names: a job start allocates no inode of its own.
	[ "$(stat -c %i "$out/$id.0.1.reg")" = "$(stat -c %i "$act/job.pid")" ]
	[ "$(stat -c %h "$act/job.pid")" = 2 ]
	read -r pid start ms < "$act/job.pid"
	[ "$pid" -gt 1 ] && [ "$start" -gt 0 ] && [ "$ms" -gt 0 ]
	printf 'garbage\n' > "$out/999999.0.1.reg"
	kill -CONT "$master"
	wait_until 20 state_is "$id" r
	wait_until 20 test ! -e "$out/$id.0.1.reg"
	[ "$(stat -c %h "$act/job.pid")" = 1 ]
	# The execd's periodic flush reads the bad one and moves it aside.
	wait_until 20 test -e "$out/.bad.999999.0.1.reg"
	grep -q 'outbox event 999999.0.1.reg is unusable (not an event)' "$CLUSTER/execd-1/execd.log"
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "a daemon keeps no descriptor it inherited from whoever started it" {
	nowq start --dir "$WORK/c" 7>"$WORK/held" >/dev/null
	qm=$(cat "$WORK/c/qmaster/qmaster.pid")
	ex=$(cat "$WORK/c/execd-1/execd.pid")
	ls -l "/proc/$qm/fd" "/proc/$ex/fd" >&3
	! ls -l "/proc/$qm/fd" | grep -q "$WORK/held" || false
	! ls -l "/proc/$ex/fd" | grep -q "$WORK/held" || false
	nowq stop --dir "$WORK/c" >/dev/null
}

# The descriptors of the job's shell, as it started: sh lists its own
# (the shell opens nothing for -c), one a line.
FDS_CMD='ls /proc/$$/fd; :'

@test "a job starts with descriptors 0, 1 and 2 only: plain, array task, -pe and qrsh" {
	want=$(printf '0\n1\n2')
	plain=$(qsub -terse -o "$WORK/plain.out" -e /dev/null -b y sh -c "$FDS_CMD")
	arr=$(qsub -terse -t 1-2 -o "$WORK/arr.\$TASK_ID" -e /dev/null -b y sh -c "$FDS_CMD")
	arr=${arr%%.*}
	pe=$(qsub -terse -pe smp 2 -o "$WORK/pe.out" -e /dev/null -b y sh -c "$FDS_CMD")
	out=$(timeout 60 qrsh sh -c "$FDS_CMD")
	echo "qrsh: $out" >&3
	[ "$out" = "$want" ]
	for id in "$plain" "$arr" "$pe"; do
		wait_until 30 job_finished "$id"
	done
	for f in plain.out arr.1 arr.2 pe.out; do
		echo "$f: $(cat "$WORK/$f")" >&3
		[ "$(cat "$WORK/$f")" = "$want" ]
	done
}
