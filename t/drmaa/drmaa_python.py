#!/usr/bin/python3
"""drmaa_python.py: Debian's python3-drmaa on nowq's libdrmaa: a job, a bulk job, their exit status and usage."""
import os
import sys

import drmaa

work = sys.argv[1]
with drmaa.Session() as s:
    assert s.drmsInfo.startswith("nowq "), s.drmsInfo
    assert s.version.major == 1 and s.version.minor == 0, s.version
    jt = s.createJobTemplate()
    jt.remoteCommand = "/bin/sh"
    jt.args = ["-c", "echo hello from $JOB_NAME; exit 4"]
    jt.jobName = "pyjob"
    jt.workingDirectory = work
    jt.outputPath = ":" + drmaa.JobTemplate.WORKING_DIRECTORY + "/py.out"
    jt.joinFiles = True
    jid = s.runJob(jt)
    info = s.wait(jid, drmaa.Session.TIMEOUT_WAIT_FOREVER)
    assert info.jobId == jid and info.hasExited and info.exitStatus == 4, info
    assert not info.hasSignal and not info.wasAborted, info
    for k in ("cpu", "ru_wallclock", "start_time", "end_time", "submission_time", "exit_status", "ru_maxrss"):
        assert k in info.resourceUsage, (k, info.resourceUsage)
    assert float(info.resourceUsage["exit_status"]) == 4.0, info.resourceUsage
    with open(os.path.join(work, "py.out")) as f:
        assert f.read() == "hello from pyjob\n"

    jt.args = ["-c", "exit $SGE_TASK_ID"]
    jt.outputPath = ":/dev/null"
    ids = s.runBulkJobs(jt, 1, 6, 1)
    assert len(ids) == 6, ids
    s.synchronize(ids, drmaa.Session.TIMEOUT_WAIT_FOREVER, False)
    ends = {}
    for j in ids:
        assert s.jobStatus(j) == drmaa.JobState.FAILED, s.jobStatus(j)
        info = s.wait(j, drmaa.Session.TIMEOUT_NO_WAIT)
        ends[int(j.split(".")[1])] = info.exitStatus
    assert ends == {t: t for t in range(1, 7)}, ends

    jt.args = ["-c", "sleep 300"]
    jid = s.runJob(jt)
    try:
        s.wait(jid, 1)
        raise AssertionError("a running job's wait did not time out")
    except drmaa.errors.ExitTimeoutException:
        pass
    s.control(jid, drmaa.JobControlAction.TERMINATE)
    info = s.wait(jid, drmaa.Session.TIMEOUT_WAIT_FOREVER)
    assert info.hasSignal or info.wasAborted, info
    try:
        s.jobStatus("999999")
        raise AssertionError("an unknown job has a status")
    except drmaa.errors.InvalidJobException:
        pass
    s.deleteJobTemplate(jt)
print("python3-drmaa: ok")
