#!/usr/bin/env bats
# hostile.bats: hostile and broken input: every size limit, slow, silent and idle peers, running out of descriptors, and names, scripts and paths full of quotes, shell and header metacharacters.

load helpers

WIRE="$BATS_TEST_DIRNAME/wire.py"

setup_file() {
	cluster_start
	work_start
	# A short client_timeout, so that slow peers are dropped within the test.
	printf 'client_timeout = 2\nmailer = "%s/keep"\nmail_retry = 1\n' "$WORK" >> "$CLUSTER/qmaster.conf"
	printf '#!/bin/sh\ncat > "%s/mail.$$"\n' "$WORK" > "$WORK/keep"
	chmod 755 "$WORK/keep"
	qconf -reload >/dev/null
}

teardown_file() {
	cluster_stop
	work_stop
}

teardown() {
	# Idle openers of a test end with it.
	if [ -n "${HOLD_PID:-}" ]; then
		exec 8>&- || true
		kill "$HOLD_PID" 2>/dev/null || true
		HOLD_PID=
	fi
}

port() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)".*/\1/p' "$CLUSTER/qmaster.conf"; }
tcp() { echo "127.0.0.1:$(port)"; }
sock() { echo "unix:$CLUSTER/qmaster.sock"; }
master_pid() { cat "$CLUSTER/qmaster/qmaster.pid"; }
njobs() { qstat -s prz -u '*' | awk 'NR > 2' | wc -l; }

# refused WANT CMD...: one line "qsub: error: ..." holding WANT, non-zero
# exit, and no job added.
refused() {
	local want=$1 before
	shift
	before=$(njobs)
	run "$@"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "qsub: error: "*"$want"* ]]
	[ "$(njobs)" = "$before" ]
}

# master_refuses WANT JOB-JSON [EXTRA]: a SUBMIT straight to the master,
# past qsub's checks, is refused with a one-line message holding WANT.
master_refuses() {
	local before
	before=$(njobs)
	run "$WIRE" send "$(sock)" < <(printf '{"type":"SUBMIT","job":%s%s}\n' "$2" "${3:+,$3}")
	echo "$output" | cut -c 1-300
	[ "$status" -eq 0 ]
	[[ "$output" == *'"ok": false'* ]]
	[[ "$output" == *"$1"* ]]
	[ "$(njobs)" = "$before" ]
}

@test "each size limit is refused by qsub with one line naming it" {
	printf 'true\n' > "$WORK/x.sh"
	refused "the job's argv has 4097 entries, more than the limit of 4096" qsub -b y true $(seq 4096)
	refused "the job's args has 4097 entries, more than the limit of 4096" qsub "$WORK/x.sh" $(seq 4097) \
		< /dev/null
	# Ten variables of 110 KB: each passes execve, together over 1 MiB.
	big=$(head -c 110000 /dev/zero | tr '\0' v)
	refused "the job's arguments and environment take more than the limit of 1048576 bytes" \
		env V0="$big" V1="$big" V2="$big" V3="$big" V4="$big" V5="$big" V6="$big" V7="$big" \
		V8="$big" V9="$big" qsub -V -b y true
	refused "more than the limit of 4096" qsub -b y -v "$(seq -s, 4097 | sed 's/\([0-9]*\)/V\1=1/g')" true
	refused "more than the limit of 200" qsub -N "$(head -c 201 /dev/zero | tr '\0' n)" -b y true
	refused "a job may wait for at most 10000 jobs (-hold_jid, -W depend), not 10001" \
		qsub -hold_jid "$(seq -s, 10001)" -b y true
	refused "1000000" qsub -t 1-1000001 -b y true
	head -c 1048577 /dev/zero | tr '\0' '#' > "$WORK/big.sh"
	refused "larger than 1 MiB" qsub "$WORK/big.sh"
	# At the limits, a job is taken.
	id=$(qsub -terse -h -N "$(head -c 200 /dev/zero | tr '\0' n)" -t 1-1000000 -b y true $(seq 4095))
	[ -n "$id" ]
	qdel "$id" >/dev/null
}

@test "the master refuses the same, sent past qsub, and keeps serving" {
	printf 'true\n' > "$WORK/x.sh"
	argv=$(python3 -c 'import json; print(json.dumps(["true"] * 4097))')
	master_refuses "the job's argv has 4097 entries, more than the limit of 4096" "{\"name\":\"x\",\"argv\":$argv}"
	name=$(head -c 201 /dev/zero | tr '\0' n)
	master_refuses "the job name is 201 bytes, more than the limit of 200" "{\"name\":\"$name\",\"script\":\"true\"}"
	master_refuses "the job name holds a control character" '{"name":"a\nb","script":"true"}'
	master_refuses "the job name holds a control character" '{"name":"a\u001b[31m","script":"true"}'
	master_refuses "array task 1000001 is above the limit of 1000000" \
		'{"name":"x","script":"true","t_first":1,"t_last":1000001,"t_step":1}'
	deps=$(python3 -c 'import json; print(json.dumps([{"kind": "after", "job": "1"}] * 10001))')
	master_refuses "a job may wait for at most 10000 jobs" '{"name":"x","script":"true"}' "\"deps\":$deps"
	script=$(head -c 1048577 /dev/zero | tr '\0' '#')
	master_refuses "the job's script is 1048577 bytes, more than the limit of 1048576" \
		"{\"name\":\"x\",\"script\":\"$script\"}"
	# A NUL cannot even be decoded: the frame is refused, the master goes on.
	run "$WIRE" send "$(sock)" '{"type":"SUBMIT","job":{"name":"a\u0000b","script":"true"}}'
	[[ "$output" == *'"ok": false'* ]]
	run qstat
	[ "$status" -eq 0 ]
}

@test "a slow or silent peer is dropped after client_timeout while others are served" {
	# A frame a byte every 0.3 s never finishes: dropped 2 s after its start.
	"$WIRE" slow "$(tcp)" 0.3 > "$WORK/slow.out" &
	slow=$!
	# A peer that never says HELLO.
	exec 5<>"/dev/tcp/127.0.0.1/$(port)"
	start=$(date +%s%N)
	run qstat
	[ "$status" -eq 0 ]
	run timeout 10 cat <&5
	silent_ms=$(( ($(date +%s%N) - start) / 1000000 ))
	exec 5>&- 5<&-
	wait "$slow"
	echo "silent peer closed after ${silent_ms} ms, slow one after $(cat "$WORK/slow.out") s"
	[ "$silent_ms" -lt 6000 ]
	awk '{ exit !($1 >= 1.5 && $1 < 6) }' "$WORK/slow.out"
	# One that sends requests and never reads the replies is closed too
	# (on a loaded machine sometimes as "a frame was not complete").
	"$WIRE" noread "$(sock)" 6
	grep "closing after" "$CLUSTER/qmaster/qmaster.log"
	grep "unix:pid.*closing after 2 s: \(left its replies unread\|a frame was not complete in time\)" \
		"$CLUSTER/qmaster/qmaster.log"
	grep -q "a frame was not complete in time" "$CLUSTER/qmaster/qmaster.log"
	grep -q "closing after 2 s: said nothing in time" "$CLUSTER/qmaster/qmaster.log"
}

# hold_idle ADDR N [hello]: opens N idle connections held until teardown.
hold_idle() {
	rm -f "$WORK/hold" "$WORK/idle.out"
	mkfifo "$WORK/hold"
	"$WIRE" idle "$@" < "$WORK/hold" > "$WORK/idle.out" &
	HOLD_PID=$!
	exec 8>"$WORK/hold"
	wait_until 120 grep -q "^open" "$WORK/idle.out"
	cat "$WORK/idle.out"
}

@test "thousands of idle connections do not slow a qsub down" {
	[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -gt 3500 ] ||
		skip "the descriptor limit ($(ulimit -Hn)) is below 3,000 connections"
	hold_idle "$(sock)" 3000 hello
	fds=$(ls "/proc/$(master_pid)/fd" | wc -l)
	start=$(date +%s%N)
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	qstat >/dev/null
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "qsub and qstat took ${ms} ms with the master holding $fds descriptors"
	[ "$fds" -gt 3000 ]
	[ "$ms" -lt 5000 ]
	wait_until 30 job_finished "$id"
}

@test "out of descriptors, the master drops strangers, does not spin, and keeps serving" {
	pid=$(master_pid)
	# The connections of the test before are gone first.
	wait_until 30 bash -c "[ \$(ls /proc/$pid/fd | wc -l) -lt 100 ]"
	fds=$(ls "/proc/$pid/fd" | wc -l)
	# The soft limit only: the hard one could not be raised again.
	prlimit --pid "$pid" --nofile=$((fds + 60)): || skip "cannot lower the master's descriptor limit"
	# More strangers than it has descriptors left: accept fails with EMFILE.
	hold_idle "$(tcp)" 200
	cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 2
	cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	echo "CPU ticks in 2 s: $((cpu1 - cpu0))"
	[ $((cpu1 - cpu0)) -lt 100 ]
	start=$(date +%s%N)
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	echo "qsub took ${ms} ms"
	[ -n "$id" ]
	[ "$ms" -lt 5000 ]
	wait_until 30 job_finished "$id"
	grep -q "warning: accept failed .*(dropping connections that did not say HELLO)" "$CLUSTER/qmaster/qmaster.log"
	prlimit --pid "$pid" --nofile="$(prlimit --pid "$pid" --nofile -o HARD --noheadings)":
}

# Every line of every daemon log is one event: it starts with its time.
logs_whole() {
	! grep -hv '^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9:.]* [a-z]*\[[0-9]*\]: ' \
		"$CLUSTER"/qmaster/qmaster.log "$CLUSTER"/execd-*/execd.log 2>/dev/null | grep . || false
}

@test "names and paths with quotes and shell metacharacters are taken literally everywhere" {
	cd "$WORK"
	name="q'\"\$(touch pwned1);\`touch pwned2\`%s%n<>|&x"
	printf 'echo hi\n' > "$WORK/x.sh"
	id=$(qsub -terse -cwd -N "$name" -m e -M "$(id -un)@localhost" x.sh)
	# A path with the same characters, and one with a newline that cannot be
	# opened (the job then waits in Eqw with the path in its reason).
	out="$WORK/out \$(touch pwned3) 'x\";y.txt"
	id2=$(qsub -terse -cwd -o "$out" -j y x.sh)
	id3=$(qsub -terse -cwd -o "$WORK/no such"$'\n'"dir/o" -j y x.sh)
	wait_until 30 job_finished "$id"
	wait_until 30 job_finished "$id2"
	wait_until 30 bash -c "qstat -j $id3 | grep -q 'error reason'"
	[ "$(cat "$WORK/$name.o$id")" = hi ]
	[ "$(cat "$out")" = hi ]
	[ ! -e "$WORK/pwned1" ] && [ ! -e "$WORK/pwned2" ] && [ ! -e "$WORK/pwned3" ]
	# qstat -j: the name as given, every field on its line (of a job that
	# has not ended: Grid Engine's qstat -j knows no other).
	held=$(qsub -terse -h -N "$name" -b y true)
	qstat -j "$held" | grep -Fx "job_name:                   $name"
	qdel "$held" >/dev/null
	run qstat -j "$id3"
	echo "$output"
	reason=$(echo "$output" | grep "^error reason")
	[[ "$reason" == *'no such\ndir/o'* ]]
	echo "$output" | grep -Fq 'stdout_path_list:           NONE:NONE:'"$WORK"'/no such\ndir/o'
	logs_whole
	# The mail: the name in the subject, and only the headers mail.c writes.
	wait_until 20 bash -c "grep -l 'Subject: Job $id' $WORK/mail.* >/dev/null 2>&1"
	msg=$(grep -l "Subject: Job $id" "$WORK"/mail.*)
	cat "$msg"
	headers=$(sed '/^$/q' "$msg")
	grep -Fq "Subject: Job $id ($name) Complete" <<< "$headers"
	[ "$(grep -c '^To: ' <<< "$headers")" = 1 ]
	! grep -iq '^\(Bcc\|Cc\):' <<< "$headers" || false
	! grep -v '^[A-Za-z-]*: \|^$' <<< "$headers" || false
	qdel "$id3" >/dev/null
}

@test "control characters in names are refused in one line; a script file may be called anything" {
	cd "$WORK"
	refused 'the job name holds a control character' qsub -N $'a\nb' -b y true
	[[ "$output" == *'a\nb'* ]]
	refused 'the job name holds a control character' qsub -N $'red\e[31m' -b y true
	# The default name comes from the file, with what a name may not hold
	# replaced: the job runs and its output file is named after it.
	printf 'echo from file\n' > "$WORK/my:job"$'\n'"x.sh"
	id=$(qsub -terse -cwd "my:job"$'\n'"x.sh")
	wait_until 30 job_finished "$id"
	[ "$(cat "$WORK/my_job_x.sh.o$id")" = "from file" ]
	# A NUL in a script cannot travel; qsub says so in one line.
	printf 'echo a\0b\n' > "$WORK/nul.sh"
	refused 'NUL' qsub "$WORK/nul.sh"
	logs_whole
}

@test "names in other scripts keep qstat's columns in place" {
	ascii=$(qsub -terse -h -N plain -b y true)
	wide=$(qsub -terse -h -N "ééééééééééééé" -b y true)
	cjk=$(qsub -terse -h -N "日本語のジョブ名前です" -b y true)
	qstat > "$WORK/qstat.out"
	cat "$WORK/qstat.out"
	len() { grep "^ *$1 " "$WORK/qstat.out" | python3 -c 'import sys; print(len(sys.stdin.read().rstrip("\n")))'; }
	[ "$(len "$ascii")" = "$(len "$wide")" ]
	[ "$(len "$ascii")" = "$(len "$cjk")" ]
	# The state column is the same field for all three.
	for id in "$ascii" "$wide" "$cjk"; do
		[ "$(grep "^ *$id " "$WORK/qstat.out" | awk '{ print $5 }')" = hqw ]
	done
	qdel "$ascii" "$wide" "$cjk" >/dev/null
}

@test "a request followed at once by a half-close still gets its reply, at the loop and the query endpoint" {
	local hello='{"type":"HELLO","version":1,"role":"client","auth":{"method":"none"}}' i out before
	local sub='{"type":"SUBMIT","job":{"name":"halfclose","argv":["/bin/true"],"cwd":"/tmp","out":"/dev/null","err":"/dev/null","hold":1}}'
	before=$(njobs)
	# The shutdown races the commit: twenty tries, each must be answered.
	for i in $(seq 20); do
		out=$(timeout 20 python3 "$NOWQ_E2E/rawreq.py" --half-close "$(sock)" "$hello" "$sub" | tail -n 1)
		[[ "$out" == *'"ok": true, "id": '* ]] || { echo "try $i: $out"; false; }
	done
	[ "$(njobs)" -eq $((before + 20)) ]
	# A listing answered by the query thread.
	for i in $(seq 5); do
		out=$(timeout 20 python3 "$NOWQ_E2E/rawreq.py" --half-close "unix:$CLUSTER/qmaster.sock.query" \
			"$hello" '{"type":"STATUS","brief":true,"users":["*"]}' | tail -n 1)
		[[ "$out" == *'"ok": true'* ]] || { echo "query try $i: $out"; false; }
	done
	qdel -u root >/dev/null
}

@test "a single master refuses a PROBE instead of restarting itself" {
	local hello='{"type":"HELLO","version":1,"role":"peer","auth":{"method":"none"},"nonce":"00000000000000000000000000000000"}'
	run timeout 20 python3 "$NOWQ_E2E/rawreq.py" "$(sock)" "$hello" '{"type":"PROBE","epoch":99,"last":0}'
	echo "$output"
	[[ "${lines[1]}" == *'"ok": false, "error": "invalid"'*"PROBE is for the masters of a pair"* ]]
	! grep -q "stepping down" "$CLUSTER/qmaster/qmaster.log" || false
	run qstat
	[ "$status" -eq 0 ]
}
