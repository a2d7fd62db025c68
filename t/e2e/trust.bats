#!/usr/bin/env bats
# trust.bats: what another user of the host can read of a cluster started with umask 0 (none of its spools, database, logs, outbox or job folders, also after a start on a spool an earlier nowq left open), and that with a pending qrsh's secret they cannot take its streams from either end.

load helpers

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
	QRSH_PID=""
	LISTENER_PID=""
}

# A qrsh a failed test left waiting would hold bats's output open.
teardown() {
	[ -z "$QRSH_PID" ] || kill "$QRSH_PID" 2>/dev/null || true
	[ -z "${LISTENER_PID:-}" ] || kill "$LISTENER_PID" 2>/dev/null || true
}

setup_file() {
	export NOWQ_SKIP=""
	# nobody cannot run root's own python (pyenv and the like).
	if [ "$(id -u)" != 0 ] || ! id -u nobody >/dev/null 2>&1 || [ ! -x /usr/bin/python3 ]; then
		NOWQ_SKIP="needs root, the user nobody and /usr/bin/python3"
		return 0
	fi
	# The loosest umask a starting shell can have: the daemons inherit it.
	umask 000
	cluster_start
	umask 022
	work_start
	cat > "$WORK/shepherd.py" <<-'PY'
	# Poses as the shepherd of job ID: HELLO with SECRET to qrsh at PORT;
	# if qrsh answers START, writes a line for it and says the job
	# ended well.  Exits 0 when qrsh refused it.
	import json, socket, struct, sys
	port, job, secret = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
	def frame(t, b):
	    return t + struct.pack(">I", len(b)) + b
	s = socket.create_connection(("127.0.0.1", port))
	s.sendall(frame(b"H", json.dumps({"secret": secret, "host": "x", "part": 0, "id": job}).encode()))
	s.settimeout(30)
	if s.recv(100) == b"":
	    sys.exit(0)
	s.sendall(frame(b"O", b"INJECTED\n") + frame(b"X", b"0 0"))
	sys.exit("qrsh took the connection")
	PY
	cat > "$WORK/listener.py" <<-'PY'
	# Takes the port a killed qrsh left, as its job's client would have it;
	# exits 0 when the shepherd that connects says nothing to us.
	import socket, sys
	s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
	s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
	s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
	s.bind(("::", int(sys.argv[1])))
	s.listen(4)
	open(sys.argv[2], "w").close()
	s.settimeout(30)
	c, _ = s.accept()
	c.settimeout(30)
	got = c.recv(100)
	sys.exit(0 if got == b"" else "the shepherd said " + repr(got[:40]))
	PY
	chmod 644 "$WORK/shepherd.py" "$WORK/listener.py"
}

teardown_file() {
	[ -z "$NOWQ_SKIP" ] || return 0
	# Jobs outlive a stopped cluster: none of a failed test may.
	timeout 10 qdel -u '*' >/dev/null 2>&1 || true
	wait_until 20 bash -c '[ -z "$(qstat -u "*")" ]' || true
	cluster_stop
	work_stop
}

# Every file and folder under the cluster's folder that nobody can read,
# by path (a name is easy to guess): only the configuration files, which
# hold no job data, may be.  The leaks go to stdout.
leaks() {
	find "$CLUSTER" -mindepth 1 \( -type f ! -name '*.conf' ! -name '*.ini' -o -type d \) -print0 |
		as_user nobody /usr/bin/xargs -0 -r /bin/sh -c \
			'for f; do if [ -d "$f" ]; then ls "$f"; else cat "$f"; fi >/dev/null 2>&1 && echo "$f"; done; true' sh
}

@test "with umask 0, nobody reads no spool, database, WAL, log, outbox or job folder" {
	cd "$WORK"
	id=$(qsub -terse -v TRUST_SECRET=hunter2 -b y sleep 60)
	wait_until 20 state_is "$id" r
	# What the attack read, and what there is to read, is there.
	[ -f "$CLUSTER/qmaster/nowq.db-wal" ]
	[ -f "$CLUSTER/qmaster/qmaster.log" ]
	[ -f "$CLUSTER/execd-1/execd.log" ]
	[ -f "$CLUSTER"/execd-1/active/"$id".0.1/job.json ]
	grep -q hunter2 "$CLUSTER"/execd-1/active/"$id".0.1/job.json
	run leaks
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	run as_user nobody /usr/bin/sqlite3 -readonly "$CLUSTER/qmaster/nowq.db" "SELECT env FROM jobs"
	[ "$status" -ne 0 ]
	[[ "$output" != *hunter2* ]]
	# Clients of other users still reach the master.
	as_user nobody qstat >/dev/null
	qdel "$id" >/dev/null
	wait_until 20 job_finished "$id"
}

@test "a start on a spool an earlier nowq left open makes it private" {
	nowq stop --dir "$CLUSTER" >/dev/null
	chmod 755 "$CLUSTER/qmaster" "$CLUSTER/execd-1" "$CLUSTER/execd-1/active" "$CLUSTER/execd-1/outbox"
	chmod 644 "$CLUSTER/qmaster/nowq.db" "$CLUSTER/qmaster/qmaster.log" "$CLUSTER/execd-1/execd.log"
	nowq start --dir "$CLUSTER" >/dev/null
	[ "$(stat -c %a "$CLUSTER/qmaster")" = 700 ]
	[ "$(stat -c %a "$CLUSTER/qmaster/nowq.db")" = 600 ]
	[ "$(stat -c %a "$CLUSTER/qmaster/qmaster.log")" = 600 ]
	[ "$(stat -c %a "$CLUSTER/execd-1")" = 711 ]
	[ "$(stat -c %a "$CLUSTER/execd-1/active")" = 711 ]
	[ "$(stat -c %a "$CLUSTER/execd-1/outbox")" = 700 ]
	[ "$(stat -c %a "$CLUSTER/execd-1/execd.log")" = 600 ]
	grep -q "took the permissions of group and others" "$CLUSTER/qmaster/qmaster.log"
	grep -q "took the permissions of group and others" "$CLUSTER/execd-1/execd.log"
	run leaks
	[ -z "$output" ]
}

@test "another user with a pending qrsh's secret cannot take its job's streams" {
	cd "$WORK"
	# Held behind a held job, the qrsh job waits while nobody poses as its shepherd.
	held=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	qrsh -N hijack -hold_jid "$held" 'echo ran' > "$WORK/hijack.out" 2> "$WORK/hijack.err" &
	local pid=$!
	QRSH_PID=$pid
	wait_until 20 bash -c "qstat -s p | grep -q hijack"
	id=$(qstat -s p | awk '$3 == "hijack" { print $1 }')
	# nobody cannot read the secret where it is kept ...
	run as_user nobody /usr/bin/sqlite3 "file:$CLUSTER/qmaster/nowq.db?mode=ro" "SELECT qrsh FROM jobs"
	[ "$status" -ne 0 ]
	# ... and with it (read here as root) still proves nothing.
	read -r _ port secret <<< "$(job_qrsh "$id")"
	[ -n "$secret" ]
	as_user nobody /usr/bin/python3 "$WORK/shepherd.py" "$port" "$id" "$secret"
	grep -q "refused a connection: the connection is uid $(id -u nobody)'s, neither root's nor ours" \
		"$WORK/hijack.err"
	# The job's own shepherd is taken once it may start.
	kill -0 "$pid"
	qrls "$held"
	wait_until 30 bash -c "! kill -0 $pid 2>/dev/null"
	local rc=0
	wait "$pid" || rc=$?
	cat "$WORK/hijack.err"
	[ "$rc" -eq 0 ]
	[ "$(cat "$WORK/hijack.out")" = ran ]
}

@test "the shepherd of a qrsh job says nothing to another user holding the port qrsh left" {
	cd "$WORK"
	held=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	qrsh -N stale -hold_jid "$held" 'echo ran' > "$WORK/stale.out" 2> "$WORK/stale.err" &
	QRSH_PID=$!
	wait_until 20 bash -c "qstat -s p | grep -q stale"
	id=$(qstat -s p | awk '$3 == "stale" { print $1 }')
	read -r _ port _ <<< "$(job_qrsh "$id")"
	# A qrsh killed outright deletes nothing: its job still waits.
	kill -9 "$QRSH_PID"
	wait "$QRSH_PID" || true
	as_user nobody /usr/bin/python3 "$WORK/listener.py" "$port" "$WORK/stale.ready" \
		> "$WORK/stale.got" 2>&1 &
	LISTENER_PID=$!
	wait_until 10 test -e "$WORK/stale.ready"
	qrls "$held"
	wait_until 30 job_finished "$id"
	local rc=0
	wait "$LISTENER_PID" || rc=$?
	cat "$WORK/stale.got"
	[ "$rc" -eq 0 ]
	[[ "$(job_reason "$id")" == *"held by uid $(id -u nobody), not the job's owner"* ]]
}
