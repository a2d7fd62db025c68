#!/bin/sh
# test.sh: sets up nowq with sanitizers and runs the whole test suite; the last line is "N passed, M failed".
set -eu
cd "$(dirname "$0")"
./setup.sh --enable-sanitizers
cd _build
# Tests report through TAP; a failing test must not stop the summary.
make -j"$(nproc)" check >/dev/null 2>&1 || true
../t/summary .
