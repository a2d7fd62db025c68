#!/usr/bin/env bats
# standby.bats: a primary and a hot standby on loopback (nowq start --masters 2): replication compared by qmaster --dump, failover after kill -9 during a submission storm, resynchronisation by snapshot, an upload cut by the kill resumed at the new primary, and the managers' mail about a takeover.

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
	# The storm's clients, if a failure left them looping.
	touch "$CLUSTER/stop"
	[ -z "${pids:-}" ] || kill "${pids[@]}" 2>/dev/null || true
	cluster_stop
}

in_sync() { qconf -smasters | grep -q "in sync"; }
role_of() { qconf -smasters --json | python3 -c "import json,sys; print([m['role'] for m in json.load(sys.stdin)['masters'] if m['name'].endswith(':$1')][0])"; }
primary_is() { qconf -smasters --json | python3 -c "import json,sys; m=[m for m in json.load(sys.stdin)['masters'] if m.get('self')][0]; sys.exit(0 if m['role']=='primary' and m['name'].endswith(':$1') else 1)"; }
port_of() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)"/\1/p' "$1"; }
# new_input NAME BYTES: NAME, BYTES random bytes, in a new folder of the
# cluster's, now the current one ($work); its SHA-256 in $sha.
new_input() {
	work=$(mktemp -d "$CLUSTER/work.XXXXXX")
	cd "$work"
	head -c "$2" /dev/urandom > "$1"
	sha=$(sha256sum "$1" | cut -d' ' -f1)
}

@test "the standby follows every commit: qconf -smasters shows both in sync and a job submitted on the primary is in the standby's database" {
	run qconf -smasters
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

@test "kill -9 of the primary during a storm of submissions from 5 clients: every acknowledged job exists exactly once on the new primary, and none ran twice" {
	ran="$CLUSTER/ran"
	: > "$ran"
	chmod 666 "$ran"
	# Five clients of up to 1,000 qsub processes each, until told to
	# stop.  A client records an id only once qsub printed it: the
	# acknowledgement it saw.  The jobs are not rerunnable and write their
	# id when they run; each takes a little time, so some run across the
	# kill.  The marks below are counts, not rates: a sanitizer build on
	# two busy cores acknowledges well under 10 submissions a second.
	pids=()
	for c in 1 2 3 4 5; do
		(
			for i in $(seq 1 1000); do
				[ ! -e "$CLUSTER/stop" ] || break
				id=$(timeout 30 qsub -terse -r n -o /dev/null -e /dev/null -b y \
					sh -c "echo \$JOB_ID >> $ran; sleep 1") || continue
				echo "$id" >> "$CLUSTER/acked.$c"
			done
		) 3>&- &
		pids+=($!)
	done
	acked_at_least() { [ "$(cat "$CLUSTER"/acked.* 2>/dev/null | wc -l)" -ge "$1" ]; }
	running_some() { [ "$(qstat -s r | awk 'NR > 2' | wc -l)" -ge 3 ]; }
	# The kill comes in the middle of the storm, with jobs running.
	wait_until 120 acked_at_least 150
	wait_until 30 running_some
	kill -9 "$(pid_of qmaster)"
	t0=$(date +%s%N)
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock" wait_until 10 qsub -o /dev/null -e /dev/null -b y true
	t1=$(date +%s%N)
	# The time is printed, not judged: bench/w6 measures it against the
	# 3 s bar on a quiet machine.
	echo "# takeover in $(( (t1 - t0) / 1000000 )) ms" >&3
	# The storm goes on against the new primary, then stops.
	before=$(cat "$CLUSTER"/acked.* | wc -l)
	wait_until 120 acked_at_least $((before + 50))
	touch "$CLUSTER/stop"
	for p in "${pids[@]}"; do wait "$p" || true; done
	# comm needs the order of sort, not of sort -n.
	cat "$CLUSTER"/acked.* | sort > "$CLUSTER/acked"
	n=$(wc -l < "$CLUSTER/acked")
	echo "# acknowledged: $n" >&3
	[ "$n" -ge 200 ]
	# Every acknowledged id is a job on the new primary, once; no id twice.
	[ -z "$(uniq -d "$CLUSTER/acked")" ]
	sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT id FROM jobs" | sort > "$CLUSTER/have"
	[ -z "$(comm -23 "$CLUSTER/acked" "$CLUSTER/have")" ]
	# Running them all would take minutes: those still pending go, and
	# the ones that started (across the kill among them) end.
	qdel $(qstat -s p | awk 'NR > 2 { print $1 }') >/dev/null 2>&1 || true
	all_done() { [ -z "$(qstat -s pr | awk 'NR > 2')" ]; }
	wait_until 120 all_done
	sort "$ran" > "$CLUSTER/ran.sorted"
	echo "# ran: $(wc -l < "$CLUSTER/ran.sorted")" >&3
	[ "$(wc -l < "$CLUSTER/ran.sorted")" -ge 20 ]
	# No job ran twice (they are not rerunnable), and each one that ran
	# was a job the new primary knows.
	[ -z "$(uniq -d "$CLUSTER/ran.sorted")" ]
	[ -z "$(comm -23 "$CLUSTER/ran.sorted" "$CLUSTER/have")" ]
}

@test "kill -9 of the standby, its database deleted, restarted: it resynchronises by snapshot while the primary goes on serving" {
	for i in $(seq 1 20); do echo true | qsub -h >/dev/null; done
	kill -9 "$(pid_of qmaster-2)"
	rm -f "$CLUSTER"/qmaster-2/nowq.db*
	# The primary goes on alone, on the execds' leases.
	for i in $(seq 1 20); do echo true | timeout 10 qsub -h >/dev/null; done
	run timeout 10 qconf -smasters
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
	# Promoted, it lists what the snapshot brought: its query thread
	# reads the installed file, not the one it opened at start.
	kill -9 "$(pid_of qmaster)"
	export NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock"
	wait_until 10 qsub -h -o /dev/null -e /dev/null -b y true
	run qstat -u '*' -s p
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk 'NR > 2' | wc -l)" -ge $((want + 1)) ]
	echo "$output" | awk -v id="$id" '$1 == id { f = 1 } END { exit !f }'
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

@test "a finished array job purged on the primary leaves the standby by its changeset, with no snapshot" {
	# The purge deletes the job, and the foreign key's cascade its tasks;
	# the changeset holds both, so a standby that cascaded too failed it
	# and asked for a whole copy at every purge.
	for f in qmaster.conf qmaster-2.conf; do echo 'finished_jobs_keep = 1' >> "$CLUSTER/$f"; done
	kill -HUP "$(pid_of qmaster)" "$(pid_of qmaster-2)"
	snaps() { grep -c "sent a snapshot" "$CLUSTER/qmaster/qmaster.log" || true; }
	n0=$(snaps)
	# The tasks wait for a file, so their rows are seen on the standby
	# before the purge removes them, however slow the machine.
	id=$(qsub -t 1-3 -terse -o /dev/null -e /dev/null -b y sh -c "while [ ! -e '$CLUSTER/go-purge' ]; do sleep 0.1; done" | cut -d. -f1)
	rows() { sqlite3 "$CLUSTER/qmaster-2/nowq.db" "SELECT (SELECT count(*) FROM jobs WHERE id = $id) + (SELECT count(*) FROM tasks WHERE job_id = $id)"; }
	wait_until 20 bash -c "[ \"\$(sqlite3 '$CLUSTER/qmaster-2/nowq.db' 'SELECT count(*) FROM tasks WHERE job_id = $id')\" -gt 0 ]"
	touch "$CLUSTER/go-purge"
	purged() { [ "$(rows)" = 0 ]; }
	wait_until 30 purged
	sleep 1
	[ "$(snaps)" = "$n0" ]
	! grep -q "asking the primary for a snapshot" "$CLUSTER/qmaster-2/qmaster.log" || false
	in_sync
}

@test "staged inputs and outputs are on the standby before they are acknowledged: after kill -9 of the primary a held job fetches its input there, and an output is fetched" {
	work=$(mktemp -d "$CLUSTER/work.XXXXXX")
	cd "$work"
	# Some 4 MB: several chunks of 1 MiB.
	head -c 3000000 /dev/urandom | base64 > in.txt
	sha=$(sha256sum in.txt | cut -d' ' -f1)
	printf 'sha256sum in.txt > out.txt\n' > job.sh
	# One job runs now: its output is stored on the primary (and the standby).
	run qsub -sync y --stage-in in.txt --stage-out out.txt job.sh
	[ "$status" -eq 0 ]
	first=$(echo "${lines[0]}" | awk '{print $3}')
	[ "$(cat out.txt)" = "$sha  in.txt" ]
	outsha=$(sha256sum out.txt | cut -d' ' -f1)
	# The other waits for the failover.
	held=$(qsub -terse -h --stage-in in.txt --stage-out out.txt job.sh)
	# Each acknowledgement came once the standby had stored the file.
	cmp in.txt "$CLUSTER/qmaster-2/stage/$sha"
	cmp out.txt "$CLUSTER/qmaster-2/stage/$outsha"
	[ "$(stat -c %a "$CLUSTER/qmaster-2/stage/$sha")" = 600 ]
	# The exec hosts forget their copies: the input must come from the new primary.
	rm -f "$CLUSTER"/execd-*/stage/"$sha"
	kill -9 "$(pid_of qmaster)"
	export NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock"
	wait_until 30 qrls "$held"
	wait_until 120 job_finished "$held"
	[ "$(job_field "$held" exit_status)" = 0 ]
	grep -q "^$sha .* $held\.0$" "$CLUSTER"/execd-*/stage/fetched.log
	mkdir -p "$work/after" "$work/first"
	nowq fetch -d "$work/after" "$held"
	[ "$(cat "$work/after/out.txt")" = "$sha  in.txt" ]
	# An output stored before the kill comes from the new primary.
	nowq fetch -d "$work/first" "$first"
	cmp out.txt "$work/first/out.txt"
}

@test "an upload's chunks reach the standby as they come; the acknowledgement still waits for its whole file there" {
	new_input stream.bin 100000000
	echo true > job.sh
	qsub -terse -h --stage-in stream.bin job.sh > qsub.out &
	qsub_pid=$!
	# qsub (the process sending stream.bin) stopped once 20 MB are on
	# the primary: the standby gets them while the file is incomplete.
	uploader=""
	wait_until 120 uploader_stop "$sha" "$work/stream.bin" 20000001
	wait_until 60 stage_part_over qmaster-2 "$sha" 20000000 || { kill -CONT "$uploader"; false; }
	[ ! -e "$CLUSTER/qmaster-2/stage/$sha" ]
	[ ! -s qsub.out ]
	kill -CONT "$uploader"
	wait "$qsub_pid"
	[[ "$(cat qsub.out)" =~ ^[0-9]+$ ]]
	cmp stream.bin "$CLUSTER/qmaster-2/stage/$sha"
	[ -z "$(ls "$CLUSTER"/qmaster-2/stage/ | grep '^tmp\.')" ]
}

@test "kill -9 of the primary mid-upload: qsub goes on at the new primary from the bytes the standby had, and the job gets the right file" {
	new_input fo.bin 100000000
	printf 'sha256sum fo.bin | cut -c1-64 > got.txt\n' > job.sh
	qsub -terse --stage-in fo.bin --stage-out got.txt job.sh > qsub.out 2> qsub.err &
	qsub_pid=$!
	# qsub stopped once 20 MB are on the primary, and the primary killed
	# once the standby has them too: the upload is cut midway however
	# fast the machine.
	uploader=""
	wait_until 120 uploader_stop "$sha" "$work/fo.bin" 20000001
	wait_until 60 stage_part_over qmaster-2 "$sha" 20000000 || { kill -CONT "$uploader"; false; }
	kill -9 "$(pid_of qmaster)"
	NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock" wait_until 30 primary_is "$(port_of "$CLUSTER/qmaster-2.conf")" ||
	    { kill -CONT "$uploader"; false; }
	# What the standby received, all a client could go on from.
	held=$(stat -c %s "$CLUSTER"/qmaster-2/stage/tmp."$sha".*)
	[ "$held" -ge 20000000 ] || { kill -CONT "$uploader"; false; }
	kill -CONT "$uploader"
	wait "$qsub_pid" || { cat qsub.err; false; }
	id=$(cat qsub.out)
	[[ "$id" =~ ^[0-9]+$ ]]
	# The new primary went on from those bytes, and its client sent it
	# only the rest: the upload resumed, it did not start again.
	log="$CLUSTER/qmaster-2/qmaster.log"
	resumed=$(sed -n "s/.*upload of staged file $sha for uid [0-9]* resumed at offset \([0-9]*\) (the bytes the primary shipped.*/\1/p" "$log" | tail -1)
	echo "held $held, resumed at ${resumed:-none}"
	[ "${resumed:-0}" -eq "$held" ]
	received=$(sed -n "s/.*upload of staged file $sha for uid [0-9]* stored: \([0-9]*\) of its 100000000 bytes received here after it resumed at offset $held$/\1/p" "$log" | tail -1)
	echo "received ${received:-none} after the resume"
	[ "${received:-0}" -eq $((100000000 - held)) ]
	cmp fo.bin "$CLUSTER/qmaster-2/stage/$sha"
	[ -z "$(ls "$CLUSTER"/qmaster-2/stage/ | grep '^tmp\.')" ]
	# The job read the right bytes on its exec host.
	export NOWQ_MASTER="unix:$CLUSTER/qmaster-2.sock"
	wait_until 120 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	mkdir "$work/out"
	nowq fetch -d "$work/out" "$id"
	[ "$(cat "$work/out/got.txt")" = "$sha" ]
}

@test "a standby that comes back gets the staged files stored while it was away before it counts as in sync" {
	kill -9 "$(pid_of qmaster-2)"
	new_input away.bin 2500000
	echo 'cat away.bin > /dev/null' > job.sh
	id=$(timeout 30 qsub -terse -h --stage-in away.bin job.sh)
	[ -n "$id" ]
	[ ! -e "$CLUSTER/qmaster-2/stage/$sha" ]
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 in_sync
	cmp away.bin "$CLUSTER/qmaster-2/stage/$sha"
	grep -q "sending it 1 staged files it lacks" "$CLUSTER/qmaster/qmaster.log"
}

@test "a frozen standby holds a staged file's acknowledgement no longer than its stall limit; the file reaches it once it thaws" {
	new_input frozen.bin 1500000
	echo 'true' > job.sh
	kill -STOP "$(pid_of qmaster-2)"
	start=$(date +%s)
	id=$(timeout 100 qsub -terse -h --stage-in frozen.bin job.sh) || { kill -CONT "$(pid_of qmaster-2)"; false; }
	kill -CONT "$(pid_of qmaster-2)"
	[ -n "$id" ]
	# It waited for the standby (some 30 s), then went without it.
	[ $(( $(date +%s) - start )) -ge 25 ]
	grep -q "the standby took no staged file for" "$CLUSTER/qmaster/qmaster.log"
	wait_until 60 in_sync
	wait_until 30 cmp -s frozen.bin "$CLUSTER/qmaster-2/stage/$sha"
}
