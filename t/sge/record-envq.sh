#!/bin/sh
# record-envq.sh: records Grid Engine 8.1.9's job environment and qacct outputs into t/sge/envq/.
#
# Run as root on a machine where Grid Engine runs (queue all.q): it adds an
# ordinary user "envq" and a parallel environment "envq", runs the jobs as
# that user (Grid Engine's shepherd drops TMPDIR and its other "unsafe"
# variables from root's jobs only), and writes each output once.  The tests
# (t/e2e/geenv.bats, t/e2e/qacct.bats) read these files and never need Grid
# Engine.
set -eu
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
out=$(cd "$(dirname "$0")" && pwd)/envq
U=envq
W=/tmp/envq-rec
B=/usr/bin
mkdir -p "$out"
id "$U" >/dev/null 2>&1 || useradd -m -s /bin/bash "$U"
if ! $B/qconf -sp envq >/dev/null 2>&1; then
	cat >/tmp/envq.pe <<PE
pe_name            envq
slots              8
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    \$pe_slots
control_slaves     FALSE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary TRUE
qsort_args         NONE
PE
	$B/qconf -Ap /tmp/envq.pe
	$B/qconf -aattr queue pe_list envq all.q
fi
rm -rf "$W"
mkdir -p "$W"
printf '#!/bin/sh\nenv\n' >"$W/env.sh"
printf 'some input\n' >"$W/in.txt"
chown -R "$U" "$W"

# Runs a command as $U in $W.
as_user() {
	su "$U" -c "export SGE_ROOT=$SGE_ROOT SGE_CELL=$SGE_CELL; cd $W && $*"
}

# Keeps what Grid Engine set: a variable the job inherited unchanged from
# sge_execd's own environment (the container's, here) is not Grid Engine's,
# unless it is one of Grid Engine's own (SGE_ROOT, SGE_CELL, SGE_ARCH and
# the ports, which execd passes on as they are).
tr '\0' '\n' </proc/"$(pgrep -xo sge_execd)"/environ | grep -v '^SGE_' | sort >"$W/execd.env"
keep() {
	sort "$1" | grep -vxFf "$W/execd.env" >"$out/$2"
}

# What to record: "env", "acct", or both (no argument).
what=${1:-env acct}

case $what in *env*)
# --- the job environment ---
as_user "$B/qsub -sync y -N envq_single -o $W/single.out -e $W/single.err -b y -shell n /usr/bin/env"
keep "$W/single.out" env-single.txt
as_user "$B/qsub -sync y -cwd -N envq_script env.sh"
keep "$(ls "$W"/envq_script.o*)" env-script.txt
as_user "$B/qsub -sync y -cwd -t 1-2 -N envq_array -b y -shell n /usr/bin/env"
keep "$(ls "$W"/envq_array.o*.2)" env-array.txt
as_user "$B/qsub -sync y -wd /tmp -j y -o $W/join.out -i $W/in.txt -N envq_join -b y -shell n /usr/bin/env"
keep "$W/join.out" env-join.txt
as_user "$B/qsub -sync y -cwd -pe envq 2 -N envq_pe -b y -shell n /usr/bin/env"
keep "$(ls "$W"/envq_pe.o*)" env-pe.txt
# What each job's output file name was, to tell SGE_STDOUT_PATH's meaning.
(cd "$W" && ls envq_*) >"$out/env-files.txt"
;; esac

case $what in *acct*)
# --- qacct: a few jobs of two owners, then every listing of them ---
first=$(as_user "$B/qsub -terse -sync y -N acct_a -b y /bin/sleep 1" | head -1)
as_user "$B/qsub -sync y -N acct_mem -l h_vmem=1G -b y /usr/bin/python3 -c \"'x = bytearray(300 << 20)'\""
as_user "$B/qsub -sync y -N acct_arr -t 1-3 -b y /bin/true"
as_user "$B/qsub -sync y -N acct_fail -b y /bin/sh -c \"'exit 3'\"" || true
as_user "$B/qsub -sync y -N acct_pe -pe envq 2 -b y /bin/sleep 1"
last=$($B/qsub -terse -sync y -N acct_root -b y /bin/true | head -1)
# Only these jobs' records, so the sums are the same whoever else used the cluster.
awk -F: -v a="$first" -v b="$last" '$6 >= a && $6 <= b' "$SGE_ROOT/$SGE_CELL/common/accounting" \
	>"$out/accounting"
echo "$first $last" >"$out/acct-ids.txt"
A="-f $out/accounting"
run() {
	name=$1
	shift
	rc=0
	$B/qacct "$@" >"$out/$name.out" 2>"$out/$name.err" || rc=$?
	echo "$rc" >"$out/$name.rc"
}
run qacct $A
run qacct-o $A -o
run qacct-o-user $A -o "$U"
run qacct-u-user $A -u "$U"
run qacct-h $A -h
run qacct-q $A -q
run qacct-q-all $A -q all.q
run qacct-o-h $A -o -h
run qacct-o-q-h $A -o -q -h
run qacct-j-mem $A -j acct_mem
run qacct-j-arr-t $A -j acct_arr -t 2-3
run qacct-t-alone $A -t 2
run qacct-j-pe $A -j acct_pe
run qacct-j-fail $A -j acct_fail
run qacct-j-none $A -j 999999
run qacct-o-none $A -o nobody
run qacct-l $A -l h_vmem=1G
run qacct-l-j $A -l h_vmem=1G -j
run qacct-d $A -d 1
run qacct-b-future $A -b 209901010000
run qacct-e-past $A -e 200001010000
run qacct-b-bad $A -b notatime
run qacct-j-slots $A -slots
;; esac
