#!/bin/sh
# job.sh: what a parallel job sees, and what qrsh -inherit accepts and
# refuses; run under -pe by t/sge/record-mpi.sh (Grid Engine) and by
# t/e2e/pe.bats (nowq), whose outputs are compared.
echo "NSLOTS=$NSLOTS NHOSTS=$NHOSTS PE=$PE"
echo "PE_HOSTFILE:"; cat "$PE_HOSTFILE"
echo "== qrsh -inherit this host"
qrsh -inherit "$HOSTNAME" echo task on '$HOSTNAME' of job '$JOB_ID'; echo "exit $?"
echo "== qrsh -inherit -nostdin -V this host, exit 3"
qrsh -inherit -nostdin -V "$HOSTNAME" 'exit 3'; echo "exit $?"
echo "== qrsh -inherit joins its arguments for the remote shell"
qrsh -inherit "$HOSTNAME" sh -c 'exit 3'; echo "exit $?"
echo "== qrsh -inherit a host not granted"
qrsh -inherit nosuchhost.example echo no; echo "exit $?"
echo "== qrsh -inherit with another JOB_ID"
JOB_ID=999999 qrsh -inherit "$HOSTNAME" echo no; echo "exit $?"
echo "== qrsh -inherit with no JOB_ID"
env -u JOB_ID qrsh -inherit "$HOSTNAME" echo no; echo "exit $?"
