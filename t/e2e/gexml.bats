#!/usr/bin/env bats
# gexml.bats: qstat's and qhost's -xml and qstat's -r, -ext, -pri, -g c, -q against Grid Engine 8.1.9's recorded outputs (t/sge/xml), and every document parsed by xmllint.

load helpers

FIX=$top_srcdir/t/sge/xml

# The same jobs t/sge/record-xml.sh submitted to Grid Engine: one ended,
# one running, one held, one waiting for its start time, an array of four
# two at a time, and a held one with paths, requests and a predecessor.
setup_file() {
	SLOTS=4 cluster_start
	work_start
	cd "$WORK"
	DONE=$(qsub -terse -N xdone -b y /bin/true)
	RUN=$(qsub -terse -N xrun -b y /bin/sleep 600)
	HOLD=$(qsub -terse -N xhold -h -b y /bin/sleep 600)
	PEND=$(qsub -terse -N xpend -a 203001010000 -b y /bin/sleep 1)
	ARR=$(qsub -terse -N xarr -t 1-4 -tc 2 -b y /bin/sleep 600 | cut -d. -f1)
	RICH=$(qsub -terse -N xrich -h -cwd -o "$WORK/xrich.o" -e "$WORK/xrich.e" \
	    -l h_vmem=1G,h_rt=1:00:00 -q all.q -hold_jid "$HOLD" -S /bin/sh -v FOO=bar -p -5 \
	    -m e -M root@localhost -b y /bin/sleep 1)
	export DONE RUN HOLD PEND ARR RICH
	wait_until 60 job_finished "$DONE"
	wait_until 60 sh -c '[ "$(qstat -s r | grep -c " r ")" -eq 3 ]'
}

teardown_file() {
	qdel -u root >/dev/null 2>&1 || true
	wait_until 60 sh -c '[ -z "$(qstat -s r)" ]' || true
	cluster_stop
	work_stop
}

# shape FIXTURE... -- CMD...: CMD's document parses and has the fixtures' shape.
shape() {
	local fix=() sub=""
	[ "$1" = --subset ] && { sub=--subset; shift; }
	while [ "$1" != -- ]; do fix+=("$FIX/$1"); shift; done
	shift
	"$@" > "$WORK/out.xml"
	xmllint --noout "$WORK/out.xml"
	python3 "$NOWQ_E2E/xmlshape.py" $sub "$WORK/out.xml" "${fix[@]}"
}

@test "xmllint is installed (setup.sh installs libxml2-utils)" {
	command -v xmllint
}

@test "qstat -xml: running jobs in queue_info, pending in job_info, Grid Engine's elements and order" {
	shape qstat.xml -- qstat -xml
	shape qstat-u.xml -- qstat -u root -xml
	[ "$(grep -c '<job_list state="running">' "$WORK/out.xml")" -eq 3 ]
	[ "$(grep -c '<job_list state="pending">' "$WORK/out.xml")" -eq 4 ]
	grep -q "<JB_job_number>$RUN</JB_job_number>" "$WORK/out.xml"
	grep -q '<tasks>3-4:1</tasks>' "$WORK/out.xml"
}

@test "qstat -s p, -s r, -s h, -s z -xml select as Grid Engine does" {
	shape qstat-sp.xml -- qstat -s p -xml
	shape qstat-sr.xml -- qstat -s r -xml
	shape qstat-sh.xml -- qstat -s h -xml
	! grep -q "<JB_job_number>$PEND</JB_job_number>" "$WORK/out.xml"
	shape qstat-sz.xml -- qstat -s z -xml
	grep -q '<job_list state="zombie">' "$WORK/out.xml"
	grep -q "<JB_job_number>$DONE</JB_job_number>" "$WORK/out.xml"
}

@test "qstat -f -xml: a Queue-List per queue instance with its running jobs, then the pending ones" {
	shape qstat-f.xml -- qstat -f -xml
	grep -q '<name>all.q@' "$WORK/out.xml"
	grep -q '<slots_total>4</slots_total>' "$WORK/out.xml"
}

@test "qstat -ext -xml and qstat -r -xml" {
	shape qstat-ext.xml -- qstat -ext -xml
	shape qstat-r.xml -- qstat -r -xml
	grep -q '<hard_request name="h_vmem" resource_contribution="0.000000">' "$WORK/out.xml"
	grep -q '<hard_req_queue>all.q</hard_req_queue>' "$WORK/out.xml"
	grep -q "<predecessor_jobs_req>$HOLD</predecessor_jobs_req>" "$WORK/out.xml"
	grep -q '<full_job_name>xrich</full_job_name>' "$WORK/out.xml"
}

@test "qstat -g c -xml: the cluster queue summary" {
	shape qstat-gc.xml -- qstat -g c -xml
	grep -q '<total>4</total>' "$WORK/out.xml"
}

@test "qstat -j -xml: detailed_job_info of running, held, waiting, array and requesting jobs" {
	for id in "$RUN" "$HOLD" "$PEND" "$ARR" "$RICH" "$RUN,$RICH"; do
		shape --subset qstat-j-run.xml qstat-j-hold.xml qstat-j-pend.xml qstat-j-arr.xml \
		    qstat-j-rich.xml -- qstat -j "$id" -xml
	done
	grep -q '<VA_variable>__SGE_PREFIX__O_HOME</VA_variable>' "$WORK/out.xml"
	grep -q '<PN_path>'"$WORK"'/xrich.o</PN_path>' "$WORK/out.xml"
	grep -q "<JRE_job_number>$HOLD</JRE_job_number>" "$WORK/out.xml"
	grep -q '<CE_name>h_vmem</CE_name>' "$WORK/out.xml"
}

# The jobs t/sge/record-gaps.sh submitted: one waiting for two others, with
# a queue and two mail addresses, and one with the kept options.
gaps_jobs() {
	PA=$(qsub -terse -h -N pa -b y /bin/true)
	PB=$(qsub -terse -h -N pb -b y /bin/true)
	GJ=$(qsub -terse -h -N gj -hold_jid "$PA,$PB" -q all.q -M "root@localhost,other@localhost" \
	    -m be -b y /bin/true)
	KEPT=$(qsub -terse -h -N kept -A acct1 -P p1 -M bob -binding linear:1 -b y /bin/true)
}

@test "qstat -j -xml: mail list, requested predecessors, queue, project and binding as Grid Engine" {
	gaps_jobs
	G=$top_srcdir/t/sge/gaps
	shape --subset ../gaps/qstat-j-xml.out -- qstat -j "$GJ" -xml
	for e in JB_mail_list JB_jid_predecessor_list JB_jid_request_list JB_hard_queue_list JB_binding; do
		[ "$(grep -c "<$e>" "$WORK/out.xml")" -eq "$(grep -c "<$e>" "$G/qstat-j-xml.out")" ] ||
		    { echo "$e"; false; }
	done
	# The values, ids as names.
	vals() { grep -E '<(MR_user|MR_host|JRE_job_number|JRE_job_name|QR_name|BN_[a-z_]+|JB_account|JB_project)>' "$1" |
	    sed -E 's/>(cloudsdk|root)</>USER</'; }
	diff <(vals "$G/qstat-j-xml.out") <(vals "$WORK/out.xml" | sed -E "s/>$PA</>PA</; s/>$PB</>PB</")
	shape --subset ../gaps/qstat-j-kept-xml.out -- qstat -j "$KEPT" -xml
	diff <(vals "$G/qstat-j-kept-xml.out") <(vals "$WORK/out.xml")
	# Without -M: the owner at the submit host, in an <element>; no hard queue.
	qstat -j "$PA" -xml > "$WORK/pa.xml"
	grep -A1 '<JB_mail_list>' "$WORK/pa.xml" | grep -q '<element>'
	! grep -q JB_hard_queue_list "$WORK/pa.xml"
	# The job another waits for names it, as Grid Engine's JB_jid_successor_list.
	grep -A2 '<JB_jid_successor_list>' "$WORK/pa.xml" | grep -q "<JRE_job_number>$GJ</JRE_job_number>"
	shape --subset qstat-j-hold.xml qstat-j-rich.xml -- qstat -j "$PA" -xml
	# The plain view: mail_options and mail_list as Grid Engine prints them.
	qstat -j "$GJ" > "$WORK/gj.txt"
	mails() { grep -E '^(mail_options|mail_list):' "$1" | sed -E 's/(cloudsdk|root)@/USER@/'; }
	diff <(mails "$G/qstat-j.out") <(mails "$WORK/gj.txt")
	qdel "$GJ" "$KEPT" "$PA" "$PB" >/dev/null
}

@test "qstat -j -xml of an unknown or ended job: unknown_jobs, exit 0, as Grid Engine" {
	run qstat -j 999999 -xml
	[ "$status" -eq "$(cat "$FIX/qstat-j-none.xml.rc")" ]
	echo "$output" > "$WORK/out.xml"
	xmllint --noout "$WORK/out.xml"
	python3 "$NOWQ_E2E/xmlshape.py" "$WORK/out.xml" "$FIX/qstat-j-none.xml"
	grep -q '<ST_name>999999</ST_name>' "$WORK/out.xml"
	# An ended job is unknown to qstat -j, as in Grid Engine.
	run qstat -j "$DONE" -xml
	[ "$status" -eq 0 ]
	[[ "$output" == *"<ST_name>$DONE</ST_name>"* ]]
}

@test "qhost -xml, -q, -j, -F: the global host, then each host's values, queues, jobs and resources" {
	shape qhost.xml -- qhost -xml
	grep -q "<host name='global'>" "$WORK/out.xml"
	shape qhost-q.xml -- qhost -q -xml
	shape qhost-j.xml -- qhost -j -xml
	grep -q "name='job_name'>xrun</jobvalue>" "$WORK/out.xml"
	shape --subset qhost-F.xml -- qhost -F -xml
	grep -q "<resourcevalue name='arch' dominance='hl'>" "$WORK/out.xml"
}

@test "-xml escapes what users write: a job name with markup parses back as written" {
	id=$(qsub -terse -h -N "a<b>&'\"c" -b y /bin/true)
	qstat -xml > "$WORK/esc.xml"
	xmllint --noout "$WORK/esc.xml"
	[ "$(xmllint --xpath "string(//job_list[JB_job_number=$id]/JB_name)" "$WORK/esc.xml")" = "a<b>&'\"c" ]
	qstat -j "$id" -xml | xmllint --noout -
	qdel "$id" >/dev/null
}

# The plain views: headers and rules byte for byte, rows column for column
# (the values nowq has no counterpart of, and ids, dates, hosts, users
# normalised).
norm() {
	sed -E 's/^ *[0-9]+ /ID /; s#[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9:]{8}#DATE#; s/all\.q@[A-Za-z0-9.-]+ */all.q@HOST /; s/ [0-9]\.[0-9]{5}/ N.NNNNN/g; s/(cloudsdk|root) +/USER /; s/ +$//'
}

@test "qstat -ext, -pri: Grid Engine's headers, rules and columns" {
	for v in ext pri; do
		qstat -$v > "$WORK/$v.txt"
		diff <(head -2 "$FIX/qstat-$v.txt") <(head -2 "$WORK/$v.txt")
		# The first row, a running job's, with its values normalised.
		diff <(sed -n '3p' "$FIX/qstat-$v.txt" | norm) <(sed -n '3p' "$WORK/$v.txt" | norm)
	done
	grep -q ' hqw  ' "$WORK/ext.txt"
}

@test "qstat -r: the job lines with Grid Engine's Full jobname, Master Queue, Hard Resources and Binding lines" {
	qstat -r > "$WORK/r.txt"
	labels() { grep -oE '^       [A-Z][A-Za-z ()]+:' "$1" | sort -u; }
	diff <(labels "$FIX/qstat-r.txt") <(labels "$WORK/r.txt")
	# A job with a queue and two predecessors: its lines, ids as names.
	gaps_jobs
	qstat -r | sed -n "/^ *$GJ /,/Binding/p" | sed -E "s/\b$PA\b/PA/g; s/\b$PB\b/PB/g" > "$WORK/gj.txt"
	diff <(sed -n '/^ *ID /,/Binding/p' "$top_srcdir/t/sge/gaps/qstat-r.out" | tail -n +2) <(tail -n +2 "$WORK/gj.txt")
	qdel "$GJ" "$KEPT" "$PA" "$PB" >/dev/null
	# As asked, in Grid Engine's order and units (times in seconds).
	grep -A1 '^       Hard Resources:   h_vmem=1G (0.000000)$' "$WORK/r.txt" |
		grep -q '^                         h_rt=3600 (0.000000)$'
	grep -q '^       Master Queue:     all.q@' "$WORK/r.txt"
}

@test "qstat -g c: the cluster queue line under Grid Engine's header" {
	qstat -g c > "$WORK/gc.txt"
	diff <(head -2 "$FIX/qstat-gc.txt") <(head -2 "$WORK/gc.txt")
	[[ "$(sed -n 3p "$WORK/gc.txt")" =~ ^all\.q\ {26}\ +[0-9]+\.[0-9]{2}\ +3\ +0\ +1\ +4\ +0\ +0\ $ ]]
}

@test "qstat -q QUEUE: the queue's running jobs and every pending one; an unknown queue prints nothing, exit 1" {
	run qstat -q all.q
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | head -2)" = "$(head -2 "$FIX/qstat-q.txt")" ]
	[ "$(echo "$output" | grep -c ' r  ')" -eq 3 ]
	run qstat -q 'all*'
	[ "$(echo "$output" | grep -c ' r  ')" -eq 3 ]
	run qstat -q nosuch.q
	[ "$status" -eq "$(cat "$FIX/qstat-q-none.txt.rc")" ]
	[ -z "$output" ]
}

# same_as NAME CMD...: CMD's standard error and exit status are Grid
# Engine's recorded ones, and it prints nothing (an empty list or an
# unknown object).
same_as() {
	local name=$1
	shift
	run "$@"
	[ "$status" -eq "$(cat "$FIX/$name.rc")" ]
	[ "$output" = "$(cat "$FIX/$name.err")" ]
}

@test "qselect: each queue instance a line; an unknown queue prints nothing and exits 1" {
	for f in qselect.txt qselect-q.txt; do
		args=""
		[ "$f" = qselect-q.txt ] && args="-q all.q"
		run qselect $args
		[ "$status" -eq 0 ]
		[ "$(echo "$output" | sed 's/@.*/@HOST/')" = "$(sed 's/@.*/@HOST/' "$FIX/$f")" ]
	done
	run qselect -q nosuch.q
	[ "$status" -eq "$(cat "$FIX/qselect-none.txt.rc")" ]
	[ -z "$output" ]
	run qselect -qs d
	[ "$status" -eq 1 ]
	run qselect -l "arch=$(qhost | awk 'NR == 3 { print $2 }')"
	[ "$status" -eq 0 ]
	[[ "$output" == all.q@* ]]
	run qselect -U root
	[ "$status" -eq 1 ]
	[[ "$output" == *'option "-U" is not supported by nowq'* ]]
}

@test "qconf -sm, -so, -sel, -sh, -ss: Grid Engine's lists; -smasters shows the masters" {
	run qconf -sm
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(head -1 "$FIX/qconf-sm.txt")" ]
	same_as qconf-so.txt qconf -so
	for o in sel sh ss; do
		run qconf -$o
		[ "$status" -eq "$(cat "$FIX/qconf-$o.txt.rc")" ]
		[ "${#lines[@]}" -eq "$(wc -l < "$FIX/qconf-$o.txt")" ]
		[ "$output" = "$(qhost | awk 'NR > 2 { print $1 }')" ]
	done
	qconf -smasters | grep -q primary
}

@test "qconf -sconf: #global: and Grid Engine's keys, the value at column 30" {
	run qconf -sconf
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(head -1 "$FIX/qconf-sconf.txt")" ]
	for l in "${lines[@]:1}"; do
		k=${l%% *}
		grep -q "^$k " "$FIX/qconf-sconf.txt"
		[[ "${l:0:29}" == "$(printf '%-29s' "$k")" ]]
		[ "${l:29:1}" != " " ]
	done
	[ "$(qconf -sconf global)" = "$output" ]
}

@test "qconf -shgrpl, -shgrp, -sul, -su, -sprjl, -sprj: what Grid Engine says when there are none" {
	same_as qconf-shgrpl.txt qconf -shgrpl
	same_as qconf-shgrp.txt qconf -shgrp @allhosts
	same_as qconf-su-none.txt qconf -su nosuch
	same_as qconf-sprjl-none.txt qconf -sprjl
	same_as qconf-sprj.txt qconf -sprj nosuch
	run qconf -sul
	[ "$status" -eq 1 ]
	[ "$output" = "no userset list defined" ]
}
