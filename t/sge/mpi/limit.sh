#!/bin/sh
# limit.sh: four qrsh -inherit tasks at once on a host where the job has 2
# slots (job_is_first_task FALSE): Grid Engine's execd takes two.
for i in 1 2 3; do
	qrsh -inherit "$HOSTNAME" sleep 6 &
done
sleep 2
qrsh -inherit "$HOSTNAME" echo fourth
wait
