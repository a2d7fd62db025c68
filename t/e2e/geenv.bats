#!/usr/bin/env bats
# geenv.bats: a job's environment has every variable Grid Engine's execd and shepherd set, with the meaning the real one's (t/sge/envq/env-*.txt) has.

load helpers

FIX=$top_srcdir/t/sge/envq

setup_file() {
	cluster_start
	nowq stop --dir "$CLUSTER" >/dev/null
	echo 'pe "envq" { slots = 8  allocation_rule = "$pe_slots" }' >> "$CLUSTER/qmaster.conf"
	nowq start --dir "$CLUSTER" >/dev/null
	work_start
	printf '#!/bin/sh\nenv\n' > "$WORK/env.sh"
	chmod 755 "$WORK/env.sh"
}
teardown_file() { cluster_stop; work_stop; }

norm() { python3 "$NOWQ_E2E/geenv.py" "$1"; }

# Not compared: the submit side's SGE_O_* (the submitting shell's), TERM
# (Grid Engine passes on its execd's) and the ports, which nowq has not.
# SGE_BINARY_PATH is nowq's $SGE_ROOT/bin/$ARC (Grid Engine's
# binary_path/$ARC does not exist); JOB_SCRIPT and PE_HOSTFILE are each
# system's own folder; PWD is the working directory (Grid Engine leaves
# the shepherd's there when the job has no -cwd).
SKIP='^(SGE_O_(HOST|PATH|SHELL|MAIL)|TERM|SGE_(QMASTER|EXECD)_PORT|SGE_BINARY_PATH|PE_HOSTFILE|PWD)='

# same_env FIXTURE OUTPUT: every variable of Grid Engine's is there, meaning the same.
same_env() {
	norm "$1" | grep -Ev "$SKIP" > "$WORK/ge.norm"
	norm "$2" > "$WORK/nowq.norm"
	echo "--- Grid Engine's lines nowq has not the same:"
	comm -23 "$WORK/ge.norm" <(sort "$WORK/nowq.norm") | tee "$WORK/missing"
	[ ! -s "$WORK/missing" ]
}

@test "a single job's environment (-o, -e) is Grid Engine's: TMP, NQUEUES, SGE_STD*_PATH, SGE_CWD_PATH, ARC, SGE_ROOT ..." {
	cd "$WORK"
	id=$(qsub -terse -N envq_single -o "$WORK/single.out" -e "$WORK/single.err" -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	same_env "$FIX/env-single.txt" "$WORK/single.out"
	# The names nowq adds: its own rank of a parallel job's part.
	extra=$(comm -13 <(cut -d= -f1 "$FIX/env-single.txt" | sort) <(cut -d= -f1 single.out | sort) | tr '\n' ' ')
	[ "$extra" = "NOWQ_VNN " ]
}

@test "TMPDIR leads PATH; SGE_ROOT's bin/ARC holds the commands, qrsh among them, and nowq env prints it" {
	cd "$WORK"
	id=$(qsub -terse -cwd -N envq_path -v PATH=/opt/x:/usr/bin -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	tmpdir=$(sed -n 's/^TMPDIR=//p' "envq_path.o$id")
	[ -n "$tmpdir" ]
	grep -qx "PATH=$tmpdir:/opt/x:/usr/bin" "envq_path.o$id"
	grep -qx "TMP=$tmpdir" "envq_path.o$id"
	root=$(sed -n 's/^SGE_ROOT=//p' "envq_path.o$id")
	arc=$(sed -n 's/^ARC=//p' "envq_path.o$id")
	[ "$arc" = "$(sed -n 's/^ARC=//p' "$FIX/env-single.txt")" ] || [ "$(uname -m)" != x86_64 ]
	grep -qx "SGE_BINARY_PATH=$root/bin/$arc" "envq_path.o$id"
	[ -x "$root/bin/$arc/qrsh" ]
	[ -x "$root/bin/$arc/qsub" ]
	"$root/bin/$arc/qstat" -j "$id" >/dev/null 2>&1 || "$root/bin/$arc/qacct" -j "$id" >/dev/null
	run nowq env --dir "$CLUSTER"
	[ "$status" -eq 0 ]
	grep -qx "export SGE_ROOT='$root'" <<<"$output"
	grep -qx "export SGE_CELL=default" <<<"$output"
}

@test "a script job with -cwd: the default output names in SGE_STDOUT_PATH and SGE_STDERR_PATH" {
	cd "$WORK"
	id=$(qsub -terse -cwd -N envq_script env.sh)
	wait_until 20 job_finished "$id"
	# Grid Engine ran this one through a login shell, which set its own PATH.
	SKIP="$SKIP|^(PATH|JOB_SCRIPT|LIBRARY_PATH)=" same_env "$FIX/env-script.txt" "envq_script.o$id"
	grep -qx "SGE_STDOUT_PATH=$WORK/envq_script.o$id" "envq_script.o$id"
	grep -qx "SGE_STDERR_PATH=$WORK/envq_script.e$id" "envq_script.o$id"
	grep -qx "SGE_CWD_PATH=$WORK" "envq_script.o$id"
}

@test "an array task: SGE_TASK_* and its own output names" {
	cd "$WORK"
	id=$(qsub -terse -cwd -t 1-2 -N envq_array -b y /usr/bin/env | cut -d. -f1)
	wait_until 20 job_finished "$id"
	same_env "$FIX/env-array.txt" "envq_array.o$id.2"
	grep -qx "SGE_STDOUT_PATH=$WORK/envq_array.o$id.2" "envq_array.o$id.2"
}

@test "-j y and -wd: SGE_STDERR_PATH is the output file, SGE_CWD_PATH the -wd folder" {
	cd "$WORK"
	id=$(qsub -terse -wd /tmp -j y -o "$WORK/join.out" -N envq_join -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	# nowq has no -i: its standard input is always /dev/null.
	SKIP="$SKIP|^SGE_STDIN_PATH=" same_env "$FIX/env-join.txt" join.out
	grep -qx "SGE_STDERR_PATH=$WORK/join.out" join.out
	grep -qx "SGE_STDIN_PATH=/dev/null" join.out
}

@test "-o a folder: SGE_STDOUT_PATH names the file made in it" {
	cd "$WORK"
	mkdir -p outdir
	id=$(qsub -terse -cwd -o outdir -N envq_dir -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	grep -qx "SGE_STDOUT_PATH=$WORK/outdir/envq_dir.o$id" "outdir/envq_dir.o$id"
	grep -qx "SGE_STDERR_PATH=$WORK/envq_dir.e$id" "outdir/envq_dir.o$id"
}

@test "a parallel job: PE, NSLOTS, NHOSTS and NQUEUES as Grid Engine gives them" {
	cd "$WORK"
	id=$(qsub -terse -cwd -pe envq 2 -N envq_pe -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	same_env "$FIX/env-pe.txt" "envq_pe.o$id"
	grep -qx "PE=envq" "envq_pe.o$id"
	grep -qx "NQUEUES=1" "envq_pe.o$id"
}

@test "another user's job: HOME, USER, LOGNAME and SGE_ACCOUNT are theirs and Grid Engine's" {
	cd "$WORK"
	id=$(as_user nobody qsub -terse -cwd -N envq_nobody -b y /usr/bin/env)
	wait_until 20 job_finished "$id"
	grep -qx "USER=nobody" "envq_nobody.o$id"
	grep -qx "LOGNAME=nobody" "envq_nobody.o$id"
	grep -qx "SGE_ACCOUNT=sge" "envq_nobody.o$id"
	grep -qx "HOME=$(getent passwd nobody | cut -d: -f6)" "envq_nobody.o$id"
}
