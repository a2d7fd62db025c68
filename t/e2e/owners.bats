#!/usr/bin/env bats
# owners.bats: jobs run as their owners (uid, primary group and supplementary groups resolved by the master at submission), with files and TMPDIR made by them, no way back to root, nothing of the daemon's environment, and root's jobs only where allowed; with users and a group the test creates and removes.

load helpers

setup_file() {
	export NOWQ_SKIP=""
	if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v groupadd >/dev/null; then
		NOWQ_SKIP="needs root and useradd/groupadd to create test users"
		return 0
	fi
	work_start
	SUFFIX=$$
	U1=nqo1$SUFFIX U2=nqo2$SUFFIX G=nqog$SUFFIX
	export U1 U2 G
	groupadd "$G"
	useradd -M -d "$WORK" -s /bin/sh -G "$G" "$U1"
	useradd -M -d "$WORK" -s /bin/sh "$U2"
	# The daemons' own environment, which no job may see.
	LEAKVAR=daemon-secret cluster_start
	mkdir "$WORK/u2only"
	chown "$U2" "$WORK/u2only"
	chmod 700 "$WORK/u2only"
}

teardown_file() {
	[ -n "$NOWQ_SKIP" ] && return 0
	cluster_stop
	userdel "$U1" 2>/dev/null || true
	userdel "$U2" 2>/dev/null || true
	groupdel "$G" 2>/dev/null || true
	work_stop
}

setup() {
	[ -z "$NOWQ_SKIP" ] || skip "$NOWQ_SKIP"
}

as() {
	local u=$1
	shift
	(cd "$WORK" && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
		env -i PATH=/usr/bin:/bin NOWQ_MASTER="$NOWQ_MASTER" "$top_builddir/bin/$@")
}

@test "a job runs with its owner's uid, group and supplementary groups, and cannot regain root" {
	cat > "$WORK/who.sh" <<'SH'
#!/bin/sh
echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"
echo "tmpdir_owner=$(stat -c %U "$TMPDIR") mode=$(stat -c %a "$TMPDIR")"
touch "$TMPDIR/x"
/usr/bin/python3 -c 'import os
try:
    os.setresuid(0, 0, 0)
    print("regain: became root")
except PermissionError:
    print("regain: refused")'
env | grep -c LEAKVAR || true
SH
	chmod 755 "$WORK/who.sh"
	id=$(as "$U1" qsub -terse -cwd -j y -o "$WORK/who.out" "$WORK/who.sh")
	wait_until 30 job_finished "$id"
	cat "$WORK/who.out"
	[ "$(stat -c %U "$WORK/who.out")" = "$U1" ]
	grep -qx "uid=$(id -u "$U1") gid=$(id -g "$U1") groups=.*" "$WORK/who.out"
	grep "^uid=" "$WORK/who.out" | tr ' ' '\n' | grep -qx "$(getent group "$G" | cut -d: -f3)"
	grep -qx "tmpdir_owner=$U1 mode=700" "$WORK/who.out"
	grep -qx "regain: refused" "$WORK/who.out"
	# No LEAKVAR line counted: the daemon's environment stayed with it.
	[ "$(tail -1 "$WORK/who.out")" = 0 ]
}

@test "the groups are the ones resolved at submission, not looked up where the job runs" {
	gid=$(getent group "$G" | cut -d: -f3)
	id=$(as "$U1" qsub -terse -h -cwd -j y -o "$WORK/groups.out" -b y id -G)
	gpasswd -d "$U1" "$G" >/dev/null
	qrls "$id"
	wait_until 30 job_finished "$id"
	gpasswd -a "$U1" "$G" >/dev/null
	tr ' ' '\n' < "$WORK/groups.out" | grep -qx "$gid"
}

@test "-o /etc/passwd by a normal user fails the job with that reason and changes nothing" {
	before=$(sha256sum /etc/passwd)
	id=$(as "$U1" qsub -terse -cwd -o /etc/passwd -b y echo overwritten)
	wait_until 30 bash -c "qstat -j $id | grep -q 'cannot open output file /etc/passwd: Permission denied'"
	[ "$(sha256sum /etc/passwd)" = "$before" ]
	[ "$(job_state "$id")" = Eqw ]
	# Nor into another user's private folder.
	id2=$(as "$U1" qsub -terse -cwd -e /dev/null -o "$WORK/u2only/" -b y echo hi)
	wait_until 30 bash -c "qstat -j $id2 | grep -q 'cannot open output file $WORK/u2only/.*Permission denied'"
	[ -z "$(ls "$WORK/u2only")" ]
	qdel "$id" "$id2" >/dev/null
}

@test "a user's jobs leave no file owned by root" {
	id=$(as "$U2" qsub -terse -cwd -b y true)
	wait_until 30 job_finished "$id"
	[ "$(stat -c %U "$WORK/true.o$id")" = "$U2" ]
	[ "$(stat -c %U "$WORK/true.e$id")" = "$U2" ]
}

@test "root's jobs are refused unless allow_root_jobs is set" {
	sed -i 's/^allow_root_jobs = true$/allow_root_jobs = false/' "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	run qsub -b y true
	[ "$status" -ne 0 ]
	[ "$output" = "qsub: error: Unable to run job: jobs of root are not allowed here (allow_root_jobs in qmaster.conf)" ]
	# Other users are not affected.
	id=$(as "$U2" qsub -terse -cwd -o /dev/null -e /dev/null -b y true)
	wait_until 30 job_finished "$id"
	sed -i 's/^allow_root_jobs = false$/allow_root_jobs = true/' "$CLUSTER/qmaster.conf"
	qconf -reload >/dev/null
	id=$(qsub -terse -o /dev/null -e /dev/null -b y true)
	wait_until 30 job_finished "$id"
}
