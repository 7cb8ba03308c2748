#!/usr/bin/env python3
"""A controller for `lab.sh kill-test`: authenticates with the secret in SECRET_FILE
(control/CONTROL_API.md, "Authentication"), makes a PD, a CQ, an RC QP (in INIT) and a
registered region through roceconf-agent's control API, writes READY_FILE, and waits to be
killed without releasing anything. Usage: kill_test_controller.py PORT READY_FILE SECRET_FILE"""
import hashlib
import hmac
import json
import socket
import sys
import time

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rw")


def req(**r):
    f.write(json.dumps(r) + "\n")
    f.flush()
    a = json.loads(f.readline())
    if not a["ok"]:
        sys.exit("controller: " + a["error"])
    return a


with open(sys.argv[3], "rb") as secret_file:
    secret = secret_file.read().rstrip(b" \t\r\n")
nonce = req(op="hello").get("auth", {}).get("nonce")
if nonce:
    req(op="auth", mac=hmac.new(secret, nonce.encode(), hashlib.sha256).hexdigest())
pd = req(op="alloc_pd")["pd"]
cq = req(op="create_cq", depth=64)["cq"]
qp = req(op="create_qp", qp_type="RC", pd=pd, send_cq=cq, recv_cq=cq)["qp_num"]
req(op="modify_qp", qp_num=qp,
    attr={"qp_state": "INIT", "pkey_index": 0, "port_num": 1, "qp_access_flags": ["REMOTE_WRITE"]})
req(op="reg_mr", pd=pd, length=65536, access=["LOCAL_WRITE", "REMOTE_WRITE"])
with open(sys.argv[2], "w") as ready:
    ready.write("ready\n")
time.sleep(600)
