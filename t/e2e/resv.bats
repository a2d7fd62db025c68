#!/usr/bin/env bats
# resv.bats: host aliases, users and owners, and reservations (owner filtering, overlap refusal, jobs inside and outside, the h_rt guard, the end, and windows that open and close across a qmaster restart) on three execds.

load helpers

setup_file() {
	EXECDS=3 SLOTS=1 cluster_start
	H1=$(qhost | awk 'NR == 3 { print $1 }')
	H2=$(qhost | awk 'NR == 4 { print $1 }')
	H3=$(qhost | awk 'NR == 5 { print $1 }')
	export H1 H2 H3
	work_start
	nowq stop --dir "$CLUSTER" >/dev/null
	HTTP_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "http_listen = \"127.0.0.1:$HTTP_PORT\"" >> "$CLUSTER/qmaster.conf"
	export HTTP_PORT
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 hosts_up
}

hosts_up() { [ "$(qhost | grep -c -w idle)" -ge 3 ]; }

teardown_file() {
	cluster_stop
	work_stop
}

as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" \
	    "$NOWQ_BIN/$@"
}

as_daemon() {
	setpriv --reuid=daemon --regid=daemon --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" \
	    "$NOWQ_BIN/$@"
}

info() { qstat -j "$1" | awk -F': *' '$1 == "scheduling info" { print $2 }'; }
info_has() { [[ "$(info "$1")" == *"$2"* ]]; }
ran_on() { wait_until 20 job_finished "$1" && cat "$WORK/where.$1"; }
where_job() { qsub -terse -o "$WORK/where.\$JOB_ID" -j y "$@" -b y sh -c 'echo $HOSTNAME'; }

@test "aliases: -sexpr shows what an expression denotes; unknown names are named; jobs follow the alias" {
	run qconf -aalias fast "$H1 | $H2"
	[ "$status" -eq 0 ]
	[ "$(qconf -sexpr 'fast - '"$H1")" = "$H2" ]
	[ "$(qconf -sexpr '!fast')" = "$H3" ]
	run qconf -sexpr 'fast | nosuch'
	[ "$status" -ne 0 ]
	[[ "$output" == *'unknown host, alias or reservation "nosuch"'* ]]
	run qconf -aalias "$H1" "$H2"
	[ "$status" -ne 0 ]
	run as_nobody qconf -aalias slow "$H3"
	[ "$status" -ne 0 ]
	[[ "$output" == *"must be manager"* ]]
	id=$(where_job -l "hosts=fast & !$H1")
	[ "$(ran_on "$id")" = "$H2" ]
	# Changing the alias changes where later jobs go.
	qconf -dalias fast
	qconf -aalias fast "$H3"
	id=$(where_job -q "all.q@fast")
	[ "$(ran_on "$id")" = "$H3" ]
	qconf -salias | grep -q "^fast.*$H3"
	qconf -dalias fast
}

@test "a host's users list: only those users' jobs start there, and qstat -j says why" {
	qconf -mhost "$H1" users=daemon
	qconf -se "$H1" | grep -q '^users *daemon$'
	id=$(qsub -terse -l "hosts=$H1" -w n -b y true)
	sleep 1
	state_is "$id" qw
	[[ "$(info "$id")" == "no idle host lets user root run jobs there"* ]]
	qconf -mhost "$H1" users=
	wait_until 20 job_finished "$id"
}

@test "reserve: only owners and managers; overlaps and the past are refused with the reason" {
	run as_nobody reserve -N mine -n 1 -d 60
	[ "$status" -ne 0 ]
	[[ "$output" == *"not enough hosts you own: 0 of 1"* ]]
	qconf -mhost "$H3" owners=nobody
	run as_nobody reserve -N mine -n 1 -s +600 -d 60
	[ "$status" -eq 0 ]
	[[ "$output" == "reservation mine: $H3 from "* ]]
	run as_nobody reserve -N mine2 -H "$H3 | $H2" -s +630 -d 60
	[ "$status" -ne 0 ]
	[[ "$output" == *"you may not reserve host $H2"* ]]
	run reserve -N maint -H "$H3" -s +620 -d 600
	[ "$status" -ne 0 ]
	[[ "$output" == *"host $H3: overlap with mine from "* ]]
	run reserve -N old -n 1 -s 2001-01-01T10:00 -d 60
	[ "$status" -ne 0 ]
	[[ "$output" == *"the start is in the past"* ]]
	reserve -l | grep -q "^mine  *nobody  *waiting"
	reserve -l --json | grep -q '"name": "mine"'
	run unreserve mine2
	[ "$status" -ne 0 ]
	run as_nobody unreserve mine
	[ "$status" -eq 0 ]
	! reserve -l | grep -q mine || false
	qconf -mhost "$H3" owners=
}

@test "inside a reservation: -ar jobs of its users run there, others wait; h_rt guard; the end kills and fails" {
	cd "$WORK"
	reserve -N win -H "$H1" -s +10 -d 30 -u nobody
	# The window is 10 s away (room for a loaded machine): a job with no h_rt would run into it, so
	# it does not start on H1; one with a short limit does.
	id -u daemon >/dev/null 2>&1 || skip "no user daemon on this machine"
	long=$(as_daemon qsub -terse -cwd -o /dev/null -j y -l "hosts=$H1" -b y true)
	wait_until 8 info_has "$long" "host $H1 is kept free for reservation win of root from "
	state_is "$long" qw
	in=$(as_nobody qsub -terse -cwd -o /dev/null -j y -ar win -b y sleep 60)
	pend=$(as_nobody qsub -terse -cwd -o /dev/null -j y -ar win -b y true)
	# The window opens 10 s after the reserve (and the master's 1 s tick may
	# add one): wait from here until well inside it, not a fixed 10 s from a
	# moment that may be only 1 s after the reserve.
	wait_until 22 state_is "$in" r
	qhost | grep "^$H1 " | grep -q "reserved (win by root until"
	# qstat -f says the same on the queue instance, with no state letter
	# (not u, not d): a reservation is no failure; the job is listed there.
	qstat -f | grep "^all.q@$H1 " | grep -q "BP *0/1/1 .* reserved win by root until "
	[ "$(qstat -f | awk -v q="all.q@$H1" '$1 == q { print $6 }')" = reserved ]
	qstat -f -u '*' | sed -n "/^all.q@$H1 /,/^---/p" | grep -q "^ *$in .* nobody  *r "
	! qstat -f | grep "^all.q@$H2 " | grep -q reserved || false
	[ "$(info "$pend")" = "" ] || [[ "$(info "$pend")" == *"busy"* ]]
	# The job of someone else waits for the end.
	[[ "$(info "$long")" == *"reserved for others (reservation win)"* ]]
	run qsub -terse -ar win -b y true
	[ "$status" -eq 0 ]     # root is its owner
	wait_until 45 job_finished "$in"
	[ "$(job_field "$in" "error reason    1")" = "reservation win ended" ] ||
	    qacct -j "$in" | grep -q "reservation win ended"
	wait_until 20 job_finished "$long"
}

@test "unreserve of one that never started says it was cancelled, and so does its pending job" {
	reserve -N soon -H "$H2" -s +60 -d 60
	id=$(qsub -terse -ar soon -b y true)
	sleep 1
	[ "$(info "$id")" = "reservation soon has not started yet" ]
	run unreserve soon
	[ "$status" -eq 0 ]
	[ "$output" = "reservation soon cancelled: it had not started" ]
	wait_until 10 job_finished "$id"
	qacct -j "$id" | grep -q "reservation soon was cancelled before it started"
}

task_runs() { qstat | awk -v id="$1" -v t="$2" '$1 == id && $5 == "r" && $NF == t { f = 1 } END { exit !f }'; }

@test "arrays tied to a reservation: at its end the running task is killed, pending tasks and unstarted arrays fail" {
	reserve -N arr -H "$H3" -d 60
	ran=$(qsub -terse -ar arr -t 1-3 -tc 1 -o /dev/null -j y -b y sleep 60)
	ran=${ran%%.*}
	held=$(qsub -terse -h -ar arr -t 1-2 -o /dev/null -j y -b y true)
	held=${held%%.*}
	wait_until 10 task_runs "$ran" 1
	[ "$(unreserve arr)" = "reservation arr ended early" ]
	wait_until 20 job_finished "$ran"
	wait_until 10 job_finished "$held"
	[[ "$(job_reason "$ran")" == *"3 of 3 tasks failed"* ]]
	qacct -j "$ran" | grep -q "reservation arr ended"
	[ "$(job_reason "$held")" = "reservation ended: arr" ]
}

@test "windows open and close across a qmaster restart" {
	# Open from +4 to +29 s: long enough to be seen open after the restart
	# on a loaded machine (10 s was not, at a load average of 16).
	reserve -N rs -H "$H2" -s +4 -d 25
	kill -9 "$(cat "$CLUSTER/qmaster/qmaster.pid")"
	sleep 5
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 hosts_up_any
	wait_until 10 reserve_state rs active
	qhost | grep "^$H2 " | grep -q "reserved (rs"
	qstat -f | grep "^all.q@$H2 " | grep -q "reserved rs by root until"
	wait_until 40 gone rs
	! qhost | grep "^$H2 " | grep -q reserved || false
	! qstat -f | grep "^all.q@$H2 " | grep -q reserved || false
}

@test "a free host kept for a future reservation: qstat -j and the status page say which and until when" {
	cd "$WORK"
	id -u daemon >/dev/null 2>&1 || skip "no user daemon on this machine"
	reserve -N later -H "$H2" -s +3600 -d 60
	# Not root's: the reservation's owner may use its hosts.
	id=$(as_daemon qsub -terse -cwd -o /dev/null -j y -l "hosts=$H2" -b y true)
	wait_until 10 info_has "$id" "host $H2 is kept free for reservation later of root from "
	# The whole line: info stops at the first colon of a time.  A time on
	# another day than today (the hour before midnight) has its date.
	qstat -j "$id" | grep -q "^scheduling info: *host $H2 is kept free for reservation later of root from [0-9: -]* until [0-9: -]*: the job gives no wall-clock limit (h_rt), so it would run into it$"
	# Host 2 is idle and empty, and the page says why nothing starts there.
	out=$(status_dom "$HTTP_PORT")
	[[ "$out" == *"<td>$H2</td>"*"kept free for reservation later of root from "*" until "* ]]
	state_is "$id" qw
	qdel "$id" >/dev/null
	[ "$(unreserve later)" = "reservation later cancelled: it had not started" ]
}

hosts_up_any() { qhost | grep -q -w -e idle -e reserved; }
reserve_state() { reserve -l | awk -v n="$1" '$1 == n { print $3 }' | grep -qx "$2"; }
gone() { ! reserve -l | grep -q "^$1 "; }
