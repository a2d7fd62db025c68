#!/usr/bin/env bats
# status.bats: the master's status page on http_listen: the JSON API and its paging, Prometheus metrics, read-only and bad requests, escaping, and what a person sees in a real browser (headless Chromium).

load helpers

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

setup_file() {
	SLOTS=2 EXECDS=2 cluster_start
	work_start
	nowq stop --dir "$CLUSTER" >/dev/null
	HTTP_PORT=$(free_port)
	echo "http_listen = \"127.0.0.1:$HTTP_PORT\"" >> "$CLUSTER/qmaster.conf"
	export HTTP_PORT
	nowq start --dir "$CLUSTER" >/dev/null
}

teardown_file() {
	cluster_stop
	work_stop
}

# get PATH [METHOD]: prints "STATUS BODY" for one request.
get() {
	python3 - "$HTTP_PORT" "$1" "${2:-GET}" <<'PYEOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), method=sys.argv[3])
try:
    r = urllib.request.urlopen(req, timeout=10)
    print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
PYEOF
}

# json PATH EXPR: evaluates a Python expression over the JSON body as j.
json() {
	get "$1" | python3 -c 'import sys, json; code, body = sys.stdin.read().split(" ", 1); j = json.loads(body); print(eval(sys.argv[1]))' "$2"
}

@test "the API answers with schema 1: summary, hosts, queues, masters, cron" {
	[ "$(json /api/v1/summary 'j["schema"], j["hosts"]["total"], j["masters"][0]["role"]')" = "(1, 2, 'primary')" ]
	[ "$(json /api/v1/hosts 'sorted(h["name"] for h in j["hosts"])')" = "['$(hostname -s)-1', '$(hostname -s)-2']" ]
	[ "$(json /api/v1/queues 'j["queues"][0]["name"]')" = "all.q" ]
	[ "$(json /api/v1/masters 'j["masters"][0]["pid"] > 0')" = "True" ]
	[ "$(json /api/v1/reservations 'j["reservations"]')" = "[]" ]
	qsub --cron "@daily" -N nightly -b y true >/dev/null
	[ "$(json /api/v1/cron '[e["name"] for e in j["entries"]]')" = "['nightly']" ]
}

@test "jobs come a page at a time, by id, with the total and the next page's start" {
	for i in $(seq 1 25); do qsub -h -N "page$i" -b y true >/dev/null; done
	total=$(json "/api/v1/jobs?state=pending" 'j["total"]')
	[ "$total" -ge 25 ]
	first=$(json "/api/v1/jobs?state=pending&limit=10" 'j["next_after"]')
	[ "$(json "/api/v1/jobs?state=pending&limit=10" 'len(j["rows"])')" = 10 ]
	# The second page starts right after the first's last id, and pages
	# never overlap.
	ids1=$(json "/api/v1/jobs?state=pending&limit=10" '[r[0] for r in j["rows"]]')
	ids2=$(json "/api/v1/jobs?state=pending&limit=10&after=$first" '[r[0] for r in j["rows"]]')
	[ "$(python3 -c "a = $ids1; b = $ids2; print(max(a) < min(b) and max(a) == $first)")" = True ]
	# The last page says there is none after it.
	[ "$(json "/api/v1/jobs?state=pending&limit=1000" 'j["next_after"]')" = None ]
	qdel -u root >/dev/null
}

@test "a page of running jobs among pending ones holds only those, by id, across pages" {
	h1=$(qsub -terse -h -b y true)
	r1=$(qsub -terse -o /dev/null -e /dev/null -l "hosts=$(hostname -s)-1" -b y sleep 600)
	h2=$(qsub -terse -h -b y true)
	r2=$(qsub -terse -o /dev/null -e /dev/null -l "hosts=$(hostname -s)-1" -b y sleep 600)
	h3=$(qsub -terse -h -b y true)
	wait_until 30 state_is "$r1" r
	wait_until 30 state_is "$r2" r
	[ "$(json "/api/v1/jobs?state=running&limit=1" '[r[0] for r in j["rows"]], j["next_after"]')" = "([$r1], $r1)" ]
	[ "$(json "/api/v1/jobs?state=running&limit=1&after=$r1" '[r[0] for r in j["rows"]], j["next_after"]')" = "([$r2], $r2)" ]
	[ "$(json "/api/v1/jobs?state=running&limit=1&after=$r2" '[r[0] for r in j["rows"]], j["next_after"]')" = "([], None)" ]
	[ "$(json "/api/v1/jobs?state=pending&limit=2&after=$h1" '[r[0] for r in j["rows"]]')" = "[$h2, $h3]" ]
	qdel "$h1" "$r1" "$h2" "$r2" "$h3" >/dev/null
}

@test "bad requests get a clear error and change nothing; the page is read-only" {
	run get "/api/v1/jobs?state=bogus"
	[[ "$output" == "400 "*"state must be pending, running or finished"* ]]
	run get "/api/v1/jobs?state=pending&limit=0"
	[[ "$output" == "400 "*"limit must be 1 to 1000"* ]]
	run get "/api/v1/jobs?state=pending&after=x"
	[[ "$output" == "400 "*"after must be a job id"* ]]
	run get "/nothing"
	[[ "$output" == "404 "* ]]
	run get "/api/v1/jobs?state=pending" POST
	[[ "$output" == "405 "*"read-only"* ]]
	run get "/api/v1/summary" DELETE
	[[ "$output" == "405 "* ]]
	# And the master still serves.
	[ "$(json /api/v1/summary 'j["schema"]')" = 1 ]
	qstat >/dev/null
}

@test "/metrics is Prometheus text: jobs and hosts by state, dispatch and commit histograms" {
	id=$(qsub -terse -b y true)
	wait_until 30 job_finished "$id"
	run get /metrics
	[[ "$output" == "200 "* ]]
	[[ "$output" == *'nowq_hosts{state="idle"} 2'* ]]
	[[ "$output" == *'nowq_jobs{state="done"} '* ]]
	# Every state has its line (one grouped query), with the job just done counted.
	[ "$(echo "$output" | grep -c '^nowq_jobs{state=')" -eq 6 ]
	[ "$(echo "$output" | awk '$1 == "nowq_jobs{state=\"done\"}" { print $2 }')" -ge 1 ]
	[[ "$output" == *'# TYPE nowq_submit_to_dispatch_seconds histogram'* ]]
	count=$(echo "$output" | awk '$1 == "nowq_submit_to_dispatch_seconds_count" { print $2 }')
	inf=$(echo "$output" | awk '$1 == "nowq_submit_to_dispatch_seconds_bucket{le=\"+Inf\"}" { print $2 }')
	[ "$count" -ge 1 ] && [ "$count" = "$inf" ]
	[ "$(echo "$output" | awk '$1 == "nowq_commits_total" { print $2 }')" -ge 1 ]
	# Buckets are cumulative: never decreasing.
	echo "$output" | awk '/^nowq_commit_seconds_bucket/ { if ($2 < last) exit 1; last = $2 }'
}

@test "a slow client that sends nothing does not hold up the API or the master" {
	exec 5<>/dev/tcp/127.0.0.1/"$HTTP_PORT"
	[ "$(json /api/v1/summary 'j["schema"]')" = 1 ]
	qstat >/dev/null
	exec 5>&-
}

@test "in a real browser: a submitted job appears (its name as text, not markup), a stopped host shows as unknown" {
	command -v chromium >/dev/null || skip "chromium is not installed (Debian package chromium)"
	name='<b>x<i>"q&amp;'
	# On host 1: host 2's execd is stopped below, and a job there would be lost.
	id=$(qsub -terse -N "$name" -o /dev/null -e /dev/null -l "hosts=$(hostname -s)-1" -b y sleep 600)
	wait_until 30 state_is "$id" r
	dom() {
		timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		    --user-data-dir="$WORK/chromium" --virtual-time-budget=5000 --dump-dom \
		    "http://127.0.0.1:$HTTP_PORT/" 2>/dev/null
	}
	out=$(dom)
	# The job's row, with its name escaped as text: no <b> or <i> element
	# came from it.
	[[ "$out" == *"<td><a href=\"#job=$id\">$id</a></td>"* ]]
	[[ "$out" == *'<td>&lt;b&gt;x&lt;i&gt;"q&amp;amp;</td>'* ]]
	[[ "$out" != *"<b>x"* ]]
	[[ "$out" == *'class="state-idle">idle</td>'* || "$out" == *'class="state-busy">busy</td>'* ]]
	# One host's execd stops: the page says unknown, not idle.
	h2="$(hostname -s)-2"
	kill "$(cat "$CLUSTER/execd-2/execd.pid")"
	wait_until 30 bash -c "qhost | awk -v h=$h2 '\$1 == h && \$NF == \"unknown\" { f = 1 } END { exit !f }'"
	out=$(dom)
	[[ "$out" == *"<td>$h2</td><td class=\"state-unknown\">unknown</td>"* ]]
	# A screenshot of what a person sees, kept with the test's logs.
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	    --user-data-dir="$WORK/chromium" --virtual-time-budget=5000 --window-size=1280,1000 \
	    --screenshot="$top_builddir/status-page.png" "http://127.0.0.1:$HTTP_PORT/" \
	    >/dev/null 2>&1 || true
	qdel "$id" >/dev/null
	nowq start --dir "$CLUSTER" >/dev/null
}

# fits WIDTH: whether the page, laid out by headless Chromium in a window
# WIDTH pixels wide, is no wider than the window (asked over the DevTools
# protocol: a screenshot cannot show what was cut off).
fits() {
	python3 "$top_srcdir/t/e2e/cdp.py" "$WORK/chromium-cdp" "http://127.0.0.1:$HTTP_PORT/" "$1" \
	    'document.documentElement.scrollWidth <= window.innerWidth'
}

@test "in a real browser: a full host, a job's detail view, empty tables say so, load columns labelled, a narrow window fits" {
	command -v chromium >/dev/null || skip "chromium is not installed (Debian package chromium)"
	h1="$(hostname -s)-1"
	# Host 1 free of the jobs of the tests before.
	wait_until 30 bash -c "! qstat | grep -q ' all.q@$h1 '"
	wait_until 30 bash -c "qhost | awk -v h=$h1 '\$1 == h && \$NF == \"idle\" { f = 1 } END { exit !f }'"
	a=$(qsub -terse -o /dev/null -e /dev/null -l "hosts=$h1" -b y sleep 600)
	b=$(qsub -terse -o /dev/null -e /dev/null -l "hosts=$h1" -b y sleep 600)
	wait_until 30 state_is "$a" r
	wait_until 30 state_is "$b" r
	out=$(status_dom "$HTTP_PORT")
	# Both slots used: full, not a green idle.
	[[ "$out" == *"<td>$h1</td><td class=\"state-full\">full</td>"* ]]
	# The load columns say what they are.
	[[ "$out" == *">load 1 min</th>"*">5 min</th>"*">15 min</th>"* ]]
	# An empty table says so (no reservations here).
	[[ "$out" == *'<td colspan="7" class="empty">no reservations</td>'* ]]
	# Each job links to its detail view, which shows what qstat -j does.
	[[ "$out" == *"<a href=\"#job=$a\">$a</a>"* ]]
	out=$(status_dom "$HTTP_PORT" "/#job=$a")
	[[ "$out" == *"<h2 id=\"detail-title\">Job $a</h2>"* ]]
	[[ "$out" == *"<td>state</td><td>running</td>"* ]]
	[[ "$out" == *"<td>host</td><td>$h1</td>"* ]]
	# A phone's width: the tables scroll in their boxes, the page fits.
	[ "$(fits 360)" = True ]
	for w in 360 1280; do
		timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		    --user-data-dir="$WORK/chromium-$w" --virtual-time-budget=5000 --window-size=$w,1000 \
		    --screenshot="$top_builddir/status-page-$w.png" "http://127.0.0.1:$HTTP_PORT/#job=$a" \
		    >/dev/null 2>&1 || true
	done
	qdel "$a" "$b" >/dev/null
}
