# simlib.bash: what bench/resv and bench/w5 share: a master with simulated execds.
#
# Also W1 and W3 probes, and the rates and latencies read from
# bench/simexecd's dispatch log.
# Sourced; BUILD names the build tree (default _build of the source tree).

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$top/_build}
export PATH="$BUILD/bin:$PATH"
SIM="$BUILD/bench/simexecd"
BULK="$BUILD/bench/bulksub"
[ -x "$SIM" ] && [ -x "$BULK" ] || { echo "no $SIM or $BULK: build first (BUILD=...)" >&2; exit 1; }

us() { echo "${EPOCHREALTIME/./}"; }

# sim_start HOSTS [SIMEXECD OPTION...]: a fresh master whose one real execd is
# disabled, "daemon" a manager too (it owns the reservations), and HOSTS
# (maybe 0) simulated execds logging each dispatch to $DIR/dispatch.log.
sim_start() {
	local n=$1
	shift
	DIR=$(mktemp -d /tmp/nowq-bench.XXXXXX)
	chmod 755 "$DIR"
	trap sim_stop EXIT
	trap 'exit 1' INT TERM
	nowq start --dir "$DIR" --slots 1 >/dev/null 2>&1
	nowq stop --dir "$DIR" >/dev/null 2>&1
	sed -i 's/^managers *= *{\(.*\)}/managers    = {\1, "daemon"}/' "$DIR/qmaster.conf"
	# Thousands of simulated hosts in one process on a loaded machine
	# may be slower than the default 10 s to say HELLO or read a reply.
	echo "client_timeout = 120" >> "$DIR/qmaster.conf"
	nowq start --dir "$DIR" >/dev/null 2>&1
	eval "$(nowq env --dir "$DIR" 2>/dev/null)"
	export NOWQ_MASTER
	qmod -d "$(awk -F' *= *' '$1 == "name" { print $2 }' "$DIR/execd-1.ini")" >/dev/null
	QMPID=$(cat "$DIR/qmaster/qmaster.pid")
	: > "$DIR/dispatch.log"
	[ "$n" -gt 0 ] || return 0
	"$SIM" -n "$n" -o "$DIR/dispatch.log" "$@" > "$DIR/sim.out" 2>&1 &
	SIMPID=$!
	while [ "$(grep -c '^registered' "$DIR/sim.out")" -eq 0 ]; do
		kill -0 "$SIMPID" 2>/dev/null || { cat "$DIR/sim.out" >&2; exit 1; }
		sleep 0.1
	done
}

sim_stop() {
	[ -z "${SIMPID:-}" ] || { kill "$SIMPID" 2>/dev/null; wait "$SIMPID" 2>/dev/null; }
	SIMPID=
	[ -z "${DIR:-}" ] || { nowq stop --dir "$DIR" >/dev/null 2>&1; rm -rf "$DIR"; }
	DIR=
}

log_lines() { wc -l < "$DIR/dispatch.log"; }

# wait_dispatched COUNT: until the log holds COUNT lines.
wait_dispatched() { while [ "$(log_lines)" -lt "$1" ]; do sleep 0.05; done; }

# drained: nothing pending or running.
drained() { [ "$(qstat -u '*' -s pr | awk 'NR > 2' | wc -l)" -eq 0 ]; }

# rate_since LINE: dispatches per second over the log lines after LINE.
rate_since() {
	tail -n +"$(($1 + 1))" "$DIR/dispatch.log" | awk '
		NR == 1 || $5 < a { a = $5 } NR == 1 || $5 > b { b = $5 } END {
		printf "%.0f", (b > a ? (NR - 1) / ((b - a) / 1e6) : 0) }'
}

# latency_since LINE: median and 90th percentile in ms of DISPATCH minus
# submit_time (the master's view) over the log lines after LINE.
latency_since() {
	tail -n +"$(($1 + 1))" "$DIR/dispatch.log" | awk '{ print ($5 - $4 * 1000) / 1000 }' | sort -n |
	    awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)] }'
}

# w1 N [QSUB OPTION...]: N qsub processes one after another; jobs/s.
w1() {
	local n=$1 t0 t1
	shift
	t0=$(us)
	for ((i = 0; i < n; i++)); do
		qsub -o /dev/null -e /dev/null "$@" -b y true >/dev/null
	done
	t1=$(us)
	awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / ((b - a) / 1e6) }'
}

# w3 COUNT [QSUB OPTION...]: COUNT single jobs on an idle cluster, each
# from the instant before its qsub starts to the DISPATCH simexecd
# received; prints the median and max in ms, then the median of the
# master's part (DISPATCH minus the submit time it stored): the rest is
# qsub's start, its connection and HELLO.
w3() {
	local n=$1 t0 id line out
	shift
	out=$(for ((i = 0; i < n; i++)); do
		t0=$(us)
		id=$(qsub -terse -o /dev/null -e /dev/null "$@" -b y true)
		while ! line=$(grep -m1 "^$id 0 " "$DIR/dispatch.log"); do sleep 0.002; done
		echo "$line" | awk -v t0="$t0" '{ printf "%.2f %.2f\n", ($5 - t0) / 1000, ($5 - $4 * 1000) / 1000 }'
		sleep 0.05
	done)
	echo "$(echo "$out" | cut -d' ' -f1 | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.1f %.1f", v[int((NR + 1) / 2)], v[NR] }')" "$(echo "$out" | cut -d' ' -f2 | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] }')"
}

# The master's CPU time (user + system) so far, in microseconds.
master_cpu_us() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) * 1e6 / hz }' "/proc/$QMPID/stat"
}

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
