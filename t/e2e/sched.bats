#!/usr/bin/env bats
# sched.bats: queues, -l matching, refusals at submit, waiting reasons, queue priority, limits, qconf and qalter on a real two-host cluster.

load helpers

ini_name() { awk -F' *= *' '$1 == "name" { print $2 }' "$CLUSTER/execd-$1.ini"; }

setup_file() {
	EXECDS=2 SLOTS=1 cluster_start
	nowq stop --dir "$CLUSTER" >/dev/null
	H1=$(ini_name 1)
	H2=$(ini_name 2)
	export H1 H2
	printf 'memory = 8G\nkeys = fpu\nrating = 1\n' >> "$CLUSTER/execd-1.ini"
	printf 'memory = 2G\nkeys = matlab\nrating = 1\n' >> "$CLUSTER/execd-2.ini"
	cat >> "$CLUSTER/qmaster.conf" <<-CONF
	queue "hi.q" { priority = 10 }
	queue "one.q" { max_running = 1  hosts = "$H1 | $H2" }
	queue "user.q" { max_running_per_user = 1 }
	queue "small.q" { max_queued = 2  default_h_rt = "600"  max_h_rt = "1:00:00" }
	queue "only.q" { users = {"daemon"} }
	queue "h2.q" { hosts = "@all - $H1" }
	CONF
	cp "$CLUSTER/qmaster.conf" "$CLUSTER/qmaster.conf.good"
	nowq start --dir "$CLUSTER" >/dev/null
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 777 "$WORK"
	export WORK
	wait_until 20 hosts_up
}

hosts_up() { [ "$(qhost | grep -c -e "$H1" -e "$H2")" -ge 2 ]; }

teardown_file() {
	cluster_stop
	rm -rf "$WORK"
}

# Submits "echo $HOSTNAME" with the given options; prints the job id.
where_job() { qsub -terse -cwd -o "$WORK/where.\$JOB_ID" -j y "$@" -b y sh -c 'echo $HOSTNAME'; }
ran_on() { wait_until 20 job_finished "$1" && cat "$WORK/where.$1"; }
resources() { qstat -j "$1" | sed -n 's/^hard resource_list: *//p'; }
info() { qstat -j "$1" | awk -F': *' '$1 == "scheduling info" { print $2 }'; }

@test "-l picks the host: a key, memory, hosts= and a queue's host set" {
	cd "$WORK"
	id=$(where_job -l matlab)
	[ "$(ran_on "$id")" = "$H2" ]
	id=$(where_job -l mem=4G)
	[ "$(ran_on "$id")" = "$H1" ]
	id=$(where_job -l "hosts=$H2")
	[ "$(ran_on "$id")" = "$H2" ]
	id=$(where_job -l "hosts=@all - $H2")
	[ "$(ran_on "$id")" = "$H1" ]
	id=$(where_job -q h2.q)
	[ "$(ran_on "$id")" = "$H2" ]
}

@test "a -l name neither in the complex list nor a key of a host is refused as Grid Engine refuses it, -w n or not" {
	fix=$top_srcdir/t/sge/gaps
	want=$(sed -n 's/^Unable to run job: //p' "$fix/qsub-unknown.err")
	[ "$want" = 'unknown resource "foo"' ]
	for args in "-l foo=1" "-l foo" "-soft -l foo=1" "-w n -l h_rt=10,foo=1" "-l fpu,foo"; do
		run qsub $args -b y true
		[ "$status" -eq "$(cat "$fix/qsub-unknown.rc")" ] || { echo "$args: $output"; false; }
		[ "$output" = "qsub: error: Unable to run job: $want" ] || { echo "$args: $output"; false; }
	done
	id=$(qsub -terse -h -l fpu -b y true)
	run qalter -l foo "$id"
	[ "$status" -eq "$(cat "$fix/qalter-unknown.rc")" ]
	[[ "$output" == *"$(cat "$fix/qalter-unknown.out")" ]]
	run qalter -soft -l foo "$id"
	[ "$status" -eq 1 ]
	run qrsh -l foo=1 true
	[ "$status" -eq "$(cat "$fix/qrsh-unknown.rc")" ]
	[[ "$output" == *"$(cat "$fix/qrsh-unknown.err")" ]]
	# Nothing was changed: the held job keeps its request.
	[ "$(resources "$id")" = "fpu=TRUE" ]
	qdel "$id" >/dev/null
	# A key a host declares is taken, soft or hard.
	id=$(qsub -terse -h -soft -l matlab -b y true)
	qdel "$id" >/dev/null
}

@test "a job no host could ever run is refused at submit with the reason, unless -w n" {
	run qsub -b y -l mem=64G true
	[ "$status" -ne 0 ]
	[[ "$output" == *"no host has 64G of memory"* ]]
	run qsub -b y -l matlab,mem=4G true
	[ "$status" -ne 0 ]
	[[ "$output" == *"no suitable queues"* ]]
	# Each key is on some host, but no host has both.
	run qsub -b y -l matlab,fpu true
	[ "$status" -ne 0 ]
	[[ "$output" == *"no host has both keys matlab and fpu together (each is on some host)"* ]]
	run qsub -terse -w n -b y -l matlab,fpu true
	[ "$status" -eq 0 ]
	[ "$(qstat -j "$output" | sed -n 's/^scheduling info: *//p')" = "no idle host has both keys matlab and fpu together (each is on some host)" ]
	qdel "$output"
	run qsub -b y -l hosts=nosuchhost true
	[ "$status" -ne 0 ]
	[[ "$output" == *'unknown host "nosuchhost"'* ]]
	run qsub -b y -l "hosts=($H1" true
	[ "$status" -ne 0 ]
	[[ "$output" == *'missing ")"'* ]]
	run qsub -terse -w n -b y -l mem=64G true
	[ "$status" -eq 0 ]
	id=$output
	[ "$(info "$id")" = "no idle host has 64G of memory" ]
	state_is "$id" qw
	qdel "$id"
}

@test "max_running: the second job waits with the reason, then runs" {
	a=$(qsub -terse -q one.q -b y sleep 8)
	b=$(qsub -terse -q one.q -b y true)
	wait_until 20 state_is "$a" r
	sleep 0.5
	state_is "$b" qw
	[ "$(info "$b")" = "queue one.q is full (max_running 1)" ]
	wait_until 30 job_finished "$b"
}

@test "max_running_per_user: a user's second job waits" {
	a=$(qsub -terse -q user.q -b y sleep 8)
	b=$(qsub -terse -q user.q -b y true)
	wait_until 20 state_is "$a" r
	sleep 0.5
	state_is "$b" qw
	[[ "$(info "$b")" == "user limit max_running_per_user 1 reached"* ]]
	wait_until 30 job_finished "$b"
}

@test "queue priority comes before submission order" {
	cd "$WORK"
	rm -f order
	blocker=$(qsub -terse -l "hosts=$H1" -b y sleep 8)
	wait_until 20 state_is "$blocker" r
	low=$(qsub -terse -cwd -o /dev/null -j y -l "hosts=$H1" -b y sh -c "echo low >> $WORK/order")
	high=$(qsub -terse -cwd -o /dev/null -j y -q hi.q -l "hosts=$H1" -b y sh -c "echo high >> $WORK/order")
	wait_until 30 job_finished "$low"
	wait_until 30 job_finished "$high"
	[ "$(cat order | tr '\n' ' ')" = "high low " ]
}

@test "job priority (-p) comes before submission order within a queue" {
	cd "$WORK"
	rm -f order
	blocker=$(qsub -terse -l "hosts=$H1" -b y sleep 8)
	wait_until 20 state_is "$blocker" r
	low=$(qsub -terse -cwd -o /dev/null -j y -l "hosts=$H1" -b y sh -c "echo first >> $WORK/order")
	high=$(qsub -terse -cwd -o /dev/null -j y -p -1 -l "hosts=$H1" -b y sh -c "echo lowprio >> $WORK/order")
	top=$(qsub -terse -cwd -o /dev/null -j y -p 5 -l "hosts=$H1" -b y sh -c "echo highprio >> $WORK/order")
	for j in $low $high $top; do wait_until 30 job_finished "$j"; done
	[ "$(cat order | tr '\n' ' ')" = "highprio first lowprio " ]
}

@test "max_queued, h_rt maximum and default, and allowed users are checked at submit" {
	a=$(qsub -terse -h -q small.q -b y true)
	b=$(qsub -terse -h -q small.q -b y true)
	run qsub -h -q small.q -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"max_queued 2"* ]]
	[[ "$(resources "$a")" == *"h_rt=600"* ]]
	run qsub -q small.q -l h_rt=2:00:00 -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"h_rt 2:00:00 is above the maximum 1:00:00 of queue small.q"* ]]
	qdel "$a" "$b"
	run qsub -q only.q -b y true
	[ "$status" -ne 0 ]
	[[ "$output" == *"may not submit jobs to queue only.q"* ]]
}

@test "qconf -sql, -sq, unsupported switches, and -reload keeps the running configuration on errors" {
	run qconf -sql
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | tr '\n' ' ')" = "all.q hi.q one.q user.q small.q only.q h2.q " ]
	run qconf -sq hi.q
	[ "$status" -eq 0 ]
	[[ "$output" == *"qname                hi.q"* ]]
	[[ "$output" == *"priority             10"* ]]
	run qconf -sq small.q
	[[ "$output" == *"h_rt                 1:00:00"* ]]
	run qconf -sq nosuch.q
	[ "$status" -ne 0 ]
	[[ "$output" == *"nosuch.q is not a queue name"* ]]
	run qconf -sstree
	[ "$status" -ne 0 ]
	[[ "$output" == *'"-sstree" is not supported by nowq'* ]]
	echo 'queue "bad.q" { hosts = "(oops" }' >> "$CLUSTER/qmaster.conf"
	run qconf -reload
	[ "$status" -ne 0 ]
	[[ "$output" == *'queue bad.q: hosts "(oops"'*"running configuration is kept"* ]]
	run qconf -sql
	[[ "$output" != *"bad.q"* ]]
	cp "$CLUSTER/qmaster.conf.good" "$CLUSTER/qmaster.conf"
	echo 'queue "new.q" { priority = 3 }' >> "$CLUSTER/qmaster.conf"
	run qconf -reload
	[ "$status" -eq 0 ]
	run qconf -sq new.q
	[[ "$output" == *"priority             3"* ]]
	id=$(qsub -terse -q new.q -b y true)
	wait_until 20 job_finished "$id"
	if id -u nobody >/dev/null 2>&1; then
		run setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qconf" -reload
		[ "$status" -ne 0 ]
		[[ "$output" == *"must be manager"* ]]
	fi
}

@test "a bad setting is refused by a reload as by a start: its reason in the reply and the log" {
	echo 'host_timeout = 0' >> "$CLUSTER/qmaster.conf"
	run qconf -reload
	cp "$CLUSTER/qmaster.conf.good" "$CLUSTER/qmaster.conf"
	[ "$status" -ne 0 ]
	[[ "$output" == *"qmaster.conf:"*": host_timeout must be 1 to 86400 seconds, not 0; the running configuration is kept"* ]]
	grep -q "keeping the old configuration: .*host_timeout must be 1 to 86400 seconds, not 0" "$CLUSTER/qmaster/qmaster.log"
	printf 'host_timeout = 0\n' | cat "$CLUSTER/qmaster.conf.good" - > "$BATS_TEST_TMPDIR/bad.conf"
	run qmaster -c "$BATS_TEST_TMPDIR/bad.conf" --check
	[ "$status" -ne 0 ]
	[[ "$output" == "qmaster: $BATS_TEST_TMPDIR/bad.conf:"*": host_timeout must be 1 to 86400 seconds, not 0" ]]
	run qstat -s prz
	[ "$status" -eq 0 ]
}

@test "qalter changes a pending job with the same checks as qsub, and refuses a running one" {
	id=$(qsub -terse -h -w n -l mem=64G -b y true)
	[ "$(info "$id")" = "job is held (qrls releases it)" ]
	run qalter -l matlab,mem=4G "$id"
	[ "$status" -ne 0 ]
	[[ "$output" == *"no suitable queues"* ]]
	run qalter -q nosuch.q "$id"
	[ "$status" -ne 0 ]
	[[ "$output" == *'unknown queue "nosuch.q"'* ]]
	run qalter -l mem=1G -N renamed -p -7 "$id"
	[ "$status" -eq 0 ]
	[ "$(job_field "$id" job_name)" = "renamed" ]
	[ "$(job_field "$id" priority)" = "-7" ]
	[ "$(resources "$id")" = "mem=1G" ]
	if id -u nobody >/dev/null 2>&1; then
		run setpriv --reuid=nobody --regid=nogroup --clear-groups env NOWQ_MASTER="$NOWQ_MASTER" "$NOWQ_BIN/qalter" -p -1 "$id"
		[ "$status" -ne 0 ]
		[[ "$output" == *"do not have the necessary privileges"* ]]
	fi
	qalter -h n "$id"
	wait_until 20 job_finished "$id"
	run_id=$(qsub -terse -b y sleep 300)
	wait_until 20 state_is "$run_id" r
	run qalter -p -3 "$run_id"
	[ "$status" -ne 0 ]
	[[ "$output" == *"is already running and cannot be changed"* ]]
	qdel "$run_id"
}
