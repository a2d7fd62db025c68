#!/usr/bin/env bats
# privclone.bats: a clone in a folder only root may enter, with a space in its path (root's clone under /root), builds with setup.sh and passes a file of tests that act as other users.
# It builds a second tree (without sanitizers): about a minute of CPU.

load helpers

setup() {
	[ "$(id -u)" = 0 ] && id -u nobody >/dev/null 2>&1 || skip "needs root and the user nobody"
	PRIV=$(mktemp -d /tmp/nowq-priv.XXXXXX)
	chmod 700 "$PRIV"
	CLONE="$PRIV/a clone"
	mkdir "$CLONE"
}

teardown() {
	[ -n "${PRIV:-}" ] || return 0
	local b=${BUILD:-} s
	if [ -n "$b" ]; then
		s=$(cat "$b/t/stage-dir" 2>/dev/null) || true
		case $s in /tmp/nowq-stage.*) rm -rf "$s" ;; esac
		# setup.sh's link of a plain name to the clone
		[ ! -L "${b%/_build}" ] || rm -f "${b%/_build}"
	fi
	rm -rf "$PRIV"
}

@test "a clone under a 0700 folder with a space in its path builds and passes authz.bats" {
	tar -C "$top_srcdir" --exclude=.git --exclude='./_build*' --exclude=autom4te.cache -cf - . |
		tar -C "$CLONE" -xf -
	run setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups test -r "$CLONE/t/e2e/walk.py"
	[ "$status" -ne 0 ]
	# The inner make and bats must not take this run's variables for theirs.
	clean=(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL $(compgen -e | sed -n 's/^BATS_.*/-u &/p'))
	(cd "$CLONE" && "${clean[@]}" ./setup.sh) >"$PRIV/setup.log" 2>&1 || { tail -20 "$PRIV/setup.log"; return 1; }
	BUILD=$(sed -n 's/^setup: built nowq in //p' "$PRIV/setup.log")
	[ -n "$BUILD" ]
	[ "$(readlink -f "$BUILD")" = "$CLONE/_build" ]
	(cd "$BUILD" && "${clean[@]}" make -j2 check TESTS=t/e2e/authz.bats check_PROGRAMS=) >"$PRIV/check.log" 2>&1 || true
	cat "$BUILD/t/e2e/authz.log" || tail -20 "$PRIV/check.log"
	# Every case authz.bats plans passed, however many it has.
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$BUILD/t/e2e/authz.log" | head -n 1)
	[ "${plan:-0}" -ge 5 ]
	[ "$(grep -c '^:test-result: PASS' "$BUILD/t/e2e/authz.trs")" -eq "$plan" ]
	! grep -q -E '^:test-result: (FAIL|ERROR|SKIP)' "$BUILD/t/e2e/authz.trs" || false
}
