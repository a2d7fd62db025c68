#!/usr/bin/env bats
# query.bats: the query thread (qmaster.conf query_thread): listings answered beside the loop page after page, a connection that asks for more going back to the loop in order, a bad frame there, and query_thread = off.

load helpers

WIRE="$BATS_TEST_DIRNAME/wire.py"

setup_file() {
	cluster_start
	# The handoffs are logged at debug level.
	echo 'log_level = "debug"' >> "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

teardown_file() { cluster_stop; }

sock() { echo "unix:$CLUSTER/qmaster.sock"; }
log() { cat "$CLUSTER/qmaster/qmaster.log"; }
# The scheduling policies of the master's threads (5: SCHED_IDLE).
policies() { for t in /proc/"$(cat "$CLUSTER/qmaster/qmaster.pid")"/task/*; do awk '{ print $41 }' "$t/stat"; done | sort | tr '\n' ' '; }
handoffs() { log | grep -c ': to the query thread' || true; }
returns() { log | grep -c ': back from the query thread' || true; }

@test "the query thread runs, and a listing asked first is its, page after page on one connection" {
	log | grep -q 'query thread started (idle priority)'
	# The loop at the normal policy, the thread at SCHED_IDLE.
	[ "$(policies)" = "0 5 " ]
	a=$(qsub -terse -h -b y true)
	b=$(qsub -terse -h -b y true)
	c=$(qsub -terse -h -b y true)
	n0=$(handoffs)
	run python3 "$WIRE" pipe "$(sock)" '{"type":"STATUS","brief":true,"states":"p","limit":2}' \
		'{"type":"STATUS","brief":true,"states":"p","limit":2,"after":'"$b"'}'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	# The first page: a and b, and where to go on; the second: c alone.
	echo "${lines[1]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["seq"] == 2 and r["ok"] and r["next"] == '"$b"' and [x[0] for x in r["rows"]] == ['"$a, $b"'], r'
	echo "${lines[2]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["seq"] == 3 and r["ok"] and "next" not in r and [x[0] for x in r["rows"]] == ['"$c"'], r'
	[ "$(handoffs)" -eq $((n0 + 1)) ]
	# What qstat prints comes the same way.
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $c "* ]]
	[ "$(handoffs)" -ge $((n0 + 2)) ]
	qdel "$a" "$b" "$c" >/dev/null
}

@test "a submission after a listing on the same connection goes back to the loop, answered in order" {
	n0=$(returns)
	run python3 "$WIRE" pipe "$(sock)" '{"type":"STATUS","brief":true,"states":"p"}' \
		'{"type":"SUBMIT","job":{"script":"true","hold":1,"name":"piped"}}' \
		'{"type":"STATUS","brief":true,"states":"p"}'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	for i in 1 2 3; do
		echo "${lines[$i]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["seq"] == '"$((i + 1))"' and r["ok"], r'
	done
	id=$(echo "${lines[2]}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
	# The listing after the submission shows it: the loop answered it after the commit.
	echo "${lines[3]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert '"$id"' in [x[0] for x in r["rows"]], r'
	[ "$(returns)" -eq $((n0 + 1)) ]
	qdel "$id" >/dev/null
}

@test "a bad frame after a listing is refused in one reply and closes only that connection" {
	run python3 "$WIRE" pipe "$(sock)" '{"type":"STATUS","brief":true}' 'not json'
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 3 ]
	echo "${lines[2]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert not r["ok"] and r["error"] == "protocol", r'
	run qstat -u '*'
	[ "$status" -eq 0 ]
}

@test "query_thread takes idle, normal or off; a wrong value is refused with the reason" {
	cp "$CLUSTER/qmaster.conf" "$CLUSTER/qmaster.conf.good"
	echo 'query_thread = "fast"' >> "$CLUSTER/qmaster.conf"
	run qconf -reload
	[ "$status" -ne 0 ]
	[[ "$output" == *'query_thread "fast" is not "idle", "normal" or "off"'* ]]
	cp "$CLUSTER/qmaster.conf.good" "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
}

@test "query_thread = normal runs the thread at the loop's priority" {
	nowq stop --dir "$CLUSTER" >/dev/null
	echo 'query_thread = "normal"' >> "$CLUSTER/qmaster.conf"
	: > "$CLUSTER/qmaster/qmaster.log"
	nowq start --dir "$CLUSTER" >/dev/null
	log | grep -q 'query thread started (normal priority)'
	[ "$(policies)" = "0 0 " ]
	id=$(qsub -terse -h -b y true)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	[ "$(handoffs)" -ge 1 ]
	qdel "$id" >/dev/null
}

@test "with query_thread = off the loop answers listings itself" {
	nowq stop --dir "$CLUSTER" >/dev/null
	echo 'query_thread = "off"' >> "$CLUSTER/qmaster.conf"
	: > "$CLUSTER/qmaster/qmaster.log"
	nowq start --dir "$CLUSTER" >/dev/null
	[ "$(policies)" = "0 " ]
	id=$(qsub -terse -h -b y true)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	! log | grep -q 'query thread started'
	[ "$(handoffs)" -eq 0 ]
	qdel "$id" >/dev/null
}
