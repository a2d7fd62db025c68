#!/usr/bin/env bats
# authz.bats: who may do what: every request type of the master's table sent by an unprivileged user and by an operator (t/e2e/walk.py), qconf -reload for managers only, show_all_jobs, and an execd that believes only a master of the daemon identity.

load helpers

setup_file() {
	export NOWQ_SKIP=""
	# Other users cannot run root's own python (pyenv and the like).
	if [ ! -x /usr/bin/python3 ]; then
		NOWQ_SKIP="needs /usr/bin/python3"
		return 0
	fi
	if [ "$(id -u)" != 0 ] || ! id -u nobody >/dev/null 2>&1 || ! id -u daemon >/dev/null 2>&1; then
		NOWQ_SKIP="needs root and the users nobody and daemon to act as other users"
		return 0
	fi
	cluster_start
	work_start
	# daemon is an operator; nobody is a plain user.
	printf 'operators = {"daemon"}\n' >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	SOCK=$(sed -n 's/^unix_socket *= *"\(.*\)"$/\1/p' "$CLUSTER/qmaster.conf")
	export SOCK
}

teardown_file() {
	cluster_stop
	[ -n "${WORK:-}" ] && work_stop
	true
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

# Root's pending (held) jobs and a cron entry, for the walk to try to touch.
roots_things() {
	local ids="" i
	for i in $(seq 12); do
		ids="$ids${ids:+,}$(qsub -terse -h -o /dev/null -e /dev/null -b y true)"
	done
	CRON=$(qsub -terse --cron "0 0 1 1 *" -b y true | sed -n 's/^c\([0-9]*\)$/\1/p')
	IDS=$ids
	# And a reservation of root's, starting in an hour so it holds nothing
	# up (made once: the walk cannot end it).
	RESV=walkresv
	reserve -l | grep -qw "$RESV" ||
		reserve -N "$RESV" -H "$(qhost | awk 'NR == 3 { print $1 }')" -s +3600 -d 60 >/dev/null
}

@test "every request type refuses or serves an unprivileged user as the table says" {
	roots_things
	run bash -c "qmaster --requests | setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups \
		/usr/bin/python3 '$NOWQ_E2E/walk.py' '$SOCK' user '$IDS' '$CRON' '$RESV'"
	echo "$output"
	[ "$status" -eq 0 ]
	# Every row was tried (one line each, two for rows with an own object).
	[ "$(grep -c . <<<"$output")" -ge "$(qmaster --requests | wc -l)" ]
	# Root's jobs are untouched: still held, not renamed.
	for id in ${IDS//,/ }; do
		[ "$(job_state "$id")" = hqw ]
	done
	qdel -u nobody >/dev/null
}

@test "an operator may act on anyone's jobs and on queues, but not alter them, reload or register" {
	roots_things
	run bash -c "qmaster --requests | setpriv --reuid=daemon --regid=$(id -g daemon) --clear-groups \
		/usr/bin/python3 '$NOWQ_E2E/walk.py' '$SOCK' operator '$IDS' '$CRON' '$RESV'"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -q "^DELETE .*other *served" <<<"$output"
	grep -q "^ALTER .*other *refused" <<<"$output"
	[ "$(qstat -s prz -u '*' | awk '$3 == "renamed" && $4 == "root"' | wc -l)" -eq 0 ]
	# qmod -d by the operator is logged in the operator's name.
	grep -q "queue all.q disabled by daemon" "$CLUSTER/qmaster/qmaster.log"
	qdel -u daemon >/dev/null 2>&1 || true
	qdel -u root >/dev/null 2>&1 || true
}

@test "qconf -reload is for managers only" {
	run as_user nobody qconf -reload
	[ "$status" -ne 0 ]
	[[ "$output" == *"nobody must be manager"* ]]
	run as_user daemon qconf -reload
	[ "$status" -ne 0 ]
	run qconf -reload
	[ "$status" -eq 0 ]
}

@test "show_all_jobs = false shows users only their own jobs; operators and managers see all" {
	mine=$(as_user nobody qsub -terse -h -o /dev/null -e /dev/null -b y true)
	theirs=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	# The default (true) is Grid Engine's: everyone sees everyone's.
	as_user nobody qstat | awk '{ print $1 }' | grep -qx "$theirs"
	printf 'show_all_jobs = false\n' >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	run as_user nobody qstat
	[[ "$output" == *"$mine"* ]]
	! awk '{ print $1 }' <<<"$output" | grep -qx "$theirs" || false
	run as_user nobody qstat -j "$theirs"
	[ "$status" -ne 0 ]
	as_user daemon qstat | awk '{ print $1 }' | grep -qx "$theirs"
	qstat | awk '{ print $1 }' | grep -qx "$mine"
	sed -i '/^show_all_jobs = false$/d' "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	qdel "$mine" "$theirs" >/dev/null
}

@test "an execd with auth = none takes no DISPATCH from a loopback master run by another user" {
	fport=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	mkdir "$WORK/fake"
	printf '[execd]\nname = fakeexec\nmasters = 127.0.0.1:%s\nspool_dir = %s/fake/spool\nload_threshold = none\nauth = none\nlog_file = %s/fake/execd.log\n' \
		"$fport" "$WORK" "$WORK" > "$WORK/fake/execd.ini"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		/usr/bin/python3 "$NOWQ_E2E/fakemaster.py" "$fport" "$WORK/fake/pwned" &
	fake=$!
	sleep 0.3
	execd -c "$WORK/fake/execd.ini"
	wait_until 10 grep -q "refused the master: it runs as uid $(id -u nobody), not root" "$WORK/fake/execd.log"
	wait "$fake" || true
	kill "$(cat "$WORK/fake/spool/execd.pid")"
	[ ! -e "$WORK/fake/pwned" ]
	[ -z "$(ls "$WORK/fake/spool/active")" ]
}

@test "only the daemon identity may connect as an execd" {
	local hello='{"type":"HELLO","version":1,"role":"execd","auth":{"method":"none"},"nonce":"00000000000000000000000000000000"}'
	run setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		/usr/bin/python3 "$NOWQ_E2E/rawreq.py" "unix:$SOCK" "$hello"
	echo "$output"
	[[ "$output" == *'"ok": false, "error": "auth"'*"may connect as execd"* ]]
	grep -q "refused: uid $(id -u nobody) is not the daemon identity" "$CLUSTER/qmaster/qmaster.log"
	# The daemon identity still may.
	run /usr/bin/python3 "$NOWQ_E2E/rawreq.py" "unix:$SOCK" "$hello"
	[[ "$output" == *'"ok": true'* ]]
}

@test "a job's environment and script are shown only to its owner, operators and managers" {
	printf '#!/bin/sh\necho topsecret\n' > "$WORK/secret.sh"
	theirs=$(qsub -terse -h -o /dev/null -e /dev/null -v SECRET=hunter2 "$WORK/secret.sh")
	mine=$(as_user nobody qsub -terse -h -o /dev/null -e /dev/null -v MINE=visible -b y true)
	# Another user sees the job, as Grid Engine shows it, but not its
	# environment, script or qrsh address.
	run as_user nobody qstat -j "$theirs"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"job_number:"*"$theirs"* && "$output" == *"owner:"*"root"* ]]
	[[ "$output" == *"sge_o_workdir:"* ]]
	[[ "$output" != *hunter2* && "$output" != *env_list* ]]
	run as_user nobody qstat -j "$theirs" --json
	[ "$status" -eq 0 ]
	[[ "$output" == *'"owner": "root"'* ]]
	[[ "$output" != *hunter2* && "$output" != *topsecret* && "$output" != *'"script"'* ]]
	# Their owner, an operator and a manager see them.
	run as_user nobody qstat -j "$mine"
	[[ "$output" == *"env_list:"*"MINE=visible"* ]]
	run as_user daemon qstat -j "$theirs"
	[[ "$output" == *"env_list:"*"SECRET=hunter2"* ]]
	run as_user daemon qstat -j "$theirs" --json
	[[ "$output" == *topsecret* ]]
	run qstat -j "$mine"
	[[ "$output" == *"MINE=visible"* ]]
	qdel "$mine" "$theirs" >/dev/null
}
