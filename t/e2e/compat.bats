#!/usr/bin/env bats
# compat.bats: the Grid Engine formats workflow tools parse (qsub -terse, qstat's columns, qstat -j and qacct -j keys, #$ directives, -cwd -V -N -o -e -j, Nextflow's -l h_rss, mem_free and slots), read the way those tools read them.

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

@test "qstat -j: a ==== line, then key: value with the value at column 29; an ended or unknown job exits 1" {
	# Held, so it stays a job qstat -j knows.
	ID=$(qsub -terse -h -cwd -N jkeys -o out.txt -e err.txt -b y true)
	out=$(qstat -j "$ID")
	[ "$(echo "$out" | sed -n 1p)" = "==============================================================" ]
	for k in job_number job_name owner cwd submission_time sge_o_workdir sge_o_home \
	    stdout_path_list stderr_path_list; do
		line=$(echo "$out" | grep "^$k:") || { echo "no $k:"; return 1; }
		# The key and its colon, padded with blanks to 28 columns.
		[[ "${line:0:28}" =~ ^$k:\ +$ ]] || { echo "bad layout: $line"; return 1; }
		[ "${line:28:1}" != " " ] || { echo "value not at column 29: $line"; return 1; }
	done
	[ "$(echo "$out" | awk '$1 == "job_number:" { print $2 }')" = "$ID" ]
	[ "$(echo "$out" | awk '$1 == "job_name:" { print $2 }')" = jkeys ]
	[ "$(echo "$out" | awk '$1 == "cwd:" { print $2 }')" = "$WORK" ]
	# Once it ended, Grid Engine's qstat -j no longer knows it (qacct -j does).
	qrls "$ID" >/dev/null
	qwait "$ID" >/dev/null
	run qstat -j "$ID"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "Following jobs do not exist: " ]
	[ "${lines[1]}" = "$ID" ]
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

# What Nextflow's sge executor writes for a task's memory and cpus.
@test "Nextflow's -l h_rss= (the memory limit), -l mem_free= (host memory) and -l slots=N (N slots on one host)" {
	cluster_stop
	EXECDS=2 SLOTS=2 cluster_start
	nowq stop --dir "$CLUSTER" >/dev/null
	ini_name() { awk -F' *= *' '$1 == "name" { print $2 }' "$CLUSTER/execd-$1.ini"; }
	H1=$(ini_name 1)
	H2=$(ini_name 2)
	printf 'memory = 8G\n' >> "$CLUSTER/execd-1.ini"
	printf 'memory = 2G\n' >> "$CLUSTER/execd-2.ini"
	nowq start --dir "$CLUSTER" >/dev/null
	wait_until 20 sh -c "[ \$(qhost | grep -c -e '$H1' -e '$H2') -ge 2 ]"
	host_of() { qstat -j "$1" | awk '$1 == "exec_host_list" { sub(/:.*/, "", $3); print $3; exit }'; }
	reason() { job_reason "$1"; }

	# mem_free is matched against the host's memory, as mem= is.
	for i in 1 2 3; do
		id=$(qsub -terse -o /dev/null -j y -l mem_free=4G -b y true)
		wait_until 20 job_finished "$id"
		[ "$(qacct -j "$id" | awk '$1 == "hostname" { print $2 }')" = "$H1" ]
	done
	run qsub -b y -l mem_free=64G true
	[ "$status" -ne 0 ]
	[[ "$output" == *"no host has 64G of memory"* ]]

	# h_rss is the hard memory limit h_vmem is: one fits, one does not.
	fits=$(qsub -terse -o /dev/null -e fits.err -l h_rss=2G -b y \
	    /usr/bin/python3 -c 'b = bytearray(256 << 20); b[-1] = 1')
	big=$(qsub -terse -o /dev/null -e "$WORK/big.err" -l h_rss=200M -b y \
	    /usr/bin/python3 -c 'b = bytearray(256 << 20); b[-1] = 1')
	wait_until 20 job_finished "$fits"
	wait_until 20 job_finished "$big"
	[ "$(job_field "$fits" exit_status)" = 0 ]
	[ "$(job_field "$big" exit_status)" != 0 ]
	[ "$(reason "$big")" = "h_vmem limit (200M) exceeded" ] || grep -q MemoryError "$WORK/big.err"

	# slots=2: both slots on one host, one part, whose PE_HOSTFILE says so.
	id=$(qsub -terse -o "$WORK/slots.out" -j y -l slots=2 -b y \
	    sh -c 'echo "$NSLOTS $NHOSTS"; cat "$PE_HOSTFILE"')
	wait_until 20 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
	[ "$(sed -n 1p "$WORK/slots.out")" = "2 1" ]
	[ "$(sed -n 2p "$WORK/slots.out" | awk '{ print $2 }')" = 2 ]
	[ "$(wc -l < "$WORK/slots.out")" -eq 2 ]
	# Three slots are on no single host (two and two), though on the cluster.
	run qsub -b y -l slots=3 true
	[ "$status" -ne 0 ]
	[[ "$output" == *"no suitable queues"*"needs 3 slots (allocation_rule \$pe_slots)"* ]]
	run qsub -b y -l slots=2 -pe smp 2 true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-l slots=2 asks for 2 slots on one host; give it or -pe, not both"* ]]
	run qsub -b y -l slots=0 true
	[ "$status" -ne 0 ]
	[[ "$output" == *"-l slots=0: not a number of slots"* ]]
	# qalter -l keeps them on one host.
	id=$(qsub -terse -h -o /dev/null -j y -l slots=2 -b y sh -c 'test "$NHOSTS" = 1')
	qalter -l h_rt=60 "$id" >/dev/null
	qrls "$id" >/dev/null
	wait_until 20 job_finished "$id"
	[ "$(job_field "$id" exit_status)" = 0 ]
}
