#!/usr/bin/env bats
# debian.bats: debian/ builds nowq-master, nowq-exec and nowq-client with dpkg-buildpackage -us -uc -b; unpacked into a scratch root, the packaged programs run a job end to end.
# Opt-in (NOWQ_TEST_DEB=1): the build takes about a minute of CPU, three
# minutes of wall time on a loaded two-core machine.

setup_file() {
	[ "${NOWQ_TEST_DEB:-0}" = 1 ] || return 0
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || return 0
	DEB=$(mktemp -d /tmp/nowq-deb.XXXXXX)
	export DEB
	mkdir "$DEB/src"
	# A copy: the build runs autoreconf and configure in its source tree.
	tar -C "$top_srcdir" --exclude=.git --exclude=_build --exclude=autom4te.cache -cf - . |
		tar -C "$DEB/src" -xf -
	(cd "$DEB/src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
		>"$DEB/build.log" 2>&1 || true
	mkdir "$DEB/root"
	for p in master exec client; do
		[ -f "$DEB/nowq-${p}_"*_*.deb ] && dpkg -x "$DEB"/nowq-${p}_*_*.deb "$DEB/root"
	done
	true
}

teardown_file() {
	[ -n "${DEB:-}" ] || return 0
	NOWQ_SBINDIR="$DEB/root/usr/sbin" "$DEB/root/usr/bin/nowq" stop --dir "$DEB/cluster" >/dev/null 2>&1 || true
	rm -rf "$DEB"
}

setup() {
	[ "${NOWQ_TEST_DEB:-0}" = 1 ] || skip "the Debian package build is opt-in: NOWQ_TEST_DEB=1 (about a minute of CPU)"
	command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage is not installed (apt-get install dpkg-dev)"
	command -v dh >/dev/null || skip "debhelper is not installed (apt-get install debhelper)"
}

@test "dpkg-buildpackage -us -uc -b builds the three packages" {
	for p in master exec client; do
		ls "$DEB"/nowq-${p}_*_*.deb >/dev/null 2>&1 || { tail -30 "$DEB/build.log"; return 1; }
	done
}

@test "each package holds its programs, configuration, unit and pages" {
	r=$DEB/root
	[ -x "$r/usr/sbin/qmaster" ] && [ -x "$r/usr/sbin/execd" ] && [ -x "$r/usr/bin/nowq" ]
	for c in qsub qstat qdel qhold qrls qhost qacct qconf qalter qmod qwait; do
		[ "$(readlink "$r/usr/bin/$c")" = nowq ] || { echo "no link $c"; return 1; }
		[ -L "$r/usr/share/bash-completion/completions/$c" ] || { echo "no completion $c"; return 1; }
		[ -f "$r/usr/share/man/man1/$c.1.gz" ] || { echo "no page $c.1"; return 1; }
	done
	[ -f "$r/etc/nowq/qmaster.conf" ] && [ -f "$r/etc/nowq/execd.ini" ]
	grep -qx "ExecStart=/usr/sbin/execd -c /etc/nowq/execd.ini" "$r/lib/systemd/system/nowq-execd.service"
	grep -qx "KillMode=process" "$r/lib/systemd/system/nowq-execd.service"
	grep -qx "ExecStart=/usr/sbin/qmaster -c /etc/nowq/qmaster.conf" "$r/lib/systemd/system/nowq-qmaster.service"
	grep -q "/var/log/nowq/qmaster.log" "$r/etc/logrotate.d/nowq-master"
	grep -q "/var/log/nowq/execd.log" "$r/etc/logrotate.d/nowq-exec"
	# Only the client package has the client, only the master the master.
	! dpkg-deb -c "$DEB"/nowq-exec_*.deb | grep -q qmaster || false
	! dpkg-deb -c "$DEB"/nowq-client_*.deb | grep -q sbin/ || false
}

@test "the unpacked programs run a job end to end" {
	export NOWQ_SBINDIR="$DEB/root/usr/sbin" PATH="$DEB/root/usr/bin:$PATH"
	nowq start --dir "$DEB/cluster" >/dev/null 2>&1
	eval "$(nowq env --dir "$DEB/cluster")"
	export NOWQ_MASTER
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	run qwait "$id"
	[ "$status" -eq 0 ]
	[ "$(qacct -j "$id" | awk '$1 == "exit_status" { print $2 }')" = 0 ]
	nowq stop --dir "$DEB/cluster" >/dev/null 2>&1
}

@test "lintian finds no error, when it is installed" {
	command -v lintian >/dev/null || skip "lintian is not installed (apt-get install lintian)"
	run lintian --fail-on error "$DEB"/nowq_*_*.changes
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
}
