#!/usr/bin/env bats
# json.bats: every query command's --json is one versioned document (schema 1) whose top-level key and object fields are those doc/json.md describes.

load helpers

setup_file() {
	SLOTS=2 cluster_start
	work_start
	echo "CLUSTER=$CLUSTER WORK=$WORK NOWQ_MASTER=$NOWQ_MASTER" >"$BATS_FILE_TMPDIR/env"
	done_id=$(qsub -terse -o /dev/null -e /dev/null -N jdone -b y true)
	qwait "$done_id" >/dev/null
	run_id=$(qsub -terse -o /dev/null -e /dev/null -N jrun -b y sleep 300)
	wait_until 20 state_is "$run_id" r
	qsub --cron "0 4 * * *" -N jcron -b y true >/dev/null
	echo "done_id=$done_id run_id=$run_id" >>"$BATS_FILE_TMPDIR/env"
}

teardown_file() {
	. "$BATS_FILE_TMPDIR/env"
	export CLUSTER WORK NOWQ_MASTER
	qdel "$run_id" >/dev/null 2>&1 || true
	wait_until 20 job_finished "$run_id" || true
	cluster_stop
	work_stop
}

setup() {
	. "$BATS_FILE_TMPDIR/env"
	export CLUSTER WORK NOWQ_MASTER
}

# check_doc KEY FIELDS... < document: schema 1, the array under KEY is not
# empty, and its first object has every field named.
check_doc() {
	python3 -c '
import json, sys
doc = json.load(sys.stdin)
key, fields = sys.argv[1], sys.argv[2:]
assert isinstance(doc, dict) and doc.get("schema") == 1, doc
assert list(doc) == ["schema", key], list(doc)
items = doc[key]
assert isinstance(items, list) and items, doc
missing = [f for f in fields if f not in items[0]]
assert not missing, (missing, items[0])
' "$@"
}

@test "qstat --json: schema 1 and jobs with the documented fields" {
	qstat --json | check_doc jobs id task name owner queue prio submit_time start_time state \
	    state_letters hold host slots exit_status
	qstat -s z --json | check_doc jobs id state exit_status end_time
}

@test "qstat -j --json: schema 1, jobs, a single job carries its environment" {
	qstat -j "$run_id" --json | check_doc jobs id name env argv home
	qstat -j "$run_id,$done_id" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == 1 and len(d["jobs"]) == 2, d'
}

@test "qstat --cron --json: schema 1 and cron entries" {
	qstat --cron --json | check_doc cron id owner schedule name next_run last_job hold queue
}

@test "qhost --json: schema 1 and hosts" {
	qhost --json | check_doc hosts name slots used load state connected disabled lost last_seen attrs
	qhost -j --json | check_doc hosts name jobs
}

@test "qacct --json: schema 1, rows with -j, summary without" {
	qacct -j "$done_id" --json | check_doc rows row id task attempt name owner queue hosts \
	    submit_time start_time end_time exit_status signal failed ru_wallclock rusage
	qacct --json | check_doc summary jobs ru_wallclock ru_utime ru_stime
	qacct -o --json | check_doc summary owner jobs
}

@test "qconf -smasters --json: schema 1 and the masters" {
	qconf -smasters --json | check_doc masters name role epoch seq since self
}

@test "qwait --json: schema 1 on each line" {
	qwait --json "$done_id" | python3 -c '
import json, sys
e = json.loads(sys.stdin.readline())
assert e["schema"] == 1 and e["state"] == "done", e
for k in ("id", "state", "exit_status", "signal", "from_accounting", "name"):
    assert k in e, (k, e)'
}

@test "an empty listing is an empty array, not a missing document" {
	run qstat -u nobody-at-all --json
	[ "$status" -eq 0 ]
	[ "$(python3 -c 'import json,sys; d = json.load(sys.stdin); print(d["schema"], d["jobs"])' <<<"$output")" = "1 []" ]
}

@test "doc/json.md names every top-level key and the schema version the client prints" {
	for k in '"jobs"' '"cron"' '"hosts"' '"rows"' '"summary"' '"schema": 1'; do
		grep -qF "$k" "$top_srcdir/doc/json.md" || { echo "doc/json.md lacks $k"; return 1; }
	done
	grep -q '^#define CLIENT_JSON_SCHEMA 1$' "$top_srcdir/client/client.h"
	grep -q '^# nowq.s `--json` output (schema 1)$' "$top_srcdir/doc/json.md"
}
