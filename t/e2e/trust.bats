#!/usr/bin/env bats
# trust.bats: what another user of the host can read of a cluster started with umask 0: none of its spools, database, logs, outbox or job folders, also after a start on a spool an earlier nowq left open.

load helpers

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
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
