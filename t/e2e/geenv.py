#!/usr/bin/env python3
"""geenv.py: a job's environment (env's output) with its run's own values written as names, to compare meanings.

Usage: geenv.py FILE   prints NAME=VALUE, sorted, where each value has the
job's id, its TMPDIR, working directory, home, user, host, spool folder and
so on replaced by <JOB_ID>, <TMPDIR>, ...  Grid Engine's fixture and nowq's
output then read the same when each variable means the same.
"""
import re
import sys

# The variables whose values stand for themselves in the others, longest
# value first when replaced: in a path (a value with a "/") wherever they
# stand as a whole word, elsewhere only as the whole value.
TOKENS = ["SGE_JOB_SPOOL_DIR", "TMPDIR", "SGE_ROOT", "SGE_O_WORKDIR", "SGE_CWD_PATH",
          "HOME", "JOB_NAME", "HOSTNAME", "USER", "ARC", "JOB_ID"]
# Values that are names of their own, never another variable's.
VERBATIM = {"PE", "QUEUE", "JOB_SCRIPT", "SGE_ACCOUNT", "SGE_CELL"}


def read_env(path):
    env = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if "=" in line and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", line):
                name, value = line.split("=", 1)
                env[name] = value
    return env


def normalise(env):
    pairs = [(env[t], t) for t in TOKENS if env.get(t)]
    pairs.sort(key=lambda p: -len(p[0]))
    out = {}
    for name, value in env.items():
        v = value
        for raw, token in pairs:
            if token == name or name in VERBATIM:
                continue
            if "/" not in value:
                v = "<%s>" % token if v == raw and token != "JOB_ID" else v
            elif token == "JOB_ID":
                v = re.sub(r"(?<![0-9])%s(?![0-9])" % re.escape(raw), "<JOB_ID>", v)
            elif token in ("USER", "ARC", "HOSTNAME", "JOB_NAME"):
                v = re.sub(r"(?<![A-Za-z0-9_-])%s(?![A-Za-z0-9_-])" % re.escape(raw),
                           "<%s>" % token, v)
            else:
                v = v.replace(raw, "<%s>" % token)
        out[name] = "<%s>" % name if name in TOKENS else v
    return out


def main():
    env = normalise(read_env(sys.argv[1]))
    for name in sorted(env):
        print("%s=%s" % (name, env[name]))


if __name__ == "__main__":
    main()
