#!/usr/bin/env bats
# multihost.bats: three "hosts" in network namespaces joined by veth pairs (sandbox addresses 198.18.0.0/15): the master in one, an execd in each other, munge over TCP with two munged of one key; jobs run on both hosts, a remote client submits, and replayed or foreign credentials are refused across the network.

load helpers

setup_file() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
		NOWQ_SKIP="needs root and ip(8) to create network namespaces"
		return 0
	fi
	export NSM=nqm$$ NSA=nqa$$ NSB=nqb$$
	if ! ip netns add "$NSM" 2>/dev/null; then
		NOWQ_SKIP="cannot create network namespaces here (ip netns add failed)"
		return 0
	fi
	ip netns add "$NSA"
	ip netns add "$NSB"
	for ns in "$NSM" "$NSA" "$NSB"; do
		ip -n "$ns" link set lo up
	done
	# master 198.18.1.1 -- 198.18.1.2 host a; master 198.18.2.1 -- 198.18.2.2 host b
	ip link add "m$$a" netns "$NSM" type veth peer name "a$$" netns "$NSA"
	ip link add "m$$b" netns "$NSM" type veth peer name "b$$" netns "$NSB"
	ip -n "$NSM" addr add 198.18.1.1/24 dev "m$$a"
	ip -n "$NSM" addr add 198.18.2.1/24 dev "m$$b"
	ip -n "$NSA" addr add 198.18.1.2/24 dev "a$$"
	ip -n "$NSB" addr add 198.18.2.2/24 dev "b$$"
	ip -n "$NSM" link set "m$$a" up
	ip -n "$NSM" link set "m$$b" up
	ip -n "$NSA" link set "a$$" up
	ip -n "$NSB" link set "b$$" up
	if ! munge_start master; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	# The exec hosts' munged shares the master's key: one realm, two daemons.
	munge_start nodes "$MUNGE_DIR/master/key"
	munge_start foreign
	CLUSTER=$(mktemp -d /tmp/nowq-multi.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER PORT=7444
	cat > "$CLUSTER/qmaster.conf" <<EOF
spool_dir = "$CLUSTER/qmaster"
listen = "0.0.0.0:$PORT"
unix_socket = ""
auth = "munge"
munge_socket = "$MUNGE_DIR/master/sock"
log_file = "$CLUSTER/qmaster.log"
allow_root_jobs = true
queue "all.q" {}
EOF
	for h in a b; do
		n=1
		[ "$h" = b ] && n=2
		munge_execd_ini "$CLUSTER/execd-$h.ini" "node$h" "198.18.$n.1:$PORT" \
		    "$CLUSTER/execd-$h" "$MUNGE_DIR/nodes/sock" "$CLUSTER/execd-$h.log"
	done
	ip netns exec "$NSM" qmaster -c "$CLUSTER/qmaster.conf"
	ip netns exec "$NSA" execd -c "$CLUSTER/execd-a.ini"
	ip netns exec "$NSB" execd -c "$CLUSTER/execd-b.ini"
	wait_until 20 host_idle nodea
	wait_until 20 host_idle nodeb
}

teardown_file() {
	if [ -n "${CLUSTER:-}" ]; then
		for p in "$CLUSTER"/execd-a/execd.pid "$CLUSTER"/execd-b/execd.pid "$CLUSTER"/qmaster/qmaster.pid; do
			[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
		done
		wait_until 10 bash -c "! ls $CLUSTER/*/*.pid >/dev/null 2>&1" || true
		rm -rf "$CLUSTER"
	fi
	munge_stop
	for ns in "${NSM:-}" "${NSA:-}" "${NSB:-}"; do
		[ -n "$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	true
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

# Commands on the master's host, and on exec host a as a remote client.
on_master() { ip netns exec "$NSM" env NOWQ_MASTER="127.0.0.1:$PORT" MUNGE_SOCKET="$MUNGE_DIR/master/sock" "$@"; }
on_a() { ip netns exec "$NSA" env NOWQ_MASTER="198.18.1.1:$PORT" MUNGE_SOCKET="$MUNGE_DIR/nodes/sock" "$@"; }
host_idle() { [ "$(on_master qhost | awk -v h="$1" '$1 == h { print $7 }')" = idle ]; }
finished_on() { on_master qacct -j "$1" 2>/dev/null | awk '$1 == "hostname" { print $2 }' | grep -qx "$2"; }

@test "the execds of two hosts register over the network with munge, and jobs run on each" {
	a=$(on_master qsub -terse -l hosts=nodea -o /dev/null -e /dev/null -b y true)
	b=$(on_master qsub -terse -l hosts=nodeb -o /dev/null -e /dev/null -b y true)
	wait_until 30 finished_on "$a" nodea
	wait_until 30 finished_on "$b" nodeb
	grep -q "registered with master 198.18.1.1:$PORT" "$CLUSTER/execd-a.log"
	grep -q "registered with master 198.18.2.1:$PORT" "$CLUSTER/execd-b.log"
}

@test "a client on another host submits over TCP, known by its credential" {
	id=$(on_a qsub -terse -l hosts=nodeb -o /dev/null -e /dev/null -b y true)
	wait_until 30 finished_on "$id" nodeb
	# Without munge the master does not take a claimed uid.
	run ip netns exec "$NSA" env NOWQ_MASTER="198.18.1.1:$PORT" MUNGE_SOCKET=/nonexistent qstat
	[ "$status" -ne 0 ]
	[[ "$output" == *"this master wants a munge credential"* ]]
}

@test "a replayed, a foreign-key and a forged credential are refused across the network" {
	hello='{"type":"HELLO","version":1,"role":"client","auth":{"method":"munge","cred":"%s"},"uid":0}'
	cred=$(munge_cred nodes nowq:hello:client)
	run on_a python3 "$NOWQ_E2E/rawreq.py" "198.18.1.1:$PORT" "$(printf "$hello" "$cred")"
	[[ "$output" == *'"ok": true'* ]]
	run on_a python3 "$NOWQ_E2E/rawreq.py" "198.18.1.1:$PORT" "$(printf "$hello" "$cred")"
	[[ "$output" == *'replayed munge credential'* ]]
	run on_a python3 "$NOWQ_E2E/rawreq.py" "198.18.1.1:$PORT" \
		"$(printf "$hello" "$(munge_cred foreign nowq:hello:client)")"
	[[ "$output" == *'invalid munge credential'* ]]
	forged=$(munge_cred nodes nowq:hello:client | sed 's/^\(MUNGE:.\{20\}\)\(.\)/\1\2\2/')
	run on_a python3 "$NOWQ_E2E/rawreq.py" "198.18.1.1:$PORT" "$(printf "$hello" "$forged")"
	[[ "$output" == *'invalid munge credential'* ]]
	grep -q "198.18.1.2:.*refused: replayed munge credential" "$CLUSTER/qmaster.log"
	grep -q "198.18.1.2:.*refused: invalid munge credential" "$CLUSTER/qmaster.log"
	# And both hosts still work.
	id=$(on_master qsub -terse -l hosts=nodea -o /dev/null -e /dev/null -b y true)
	wait_until 30 finished_on "$id" nodea
}
