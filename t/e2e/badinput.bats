#!/usr/bin/env bats
# badinput.bats: bad options, scripts, configurations and raw frames get one clear error and change nothing; the master keeps serving.

load helpers

setup_file() {
	cluster_start
	WORK=$(mktemp -d /tmp/nowq-bad.XXXXXX)
	export WORK
}

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

njobs() { qstat -s prz | awk 'NR > 2' | wc -l; }
port() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)".*/\1/p' "$CLUSTER/qmaster.conf"; }

# Each bad submission must print one line starting with "qsub: error:", exit non-zero and add no job.
refused() {
	before=$(njobs)
	run "$@"
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "qsub: error: "* ]]
	[ "$(njobs)" = "$before" ]
}

@test "unknown options and bad values are refused" {
	refused qsub -bogus "$WORK/x"
	refused qsub -p 5000 -b y true
	refused qsub -j maybe -b y true
	refused qsub -N
}

@test "a missing, unreadable, directory or oversized script is refused" {
	refused qsub "$WORK/does-not-exist.sh"
	refused qsub "$WORK"
	head -c 2000000 /dev/zero | tr '\0' '#' > "$WORK/big.sh"
	refused qsub "$WORK/big.sh"
	if [ "$(id -u)" = 0 ] && id -u nobody >/dev/null 2>&1; then
		printf 'echo hi\n' > "$WORK/secret.sh"
		chmod 600 "$WORK/secret.sh"
		chmod 755 "$WORK"
		before=$(njobs)
		run setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qsub" "$WORK/secret.sh"
		[ "$status" -ne 0 ]
		[[ "${lines[0]}" == "qsub: error: "* ]]
		[ "$(njobs)" = "$before" ]
	fi
}

@test "an unknown queue is refused" {
	refused qsub -q nosuch.q -b y true
}

raw() {
	# Sends raw bytes to the master's TCP port, waits, and closes.
	# fd 3 belongs to bats; use others.
	exec 5<>"/dev/tcp/127.0.0.1/$(port)"
	printf "$1" >&5
	sleep "${2:-0.2}"
	exec 5>&- 5<&-
}

@test "malformed, oversized and truncated frames, and silent clients, leave the master serving" {
	# A silent client holds a connection open the whole time.
	exec 6<>"/dev/tcp/127.0.0.1/$(port)"
	raw '\xff\xff\xff\xff'                       # oversized length
	raw '\x00\x00\x00\x00'                       # empty frame
	raw '\x00\x00\x00\x05hello'                  # not JSON
	raw '\x00\x00\x00\x02[]'                     # not an object
	raw '\x00\x00\x00\x0b{"type":1}x'            # type is not a string
	raw '\x00\x00\x00\x40{"type":"HELLO"'        # truncated, then closed
	raw '\x00\x00\x00\x0f{"type":"PULL"}'        # no HELLO first
	run qstat
	[ "$status" -eq 0 ]
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 20 job_finished "$id"
	exec 6>&- 6<&-
	run grep -c "qmaster.*fatal" "$CLUSTER/qmaster/qmaster.log"
	[ "$output" = 0 ]
}

# A frame of text on fd 5, its 4-byte length first (texts under 256 bytes).
frame5() { printf "\\x00\\x00\\x00\\x$(printf %02x ${#1})%s" "$1" >&5; }

@test "a STAGE_PUT announcing too many raw bytes, or not a number, or cut short, is refused; the master keeps serving" {
	local hello put reply bytes sha spool rc
	hello="{\"type\":\"HELLO\",\"seq\":1,\"version\":1,\"role\":\"client\",\"auth\":{\"method\":\"none\"},\"uid\":$(id -u)}"
	sha=$(printf 'x%.0s' $(seq 1000) | sha256sum | cut -c1-64)
	for bytes in 2000000 '"many"' -1 100; do
		put="{\"type\":\"STAGE_PUT\",\"seq\":2,\"sha256\":\"$sha\",\"size\":1000,\"total\":1000,\"offset\":0,\"bytes\":$bytes}"
		exec 5<>"/dev/tcp/127.0.0.1/$(port)"
		frame5 "$hello"
		frame5 "$put"
		# 100 announced, 10 sent: the master waits for the rest as for a
		# frame's (client_timeout), then closes the connection and logs
		# why; nothing is written.
		[ "$bytes" != 100 ] || printf '0123456789' >&5
		reply=
		rc=0
		read -r -t 40 -N 2000 reply <&5 || rc=$?
		exec 5>&- 5<&-
		[ "$rc" = 1 ] || { echo "$bytes: not closed by the master ($rc): $reply"; false; }
		if [ "$bytes" = 100 ]; then
			grep -q "closing after .*: a frame was not complete in time" "$CLUSTER/qmaster/qmaster.log"
		else
			[[ "$reply" == *'"error":"protocol"'*  && "$reply" == *"raw bytes"* ]] ||
			    { echo "$bytes: $reply"; false; }
		fi
	done
	spool=$(sed -n 's/^spool_dir *= *"\(.*\)"/\1/p' "$CLUSTER/qmaster.conf")
	run find "$spool/stage" -name "tmp.*"
	[ -z "$output" ]
	run qstat
	[ "$status" -eq 0 ]
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 20 job_finished "$id"
	run grep -c "qmaster.*fatal" "$CLUSTER/qmaster/qmaster.log"
	[ "$output" = 0 ]
}

@test "a bad qmaster.conf is refused with the file and line named" {
	printf 'spool_dir = "%s/spool"\nlisten = "127.0.0.1:1"\nbogus_key = 3\n' "$WORK" > "$WORK/bad.conf"
	run qmaster -f -c "$WORK/bad.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *"bad.conf:3:"* ]]
	printf 'spool_dir = "%s/spool"\nlisten = "10.1.2.3:7444"\nauth = "none"\nqueue "all.q" {}\n' "$WORK" > "$WORK/bad2.conf"
	run qmaster -f -c "$WORK/bad2.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *"loopback"* ]]
}

@test "over TCP with auth none, a HELLO claiming another user's uid is refused" {
	id -u nobody >/dev/null 2>&1 || skip "no user nobody on this machine"
	[ "$(id -u)" = 0 ] || skip "needs root to act as another user"
	cat > "$WORK/hello.sh" <<'SH'
hello="{\"type\":\"HELLO\",\"seq\":1,\"version\":1,\"role\":\"client\",\"auth\":{\"method\":\"none\"},\"uid\":$2}"
exec 5<>"/dev/tcp/127.0.0.1/$1"
printf "\\x00\\x00\\x00\\x$(printf %02x ${#hello})%s" "$hello" >&5
read -r -t 2 -N 300 reply <&5
printf '%s' "$reply"
SH
	chmod 755 "$WORK" "$WORK/hello.sh"
	run setpriv --reuid=nobody --regid=nogroup --clear-groups bash "$WORK/hello.sh" "$(port)" 0
	[[ "$output" == *"cannot confirm uid 0"* ]]
	run setpriv --reuid=nobody --regid=nogroup --clear-groups bash "$WORK/hello.sh" "$(port)" "$(id -u nobody)"
	[[ "$output" == *'"ok":true'* ]]
	# And a client over TCP works as itself.
	run setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="127.0.0.1:$(port)" \
		"$NOWQ_BIN/qstat"
	[ "$status" -eq 0 ]
}

@test "errors quoting non-ASCII input arrive whole, in one line, however long" {
	local e n out
	e=$(printf 'é%.0s' $(seq 20))
	for cmd in "qsub -l hosts=é -b y true" "qconf -sexpr é" "reserve -N utf8 -H é -s +3600 -d 60"; do
		run $cmd
		echo "$output"
		[ "$status" -ne 0 ]
		[ "${#lines[@]}" -eq 1 ]
		[[ "$output" == *': error: '*'"é"'* ]]
	done
	# Names over 1,000 bytes: the master's sentences are cut at 1,024
	# bytes and the client's lines at its own limit, both on a character
	# boundary (one or the other parity cuts inside an é otherwise).
	e=$(printf 'é%.0s' $(seq 600))
	for n in 0 1; do
		out=$(qsub -q "$(printf 'a%.0s' $(seq 0 "$n"))$e" -b y true 2>&1) && false
		[[ "$out" == "qsub: error: Unable to run job: "*"unknown queue"* ]] || { echo "$out"; false; }
		iconv -f UTF-8 -t UTF-8 <<<"$out" >/dev/null
		out=$(qconf -aalias "$(printf 'a%.0s' $(seq 0 "$n"))$e" nohost 2>&1) && false
		[[ "$out" == "qconf: error: "* && "$out" != *"frame"* ]] || { echo "$out"; false; }
		iconv -f UTF-8 -t UTF-8 <<<"$out" >/dev/null
	done
	qstat >/dev/null
}
