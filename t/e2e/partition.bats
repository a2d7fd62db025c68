#!/usr/bin/env bats
# partition.bats: two masters and three execds, each a host in its own network namespace on one bridge (sandbox addresses 198.18.0.0/24), munge on every link: a cut between the masters only changes nothing and loses no write; a primary cut off from everything is replaced, stops accepting writes, and once healed rejoins as standby with the same database (qmaster --dump).

load helpers
load netns

setup_file() { netns_cluster_start nqp; }
teardown_file() { netns_cluster_stop; }

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
	on_m 1 qconf -smasters | grep -Eq "catching the standby up|alone|standby not heard for"
	grep -q "asking the execds to elect us" "$CLUSTER/qmaster-2.log"
	! grep -q "votes for us" "$CLUSTER/qmaster-2.log" || false
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
	log0=$(wc -l < "$CLUSTER/qmaster-1.log")
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
	on_m 1 qconf -smasters --json | grep -q '"writable": false'
	# Its view of the standby it cannot reach is not "in sync".
	on_m 1 qconf -smasters > "$CLUSTER/sm-iso"
	cat "$CLUSTER/sm-iso" >&3
	! grep -q "in sync" "$CLUSTER/sm-iso" || false
	grep -q "standby not heard for [0-9]* s" "$CLUSTER/sm-iso"
	# Clients it sends away cost one log line a minute, not one each: a
	# qstat there retries hundreds of times in a few seconds.
	log1=$(wc -l < "$CLUSTER/qmaster-1.log")
	on_m 1 timeout 5 qstat >/dev/null 2>&1 || true
	tail -n +"$((log1 + 1))" "$CLUSTER/qmaster-1.log" | { grep -v "execd\[" || true; } > "$CLUSTER/log-iso"
	sed 's/^/#: /' "$CLUSTER/log-iso" >&3
	[ "$(wc -l < "$CLUSTER/log-iso")" -le 2 ]
	tail -n +"$log0" "$CLUSTER/qmaster-1.log" | grep -q "sent to another master"
	! tail -n +"$log0" "$CLUSTER/qmaster-1.log" | grep -q "refused before authentication" || false
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
