#!/usr/bin/env bats
# arrays.bats: array jobs on a real cluster: every task runs once with Grid Engine's SGE_TASK_* and output names, -tc caps the running tasks, qstat shows pending ranges and task lines, qdel takes ID.TASK and -t, -hold_jid waits for all tasks, -hold_jid_ad pairs tasks, a 100000-task array costs one row, and qstat read page by page prints what it prints whole.

load helpers

setup_file() {
	SLOTS=4 cluster_start
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 777 "$WORK"
	export WORK
}

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

q() { qsub -terse "$@"; }
# The job id of qsub -terse's "ID.FIRST-LAST:STEP".
jid() { echo "${1%%.*}"; }
tasks_rows() { sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT count(*) FROM tasks WHERE job_id = $1"; }
# qstat's lines of one job: "STATE JA-TASK-ID".
lines_of() { qstat | awk -v id="$1" '$1 == id { print $5, $NF }'; }
running_task() { qstat | awk -v id="$1" -v t="$2" '$1 == id && $5 == "r" && $NF == t { f = 1 } END { exit !f }'; }

@test "a 1-20:3 array runs each task once, with SGE_TASK_* and NAME.oID.TASK" {
	cd "$WORK"
	out=$(q -cwd -N arr -t 1-20:3 -b y sh -c \
	    'echo $SGE_TASK_ID $SGE_TASK_FIRST $SGE_TASK_LAST $SGE_TASK_STEPSIZE; echo $SGE_TASK_ID >> '"$WORK"'/ran; echo err$SGE_TASK_ID >&2')
	[[ "$out" == *.1-19:3 ]]
	id=$(jid "$out")
	wait_until 30 job_finished "$id"
	[ "$(sort -n "$WORK/ran")" = "$(seq 1 3 19)" ]
	for t in $(seq 1 3 19); do
		[ "$(cat "$WORK/arr.o$id.$t")" = "$t 1 19 3" ]
		[ "$(cat "$WORK/arr.e$id.$t")" = "err$t" ]
	done
	[ "$(ls "$WORK" | grep -c "^arr\.o$id\.")" -eq 7 ]
	[ "$(job_field "$id" exit_status)" = 0 ]
	# Ended, it is qacct's: qstat -j, as Grid Engine's, no longer knows it.
	run qstat -j "$id"
	[ "$status" -eq 1 ]
	[ "$(job_json "$id" tasks_pending)" = "" ]
	# One accounting record per task, each with its task id.
	[ "$(qacct -j "$id" | awk '$1 == "taskid" { print $2 }' | sort -n)" = "$(seq 1 3 19)" ]
	# $TASK_ID in -o paths, and a non-array job still says undefined.
	id2=$(jid "$(q -t 2-3 -o "$WORK/sub.\$TASK_ID.out" -j y -b y sh -c 'echo $SGE_TASK_ID')")
	id3=$(q -o "$WORK/plain.out" -j y -b y sh -c 'echo $SGE_TASK_ID $SGE_TASK_FIRST')
	wait_until 30 job_finished "$id2"
	wait_until 30 job_finished "$id3"
	[ "$(cat "$WORK/sub.2.out")" = 2 ]
	[ "$(cat "$WORK/sub.3.out")" = 3 ]
	[ "$(cat "$WORK/plain.out")" = "undefined undefined" ]
}

@test "-tc 2 never has more than two tasks running, and does run two at once" {
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-8 -tc 2 -b y sh -c \
	    'echo "$(date +%s%N) 1" >> '"$WORK"'/tc; sleep 0.4; echo "$(date +%s%N) -1" >> '"$WORK"'/tc')")
	run qstat -j "$id"
	[[ "$output" == *"task_concurrency:           2"* ]]
	wait_until 60 job_finished "$id"
	[ "$(wc -l < "$WORK/tc")" -eq 16 ]
	# Replay the starts and ends in time order: the most running at once.
	max=$(sort -n "$WORK/tc" | awk '{ n += $2; if (n > m) m = n } END { print m }')
	[ "$max" -eq 2 ]
	[ "$(job_field "$id" exit_status)" = 0 ]
}

@test "tasks of an exclusive array take the whole host, one at a time" {
	id=$(jid "$(q -o /dev/null -e /dev/null -l exclusive=true -t 1-4 -b y sh -c \
	    'echo "$(date +%s%N) 1" >> '"$WORK"'/excl; sleep 0.3; echo "$(date +%s%N) -1" >> '"$WORK"'/excl')")
	wait_until 60 job_finished "$id"
	[ "$(wc -l < "$WORK/excl")" -eq 8 ]
	max=$(sort -n "$WORK/excl" | awk '{ n += $2; if (n > m) m = n } END { print m }')
	[ "$max" -eq 1 ]
}

@test "qstat shows the pending tasks on one line and each running task on its own" {
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-50 -b y sleep 30)")
	wait_until 20 running_task "$id" 4
	run lines_of "$id"
	[ "${lines[0]}" = "r 1" ]
	[ "${lines[3]}" = "r 4" ]
	[ "${lines[4]}" = "qw 5-50:1" ]
	[ "${#lines[@]}" -eq 5 ]
	run qdel "$id"
	[ "$status" -eq 0 ]
	[[ "$output" == *"has registered the job $id for deletion"* ]]
	wait_until 20 job_finished "$id"
	[ "$(job_state "$id")" = z ]
	[ -z "$(lines_of "$id")" ]
	# The killed tasks are accounted, the never-started ones are not.
	[ "$(qacct -j "$id" | awk '$1 == "taskid" { print $2 }' | sort -n | tr '\n' ' ')" = "1 2 3 4 " ]
}

@test "qdel ID.TASK and qdel ID -t delete only those tasks, pending or running" {
	id=$(jid "$(q -h -o /dev/null -e /dev/null -t 1-10 -b y sh -c 'echo $SGE_TASK_ID >> '"$WORK"'/some')")
	[ "$(lines_of "$id")" = "hqw 1-10:1" ]
	run qdel "$id.3"
	[ "$status" -eq 0 ]
	[[ "$output" == *"has deleted job-array task $id.3"* ]]
	qdel "$id" -t 5-9:2
	[ "$(lines_of "$id")" = "hqw 1-2:1,4,6,8,10" ]
	run qdel "$id.3"
	[ "$status" -ne 0 ]
	[[ "$output" == *"does not exist"* ]]
	qrls "$id"
	wait_until 30 job_finished "$id"
	[ "$(sort -n "$WORK/some" | tr '\n' ' ')" = "1 2 4 6 8 10 " ]
	# Deleted tasks make the array failed, as Grid Engine counts them.
	[[ "$(job_reason "$id")" == *"4 were deleted"* ]]

	# A running task is killed; its sibling runs on.
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-2 -b y sleep 60)")
	wait_until 20 running_task "$id" 2
	run qdel "$id.1"
	[[ "$output" == *"has registered the job-array task $id.1 for deletion"* ]]
	wait_until 20 sh -c "! qstat | awk -v id=$id '\$1 == id && \$NF == 1 { f = 1 } END { exit !f }'"
	running_task "$id" 2
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "-hold_jid on an array waits for all of its tasks" {
	a=$(jid "$(q -o /dev/null -e /dev/null -t 1-6 -tc 2 -b y sh -c 'while [ ! -e '"$WORK"'/fango ]; do sleep 0.1; done; echo $SGE_TASK_ID >> '"$WORK"'/fan')")
	b=$(q -o /dev/null -e /dev/null -hold_jid "$a" -b y sh -c "wc -l < $WORK/fan > $WORK/fan.count")
	state_is "$b" hqw
	touch "$WORK/fango"
	wait_until 60 job_finished "$b"
	[ "$(cat "$WORK/fan.count")" -eq 6 ]
	# afterok on an array whose task fails never runs.
	c=$(jid "$(q -o /dev/null -e /dev/null -t 1-3 -b y sh -c 'exit $((SGE_TASK_ID == 2))')")
	d=$(q -o /dev/null -e /dev/null -W depend=afterok:"$c" -b y true)
	wait_until 30 job_finished "$d"
	wait_until 30 job_finished "$c"
	[[ "$(job_reason "$c")" == *"1 of 3 tasks failed"* ]]
	# It never ran; its accounting row says why.
	run qacct -j "$d"
	[[ "$output" == *"dependency never satisfied: $c failed"* ]]
}

# How fast is bench/bulksub's to say; this test counts rows.
@test "a 100000-task array is submitted and deleted and costs one row" {
	id=$(jid "$(q -h -o /dev/null -e /dev/null -t 1-100000 -b y true)")
	[ "$(lines_of "$id")" = "hqw 1-100000:1" ]
	[ "$(tasks_rows "$id")" -eq 0 ]
	qdel "$id" -t 50000
	[ "$(lines_of "$id")" = "hqw 1-49999:1,50001-100000:1" ]
	[ "$(tasks_rows "$id")" -eq 1 ]
	qdel "$id"
	wait_until 10 job_finished "$id"
	# -t over the whole range is the whole array, not a row per task.
	id2=$(jid "$(q -h -o /dev/null -e /dev/null -t 1-100000:2 -b y true)")
	qdel "$id2" -t 1-100000
	wait_until 10 job_finished "$id2"
	[ "$(tasks_rows "$id2")" -eq 0 ]
}

@test "kill -9 of execd while tasks run: their ends still reach the master" {
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-2 -b y sh -c 'sleep 2; exit $SGE_TASK_ID')")
	wait_until 20 running_task "$id" 2
	kill -9 "$(cat "$CLUSTER/execd-1/execd.pid")"
	sleep 3
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 30 job_finished "$id"
	[ "$(qacct -j "$id" | awk '$1 == "exit_status" { print $2 }' | sort -n | tr '\n' ' ')" = "1 2 " ]
	[[ "$(job_reason "$id")" == *"2 of 2 tasks failed"* ]]
}

@test "an execd that comes back without a running task fails it as lost; its sibling goes on" {
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-2 -b y sleep 301)")
	wait_until 20 running_task "$id" 2
	act="$CLUSTER/execd-1/active/$id.1.1"
	read -r jobpid _ < "$act/job.pid"
	shep=$(ps -o ppid= -p "$jobpid" | tr -d ' ')
	kill -9 "$(cat "$CLUSTER/execd-1/execd.pid")"
	# The host forgets task 1 entirely: its shepherd, the job and its folder.
	kill -9 "$shep"
	kill -9 -- "-$jobpid"
	rm -rf "$act"
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 sh -c "! qstat | awk -v id=$id '\$1 == id && \$NF == 1 { f = 1 } END { exit !f }'"
	running_task "$id" 2
	qdel "$id"
	wait_until 20 job_finished "$id"
	[[ "$(job_reason "$id")" == *"deleted"* ]]
	[ "$(qacct -j "$id" | awk '$1 == "taskid" { print $2 }' | sort -n | tr '\n' ' ')" = "1 2 " ]
	run qacct -j "$id"
	[[ "$output" == *"lost: execd on"* ]]
}

@test "qstat -s r shows the running tasks of an array that still has pending ones" {
	id=$(jid "$(q -o /dev/null -e /dev/null -t 1-9 -tc 1 -b y sleep 30)")
	wait_until 20 running_task "$id" 1
	[ "$(qstat -s r | awk -v id="$id" '$1 == id { print $5, $NF }')" = "r 1" ]
	[ "$(qstat -s p | awk -v id="$id" '$1 == id { print $5, $NF }')" = "qw 2-9:1" ]
	run qstat -j "$id"
	[[ "$output" == *"1 of its tasks run, as many as -tc 1 allows"* ]]
	# qhold holds the pending tasks; the running one goes on.
	qhold "$id"
	[ "$(lines_of "$id" | tr '\n' ' ')" = "r 1 hqw 2-9:1 " ]
	qrls "$id"
	[ "$(lines_of "$id" | tr '\n' ' ')" = "r 1 qw 2-9:1 " ]
	[ "$(qhost | awk 'NR > 2 { print $3 }' | head -1)" -ge 1 ]
	qdel "$id"
	wait_until 20 job_finished "$id"
}

@test "tasks interleave with other jobs by priority: a later, higher job runs before the rest of the array" {
	# Tasks 1-4 fill the four slots and end when the test says so, one
	# slot at a time: the one slot freed must go to b, submitted later
	# with a higher priority, not to task 5.
	a=$(jid "$(q -o /dev/null -e /dev/null -p -100 -t 1-8 -b y sh -c 'if [ $SGE_TASK_ID -le 4 ]; then while [ ! -e '"$WORK"'/go$SGE_TASK_ID ]; do sleep 0.1; done; fi; echo "$(date +%s%N) t$SGE_TASK_ID" >> '"$WORK"'/order')")
	wait_until 30 running_task "$a" 4
	b=$(q -o /dev/null -e /dev/null -p 100 -b y sh -c "echo \"\$(date +%s%N) b\" >> $WORK/order")
	touch "$WORK/go1"
	wait_until 60 job_finished "$b"
	touch "$WORK/go2" "$WORK/go3" "$WORK/go4"
	wait_until 60 job_finished "$a"
	cat "$WORK/order"
	# b's line comes before that of any task after the first four.
	[ "$(sort -n "$WORK/order" | awk '$2 == "b" || $2 ~ /^t[5-8]$/ { print $2; exit }')" = b ]
	[ "$(wc -l < "$WORK/order")" = 9 ]
}

@test "bad task input gets a clear error and changes nothing" {
	id=$(q -h -o /dev/null -e /dev/null -b y true)
	run qdel "$id" -t 1
	[ "$status" -ne 0 ]
	[[ "$output" == *"is not an array job"* ]]
	run qdel "$id" -t 0-3
	[ "$status" -ne 0 ]
	[[ "$output" == *"-t wants FIRST"* ]]
	run qdel "$id.x"
	[ "$status" -ne 0 ]
	run qsub -t 5-2 -b y true
	[ "$status" -ne 0 ]
	state_is "$id" hqw
	qdel "$id"
}

@test "-hold_jid_ad starts task i after task i of the other array, out of order when that one ends first" {
	# The parent's task 2 ends at once, task 1 only when released by a
	# file: the child's task 2 must start while its task 1 still waits.
	p=$(jid "$(q -o /dev/null -e /dev/null -t 1-3 -N adpar -b y sh -c \
	    'if [ "$SGE_TASK_ID" = 1 ]; then while [ ! -e '"$WORK"'/ad.go ]; do sleep 0.05; done; fi
	     echo "p$SGE_TASK_ID $(date +%s%N)" >> '"$WORK"'/ad')")
	c=$(jid "$(q -o /dev/null -e /dev/null -t 11-13 -hold_jid_ad adpar -b y sh -c \
	    'echo "c$SGE_TASK_ID $(date +%s%N)" >> '"$WORK"'/ad')")
	wait_until 30 grep -q "^c12 " "$WORK/ad"
	wait_until 30 grep -q "^c13 " "$WORK/ad"
	! grep -q "^c11 " "$WORK/ad" || false
	run qstat -j "$c"
	[[ "$output" == *"task 11 waits for task 1 of job $p (-hold_jid_ad)"* ]]
	touch "$WORK/ad.go"
	wait_until 30 job_finished "$c"
	# Each child task after its partner: c11 after p1, c12 after p2, c13 after p3.
	for i in 1 2 3; do
		pt=$(awk -v k="p$i" '$1 == k { print $2 }' "$WORK/ad")
		ct=$(awk -v k="c$((10 + i))" '$1 == k { print $2 }' "$WORK/ad")
		[ -n "$pt" ] && [ -n "$ct" ] && [ "$ct" -gt "$pt" ]
	done
	[ "$(job_field "$c" exit_status)" = 0 ]
	[ "$(sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT count(*) FROM deps WHERE job_id = $c")" = 0 ]
}

@test "-hold_jid_ad is refused for a non-array job, a non-array parent and arrays of different sizes" {
	p=$(jid "$(q -h -o /dev/null -e /dev/null -t 1-4 -b y true)")
	plain=$(q -h -o /dev/null -e /dev/null -b y true)
	before=$(sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT count(*) FROM jobs")
	run qsub -hold_jid_ad "$p" -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-hold_jid_ad needs an array job (-t)"* ]]
	run qsub -t 1-4 -hold_jid_ad "$plain" -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"job $plain is not an array job"* ]]
	run qsub -t 1-5 -hold_jid_ad "$p" -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"job $p has 4 tasks and this job 5"* ]]
	[ "$(sqlite3 "$CLUSTER/qmaster/nowq.db" "SELECT count(*) FROM jobs")" = "$before" ]
	qdel "$p" "$plain" >/dev/null
}

# Grid Engine's answers to one task of an array (t/sge/drmaatask, made by
# t/sge/record-drmaatask.sh): CASE's output with the job id as ID, and its
# exit status.
FIX="$top_srcdir/t/sge/drmaatask"
same_as() {
	local c=$1 rc
	shift
	out=$("$@" 2>&1 | sed -E "s/\b$id\b/ID/g"; exit "${PIPESTATUS[0]}") && rc=0 || rc=$?
	[ "$out" = "$(cat "$FIX/$c.out")" ] || { echo "$c: got [$out] want [$(cat "$FIX/$c.out")]"; return 1; }
	[ "$rc" = "$(cat "$FIX/$c.rc")" ] || { echo "$c: exit $rc, Grid Engine's $(cat "$FIX/$c.rc")"; return 1; }
}
# A listing's lines with their task lists spelled out ("2-3:1" as "2,3"),
# nowq writing two in a row as a range where Grid Engine lists them.
spelled() {
	awk '{ n = split($2, p, ","); s = ""
	       for (i = 1; i <= n; i++) {
		       if (split(p[i], r, "[-:]") == 3) for (t = r[1]; t <= r[2]; t += r[3]) s = s (s ? "," : "") t
		       else s = s (s ? "," : "") p[i]
	       }
	       print $1, s }'
}
same_lines() { [ "$(lines_of "$id" | spelled)" = "$(spelled < "$FIX/qstat-$1")" ]; }

@test "qhold and qrls JOB.TASK hold and release that task alone, as Grid Engine" {
	id=$(jid "$(q -a "$(date -d '+1 hour' +%Y%m%d%H%M)" -t 1-4 -o /dev/null -e /dev/null -b y sleep 60)")
	same_as qhold-task qhold "$id.3"
	same_lines held-3
	[ "$(job_json "$id" tasks_pending)" = "1-2:1,4" ]
	same_as qrls-task qrls "$id.3"
	same_lines released-3
	[ "$(tasks_rows "$id")" = 0 ]
	same_as qrls-task-again qrls "$id.3"
	same_as qhold-range qhold "$id.2-3"
	same_lines held-2-3
	# qrls of the array releases its tasks held on their own too.
	run qrls "$id"
	[ "$status" -eq 0 ]
	[ "$(lines_of "$id")" = "qw 1-4:1" ]
	same_as qdel-task-pending qdel "$id.4"
	# A held task that is not there; -h o names whole jobs.
	run qhold "$id.9"
	[ "$status" -eq 1 ]
	[ "$output" = "denied: job-array task \"$id.9\" does not exist" ]
	run qhold -h o "$id.1"
	[ "$status" -eq 1 ]
	qdel "$id" >/dev/null
	wait_until 20 job_finished "$id"
}

@test "a task held on its own stays pending while the others run, and runs once released" {
	id=$(jid "$(q -tc 1 -t 1-3 -o /dev/null -e /dev/null -b y sleep 30)")
	wait_until 20 running_task "$id" 1
	qhold "$id.2"
	run qhold "$id.1"
	[ "$status" -eq 1 ]
	[ "$output" = "job-array task $id.1 is already running and cannot be held" ]
	# Task 1's end lets the next one start: 3, past the held 2.
	qdel "$id.1"
	wait_until 20 running_task "$id" 3
	[ "$(lines_of "$id" | sort | tr '\n' ' ')" = "hqw 2 r 3 " ]
	qrls "$id.2"
	qdel "$id.3"
	wait_until 20 running_task "$id" 2
	[ "$(tasks_rows "$id")" = 3 ]
	qdel "$id" >/dev/null
	wait_until 20 job_finished "$id"
}

@test "qstat read a page at a time prints what it prints whole, a running array's waiting tasks too" {
	o=(-o /dev/null -e /dev/null -b y)
	# Every task of a but the held one has run or runs: the parent runs,
	# and its held task's hqw line is the only pending line it has.
	a=$(jid "$(q -tc 1 -t 1-3 "${o[@]}" sleep 120)")
	wait_until 20 running_task "$a" 1
	qhold "$a.2" >/dev/null
	qdel "$a.1" >/dev/null
	wait_until 20 running_task "$a" 3
	# b's parent is pending, its tasks running, waiting and held: its
	# lines are in both sections; c may not start yet, one task held.
	b=$(jid "$(q -tc 1 -t 1-4 -p -5 "${o[@]}" sleep 120)")
	wait_until 20 running_task "$b" 1
	qhold "$b.3" >/dev/null
	c=$(jid "$(q -a "$(date -d '+1 hour' +%Y%m%d%H%M)" -p -10 -t 1-5 "${o[@]}" sleep 120)")
	qhold "$c.2" >/dev/null
	# e's task 2 exits 100: it waits in error (Eqw) while task 1 runs.
	e=$(jid "$(q -t 1-2 "${o[@]}" sh -c 'test "$SGE_TASK_ID" = 2 && exit 100; sleep 120')")
	wait_until 20 eval '[ "$(lines_of "$e" | tr "\n" " ")" = "r 1 Eqw 2 " ]'
	r=$(q "${o[@]}" sleep 120)
	wait_until 20 state_is "$r" r
	h1=$(q -h -p 10 "${o[@]}" true)
	h2=$(q -h -p -10 "${o[@]}" true)
	h3=$(q -h -p -5 "${o[@]}" true)
	[ "$(lines_of "$a" | tr '\n' ' ')" = "r 3 hqw 2 " ]
	[ "$(lines_of "$b" | tr '\n' ' ')" = "r 1 qw 2,4 hqw 3 " ]
	# -ext's usage of running jobs moves between two calls: pending only.
	for page in 1 2 3; do
		paged_same "$page"
		paged_same "$page" -u '*'
		paged_same "$page" -s p
		paged_same "$page" -s h
		paged_same "$page" -s hr
		paged_same "$page" -f
		paged_same "$page" -f -s p
		paged_same "$page" -ext -s p
		paged_same "$page" -pri
		paged_same "$page" -r
		paged_same "$page" -xml
		paged_same "$page" -f -xml
		paged_same "$page" --json -s p
	done
	# -s p and -s h read the pending jobs only, and the running a and e
	# for their pending lines.
	[ "$(qstat -s p | awk -v id="$a" '$1 == id { print $5, $NF }')" = "hqw 2" ]
	[ "$(qstat -s h | awk -v id="$a" '$1 == id { print $5, $NF }')" = "hqw 2" ]
	[ "$(qstat -s p | awk -v id="$e" '$1 == id { print $5, $NF }')" = "Eqw 2" ]
	qdel "$a" "$b" "$c" "$e" "$r" "$h1" "$h2" "$h3" >/dev/null
	for id in "$a" "$b" "$c" "$e" "$r"; do wait_until 20 job_finished "$id"; done
}

@test "qmod -sj and -usj JOB.TASK suspend and resume that task alone, as Grid Engine" {
	id=$(jid "$(q -t 1-2 -o /dev/null -e /dev/null -b y sh -c \
	    'while :; do echo x >> '"$WORK"'/tick.$SGE_TASK_ID; sleep 0.1; done')")
	wait_until 20 running_task "$id" 2
	wait_until 20 running_task "$id" 1
	same_as qmod-sj-task qmod -sj "$id.2"
	same_as qmod-sj-task-again qmod -sj "$id.2"
	same_lines suspended-2
	# The task's processes are stopped, the other task's not.
	wait_until 20 test -s "$WORK/tick.1"
	n1=$(wc -l < "$WORK/tick.1")
	n2=$(wc -l < "$WORK/tick.2")
	wait_until 20 sh -c "[ \$(wc -l < $WORK/tick.1) -gt $((n1 + 3)) ]"
	[ "$(wc -l < "$WORK/tick.2")" -le $((n2 + 1)) ]
	same_as qmod-usj-task qmod -usj "$id.2"
	same_as qmod-usj-task-again qmod -usj "$id.2"
	same_as qmod-sj-job qmod -sj "$id"
	same_lines suspended-all
	same_as qmod-usj-job qmod -usj "$id"
	same_as qdel-task-running qdel "$id.1"
	qdel "$id" >/dev/null
	wait_until 20 job_finished "$id"
}
