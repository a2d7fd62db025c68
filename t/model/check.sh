#!/bin/sh
# check.sh: runs spin on t/model/failover.pml, each property over a bounded state space (bitstate), as TAP with the trail of a failure.
# Usage: t/model/check.sh [spin -D flags...]  (from the suite, with top_srcdir
# set; skips without spin or cc).  Extra flags go to every spin run, e.g.
# -DOLD_REDIRECT to see the liveness failure the code had before cf70c23.
#
# Bounded: bitstate hashing in 2^W bits (a bit per state, no state stored)
# stops when the bits are full of collisions, so each run takes seconds on
# two cores whatever the full space is (tens of millions of states); a
# violation it reports is real, a pass covers the states it reached.
set -u
extra="$*"
src=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/t/model/failover.pml
W=${NOWQ_SPIN_W:-22}
nice="nice -n19"
command -v chrt >/dev/null 2>&1 && nice="chrt -i 0 $nice"
command -v ionice >/dev/null 2>&1 && nice="ionice -c3 $nice"
echo "1..4"
if ! command -v spin >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
	for i in 1 2 3 4; do
		echo "ok $i # SKIP spin or cc is not installed (setup.sh installs spin)"
	done
	exit 0
fi
dir=$(mktemp -d /tmp/nowq-spin.XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
cp "$src" failover.pml
n=0 fail=0

# run NAME SPINFLAGS CCFLAGS PANFLAGS: one pan run; ok when it reports no error.
run() {
	n=$((n + 1))
	rm -f pan pan.c failover.pml.trail
	if $nice spin $2 $extra -a failover.pml >spin.out 2>&1 && $nice cc -O2 -w $3 -o pan pan.c >cc.out 2>&1 &&
	    timeout 300 $nice ./pan $4 >pan.out 2>&1 && grep -q 'errors: 0' pan.out; then
		echo "ok $n $1: $(grep -o '[0-9.e+]* states, stored' pan.out), $(grep -o 'elapsed time [0-9.]* seconds' pan.out)"
	else
		fail=1
		echo "not ok $n $1"
		sed 's/^/# /' spin.out cc.out 2>/dev/null | grep -v '^# ltl' | head -20
		grep -E 'pan:|error|violated|cycle|elapsed' pan.out 2>/dev/null | head -10 | sed 's/^/# /'
		[ -f failover.pml.trail ] && $nice spin -t -p -g $2 $extra failover.pml 2>&1 | tail -80 | sed 's/^/# /'
	fi
}

# Safety: two faults, every timing (a lease may run out on a working link).
# Each assertion of check() is also checked alone, so a failure names it.
safety="-DSAFETY -DNOCLAIM -DBITSTATE"
run "at most one master is writable at any moment (so in any epoch)" "-DMAXFAULTS=2 -DONLY=1" "$safety" "-w$W -m5000"
run "no master of an older epoch is writable once a newer one was elected (fencing)" "-DMAXFAULTS=2 -DONLY=2" "$safety" "-w$W -m5000"
run "every acknowledged write is on every writable primary" "-DMAXFAULTS=2 -DONLY=4" "$safety" "-w$W -m5000"
# Liveness, LTL live under weak fairness: one fault (a crash, a cut link or
# a lease run out early), one write, and pan -a -f.
run "once the faults are over and a master reaches a majority, some master is writable again and again" \
    "-DLIVE -DMAXFAULTS=1 -DMAXLOG=1" "-DBITSTATE -DNFAIR=3" "-a -f -w$W -m20000"
exit $fail
