#!/bin/sh
# test.sh: sets up nowq with sanitizers and runs the whole test suite; the last line is "N passed, M failed".
set -eu
cd "$(dirname "$0")"
./setup.sh --enable-sanitizers
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
cd _build
# Tests report through TAP; a failing test must not stop the summary.
make -j"$(nproc)" check >/dev/null 2>&1 || true
../t/summary .
