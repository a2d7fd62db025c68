#!/usr/bin/env bats
# idle.bats: a real cluster whose exec host follows its idle policies: a site command and input devices toggled by the test hold work back, and owner_returns suspends, vacates or lets jobs finish.

load helpers

setup_file() {
	cluster_start
	WORK=$(mktemp -d /tmp/nowq-idle.XXXXXX)
	chmod 777 "$WORK"
	export WORK
	LOG="$CLUSTER/execd-1/execd.log"
	export LOG
	HTTP_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "http_listen = \"127.0.0.1:$HTTP_PORT\"" >> "$CLUSTER/qmaster.conf"
	export HTTP_PORT
	# The site command: idle unless the test has created the busy marker.
	printf '#!/bin/sh\ntest ! -e %s/busy\n' "$WORK" > "$WORK/is-idle"
	chmod 755 "$WORK/is-idle"
}

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

# Appends settings to the execd's file (the last value of a key wins) and
# restarts the cluster on the same directory.
reconfigure() {
	nowq stop --dir "$CLUSTER" >/dev/null
	: > "$LOG"
	printf '%s\n' "$@" >> "$CLUSTER/execd-1.ini"
	nowq start --dir "$CLUSTER" >/dev/null
}

# The state letter of a process: R, S, T (stopped) ...; empty once it is gone.
proc_state() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1; }
proc_state_is() { [ "$(proc_state "$1")" = "$2" ]; }
proc_running() { local s; s=$(proc_state "$1"); [ -n "$s" ] && [ "$s" != T ] && [ "$s" != Z ]; }
proc_gone() { local s; s=$(proc_state "$1"); [ -z "$s" ] || [ "$s" = Z ]; }
log_has() { grep -q -- "$1" "$LOG"; }

# A job that writes its pid to FILE and sleeps; prints the job id.
sleeper() { qsub -terse -b y sh -c "echo \$\$ > $1; exec sleep 300"; }

# What the status page shows in its state column for a job: the cell after
# the job's owner.
page_state() {
	status_dom "$HTTP_PORT" | python3 -c '
import sys, re
m = re.search(r"<tr><td><a href=\"#job=%s\">%s</a></td>(?:<td[^>]*>[^<]*</td>){3}<td[^>]*>([^<]*)</td>" % (sys.argv[1], sys.argv[1]), sys.stdin.read())
print(m.group(1) if m else "")' "$1"
}
json_state() { qstat --json -j "$1" | python3 -c 'import sys, json; j = json.load(sys.stdin)["jobs"][0]; print(j["state_letters"], j.get("suspended_by_host", False))'; }

end_job() {
	qdel "$1" >/dev/null 2>&1 || true
	wait_until 20 job_finished "$1"
}

@test "a bad policy value stops the execd with the file, line and problem" {
	local ini="$WORK/bad.ini"
	for bad in "idle_windows = Mon-Fry 19:00-07:00" "idle_windows = Mon 19:00-19:00" \
	    "idle_keyboard = soon" "idle_no_users = maybe" "idle_command = is-idle" \
	    "owner_returns = pause" "vacate_grace = -1" "idle_devices = input/*" \
	    "idle_command_timeout = 0"; do
		printf '[execd]\nmasters = unix:/nonexistent\nauth = none\n%s\n' "$bad" > "$ini"
		run execd -f -c "$ini"
		[ "$status" -eq 1 ]
		[[ "$output" == "execd: $ini:4: ${bad%% *}"* ]] || { echo "got: $output"; false; }
	done
}

@test "while the site command says busy a job stays qw; when it says idle the job runs" {
	touch "$WORK/busy"
	reconfigure "load_interval = 1" "idle_command = $WORK/is-idle" "owner_returns = suspend"
	wait_until 10 log_has "host is busy: site command has not answered yet"
	id=$(sleeper "$WORK/pid1")
	sleep 3
	state_is "$id" qw
	[ ! -e "$WORK/pid1" ]
	rm "$WORK/busy"
	wait_until 10 state_is "$id" r
	wait_until 10 test -s "$WORK/pid1"
	log_has "host is now idle"
	echo "$id" > "$WORK/job1"
}

@test "owner_returns = suspend stops the running job while busy and continues it when idle" {
	id=$(cat "$WORK/job1")
	pid=$(cat "$WORK/pid1")
	proc_running "$pid"
	touch "$WORK/busy"
	wait_until 10 proc_state_is "$pid" T
	log_has "job $id\.0\.[0-9]*: suspending: site command said busy (exit status 1)"
	# Shown stopped by a threshold, as Grid Engine's T, not as running.
	wait_until 10 state_is "$id" T
	[ "$(json_state "$id")" = "T True" ]
	[ "$(page_state "$id")" = "suspended (T)" ]
	[ "$(qstat -s s | awk -v id="$id" '$1 == id { print $5 }')" = T ]
	# A qmod -s on top shows both, and outlasts the policy's continue.
	qmod -s "$id"
	state_is "$id" sT
	# It stays stopped while the host is busy.
	sleep 2
	proc_state_is "$pid" T
	rm "$WORK/busy"
	wait_until 10 state_is "$id" s
	sleep 1
	proc_state_is "$pid" T
	qmod -us "$id"
	wait_until 10 proc_running "$pid"
	state_is "$id" r
	[ "$(json_state "$id")" = "r False" ]
	[ -z "$(qstat -s s | awk -v id="$id" '$1 == id')" ]
	log_has "job $id\.0\.[0-9]*: continuing"
	end_job "$id"
	proc_gone "$pid"
}

@test "a job suspended by the policy stays stopped across an execd restart and continues when idle" {
	rm -f "$WORK/busy"
	reconfigure "owner_returns = suspend"
	id=$(sleeper "$WORK/pid4")
	wait_until 20 state_is "$id" r
	wait_until 10 test -s "$WORK/pid4"
	pid=$(cat "$WORK/pid4")
	touch "$WORK/busy"
	wait_until 10 proc_state_is "$pid" T
	reconfigure
	wait_until 10 log_has "job $id\.0\.[0-9]* is still in the spool"
	sleep 2
	proc_state_is "$pid" T
	rm "$WORK/busy"
	wait_until 10 proc_running "$pid"
	log_has "job $id\.0\.[0-9]*: continuing"
	end_job "$id"
}

@test "owner_returns = vacate: SIGTERM, the grace, SIGKILL, and the end says vacated" {
	rm -f "$WORK/busy"
	reconfigure "owner_returns = vacate" "vacate_grace = 2"
	# The job ignores SIGTERM, so only the SIGKILL after the grace ends it.
	id=$(qsub -terse -b y sh -c "trap '' TERM; echo \$\$ > $WORK/pid2; while :; do sleep 0.2; done")
	wait_until 20 state_is "$id" r
	wait_until 10 test -s "$WORK/pid2"
	pid=$(cat "$WORK/pid2")
	touch "$WORK/busy"
	wait_until 10 log_has "job $id\.0\.[0-9]*: vacating: owner returned (site command said busy"
	# Within the grace it is still there.
	proc_running "$pid"
	wait_until 10 proc_gone "$pid"
	log_has "job $id\.0\.[0-9]*: still running 2 s after SIGTERM; killing it"
	wait_until 20 job_finished "$id"
	log_has "job $id\.0\.[0-9]* ended: exit status 137, vacated: owner returned (site command said busy (exit status 1))"
	# Busy: new work waits.
	id2=$(qsub -terse -b y true)
	sleep 2
	state_is "$id2" qw
	rm "$WORK/busy"
	wait_until 20 job_finished "$id2"
}

@test "owner_returns = finish lets the running job run on and takes no new work" {
	rm -f "$WORK/busy"
	reconfigure "owner_returns = finish"
	wait_until 10 log_has "host is now idle"
	id=$(sleeper "$WORK/pid3")
	wait_until 20 state_is "$id" r
	wait_until 10 test -s "$WORK/pid3"
	pid=$(cat "$WORK/pid3")
	touch "$WORK/busy"
	wait_until 10 log_has "host is now busy: site command said busy"
	id2=$(qsub -terse -b y true)
	sleep 2
	proc_running "$pid"
	state_is "$id" r
	state_is "$id2" qw
	rm "$WORK/busy"
	wait_until 20 job_finished "$id2"
	end_job "$id"
}

@test "idle_keyboard: recent access to an input device holds work back" {
	rm -f "$WORK/busy"
	: > "$WORK/kbd0"
	touch -a -d '-10 min' "$WORK/kbd0"
	: > "$WORK/kbd1"
	touch -a -d '-3 min' "$WORK/kbd1"
	reconfigure "idle_command =" "idle_keyboard = 2" "idle_devices = $WORK/kbd*, /nonexistent/tty*"
	wait_until 10 log_has "host is idle: no policy says busy"
	id=$(qsub -terse -b y true)
	wait_until 20 job_finished "$id"
	# Someone types.
	touch -a "$WORK/kbd1"
	wait_until 10 log_has "host is now busy: keyboard used 0 min ago"
	id=$(qsub -terse -b y true)
	sleep 2
	state_is "$id" qw
	touch -a -d '-2 min' "$WORK/kbd1"
	wait_until 20 job_finished "$id"
}

@test "a site command that hangs is killed after idle_command_timeout and counts as busy" {
	printf '#!/bin/sh\necho $$ > %s/hang.pid\nexec sleep 600\n' "$WORK" > "$WORK/hangs"
	chmod 755 "$WORK/hangs"
	reconfigure "idle_keyboard = none" "idle_command = $WORK/hangs" "idle_command_timeout = 1"
	wait_until 10 log_has "site command $WORK/hangs did not finish within 1 s; killed"
	wait_until 10 log_has "host is busy: site command has not answered yet"
	pid=$(cat "$WORK/hang.pid")
	wait_until 10 proc_gone "$pid"
	# Killed for lateness means busy: a job waits.
	id=$(qsub -terse -b y true)
	sleep 2
	state_is "$id" qw
	reconfigure "idle_command = $WORK/is-idle"
	wait_until 20 job_finished "$id"
}
