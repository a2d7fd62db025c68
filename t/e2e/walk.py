#!/usr/bin/env python3
# walk.py: sends every request type of the master's table (qmaster --requests) as the calling user and checks each is refused or served as its who-column says.
# Usage: walk.py SOCKET ROLE FOREIGN_JOB_IDS FOREIGN_CRON_ID FOREIGN_RESERVATION < table
#   ROLE: "user" (neither operator nor manager) or "operator".
#   FOREIGN_JOB_IDS: comma-separated pending jobs of another user, one used
#   per request that names a job.  Exits 1 naming every row that went wrong,
#   or a row this script has no case for (so a new request type cannot slip
#   past the test).
import json
import socket
import struct
import sys

sock_path, role = sys.argv[1], sys.argv[2]
foreign = [int(x) for x in sys.argv[3].split(",")]
foreign_cron = int(sys.argv[4])
foreign_resv = sys.argv[5]
PRIV = "necessary privileges"


class Refused(Exception):
    pass


class Conn:
    def __init__(self, hello_role):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(sock_path)
        self.s.settimeout(10)
        self.seq = 0
        hello = self.call({"type": "HELLO", "version": 1, "role": hello_role, "auth": {"method": "none"},
                           "nonce": "0" * 32})
        if not hello["ok"]:
            # Only the daemon identity may connect as an execd, the other
            # master ("peer") or an execd's witness link.
            assert hello_role in ("execd", "peer", "witness") and hello.get("error") == "auth", hello
            raise Refused(hello.get("message"))

    def recv(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise EOFError("the master closed the connection")
            b += c
        return b

    def call(self, msg):
        self.seq += 1
        msg["seq"] = self.seq
        d = json.dumps(msg).encode()
        self.s.sendall(struct.pack(">I", len(d)) + d)
        while True:
            rep = json.loads(self.recv(struct.unpack(">I", self.recv(4))[0]))
            if rep.get("type") == "REPLY" and rep.get("seq") == self.seq:
                return rep


client = Conn("client")


def own_job():
    rep = client.call({"type": "SUBMIT", "job": {"name": "walk", "argv": ["/bin/true"], "cwd": "/tmp",
                                                 "out": "/dev/null", "err": "/dev/null", "hold": 1}})
    assert rep["ok"], rep
    return rep["id"]


def verdict(rep):
    """refused, or served (anything else: an answer about the job itself)."""
    if not rep.get("ok"):
        return "refused" if rep.get("error") == "permission" else "served"
    for r in rep.get("results", []):
        if PRIV in r.get("message", ""):
            return "refused"
    return "served"


def job_req(t, jid):
    if t == "ALTER":
        return {"type": t, "jobs": [jid], "name": "renamed"}
    return {"type": t, "jobs": [jid]}


# What each type is sent with: (message on the caller's own object or None,
# message on another user's object).
def cases(t):
    if t in ("DELETE", "HOLD", "RELEASE", "ALTER", "SUSPEND", "UNSUSPEND", "CLEAR"):
        return job_req(t, own_job()), job_req(t, foreign.pop())
    if t == "CRON":
        return {"type": t, "action": "list"}, {"type": t, "action": "hold", "ids": [foreign_cron]}
    if t == "UNRESERVE":
        return None, {"type": t, "name": foreign_resv}
    plain = {
        "SUBMIT": {"job": {"name": "walk", "argv": ["/bin/true"], "cwd": "/tmp", "hold": 1}},
        "STATUS": {},
        "WAIT": {"id": 999999999},
        # Who may start a task in which job is perm_inherit's, per job (pe.bats).
        "INHERIT": {"id": 999999999, "host": "walkhost", "task": {"argv": ["/bin/true"], "qrsh": "h 1 s"}},
        "HOSTS": {"jobs": True},
        # Any user may stage a file (an ask without bytes); a staged file of
        # another's job is not found for the caller (perm_stage_read, stage.bats).
        "STAGE_PUT": {"sha256": "0" * 64, "size": 1, "total": 1, "offset": 0},
        "STAGE_GET": {"sha256": "0" * 64, "offset": 0, "job": foreign[0]},
        "ACCT": {},
        "CONF": {"op": "list"},
        # Who may reserve which host is the hosts' owners lists' (resv.bats).
        "RESERVE": {"op": "list"},
        # Changing aliases and host lists is for managers (resv.bats); showing is for all.
        "ALIAS": {"op": "show"},
        "DISABLE": {"targets": ["all.q"]},
        "ENABLE": {"targets": ["all.q"]},
        "REGISTER": {"host": "walkhost", "slots": 1, "uid": 0, "load": [0, 0, 0], "jobs": [], "attrs": {}},
        "LOAD": {"load": [0, 0, 0], "idle": True},
        "PULL": {"free": 1},
        "CHILD_REGISTER": {"id": foreign[0], "task": 0, "attempt": 1, "host": "walkhost", "pid": 1,
                           "start_time": 0},
        "CHILD_TERM": {"id": foreign[0], "task": 0, "attempt": 1, "host": "walkhost", "exit_status": 0,
                       "signal": 0, "end_time": 0},
        # The masters and failover (standby.bats); only a manager forces a takeover.
        "MASTERS": {},
        "TAKEOVER": {},
        "PROBE": {"epoch": 99, "last": 0},
        "SYNC": {"epoch": 99, "last": 0, "schema": 0},
        "APPLIED": {"applied": 0},
        "STAGE_STORED": {"sha256": "0" * 64, "size": 0},
        "STAGE_WANT": {"files": [], "last": True},
        "HEARTBEAT": {"t": 0},
        "VOTE": {"epoch": 99, "granted": True, "host": "walkhost"},
    }
    if t not in plain:
        return None
    return None, dict(plain[t], type=t)


def expect(who):
    """What the caller should get: (on its own object, on another's)."""
    op = role == "operator"
    return {
        "user": ("served", "served"),
        "owner|operator": ("served", "served" if op else "refused"),
        "owner|manager": ("served", "refused"),
        "operator": (None, "served" if op else "refused"),
        "manager": (None, "refused"),
        "daemon": (None, "refused"),
    }[who]


bad = []
rows = 0
for line in sys.stdin:
    t, conn_role, who, _ = line.split()
    rows += 1
    c = cases(t)
    if c is None:
        bad.append("%s: walk.py has no case for this request type" % t)
        continue
    mine, theirs = c
    want_mine, want_theirs = expect(who)
    # A type several roles may send is tried on the first.
    conn_role = conn_role.split("|")[0]
    try:
        conn = client if conn_role == "client" else Conn(conn_role)
    except Refused:
        conn = None
    for msg, want in ((mine, want_mine), (theirs, want_theirs)):
        if msg is None:
            continue
        try:
            got = verdict(conn.call(msg)) if conn else "refused"
        except (EOFError, socket.timeout) as e:
            got = "no reply (%s)" % e
        print("%-15s %-7s %-15s %-8s %s" % (t, conn_role, who, "own" if msg is mine else "other", got))
        if got != want:
            bad.append("%s (%s, %s object): %s, wanted %s" % (t, who, "own" if msg is mine else "other's",
                                                               got, want))
if rows < 20:
    bad.append("only %d rows in the table" % rows)
for b in bad:
    print("WRONG: " + b)
sys.exit(1 if bad else 0)
