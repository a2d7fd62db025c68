# netns.bash: a cluster of real hosts on one machine for partition.bats and chaos.bats: two masters and three execds, each in its own network namespace on one bridge (sandbox addresses 198.18.0.0/24), munge on every link.

# Hosts: m1 (198.18.0.1, first primary), m2 (198.18.0.2), the execds
# a, b, c (198.18.0.11-13).  Each has a veth to the bridge in the switch's
# namespace; dropping a host's port there cuts it off from everything.

# netns_host NAME N: namespace $P$NAME on the bridge of ${P}sw, at 198.18.0.N.
netns_host() {
	local h=$1 n=$2
	ip netns add "$P$h"
	ip -n "$P$h" link set lo up
	ip link add "e$h$$" netns "$P$h" type veth peer name "s$h" netns "${P}sw"
	ip -n "${P}sw" link set "s$h" master br0
	ip -n "${P}sw" link set "s$h" up
	ip -n "$P$h" addr add "198.18.0.$n/24" dev "e$h$$"
	ip -n "$P$h" link set "e$h$$" up
}

netns_cluster_start() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v sqlite3 >/dev/null; then
		NOWQ_SKIP="needs root, ip(8) and sqlite3 to build hosts in network namespaces"
		return 0
	fi
	export P=$1$$
	if ! ip netns add "${P}sw" 2>/dev/null; then
		NOWQ_SKIP="cannot create network namespaces here (ip netns add failed)"
		return 0
	fi
	ip -n "${P}sw" link add br0 type bridge
	ip -n "${P}sw" link set br0 up
	local h n=0
	for h in m1 m2 a b c; do
		case $h in m1) n=1 ;; m2) n=2 ;; a) n=11 ;; b) n=12 ;; c) n=13 ;; esac
		netns_host "$h" "$n"
	done
	if ! munge_start realm; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	CLUSTER=$(mktemp -d /tmp/nowq-$1.XXXXXX)
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
		munge_execd_ini "$CLUSTER/execd-$h.ini" "node$h" "198.18.0.1:7444, 198.18.0.2:7444" \
		    "$CLUSTER/execd-$h" "$MUNGE_DIR/realm/sock" "$CLUSTER/execd-$h.log"
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

netns_cluster_stop() {
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
in_sync() { on_m "${1:-1}" qconf -smasters | grep -q "in sync"; }
# master_is M ROLE [EPOCH]: master M says it is ROLE (in EPOCH).
master_is() {
	on_m "$1" qconf -smasters --json | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["masters"] if m.get("self")][0]
sys.exit(0 if m["role"] == sys.argv[1] and (len(sys.argv) < 3 or m["epoch"] == int(sys.argv[2])) else 1)
' "${@:2}"
}
epoch_of() {
	on_m "$1" qconf -smasters --json | python3 -c '
import json, sys
print([m for m in json.load(sys.stdin)["masters"] if m.get("self")][0]["epoch"])'
}
