#!/usr/bin/env bats
# diskfull.bats: a cluster on a small tmpfs filled to the last block: the master refuses what needs space and serves the rest, the execd takes no work, a job that ends keeps its end, and both recover when space returns.

load helpers

setup_file() {
	[ "$(id -u)" = 0 ] || skip "needs root to mount a tmpfs"
	work_start
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	export CLUSTER
	mount -t tmpfs -o size=48m,mode=755 nowq-diskfull "$CLUSTER" || skip "cannot mount a tmpfs"
	nowq start --dir "$CLUSTER" --slots 2 >/dev/null
	eval "$(nowq env --dir "$CLUSTER")"
	export NOWQ_MASTER
	# A mailer that keeps each message, outside the full file system.
	printf '#!/bin/sh\ncat >> %s/mail.out\n' "$WORK" > "$WORK/mailer"
	chmod 755 "$WORK/mailer"
	printf 'mailer = "%s/mailer"\nadmin_mail = {"root"}\n' "$WORK" >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

teardown_file() {
	if [ -n "${CLUSTER:-}" ] && mountpoint -q "$CLUSTER"; then
		nowq stop --dir "$CLUSTER" >/dev/null 2>&1 || true
		umount -l "$CLUSTER"
		rmdir "$CLUSTER"
	fi
	work_stop
}

teardown() {
	[ -n "${BATS_TEST_COMPLETED:-}" ] || cluster_postmortem
	rm -f "$CLUSTER/filler"
}

# Fills the file system to its last block (dd stops at ENOSPC).
fill() { dd if=/dev/zero of="$CLUSTER/filler" bs=64k 2>/dev/null || true; }

qhost_reason() { qhost | grep -q "spool $CLUSTER/execd-1 full"; }

@test "a full spool: submissions refused with the reason, reads, deletions and execds served, mail sent, and all taken again once space returns" {
	held=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	fill
	run qsub -terse -o /dev/null -e /dev/null -b y true
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no space left on the master's spool"* ]]
	# Nothing of it was kept, and the master still answers.
	run qstat -s prz
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | awk 'NR > 2' | wc -l)" -eq 1 ]
	# What frees space still commits, on the reserve the master gave up.
	qdel "$held"
	wait_until 10 job_finished "$held"
	run qsub -terse -o /dev/null -e /dev/null -b y true
	[[ "$output" == *"no space left on the master's spool"* ]]
	wait_until 10 grep -q "Subject: nowq: the master's spool is full" "$WORK/mail.out"
	# The execd, on the same disk, takes no work and says why (filled
	# again: the reserve the master gave up is free space).
	fill
	wait_until 15 qhost_reason
	rm -f "$CLUSTER/filler"
	wait_until 15 qsub -terse -o /dev/null -e /dev/null -b y true
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 20 job_finished "$id"
	[ "$(qstat -s z | awk -v id="$id" '$1 == id { print $5 }')" = "z" ]
	[ "$(qacct -j "$id" | awk '$1 == "failed" { print $2 }')" = 0 ]
	wait_until 10 grep -q "Subject: nowq: the master's spool has room again" "$WORK/mail.out"
	run qhost
	[[ "$output" != *"full"* ]]
}

@test "a job that ends while the execd's spool is full is not failed: its end is written when space returns" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sh -c "while [ ! -e $WORK/go ]; do sleep 0.1; done")
	wait_until 20 state_is "$id" r
	fill
	touch "$WORK/go"
	# Past execd's check for shepherds that died (every 10 s), the
	# job is still running for the master, not failed.
	sleep 11
	state_is "$id" r
	# Meanwhile the host asks for no work, and says why.
	qhost_reason
	rm -f "$CLUSTER/filler"
	wait_until 20 job_finished "$id"
	[ "$(qacct -j "$id" | awk '$1 == "failed" { print $2 }')" = 0 ]
	[ "$(qacct -j "$id" | awk '$1 == "exit_status" { print $2 }')" = 0 ]
}

@test "a master started on a full spool gives up its reserve and serves; with no room at all, nowq start says why it failed" {
	nowq stop --dir "$CLUSTER" >/dev/null
	fill
	run nowq start --dir "$CLUSTER"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"started qmaster (pid "[1-9]* ]]
	run qsub -o /dev/null -e /dev/null -b y true
	[[ "$output" == *"no space left on the master's spool"* ]]
	qstat -s prz >/dev/null
	nowq stop --dir "$CLUSTER" >/dev/null
	# The reserve is gone and its room filled too: nothing to give up.
	fill
	run nowq start --dir "$CLUSTER"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"qmaster: cannot open the database"*"(no space left on the spool)"* ]]
	[[ "$output" == *"qmaster did not start"* ]]
	[[ "$output" != *"pid 0"* ]]
	rm -f "$CLUSTER/filler"
	nowq start --dir "$CLUSTER" >/dev/null
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 20 job_finished "$id"
}
