#!/usr/bin/env bats
# harness.bats: t/run-bats, which runs every bats file of the suite, ends a file that fails before its kill or outlives its time limit with a failure in seconds, and stops what the file left running.

load helpers

setup() {
	PLANT=$BATS_TEST_TMPDIR/plant
	mkdir "$PLANT"
}

# run_bats LIMIT [BATS-OPTIONS...] FILE: t/run-bats on FILE with a time
# limit of LIMIT seconds, itself bounded; sets ELAPSED (seconds).
run_bats() {
	local t0=$SECONDS limit=$1
	shift
	# The inner bats must not take this one's variables for its own.
	run env $(compgen -e | sed -n 's/^BATS_.*/-u &/p') NOWQ_TEST_FILE_SECONDS="$limit" NOWQ_TEST_TEARDOWN_SECONDS=5 timeout 300 "$top_srcdir/t/run-bats" "${NOWQ_BATS:-/usr/bin/bats}" --tap "$@"
	ELAPSED=$((SECONDS - t0))
	echo "$output"
	echo "took $ELAPSED s"
}

@test "a copy of authz.bats that fails before its kill ends in seconds, failed, and its execd is stopped" {
	# The test that hung the suite: its execd, a daemon of its own
	# session, keeps the file's output open after bats is done.
	cp "$top_srcdir/t/e2e/authz.bats" "$top_srcdir/t/e2e/helpers.bash" "$PLANT/"
	sed -i 's|^\tkill "$(cat "$WORK/fake/spool/execd.pid")"$|\tfalse # planted\n&|' "$PLANT/authz.bats"
	grep -q '^	false # planted$' "$PLANT/authz.bats"
	# Only that test; setup_file still starts the file's cluster.
	# Without t/run-bats this never ends; with it, well within the limit
	# (seconds on an idle machine, a minute or two on a loaded one).
	run_bats 200 --filter 'an execd with auth = none' "$PLANT/authz.bats"
	[ "$status" -ne 0 ]
	! grep -q 'timed out' <<<"$output" || false
	[ "$ELAPSED" -lt 200 ]
	grep -q '^not ok 1 an execd with auth = none' <<<"$output"
	grep -q '^not ok - authz.bats left processes running after its teardown' <<<"$output"
	pid=$(sed -n 's/^# left running: pid \([0-9]*\): execd -c .*fake\/execd.ini.*/\1/p' <<<"$output")
	[ -n "$pid" ]
	# Gone, or a zombie its parent has yet to reap.
	st=$(sed -n 's/^[0-9]* (.*) \(.\) .*/\1/p' /proc/"$pid"/stat 2>/dev/null)
	echo "execd $pid: state ${st:-gone}"
	[ -z "$st" ] || [ "$st" = Z ]
}

@test "a file past its time limit is stopped with a failure that names it, and so is what it daemonized" {
	# (printf: bats would take a test line in a here-document for its own)
	printf '%s\n' '@test "hangs" {' 'setsid sleep 987651 &' 'sleep 987652' '}' >"$PLANT/slow.bats"
	run_bats 10 "$PLANT/slow.bats"
	[ "$status" -ne 0 ]
	[ "$ELAPSED" -lt 40 ]
	grep -q '^not ok - timed out: slow.bats ran longer than 10 s' <<<"$output"
	grep -q '^# left running: pid [0-9]*: sleep 987651' <<<"$output"
	! pgrep -f 'sleep 98765[12]' || false
}

@test "a file that passes and leaves nothing running passes" {
	printf '%s\n' '@test "fine" {' 'sleep 0.1 &' 'wait' '}' >"$PLANT/fine.bats"
	run_bats 30 "$PLANT/fine.bats"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '1..1\nok 1 fine')" ]
}

@test "the programs and scripts the tests run are reachable by other users" {
	[ "$(id -u)" = 0 ] && id -u nobody >/dev/null 2>&1 || skip "needs root and the user nobody"
	[ -n "${NOWQ_STAGE:-}" ] || skip "runs under make check, which makes the copy (t/stage)"
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$NOWQ_BIN/qsub" --help >/dev/null
	setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -r "$NOWQ_E2E/walk.py"
	[ "$(stat -c %a "$NOWQ_STAGE")" = 755 ]
}
