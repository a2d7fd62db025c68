#!/usr/bin/env bats
# qwait.bats: waiting for jobs without polling (qwait), progress on terminals only, qstat -j of a purged job as Grid Engine's, and query commands with no master.

load helpers

setup() {
	SLOTS=4 cluster_start
	work_start
}

teardown() {
	cluster_stop
	work_stop
}

# Runs a command on a pseudo-terminal (script(1)), so isatty says yes.
on_tty() {
	command -v script >/dev/null || skip "script(1) is not installed (apt-get install bsdutils)"
	script -qec "$*" /dev/null
}

@test "qwait prints each job's end as it happens, on one connection, and fails when one failed" {
	long=$(qsub -terse -o /dev/null -e /dev/null -N long -b y sh -c "while [ ! -e $WORK/golong ]; do sleep 0.1; done")
	bad=$(qsub -terse -o /dev/null -e /dev/null -N bad -b y sh -c 'exit 3')
	# The long job ends only after the bad one, however loaded the machine.
	( wait_until 30 job_finished "$bad"; touch "$WORK/golong" ) >/dev/null 2>&1 &
	run qwait "$long" "$bad"
	wait
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	# The short job ends first, so it is printed first.
	[ "${lines[0]}" = "Job $bad (\"bad\") failed: exit status 3" ]
	[ "${lines[1]}" = "Job $long (\"long\") done: exit status 0" ]
	# Both ended: asking again answers at once, and all done means 0.
	run qwait "$long"
	[ "$status" -eq 0 ]
	[ "$output" = "Job $long (\"long\") done: exit status 0" ]
}

@test "qwait holds a single connection while it waits" {
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 3)
	qwait "$id" >"$WORK/out" &
	pid=$!
	sleep 1
	# One socket from qwait to the master, and qwait is still waiting.
	kill -0 "$pid"
	[ "$(ls -l /proc/$pid/fd | grep -c socket)" -eq 1 ]
	wait "$pid"
	[ "$(cat "$WORK/out")" = "Job $id (\"sleep\") done: exit status 0" ]
}

@test "qwait --json gives one object per line with the schema, state and exit status" {
	a=$(qsub -terse -o /dev/null -e /dev/null -N j1 -b y true)
	b=$(qsub -terse -o /dev/null -e /dev/null -N j2 -b y sh -c 'kill -KILL $$')
	run qwait --json "$a,$b"
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
	printf '%s\n' "${lines[@]}" | python3 -c '
import json, sys
ends = {}
for line in sys.stdin:
    e = json.loads(line)
    assert e["schema"] == 1, e
    ends[e["id"]] = e
a, b = ends[int(sys.argv[1])], ends[int(sys.argv[2])]
assert a["state"] == "done" and a["exit_status"] == 0 and a["signal"] == 0 and a["name"] == "j1", a
assert a["from_accounting"] is False, a
assert b["state"] == "failed" and b["signal"] == 9, b
' "$a" "$b"
}

@test "qwait reports a deleted job, and a job that does not exist is an error" {
	id=$(qsub -terse -h -o /dev/null -e /dev/null -b y true)
	qwait "$id" >"$WORK/out" &
	pid=$!
	sleep 0.3
	qdel "$id" >/dev/null
	st=0
	wait "$pid" || st=$?
	[ "$st" -eq 1 ]
	[[ "$(cat "$WORK/out")" == "Job $id (\"true\") deleted: exit status "* ]]
	run qwait 999999
	[ "$status" -eq 1 ]
	[ "$output" = 'qwait: error: job "999999" does not exist' ]
	run qwait nosuchname
	[ "$status" -eq 1 ]
	[ "$output" = 'qwait: error: job "nosuchname" does not exist' ]
	run qwait
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "qwait: error: no job ids given" ]
	run qwait --bogus 1
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = 'qwait: error: unknown option "--bogus"' ]
}

@test "a purged job: qstat -j says only what Grid Engine says, qwait answers from the accounting" {
	sed -i 's/^log_file/finished_jobs_keep = 0\nlog_file/' "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	id=$(qsub -terse -o /dev/null -e /dev/null -N gone -b y sh -c 'exit 5')
	wait_until 20 sh -c "qacct -j $id | grep -q '^exit_status  5'"
	wait_until 10 sh -c "! qstat -s z | awk '\$1 == $id' | grep -q ."
	run qstat -j "$id"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "Following jobs do not exist: " ]
	[ "${lines[1]}" = "$id" ]
	[ "${#lines[@]}" -eq 2 ]
	run qwait --json "$id"
	[ "$status" -eq 1 ]
	python3 -c '
import json, sys
e = json.loads(sys.argv[1])
assert e["from_accounting"] is True and e["state"] == "failed" and e["exit_status"] == 5, e
assert e["name"] == "gone", e
' "$output"
}

@test "qsub -sync y and qwait show progress on a terminal, and nothing extra when piped" {
	out=$(on_tty qsub -sync y -o /dev/null -e /dev/null -b y sleep 2)
	[[ "$out" == *"qsub: job "*" is r on "*", waited 0:0"* ]]
	[[ "$out" == *"exited with exit code 0."* ]]
	run qsub -sync y -o /dev/null -e /dev/null -b y true
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" =~ ^Job\ [0-9]+\ exited\ with\ exit\ code\ 0\.$ ]]
	id=$(qsub -terse -o /dev/null -e /dev/null -b y sleep 1)
	out=$(on_tty qwait "$id")
	[[ "$out" == *"qwait: waiting for 1 of 1 jobs"* ]]
	run qwait "$id"
	[ "$output" = "Job $id (\"sleep\") done: exit status 0" ]
}

# submit_held N: N held jobs, pipelined on one connection (N qsub processes
# would take minutes under the sanitizers); prints their ids, comma-separated.
submit_held() {
	python3 - "$1" <<'PY'
import json, os, socket, struct, sys
n = int(sys.argv[1])
path = [a[5:] for a in os.environ["NOWQ_MASTER"].split(",") if a.startswith("unix:")][0]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
def frame(m):
    b = json.dumps(m).encode()
    return struct.pack(">I", len(b)) + b
buf = frame({"type": "HELLO", "seq": 0, "version": 1, "role": "client", "auth": {"method": "none"}})
for i in range(n):
    buf += frame({"type": "SUBMIT", "seq": i + 1, "job": {"name": "many", "argv": ["true"],
        "cwd": "/tmp", "out": "/dev/null", "err": "/dev/null", "hold": 1, "env": []}})
s.sendall(buf)
f = s.makefile("rb")
ids = []
while len(ids) < n:
    m = json.loads(f.read(struct.unpack(">I", f.read(4))[0]))
    if m.get("seq", 0) > 0:
        assert m["ok"], m
        ids.append(str(m["id"]))
print(",".join(ids))
PY
}

@test "qdel of many jobs goes in batches, with progress on a terminal only" {
	ids=$(submit_held 1100)
	out=$(on_tty qdel "$ids")
	[[ "$out" == *"qdel: deleting jobs: 500 of 1100"* ]]
	[[ "$out" == *"qdel: deleting jobs: 1000 of 1100"* ]]
	[ "$(printf '%s\n' "$out" | grep -c 'has deleted job')" -eq 1100 ]
	ids=$(submit_held 600)
	qdel "$ids" 2>"$WORK/err" >"$WORK/out"
	[ ! -s "$WORK/err" ]
	[ "$(grep -c 'has deleted job' "$WORK/out")" -eq 600 ]
	[ "$(qstat | wc -l)" -eq 0 ]
}

@test "every query command with no master exits 1 with an error and prints nothing" {
	export NOWQ_MASTER="unix:$CLUSTER/no-such.sock"
	for c in "qstat" "qstat --json" "qstat -s z" "qstat -j 1" "qstat -j name" "qstat --cron" \
	    "qstat --cron --json" "qhost" "qhost --json" "qhost -j" "qacct" "qacct --json" \
	    "qacct -j" "qacct -j 1 --json" "qacct -o" "qconf -sql" "qconf -spl" "qconf -sq all.q" \
	    "qwait 1" "qwait --json 1" "qdel 1" "qhold 1" "qrls 1" "qalter -p 1 1" "qmod -d all.q"; do
		run timeout 20 $c
		[ "$status" -eq 1 ] || { echo "$c: exit status $status"; return 1; }
		[ "${#lines[@]}" -eq 1 ] || { echo "$c printed: $output"; return 1; }
		[[ "$output" == "${c%% *}: error: cannot reach the master: tried unix:$CLUSTER/no-such.sock ("* ]] ||
			{ echo "$c: $output"; return 1; }
		# Nothing on standard output at all.
		[ -z "$(timeout 20 $c 2>/dev/null)" ] || { echo "$c printed on stdout"; return 1; }
	done
}

@test "nowq start says what it started, with each daemon's configuration and log" {
	d="$WORK/c2"
	run nowq start --dir "$d" --execds 2 --slots 1
	nowq stop --dir "$d" >/dev/null 2>&1
	[ "$status" -eq 0 ]
	[[ "$output" == *"nowq: started qmaster (pid "*"): configuration $d/qmaster.conf, log $d/qmaster/qmaster.log"* ]]
	[[ "$output" == *"): configuration $d/execd-1.ini, log $d/execd-1/execd.log"* ]]
	[[ "$output" == *"): configuration $d/execd-2.ini, log $d/execd-2/execd.log"* ]]
	[[ "${lines[-1]}" == "export NOWQ_MASTER=unix:"* ]]
}
