#!/usr/bin/env bats
# startup.bats: a qmaster that cannot start says why on the terminal that started it, not only in its log_file; it creates the folder of its unix_socket (/run/nowq after a boot, without systemd); qmaster --check on a fresh install names what is missing.

load helpers

setup() {
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	nowq start --dir "$CLUSTER" >/dev/null
	nowq stop --dir "$CLUSTER" >/dev/null
	CONF=$CLUSTER/qmaster.conf
}

teardown() {
	local p
	p=$(cat "$CLUSTER/qmaster/qmaster.pid" 2>/dev/null) && kill "$p" 2>/dev/null
	[ -z "${p:-}" ] || wait_until 10 bash -c "! kill -0 $p 2>/dev/null" || true
	rm -rf "$CLUSTER"
}

@test "a qmaster that fails after going to the background prints the reason on the terminal and in log_file" {
	rm -f "$CLUSTER"/qmaster/nowq.db*
	mkdir "$CLUSTER/qmaster/nowq.db"
	run qmaster -c "$CONF"
	[ "$status" -ne 0 ]
	[[ "$output" == *"cannot open the database in $CLUSTER/qmaster"* ]]
	grep -q "fatal: cannot open the database in $CLUSTER/qmaster" "$CLUSTER/qmaster/qmaster.log"
}

@test "qmaster creates the missing folder of its unix_socket" {
	sed -i "s|^unix_socket = .*|unix_socket = \"$CLUSTER/run/nowq/qmaster.sock\"|" "$CONF"
	run qmaster -c "$CONF"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	wait_until 10 test -S "$CLUSTER/run/nowq/qmaster.sock"
	[ "$(stat -c %a "$CLUSTER/run/nowq")" = 755 ]
}

@test "qmaster --check before the first start names the missing spool_dir, then the missing database" {
	rm -rf "$CLUSTER/qmaster"
	run qmaster -c "$CONF" --check
	[ "$status" -eq 1 ]
	[ "$output" = "qmaster: spool_dir $CLUSTER/qmaster is missing; qmaster creates it, and the database in it, at its first start" ]
	mkdir "$CLUSTER/qmaster"
	run qmaster -c "$CONF" --check
	[ "$status" -eq 1 ]
	[ "$output" = "qmaster: the database $CLUSTER/qmaster/nowq.db is missing; qmaster creates it at its first start" ]
}
