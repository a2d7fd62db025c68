#!/usr/bin/env bats
# chaos.bats: a seeded random sequence of kill -9s and restarts of either master and of network cuts and heals, among two masters and three execds in network namespaces, under a stream of submissions, with the failover invariants checked after every step (NOWQ_CHAOS_SEED replays a sequence).

load helpers
load netns

setup_file() { netns_cluster_start nqc; }

teardown_file() {
	if [ -n "${CLUSTER:-}" ]; then
		touch "$CLUSTER/stop"
		wait_until 60 test -e "$CLUSTER/stopped" || true
	fi
	netns_cluster_stop
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

# A step that failed half-way leaves no cut behind for the teardown.
teardown() {
	heal
}

heal() {
	local h
	# What is not cut is fine as it is.
	ip -n "${P}m1" route del blackhole 198.18.0.2/32 2>/dev/null || true
	ip -n "${P}m2" route del blackhole 198.18.0.1/32 2>/dev/null || true
	for h in m1 m2 a b c; do
		ip -n "${P}sw" link set "s$h" up 2>/dev/null || true
	done
}

# submitter: non-rerunnable jobs from host a until $CLUSTER/stop exists;
# each appends its id to $CLUSTER/ran when it runs, and its id goes to
# $CLUSTER/acked once qsub printed it (what the client saw).  While
# $CLUSTER/pause exists it submits nothing and says so with
# $CLUSTER/paused.  The masters are tried in either order: a connection
# to a cut-off one takes seconds to fail.
submitter() {
	local id order
	while [ -d "$CLUSTER" ] && [ ! -e "$CLUSTER/stop" ]; do
		if [ -e "$CLUSTER/pause" ]; then
			touch "$CLUSTER/paused"
			sleep 0.1
			continue
		fi
		rm -f "$CLUSTER/paused"
		order="198.18.0.1:7444,198.18.0.2:7444"
		(( RANDOM % 2 )) && order="198.18.0.2:7444,198.18.0.1:7444"
		if id=$(MASTERS=$order on_a timeout 40 qsub -terse -r n -o /dev/null -e /dev/null \
			-b y sh -c "echo \$JOB_ID >> $CLUSTER/ran" 2>/dev/null); then
			echo "$id" >> "$CLUSTER/acked"
		fi
	done
	touch "$CLUSTER/stopped"
}

# writable M: master M answers on its own host and says it takes writes.
writable() {
	on_m "$1" timeout 5 qconf -smasters --json 2>/dev/null | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["masters"] if m.get("self")][0]
sys.exit(0 if m.get("writable") else 1)' 2>/dev/null
}
writers() {
	local m
	for m in 1 2; do
		writable "$m" && echo "$m"
	done
	true
}
# Invariant: never two masters taking writes, whatever is cut or dead.
at_most_one_writer() {
	local w
	w=$(writers)
	if [ "$(echo $w | wc -w)" -gt 1 ]; then
		echo "# both masters take writes: $w" >&3
		return 1
	fi
}
# settled: one writable primary whose standby is in sync; prints it.
primary_now() {
	local w
	w=$(writers)
	[ "$(echo $w | wc -w)" = 1 ] && in_sync "$w" && echo "$w"
}
pid_of() { cat "$CLUSTER/qmaster-$1/qmaster.pid"; }
restart() { ip netns exec "${P}m$1" qmaster -c "$CLUSTER/qmaster-$1.conf"; }
nothing_runs() { [ -z "$(MASTERS="198.18.0.$1:7444" on_a qstat -s r | awk 'NR > 2')" ]; }

# The invariants once healed, with the submissions paused so that the two
# databases can come to rest: every acknowledged job is on the writable
# primary; the standby's dump is the primary's; no job ran twice.
check_healed() {
	local p o
	wait_until 90 primary_now
	p=$(primary_now)
	o=$((3 - p))
	touch "$CLUSTER/pause"
	wait_until 60 test -e "$CLUSTER/paused" -o -e "$CLUSTER/stopped"
	wait_until 30 nothing_runs "$p"
	sort "$CLUSTER/acked" > "$CLUSTER/acked.sorted"
	sqlite3 "$CLUSTER/qmaster-$p/nowq.db" "SELECT id FROM jobs" | sort > "$CLUSTER/have"
	comm -23 "$CLUSTER/acked.sorted" "$CLUSTER/have" > "$CLUSTER/lost"
	sort "$CLUSTER/ran" | uniq -d > "$CLUSTER/twice"
	echo "#   primary m$p: $(wc -l < "$CLUSTER/acked.sorted") acknowledged," \
		"$(wc -l < "$CLUSTER/lost") missing, $(wc -l < "$CLUSTER/ran") runs," \
		"$(wc -l < "$CLUSTER/twice") twice" >&3
	[ ! -s "$CLUSTER/lost" ]
	[ ! -s "$CLUSTER/twice" ]
	same_dumps "$CLUSTER/qmaster-$p/nowq.db" "$CLUSTER/qmaster-$o/nowq.db"
	rm -f "$CLUSTER/pause"
}

@test "a seeded random sequence of kills, restarts, cuts and heals: one writer at a time, no acknowledged job lost, the dumps equal once healed, no job run twice" {
	local seed=${NOWQ_CHAOS_SEED:-$(( $(date +%s) % 32768 ))}
	local steps=${NOWQ_CHAOS_STEPS:-10} i act p o h
	echo "# seed $seed (replay: NOWQ_CHAOS_SEED=$seed), $steps steps" >&3
	RANDOM=$seed
	: > "$CLUSTER/acked"
	: > "$CLUSTER/ran"
	chmod 666 "$CLUSTER/ran"
	submitter 3>&- &
	wait_until 60 test -s "$CLUSTER/acked"
	for ((i = 1; i <= steps; i++)); do
		wait_until 90 primary_now
		p=$(primary_now)
		o=$((3 - p))
		act=$((RANDOM % 6))
		case $act in
		0)
			echo "# step $i: kill -9 the primary m$p, restart it" >&3
			kill -9 "$(pid_of "$p")"
			wait_until 30 master_is "$o" primary
			at_most_one_writer
			restart "$p"
			;;
		1)
			echo "# step $i: kill -9 the standby m$o, restart it" >&3
			kill -9 "$(pid_of "$o")"
			sleep $((RANDOM % 3))
			at_most_one_writer
			restart "$o"
			;;
		2)
			echo "# step $i: cut the primary m$p off from everything, heal" >&3
			ip -n "${P}sw" link set "sm$p" down
			wait_until 30 master_is "$o" primary
			# The old primary's leases (failover_timeout, 2 s) run out.
			sleep 3
			at_most_one_writer
			if writable "$p"; then
				echo "# the cut-off old primary m$p still takes writes" >&3
				false
			fi
			heal
			;;
		3)
			echo "# step $i: cut the standby m$o off from everything, heal" >&3
			ip -n "${P}sw" link set "sm$o" down
			sleep $((2 + RANDOM % 3))
			at_most_one_writer
			heal
			;;
		4)
			echo "# step $i: cut only the link between the masters, heal" >&3
			ip -n "${P}m1" route add blackhole 198.18.0.2/32
			ip -n "${P}m2" route add blackhole 198.18.0.1/32
			sleep $((2 + RANDOM % 4))
			at_most_one_writer
			heal
			;;
		5)
			h=$(echo a b c | cut -d' ' -f$((1 + RANDOM % 3)))
			echo "# step $i: cut execd $h off from everything, heal" >&3
			ip -n "${P}sw" link set "s$h" down
			sleep $((2 + RANDOM % 3))
			at_most_one_writer
			heal
			;;
		esac
		check_healed
	done
	touch "$CLUSTER/stop"
	wait_until 60 test -e "$CLUSTER/stopped"
	check_healed
}
