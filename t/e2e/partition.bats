#!/usr/bin/env bats
# partition.bats: two masters and three execds, each a host in its own network namespace on one bridge (sandbox addresses 198.18.0.0/24), munge on every link: a cut between the masters only changes nothing and loses no write; a primary cut off from everything is replaced, stops accepting writes, and once healed rejoins as standby with the same database (qmaster --dump).

load helpers

# Hosts: m1 (198.18.0.1, first primary), m2 (198.18.0.2), the execds
# a, b, c (198.18.0.11-13).  Each has a veth to the bridge in the switch's
# namespace; dropping a host's port there cuts it off from everything.
setup_file() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v sqlite3 >/dev/null; then
		NOWQ_SKIP="needs root, ip(8) and sqlite3 to build hosts in network namespaces"
		return 0
	fi
	export P=nqp$$
	if ! ip netns add "${P}sw" 2>/dev/null; then
		NOWQ_SKIP="cannot create network namespaces here (ip netns add failed)"
		return 0
	fi
	ip -n "${P}sw" link add br0 type bridge
	ip -n "${P}sw" link set br0 up
	local h n=0
	for h in m1 m2 a b c; do
		case $h in m1) n=1 ;; m2) n=2 ;; a) n=11 ;; b) n=12 ;; c) n=13 ;; esac
		ip netns add "$P$h"
		ip -n "$P$h" link set lo up
		ip link add "e$h$$" netns "$P$h" type veth peer name "s$h" netns "${P}sw"
		ip -n "${P}sw" link set "s$h" master br0
		ip -n "${P}sw" link set "s$h" up
		ip -n "$P$h" addr add "198.18.0.$n/24" dev "e$h$$"
		ip -n "$P$h" link set "e$h$$" up
	done
	if ! munge_start realm; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	CLUSTER=$(mktemp -d /tmp/nowq-part.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	local m
	for m in 1 2; do
		cat > "$CLUSTER/qmaster-$m.conf" <<EOF
spool_dir = "$CLUSTER/qmaster-$m"
listen = "198.18.0.$m:7444"
unix_socket = ""
auth = "munge"
munge_socket = "$MUNGE_DIR/realm/sock"
log_file = "$CLUSTER/qmaster-$m.log"
allow_root_jobs = true
masters = {"198.18.0.1:7444", "198.18.0.2:7444"}
queue "all.q" {}
EOF
	done
	for h in a b c; do
		cat > "$CLUSTER/execd-$h.ini" <<EOF
[execd]
name = node$h
masters = 198.18.0.1:7444, 198.18.0.2:7444
spool_dir = $CLUSTER/execd-$h
slots = 2
load_threshold = none
auth = munge
munge_socket = $MUNGE_DIR/realm/sock
log_file = $CLUSTER/execd-$h.log
EOF
	done
	ip netns exec "${P}m1" qmaster -c "$CLUSTER/qmaster-1.conf"
	ip netns exec "${P}m2" qmaster -c "$CLUSTER/qmaster-2.conf"
	for h in a b c; do
		ip netns exec "$P$h" execd -c "$CLUSTER/execd-$h.ini"
	done
	wait_until 30 in_sync
	for h in a b c; do
		wait_until 30 host_idle "node$h"
	done
}

teardown_file() {
	if [ -n "${CLUSTER:-}" ]; then
		local p
		for p in "$CLUSTER"/*/*.pid; do
			[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
		done
		wait_until 15 bash -c "! ls $CLUSTER/*/*.pid >/dev/null 2>&1" || true
		rm -rf "$CLUSTER"
	fi
	munge_stop
	local h
	for h in m1 m2 a b c sw; do
		[ -n "${P:-}" ] && ip netns del "$P$h" 2>/dev/null
	done
	true
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

# A test that failed half-way leaves no submitter behind and no cut.
teardown() {
	[ -n "${CLUSTER:-}" ] && touch "$CLUSTER/stop"
	[ -n "${spid:-}" ] && wait "$spid" 2>/dev/null
	ip -n "${P}m1" route del blackhole 198.18.0.2/32 2>/dev/null
	ip -n "${P}m2" route del blackhole 198.18.0.1/32 2>/dev/null
	ip -n "${P}sw" link set sm1 up 2>/dev/null
	true
}

# A client on host a, trying the masters in order (or as given).
on_a() {
	ip netns exec "${P}a" env NOWQ_MASTER="${MASTERS:-198.18.0.1:7444,198.18.0.2:7444}" \
		MUNGE_SOCKET="$MUNGE_DIR/realm/sock" "$@"
}
# A client on a master's own host, asking that master only.
on_m() {
	local m=$1
	shift
	ip netns exec "${P}m$m" env NOWQ_MASTER="198.18.0.$m:7444" MUNGE_SOCKET="$MUNGE_DIR/realm/sock" "$@"
}
host_idle() { [ "$(on_a qhost | awk -v h="$1" '$1 == h { print $7 }')" = idle ]; }
# in_sync [M]: the primary (master M) has its standby in sync.
in_sync() { on_m "${1:-1}" qconf -sm | grep -q "in sync"; }
# master_is M ROLE [EPOCH]: master M says it is ROLE (in EPOCH).
master_is() {
	on_m "$1" qconf -sm --json | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["masters"] if m.get("self")][0]
sys.exit(0 if m["role"] == sys.argv[1] and (len(sys.argv) < 3 or m["epoch"] == int(sys.argv[2])) else 1)
' "${@:2}"
}
epoch_of() {
	on_m "$1" qconf -sm --json | python3 -c '
import json, sys
print([m for m in json.load(sys.stdin)["masters"] if m.get("self")][0]["epoch"])'
}
# The job ids in master M's database, in comm's order.
ids_in() { sqlite3 "$CLUSTER/qmaster-$1/nowq.db" "SELECT id FROM jobs" | sort; }

# submitter FILE: held submissions from host a until $CLUSTER/stop exists;
# each id is written once qsub printed it (acknowledged).
submitter() {
	local f=$1 id
	while [ -d "$CLUSTER" ] && [ ! -e "$CLUSTER/stop" ]; do
		if id=$(on_a timeout 40 qsub -terse -h -o /dev/null -e /dev/null -b y true 2>/dev/null); then
			echo "$id" >> "$f"
		fi
	done
}

acked_check() {
	local acked=$1 m
	sort "$acked" > "$acked.sorted"
	[ -z "$(uniq -d "$acked.sorted")" ]
	for m in "${@:2}"; do
		ids_in "$m" > "$CLUSTER/have-$m"
		comm -23 "$acked.sorted" "$CLUSTER/have-$m" > "$CLUSTER/lost-$m"
		echo "# master $m: $(wc -l < "$acked.sorted") acknowledged, $(wc -l < "$CLUSTER/lost-$m") missing" >&3
		[ ! -s "$CLUSTER/lost-$m" ]
	done
}

@test "cut only the link between the masters: no failover, the primary goes on without the standby, no write lost" {
	e=$(epoch_of 1)
	acked="$CLUSTER/acked-cut"
	: > "$acked"
	rm -f "$CLUSTER/stop"
	submitter "$acked" 3>&- &
	spid=$!
	wait_until 60 test -s "$acked"
	# Each master drops what it would send to the other.
	ip -n "${P}m1" route add blackhole 198.18.0.2/32
	ip -n "${P}m2" route add blackhole 198.18.0.1/32
	# The standby asks for votes, but every execd still hears the primary.
	sleep 8
	master_is 1 primary "$e"
	master_is 2 standby
	# It goes on without waiting for the standby's acknowledgements.
	on_m 1 qconf -sm | grep -Eq "catching the standby up|alone"
	grep -q "asking the execds to elect us" "$CLUSTER/qmaster-2.log"
	! grep -q "votes for us" "$CLUSTER/qmaster-2.log"
	n=$(wc -l < "$acked")
	wait_until 60 bash -c "[ \$(wc -l < $acked) -gt $((n + 3)) ]"
	ip -n "${P}m1" route del blackhole 198.18.0.2/32
	ip -n "${P}m2" route del blackhole 198.18.0.1/32
	touch "$CLUSTER/stop"
	wait "$spid" || true
	wait_until 30 in_sync
	master_is 1 primary "$e"
	acked_check "$acked" 1 2
	# Not only the same jobs: the same rows in every table.
	same_dumps "$CLUSTER/qmaster-1/nowq.db" "$CLUSTER/qmaster-2/nowq.db"
}

@test "isolate the primary: the standby takes over, the old primary stops accepting writes and rejoins as standby when healed" {
	e=$(epoch_of 1)
	acked="$CLUSTER/acked-iso"
	: > "$acked"
	rm -f "$CLUSTER/stop"
	# Clients try the standby's address first once the primary is gone:
	# a connection to a cut-off host takes seconds to fail.
	MASTERS="198.18.0.2:7444,198.18.0.1:7444" submitter "$acked" 3>&- &
	spid=$!
	wait_until 60 test -s "$acked"
	ip -n "${P}sw" link set sm1 down
	t0=$(date +%s)
	wait_until 30 master_is 2 primary $((e + 1))
	echo "# the standby is primary in epoch $((e + 1)) after $(( $(date +%s) - t0 )) s" >&3
	# Cut off from the standby and every execd, the old primary takes no
	# write once its leases (failover_timeout, 2 s) are gone.
	sleep 3
	run on_m 1 timeout 60 qsub -terse -h -o /dev/null -e /dev/null -b y true
	echo "# on the old primary: $output" >&3
	[ "$status" -ne 0 ]
	on_m 1 qconf -sm --json | grep -q '"writable": false'
	n=$(wc -l < "$acked")
	wait_until 60 bash -c "[ \$(wc -l < $acked) -gt $((n + 3)) ]"
	ip -n "${P}sw" link set sm1 up
	wait_until 60 master_is 1 standby
	grep -q "stepping down from epoch $e" "$CLUSTER/qmaster-1.log"
	touch "$CLUSTER/stop"
	wait "$spid" || true
	wait_until 30 in_sync 2
	master_is 2 primary $((e + 1))
	# Every acknowledged job is on the new primary and, after the rejoin,
	# on the old one; the two databases are the same, row for row.
	acked_check "$acked" 2 1
	same_dumps "$CLUSTER/qmaster-2/nowq.db" "$CLUSTER/qmaster-1/nowq.db"
}
