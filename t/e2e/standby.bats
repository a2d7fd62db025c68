#!/usr/bin/env bats
# standby.bats: a primary and a hot standby on loopback (nowq start --masters 2): replication compared by qmaster --dump, failover after kill -9 during a submission storm, resynchronisation by snapshot, and the managers' mail about a takeover.

load helpers

setup() {
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	nowq start --dir "$CLUSTER" --masters 2 --execds 3 --slots 2 >/dev/null
	eval "$(nowq env --dir "$CLUSTER")"
	export NOWQ_MASTER
	wait_until 10 in_sync
}

teardown() {
	cluster_stop
}

in_sync() { qconf -sm | grep -q "in sync"; }
role_of() { qconf -sm --json | python3 -c "import json,sys; print([m['role'] for m in json.load(sys.stdin)['masters'] if m['name'].endswith(':$1')][0])"; }
primary_is() { qconf -sm --json | python3 -c "import json,sys; m=[m for m in json.load(sys.stdin)['masters'] if m.get('self')][0]; sys.exit(0 if m['role']=='primary' and m['name'].endswith(':$1') else 1)"; }
port_of() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)"/\1/p' "$1"; }

@test "the standby follows every commit: qconf -sm shows both in sync and a job submitted on the primary is in the standby's database" {
	run qconf -sm
	[ "$status" -eq 0 ]
	[[ "$output" == *primary* ]]
	[[ "$output" == *standby* ]]
	id=$(echo 'true' | qsub -terse -h)
	# The reply came only after the standby acknowledged: the row is there.
	run sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT count(*) FROM jobs WHERE id = $id"
	[ "$output" = 1 ]
	# A client that reaches the standby first is redirected to the primary.
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock,$NOWQ_MASTER" run qstat -j "$id"
	[ "$status" -eq 0 ]
}

pid_of() { cat "$CLUSTER/$1/qmaster.pid"; }

@test "qmaster --dump: the two live masters dump the same; one changed row is a difference; a corrupt or foreign file is a one-line error" {
	for i in 1 2 3; do echo true | qsub -terse >/dev/null; done
	echo 'echo $SGE_TASK_ID' | qsub -t 1-4 -terse >/dev/null
	echo true | qsub -h -N kept >/dev/null
	ended() { [ -z "$(qstat -s r | awk 'NR > 2')" ] && [ "$(qstat -s z | awk 'NR > 2' | wc -l)" -ge 4 ]; }
	wait_until 60 ended
	# Read-only beside the running masters: their files stay theirs.
	run qmaster --check -c "$CLUSTER/qmaster.conf"
	[ "$status" -eq 0 ]
	[ "$output" = "0 problems" ]
	same_dumps "$CLUSTER/qmaster/nowq.db" "$CLUSTER/qmaster-2/nowq.db"
	qmaster --dump -c "$CLUSTER/qmaster-2.conf" | cmp - "$CLUSTER/dump.b"
	grep -q '^table jobs ' "$CLUSTER/dump.a"
	grep -q '^table tasks ' "$CLUSTER/dump.a"
	grep -q '"kept"' "$CLUSTER/dump.a"
	# A copy with one job's name changed: the dump shows that row and no other.
	sqlite3 "$CLUSTER/qmaster-2/nowq.db" ".backup $CLUSTER/copy.db"
	sqlite3 "$CLUSTER/copy.db" "UPDATE jobs SET name = 'changed' WHERE name = 'kept'"
	qmaster --dump "$CLUSTER/copy.db" > "$CLUSTER/dump.c"
	[ "$(diff "$CLUSTER/dump.b" "$CLUSTER/dump.c" | grep -c '^[<>]')" = 2 ]
	diff "$CLUSTER/dump.b" "$CLUSTER/dump.c" | grep -q '^> .*"changed"'
	# A page of the copy overwritten: --check lists problems, --dump gives none.
	pages=$(sqlite3 "$CLUSTER/copy.db" "PRAGMA page_count")
	[ "$pages" -gt 4 ]
	head -c 4096 /dev/urandom | dd of="$CLUSTER/copy.db" bs=4096 seek=$((pages / 2)) conv=notrunc 2>/dev/null
	run qmaster --check "$CLUSTER/copy.db"
	[ "$status" -eq 1 ]
	[[ "$output" == *integrity* ]]
	run qmaster --dump "$CLUSTER/copy.db"
	[ "$status" -eq 1 ]
	[[ "${lines[-1]}" == "qmaster: $CLUSTER/copy.db has "*" problem"*"; no dump" ]]
	[[ "$output" != *"table jobs"* ]]
	# Not a database, someone else's database, no file: one line each.
	echo "not a database" > "$CLUSTER/foreign.db"
	run qmaster --dump "$CLUSTER/foreign.db"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"file is not a database"* ]]
	sqlite3 "$CLUSTER/other.db" "CREATE TABLE t (a); INSERT INTO t VALUES (1)"
	run qmaster --check "$CLUSTER/other.db"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"not nowq's"* ]]
	run qmaster --check "$CLUSTER/none/nowq.db"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e "$CLUSTER/none" ]
}

@test "kill -9 of the primary during a storm of 4 x 100 submissions: the standby takes over and every acknowledged job exists exactly once" {
	ran="$CLUSTER/ran"
	: > "$ran"
	chmod 666 "$ran"
	# Each client records an id only after qsub printed it: the acknowledgement.
	pids=()
	for c in 1 2 3 4; do
		(
			for i in $(seq 1 100); do
				id=$(timeout 30 qsub -terse -r n -o /dev/null -e /dev/null -b y sh -c "echo \$JOB_ID >> $ran") || continue
				echo "$id" >> "$CLUSTER/acked.$c"
			done
		) 3>&- &
		pids+=($!)
	done
	acked_at_least() { [ "$(cat "$CLUSTER"/acked.* 2>/dev/null | wc -l)" -ge "$1" ]; }
	# On a loaded machine (a sanitizer build beside other tests) a
	# submission can take a second: the kill comes once 60 are in.
	wait_until 120 acked_at_least 60
	kill -9 "$(pid_of qmaster)"
	t0=$(date +%s%N)
	# The standby is primary and takes a submission.
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock" wait_until 10 qsub -o /dev/null -e /dev/null -b y true
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	# The time is printed, not judged: bench/w6 measures it against the
	# 3 s bar on a quiet machine.
	echo "# takeover in $ms ms" >&3
	for p in "${pids[@]}"; do wait "$p" || true; done
	cat "$CLUSTER"/acked.* | sort -n > "$CLUSTER/acked"
	n=$(wc -l < "$CLUSTER/acked")
	echo "# acknowledged: $n of 400" >&3
	[ "$n" -ge 60 ]
	# Every acknowledged id is a job on the new primary, once; no id twice.
	[ -z "$(uniq -d "$CLUSTER/acked")" ]
	sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT id FROM jobs" | sort -n > "$CLUSTER/have"
	[ -z "$(comm -23 "$CLUSTER/acked" "$CLUSTER/have")" ]
	# No job ran twice (they are not rerunnable).
	all_done() { [ -z "$(qstat -s pr | awk 'NR > 2')" ]; }
	wait_until 120 all_done
	[ -z "$(sort -n "$ran" | uniq -d)" ]
	[ -z "$(comm -23 "$CLUSTER/acked" <(sort -n "$ran"))" ]
}

@test "kill -9 of the standby, its database deleted, restarted: it resynchronises by snapshot while the primary goes on serving" {
	for i in $(seq 1 20); do echo true | qsub -h >/dev/null; done
	kill -9 "$(pid_of qmaster-2)"
	rm -f "$CLUSTER"/qmaster-2/nowq.db*
	# The primary goes on alone, on the execds' leases.
	for i in $(seq 1 20); do echo true | timeout 10 qsub -h >/dev/null; done
	run timeout 10 qconf -sm
	[[ "$output" == *alone* ]]
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 in_sync
	grep -q "installed a snapshot" "$CLUSTER/qmaster-2/qmaster.log"
	id=$(echo true | qsub -terse -h)
	want=$(sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT count(*) FROM jobs")
	[ "$want" -ge 41 ]
	[ "$(sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT count(*) FROM jobs")" = "$want" ]
	[ "$(sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT count(*) FROM jobs WHERE id = $id")" = 1 ]
	# Not only the jobs: every row of every table.
	same_dumps "$CLUSTER/qmaster/nowq.db" "$CLUSTER/qmaster-2/nowq.db"
}

@test "managers get mail when the standby takes over (admin_mail)" {
	# A mailer that keeps each message: the outbox's ordinary path, with a
	# file in place of an MTA.
	mailer="$CLUSTER/mailer"
	printf '#!/bin/sh\ncat >> %s/mail.out\n' "$CLUSTER" > "$mailer"
	chmod 755 "$mailer"
	for c in "$CLUSTER/qmaster.conf" "$CLUSTER/qmaster-2.conf"; do
		printf 'mailer = "%s"\nadmin_mail = {"root"}\n' "$mailer" >> "$c"
	done
	kill -HUP "$(pid_of qmaster)" "$(pid_of qmaster-2)"
	sleep 1
	kill -9 "$(pid_of qmaster)"
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock" wait_until 30 qsub -o /dev/null -e /dev/null -b y true
	wait_until 30 grep -q "Subject: nowq: standby qmaster took over" "$CLUSTER/mail.out"
	grep -q "^To: root" "$CLUSTER/mail.out"
}
