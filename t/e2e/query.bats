#!/usr/bin/env bats
# query.bats: the query thread (qmaster.conf query_thread): listings answered beside the loop page after page, a connection that asks for more going back to the loop in order, a bad frame there, the query endpoint (port + 1, the socket's path + .query) where qstat asks first and the loop sees nothing, HELLOs it leaves to the loop, qstat's fallback to the port, and query_thread = off.

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
# Clients the thread let in at the query endpoint, and those it left to the loop.
admitted() { log | grep -c ': client .* at the query endpoint' || true; }
strangers() { log | grep -c ': back from the query thread, before HELLO' || true; }
# Stops the cluster, adds a line to qmaster.conf (if given), and starts it with an empty log.
restart_with() {
	nowq stop --dir "$CLUSTER" >/dev/null
	[ -z "${1:-}" ] || echo "$1" >> "$CLUSTER/qmaster.conf"
	: > "$CLUSTER/qmaster/qmaster.log"
	nowq start --dir "$CLUSTER" >/dev/null
}
port() { sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)".*/\1/p' "$CLUSTER/qmaster.conf"; }

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
	# What qstat prints comes from the thread too, at its endpoint.
	a0=$(admitted)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $c "* ]]
	[ "$(admitted)" -eq $((a0 + 1)) ]
	qdel "$a" "$b" "$c" >/dev/null
}

@test "qstat asks at the query endpoint, over the unix socket and TCP; the thread lets it in and the loop sees nothing" {
	log | grep -q 'query thread started (idle priority), with the query endpoint'
	[ -S "$CLUSTER/qmaster.sock.query" ]
	id=$(qsub -terse -h -b y true)
	a0=$(admitted) h0=$(handoffs) r0=$(returns)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	log | grep -q "unix:pid [0-9]* uid $(id -u): client $(id -un) (uid $(id -u)) at the query endpoint"
	NOWQ_MASTER=127.0.0.1:$(port) run qstat -u '*'
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	log | grep -q "127.0.0.1:[0-9]*: client $(id -un) (uid $(id -u)) at the query endpoint"
	[ "$(admitted)" -eq $((a0 + 2)) ]
	# Neither came through the loop.
	[ "$(handoffs)" -eq "$h0" ]
	[ "$(returns)" -eq "$r0" ]
	# Its HELLO's reply says where it is: a client knows it reached a master's endpoint.
	run python3 "$BATS_TEST_DIRNAME/rawreq.py" "127.0.0.1:$(($(port) + 1))" \
		'{"type":"HELLO","version":1,"role":"client","auth":{"method":"none"},"uid":'"$(id -u)"'}'
	[ "$status" -eq 0 ]
	echo "$output" | python3 -c 'import json, sys; r = json.loads(sys.stdin.readline()); assert r["ok"] and r["endpoint"] == "query" and r["user"] == "'"$(id -un)"'", r'
	# A job's details (qstat -j) are no listing: they go to the port.
	run qstat -j "$id"
	[ "$status" -eq 0 ]
	[ "$(admitted)" -eq $((a0 + 3)) ]
	qdel "$id" >/dev/null
}

@test "a HELLO the query endpoint cannot let in goes to the loop as it came, which answers it as at the port" {
	s0=$(strangers)
	# A uid this connection's owner does not have: the loop's refusal, with its reason.
	run python3 "$BATS_TEST_DIRNAME/rawreq.py" "127.0.0.1:$(($(port) + 1))" \
		'{"type":"HELLO","version":1,"role":"client","auth":{"method":"none"},"uid":4242}'
	[ "$status" -eq 0 ]
	[[ "$output" == *'cannot confirm uid 4242 for this connection'* ]]
	# "any" (qconf -smasters asks whichever master): the loop lets it in, and says where it came.
	run python3 "$BATS_TEST_DIRNAME/rawreq.py" "127.0.0.1:$(($(port) + 1))" \
		'{"type":"HELLO","version":1,"role":"client","auth":{"method":"none"},"uid":'"$(id -u)"',"any":true}' \
		'{"type":"STATUS","brief":true}'
	[ "$status" -eq 0 ]
	echo "$output" | python3 -c 'import json, sys; h, r = [json.loads(l) for l in sys.stdin]; assert h["ok"] and h["endpoint"] == "query" and r["ok"], (h, r)'
	# An execd has no business there: the loop refuses it as at the port.
	run python3 "$BATS_TEST_DIRNAME/rawreq.py" "127.0.0.1:$(($(port) + 1))" '{"type":"HELLO","version":1,"role":"execd"}'
	[ "$status" -eq 0 ]
	[[ "$output" == *'HELLO without a valid uid'* ]]
	[ "$(strangers)" -eq $((s0 + 3)) ]
	# A SUBMIT after a HELLO let in there goes to the loop, which takes it.
	run python3 "$WIRE" pipe "unix:$CLUSTER/qmaster.sock.query" '{"type":"SUBMIT","job":{"script":"true","hold":1,"name":"atquery"}}'
	[ "$status" -eq 0 ]
	echo "${lines[1]}" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["ok"] and r["id"] > 0, r'
	qdel "$(echo "${lines[1]}" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')" >/dev/null
	run qstat
	[ "$status" -eq 0 ]
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

@test "port + 1 held by something that is no master's endpoint: the master says so, and qstat asks at the port" {
	nowq stop --dir "$CLUSTER" >/dev/null
	# It answers every HELLO "ok", as a master would, but not as an endpoint.
	python3 -c '
import json, socket, struct, sys
lis = socket.socket()
lis.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lis.bind(("127.0.0.1", int(sys.argv[1])))
lis.listen(8)
lis.settimeout(60)
print("ready", flush=True)
while True:
    c, _ = lis.accept()
    # And to the listing: no rows, which qstat must not take for the cluster.
    for m in ({"type": "REPLY", "seq": 1, "ok": True}, {"type": "REPLY", "seq": 2, "ok": True, "rows": []}):
        m = json.dumps(m).encode()
        c.sendall(struct.pack(">I", len(m)) + m)
    c.close()
' "$(($(port) + 1))" > "$BATS_TEST_TMPDIR/fake.out" &
	fake=$!
	wait_until 30 grep -q ready "$BATS_TEST_TMPDIR/fake.out"
	restart_with
	log | grep -q "no query endpoint at 127.0.0.1:$(($(port) + 1)): qstat asks at the port"
	id=$(qsub -terse -h -b y true)
	NOWQ_MASTER=127.0.0.1:$(port) run qstat
	kill "$fake"
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	[ "$(admitted)" -eq 0 ]
	qdel "$id" >/dev/null
}

@test "query_listen = false: no endpoint, and qstat asks at the port" {
	restart_with 'query_listen = false'
	log | grep -q 'query thread started (idle priority)$'
	[ ! -e "$CLUSTER/qmaster.sock.query" ]
	id=$(qsub -terse -h -b y true)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	NOWQ_MASTER=127.0.0.1:$(port) run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	# The listings went through the loop to the thread.
	[ "$(handoffs)" -eq 2 ]
	[ "$(admitted)" -eq 0 ]
	qdel "$id" >/dev/null
}

@test "query_thread = normal runs the thread at the loop's priority" {
	restart_with 'query_thread = "normal"'
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
	restart_with 'query_thread = "off"'
	[ "$(policies)" = "0 " ]
	id=$(qsub -terse -h -b y true)
	run qstat
	[ "$status" -eq 0 ]
	[[ "$output" == *" $id "* ]]
	! log | grep -q 'query thread started'
	[ "$(handoffs)" -eq 0 ]
	qdel "$id" >/dev/null
}
