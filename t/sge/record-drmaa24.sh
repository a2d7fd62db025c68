#!/bin/bash
# record-drmaa24.sh: records how Grid Engine 8.1.9 takes qsub -i (a job's
# standard input from a file), #$ -i and qalter -i, and how qstat -j shows
# them, into t/sge/drmaa24/.
#
# Run once as root where Grid Engine runs (queue all.q, host vm); it
# changes nothing of Grid Engine's configuration.  Files: stdin-*.line
# (qstat -j's stdin_path_list line), *.out (what the job wrote: its
# standard input and SGE_STDIN_PATH, the folder as DIR), qalter-i.out
# (qalter's answer, the job id as ID), missing.state (qstat's state of a
# job whose input file does not exist).  t/e2e/geopts.bats compares
# nowq's with them.
set -u
export SGE_ROOT=${SGE_ROOT:-/var/lib/gridengine} SGE_CELL=${SGE_CELL:-default}
B=/usr/bin
out=$(cd "$(dirname "$0")" && pwd)/drmaa24
mkdir -p "$out"
dir=$(mktemp -d /tmp/record-drmaa24.XXXXXX)
chmod 755 "$dir"
cd "$dir" || exit 1
printf 'hello\nworld\n' > in.txt
printf 'new\n' > new.txt
line() { $B/qstat -j "$1" | grep '^stdin_path_list:' > "$out/$2.line"; }
waitjob() { while $B/qstat -j "$1" >/dev/null 2>&1; do sleep 1; done; }

# -i FILE relative to -cwd: the job reads it; qstat -j shows it.
id=$($B/qsub -terse -h -cwd -i in.txt -o plain.out -j y -b y \
    sh -c 'cat; echo "SGE_STDIN_PATH=$SGE_STDIN_PATH"')
line "$id" stdin-plain
$B/qrls "$id" >/dev/null
waitjob "$id"
sed "s#$dir#DIR#g" plain.out > "$out/plain.out"

# -i HOST:FILE, then qalter -i.
id=$($B/qsub -terse -h -cwd -i vm:in.txt -o alter.out -j y -b y cat)
line "$id" stdin-host
$B/qalter -i new.txt "$id" | sed -E "s/\b$id\b/ID/g" > "$out/qalter-i.out"
line "$id" stdin-altered
$B/qrls "$id" >/dev/null
waitjob "$id"
cp alter.out "$out/alter.out"

# #$ -i in a script.
printf '#!/bin/sh\n#$ -i in.txt\ncat\n' > s.sh
id=$($B/qsub -terse -cwd -o directive.out -j y s.sh)
waitjob "$id"
cp directive.out "$out/directive.out"

# An input file that does not exist: the job waits in error.
id=$($B/qsub -terse -cwd -i nothere.txt -o /dev/null -j y -b y cat)
sleep 15
$B/qstat | awk -v id="$id" '$1 == id { print $5 }' > "$out/missing.state"
$B/qdel "$id" >/dev/null
rm -rf "$dir"
