# helpers.bash: starts and stops a real personal cluster for a bats file, and waits for conditions.
# Every file gets its own directory and free port; nothing is shared between files.

export PATH="$top_builddir/bin:$PATH"

cluster_start() {
	CLUSTER=$(mktemp -d /tmp/nowq-e2e.XXXXXX)
	chmod 755 "$CLUSTER"
	export CLUSTER
	nowq start --dir "$CLUSTER" --slots "${SLOTS:-4}" --execds "${EXECDS:-1}" >/dev/null
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

# wait_until SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds;
# the limit is wall time, however long each try takes on a busy machine.
wait_until() {
	local deadline=$(( ${EPOCHREALTIME/./} / 1000 + $1 * 1000 ))
	shift
	while ! "$@" >/dev/null 2>&1; do
		if [ $(( ${EPOCHREALTIME/./} / 1000 )) -ge "$deadline" ]; then
			echo "timed out waiting for: $*" >&2
			return 1
		fi
		sleep 0.05
	done
}

job_finished() { qstat -s z | awk -v id="$1" '$1 == id { f = 1 } END { exit !f }'; }
job_state() { qstat -s prz | awk -v id="$1" '$1 == id { print $5 }'; }
job_field() { qstat -j "$1" | awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }'; }
state_is() { [ "$(job_state "$1")" = "$2" ]; }
