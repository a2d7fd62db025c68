#!/usr/bin/env bats
# basic.bats: a real personal cluster runs jobs the Grid Engine way: scripts, commands, output files, environment, qstat, qdel, qhold, qrls.

load helpers

setup_file() { cluster_start; work_start; }
teardown_file() { cluster_stop; work_stop; }

@test "a script file runs, its output lands in NAME.oID in the working directory" {
	cd "$WORK"
	printf '#!/bin/sh\necho hello from $JOB_ID\necho oops >&2\n' > hello.sh
	run qsub -cwd hello.sh
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^Your\ job\ ([0-9]+)\ \(\"hello.sh\"\)\ has\ been\ submitted$ ]]
	id=${BASH_REMATCH[1]}
	wait_until 20 job_finished "$id"
	[ "$(cat "hello.sh.o$id")" = "hello from $id" ]
	[ "$(cat "hello.sh.e$id")" = "oops" ]
	[ "$(job_field "$id" exit_status)" = "0" ]
}

@test "-terse prints only the id, -sync y waits and returns the job's exit code" {
	cd "$WORK"
	run qsub -terse -cwd -b y true
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	run qsub -sync y -cwd -b y sh -c 'exit 3'
	[ "$status" -eq 3 ]
	[[ "$output" == *"exited with exit code 3"* ]]
}

@test "-b y runs the command with its arguments exactly, no shell re-splitting" {
	cd "$WORK"
	id=$(qsub -terse -cwd -N args -b y printf '[%s]\n' 'a b' '$HOME' '*' '')
	wait_until 20 job_finished "$id"
	[ "$(cat "args.o$id")" = "$(printf '[a b]\n[$HOME]\n[*]\n[]')" ]
}

@test "a script on standard input is named STDIN; #$ directives apply and the command line wins" {
	cd "$WORK"
	id=$(printf 'echo from stdin\n' | qsub -terse -cwd)
	wait_until 20 job_finished "$id"
	[ "$(cat "STDIN.o$id")" = "from stdin" ]
	printf '#!/bin/sh\n#$ -N fromdirective\n#$ -j y\necho out; echo err >&2\n' > d.sh
	id=$(qsub -terse -cwd d.sh)
	wait_until 20 job_finished "$id"
	[ "$(sort "fromdirective.o$id" | tr '\n' ' ')" = "err out " ]
	[ ! -e "fromdirective.e$id" ]
	id=$(qsub -terse -cwd -N fromcli d.sh)
	wait_until 20 job_finished "$id"
	[ -e "fromcli.o$id" ]
}

@test "-o and -e choose the files; a directory means NAME.oID inside it" {
	cd "$WORK"
	mkdir -p outdir
	id=$(qsub -terse -cwd -o out.txt -e outdir -N oe -b y sh -c 'echo O; echo E >&2')
	wait_until 20 job_finished "$id"
	[ "$(cat out.txt)" = "O" ]
	[ "$(cat "outdir/oe.e$id")" = "E" ]
}

@test "the job gets Grid Engine's environment and a private TMPDIR that is removed afterwards" {
	cd "$WORK"
	export MYVAR=exported
	id=$(qsub -terse -cwd -N envjob -v ONE=1,MYVAR -b y sh -c 'env; test -d "$TMPDIR" && test -w "$TMPDIR" && echo TMPDIR_OK')
	wait_until 20 job_finished "$id"
	out="envjob.o$id"
	grep -qx "JOB_ID=$id" "$out"
	grep -qx "JOB_NAME=envjob" "$out"
	grep -qx "QUEUE=all.q" "$out"
	grep -qx "NSLOTS=1" "$out"
	grep -qx "ENVIRONMENT=BATCH" "$out"
	grep -qx "SGE_TASK_ID=undefined" "$out"
	grep -qx "SGE_O_WORKDIR=$WORK" "$out"
	grep -qx "SGE_O_LOGNAME=$(id -un)" "$out"
	grep -q "^SGE_O_HOST=" "$out"
	grep -q "^SGE_O_HOME=" "$out"
	grep -q "^SGE_O_PATH=" "$out"
	grep -q "^HOSTNAME=" "$out"
	grep -qx "USER=$(id -un)" "$out"
	grep -qx "LOGNAME=$(id -un)" "$out"
	grep -q "^HOME=" "$out"
	grep -q "^SHELL=" "$out"
	grep -q "^PATH=" "$out"
	grep -qx "ONE=1" "$out"
	grep -qx "MYVAR=exported" "$out"
	grep -qx TMPDIR_OK "$out"
	tmp=$(sed -n 's/^TMPDIR=//p' "$out")
	[ -n "$tmp" ]
	[ ! -e "$tmp" ]
	# Without -V the submitter's other variables stay behind; with -V they travel.
	! grep -q "^NOWQ_MASTER=" "$out" || false
	id=$(qsub -terse -cwd -N envall -V -b y env)
	wait_until 20 job_finished "$id"
	grep -q "^NOWQ_MASTER=" "envall.o$id"
}

@test "a folder of another cluster's job with the same id in /tmp does not stop a job" {
	cd "$WORK"
	# Clusters sharing a machine number their jobs alike: the other one's
	# job (here of another user) holds a folder of the name a TMPDIR made of
	# the id alone would take.
	id=$(qsub -terse -cwd -h -N tmpjob -b y sh -c 'echo "TMPDIR=$TMPDIR"; touch "$TMPDIR/x"')
	mkdir "/tmp/nowq.$id.0.1"
	chown nobody "/tmp/nowq.$id.0.1"
	qrls "$id"
	wait_until 20 job_finished "$id"
	rmdir "/tmp/nowq.$id.0.1"
	[ "$(job_field "$id" exit_status)" = "0" ]
	tmp=$(sed -n 's/^TMPDIR=//p' "tmpjob.o$id")
	[[ "$tmp" == "/tmp/nowq.$id.0.1."* ]]
	[ ! -e "$tmp" ]
}

@test "without -cwd the job runs in the owner's home and writes its files there" {
	id=$(qsub -terse -N homejob -b y pwd)
	wait_until 20 job_finished "$id"
	[ "$(cat "$HOME/homejob.o$id")" = "$HOME" ]
	rm -f "$HOME/homejob.o$id" "$HOME/homejob.e$id"
}

@test "qstat shows a running job in Grid Engine's table; qdel of a running job registers it for deletion" {
	cd "$WORK"
	id=$(qsub -terse -cwd -N sleeper -b y sleep 300)
	wait_until 20 state_is "$id" r
	run qstat
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^job-ID\ +prior\ +name\ +user\ +state\ +submit/start\ at\ +queue\ +slots\ +ja-task-ID ]]
	[[ "${lines[1]}" =~ ^-+$ ]]
	row=$(qstat | awk -v id="$id" '$1 == id')
	[ "$(echo "$row" | awk '{print $3}')" = sleeper ]
	[ "$(echo "$row" | awk '{print $5}')" = r ]
	[[ "$row" == *"all.q@"* ]]
	run qstat --json
	[ "$status" -eq 0 ]
	[[ "$output" == *"\"id\": $id"* || "$output" == *"\"id\":$id"* ]]
	run qdel "$id"
	[ "$status" -eq 0 ]
	[ "$output" = "$(id -un) has registered the job $id for deletion" ]
	wait_until 20 job_finished "$id"
}

@test "qhold keeps a job in hqw, qrls lets it run, qdel of a pending job deletes it at once" {
	cd "$WORK"
	id=$(qsub -terse -cwd -h -N held -b y true)
	[ "$(job_state "$id")" = hqw ]
	sleep 0.5
	[ "$(job_state "$id")" = hqw ]
	run qrls "$id"
	[ "$status" -eq 0 ]
	[ "$output" = "modified hold of job $id" ]
	wait_until 20 job_finished "$id"
	id=$(qsub -terse -cwd -h -b y true)
	run qhold "$id"
	[ "$output" = "modified hold of job $id" ]
	run qdel "$id"
	[ "$status" -eq 0 ]
	[ "$output" = "$(id -un) has deleted job $id" ]
	run qstat -s p
	! echo "$output" | awk '{print $1}' | grep -qx "$id" || false
}

@test "qstat reads a long listing a page at a time and prints the same table" {
	cd "$WORK"
	ids=()
	for i in 1 2 3 4 5; do ids+=("$(qsub -terse -h -N page$i -b y true)"); done
	whole=$(qstat -s p)
	[ "$(echo "$whole" | grep -c ' page[1-5] ')" -eq 5 ]
	[ "$(NOWQ_QSTAT_PAGE=2 qstat -s p)" = "$whole" ]
	[ "$(NOWQ_QSTAT_PAGE=1 qstat -s p)" = "$whole" ]
	# The queue lines carry the load, which may change between two calls.
	[ "$(NOWQ_QSTAT_PAGE=1 qstat -f -s p | noload)" = "$(qstat -f -s p | noload)" ]
	# --json of one page is jansson's document; of many, the same text a job at a time.
	[ "$(NOWQ_QSTAT_PAGE=2 qstat --json -s p)" = "$(qstat --json -s p)" ]
	[ "$(qstat --json -s p | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["jobs"]))')" -ge 5 ]
	run env NOWQ_QSTAT_PAGE=0 qstat -s p
	[ "$status" -eq 0 ]
	[[ "$output" == *"NOWQ_QSTAT_PAGE=0 is not a number from 1 to 100000"* ]]
	qdel "${ids[@]}" >/dev/null
}

@test "qstat -f prints its queue instances, then the pending jobs page by page, as it did whole" {
	cd "$WORK"
	ids=()
	# Four slots: two jobs and two tasks of the array run, two tasks wait.
	for i in 1 2; do ids+=("$(qsub -terse -N run$i -o /dev/null -e /dev/null -b y sleep 120)"); done
	ids+=("$(qsub -terse -N arr -t 1-4 -o /dev/null -e /dev/null -b y sleep 120 | cut -d. -f1)")
	for p in -10 0 -5; do ids+=("$(qsub -terse -h -p "$p" -N fprio$p -b y true)"); done
	wait_until 30 eval '[ "$(qstat -s r | awk "\$5 == \"r\"" | wc -l)" -eq 4 ]'
	whole=$(qstat -f | noload)
	# Each running job under its queue instance, the array's waiting tasks
	# and the held jobs (priority down) under the banner.
	[ "$(echo "$whole" | sed -n '/^all.q@/,/^$/p' | awk '$5 == "r"' | wc -l)" -eq 4 ]
	[ "$(echo "$whole" | sed -n '/PENDING JOBS/,$p' | awk '$3 ~ /^(arr|fprio)/ { print $3 }' | tr '\n' ' ')" = \
	    "arr fprio0 fprio-5 fprio-10 " ]
	for page in 1 2 3; do
		[ "$(NOWQ_QSTAT_PAGE=$page qstat -f | noload)" = "$whole" ]
		[ "$(NOWQ_QSTAT_PAGE=$page qstat -f -s r | noload)" = "$(qstat -f -s r | noload)" ]
		[ "$(NOWQ_QSTAT_PAGE=$page qstat -f -s hz | noload)" = "$(qstat -f -s hz | noload)" ]
	done
	! qstat -f -s r | grep -q "PENDING JOBS" || false
	qdel "${ids[@]}" >/dev/null
}

@test "qstat prints pending jobs page by page in Grid Engine's order: priority down, then id" {
	cd "$WORK"
	ids=()
	for p in -10 0 -5 -10 0 -5; do ids+=("$(qsub -terse -h -p "$p" -N prio$p -b y true)"); done
	whole=$(qstat -s p)
	# The master sends each page in that order; no page is sorted again.
	want=$(printf '%s\n' "${ids[1]}" "${ids[4]}" "${ids[2]}" "${ids[5]}" "${ids[0]}" "${ids[3]}")
	[ "$(echo "$whole" | awk '$3 ~ /^prio/ { print $1 }')" = "$want" ]
	[ "$(NOWQ_QSTAT_PAGE=1 qstat -s p)" = "$whole" ]
	[ "$(NOWQ_QSTAT_PAGE=4 qstat -s p)" = "$whole" ]
	[ "$(NOWQ_QSTAT_PAGE=1 qstat -f -s p | noload)" = "$(qstat -f -s p | noload)" ]
	# The cursor of that order belongs to pending jobs' brief listing alone.
	hello='{"type":"HELLO","seq":1,"version":1,"role":"client","auth":{"method":"none"}}'
	run rawreq "unix:$CLUSTER/qmaster.sock" "$hello" '{"type":"STATUS","brief":true,"states":"pr","order":"prio"}'
	[[ "$output" == *'order \"prio\" (with after_prio) lists pending jobs'* ]]
	run rawreq "unix:$CLUSTER/qmaster.sock" "$hello" '{"type":"STATUS","brief":true,"states":"p","order":"prio","limit":2,"after_prio":-5,"after":'"${ids[2]}"'}'
	[[ "$output" == *'"next": '"${ids[0]}"', "next_prio": -10'* ]]
	qdel "${ids[@]}" >/dev/null
}

@test "qdel of a job that does not exist says so and fails" {
	run qdel 999999
	[ "$status" -ne 0 ]
	[ "$output" = 'denied: job "999999" does not exist' ]
}

@test "a job that cannot start (no such working directory) waits in Eqw with the reason" {
	id=$(qsub -terse -wd /nonexistent/dir -b y true)
	wait_until 20 state_is "$id" Eqw
	qstat -j "$id" | grep -q "/nonexistent/dir"
	run qdel "$id"
	[ "$status" -eq 0 ]
}

@test "a job of another user runs as that user, and only they or a manager may delete it" {
	id -u nobody >/dev/null 2>&1 || skip "no user nobody on this machine"
	[ "$(id -u)" = 0 ] || skip "needs root to run an execd that runs jobs as their owners"
	cd "$WORK"
	mkdir -p asnobody && chown nobody asnobody
	id=$(cd asnobody && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env NOWQ_MASTER="${NOWQ_MASTER}" "$NOWQ_BIN/qsub" -terse -cwd -N who -b y sh -c 'id -un; sleep 30')
	wait_until 20 state_is "$id" r
	# Another unprivileged user may not delete it...
	run setpriv --reuid=daemon --regid=daemon --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qdel" "$id"
	[ "$status" -ne 0 ]
	[[ "$output" == *"do not have the necessary privileges"* ]]
	[ "$(job_state "$id")" = r ]
	# ...its owner may.
	run setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qdel" "$id"
	[ "$status" -eq 0 ]
	wait_until 20 job_finished "$id"
	[ "$(head -1 "asnobody/who.o$id")" = nobody ]
	[ "$(stat -c %U "asnobody/who.o$id")" = nobody ]
}
