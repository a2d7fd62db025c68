# helpers.bash: starts and stops a real personal cluster for a bats file, and waits for conditions.
# Every file gets its own directory and free port; nothing is shared between files.

# The programs and t/e2e's scripts come from the run's copy that every user
# can reach (t/stage, made by make check), so that the tests acting as other
# users work from a clone only root may enter; without make check, from the
# tree itself.
NOWQ_BIN=${NOWQ_STAGE:+$NOWQ_STAGE/bin}
NOWQ_BIN=${NOWQ_BIN:-$top_builddir/bin}
NOWQ_E2E=${NOWQ_STAGE:+$NOWQ_STAGE/e2e}
NOWQ_E2E=${NOWQ_E2E:-$top_srcdir/t/e2e}
export NOWQ_BIN NOWQ_E2E
export PATH="$NOWQ_BIN:$PATH"

cluster_start() {
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	nowq start --dir "$CLUSTER" --slots "${SLOTS:-4}" --execds "${EXECDS:-1}" --masters "${MASTERS:-1}" >/dev/null
	eval "$(nowq env --dir "$CLUSTER")"
	export NOWQ_MASTER
}

cluster_stop() {
	[ -n "${CLUSTER:-}" ] || return 0
	nowq stop --dir "$CLUSTER" >/dev/null 2>&1 || true
	# Leave the spool for a post-mortem only when something failed.
	rm -rf "$CLUSTER"
}

# A scratch folder every user may write, in $WORK.
work_start() {
	WORK=$(mktemp -d /tmp/nowq-work.XXXXXX)
	chmod 777 "$WORK"
	export WORK
}

work_stop() { rm -rf "$WORK"; }

# munge_execd_ini FILE NAME MASTERS SPOOL MUNGE_SOCKET LOG: an execd.ini for a
# test's own munge cluster: two slots, never busy.
munge_execd_ini() {
	cat > "$1" <<EOF
[execd]
name = $2
masters = $3
spool_dir = $4
slots = 2
load_threshold = none
auth = munge
munge_socket = $5
log_file = $6
EOF
}

# What a failed wait leaves in the test's output (bats shows it only on
# failure): every job and the daemons' last words, since the cluster's
# folder is gone by the time anyone reads a CI log.
cluster_postmortem() {
	local f
	[ -n "${CLUSTER:-}" ] && [ -d "$CLUSTER" ] || return 0
	echo "--- qstat -u '*' -s prz"
	timeout 10 qstat -u '*' -s prz 2>&1 | head -40
	for f in "$CLUSTER"/qmaster*/qmaster.log "$CLUSTER"/execd-*/execd.log; do
		[ -f "$f" ] || continue
		echo "--- the end of $f"
		tail -n 25 "$f"
	done
}

# wait_until SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds;
# the limit is wall time, however long each try takes on a busy machine.
wait_until() {
	local deadline=$(( ${EPOCHREALTIME/./} / 1000 + $1 * 1000 ))
	shift
	while ! "$@" >/dev/null 2>&1; do
		if [ $(( ${EPOCHREALTIME/./} / 1000 )) -ge "$deadline" ]; then
			echo "timed out waiting for: $*" >&2
			cluster_postmortem >&2
			return 1
		fi
		sleep 0.05
	done
}

# stage_part_over MASTER SHA BYTES: the master's (qmaster, qmaster-2)
# partial upload of SHA holds at least BYTES.
stage_part_over() {
	local part
	part=$(ls "$CLUSTER/$1"/stage/tmp."$2".* 2>/dev/null | head -1)
	[ -n "$part" ] && [ "$(stat -c %s "$part" 2>/dev/null || echo 0)" -ge "$3" ]
}

# uploader_stop SHA PATH BYTES: once the master holds BYTES of SHA, stops
# (SIGSTOP) the process sending it, the one holding PATH open, and sets
# uploader to its pid: an upload stopped midway, however fast the machine.
uploader_stop() {
	stage_part_over qmaster "$1" "$3" || return 1
	uploader=$(find /proc/[0-9]*/fd -maxdepth 1 -lname "$2" 2>/dev/null | cut -d/ -f3 | head -1)
	[ -n "$uploader" ] && kill -STOP "$uploader"
}

# as_user USER COMMAND...: COMMAND (a nowq command, or a program by path)
# as USER with USER's groups, from $WORK when set, in a clean environment
# of PATH (the build's bin/ first) and NOWQ_MASTER: what a user of the
# cluster has, and nothing of root's.  Needs root.
as_user() {
	local u=$1
	shift
	(cd "${WORK:-/}" && setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups \
		env -i PATH="$NOWQ_BIN:/usr/bin:/bin" NOWQ_MASTER="$NOWQ_MASTER" "$@")
}

# status_dom PORT [PATH]: the status page's DOM as headless Chromium leaves
# it once the page's scripts have filled it.
status_dom() {
	local profile rc
	profile=$(mktemp -d /tmp/nowq-chromium.XXXXXX)
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
	    --user-data-dir="$profile" --virtual-time-budget=5000 --dump-dom \
	    "http://127.0.0.1:$1${2:-/}" 2>/dev/null
	rc=$?
	rm -rf "$profile"
	return $rc
}

job_finished() { qstat -s z | awk -v id="$1" '$1 == id { f = 1 } END { exit !f }'; }
job_state() { qstat -s prz | awk -v id="$1" '$1 == id { print $5 }'; }
# job_json ID KEY: a field of the job as qstat -j --json gives it, which
# keeps ended jobs (plain qstat -j, as Grid Engine's, knows only live ones).
job_json() {
	qstat -j "$1" --json | python3 -c 'import sys, json
v = json.load(sys.stdin)["jobs"][0].get(sys.argv[1])
print("" if v is None else v)' "$2"
}
# job_field ID KEY: KEY's value in qstat -j, or for an ended job the same
# field of its --json record.
job_field() {
	local out
	if out=$(qstat -j "$1" 2>/dev/null); then
		awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' <<<"$out"
		return
	fi
	case $2 in
	job_name) job_json "$1" name ;;
	exec_host_list) job_json "$1" host ;;
	*) job_json "$1" "$2" ;;
	esac
}
# job_reason ID: qstat -j's "error reason", or for an ended job that did not
# succeed the reason --json keeps.
job_reason() {
	local out
	if out=$(qstat -j "$1" 2>/dev/null); then
		sed -n 's/^error reason *1: *//p' <<<"$out"
	elif [ "$(job_json "$1" state)" != done ]; then
		job_json "$1" reason
	fi
}
state_is() { [ "$(job_state "$1")" = "$2" ]; }
# qstat -f prints each queue's load average, which moves between two calls.
noload() { awk '$1 ~ /@/ { $4 = "-" } { print }'; }
# paged_same PAGE ARGS...: qstat ARGS read PAGE jobs at a time prints what
# it prints read whole (-f: but the load).
paged_same() {
	local page=$1 whole paged
	shift
	whole=$(qstat "$@" | noload | grep -v '<load_avg>')
	paged=$(NOWQ_QSTAT_PAGE=$page qstat "$@" | noload | grep -v '<load_avg>')
	[ "$paged" = "$whole" ] && return
	echo "NOWQ_QSTAT_PAGE=$page qstat $* differs from qstat $*:" >&2
	diff <(echo "$whole") <(echo "$paged") >&2
	return 1
}

# munge_start NAME [KEYFILE]: a munged of the test's own in $MUNGE_DIR/NAME
# (its key, socket, pid, log and seed files; a new key unless KEYFILE, so two
# daemons started with the same KEYFILE are two hosts of one realm).  Its
# socket is $MUNGE_DIR/NAME/sock.  Fails when munge is not installed.
munge_start() {
	local name=$1 key=${2:-}
	command -v munged >/dev/null && command -v mungekey >/dev/null || return 1
	if [ -z "${MUNGE_DIR:-}" ]; then
		MUNGE_DIR=$(mktemp -d /tmp/nowq-munge.XXXXXX)
		export MUNGE_DIR
	fi
	# Every user must reach the socket; only the key is private.
	chmod 755 "$MUNGE_DIR"
	mkdir -p "$MUNGE_DIR/$name"
	chmod 755 "$MUNGE_DIR/$name"
	if [ -z "$key" ]; then
		key="$MUNGE_DIR/$name/key"
		mungekey -c -b 1024 -k "$key" || return 1
	fi
	munged -f --key-file="$key" --socket="$MUNGE_DIR/$name/sock" \
		--pid-file="$MUNGE_DIR/$name/pid" --log-file="$MUNGE_DIR/$name/log" \
		--seed-file="$MUNGE_DIR/$name/seed" || return 1
	wait_until 5 test -S "$MUNGE_DIR/$name/sock"
}

# munge_stop: stops every munged munge_start started and removes their files.
munge_stop() {
	[ -n "${MUNGE_DIR:-}" ] || return 0
	local p
	for p in "$MUNGE_DIR"/*/pid; do
		[ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null
	done
	for p in "$MUNGE_DIR"/*/pid; do
		[ -f "$p" ] && wait_until 5 bash -c "! kill -0 $(cat "$p") 2>/dev/null"
	done
	rm -rf "$MUNGE_DIR"
	unset MUNGE_DIR
}

# A credential from munged NAME carrying PAYLOAD, for hand-made HELLOs.
munge_cred() { printf '%s' "$2" | munge -S "$MUNGE_DIR/$1/sock" ${3:+-t "$3"}; }

# rawreq ADDR MSG_JSON...: one reply line per message (t/e2e/rawreq.py).
rawreq() { python3 "$NOWQ_E2E/rawreq.py" "$@"; }

# same_dumps DB1 DB2: within 30 s, `qmaster --dump` of the two database
# files is the same (the copies may be a changeset apart while one is in
# flight); otherwise the start of the diff goes to stderr.
same_dumps() {
	local a="$CLUSTER/dump.a" b="$CLUSTER/dump.b"
	dumps_equal() { qmaster --dump "$1" > "$a" && qmaster --dump "$2" > "$b" && cmp -s "$a" "$b"; }
	if ! wait_until 30 dumps_equal "$1" "$2"; then
		diff "$a" "$b" | head -20 | cut -c1-300 >&2
		return 1
	fi
}

# job_qrsh ID: a qrsh job's "HOST PORT SECRET", read from the master's
# database (the master shows no one the secret), for hand-made shepherds.
job_qrsh() { sqlite3 "file:$CLUSTER/qmaster/nowq.db?mode=ro" "SELECT qrsh FROM jobs WHERE id = $1"; }

# qrsh_hello PORT ID SECRET [CRED]: says HELLO to a waiting qrsh as the
# shepherd of job ID would, with that secret and munge credential; succeeds
# when qrsh refuses it (closes the connection without a START).
qrsh_hello() {
	python3 - "$@" <<-'PY'
	import json, socket, struct, sys
	port, job, secret = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
	h = {"secret": secret, "host": "x", "part": 0, "id": job}
	if len(sys.argv) > 4:
	    h["cred"] = sys.argv[4]
	s = socket.create_connection(("127.0.0.1", port))
	b = json.dumps(h).encode()
	s.sendall(b"H" + struct.pack(">I", len(b)) + b)
	s.settimeout(30)
	sys.exit(0 if s.recv(100) == b"" else "qrsh took the connection")
	PY
}
