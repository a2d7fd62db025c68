#!/usr/bin/env bats
# admin.bats: the systemd units (Restart=always, execd's KillMode=process keeps jobs through a restart) and the logrotate snippet (both daemons reopen their log on SIGHUP).

load helpers

teardown() {
	cluster_stop
	[ -z "${WORK:-}" ] || work_stop
}

# A unit with the build's paths, as make install would write it with them.
unit() {
	sed -e "s|@sbindir@|$NOWQ_BIN|g" -e "s|@sysconfdir@|$BATS_TEST_TMPDIR|g" \
		"$top_srcdir/etc/nowq-$1.service.in"
}

@test "the units restart their daemon always, and only execd's leaves the other processes alone" {
	for u in qmaster execd; do
		unit "$u" | grep -qx "Restart=always" || { echo "$u: no Restart=always"; return 1; }
		unit "$u" | grep -qx "Type=forking" || { echo "$u: not Type=forking"; return 1; }
	done
	unit execd | grep -qx "KillMode=process"
	! unit qmaster | grep -q "KillMode=process" || false
	# The pid files are where the daemons write them by default.
	unit qmaster | grep -qx "PIDFile=$(sed -n 's/^spool_dir *= *"\(.*\)"/\1/p' "$top_srcdir/etc/qmaster.conf")/qmaster.pid"
	unit execd | grep -qx "PIDFile=$(sed -n 's/^spool_dir = //p' "$top_srcdir/etc/execd.ini")/execd.pid"
}

@test "systemd-analyze verify finds nothing wrong in either unit" {
	command -v systemd-analyze >/dev/null || skip "systemd-analyze is not installed (apt-get install systemd)"
	unit qmaster >"$BATS_TEST_TMPDIR/nowq-qmaster.service"
	unit execd >"$BATS_TEST_TMPDIR/nowq-execd.service"
	run systemd-analyze verify --man=no "$BATS_TEST_TMPDIR/nowq-qmaster.service" \
		"$BATS_TEST_TMPDIR/nowq-execd.service"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "a running job survives what KillMode=process does on a restart: SIGTERM to execd alone" {
	cluster_start
	work_start
	id=$(qsub -terse -o "$WORK/out" -e /dev/null -b y sh -c 'sleep 2; echo survived')
	wait_until 20 state_is "$id" r
	epid=$(cat "$CLUSTER"/execd-1/execd.pid)
	kill -TERM "$epid"
	wait_until 10 sh -c "! kill -0 $epid"
	nowq start --dir "$CLUSTER" >/dev/null 2>&1
	run qwait "$id"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/out")" = survived ]
}

@test "both daemons reopen their log file on SIGHUP, as the logrotate snippet's postrotate asks" {
	cluster_start
	qlog="$CLUSTER/qmaster/qmaster.log" elog="$CLUSTER/execd-1/execd.log"
	wait_until 10 test -s "$qlog"
	wait_until 10 test -s "$elog"
	mv "$qlog" "$qlog.1"
	mv "$elog" "$elog.1"
	# What the postrotate does, with this cluster's pid files.
	for f in "$CLUSTER/qmaster/qmaster.pid" "$CLUSTER/execd-1/execd.pid"; do
		kill -HUP "$(cat "$f")"
	done
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	qwait "$id" >/dev/null
	wait_until 10 test -s "$qlog"
	wait_until 10 test -s "$elog"
}

@test "logrotate accepts the snippet and rotates a daemon's log" {
	command -v logrotate >/dev/null || skip "logrotate is not installed (apt-get install logrotate)"
	cluster_start
	qlog="$CLUSTER/qmaster/qmaster.log"
	wait_until 10 test -s "$qlog"
	sed -e "s|/var/log/nowq/\*.log|$qlog|" -e "s|/var/spool/nowq/qmaster/|$CLUSTER/qmaster/|" \
	    -e "s|/var/spool/nowq/execd/|$CLUSTER/execd-1/|" "$top_srcdir/etc/logrotate.nowq" >"$CLUSTER/lr.conf"
	logrotate -f -s "$CLUSTER/lr.state" "$CLUSTER/lr.conf"
	[ -s "$qlog.1" ]
	qsub -terse -o /dev/null -e /dev/null -b y true >/dev/null
	wait_until 10 test -s "$qlog"
}
