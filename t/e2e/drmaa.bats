#!/usr/bin/env bats
# drmaa.bats: libdrmaa.so.1 against a real cluster: its C test program case by case, Debian's python3-drmaa, and Snakemake's --drmaa.

load helpers

# The library and the test program come from the run's copy (t/stage).
DRMAA_DIR=${NOWQ_STAGE:+$NOWQ_STAGE/lib}
DRMAA_DIR=${DRMAA_DIR:-$top_builddir/lib}
DRMAA_T=${NOWQ_STAGE:+$NOWQ_STAGE/drmaa}
DRMAA_T=${DRMAA_T:-$top_builddir/t/drmaa}

setup() {
	SLOTS=8 cluster_start
	work_start
	export LD_LIBRARY_PATH=$DRMAA_DIR
}

teardown() {
	cluster_stop
	work_stop
}

drmaa_case() {
	run "$DRMAA_T/test_drmaa" "$1" "$WORK"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "$1: 0 failures" ]
}

@test "drmaa: one session per process, contact, versions, error texts" { drmaa_case session; }
@test "drmaa: every template attribute set and read back, bad values refused" { drmaa_case template; }
@test "drmaa: a second thread's init is refused; a thread's wait blocks no other" { drmaa_case threads; }
@test "drmaa: argv, environment, working directory, paths and placeholders reach the job; rusage" { drmaa_case run; }
@test "drmaa: exit status, signals, a killed job and job_ps after the end" { drmaa_case ends; }
@test "drmaa: held at submission and released, start time, suspend and resume" { drmaa_case hold; }
@test "drmaa: unknown jobs, timeouts (DRMAA_ERRNO_EXIT_TIMEOUT) and refusals" { drmaa_case errors; }
@test "drmaa: a bulk job of 100 tasks waited for with synchronize, then each reaped" { drmaa_case bulk; }
@test "drmaa: a script job through the native specification, a hard wall clock limit" { drmaa_case native; }
@test "drmaa: one task of a bulk job suspended, resumed, held, released and terminated alone; job_ps its own" { drmaa_case tasks; }
@test "drmaa: drmaa_transfer_files o and e stage the output and error files back when the job is waited for" { drmaa_case transfer; }
@test "drmaa: drmaa_input_path is the job's standard input, read in place or sent with drmaa_transfer_files i" { drmaa_case input; }

@test "drmaa: the library exports the DRMAA functions only, with the soname libdrmaa.so.1" {
	run objdump -p "$DRMAA_DIR/libdrmaa.so.1"
	[[ "$output" == *"SONAME               libdrmaa.so.1"* ]]
	other=$(nm -D --defined-only "$DRMAA_DIR/libdrmaa.so.1" | awk '$2 == "T" && $3 !~ /^drmaa_/')
	[ -z "$other" ]
	[ "$(nm -D --defined-only "$DRMAA_DIR/libdrmaa.so.1" | grep -c ' T drmaa_')" -eq 36 ]
}

@test "drmaa: the client program stays statically linked" {
	# AddressSanitizer's runtime cannot be linked statically.
	! ldd "$NOWQ_BIN/nowq" 2>/dev/null | grep -q libasan || skip "a sanitizer build links the client dynamically"
	run file -L "$NOWQ_BIN/nowq"
	[[ "$output" == *"statically linked"* ]]
}

# The interpreter Debian's python3-drmaa is installed for, whatever python3
# comes first on the PATH.
debian_python() {
	[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import drmaa' 2>/dev/null ||
		skip "python3-drmaa is not installed (apt-get install python3-drmaa)"
}

@test "drmaa: Debian's python3-drmaa submits a job and a bulk job, waits, reads exit status and rusage" {
	export DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1
	DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1 debian_python
	run /usr/bin/python3 "$DRMAA_T/drmaa_python.py" "$WORK"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "python3-drmaa: ok" ]
}

@test "drmaa: drmaa_wait's rusage has the names Grid Engine's libdrmaa gives (t/sge/gaps/drmaa-rusage.names)" {
	export DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1
	debian_python
	run /usr/bin/python3 -c '
import drmaa
s = drmaa.Session(); s.initialize()
jt = s.createJobTemplate(); jt.remoteCommand = "/bin/sleep"; jt.args = ["0"]
jt.outputPath = ":/dev/null"; jt.joinFiles = True
info = s.wait(s.runJob(jt), drmaa.Session.TIMEOUT_WAIT_FOREVER)
print("\n".join(sorted(info.resourceUsage))); s.exit()'
	[ "$status" -eq 0 ]
	diff <(sort "$top_srcdir/t/sge/gaps/drmaa-rusage.names") <(printf '%s\n' "$output")
}

@test "drmaa: nowq env sets SGE_ROOT and DRMAA_LIBRARY_PATH, which python3-drmaa needs alone" {
	run nowq env --dir "$CLUSTER"
	[ "$status" -eq 0 ]
	grep -q "^export SGE_ROOT='/" <<<"$output"
	grep -qx "export DRMAA_LIBRARY_PATH=$(cd "$DRMAA_DIR" && pwd -P)/libdrmaa.so.1" <<<"$output"
	DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1 debian_python
	run env -u DRMAA_LIBRARY_PATH -u SGE_ROOT -u LD_LIBRARY_PATH sh -c 'eval "$(nowq env --dir "$CLUSTER")"
		exec /usr/bin/python3 -c "import drmaa
s = drmaa.Session(); s.initialize(); print(s.drmsInfo); s.exit()"'
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == "nowq "* ]]
}

@test "drmaa: Snakemake 7 runs a workflow of ten jobs with a fan-in through --drmaa \" -cwd\"" {
	[ -x /usr/bin/snakemake ] || skip "snakemake is not installed (apt-get install snakemake)"
	DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1 debian_python
	cp "$DRMAA_T/Snakefile" "$WORK/"
	cd "$WORK"
	DRMAA_LIBRARY_PATH=$DRMAA_DIR/libdrmaa.so.1 run /usr/bin/snakemake --drmaa " -cwd" --jobs 8 --latency-wait 30
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/report.txt")" = "total 36" ]
	# Every job but the local target went through the cluster.
	[ "$(grep -c 'Submitted DRMAA job' <<<"$output")" -eq 10 ]
	[ "$(qacct -j | grep -c '^jobname')" -ge 10 ]
}
