#!/bin/sh
# demo.sh: sets up nowq, starts a personal cluster on this host, runs a demo job and shows how to go on.
set -eu
cd "$(dirname "$0")"
./setup.sh
top=$(pwd)
PATH="$top/_build/bin:$PATH"
export PATH
DIR=${NOWQ_DIR:-$HOME/.nowq}

nowq start --dir "$DIR"
eval "$(nowq env --dir "$DIR")"

cat > "$DIR/demo.sh" <<'JOB'
#!/bin/sh
#$ -N demo
echo "Hello from job $JOB_ID on $HOSTNAME, running as $USER in $(pwd)"
sleep 2
echo "done after 2 seconds"
JOB
echo
echo "\$ qsub -cwd $DIR/demo.sh"
cd "$DIR"
id=$(qsub -terse -cwd "$DIR/demo.sh")
echo "Your job $id (\"demo\") has been submitted"
sleep 0.5
echo
echo "\$ qstat"
qstat
# Wait for the job to leave the queue, then show what it wrote.
while qstat | grep -q "^ *$id "; do sleep 0.2; done
echo
echo "\$ qstat -s z"
qstat -s z
echo
echo "\$ cat $DIR/demo.o$id"
cat "$DIR/demo.o$id"
cat <<TXT

Your personal cluster is running (spool and logs in $DIR).
Use it from this shell:
    export PATH="$top/_build/bin:\$PATH"
    $(nowq env --dir "$DIR")
    qsub -b y hostname; qstat; qstat -s z; qdel ID
Stop it with:
    nowq stop --dir "$DIR"
TXT
