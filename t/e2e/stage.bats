#!/usr/bin/env bats
# stage.bats: file staging between hosts that share no file system: inputs sent with the job, outputs back, one copy per host for an array (of 8 and of 100 tasks), parallel jobs, a cron entry's inputs, kill -9 of the master and of an execd mid-transfer, a hostile symlink refused, the limits.

load helpers
load netns

# The master m1 (198.18.0.1, where the user submits) and two exec hosts
# nodea and nodeb, each in its own network, UTS and mount namespace: each
# has its own TMPDIR (a tmpfs of its own) and sees an empty folder where
# the submit directory is, so what a job reads came through staging.
setup_file() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
		NOWQ_SKIP="needs root, ip(8) and unshare(1) to build hosts in namespaces"
		return 0
	fi
	export P=nqstg$$
	if ! ip netns add "${P}sw" 2>/dev/null; then
		NOWQ_SKIP="cannot create network namespaces here (ip netns add failed)"
		return 0
	fi
	ip -n "${P}sw" link add br0 type bridge
	ip -n "${P}sw" link set br0 up
	local h n
	for h in m1 a b; do
		case $h in m1) n=1 ;; a) n=11 ;; b) n=12 ;; esac
		netns_host "$h" "$n"
	done
	if ! munge_start realm; then
		NOWQ_SKIP="munge (munged, mungekey) is not installed or cannot start"
		return 0
	fi
	CLUSTER=$(mktemp -d /tmp/nowq-stg.XXXXXX)
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 755 "$CLUSTER" "$WORK"
	export CLUSTER WORK
	cat > "$CLUSTER/qmaster.conf" <<-EOF
	spool_dir = "$CLUSTER/qmaster"
	listen = "198.18.0.1:7444"
	unix_socket = ""
	auth = "munge"
	munge_socket = "$MUNGE_DIR/realm/sock"
	log_file = "$CLUSTER/qmaster.log"
	pid_file = "$CLUSTER/qmaster/qmaster.pid"
	allow_root_jobs = true
	# Hosts are never lost here: the execd killed in mid-fetch came back
	# 2 minutes late once, at load 18, and its job failed as host lost.
	host_timeout = 600
	queue "all.q" {}
	pe "mpi" { slots = 8  allocation_rule = "\$round_robin"  control_slaves = true }
	EOF
	for h in a b; do
		munge_execd_ini "$CLUSTER/execd-$h.ini" "node$h" "198.18.0.1:7444" \
		    "$CLUSTER/execd-$h" "$MUNGE_DIR/realm/sock" "$CLUSTER/execd-$h.log"
		echo "tmpdir = $CLUSTER/tmp-$h" >> "$CLUSTER/execd-$h.ini"
		mkdir -p "$CLUSTER/tmp-$h"
	done
	ip netns exec "${P}m1" qmaster -c "$CLUSTER/qmaster.conf"
	for h in a b; do
		execd_start "$h"
	done
	wait_until 30 host_idle nodea
	wait_until 30 host_idle nodeb
}

teardown_file() {
	netns_cluster_stop
	[ -n "${WORK:-}" ] && rm -rf "$WORK"
	true
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

# execd_start H: host H's execd in its own namespaces, its TMPDIR a tmpfs
# of its own and the submit directory hidden under an empty one.
execd_start() {
	ip netns exec "$P$1" unshare --mount --uts sh -c "hostname node$1 &&
	    mount -t tmpfs tmpfs '$CLUSTER/tmp-$1' && mount -t tmpfs tmpfs '$WORK' &&
	    exec execd -c '$CLUSTER/execd-$1.ini'"
}
on_m() { (cd "$WORK" && ip netns exec "${P}m1" env NOWQ_MASTER="198.18.0.1:7444" MUNGE_SOCKET="$MUNGE_DIR/realm/sock" "$@"); }
host_idle() { [ "$(on_m qhost | awk -v h="$1" '$1 == h { print $7 }')" = idle ]; }
host_state_is() { [ "$(on_m qhost | awk -v h="$1" '$1 == h { print $7 }')" = "$2" ]; }
finished() { on_m qstat -s z | awk -v id="$1" '$1 == id { f = 1 } END { exit !f }'; }
qmaster_pid() { cat "$CLUSTER/qmaster/qmaster.pid"; }
# The master killed and started again once the old process is gone: one
# killed in the middle of writing a large file can take a while to exit,
# and holds the spool's lock until it has.
qmaster_kill_restart() {
	local pid
	pid=$(qmaster_pid)
	kill -9 "$pid"
	# Gone, or a zombie: either has let go of its files.
	wait_until 60 bash -c "[ ! -e /proc/$pid ] || [ \"\$(awk '{ print \$3 }' /proc/$pid/stat)\" = Z ]"
	ip netns exec "${P}m1" qmaster -c "$CLUSTER/qmaster.conf"
}
execd_pid() { pgrep -f "^execd -c $CLUSTER/execd-$1.ini" | head -1; }
# Lines of host H's log of fetches from the master for the file of hash SHA.
fetched() { cat "$CLUSTER/execd-$1/stage/fetched.log" 2>/dev/null | grep -c "^$2 " || true; }
stage_files() { find "$CLUSTER/qmaster/stage" -type f | sort; }
as_nobody() {
	(cd "$PWD" && ip netns exec "${P}m1" setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    env NOWQ_MASTER=198.18.0.1:7444 MUNGE_SOCKET="$MUNGE_DIR/realm/sock" "$@")
}

@test "a job reads its staged inputs on a host that cannot see the submit directory; its outputs come back" {
	cd "$WORK"
	echo "first input" > in.txt
	mkdir -p sub/deeper
	echo "in a folder" > sub/deeper/b.txt
	cat > job.sh <<-SH
	test -e "$WORK/in.txt" && echo "the submit directory is visible" && exit 7
	cat in.txt sub/deeper/b.txt > out.txt
	mkdir results && hostname > results/host && stat -c %a . > results/mode
	echo to-stdout
	SH
	run on_m qsub -sync y --stage-in in.txt,sub --stage-out out.txt,results job.sh
	[ "$status" -eq 0 ]
	[ "$(cat out.txt)" = "$(printf 'first input\nin a folder')" ]
	[[ "$(cat results/host)" == node[ab] ]]
	[ "$(cat results/mode)" = 700 ]
	id=$(echo "${lines[0]}" | awk '{print $3}')
	[ "$(cat "job.sh.o$id")" = to-stdout ]
	# Each file on the master is named by its hash, private.
	sha=$(sha256sum in.txt | cut -d' ' -f1)
	[ "$(stat -c %a "$CLUSTER/qmaster/stage/$sha")" = 600 ]
	[ "$(stat -c %a "$CLUSTER/qmaster/stage")" = 700 ]
	# And the working directory is gone from the exec host.
	[ -z "$(ls "$CLUSTER/execd-a/stage" | grep -v -e '^[0-9a-f]*$' -e lock -e fetched.log)" ]
}

@test "an empty file is staged in and out like any other" {
	cd "$WORK"
	: > nothing.txt
	printf 'test -f nothing.txt && wc -c < nothing.txt > size.txt && : > none.txt\n' > empty.sh
	run on_m qsub -sync y --stage-in nothing.txt --stage-out size.txt,none.txt empty.sh
	[ "$status" -eq 0 ]
	[ "$(cat size.txt)" = 0 ]
	[ -f none.txt ] && [ ! -s none.txt ]
	# Stored on the master under the empty file's hash.
	[ -f "$CLUSTER/qmaster/stage/$(sha256sum nothing.txt | cut -d' ' -f1)" ]
}

@test "staged files keep their modes: a script stays executable on the exec host, an output comes back with its own" {
	cd "$WORK"
	printf '#!/bin/sh\necho ran-the-tool\n' > tool.sh
	chmod 750 tool.sh
	echo data > ro.txt
	chmod 440 ro.txt
	cat > modes.sh <<-'SH'
	stat -c '%a %n' tool.sh ro.txt > modes.txt
	./tool.sh > tool.out
	printf '#!/bin/sh\n' > made.sh && chmod 751 made.sh
	echo x > private.txt && chmod 600 private.txt
	SH
	run on_m sh -c 'umask 022 && qsub -sync y --stage-in tool.sh,ro.txt --stage-out modes.txt,tool.out,made.sh,private.txt modes.sh'
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(cat modes.txt)" = "$(printf '750 tool.sh\n440 ro.txt')" ]
	[ "$(cat tool.out)" = ran-the-tool ]
	[ "$(stat -c %a made.sh)" = 751 ]
	[ "$(stat -c %a private.txt)" = 600 ]
	# Without a mode of its own (made by the job as it likes), the umask.
	[ "$(stat -c %a modes.txt)" = 644 ]
}

@test "qstat -j shows the staged files with sizes and SHA-256; nowq fetch brings outputs back later" {
	cd "$WORK"
	printf 'abc' > small.txt
	printf 'sed s/a/A/ small.txt > up.txt\n' > up.sh
	id=$(on_m qsub -terse -h --stage-in small.txt --stage-out up.txt up.sh)
	run on_m qstat -j "$id"
	[[ "$output" == *"stage_in:"*"small.txt 3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"* ]]
	[[ "$output" == *"stage_out:"*"up.txt"* ]]
	on_m qrls "$id"
	wait_until 60 finished "$id"
	[ ! -e up.txt ]
	mkdir -p later
	run on_m nowq fetch -d later "$id"
	[ "$status" -eq 0 ]
	grep -qx up.txt <<<"$output"
	[ "$(cat later/up.txt)" = Abc ]
	# Only the job's owner fetches it.
	run as_nobody nowq fetch -d /tmp "$id"
	[ "$status" -ne 0 ]
}

@test "an array job's shared input is sent once to each host; each task's output comes back named by task" {
	cd "$WORK"
	head -c 8000000 /dev/urandom > shared.bin
	sha=$(sha256sum shared.bin | cut -d' ' -f1)
	printf 'sha256sum shared.bin | cut -c1-64 > sum.txt\nhostname > where\nsleep 1\n' > arr.sh
	run on_m qsub -sync y -t 1-8 --stage-in shared.bin --stage-out sum.txt,where arr.sh
	[ "$status" -eq 0 ]
	for t in 1 2 3 4 5 6 7 8; do
		[ "$(cat "sum.txt.$t")" = "$sha" ]
	done
	# Each host that ran a task fetched the file from the master once.
	hosts=$(cat where.* | sort -u)
	for h in a b; do
		if grep -qx "node$h" <<<"$hosts"; then
			[ "$(fetched "$h" "$sha")" = 1 ]
		else
			[ "$(fetched "$h" "$sha")" = 0 ]
		fi
	done
}

@test "an array of 100 tasks sharing one input: each host that ran tasks fetched it once" {
	cd "$WORK"
	head -c 300000 /dev/urandom > hundred.bin
	sha=$(sha256sum hundred.bin | cut -d' ' -f1)
	run on_m qsub -sync y -t 1-100 --stage-in hundred.bin -o /dev/null -e /dev/null -b y test -s hundred.bin
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	id=$(echo "${lines[0]}" | awk '{print $3}' | cut -d. -f1)
	# Every task ended well, and each host's fetches are one if it ran any.
	acct=$(on_m qacct -j "$id")
	ok=$(awk '$1 == "exit_status" && $2 == "0"' <<<"$acct" | wc -l)
	[ "$ok" = 100 ] || { echo "$ok tasks ended well"; echo "$acct" | grep -e '^taskid' -e '^exit' -e '^failed' | sort | uniq -c | sort -rn | head; return 1; }
	for h in a b; do
		ran=$(awk -v h="node$h" '$1 == "hostname" && $2 == h' <<<"$acct" | wc -l)
		echo "node$h: $ran tasks, $(fetched "$h" "$sha") fetches"
		[ "$(fetched "$h" "$sha")" = "$(( ran > 0 ? 1 : 0 ))" ]
	done
}

@test "a -pe job on two hosts reads its staged input on the master host, the only one that fetched it; its outputs come back" {
	cd "$WORK"
	echo "input of the parallel job" > pein.txt
	sha=$(sha256sum pein.txt | cut -d' ' -f1)
	# The script runs on the master host alone, as in Grid Engine.
	cat > pe.sh <<-'SH'
	cat pein.txt > peout.txt
	hostname > pemaster
	cut -d' ' -f1 "$PE_HOSTFILE" | sort > pehosts
	SH
	id=$(on_m qsub -terse -h -pe mpi 2 --stage-in pein.txt --stage-out peout.txt,pemaster,pehosts pe.sh)
	run on_m qstat -j "$id"
	[[ "$output" == *"stage_in:"*"pein.txt 26 $sha"* ]]
	[[ "$output" == *"stage_out:"*"peout.txt,pemaster,pehosts"* ]]
	on_m qrls "$id"
	wait_until 60 finished "$id"
	run on_m qwait "$id"
	[ "$status" -eq 0 ] || { echo "$output"; on_m qacct -j "$id"; return 1; }
	[ "$(cat peout.txt)" = "input of the parallel job" ]
	[ "$(cat pehosts)" = "$(printf 'nodea\nnodeb')" ]
	m=$(cat pemaster)
	[[ "$m" == node[ab] ]]
	other=$([ "$m" = nodea ] && echo b || echo a)
	echo "master host $m: $(fetched "${m#node}" "$sha") fetches; node$other: $(fetched "$other" "$sha")"
	[ "$(fetched "${m#node}" "$sha")" = 1 ]
	[ "$(fetched "$other" "$sha")" = 0 ]
	# What came back is on record, kept with the ended job.
	on_m qstat -j "$id" --json | python3 -c 'import json, sys
j = json.load(sys.stdin)["jobs"][0]
assert [(f["name"], f["size"], f["sha256"]) for f in j["staged_out"] if f["name"] == "peout.txt"] == [("peout.txt", 26, sys.argv[1])], j["staged_out"]' "$sha"
}

@test "qsub -n 2 runs its script on both hosts, each with the staged input; part 0's outputs come back" {
	cd "$WORK"
	echo "input of every copy" > nin.txt
	sha=$(sha256sum nin.txt | cut -d' ' -f1)
	printf 'cat nin.txt > nout.txt\necho "$NOWQ_VNN" >> nout.txt\n' > n.sh
	run on_m qsub -sync y -n 2 --stage-in nin.txt --stage-out nout.txt n.sh
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(cat nout.txt)" = "$(printf 'input of every copy\n0')" ]
	[ "$(fetched a "$sha")" = 1 ]
	[ "$(fetched b "$sha")" = 1 ]
}

@test "a parallel job whose part's host cannot take the input fails with the reason; that host is disabled" {
	cd "$WORK"
	echo "nodea cannot take this" > pfault.txt
	sha=$(sha256sum pfault.txt | cut -d' ' -f1)
	mkdir -p "$CLUSTER/execd-a/stage/$sha.part"
	id=$(on_m qsub -terse -n 2 --stage-in pfault.txt -b y cat pfault.txt)
	wait_until 120 finished "$id"
	run on_m qacct -j "$id"
	[[ "$output" == *"on nodea could not start: stage-in: cannot write the cache"* ]] || { echo "$output"; return 1; }
	[ "$(echo "$output" | awk '$1 == "failed" { print $2 }')" = 1 ]
	host_state_is nodea disabled
	on_m qmod -e nodea
	rmdir "$CLUSTER/execd-a/stage/$sha.part"
	wait_until 20 host_state_is nodea idle
}

@test "qrsh refuses staging with the reason, before anything is sent" {
	cd "$WORK"
	run on_m qrsh --stage-in in.txt true
	[ "$status" -ne 0 ]
	[ "$output" = "qrsh: error: qrsh stages no files (--stage-in, --stage-out): an interactive session has no submit-time inputs and sends nothing back; use a shared file system or scp" ]
}

@test "a symbolic link planted for stage-out (to /etc/shadow) is refused and the job fails saying so" {
	cd "$WORK"
	printf 'ln -s /etc/shadow shadow.txt\n' > evil.sh
	run on_m qsub -sync y --stage-out shadow.txt evil.sh
	id=$(echo "${lines[0]}" | awk '{print $3}')
	[ ! -e shadow.txt ]
	run on_m qacct -j "$id"
	[[ "$output" == *"stage-out refused shadow.txt: a symbolic link"* ]]
	printf 'mkdir d && ln -s /etc d/etc && echo ok > d/fine\n' > evil2.sh
	id=$(on_m qsub -terse --stage-out d evil2.sh)
	wait_until 60 finished "$id"
	run on_m qacct -j "$id"
	[[ "$output" == *"stage-out refused d/etc: a symbolic link"* ]]
	run on_m nowq fetch "$id"
	[ ! -e d/etc ]
}

@test "kill -9 of the master in mid-upload: qsub goes on from the bytes the master kept, and the job ends right" {
	cd "$WORK"
	head -c 300000000 /dev/urandom > big1.bin
	sha=$(sha256sum big1.bin | cut -d' ' -f1)
	printf 'sha256sum big1.bin | cut -c1-64 > got.txt\n' > big1.sh
	on_m qsub -terse --stage-in big1.bin --stage-out got.txt big1.sh > qsub.out 2> qsub.err &
	qsub_pid=$!
	# Once 20 MB are in the master's partial file, qsub (the process
	# sending big1.bin) is stopped until the master is back, so the
	# upload cannot end before the kill however fast this machine is.
	uploader=""
	wait_until 120 uploader_stop "$sha" "$WORK/big1.bin" 20000001
	qmaster_kill_restart
	# The partial file outlived the master.
	held=$(stat -c %s "$CLUSTER"/qmaster/stage/tmp."$sha".*)
	[ "$held" -gt 20000000 ]
	kill -CONT "$uploader"
	wait "$qsub_pid"
	id=$(cat qsub.out)
	[[ "$id" =~ ^[0-9]+$ ]] || { cat qsub.err; return 1; }
	# The restarted master hashed what it held again and qsub sent the rest.
	resumed=$(grep "upload of staged file $sha .* resumed at offset" "$CLUSTER/qmaster.log" | tail -1 | sed 's/.* resumed at offset \([0-9]*\).*/\1/')
	echo "held $held, resumed at ${resumed:-none}"
	[ "${resumed:-0}" -eq "$held" ]
	[ -z "$(ls "$CLUSTER"/qmaster/stage/ | grep '^tmp\.')" ]
	wait_until 180 finished "$id"
	run on_m qwait "$id"
	[ "$status" -eq 0 ]
	[ "$(cat got.txt)" = "$sha" ]
}

# big_job N H BYTES: in $WORK, a job on host H that hashes bigN.bin, a new
# file of BYTES random bytes, into gotN.txt; sets id and sha.
big_job() {
	cd "$WORK"
	head -c "$3" /dev/urandom > "big$1.bin"
	sha=$(sha256sum "big$1.bin" | cut -d' ' -f1)
	printf 'sha256sum big%s.bin | cut -c1-64 > got%s.txt\n' "$1" "$1" > "big$1.sh"
	id=$(on_m qsub -terse -l hostname="node$2" --stage-in "big$1.bin" --stage-out "got$1.txt" "big$1.sh")
}
big_job_ended_right() {
	wait_until 180 finished "$id"
	run on_m qwait "$id"
	[ "$status" -eq 0 ] || { echo "$output"; on_m qacct -j "$id"; tail -20 "$CLUSTER/execd-$2.log"; return 1; }
	[ "$(cat "got$1.txt")" = "$sha" ]
}

@test "kill -9 of an execd while its job's input is fetched: the job still ends right" {
	big_job 2 a 300000000
	wait_until 120 bash -c "ls '$CLUSTER'/execd-a/stage/$sha.part >/dev/null 2>&1"
	kill -9 "$(execd_pid a)"
	execd_start a
	big_job_ended_right 2 a
	[ "$(fetched a "$sha")" = 1 ]
}

@test "kill -9 of the master while a shepherd fetches an input: the fetch goes on from the bytes it has, and the job reads the right file" {
	big_job 3 b 200000000
	# Once 20 MB are there, the fetching shepherd and its child copying
	# into the job's directory (the processes holding the partial file)
	# are stopped until the master is back, so the fetch cannot end
	# before the kill however fast or slow this machine is.
	part="$CLUSTER/execd-b/stage/$sha.part"
	fetcher=""
	stop_fetcher() {
		[ "$(stat -c %s "$part" 2>/dev/null || echo 0)" -gt 20000000 ] || return 1
		fetcher=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "$part" 2>/dev/null | cut -d/ -f3 | sort -u)
		[ -n "$fetcher" ] && kill -STOP $fetcher
	}
	wait_until 120 stop_fetcher
	qmaster_kill_restart
	kill -CONT $fetcher
	big_job_ended_right 3 b
	# One fetch, which took up again after at least what was there at the kill.
	[ "$(fetched b "$sha")" = 1 ]
	resumed=$(awk -v s="$sha" '$1 == s && $4 == "resumed" { print $5 }' "$CLUSTER/execd-b/stage/fetched.log")
	[ "${resumed:-0}" -gt 20000000 ]
	[ ! -e "$CLUSTER/execd-b/stage/$sha.part" ]
}

@test "a partial file whose bytes are not the input's is fetched again from zero; the job reads the right file" {
	# 20 MB of zeros where the 40 MB input's first bytes should be: the
	# fetch goes on after them, the whole file's hash does not match, and
	# it starts again from zero.  The job's copy, made as the bytes came,
	# held the zeros: it must be made again from the cache.
	cd "$WORK"
	head -c 40000000 /dev/urandom > big4.bin
	sha=$(sha256sum big4.bin | cut -d' ' -f1)
	mkdir -p "$CLUSTER/execd-a/stage"
	head -c 20000000 /dev/zero > "$CLUSTER/execd-a/stage/$sha.part"
	printf 'sha256sum big4.bin | cut -c1-64 > got4.txt\n' > big4.sh
	id=$(on_m qsub -terse -l hostname=nodea --stage-in big4.bin --stage-out got4.txt big4.sh)
	big_job_ended_right 4 a
}

@test "a host that cannot take a job's input is disabled and the job runs on another; a file missing on the master fails the job at once, with the reason" {
	cd "$WORK"
	echo "for the other host" > fault.txt
	sha=$(sha256sum fault.txt | cut -d' ' -f1)
	printf 'cat fault.txt > fault.out\n' > fault.sh
	# nodea's cache cannot take the file: a folder where its partial copy goes.
	mkdir -p "$CLUSTER/execd-a/stage/$sha.part"
	on_m qmod -d nodeb
	id=$(on_m qsub -terse --stage-in fault.txt --stage-out fault.out fault.sh)
	wait_until 60 grep -q "host nodea disabled: stage-in: cannot write the cache" "$CLUSTER/qmaster.log"
	wait_until 20 host_state_is nodea disabled
	# Queued again, not ended: it waits for a host, here the one enabled now.
	[ "$(on_m qstat -s p | awk -v id="$id" '$1 == id { print $5 }')" = qw ]
	on_m qmod -e nodeb
	wait_until 120 finished "$id"
	run on_m qwait "$id"
	[ "$status" -eq 0 ] || { echo "$output"; on_m qacct -j "$id"; return 1; }
	[ "$(cat fault.out)" = "for the other host" ]
	run on_m qacct -j "$id"
	[[ "$output" == *"cannot write the cache"*"host disabled, job queued again"* ]]
	[ "$(echo "$output" | grep -c '^hostname')" = 2 ]
	echo "$output" | grep -q '^hostname *nodeb'
	on_m qmod -e nodea
	rmdir "$CLUSTER/execd-a/stage/$sha.part"
	wait_until 20 host_state_is nodea idle
	# The master lost the file (removed by hand here): no host is to blame,
	# the job fails at once with the reason and no host is disabled.
	echo "gone from the master" > gone.txt
	gsha=$(sha256sum gone.txt | cut -d' ' -f1)
	gid=$(on_m qsub -terse -h -b y --stage-in gone.txt cat gone.txt)
	rm "$CLUSTER/qmaster/stage/$gsha"
	on_m qrls "$gid"
	wait_until 60 finished "$gid"
	run on_m qacct -j "$gid"
	[[ "$output" == *"is not in the master's spool"* ]]
	[ "$(echo "$output" | grep -c '^hostname')" = 1 ]
	host_state_is nodea idle
	host_state_is nodeb idle
}

@test "the exec host's cache is kept within stage_cache_max, least recently used first, never a file a job there needs" {
	cd "$WORK"
	# nodeb's cache capped at 12 MiB: two 5 MB inputs fit, three do not.
	echo "stage_cache_max = 12M" >> "$CLUSTER/execd-b.ini"
	pid=$(execd_pid b)
	kill "$pid"
	wait_until 30 bash -c "[ ! -e /proc/$pid ]"
	execd_start b
	wait_until 30 host_idle nodeb
	cache="$CLUSTER/execd-b/stage"
	for f in keep d1 d2 d3; do head -c 5000000 /dev/urandom > "$f.bin"; done
	sum() { sha256sum "$1.bin" | cut -d' ' -f1; }
	# A running job's input is the oldest file but is needed: it stays.
	keep=$(on_m qsub -terse -l hostname=nodeb --stage-in keep.bin -o /dev/null -e /dev/null -b y sleep 600)
	wait_until 60 bash -c "[ -e '$cache/$(sum keep)' ]"
	for f in d1 d2 d3; do
		run on_m qsub -sync y -l hostname=nodeb --stage-in "$f.bin" -o /dev/null -e /dev/null -b y test -s "$f.bin"
		[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	done
	# Once d2 and then d3 ended, the least recently used unneeded file
	# went each time: d1, then d2.
	gone() { [ ! -e "$cache/$(sum d1)" ] && [ ! -e "$cache/$(sum d2)" ]; }
	wait_until 60 gone
	[ -e "$cache/$(sum keep)" ]
	[ -e "$cache/$(sum d3)" ]
	[ "$(du -cb "$cache"/[0-9a-f]* | tail -1 | cut -f1)" -le $((12 << 20)) ]
	grep -q "staging cache: removed $(sum d1) (5000000 bytes" "$CLUSTER/execd-b.log"
	on_m qdel "$keep"
	wait_until 60 finished "$keep"
}

@test "limits per file, per job and per user refuse the submission with one line, nothing stored" {
	# Small limits, read again by the running master; the user is nobody,
	# whose jobs hold nothing yet.
	printf 'stage_max_file = 2M\nstage_max_job = 3M\nstage_max_user = 5M\n' >> "$CLUSTER/qmaster.conf"
	on_m qconf -reload
	mkdir "$WORK/lim"
	cd "$WORK/lim"
	head -c 2500000 /dev/urandom > huge.bin
	for f in p1 p2 p3; do head -c 1600000 /dev/urandom > $f.bin; done
	head -c 900000 /dev/urandom > p4.bin
	head -c 100000 /dev/urandom > p5.bin
	chown -R nobody "$WORK/lim"
	before=$(stage_files)
	run as_nobody qsub -b y --stage-in huge.bin true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"a staged file of 2500000 bytes is over the limit of 2097152 bytes per file (stage_max_file)"* ]]
	# Named after a file within every limit, the file over one is still
	# refused before the other is stored: the largest goes first.
	run as_nobody qsub -b y --stage-in p5.bin,huge.bin true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"a staged file of 2500000 bytes is over the limit of 2097152 bytes per file (stage_max_file)"* ]]
	[ "$(stage_files)" = "$before" ]
	run as_nobody qsub -b y --stage-in p1.bin,p2.bin true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"over the limit of 3145728 bytes per job (stage_max_job)"* ]]
	[ "$(stage_files)" = "$before" ]
	# Held jobs keep their inputs in the spool: the user's total grows.
	id1=$(as_nobody qsub -terse -h -b y --stage-in p1.bin true)
	id2=$(as_nobody qsub -terse -h -b y --stage-in p2.bin true)
	before=$(stage_files)
	run as_nobody qsub -b y --stage-in p3.bin,p4.bin true
	[ "$status" -ne 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"over the limit of 5242880 bytes per user (stage_max_user)"* ]]
	[ "$(stage_files)" = "$before" ]
	as_nobody qdel "$id1" "$id2"
	# Bad paths never reach the master.
	run on_m qsub -b y --stage-in ../x true
	[ "$status" -ne 0 ]
	[ "$output" = 'qsub: error: --stage-in: "../x": a staged path may not hold "." or ".."' ]
	run on_m qsub -b y --stage-out /etc/shadow true
	[ "$output" = 'qsub: error: --stage-out: "/etc/shadow": a staged path must be relative, not absolute' ]
	run on_m qsub -b y -W stagein=in.txt@elsewhere:in.txt true
	[ "$status" -ne 0 ]
	[[ "$output" == *"nowq stages a file of the submit directory under its own name"* ]]
}

cron_last_job() {
	on_m qstat --cron --json | python3 -c 'import json, sys
for e in json.load(sys.stdin)["cron"]:
    if "c%d" % e["id"] == sys.argv[1]: print(e["last_job"])' "$1"
}
cron_runs() { on_m qstat -s z | awk '$3 == "cronst" { print $1 }' | sort -n; }
two_cron_runs() { [ "$(cron_runs | wc -l)" -ge 2 ]; }
no_cron_runs() { [ -z "$(cron_runs)" ]; }

# Last: it lifts the limits above and purges finished jobs at once.
@test "a cron entry's input is stored once, read by each run, kept while the entry exists and collected after" {
	printf 'stage_max_file = 4G\nstage_max_job = 16G\nstage_max_user = 64G\n' >> "$CLUSTER/qmaster.conf"
	on_m qconf -reload
	cd "$WORK"
	echo "input of every run" > cin.txt
	sha=$(sha256sum cin.txt | cut -d' ' -f1)
	blob="$CLUSTER/qmaster/stage/$sha"
	printf 'grep -qx "input of every run" cin.txt || exit 3\ncat cin.txt > cout.txt\necho "$JOB_ID" >> cout.txt\n' > cron.sh
	# Paused at once, well before the minute's tick: no job names the file.
	[ "$(date +%-S)" -lt 50 ] || sleep 12
	cid=$(on_m qsub -terse --cron "* * * * *" -N cronst --stage-in cin.txt --stage-out cout.txt cron.sh)
	[[ "$cid" =~ ^c[0-9]+$ ]]
	on_m qhold "$cid"
	# Stored when acknowledged.
	[ -f "$blob" ]
	[ "$(cron_last_job "$cid")" = 0 ]
	# A collection (the first after a start) finds it old, as an orphan
	# planted beside it, and removes the orphan only.
	head -c 1000 /dev/urandom > orphan.bin
	orphan="$CLUSTER/qmaster/stage/$(sha256sum orphan.bin | cut -d' ' -f1)"
	cp orphan.bin "$orphan"
	touch -d '2 hours ago' "$blob" "$orphan"
	qmaster_kill_restart
	wait_until 60 test ! -e "$orphan"
	[ -f "$blob" ]
	[ "$(cron_last_job "$cid")" = 0 ]
	# Two runs, each a job of its own that reads the input.
	wait_until 30 host_idle nodea
	wait_until 30 host_idle nodeb
	on_m qrls "$cid"
	wait_until 200 two_cron_runs
	on_m qhold "$cid"
	for id in $(cron_runs | head -2); do
		run on_m qwait "$id"
		[ "$status" -eq 0 ] || { echo "$output"; on_m qacct -j "$id"; return 1; }
		mkdir -p "run$id"
		on_m nowq fetch -d "run$id" "$id"
		[ "$(cat "run$id/cout.txt")" = "$(printf 'input of every run\n%s' "$id")" ]
		on_m qstat -j "$id" --json | grep -q "\"$sha\""
	done
	# Deleted, and its jobs purged: the next collection removes the file.
	on_m qdel "$cid"
	printf 'finished_jobs_keep = 0\n' >> "$CLUSTER/qmaster.conf"
	on_m qconf -reload
	wait_until 60 no_cron_runs
	touch -d '2 hours ago' "$blob"
	qmaster_kill_restart
	wait_until 60 test ! -e "$blob"
}
