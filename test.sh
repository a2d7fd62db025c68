#!/bin/sh
# test.sh: sets up nowq with sanitizers and runs the whole test suite; the last line is "N passed, M failed".
set -eu
cd "$(dirname "$0")"
# setup.sh says where it built: a clone whose path has a space is built
# through a link of a plain name, and the suite runs there.
out=$(./setup.sh --enable-sanitizers)
printf '%s\n' "$out"
build=$(printf '%s\n' "$out" | sed -n 's/^setup: built nowq in //p')
# The mail tests deliver through a real MTA (local delivery only, Debian's
# default for exim4); without one they are skipped.
if [ ! -x /usr/sbin/sendmail ] && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq exim4-daemon-light >/dev/null 2>&1 || true
fi
# The status page is tested in a real browser (headless Chromium); without
# one that test is skipped.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || true
fi
# mpi.bats runs Open MPI's mpirun inside a parallel job (qrsh -inherit);
# without Open MPI that test is skipped.
if ! command -v mpicc >/dev/null && [ "$(id -u)" = 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null 2>&1 || true
fi
# The package tests build the Debian packages (debhelper), check them
# (lintian), install nowq-client over gridengine-client in a throwaway copy
# of the system (gridengine-client's packages in apt's cache, not
# installed), and rotate logs (logrotate).
if [ "$(id -u)" = 0 ]; then
	for p in debhelper lintian logrotate; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null 2>&1 || true
	done
	ls /var/cache/apt/archives/gridengine-client_*.deb >/dev/null 2>&1 ||
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only gridengine-client >/dev/null 2>&1 || true
fi
# libdrmaa is tested through Debian's python3-drmaa and Snakemake 7
# (t/e2e/drmaa.bats); without them those tests are skipped.
if [ "$(id -u)" = 0 ]; then
	for p in python3-drmaa snakemake; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null 2>&1 || true
	done
fi
# Tests report through TAP; a failing test must not stop the summary.
(cd "$build" && make -j"$(nproc)" check >/dev/null 2>&1) || true
# The run's world-reachable copy of the programs (t/stage) goes with it.
stage=$(cat "$build/t/stage-dir" 2>/dev/null || true)
case $stage in /tmp/nowq-stage.*) rm -rf "$stage" ;; esac
# Then the fuzzers themselves, each for FUZZ_SECONDS from its committed
# corpus, in a second tree built by clang (setup.sh installs it): one TAP
# result per target.  New inputs stay in that tree (git ignores it); a crash
# fails its target and leaves its input in _build-fuzz/t/fuzz/crash-TARGET-*.
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
case $FUZZ_SECONDS in
*[!0-9]* | "") echo "test.sh: FUZZ_SECONDS must be a number of seconds (0: no fuzzing), not \"$FUZZ_SECONDS\"" >&2; exit 2 ;;
esac
fuzz=${build%/*}/_build-fuzz
if [ "$FUZZ_SECONDS" -gt 0 ]; then
	# A tree without results counts as a failure in t/summary, so a
	# fuzzing build that fails is not taken for a pass from an old run.
	rm -f _build-fuzz/t/fuzz/run.trs _build-fuzz/t/fuzz/run.log
	if NOWQ_BUILD_DIR=_build-fuzz ./setup.sh --enable-fuzzing >/dev/null; then
		# Only the fuzz run: the rest of the suite ran in _build.
		(cd "$fuzz" && make -j"$(nproc)" check TESTS=t/fuzz/run check_PROGRAMS= check_DATA='$(FUZZERS)' \
			FUZZ_CHECK_SECONDS="$FUZZ_SECONDS" >/dev/null 2>&1) || true
	else
		echo "test.sh: the fuzzing build (_build-fuzz) failed" >&2
	fi
	t/summary "$build" "$fuzz"
else
	t/summary "$build"
fi
