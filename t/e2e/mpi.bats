#!/usr/bin/env bats
# mpi.bats: Open MPI's mpirun inside qsub -pe across two exec hosts of a network-namespace cluster (each with its own host name): it reads PE_HOSTFILE and starts its daemon on the other host with qrsh -inherit, with no host file and no ssh; every rank runs on a granted host, NSLOTS ranks in all.

load helpers
load netns

# Hosts on one bridge (sandbox addresses), named as netns.bash names its
# (whose netns_cluster_stop ends this one): the master m1, 198.18.0.1, the
# exec hosts nodea 198.18.0.11 and nodeb 198.18.0.12, each in its own
# network and UTS namespace, and each resolving the others' names through
# /etc/netns/NS/hosts (ip netns exec mounts it over /etc/hosts).
setup_file() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
		NOWQ_SKIP="needs root, ip(8) and unshare(1) to build hosts in namespaces"
		return 0
	fi
	if ! command -v mpicc >/dev/null; then
		# As test.sh installs it: a fresh machine may not have it yet.
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null 2>&1 || true
	fi
	if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
		NOWQ_SKIP="Open MPI (openmpi-bin, libopenmpi-dev) is not installed"
		return 0
	fi
	export P=nqmpi$$
	if ! ip netns add "${P}sw" 2>/dev/null; then
		NOWQ_SKIP="cannot create network namespaces here (ip netns add failed)"
		return 0
	fi
	ip -n "${P}sw" link add br0 type bridge
	ip -n "${P}sw" link set br0 up
	local h n
	for h in m1 a b; do
		case $h in m1) n=1 ;; a) n=11 ;; b) n=12 ;; esac
		netns_host "$h" "$n"
		mkdir -p "/etc/netns/$P$h"
		printf '127.0.0.1 localhost\n198.18.0.1 master\n198.18.0.11 nodea\n198.18.0.12 nodeb\n' \
		    > "/etc/netns/$P$h/hosts"
	done
	if ! munge_start realm; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	CLUSTER=$(mktemp -d /tmp/nowq-mpi.XXXXXX)
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 755 "$CLUSTER" "$WORK"
	export CLUSTER WORK
	cat > "$CLUSTER/qmaster.conf" <<-EOF
	spool_dir = "$CLUSTER/qmaster"
	listen = "198.18.0.1:7444"
	unix_socket = ""
	auth = "munge"
	munge_socket = "$MUNGE_DIR/realm/sock"
	log_file = "$CLUSTER/qmaster.log"
	allow_root_jobs = true
	queue "all.q" {}
	pe "mpi" { allocation_rule = "\$round_robin"  control_slaves = true  job_is_first_task = false }
	EOF
	for h in a b; do
		munge_execd_ini "$CLUSTER/execd-$h.ini" "node$h" "198.18.0.1:7444" \
		    "$CLUSTER/execd-$h" "$MUNGE_DIR/realm/sock" "$CLUSTER/execd-$h.log"
	done
	ip netns exec "${P}m1" qmaster -c "$CLUSTER/qmaster.conf"
	for h in a b; do
		ip netns exec "$P$h" unshare --uts sh -c "hostname node$h && exec execd -c '$CLUSTER/execd-$h.ini'"
	done
	wait_until 30 host_idle nodea
	wait_until 30 host_idle nodeb
	# An MPI hello world: each rank says where it runs.
	cat > "$WORK/hello.c" <<-'C'
	#include <mpi.h>
	#include <stdio.h>
	int main(int argc, char **argv)
	{
		char host[MPI_MAX_PROCESSOR_NAME];
		int rank, size, len;
		MPI_Init(&argc, &argv);
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		MPI_Comm_size(MPI_COMM_WORLD, &size);
		MPI_Get_processor_name(host, &len);
		printf("rank %d of %d on %s\n", rank, size, host);
		MPI_Finalize();
		return 0;
	}
	C
	mpicc -o "$WORK/hello" "$WORK/hello.c"
	# Open MPI takes Grid Engine's qrsh at $SGE_ROOT/bin/$ARC/qrsh; where the
	# job's SGE_ROOT has none, the job uses this one, a link to nowq's.
	mkdir -p "$WORK/sge/bin/lx-amd64"
	ln -s "$(command -v qrsh)" "$WORK/sge/bin/lx-amd64/qrsh"
	cat > "$WORK/mpi.sh" <<-'SH'
	#!/bin/sh
	if [ ! -x "${SGE_ROOT:-/nonexistent}/bin/${ARC:-none}/qrsh" ]; then
		export SGE_ROOT=$WORK_DIR/sge ARC=lx-amd64
	fi
	echo "NSLOTS=$NSLOTS"
	cat "$PE_HOSTFILE" | sed 's/^/hostfile: /'
	exec mpirun --allow-run-as-root -np "$NSLOTS" "$WORK_DIR/hello"
	SH
	chmod 755 "$WORK/mpi.sh"
}

teardown_file() {
	netns_cluster_stop
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	[ -n "${P:-}" ] && rm -rf /etc/netns/"$P"*
	true
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

on_m() { ip netns exec "${P}m1" env NOWQ_MASTER="198.18.0.1:7444" MUNGE_SOCKET="$MUNGE_DIR/realm/sock" "$@"; }
host_idle() { [ "$(on_m qhost | awk -v h="$1" '$1 == h { print $7 }')" = idle ]; }
finished() { on_m qstat -s z | awk -v id="$1" '$1 == id { f = 1 } END { exit !f }'; }
# A job's environment for qrsh inside it: the master, munge and the programs.
job_env() {
	echo "WORK_DIR=$WORK,NOWQ_MASTER=198.18.0.1:7444,MUNGE_SOCKET=$MUNGE_DIR/realm/sock,PATH=$NOWQ_BIN:/usr/bin:/bin,OMPI_MCA_btl_tcp_if_include=198.18.0.0/24,OMPI_MCA_oob_tcp_if_include=198.18.0.0/24"
}

@test "the exec hosts have their own names and reach each other by them" {
	run ip netns exec "${P}b" getent hosts nodea
	[[ "$output" == "198.18.0.11"* ]]
	id=$(on_m qsub -terse -o "$WORK/name.out" -j y -l hosts=nodeb -b y hostname)
	wait_until 30 finished "$id"
	[ "$(cat "$WORK/name.out")" = nodeb ]
}

@test "mpirun inside qsub -pe runs NSLOTS ranks on the granted hosts, started by qrsh -inherit" {
	id=$(on_m qsub -terse -o "$WORK/mpi.out" -e "$WORK/mpi.err" -v "$(job_env)" -pe mpi 4 "$WORK/mpi.sh")
	wait_until 120 finished "$id" || { cat "$WORK/mpi.out" "$WORK/mpi.err" "$CLUSTER"/*.log >&2; false; }
	cat "$WORK/mpi.out" "$WORK/mpi.err" >&2
	grep -qx "NSLOTS=4" "$WORK/mpi.out"
	# Two slots on each host ($round_robin), nodea or nodeb first.
	[ "$(grep -c '^hostfile: node[ab] 2 all.q@node[ab] UNDEFINED$' "$WORK/mpi.out")" -eq 2 ]
	# Four ranks, 0 to 3, each on a granted host; both hosts used.
	[ "$(grep -c '^rank [0-3] of 4 on node[ab]$' "$WORK/mpi.out")" -eq 4 ]
	[ "$(sed -n 's/^rank \([0-3]\) of 4 on .*/\1/p' "$WORK/mpi.out" | sort -u | wc -l)" -eq 4 ]
	[ "$(grep -c '^rank .* on nodea$' "$WORK/mpi.out")" -eq 2 ]
	[ "$(grep -c '^rank .* on nodeb$' "$WORK/mpi.out")" -eq 2 ]
	# The daemon on the other host was a task of the job, not an ssh.
	grep -q "job $id: task 1 sent to node[ab]" "$CLUSTER/qmaster.log"
	run on_m qacct -j "$id"
	[ "$(echo "$output" | awk '$1 == "exit_status" { print $2 }')" = 0 ]
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 0 ]
}
