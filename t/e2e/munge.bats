#!/usr/bin/env bats
# munge.bats: auth = munge on loopback TCP with the test's own munged: clients and an execd are known by their credentials, and replayed, expired, forged, foreign-key and misdirected credentials are refused with a clear error and logged; qrsh's shepherd connects back with a credential qrsh accepts, and qrsh refuses forged ones.

load helpers

host_idle() { [ "$(qhost | awk -v h="$1" '$1 == h { print $7 }')" = idle ]; }

# A master and one execd that speak only TCP with munge, from munged "a".
setup_file() {
	export NOWQ_SKIP=""
	if ! munge_start a; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	munge_start other		# another realm: a key of its own
	export MUNGE_SOCKET="$MUNGE_DIR/a/sock"
	CLUSTER=$(mktemp -d /tmp/nowq-munge-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export PORT
	cat > "$CLUSTER/qmaster.conf" <<EOF
spool_dir = "$CLUSTER/qmaster"
listen = "127.0.0.1:$PORT"
unix_socket = ""
auth = "munge"
munge_socket = "$MUNGE_DIR/a/sock"
log_file = "$CLUSTER/qmaster.log"
log_level = "debug"
allow_root_jobs = true
queue "all.q" {}
EOF
	munge_execd_ini "$CLUSTER/execd.ini" mungehost "127.0.0.1:$PORT" "$CLUSTER/execd" \
	    "$MUNGE_DIR/a/sock" "$CLUSTER/execd.log"
	unset MUNGE_SOCKET	# the daemons have it from their files
	qmaster -c "$CLUSTER/qmaster.conf"
	execd -c "$CLUSTER/execd.ini"
	export NOWQ_MASTER="127.0.0.1:$PORT" MUNGE_SOCKET="$MUNGE_DIR/a/sock"
	wait_until 20 host_idle mungehost
}

teardown_file() {
	if [ -n "${CLUSTER:-}" ]; then
		[ -f "$CLUSTER/execd/execd.pid" ] && kill "$(cat "$CLUSTER/execd/execd.pid")"
		[ -f "$CLUSTER/qmaster/qmaster.pid" ] && kill "$(cat "$CLUSTER/qmaster/qmaster.pid")"
		wait_until 10 bash -c "! test -e $CLUSTER/qmaster/qmaster.pid && ! test -e $CLUSTER/execd/execd.pid"
		rm -rf "$CLUSTER"
	fi
	munge_stop
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

hello() { printf '{"type":"HELLO","version":1,"role":"%s","auth":{"method":"munge","cred":"%s"},"uid":0%s}' "$1" "$2" "${3:-}"; }
logged() { grep -q "$1" "$CLUSTER/qmaster.log"; }

@test "over TCP with munge a job runs, and its owner is the credential's user" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 20 job_finished "$id"
	[ "$(qacct -j "$id" | awk '$1 == "owner" { print $2 }')" = root ]
	logged "client root (uid 0) by munge"
	id -u nobody >/dev/null 2>&1 || skip "no user nobody"
	id=$(cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env NOWQ_MASTER="$NOWQ_MASTER" MUNGE_SOCKET="$MUNGE_SOCKET" "$NOWQ_BIN/qsub" -terse -h -b y true)
	[ "$(job_field "$id" owner)" = nobody ]
	qdel "$id"
}

@test "qrsh over munge: the shepherd connects back with a credential qrsh accepts" {
	run bash -c 'echo in | qrsh "cat; echo err >&2; exit 6" 2>&1'
	[ "$status" -eq 6 ]
	[ "$output" = "$(printf 'in\nerr')" ]
}

@test "qrsh refuses a shepherd's credential of another key, user or secret, none, and a wrong secret, and waits for the genuine one" {
	id -u nobody >/dev/null 2>&1 || skip "no user nobody"
	# Held behind a held job, the qrsh job waits while we pose as its shepherd.
	held=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	qrsh -N forged -hold_jid "$held" 'echo ran' > "$CLUSTER/forged.out" 2> "$CLUSTER/forged.err" &
	local pid=$!
	wait_until 20 bash -c "qstat -s p | grep -q forged"
	id=$(qstat -s p | awk '$3 == "forged" { print $1 }')
	read -r _ port secret <<< "$(job_qrsh "$id")"
	[ -n "$secret" ]
	refused() { grep -q "refused a connection: $1" "$CLUSTER/forged.err"; }
	# The secret, with a credential of another realm (munged "other").
	qrsh_hello "$port" "$id" "$secret" "$(munge_cred other "nowq:qrsh:$secret")"
	refused 'munge credential refused: invalid munge credential (forged, damaged, or made with another key)'
	# This realm, but of a user neither root nor qrsh's.
	cred=$(setpriv --reuid=nobody --regid=nogroup --clear-groups munge -S "$MUNGE_SOCKET" -s "nowq:qrsh:$secret")
	qrsh_hello "$port" "$id" "$secret" "$cred"
	refused 'munge credential of uid [0-9]*, neither root nor ours'
	# Root's, but made for another secret.
	qrsh_hello "$port" "$id" "$secret" "$(munge_cred a "nowq:qrsh:$(printf '%032d' 0)")"
	refused 'munge credential refused: munge credential was not made for this'
	# A good credential does not stand for the secret, nor the secret for
	# a credential: the master told qrsh that its shepherds have munge.
	qrsh_hello "$port" "$id" "$(printf '%032d' 0)" "$(munge_cred a "nowq:qrsh:$secret")"
	refused 'wrong secret'
	qrsh_hello "$port" "$id" "$secret"
	refused 'no munge credential'
	# Still waiting: the job's own shepherd is taken once it may start.
	kill -0 "$pid"
	qrls "$held"
	wait "$pid"
	[ "$(cat "$CLUSTER/forged.out")" = ran ]
	[ "$(grep -c 'refused a connection' "$CLUSTER/forged.err")" -eq 5 ]
}

@test "a credential is good once: the replay is refused and logged" {
	cred=$(munge_cred a nowq:hello:client)
	run rawreq "$NOWQ_MASTER" "$(hello client "$cred")"
	[[ "$output" == *'"ok": true'* ]]
	run rawreq "$NOWQ_MASTER" "$(hello client "$cred")"
	[[ "$output" == *'"error": "auth"'*'replayed munge credential'* ]]
	logged "refused: replayed munge credential"
}

@test "expired, foreign-key, forged and misdirected credentials are refused" {
	cred=$(munge_cred a nowq:hello:client 1)
	sleep 2.2
	run rawreq "$NOWQ_MASTER" "$(hello client "$cred")"
	[[ "$output" == *'expired munge credential'* ]]
	logged "refused: expired munge credential"
	run rawreq "$NOWQ_MASTER" "$(hello client "$(munge_cred other nowq:hello:client)")"
	[[ "$output" == *'invalid munge credential (forged, damaged, or made with another key)'* ]]
	run rawreq "$NOWQ_MASTER" "$(hello client 'MUNGE:AwQFAAB0aGlzIGlzIG5vdCBhIGNyZWRlbnRpYWw=:')"
	[[ "$output" == *'invalid munge credential'* ]]
	# Made for another program, or for an execd's HELLO instead of a client's.
	run rawreq "$NOWQ_MASTER" "$(hello client "$(munge_cred a something-else)")"
	[[ "$output" == *'was not made for this'* ]]
	run rawreq "$NOWQ_MASTER" "$(hello client "$(munge_cred a nowq:hello:execd)")"
	[[ "$output" == *'was not made for this'* ]]
	# No credential at all, and a claimed uid is not read.
	run rawreq "$NOWQ_MASTER" '{"type":"HELLO","version":1,"role":"client","auth":{"method":"none"},"uid":0}'
	[[ "$output" == *'this master wants a munge credential'* ]]
	# And the master still serves.
	run qstat
	[ "$status" -eq 0 ]
}

@test "a client that cannot reach munged says why" {
	run env MUNGE_SOCKET=/nonexistent/munge.sock qstat
	[ "$status" -ne 0 ]
	[[ "$output" == *"this master wants a munge credential"*"cannot get a munge credential"*"/nonexistent/munge.sock"* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "only the daemon identity may connect as an execd" {
	id -u nobody >/dev/null 2>&1 || skip "no user nobody"
	cred=$(setpriv --reuid=nobody --regid=nogroup --clear-groups munge -S "$MUNGE_SOCKET" -s nowq:hello:execd)
	run rawreq "$NOWQ_MASTER" "$(hello execd "$cred" ',"nonce":"00112233445566778899aabbccddeeff"')"
	[[ "${lines[0]}" == *'"ok": false, "error": "auth"'*'may connect as execd'* ]]
	# The master's HELLO reply carries its own credential for the execd's nonce.
	cred=$(munge_cred a nowq:hello:execd)
	run rawreq "$NOWQ_MASTER" "$(hello execd "$cred" ',"nonce":"00112233445566778899aabbccddeeff"')"
	cred=$(printf '%s' "$output" | python3 -c 'import json, sys; print(json.load(sys.stdin)["auth"]["cred"])')
	run unmunge -S "$MUNGE_SOCKET" <<<"$cred"
	[[ "$output" == *"UID:"*"root"* ]]
	[[ "$output" == *"nowq:master:00112233445566778899aabbccddeeff" ]]
}

@test "an execd refuses a master that cannot prove who it is, and takes no DISPATCH from it" {
	fport=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	sed -e "s/^masters = .*/masters = 127.0.0.1:$fport/" -e "s|^spool_dir = .*|spool_dir = $CLUSTER/fake-execd|" \
		-e "s|^log_file = .*|log_file = $CLUSTER/fake-execd.log|" -e "s/^name = .*/name = fakeexec/" \
		"$CLUSTER/execd.ini" > "$CLUSTER/fake-execd.ini"
	python3 "$NOWQ_E2E/fakemaster.py" "$fport" "$CLUSTER/pwned" &
	fake=$!
	sleep 0.3
	execd -c "$CLUSTER/fake-execd.ini"
	wait_until 10 grep -q "refused the master: its HELLO reply has no munge credential" "$CLUSTER/fake-execd.log"
	wait "$fake" || true
	kill "$(cat "$CLUSTER/fake-execd/execd.pid")"
	[ ! -e "$CLUSTER/pwned" ]
	[ -z "$(ls "$CLUSTER/fake-execd/active")" ]
}

@test "auth = none is refused with a listener off loopback, and warned about on loopback" {
	printf 'spool_dir = "%s/x"\nlisten = "0.0.0.0:7444"\nauth = "none"\nqueue "all.q" {}\n' "$CLUSTER" > "$CLUSTER/bad.conf"
	run qmaster -f -c "$CLUSTER/bad.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *'auth = "none" is allowed only when every listener is on loopback'* ]]
	printf '[execd]\nmasters = 10.0.0.1:7444\nauth = none\n' > "$CLUSTER/bad.ini"
	run execd -f -c "$CLUSTER/bad.ini"
	[ "$status" -ne 0 ]
	[[ "$output" == *"auth = none works only with masters on loopback"* ]]
}
