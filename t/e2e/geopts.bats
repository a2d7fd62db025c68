#!/usr/bin/env bats
# geopts.bats: Grid Engine's options and resources against its recorded outputs (t/sge/opts): the complex list, -hard/-soft, the kept options in qstat -j and qacct, qalter's hold letters and context, the limits set on the host, and every option of every command accepted or refused in one sentence.

load helpers

FIX=$top_srcdir/t/sge/opts

setup() {
	EXECDS=2 cluster_start
	work_start
}

teardown() {
	cluster_stop
	work_stop
}

# A line of qstat -j's output, whole, from nowq or from a fixture.
field_line() { grep -E "^$2: " "$1" || true; }

# The attributes Grid Engine's list has, one "name shortcut type requestable" a line.
complex_rows() { grep -v '^#' "$FIX/complex" | awk '{ print $1, $2, $3, $5 }'; }

@test "qconf -sc prints Grid Engine's default complex list, with nowq's use of each attribute" {
	run qconf -sc
	[ "$status" -eq 0 ]
	# Grid Engine's eight columns, row for row; nowq's use is the ninth.
	diff <(grep -v '^#' "$FIX/complex" | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8 }') \
	    <(printf '%s\n' "$output" | grep -v '^#' | awk '{ print $1, $2, $3, $4, $5, $6, $7, $8 }')
	[ "$(printf '%s\n' "$output" | head -1 | awk '{ print $NF }')" = nowq ]
	# Every requestable attribute is enforced, matched or recorded; the rest are not asked for.
	printf '%s\n' "$output" | grep -v '^#' | awk '
	    $5 == "YES" && $9 !~ /^(enforced|matched|recorded)$/ { bad = 1; print "no use: " $1 }
	    $5 == "NO" && $9 != "-" { bad = 1; print "non-requestable with a use: " $1 }
	    END { exit bad }'
	printf '%s\n' "$output" | grep -q '^h_data .* enforced (RLIMIT_DATA hard)$'
	printf '%s\n' "$output" | grep -q '^virtual_free .* matched (the host.s memory)$'
}

@test "every requestable attribute, by name and by shortcut, is accepted by qsub -l, #\$ and qalter -l" {
	n=0
	while read -r name short type req; do
		[ "$req" = YES ] || continue
		case $type in
		MEMORY) v=1G ;; TIME) v=1:00:00 ;; BOOL) v=TRUE ;; INT | DOUBLE) v=1 ;;
		*) v=x ;;
		esac
		[ "$name" = qname ] && v=$(qconf -sql | head -1)
		[ "$name" = hostname ] && v=$(qhost | awk '/^vm-/ { print $1; exit }')
		for a in "$name" "$short"; do
			id=$(qsub -terse -h -w n -l "$a=$v" -b y true) || { echo "qsub -l $a=$v: $id"; false; }
			printf '#!/bin/sh\n#$ -l %s=%s\ntrue\n' "$a" "$v" > "$WORK/d.sh"
			did=$(qsub -terse -h -w n "$WORK/d.sh") || { echo "#\$ -l $a=$v: $did"; false; }
			run qalter -w n -l "$a=$v" "$id"
			[ "$status" -eq 0 ] || { echo "qalter -l $a=$v: $output"; false; }
			n=$((n + 1))
		done
	done < <(complex_rows)
	echo "$n names accepted three ways" >&3
	[ "$n" -ge 80 ]
	qdel -u "$(id -un)" >/dev/null
}

@test "a non-requestable attribute is refused in Grid Engine's words" {
	want=$(sed -n 's/^Unable to run job: //p' "$FIX/qsub-nonreq.err")
	run qsub -l load_avg=1 -b y true
	[ "$status" -eq 1 ]
	[ "$output" = "qsub: error: $want" ]
}

@test "qstat -j shows the hard and soft requests and the kept options as Grid Engine does" {
	id=$(qsub -terse -h -w n -N optsjob -hard -l vf=1G,h_vmem=2G,s_cpu=1:00:00,h_fsize=1M,arch=lx-amd64 \
	    -soft -l mf=1G,hostname=vm -P p1 -A acct1 -R y -js 5 -ac a=1,b=2 -shell n \
	    -binding linear:1 -b y /bin/true)
	qstat -j "$id" > "$WORK/nowq"
	for k in account reserve "hard resource_list" "soft resource_list" jobshare project context binding; do
		[ "$(field_line "$WORK/nowq" "$k")" = "$(field_line "$FIX/qstat-j" "$k")" ] ||
		    { echo "$k: nowq '$(field_line "$WORK/nowq" "$k")' GE '$(field_line "$FIX/qstat-j" "$k")'"; false; }
	done
	# qalter -ac adds, -sc replaces, as in Grid Engine; -dc (which Grid
	# Engine's qmaster dies of) deletes.
	qalter -ac c=3 "$id"
	[ "$(qstat -j "$id" | grep '^context:')" = "$(field_line "$FIX/qstat-j-ac" context)" ]
	qalter -sc x=9 "$id"
	[ "$(qstat -j "$id" | grep '^context:')" = "$(field_line "$FIX/qstat-j-altered" context)" ]
	qalter -ac y=1 -dc x "$id"
	[ "$(job_field "$id" context)" = "y=1" ]
	# qalter -soft -l replaces the soft request, -P and -A the names.
	qalter -soft -l arch=other -P p2 -A a2 "$id"
	[ "$(qstat -j "$id" | sed -n 's/^soft resource_list: *//p')" = "arch=other" ]
	[ "$(job_field "$id" project)" = p2 ]
	[ "$(job_field "$id" account)" = a2 ]
	qdel "$id" >/dev/null
}

@test "qalter -h: lower case sets a hold, upper case clears it, the job waits while any is left" {
	id=$(qsub -terse -h -b y true)
	for h in o s U O; do
		run qalter -h "$h" "$id"
		[ "$status" -eq 0 ]
		[ "$(job_state "$id")" = "$(cat "$FIX/state-h$h")" ] ||
		    { echo "after -h $h: $(job_state "$id"), GE $(cat "$FIX/state-h$h")"; false; }
	done
	# The system hold is the last; clearing it lets the job run.
	qalter -h S "$id"
	wait_until 20 job_finished "$id"
	# n clears every hold; an unknown letter is refused.
	id=$(qsub -terse -h -b y true)
	qalter -h os "$id"
	qalter -h n "$id"
	wait_until 20 job_finished "$id"
	run qalter -h x "$id"
	[ "$status" -ne 0 ]
	[[ "$output" == *"-h wants letters of u, o, s, n, U, O, S"* ]]
	# qhold and qrls take the operator and system holds too.
	id=$(qsub -terse -h -b y true)
	qhold -h os "$id"
	qrls "$id"
	[ "$(job_state "$id")" = hqw ]
	qrls -h o "$id"
	[ "$(job_state "$id")" = hqw ]
	qrls -h s "$id"
	wait_until 20 job_finished "$id"
}

@test "soft requests pick the host that meets them and never keep a job waiting" {
	wait_until 20 sh -c '[ "$(qhost | grep -c "^vm-")" -eq 2 ]' || cluster_postmortem
	hosts=$(qhost | awk '/^vm-/ { print $1 }')
	for want in $hosts $hosts; do
		id=$(qsub -terse -o /dev/null -e /dev/null -soft -l "hostname=$want" -b y true)
		wait_until 20 job_finished "$id"
		[ "$(qacct -j "$id" | awk '$1 == "hostname" { print $2 }')" = "$want" ]
	done
	# A preference no host meets: the job runs all the same.
	id=$(qsub -terse -o /dev/null -e /dev/null -soft -l hostname=nosuchhost,arch=nosucharch -b y true)
	wait_until 20 job_finished "$id"
	[ "$(qacct -j "$id" | awk '$1 == "exit_status" { print $2 }')" = 0 ]
}

@test "s_ and h_ limits are set on the job's process; h_fsize ends a job writing past it" {
	id=$(qsub -terse -o "$WORK/lim.out" -j y -l h_data=100M,s_stack=4M,h_stack=8M,s_core=0,h_fsize=1M \
	    -b y sh -c 'ulimit -d; ulimit -s; ulimit -Hs; ulimit -c; ulimit -f')
	wait_until 20 job_finished "$id"
	[ "$(cat "$WORK/lim.out")" = "$(printf '102400\n4096\n8192\n0\n2048')" ]
	id=$(qsub -terse -o /dev/null -e /dev/null -l h_fsize=10K -b y \
	    sh -c "head -c 100000 /dev/zero > $WORK/big")
	wait_until 20 job_finished "$id"
	[ "$(stat -c %s "$WORK/big")" -le 10240 ]
	[ "$(job_field "$id" exit_status)" -ne 0 ]
}

@test "-P and -A reach qacct -j, and qacct -P and -A select by them" {
	id=$(qsub -terse -sync y -o /dev/null -e /dev/null -N optsacct -P p1 -A acct1 -b y /bin/true | head -1)
	other=$(qsub -terse -sync y -o /dev/null -e /dev/null -P p2 -b y /bin/true | head -1)
	qacct -j "$id" > "$WORK/acct"
	for k in project account jobname; do
		[ "$(awk -v k=$k '$1 == k { print $2 }' "$WORK/acct")" = \
		    "$(awk -v k=$k '$1 == k { print $2 }' "$FIX/qacct-j")" ]
	done
	[ "$(qacct -j -P p1 | awk '$1 == "jobnumber" { print $2 }')" = "$id" ]
	[ "$(qacct -j -A acct1 | awk '$1 == "jobnumber" { print $2 }')" = "$id" ]
	[ "$(qacct -j -P p2 | awk '$1 == "jobnumber" { print $2 }')" = "$other" ]
	[ -z "$(qacct -j -P nosuchproject)" ]
	run qacct -P p1
	[ "$status" -eq 0 ]
}

# The options a command's -help lists, once each.
help_options() {
	grep -oE '^ *\[?-[A-Za-z@][A-Za-z_0-9]*' "$FIX/help/$1" | tr -d ' [' | sort -u
}

@test "every option Grid Engine's commands list is accepted or refused with one sentence" {
	total=0 refused=0
	for c in qsub qrsh qalter qstat qhost qacct qdel qhold qrls qmod qconf; do
		for o in $(help_options "$c"); do
			total=$((total + 1))
			out=$(cd "$WORK" && timeout 10 "$c" "$o" < /dev/null 2>&1) || true
			case $out in
			*"unknown option"* | *"invalid option"*)
				echo "$c $o: $out"; false ;;
			*"not supported"*)
				[[ "$out" == *"option \"$o\" is not supported by nowq"* ]] ||
				    { echo "$c $o: $out"; false; }
				refused=$((refused + 1)) ;;
			esac
		done
	done
	echo "$total options, $refused refused by name" >&3
	[ "$total" -ge 300 ]
	qdel -u "$(id -un)" >/dev/null 2>&1 || true
}

@test "qsub -b y of one shell line runs it through the shell as Grid Engine does; -shell n executes it as a word" {
	cd "$WORK"
	# Grid Engine's recording joined `echo 'a  b' c '$HOME' 'x;echo y'` into
	# this line and ran it through the shell.
	run qsub -sync y -o "$WORK/line.out" -j y -b y 'echo a  b c $HOME x;echo y'
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	diff "$top_srcdir/t/sge/gaps/qsub-b-args.out" <(sed "s#$HOME#HOME#g" "$WORK/line.out")
	# A first word that names a program keeps the words as they are.
	run qsub -sync y -o "$WORK/words.out" -j y -b y printf '%s|' 'a  b' '$HOME'
	[ "$status" -eq 0 ]
	[ "$(cat "$WORK/words.out")" = 'a  b|$HOME|' ]
	# -shell n: the line is one word to execute, which no program is: the
	# job is held in error, as Grid Engine holds one it cannot start.
	id=$(qsub -terse -o /dev/null -j y -shell n -b y "echo hi > $WORK/no.out")
	wait_until 30 state_is "$id" Eqw
	[[ "$(job_reason "$id")" == *"cannot execute echo hi > "* ]]
	[ ! -e "$WORK/no.out" ]
	qdel "$id"
}

# Grid Engine's recording of -i: t/sge/record-drmaa24.sh.
IFIX=$top_srcdir/t/sge/drmaa24

@test "qsub -i, #\$ -i and qalter -i: the job reads the file as its standard input, as Grid Engine's does" {
	cd "$WORK"
	printf 'hello\nworld\n' > in.txt
	printf 'new\n' > new.txt
	# -i relative to -cwd; SGE_STDIN_PATH names the file.
	id=$(qsub -terse -h -cwd -i in.txt -o plain.out -j y -b y \
	    sh -c 'cat; echo "SGE_STDIN_PATH=$SGE_STDIN_PATH"')
	diff "$IFIX/stdin-plain.line" <(qstat -j "$id" | grep '^stdin_path_list:')
	qrls "$id" >/dev/null
	qwait "$id" >/dev/null
	diff "$IFIX/plain.out" <(sed "s#$WORK#DIR#g" plain.out)
	# HOST:FILE shown with its host; qalter -i replaces it before the start.
	id=$(qsub -terse -h -cwd -i vm:in.txt -o alter.out -j y -b y cat)
	diff "$IFIX/stdin-host.line" <(qstat -j "$id" | grep '^stdin_path_list:')
	run qalter -i new.txt "$id"
	[ "$status" -eq 0 ]
	[ "$output" = "modified job $id" ]   # Grid Engine: "modified stdin path list of job ID"
	diff "$IFIX/stdin-altered.line" <(qstat -j "$id" | grep '^stdin_path_list:')
	qstat -j "$id" -xml | grep -A1 '<JB_stdin_path_list>' | grep -q '<path_list>'
	qstat -j "$id" -xml | grep -q '<PN_path>new.txt</PN_path>'
	qrls "$id" >/dev/null
	qwait "$id" >/dev/null
	diff "$IFIX/alter.out" alter.out
	# The directive, in a script.
	printf '#!/bin/sh\n#$ -i in.txt\ncat\n' > s.sh
	id=$(qsub -terse -cwd -o directive.out -j y s.sh)
	qwait "$id" >/dev/null
	diff "$IFIX/directive.out" directive.out
	# A file that is not there: the job waits in error, with the reason.
	id=$(qsub -terse -cwd -i nothere.txt -o /dev/null -j y -b y cat)
	wait_until 60 sh -c "qstat | awk -v id=$id '\$1 == id { print \$5 }' | grep -qx \"$(cat "$IFIX/missing.state")\""
	qstat -j "$id" | grep -q "cannot open input file $WORK/nothere.txt"
	qdel "$id" >/dev/null
	# Refused in one sentence: no path, and qrsh, whose input is the terminal.
	run qsub -i "" -b y true
	[ "$status" -ne 0 ]
	[ "$output" = "qsub: error: -i needs a path" ]
	run qrsh -i in.txt true
	[ "$status" -ne 0 ]
	[[ "$output" == *"qrsh takes no -sync, -t, --cron, -h, -o, -e or -i"* ]]
}
