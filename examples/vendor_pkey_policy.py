"""A vendor's P_Key policy: a request from a foreign partition is dropped silently, counted in
the bad-P_Key counter, and consumes no PSN; a limited member of the connection's own partition
is accepted (the QP is a full member).

    build/roceconf run --cases examples/vendor_pkey_policy.py --filter 'vendor/*'
    pytest examples/vendor_pkey_policy.py
"""

import roceconf

FOREIGN = 0x1234  # a full member of another partition
LIMITED_DEFAULT = 0x7FFF  # the default partition, limited membership


@roceconf.case(id="vendor/pkey-foreign-dropped-and-counted",
               clause="IBA Vol 1 9.6.1.1 (C9-43), 10.9.3: P_Key mismatch is a silent drop "
                      "counted in the P_Key violation counter",
               requirement="MUST", needs=["responder", "control"])
def foreign_pkey(ctx):
    """A SEND with a foreign P_Key is dropped, counted once, and its PSN stays expected."""
    c = ctx.connect("c", pkey=0xFFFF)
    before = ctx.counters()["bad_pkey"]
    ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=32, pkey=FOREIGN)
    ctx.expect_nothing(c)  # no ACK, no NAK
    dropped = ctx.counters()["bad_pkey"] - before
    if dropped != 1:
        ctx.fail(f"bad_pkey counter moved by {dropped} for one foreign packet",
                 [("counters.bad_pkey", f"+1 from {before}", f"+{dropped}")])
    ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=32)  # the same PSN, right P_Key
    ctx.expect(c, "ACK", psn=0, syndrome="ack")


@roceconf.case(id="vendor/pkey-limited-member-accepted",
               clause="IBA Vol 1 10.9.3: a limited-member P_Key matches a full-member entry",
               requirement="MUST", needs=["responder"])
def limited_member(ctx):
    """A limited member of the QP's own partition is served (the QP is a full member)."""
    c = ctx.connect("c", pkey=0xFFFF)
    ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=32, pkey=LIMITED_DEFAULT)
    ack = ctx.expect(c, "ACK", psn=0, syndrome="ack")
    # Responses carry the QP's own P_Key, not the requester's.
    assert ack[roceconf.BTH].pkey == 0xFFFF, f"ACK P_Key {ack[roceconf.BTH].pkey:#x}"
