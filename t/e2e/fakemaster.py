#!/usr/bin/env python3
# fakemaster.py: a master that cannot prove who it is: accepts one execd on 127.0.0.1:PORT, answers its HELLO and REGISTER without a credential, and sends a DISPATCH of a job that would create FILE.
# Usage: fakemaster.py PORT FILE
import json
import socket
import struct
import sys

lis = socket.socket()
lis.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lis.bind(("127.0.0.1", int(sys.argv[1])))
lis.listen(1)
lis.settimeout(20)
conn, _ = lis.accept()
conn.settimeout(5)


def send(msg):
    data = json.dumps(msg).encode()
    conn.sendall(struct.pack(">I", len(data)) + data)


send({"type": "REPLY", "seq": 1, "ok": True, "epoch": 1})
send({"type": "REPLY", "seq": 2, "ok": True, "epoch": 1})
job = {"id": 99, "name": "evil", "owner": "root", "uid": 0, "gid": 0, "argv": ["/bin/touch", sys.argv[2]]}
send({"type": "DISPATCH", "seq": 3, "jobs": [job]})
try:
    conn.recv(65536)
except OSError:
    pass
