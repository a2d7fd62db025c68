#!/usr/bin/env bats
# mail.bats: mail about jobs through a real MTA into the local mailbox, and the outbox's retries, timeouts and bounded mailers with mailers the test controls.

load helpers

setup_file() { cluster_start; work_start; }
teardown_file() { cluster_stop; work_stop; }

q() { qsub -terse -o /dev/null -e /dev/null "$@"; }

# The mailbox that holds a message with this subject line (local delivery
# may alias root to another mailbox, so all are searched).
mailbox_with() { grep -lsF "Subject: $1" /var/mail/* /var/spool/mail/* 2>/dev/null | head -1; }
# The message with this subject, from its Subject line to the next message;
# it fails until the message is whole (its last line is Exit Status).
message() {
	local box
	box=$(mailbox_with "$1") || return 1
	[ -n "$box" ] || return 1
	awk -v s="Subject: $1" '$0 == s { f = 1 } f && /^From / { exit } f' "$box" | tee /dev/stderr |
		grep -q "Exit Status"
}

# Sets qmaster.conf's mail keys and re-reads it.
mail_conf() {
	sed -i '/^mail/d' "$CLUSTER/qmaster.conf"
	printf '%s\n' "$@" >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

@test "a real MTA delivers Complete and Aborted mail with the job's facts" {
	[ -x /usr/sbin/sendmail ] || skip "no MTA installed (the test command installs exim4-daemon-light)"
	tag="m$$x$RANDOM"
	a=$(q -m e -N "$tag" -b y sh -c 'exit 3')
	b=$(q -m a -N "${tag}d" -W depend=afterok:"$a" -b y true)
	wait_until 30 message "Job $a ($tag) Complete"
	msg=$(message "Job $a ($tag) Complete" 2>&1)
	[[ "$msg" == *" Exit Status      = 3"* ]]
	[[ "$msg" == *" User             = $(id -un)"* ]]
	wait_until 30 message "Job $b (${tag}d) Aborted"
	msg=$(message "Job $b (${tag}d) Aborted" 2>&1)
	[[ "$msg" == *"Failure reason   = dependency never satisfied: $a failed"* ]]
}

@test "-m ea: a non-zero exit is one Complete mail with the exit status; Aborted says why" {
	[ -x /usr/sbin/sendmail ] || skip "no MTA installed (the test command installs exim4-daemon-light)"
	tag="ea$$x$RANDOM"
	a=$(q -m ea -N "$tag" -b y sh -c 'exit 3')
	wait_until 30 message "Job $a ($tag) Complete"
	msg=$(message "Job $a ($tag) Complete" 2>&1)
	[[ "$msg" == *" Exit Status      = 3"* ]]
	# Grid Engine sends no Aborted mail for a job that ended itself.
	b=$(q -m a -N "${tag}b" -b y sh -c 'exit 4')
	d=$(q -m a -h -N "${tag}d" -b y true)
	qdel "$d" >/dev/null
	wait_until 30 message "Job $d (${tag}d) Aborted"
	msg=$(message "Job $d (${tag}d) Aborted" 2>&1)
	[[ "$msg" == *"Failure reason   = deleted by $(id -un)"* ]]
	wait_until 30 job_finished "$b"
	sleep 2
	[ -z "$(mailbox_with "Job $a ($tag) Aborted")" ]
	[ -z "$(mailbox_with "Job $b (${tag}b) Aborted")" ]
}

@test "a failing mailer leaves the mail in the outbox, shown by qstat -j --json, and it is retried until it goes" {
	cat > "$WORK/flaky" <<EOF
#!/bin/sh
cat > "$WORK/flaky.msg.\$\$"
[ -e "$WORK/flaky.ok" ] || exit 75
exit 0
EOF
	chmod 755 "$WORK/flaky"
	mail_conf "mailer = \"$WORK/flaky\"" "mail_retry = 1"
	id=$(q -m e -b y true)
	# The job has ended, so only nowq's own --json still shows it.
	wait_until 20 bash -c "qstat -j $id --json | grep -q 'mailer exited 75'"
	[ "$(job_json "$id" mail_pending | python3 -c 'import ast, sys; m = ast.literal_eval(sys.stdin.read()); print(m["count"], m["error"])')" = "1 the mailer exited 75" ]
	touch "$WORK/flaky.ok"
	wait_until 30 bash -c "! qstat -j $id --json | grep -q mail_pending"
	grep -l "Subject: Job $id (true) Complete" "$WORK"/flaky.msg.* >/dev/null
	grep -q "mail: message .* not sent: the mailer exited 75" "$CLUSTER/qmaster/qmaster.log"
}

@test "a hanging mailer is killed after mail_timeout, and no more than mail_max_running run at once" {
	cat > "$WORK/slow" <<EOF
#!/bin/sh
mkdir "$WORK/run.\$\$"
ls -d "$WORK"/run.* | wc -l >> "$WORK/conc"
cat > /dev/null
[ -e "$WORK/hang" ] && sleep 100
sleep 0.3
rmdir "$WORK/run.\$\$"
EOF
	chmod 755 "$WORK/slow"
	touch "$WORK/hang"
	mail_conf "mailer = \"$WORK/slow\"" "mail_timeout = 2" "mail_retry = 1" "mail_max_running = 2"
	id=$(q -m e -b y true)
	wait_until 20 grep -q "the mailer for message .* hangs; killed after 2 s" "$CLUSTER/qmaster/qmaster.log"
	rm -f "$WORK/hang"
	rm -rf "$WORK"/run.*
	: > "$WORK/conc"
	for i in $(seq 1 12); do q -m e -b y true >/dev/null; done
	wait_until 60 bash -c "[ \$(wc -l < $WORK/conc) -ge 13 ]"
	[ "$(sort -n "$WORK/conc" | tail -1)" -le 2 ]
	wait_until 20 bash -c "! qstat -j $id --json | grep -q mail_pending"
}

@test "qmod -s mails a job that asked with -m s" {
	printf '#!/bin/sh\ncat > "%s/keep.msg.$$"\n' "$WORK" > "$WORK/keep"
	chmod 755 "$WORK/keep"
	mail_conf "mailer = \"$WORK/keep\"" "mail_retry = 1"
	id=$(q -m s -b y sleep 30)
	wait_until 20 state_is "$id" r
	qmod -s "$id" >/dev/null
	wait_until 20 bash -c "grep -l 'Subject: Job $id (sleep) Suspended' $WORK/keep.msg.* >/dev/null 2>&1"
	qdel "$id" >/dev/null
}

@test "bad -m and -M are refused" {
	run qsub -m x -b y true
	[ "$status" -ne 0 ]
	[ "$output" = 'qsub: error: -m wants letters from b, e, a, s, or n alone, not "x"' ]
	run qsub -M "-oQ" -b y true
	[ "$status" -ne 0 ]
	[ "$output" = 'qsub: error: -M: "-oQ" is not a mail address' ]
	run qsub -M "a,,b" -b y true
	[ "$status" -ne 0 ]
}
