#!/usr/bin/env bats
# qrsh.bats: qrsh end to end on three execds: streams kept apart and in order, exit codes, every forwarded signal, flow control, -now, qdel and death of either side, -pty with a real pseudo-terminal, and -n N with ranks, replicated stdin and -prefix.

load helpers

setup_file() {
	EXECDS=3 SLOTS=1 cluster_start
	# A lost host is declared soon (its LOADs come every second).
	echo "host_timeout = 4" >> "$CLUSTER/qmaster.conf"
	sed -i 's/^load_interval = .*/load_interval = 1/' "$CLUSTER"/execd-*.ini
	nowq stop --dir "$CLUSTER" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
	work_start
	wait_until 20 hosts_up
}

hosts_up() { [ "$(qhost | grep -c -w idle)" -ge 3 ]; }

teardown_file() {
	# A stopped execd would keep nowq stop waiting.
	for p in "$CLUSTER"/execd-*/execd.pid; do kill -CONT "$(cat "$p")" 2>/dev/null || true; done
	cluster_stop
	work_stop
}

# The id of the latest job (qrsh prints none: its output is the command's).
last_job() { qstat -s prz | awk 'NR > 2 { id = $1 } END { print id }'; }
# Nothing left of earlier tests: every slot is free.
all_done() { wait_until 30 bash -c '[ -z "$(qstat)" ]'; }
# Fills the three slots with sleeps; their ids in $ids.
fill_slots() {
	all_done
	ids=$(for i in 1 2 3; do qsub -terse -b y sleep 60; done)
	wait_until 20 bash -c '[ "$(qstat -s r | grep -c " r ")" -eq 3 ]'
}
# waiting_qrsh NAME: with the slots full, a qrsh -N NAME of `echo ran` in the
# background (output in $WORK/NAME.out and .err), waiting for a slot: its
# pid in $qpid, its job in $id, the port and secret it listens with in
# $port and $secret.
waiting_qrsh() {
	qrsh -N "$1" 'echo ran' > "$WORK/$1.out" 2> "$WORK/$1.err" &
	qpid=$!
	wait_until 20 bash -c "qstat -s p | grep -q $1"
	id=$(qstat -s p | awk -v n="$1" '$3 == n { print $1 }')
	read -r _ port secret <<< "$(job_qrsh "$id")"
}
# Waits for a file's first line: the remote side says it is ready.
ready() { wait_until 20 test -s "$1"; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# /proc state letter of a (local) process: the exec hosts are this machine.
pstate() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }

@test "stdin is forwarded, stdout and stderr stay apart, the exit code is the command's" {
	run bash -c 'printf "one\ntwo\n" | qrsh "cat; echo to-err >&2; exit 3" >"$WORK/o1" 2>"$WORK/e1"'
	[ "$status" -eq 3 ]
	[ "$(cat "$WORK/o1")" = "$(printf 'one\ntwo')" ]
	[ "$(cat "$WORK/e1")" = "to-err" ]
	run qrsh true
	[ "$status" -eq 0 ]
	run qrsh false
	[ "$status" -eq 1 ]
	# A command the shell cannot find: the shell's own words and 127.
	run qrsh /no/such/program
	[ "$status" -eq 127 ]
	[[ "$output" == *"/no/such/program: No such file or directory"* ]]
}

@test "large streams arrive whole and in order, both ways" {
	seq 1 200000 > "$WORK/seq"
	run bash -c 'qrsh seq 1 200000 | cmp - "$WORK/seq"'
	[ "$status" -eq 0 ]
	run bash -c 'qrsh cat < "$WORK/seq" | cmp - "$WORK/seq"'
	[ "$status" -eq 0 ]
	# Interleaved writes to one stream keep their order.
	run bash -c 'qrsh "for i in 1 2 3 4 5; do echo out\$i; echo err\$i >&2; done" 2>&1 >/dev/null'
	[ "$output" = "$(printf 'err1\nerr2\nerr3\nerr4\nerr5')" ]
}

@test "a killed command gives 128 + its signal" {
	run qrsh 'kill -9 $$'
	[ "$status" -eq 137 ]
}

@test "a qrsh job is a job: qstat while it runs, qacct after" {
	qrsh -N qrshjob 'echo x; sleep 2' > "$WORK/acct.out" &
	wait_until 20 bash -c 'qstat | grep -q qrshjob'
	id=$(qstat | awk '$3 == "qrshjob" { print $1 }')
	wait
	wait_until 20 job_finished "$id"
	wait_until 20 bash -c "qacct -j $id | grep -q qrshjob"
	[ "$(cat "$WORK/acct.out")" = x ]
}

@test "a qrsh job obeys its -l limits, and qrsh says which ended it" {
	run qrsh -l h_rt=1 sleep 30
	[ "$status" -eq 137 ]
	[[ "$output" == *"h_rt limit (1 s) exceeded"* ]]
}

@test "qrsh refuses what it cannot do, with one line" {
	run qrsh
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"a command is needed"* ]]
	run qrsh -sync y true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	run qrsh -now maybe true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-now wants y or n"* ]]
	run qsub -now y -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"not supported"* ]]
}

# sig_test SIG: the remote shell traps SIG, says so and exits 7.
sig_test() {
	local sig=$1 out="$WORK/sig.$1"
	rm -f "$out"
	qrsh "trap 'echo got $sig; exit 7' $sig; echo ready; while :; do sleep 0.1; done" > "$out" &
	local pid=$!
	wait_until 20 grep -q ready "$out"
	kill -"$sig" "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 7 ]
	grep -q "got $sig" "$out"
}

@test "SIGINT, SIGTERM and SIGHUP of qrsh reach the remote command" {
	sig_test INT
	sig_test TERM
	sig_test HUP
	sig_test USR1
}

@test "SIGTSTP stops the remote command and qrsh, SIGCONT resumes both" {
	qrsh 'echo $$; exec sleep 60' > "$WORK/tstp" &
	local pid=$!
	ready "$WORK/tstp"
	rpid=$(head -1 "$WORK/tstp")
	[ "$(pstate "$rpid")" = S ]
	kill -TSTP "$pid"
	wait_until 10 bash -c "[ \"\$(awk '{ print \$3 }' /proc/$rpid/stat)\" = T ]"
	wait_until 10 bash -c "[ \"\$(awk '{ print \$3 }' /proc/$pid/stat)\" = T ]"
	kill -CONT "$pid"
	wait_until 10 bash -c "[ \"\$(awk '{ print \$3 }' /proc/$rpid/stat)\" = S ]"
	kill -TERM "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 143 ]
	wait_until 10 gone "$rpid"
}

@test "flow control: a reader that stops stops the remote writer, and memory stays bounded" {
	# The fifo is opened and never read: qrsh blocks writing to it.
	mkfifo "$WORK/slow"
	exec 7<>"$WORK/slow"
	qrsh "echo \$\$ > $WORK/yes.pid; exec yes" > "$WORK/slow" 7<&- &
	local pid=$!
	ready "$WORK/yes.pid"
	rpid=$(head -1 "$WORK/yes.pid")
	sleep 2
	w1=$(awk '$1 == "wchar:" { print $2 }' "/proc/$rpid/io")
	sleep 1
	w2=$(awk '$1 == "wchar:" { print $2 }' "/proc/$rpid/io")
	shep=$(awk '{ print $4 }' "/proc/$rpid/stat")
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$shep/status")
	echo "# yes wrote $w1 bytes; shepherd rss $rss kB" >&3
	[ "$w1" = "$w2" ]
	# Everything between yes and the fifo holds a few socket and pipe
	# buffers, not everything yes could write.
	[ "$w1" -lt $((64 * 1024 * 1024)) ]
	# The reader goes: qrsh dies of SIGPIPE, and yes with it.
	exec 7<&-
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -ne 0 ]
	wait_until 10 gone "$rpid"
}

@test "qdel of a running qrsh ends it, and qrsh says so" {
	qrsh -N qdelme 'echo $$; exec sleep 60' > "$WORK/qdel.out" 2> "$WORK/qdel.err" &
	local pid=$!
	ready "$WORK/qdel.out"
	rpid=$(head -1 "$WORK/qdel.out")
	id=$(qstat | awk '$3 == "qdelme" { print $1 }')
	qdel "$id"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -ne 0 ]
	grep -q "job $id deleted" "$WORK/qdel.err"
	wait_until 10 gone "$rpid"
}

@test "a qrsh killed with SIGKILL takes its remote command with it" {
	qrsh -N killme 'echo $$; exec sleep 60' > "$WORK/kill.out" &
	local pid=$!
	ready "$WORK/kill.out"
	rpid=$(head -1 "$WORK/kill.out")
	id=$(qstat | awk '$3 == "killme" { print $1 }')
	kill -KILL "$pid"
	wait_until 10 gone "$rpid"
	wait_until 20 job_finished "$id"
}

@test "qrsh waits for a host, -now y fails at once when none is free" {
	# Three hosts of one slot each, all busy.
	fill_slots
	run qrsh -now y true
	echo "$output"
	[ "$status" -ne 0 ]
	[[ "$output" == *"could not be scheduled"* ]]
	# It was deleted, not left waiting.
	[ -z "$(qstat -s p)" ]
	qrsh -N waiter 'echo ran' > "$WORK/wait.out" &
	local pid=$!
	wait_until 20 bash -c 'qstat -s p | grep -q waiter'
	qdel $(echo $ids | cut -d' ' -f1)
	wait "$pid"
	[ "$(cat "$WORK/wait.out")" = ran ]
	qdel $ids >/dev/null || true
	wait_until 20 bash -c '[ -z "$(qstat -s r)" ]'
}

@test "a pending qrsh interrupted by SIGINT deletes its job" {
	fill_slots
	qrsh -N pendint true 2> "$WORK/pendint.err" &
	local pid=$!
	wait_until 20 bash -c 'qstat -s p | grep -q pendint'
	kill -INT "$pid"
	local rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 130 ]
	[ -z "$(qstat -s p)" ]
	qdel $ids >/dev/null
	wait_until 20 bash -c '[ -z "$(qstat -s r)" ]'
}

@test "-pty y: the command gets a terminal of our size, and window changes reach it" {
	all_done
	# sh's read, unlike bash's (root's login shell, which runs the line),
	# lets the trap run while it waits.
	cat > "$WORK/winch.sh" <<-'EOF'
	#!/bin/sh
	tty; stty size; trap "echo size \$(stty size)" WINCH; echo ready; x=; while [ -z "$x" ]; do read x; done; echo got $x; exit 4
	EOF
	chmod 755 "$WORK/winch.sh"
	run python3 "$NOWQ_E2E/ptyrun.py" 31 97 \
		'wait:ready;size:40,120;wait:size 40 120;type:done\n' -- qrsh -pty y "$WORK/winch.sh"
	echo "$output"
	[ "$status" -eq 4 ]
	[[ "$output" == */dev/pts/* ]]
	[[ "$output" == *"31 97"* ]]
	[[ "$output" == *"size 40 120"* ]]
	[[ "$output" == *"got done"* ]]
	# Without -pty the command has no terminal, even when we do.
	run python3 "$NOWQ_E2E/ptyrun.py" 24 80 '' -- qrsh 'tty || echo none'
	[[ "$output" == *"not a tty"* ]]
}

@test "-pty y without a terminal here: the end of our stdin is the remote terminal's EOF" {
	all_done
	run bash -c 'printf "abc\n" | qrsh -pty y cat'
	[ "$status" -eq 0 ]
	[[ "$output" == *abc* ]]
	# No input at all, and a last line without its newline, which one EOF
	# character would only hand to cat (timeout: that cat waits for ever).
	run timeout 20 qrsh -pty y cat < /dev/null
	[ "$status" -eq 0 ]
	run bash -c 'printf "abc" | timeout 20 qrsh -pty y cat'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = abcabc ]
}

@test "-pty y: a command that closes its terminal before it exits is not hung up" {
	all_done
	# cat does so at its end (its last close of stdout); the pause makes the
	# window wide: the terminal has no one left on it well before the exit.
	run qrsh -pty y 'echo bye; exec 0<&- 1>&- 2>&-; sleep 1; exit 3'
	echo "$output"
	[ "$status" -eq 3 ]
	[[ "$output" == *bye* ]]
}

@test "-pty y: the EOF typed is the one the remote terminal has when our stdin ends" {
	all_done
	mkfifo "$WORK/veof.in"
	timeout 20 qrsh -pty y 'stty eof ^B; echo ready; cat' < "$WORK/veof.in" > "$WORK/veof.out" &
	local pid=$!
	exec 8> "$WORK/veof.in"
	wait_until 20 grep -q ready "$WORK/veof.out"
	printf 'abc\n' >&8
	exec 8>&-
	local rc=0
	wait "$pid" || rc=$?
	cat "$WORK/veof.out"
	[ "$rc" -eq 0 ]
	[ "$(grep -c abc "$WORK/veof.out")" -eq 2 ]
}

@test "-pty y: all the command wrote before it ended arrives" {
	all_done
	# The tail of a large output is often still in the pty when the
	# shepherd hears of the end (a pty hands bytes on through a kernel
	# worker); three runs, since that is a race.
	for i in 1 2 3; do
		run bash -c 'set -o pipefail; qrsh -pty y seq 1 50000 < /dev/null | tail -1'
		echo "run $i: $output"
		[ "$status" -eq 0 ]
		[ "${output%$'\r'}" = 50000 ]
	done
}

@test "-pty y: a typed ^C interrupts the remote command through its terminal" {
	all_done
	run python3 "$NOWQ_E2E/ptyrun.py" 24 80 'wait:ready;type:\x03' -- \
		qrsh -pty y 'trap "echo interrupted; exit 9" INT; echo ready; while :; do sleep 0.1; done'
	echo "$output"
	[ "$status" -eq 9 ]
	[[ "$output" == *interrupted* ]]
}

@test "-n 3: three copies on three hosts with ranks, a host file and the same stdin" {
	all_done
	run bash -c 'echo in | qrsh -n 3 "echo \$NOWQ_VNN \$HOSTNAME \$(wc -l < \$PE_HOSTFILE) \$(cat)"'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(printf '%s\n' "$output" | awk '{ print $1 }' | sort | tr '\n' ' ')" = "0 1 2 " ]
	[ "$(printf '%s\n' "$output" | awk '{ print $2 }' | sort -u | wc -l)" -eq 3 ]
	[ "$(printf '%s\n' "$output" | awk '$3 == 3 && $4 == "in"' | wc -l)" -eq 3 ]
}

@test "-n 3 -prefix: each line starts with its rank, stdout and stderr alike" {
	all_done
	run bash -c 'qrsh -n 3 -prefix "echo out\$NOWQ_VNN; echo err\$NOWQ_VNN >&2; printf tail" 2>"$WORK/prefix.err"'
	[ "$status" -eq 0 ]
	for r in 0 1 2; do
		printf '%s\n' "$output" | grep -qx "$r: out$r"
		printf '%s\n' "$output" | grep -qx "$r: tail"
		grep -qx "$r: err$r" "$WORK/prefix.err"
	done
}

@test "-n 3: the exit code is the first non-zero, and one signal reaches every copy" {
	all_done
	run qrsh -n 3 '[ $NOWQ_VNN = 1 ] && exit 5; sleep 60'
	[ "$status" -eq 5 ]
	all_done
	qrsh -n 3 -prefix 'trap "echo int; exit 0" INT; echo ready; while :; do sleep 0.1; done' > "$WORK/nsig" &
	local pid=$!
	wait_until 20 bash -c "[ \$(grep -c ready $WORK/nsig) -eq 3 ]"
	kill -INT "$pid"
	wait "$pid"
	[ "$(grep -c ': int$' "$WORK/nsig")" -eq 3 ]
}

@test "a connection without the job's secret is refused, and qrsh keeps waiting" {
	fill_slots
	waiting_qrsh secret
	[ -n "$secret" ]
	# The job's id and part, a secret of the right length but not its own.
	qrsh_hello "$port" "$id" "$(printf '%032d' 0)"
	grep -q "refused a connection: wrong secret" "$WORK/secret.err"
	# Another job's id, even with the secret.
	qrsh_hello "$port" $((id + 1000)) "$secret"
	grep -q "refused a connection: malformed HELLO" "$WORK/secret.err"
	qdel $ids >/dev/null
	wait "$qpid"
	[ "$(cat "$WORK/secret.out")" = ran ]
	all_done
}

@test "connections that never say HELLO hold up neither the streams nor the genuine shepherd" {
	fill_slots
	waiting_qrsh silent
	# Three connections ahead of the shepherd's, silent for 30 s: waited
	# for one after the other (5 s each), they kept the shepherd past its
	# 10 s and the job failed.
	python3 -c '
import socket, sys, time
s = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for i in range(3)]
open(sys.argv[2], "w").close()
time.sleep(30)' "$port" "$WORK/silent.ready" &
	local silent=$!
	wait_until 20 test -e "$WORK/silent.ready"
	qdel $(echo $ids | cut -d' ' -f1)
	local rc=0
	wait "$qpid" || rc=$?
	kill "$silent" 2>/dev/null || true
	cat "$WORK/silent.err"
	[ "$rc" -eq 0 ]
	[ "$(cat "$WORK/silent.out")" = ran ]
	qdel $ids >/dev/null || true
	all_done
}

@test "a lost exec host ends qrsh with an error saying so" {
	all_done
	qrsh -N lostjob 'echo $$; exec sleep 60' > "$WORK/lost.out" 2> "$WORK/lost.err" &
	local pid=$!
	ready "$WORK/lost.out"
	id=$(qstat | awk '$3 == "lostjob" { print $1 }')
	host=$(qstat | awk '$3 == "lostjob" { sub(/.*@/, "", $8); print $8 }')
	ini=$(grep -l "^name = $host\$" "$CLUSTER"/execd-*.ini)
	epid=$(cat "${ini%.ini}/execd.pid")
	kill -STOP "$epid"
	local rc=0
	wait "$pid" || rc=$?
	kill -CONT "$epid"
	cat "$WORK/lost.err"
	[ "$rc" -ne 0 ]
	grep -q "host lost: $host" "$WORK/lost.err"
	# The command goes with qrsh's connection.
	wait_until 10 gone "$(head -1 "$WORK/lost.out")"
	wait_until 20 hosts_up
}
