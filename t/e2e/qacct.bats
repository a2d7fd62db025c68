#!/usr/bin/env bats
# qacct.bats: real jobs leave accounting records with their exit status, signal, rusage and peak memory, and qacct shows them, filtered and summed, in Grid Engine 8.1.9's layouts (t/sge/envq/qacct-*).

load helpers

FIX=$top_srcdir/t/sge/envq

setup_file() { cluster_start; work_start; }
teardown_file() { cluster_stop; work_stop; }

# acct_field ID KEY: the value of KEY in qacct -j ID's (last) block.
acct_field() { qacct -j "$1" | awk -v k="$2" '$1 == k { $1 = ""; sub(/^ +/, ""); sub(/ +$/, ""); v = $0 } END { print v }'; }
# acct_secs ID KEY: a time's value without its unit ("0.613s").
acct_secs() { acct_field "$1" "$2" | sed 's/s$//'; }

@test "a job that exits 3 has one record: exit_status 3, failed 0, Grid Engine's keys in Grid Engine's order" {
	cd "$WORK"
	id=$(qsub -terse -cwd -N three -b y sh -c 'exit 3')
	wait_until 20 job_finished "$id"
	run qacct -j "$id"
	[ "$status" -eq 0 ]
	[ "$(grep -c '^=\{62\}$' <<<"$output")" -eq 1 ]
	keys=$(awk 'NR > 1 { printf "%s ", $1 }' <<<"$output")
	# Grid Engine 8.1.9's, but for what nowq does not measure or keep.
	want=$(awk 'NR > 1 && $1 !~ /^(mem|io|iow|category)$/ { printf "%s ", $1 }' "$FIX/qacct-j-fail.out")
	[ "$keys" = "$want" ]
	[ "$(acct_field "$id" exit_status)" = 3 ]
	[ "$(acct_field "$id" failed)" = 0 ]
	[ "$(acct_field "$id" jobnumber)" = "$id" ]
	[ "$(acct_field "$id" jobname)" = three ]
	[ "$(acct_field "$id" owner)" = "$(id -un)" ]
	[ "$(acct_field "$id" group)" = "$(id -gn)" ]
	[ "$(acct_field "$id" qname)" = all.q ]
	[ "$(acct_field "$id" hostname)" = "$(qhost | awk 'NR == 3 { print $1 }')" ]
	[ "$(acct_field "$id" taskid)" = undefined ]
	[ "$(acct_field "$id" granted_pe)" = NONE ]
	[ "$(acct_field "$id" slots)" = 1 ]
	# ctime(3)'s format, as Grid Engine prints it
	[[ "$(acct_field "$id" end_time)" =~ ^[A-Z][a-z]{2}\ [A-Z][a-z]{2}\ [\ 0-9][0-9]\ [0-9]{2}:[0-9]{2}:[0-9]{2}\ [0-9]{4}$ ]]
	# the name finds it too
	run qacct -j three
	[ "$status" -eq 0 ]
	[[ "$output" == *"jobnumber    $id "* ]]
}

@test "a job killed by qdel shows signal 9: exit_status 137 and failed 100 with the reason" {
	cd "$WORK"
	id=$(qsub -terse -cwd -b y sleep 300)
	wait_until 20 state_is "$id" r
	qdel "$id"
	wait_until 20 job_finished "$id"
	[ "$(acct_field "$id" exit_status)" = 137 ]
	failed=$(acct_field "$id" failed)
	[[ "$failed" == "100 : assumedly after job ("*"signal 9"*")" ]]
	[ "$(acct_secs "$id" ru_wallclock)" -ge 0 ]
}

@test "a CPU-busy job has ru_utime above 0, cpu = utime + stime, and a resident size" {
	cd "$WORK"
	id=$(qsub -terse -cwd -b y sh -c 'i=0; while [ $i -lt 400000 ]; do i=$((i + 1)); done')
	wait_until 60 job_finished "$id"
	utime=$(acct_secs "$id" ru_utime)
	stime=$(acct_secs "$id" ru_stime)
	cpu=$(acct_secs "$id" cpu)
	awk -v u="$utime" 'BEGIN { exit !(u > 0) }'
	awk -v u="$utime" -v s="$stime" -v c="$cpu" 'BEGIN { d = u + s - c; exit !(d < 0.0015 && d > -0.0015) }'
	[[ "$(acct_field "$id" ru_maxrss)" =~ ^[1-9][0-9]*\.[0-9]{3}(KB|MB)$ ]]
	[ "$(acct_field "$id" ru_minflt)" -gt 0 ]
	# --json carries the whole rusage
	run qacct -j "$id" --json
	[ "$status" -eq 0 ]
	[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["id"])' <<<"$output")" = "$id" ]
	python3 -c '
import json, sys
r = json.load(sys.stdin)["rows"][0]
ru = r["rusage"]
keys = ["ru_utime", "ru_stime", "ru_maxrss", "ru_ixrss", "ru_ismrss", "ru_idrss", "ru_isrss",
        "ru_minflt", "ru_majflt", "ru_nswap", "ru_inblock", "ru_oublock", "ru_msgsnd",
        "ru_msgrcv", "ru_nsignals", "ru_nvcsw", "ru_nivcsw", "maxvmem"]
assert sorted(ru) == sorted(keys), ru
assert ru["ru_utime"] > 0 and r["exit_status"] == 0 and r["failed"] == 0
' <<<"$output"
}

@test "a job deleted before it ran has no record; an unknown id or name is Grid Engine's error" {
	cd "$WORK"
	id=$(qsub -terse -cwd -h -b y true)
	qdel "$id"
	wait_until 20 job_finished "$id"
	run qacct -j "$id"
	[ "$status" -eq 1 ]
	[[ "$output" == *"error: job id $id not found"* ]]
	run qacct -j 999999
	[ "$status" -eq 1 ]
	[[ "$output" == *"error: job id 999999 not found"* ]]
	run qacct -j no-such-name
	[ "$status" -eq 1 ]
	[[ "$output" == *"error: job name no-such-name not found"* ]]
}

@test "a job that never ran shows no exit status of 0: qacct, qstat -j and --json" {
	cd "$WORK"
	bad=$(qsub -terse -cwd -o /dev/null -j y -b y false)
	never=$(qsub -terse -cwd -o /dev/null -j y -W depend=afterok:"$bad" -b y true)
	wait_until 20 job_finished "$never"
	[ "$(acct_field "$never" failed)" = "1 : assumedly before job (dependency never satisfied: $bad failed)" ]
	[ "$(acct_field "$never" exit_status)" = undefined ]
	[ "$(qacct -j "$never" --json | python3 -c 'import sys, json; print([("exit_status" in r) for r in json.load(sys.stdin)["rows"]])')" = "[False]" ]
	[ "$(qstat -j "$never" --json | python3 -c 'import sys, json; print("exit_status" in json.load(sys.stdin)["jobs"][0])')" = False ]
	! qstat -j "$never" | grep -q "^exit_status" || false
	# The job that ran keeps its status everywhere.
	[ "$(acct_field "$bad" exit_status)" = 1 ]
	[ "$(qstat -j "$bad" --json | python3 -c 'import sys, json; print(json.load(sys.stdin)["jobs"][0]["exit_status"])')" = 1 ]
}

@test "qacct sums everything, -o per owner, -d counts the last days, --json gives the sums" {
	cd "$WORK"
	me=$(id -un)
	n=$(qacct --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"][0]["jobs"])')
	[ "$n" -ge 3 ]
	id=$(qsub -terse -cwd -b y sleep 1)
	wait_until 20 job_finished "$id"
	run qacct
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Total System Usage" ]
	[[ "${lines[1]}" =~ ^\ +WALLCLOCK\ +UTIME\ +STIME\ +CPU\ +MEMORY\ +IO\ +IOW$ ]]
	[[ "${lines[2]}" =~ ^=+$ ]]
	# the one-second job shows in the wall clock
	[ "$(awk '{ print $1 }' <<<"${lines[3]}")" -ge 1 ]
	[ "$(qacct --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"][0]["jobs"])')" -eq $((n + 1)) ]
	run qacct -o
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" =~ ^OWNER\ +WALLCLOCK\ +UTIME\ +STIME\ +CPU\ +MEMORY\ +IO\ +IOW$ ]]
	[ "$(awk -v u="$me" '$1 == u' <<<"$output" | wc -l)" -eq 1 ]
	run qacct -o "$me" -d 1
	[ "$status" -eq 0 ]
	[ "$(awk -v u="$me" '$1 == u' <<<"$output" | wc -l)" -eq 1 ]
	# -d counts the attempts that started in the last day: not those that never ran
	started=$(qacct -j --json | python3 -c 'import json,sys; print(sum(r["start_time"] > 0 for r in json.load(sys.stdin)["rows"]))')
	[ "$(qacct -o "$me" -d 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"][0]["jobs"])')" -eq "$started" ]
	# -d with -j: the job ended today
	run qacct -j "$id" -d 1
	[ "$status" -eq 0 ]
	# an owner with no records has no line
	run qacct -o nosuchowner
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "bad options get a one-line error and exit 1" {
	run qacct -d
	[ "$status" -eq 1 ]
	run qacct -d abc
	[ "$status" -eq 1 ]
	[[ "$output" == *'invalid number of days "abc"'* ]]
	run qacct -d 0
	[ "$status" -eq 1 ]
	run qacct -b notatime
	[ "$status" -eq 1 ]
	[[ "$output" == *'-b wants a time as [[CC]YY]MMDDhhmm[.SS], not "notatime"'* ]]
	# What nowq does not record: refused by name.
	for o in -ar -f -m; do
		run qacct $o x
		[ "$status" -eq 1 ]
		[[ "$output" == *"option \"$o\" is not supported by nowq"* ]]
	done
	run qacct -slots x
	[ "$status" -eq 1 ]
	[[ "$output" == *'invalid number of slots "x" for -slots'* ]]
	run qacct -l h_vmem
	[ "$status" -eq 1 ]
	[[ "$output" == *'-l wants attr=value'* ]]
	# Grid Engine's words and status for -t without -j ID
	run qacct -t 2
	[ "$status" -eq "$(cat "$FIX/qacct-t-alone.rc")" ]
	[[ "$output" == *"$(head -1 "$FIX/qacct-t-alone.err" | sed 's/^error: //')"* ]]
	run qacct -x
	[ "$status" -eq 1 ]
	run qacct -help
	[ "$status" -eq 0 ]
	[[ "$output" == *"qacct [-j"* ]]
}

@test "without show_all_jobs a user sees only their own records" {
	id -u nobody >/dev/null 2>&1 || skip "no user nobody on this machine"
	[ "$(id -u)" = 0 ] || skip "needs root to act as another user"
	cd "$WORK"
	mine=$(qsub -terse -cwd -b y true)
	wait_until 20 job_finished "$mine"
	mkdir -p asnobody && chown nobody asnobody
	theirs=$(cd asnobody && setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qsub" -terse -cwd -b y true)
	wait_until 20 job_finished "$theirs"
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qacct" "$@"; }
	# show_all_jobs is true by default: everyone's records are visible
	run as_nobody -j "$mine"
	[ "$status" -eq 0 ]
	echo "show_all_jobs = false" >> "$CLUSTER/qmaster.conf"
	kill -HUP "$(cat "$CLUSTER"/qmaster/qmaster.pid)"
	wait_until 10 bash -c "! setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER=$NOWQ_MASTER $NOWQ_BIN/qacct -j $mine"
	run as_nobody -j "$mine"
	[ "$status" -eq 1 ]
	[[ "$output" == *"error: job id $mine not found"* ]]
	run as_nobody -j "$theirs"
	[ "$status" -eq 0 ]
	run as_nobody -o root
	[ "$status" -eq 1 ]
	[[ "$output" == *"own accounting"* ]]
	run as_nobody -o
	[ "$status" -eq 0 ]
	[ "$(awk 'NR > 2' <<<"$output" | awk '{ print $1 }')" = nobody ]
	# a manager still sees everyone's
	run qacct -j "$theirs"
	[ "$status" -eq 0 ]
}

# same_layout FIXTURE: the table in $output is laid out as Grid Engine's:
# the same titles, a line of "=" as long as theirs, rows as wide, each
# ending in the seven sums with Grid Engine's decimals.
same_layout() {
	local fix=$1 off=0 w i
	if [ "$(head -1 "$fix")" = "Total System Usage" ]; then
		[ "${lines[0]}" = "Total System Usage" ]
		off=1
	fi
	[ "$(sed -n "$((off + 1))p" "$fix" | tr -s ' ')" = "$(tr -s ' ' <<<"${lines[$off]}")" ]
	w=${#lines[$off]}
	[ "${lines[$((off + 1))]}" = "$(printf '%*s' "$w" '' | tr ' ' =)" ]
	for ((i = off + 2; i < ${#lines[@]}; i++)); do
		[ "${#lines[$i]}" -eq "$w" ]
		[[ "${lines[$i]}" =~ \ [0-9]+(\ +[0-9]+\.[0-9]{3}){6}$ ]]
	done
}

@test "qacct's tables by host, queue and owner have Grid Engine's layout; -u is -o" {
	cd "$WORK"
	id=$(qsub -terse -cwd -b y sleep 1)
	wait_until 20 job_finished "$id"
	host=$(acct_field "$id" hostname)
	for c in "qacct:" "qacct-o:-o" "qacct-h:-h" "qacct-q:-q" "qacct-q-all:-q all.q" \
	    "qacct-o-h:-o -h" "qacct-o-q-h:-o -q -h" "qacct-o-none:-o nobody"; do
		echo "--- qacct ${c#*:} as $FIX/${c%%:*}.out"
		run qacct ${c#*:}
		[ "$status" -eq 0 ]
		same_layout "$FIX/${c%%:*}.out"
	done
	# an owner with no record: only the titles, as wide as the name asked
	run qacct -o no_such_owner
	[ "${#lines[@]}" -eq 2 ]
	[ "${#lines[0]}" -eq $(($(head -1 "$FIX/qacct-o-none.out" | wc -L) - 7 + 14)) ]
	run qacct -u "$(id -un)"
	[ "$status" -eq 0 ]
	[ "$output" = "$(qacct -o "$(id -un)")" ]
	# one row per host, queue and owner: this cluster has one of each
	# (the jobs that never ran, on no host, have a row of their own)
	[ "$(qacct -o "$(id -un)" -q -h | awk -v h="$host" 'NR > 2 && $1 == h' | wc -l)" -eq 1 ]
	[ "$(qacct -o "$(id -un)" -q -h | awk -v h="$host" 'NR > 2 && $1 == h { print $1, $2, $3 }')" = "$host all.q $(id -un)" ]
	[ "$(qacct -q | awk 'NR == 3 { print $1 }')" = all.q ]
	# a named host, queue or queue instance selects; another one selects nothing
	[ "$(qacct -h "$host" | awk 'NR == 3 { print $2 }')" = "$(qacct | awk 'NR == 4 { print $1 }')" ]
	[ "$(qacct -q "all.q@$host" | awk 'NR == 3 { print $1, $2 }')" = "$host all.q" ]
	[ "$(qacct -h no.such.host | wc -l)" -eq 2 ]
	[ "$(qacct -q no.q | wc -l)" -eq 2 ]
	# -l hostname= and qname= select as -h and -q; other attributes select
	# every record (Grid Engine: every queue that offers them, all here)
	[ "$(qacct -l hostname=no.such.host | wc -l)" -eq 2 ]
	[ "$(qacct -l "qname=all.q,h_vmem=1G" | awk 'NR == 3 { print $1 }')" = all.q ]
	[ "$(qacct -l h_vmem=1G | awk 'NR == 4')" = "$(qacct | awk 'NR == 4')" ]
}

@test "qacct -g, -pe, -slots, -D: Grid Engine's tables by group, parallel environment, slots and department" {
	G=$top_srcdir/t/sge/gaps
	cd "$WORK"
	id=$(qsub -terse -cwd -b y true)
	wait_until 20 job_finished "$id"
	for c in "qacct-g:-g" "qacct-pe:-pe" "qacct-slots:-slots" "qacct-D:-D" "qacct-o-g:-o -g" \
	    "qacct-slots-1:-slots 1" "qacct-pe-none:-pe NONE" "qacct-g-user:-g $(id -gn)"; do
		echo "--- qacct ${c#*:} as $G/${c%%:*}.out"
		run qacct ${c#*:}
		[ "$status" -eq 0 ]
		same_layout "$G/${c%%:*}.out"
	done
	# Byte for byte where the values are the same: the slots, the one
	# department, no parallel environment.
	[ "$(qacct -slots | head -2)" = "$(head -2 "$G/qacct-slots.out")" ]
	[ "$(qacct -slots 1 | head -2)" = "$(head -2 "$G/qacct-slots-1.out")" ]
	[ "$(qacct -D | head -2)" = "$(head -2 "$G/qacct-D.out")" ]
	[ "$(qacct -pe NONE | head -2)" = "$(head -2 "$G/qacct-pe-none.out")" ]
	[ "$(qacct -g "$(id -gn)" | awk 'NR == 3 { print $1 }')" = "$(id -gn)" ]
	[ "$(qacct -slots 1 | awk 'NR == 3 { print $1 }')" = 1 ]
	[ "$(qacct -pe | awk 'NR == 3 { print $1 }')" = NONE ]
	[ "$(qacct -D | awk 'NR == 3 { print $1 }')" = defaultdepartment ]
	[ "$(qacct -o -g | awk -v u="$(id -un)" 'NR > 2 && $2 == u { print $1 }')" = "$(id -gn)" ]
	# A value no record has: the titles alone.
	for a in "-D other" "-g no_such_group" "-slots 77" "-pe no_such_pe"; do
		[ "$(qacct $a | wc -l)" -eq 2 ] || { echo "qacct $a"; false; }
	done
}

@test "-b, -e and -d select by start time, -E by end time, as Grid Engine reads them" {
	cd "$WORK"
	id=$(qsub -terse -cwd -b y true)
	wait_until 20 job_finished "$id"
	# a begin in the future or an end in the past: the titles alone
	for c in "qacct-b-future:-b 209901010000" "qacct-e-past:-e 200001010000"; do
		run qacct ${c#*:}
		[ "$status" -eq 0 ]
		[ "$output" = "$(cat "$FIX/${c%%:*}.out")" ]
	done
	run qacct -e 200001010000 -E
	[ "${#lines[@]}" -eq 3 ]
	run qacct -d 1
	same_layout "$FIX/qacct-d.out"
	[ "${#lines[@]}" -eq 4 ]
	[ "$(qacct -b 200001010000 -d 1 | wc -l)" -eq 3 ]
	[ "$(qacct -b 200001010000 | wc -l)" -eq 4 ]
	[ "$(qacct -e 209901010000 -d 100000 | wc -l)" -eq 4 ]
	run qacct -j "$id" -b 209901010000
	[ "$status" -eq 1 ]
	run qacct -j "$id" -e 209901010000
	[ "$status" -eq 0 ]
}

@test "qacct -j -t: the tasks asked; units as Grid Engine 8.1.9 prints them" {
	cd "$WORK"
	id=$(qsub -terse -cwd -t 1-3 -b y true | cut -d. -f1)
	wait_until 20 job_finished "$id"
	run qacct -j "$id" -t 2-3
	[ "$status" -eq 0 ]
	[ "$(awk '$1 == "taskid" { print $2 }' <<<"$output" | sort | tr '\n' ' ')" = "2 3 " ]
	# the same keys as Grid Engine's for these tasks, but mem, io, iow, category
	[ "$(awk '$1 !~ /^(mem|io|iow|category)$/ { printf "%s ", $1 }' "$FIX/qacct-j-arr-t.out")" = \
	  "$(awk '{ printf "%s ", $1 }' <<<"$output")" ]
	[[ "$(acct_field "$id" ru_wallclock)" =~ ^[0-9]+s$ ]]
	[[ "$(acct_field "$id" ru_stime)" =~ ^[0-9]+\.[0-9]{3}s$ ]]
	[[ "$(acct_field "$id" ru_ixrss)" = 0.000B ]]
	[[ "$(acct_field "$id" maxvmem)" =~ ^[0-9]+\.[0-9]{3}(B|KB|MB|GB)$ ]]
	[ "$(acct_field "$id" account)" = sge ]
	[ "$(acct_field "$id" ar_sub_time)" = undefined ]
	run qacct -j "$id" -t 7
	[ "$status" -eq 1 ]
}

@test "maxvmem: a job that holds 100 MiB shows at least that much" {
	cd "$WORK"
	id=$(qsub -terse -cwd -b y python3 -c 'x = bytearray(100 << 20); x[::4096] = b"x" * len(x[::4096])')
	wait_until 60 job_finished "$id"
	[ "$(acct_field "$id" exit_status)" = 0 ]
	[[ "$(acct_field "$id" maxvmem)" =~ ^[0-9.]+MB$ ]]
	v=$(qacct -j "$id" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"][0]["rusage"]["maxvmem"])')
	[ "$v" -ge $((100 << 20)) ]
	[ "$v" -lt $((1 << 31)) ]
	[ "$(qacct --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["summary"][0]["maxvmem"])')" -ge "$v" ]
}

# Last: it stops the real execd and speaks for a forged one.
@test "a CHILD_TERM with garbage rusage still ends the job, is accounted as zero, and the master keeps serving" {
	[ "$(id -u)" = 0 ] || skip "needs root to register an execd that runs root's jobs"
	kill "$(cat "$CLUSTER"/execd-1/execd.pid)"
	wait_until 10 bash -c "qhost | grep -q ' unknown'"
	id=$(qsub -terse -cwd -b y true)
	port=$(sed -n 's/^listen *= *"127.0.0.1:\([0-9]*\)".*/\1/p' "$CLUSTER/qmaster.conf")
	run timeout 20 python3 - "$port" "$id" <<'PY'
import json, socket, struct, sys, time
port, job = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", port))
def send(m):
    b = json.dumps(m).encode()
    s.sendall(struct.pack(">I", len(b)) + b)
def recv_exact(n):
    d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c:
            sys.exit("connection closed")
        d += c
    return d
def wait(seq):
    while True:
        m = json.loads(recv_exact(struct.unpack(">I", recv_exact(4))[0]))
        if m.get("seq") == seq:
            return m
send({"type": "HELLO", "seq": 1, "version": 1, "role": "execd", "auth": {"method": "none"}, "uid": 0})
assert wait(1)["ok"]
send({"type": "REGISTER", "seq": 2, "host": "forged", "slots": 1, "uid": 0, "load": [0, 0, 0], "jobs": []})
assert wait(2)["ok"]
send({"type": "PULL", "seq": 3, "free": 1})
d = wait(3)
j = d["jobs"][0]
assert j["id"] == job, d
key = {"id": j["id"], "task": j["task"], "attempt": j["attempt"], "host": "forged"}
# Real times: an end long ago would be purged from qstat at the next tick.
now = int(time.time() * 1000)
send(dict(key, type="CHILD_REGISTER", seq=4, pid=4242, start_time=now - 1000))
assert wait(4)["type"] == "ACK"
send(dict(key, type="CHILD_TERM", seq=5, exit_status=5, signal=0, end_time=now,
          rusage={"ru_utime": "lots", "ru_maxrss": -1, "ru_nvcsw": [1]}))
assert wait(5)["type"] == "ACK"
print("acked")
PY
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *acked* ]]
	wait_until 10 job_finished "$id"
	[ "$(acct_field "$id" exit_status)" = 5 ]
	[ "$(acct_field "$id" hostname)" = forged ]
	[ "$(acct_field "$id" ru_utime)" = 0.000s ]
	[ "$(acct_field "$id" ru_maxrss)" = 0.000B ]
	grep -q "its usage is accounted as zero" "$CLUSTER"/qmaster/qmaster.log
	run qstat -s z
	[ "$status" -eq 0 ]
}
