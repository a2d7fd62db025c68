#!/usr/bin/env bats
# compat.bats: the Grid Engine formats workflow tools parse (qsub -terse, qstat's columns, qstat -j and qacct -j keys, #$ directives, -cwd -V -N -o -e -j), read the way those tools read them.

load helpers

setup() {
	SLOTS=2 cluster_start
	work_start
	cd "$WORK"
}

teardown() {
	cluster_stop
	work_stop
}

# What Nextflow and Snakemake profiles do with qstat: skip two header
# lines, split on blanks, take column 1 (id) and column 5 (state).
qstat_state() { qstat "$@" | awk -v id="$ID" 'NR > 2 && $1 == id { print $5 }'; }
# qacct -j's value of a key, as scripts read it: awk '$1 == key { print $2 }'.
acct() { qacct -j "$1" | awk -v k="$2" '$1 == k { print $2; exit }'; }

@test "qsub -terse prints the id alone; an array prints ID.FIRST-LAST:STEP; without -terse the third word" {
	run qsub -terse -b y true
	[ "$status" -eq 0 ]
	[[ "$output" =~ ^[0-9]+$ ]]
	run qsub -terse -t 1-4:2 -b y true
	[[ "$output" =~ ^[0-9]+\.1-3:2$ ]]
	run qsub -N named -b y true
	[[ "$output" =~ ^Your\ job\ ([0-9]+)\ \(\"named\"\)\ has\ been\ submitted$ ]]
	[ "$(echo "$output" | awk '{ print $3 }')" -gt 0 ]
}

@test "a Nextflow-style job: #\$ -wd -N -o -j y -terse -notify directives, qsub -terse on the command line" {
	mkdir "$WORK/task"
	cat >"$WORK/task/.command.run" <<SCRIPT
#!/bin/bash
#\$ -wd $WORK/task
#\$ -N nf-proc_1
#\$ -o $WORK/task/.command.log
#\$ -j y
#\$ -terse
#\$ -notify
echo out; echo err >&2; pwd
SCRIPT
	ID=$(cd /tmp && qsub -terse "$WORK/task/.command.run")
	[[ "$ID" =~ ^[0-9]+$ ]]
	st=$(qstat_state)
	[[ "$st" =~ ^(qw|t|r)$ || -z "$st" ]]
	qwait "$ID" >/dev/null
	[ "$(cat "$WORK/task/.command.log")" = "$(printf 'out\nerr\n%s' "$WORK/task")" ]
	[ "$(acct "$ID" jobname)" = nf-proc_1 ]
	[ "$(acct "$ID" exit_status)" = 0 ]
}

@test "qstat: two header lines, column 1 the id, column 5 the state (qw, hqw, r), 6-7 the time, 8 queue@host" {
	ID=$(qsub -terse -h -N held -b y true)
	lines=$(qstat | wc -l)
	[ "$(qstat | sed -n 1p | awk '{ print $1, $2, $3, $4, $5 }')" = "job-ID prior name user state" ]
	[[ "$(qstat | sed -n 2p)" =~ ^-+$ ]]
	[ "$(qstat_state)" = hqw ]
	qrls "$ID" >/dev/null
	qwait "$ID" >/dev/null
	ID=$(qsub -terse -N runner -b y sleep 30)
	wait_until 20 sh -c "qstat | awk -v id=$ID '\$1 == id && \$5 == \"r\"' | grep -q ."
	row=$(qstat -u "$(id -un)" | awk -v id="$ID" '$1 == id')
	[ "$(echo "$row" | awk '{ print $3 }')" = runner ]
	[[ "$(echo "$row" | awk '{ print $6, $7 }')" =~ ^[0-9]{2}/[0-9]{2}/[0-9]{4}\ [0-9]{2}:[0-9]{2}:[0-9]{2}$ ]]
	[[ "$(echo "$row" | awk '{ print $8 }')" == all.q@* ]]
	[ "$(qstat -s pr | awk -v id="$ID" 'NR > 2 && $1 == id { print $5 }')" = r ]
	qdel "$ID" >/dev/null
	qwait "$ID" >/dev/null || true
	[ "$(qstat -s z | awk -v id="$ID" 'NR > 2 && $1 == id { print $5 }')" = z ]
	# No job: no header either, so "tail -n +3 | wc -l" counts 0.
	[ "$(qstat | wc -l)" -eq 0 ]
}

@test "qstat -j: a ==== line, then key: value with the value at column 29; an unknown job exits 1" {
	ID=$(qsub -terse -cwd -N jkeys -o out.txt -e err.txt -b y true)
	qwait "$ID" >/dev/null
	out=$(qstat -j "$ID")
	[ "$(echo "$out" | sed -n 1p)" = "==============================================================" ]
	for k in job_number job_name owner cwd submission_time sge_o_workdir sge_o_home \
	    stdout_path_list stderr_path_list exit_status; do
		line=$(echo "$out" | grep "^$k:") || { echo "no $k:"; return 1; }
		# The key and its colon, padded with blanks to 28 columns.
		[[ "${line:0:28}" =~ ^$k:\ +$ ]] || { echo "bad layout: $line"; return 1; }
		[ "${line:28:1}" != " " ] || { echo "value not at column 29: $line"; return 1; }
	done
	[ "$(echo "$out" | awk '$1 == "job_number:" { print $2 }')" = "$ID" ]
	[ "$(echo "$out" | awk '$1 == "job_name:" { print $2 }')" = jkeys ]
	[ "$(echo "$out" | awk '$1 == "cwd:" { print $2 }')" = "$WORK" ]
	[ "$(echo "$out" | awk '$1 == "exit_status:" { print $2 }')" = 0 ]
	run qstat -j 999999
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "Following jobs do not exist: " ]
}

@test "qacct -j: ==== then 13-column keys; failed and exit_status as Grid Engine writes them" {
	ok=$(qsub -terse -o /dev/null -e /dev/null -N acct_ok -b y true)
	bad=$(qsub -terse -o /dev/null -e /dev/null -N acct_bad -b y sh -c 'exit 7')
	sig=$(qsub -terse -o /dev/null -e /dev/null -N acct_sig -b y sh -c 'kill -TERM $$')
	qwait "$ok" "$bad" "$sig" >/dev/null || true
	out=$(qacct -j "$ok")
	[ "$(echo "$out" | sed -n 1p)" = "==============================================================" ]
	for k in qname hostname owner jobname jobnumber taskid qsub_time start_time end_time \
	    failed exit_status ru_wallclock ru_utime ru_stime cpu; do
		line=$(echo "$out" | grep "^$k ") || { echo "no $k"; return 1; }
		[[ "${line:0:13}" =~ ^$k\ +$ ]] || { echo "bad layout: $line"; return 1; }
	done
	[ "$(acct "$ok" jobnumber)" = "$ok" ]
	[ "$(acct "$ok" failed)" = 0 ]
	[ "$(acct "$ok" exit_status)" = 0 ]
	[ "$(acct "$bad" failed)" = 0 ]
	[ "$(acct "$bad" exit_status)" = 7 ]
	[ "$(acct "$sig" failed)" = 100 ]
	[ "$(acct "$sig" exit_status)" = 143 ]
	run qacct -j 999999
	[ "$status" -eq 1 ]
	[ "$output" = "qacct: error: job id 999999 not found" ]
}

@test "-cwd -V -N -o -e -j y from #\$ lines and the command line, the command line winning" {
	cat >"$WORK/job.sh" <<'SCRIPT'
#!/bin/sh
#$ -N fromscript
#$ -o script.out
#$ -e script.err
echo "out $COMPAT_VAR $(pwd)"
echo "err" >&2
SCRIPT
	export COMPAT_VAR=carried
	ID=$(qsub -terse -cwd -V -N fromcli "$WORK/job.sh")
	qwait "$ID" >/dev/null
	[ "$(cat "$WORK/script.out")" = "out carried $WORK" ]
	[ "$(cat "$WORK/script.err")" = err ]
	[ "$(acct "$ID" jobname)" = fromcli ]
	# Without -V the variable stays behind; -j y joins the streams.
	ID=$(qsub -terse -cwd -j y -o joined.out "$WORK/job.sh")
	qwait "$ID" >/dev/null
	[ "$(cat "$WORK/joined.out")" = "$(printf 'out  %s\nerr' "$WORK")" ]
	# -o naming a directory: Grid Engine's NAME.oID inside it.
	mkdir "$WORK/logs"
	ID=$(qsub -terse -cwd -N dirout -o logs -e logs "$WORK/job.sh")
	qwait "$ID" >/dev/null
	[ -f "$WORK/logs/dirout.o$ID" ] && [ -f "$WORK/logs/dirout.e$ID" ]
}

@test "qdel: Grid Engine's lines, and exit status 1 for a job that does not exist" {
	ID=$(qsub -terse -h -b y true)
	run qdel "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "$(id -un) has deleted job $ID" ]
	run qdel 999999
	[ "$status" -eq 1 ]
	[ "$output" = 'denied: job "999999" does not exist' ]
}

@test "qsub -sync y: Grid Engine's last line and the job's exit status" {
	run qsub -sync y -o /dev/null -e /dev/null -b y sh -c 'exit 4'
	[ "$status" -eq 4 ]
	[[ "${lines[-1]}" =~ ^Job\ [0-9]+\ exited\ with\ exit\ code\ 4\.$ ]]
}
