"""A UD/QP1 probe built packet by packet: a CM ClassPortInfo Get crafted with the packet
classes (no connection), sent as raw bytes; the target's QP1 must answer with a GetResp that
echoes the transaction ID, from QP1 with the GSI Q_Key; the same Get with a wrong Q_Key must be
dropped silently (a Q_Key violation on QP1).

    build/roceconf run --cases examples/ud_qp1_probe.py
    pytest examples/ud_qp1_probe.py
"""

import roceconf
from roceconf import BTH, DETH, IP, MAD, UDP, ClassPortInfo, Ether

GSI_QKEY = 0x80010000
TID = 0x5EED0001


def class_port_info_get(ctx, qkey=GSI_QKEY, tid=TID):
    a = ctx.addresses
    return (Ether(src=a["tester_mac"], dst=a["target_mac"]) /
            IP(src=a["tester_ip"], dst=a["target_ip"]) / UDP(sport=0xC123) /
            BTH(opcode=0x64, dqpn=1, psn=7) / DETH(qkey=qkey, srcqp=1) /
            MAD(method=0x01, tid=tid) / ClassPortInfo())


@roceconf.case(id="vendor/qp1-class-port-info",
               clause="IBA Vol 1 13.4.8.1 (ClassPortInfo), 13.5.1 (GSI on QP1, Q_Key 0x80010000)",
               requirement="MUST", needs=["responder"])
def class_port_info(ctx):
    """QP1 answers a ClassPortInfo Get with a GetResp echoing the TID, from QP1 with the GSI
    Q_Key."""
    ctx.send_frame(class_port_info_get(ctx))
    resp = ctx.expect(None, "ClassPortInfo", tid=TID)
    mad, deth = resp[MAD], resp[DETH]
    assert mad.method == 0x81, f"method {mad.method:#x}, a GetResp is 0x81"
    assert deth.srcqp == 1 and deth.qkey == GSI_QKEY, f"from QP {deth.srcqp} Q_Key {deth.qkey:#x}"
    assert resp[BTH].dqpn == 1
    assert resp.icrc_ok and not [f for f in resp.findings if f.severity == "error"]


@roceconf.case(id="vendor/qp1-wrong-qkey-dropped",
               clause="IBA Vol 1 10.2.4 (C10-15: datagrams to QP1 must carry Q_Key 0x80010000)",
               requirement="MUST", needs=["responder"])
def wrong_qkey(ctx):
    """A ClassPortInfo Get to QP1 with a wrong Q_Key gets no answer; a right one then does."""
    ctx.send_frame(class_port_info_get(ctx, qkey=0x12345678, tid=TID + 1))
    ctx.expect_nothing(None)
    ctx.send_frame(class_port_info_get(ctx, tid=TID + 2))
    ctx.expect(None, "ClassPortInfo", tid=TID + 2)
