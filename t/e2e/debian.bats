#!/usr/bin/env bats
# debian.bats: debian/ builds nowq-master, nowq-exec, nowq-client, nowq-drmaa and nowq-drmaa-dev with dpkg-buildpackage -us -uc -b; unpacked into a scratch root, the packaged programs run a job end to end, also through the packaged libdrmaa; lintian finds no error; nowq-client replaces gridengine-client in a throwaway copy of this system; with NOWQ_TEST_DEB=1 the packages also build in a clean Debian 12 chroot.
# The build takes about a minute of CPU, three minutes of wall time on a
# loaded two-core machine; test.sh installs what these tests need
# (debhelper, lintian, and gridengine-client's packages in apt's cache).
# With NOWQ_TEST_DEB=1 the file outlives t/run-bats' 900 s: give it
# NOWQ_TEST_FILE_SECONDS=3000.

setup_file() {
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null || return 0
	DEB=$(mktemp -d /tmp/nowq-deb.XXXXXX)
	export DEB
	mkdir "$DEB/src"
	# A copy: the build runs autoreconf and configure in its source tree.
	tar -C "$top_srcdir" --exclude=.git --exclude='./_build*' --exclude=autom4te.cache -cf - . |
		tar -C "$DEB/src" -xf -
	(cd "$DEB/src" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL DEB_BUILD_OPTIONS="nocheck parallel=2" \
		dpkg-buildpackage -us -uc -b) >"$DEB/build.log" 2>&1 || true
	mkdir "$DEB/root"
	for p in master exec client drmaa drmaa-dev; do
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
	command -v dpkg-buildpackage >/dev/null || skip "dpkg-buildpackage is not installed (apt-get install dpkg-dev; test.sh does)"
	command -v dh >/dev/null || skip "debhelper is not installed (apt-get install debhelper; test.sh does)"
}

# in_copy SCRIPT: runs SCRIPT as root in a throwaway copy of this system
# (an overlay on / in a mount namespace of its own): packages installed
# there are gone afterwards.
in_copy() {
	local t=$DEB/copy
	rm -rf "$t"
	mkdir -p "$t/upper" "$t/work" "$t/root"
	unshare -m sh -c 'mount -t overlay overlay -o "lowerdir=/,upperdir=$1/upper,workdir=$1/work" "$1/root" &&
		mount -t proc proc "$1/root/proc" && mount --rbind /dev "$1/root/dev" &&
		chroot "$1/root" sh -c "$2"' sh "$t" "$1"
}

@test "dpkg-buildpackage -us -uc -b builds the five packages" {
	for p in master exec client drmaa drmaa-dev; do
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

@test "nowq-drmaa holds libdrmaa.so.1, nowq-drmaa-dev its header, link and page" {
	run dpkg-deb -c "$DEB"/nowq-drmaa_*.deb
	[[ "$output" == *"/libdrmaa.so.1.0"* ]] && [[ "$output" == *"/libdrmaa.so.1 -> libdrmaa.so.1.0"* ]]
	[[ "$output" != *"drmaa.h"* ]]
	run dpkg-deb -c "$DEB"/nowq-drmaa-dev_*.deb
	[[ "$output" == *"./usr/include/drmaa.h"* ]] && [[ "$output" == *"/libdrmaa.so -> libdrmaa.so.1"* ]]
	[[ "$output" == *"/man3/drmaa.3.gz"* ]]
	run dpkg-deb -f "$DEB"/nowq-drmaa-dev_*.deb Depends
	[[ "$output" == *"nowq-drmaa (= "* ]]
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
	# The packaged library, as python3-drmaa loads it.
	if /usr/bin/python3 -c 'import ctypes.util' 2>/dev/null && dpkg-query -W python3-drmaa >/dev/null 2>&1; then
		lib=$(echo "$DEB"/root/usr/lib/*/libdrmaa.so.1)
		run env DRMAA_LIBRARY_PATH="$lib" /usr/bin/python3 -c 'import drmaa
s = drmaa.Session(); s.initialize()
jt = s.createJobTemplate(); jt.remoteCommand = "/bin/true"; jt.outputPath = ":/dev/null"; jt.joinFiles = True
print(s.wait(s.runJob(jt), -1).exitStatus); s.exit()'
		[ "$status" -eq 0 ] && [ "$output" = 0 ] || { echo "$output"; return 1; }
	fi
	nowq stop --dir "$DEB/cluster" >/dev/null 2>&1
}

@test "lintian finds no error" {
	command -v lintian >/dev/null || skip "lintian is not installed (apt-get install lintian; test.sh does)"
	run lintian --fail-on error "$DEB"/nowq_*_*.changes
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
}

@test "nowq-client installs where gridengine-client is, replacing it, and the other way round" {
	[ "$(id -u)" = 0 ] || skip "needs root for a throwaway copy of the system"
	ls /var/cache/apt/archives/gridengine-client_*.deb >/dev/null 2>&1 ||
		skip "gridengine-client is not in apt's cache (apt-get install --download-only gridengine-client; test.sh does)"
	client=$(ls "$DEB"/nowq-client_*.deb)
	# A system may run Grid Engine's master or execd, which depend on
	# gridengine-client and would keep it; they go first, with no service
	# touched (policy-rc.d), so the client alone is what is replaced.
	run in_copy "set -e; export DEBIAN_FRONTEND=noninteractive
		printf '#!/bin/sh\\nexit 101\\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
		for p in gridengine-master gridengine-exec gridengine-qmon; do
			if dpkg-query -W -f='\${db:Status-Status}' \$p 2>/dev/null | grep -qx installed; then dpkg --purge \$p >/dev/null; fi
		done
		apt-get install -y -q --no-download gridengine-client >/dev/null
		echo before: \$(readlink /usr/bin/qsub)
		dpkg -i $client
		state() { dpkg-query -W -f='\${db:Status-Status}' \$1 2>/dev/null || echo not-installed; }
		echo nowq: \$(readlink /usr/bin/qsub) \$(state gridengine-client) \$(dpkg -S /usr/share/man/man1/qacct.1.gz)
		apt-get install -y -q --no-download gridengine-client >/dev/null
		echo back: \$(readlink /usr/bin/qsub) \$(state nowq-client)"
	echo "$output"
	[ "$status" -eq 0 ]
	grep -qx "before: ../share/gridengine/gridengine-wrapper" <<<"$output"
	grep -qx "nowq: nowq config-files nowq-client: /usr/share/man/man1/qacct.1.gz" <<<"$output"
	grep -qx "back: ../share/gridengine/gridengine-wrapper not-installed" <<<"$output"
}

@test "the packages build in a clean Debian 12 chroot with only Build-Depends (NOWQ_TEST_DEB=1)" {
	[ "${NOWQ_TEST_DEB:-0}" = 1 ] || skip "opt-in, NOWQ_TEST_DEB=1: debootstrap downloads a system and the build tools (minutes)"
	[ "$(id -u)" = 0 ] || skip "needs root for debootstrap and chroot"
	command -v debootstrap >/dev/null || skip "debootstrap is not installed (apt-get install debootstrap)"
	c=$DEB/chroot
	# In a mount namespace of its own: what debootstrap mounts in the
	# chroot (proc, sys, dev) is gone with it, whatever stops it, and is
	# never under the rm -rf of teardown_file.
	unshare -m debootstrap --variant=minbase bookworm "$c" >"$DEB/debootstrap.log" 2>&1 ||
		{ tail -20 "$DEB/debootstrap.log"; return 1; }
	mkdir "$c/src"
	tar -C "$top_srcdir" --exclude=.git --exclude='./_build*' --exclude=autom4te.cache -cf - . | tar -C "$c/src" -xf -
	run unshare -m sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" &&
		chroot "$1" sh -c "set -e; export DEBIAN_FRONTEND=noninteractive; cd /src
			apt-get install -y -q --no-install-recommends dpkg-dev >/dev/null
			apt-get build-dep -y -q ./ >/dev/null
			DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -us -uc -b >/build.log 2>&1 || { tail -30 /build.log; exit 1; }
			ls /nowq-*.deb"' sh "$c"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^/nowq-.*\.deb$' <<<"$output")" -ge 3 ]
}
