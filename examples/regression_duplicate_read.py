"""Regression for a duplicate-READ bug: after a READ was answered and newer requests were
executed, the requester re-reads only the second half of it (its last response was lost). The
responder must replay just that response, with its PSN and the bytes read, and must not move
its expected PSN back (the bug: it re-executed from the duplicate's PSN and NAKed the next
new request as out of sequence).

    build/roceconf run --cases examples/regression_duplicate_read.py
    pytest examples/regression_duplicate_read.py
"""

import roceconf

PMTU = 1024


@roceconf.case(id="vendor/duplicate-read-partial-replay",
               clause="IBA Vol 1 9.7.5.1.5 (duplicate RDMA READ: responses regenerated from the "
                      "duplicate's PSN and VA), C9-109",
               requirement="MUST", needs=["responder"])
def duplicate_read_partial(ctx):
    """A duplicate READ of a READ's last half is answered alone, and the expected PSN holds."""
    c = ctx.connect("c", pmtu=PMTU)
    ctx.send(c, "RDMA_WRITE", psn=0, offset=0, len=2 * PMTU, fill=0x30)
    ctx.expect(c, "ACK", psn=1, syndrome="ack", eventually=True)
    ctx.send(c, "READ", psn=2, offset=0, len=2 * PMTU)
    first = ctx.expect(c, "READ_RESPONSE_FIRST", psn=2, len=PMTU, fill=0x30)
    ctx.expect(c, "READ_RESPONSE_LAST", psn=3, len=PMTU, fill=0x30)
    ctx.send(c, "SEND_ONLY", psn=4, ackreq=1, len=16)
    ctx.expect(c, "ACK", psn=4, syndrome="ack")

    # The second response was "lost": READ again from its PSN and VA, one packet's worth.
    ctx.send(c, "READ", psn=3, offset=PMTU, len=PMTU)
    replay = ctx.expect(c, "READ_RESPONSE_ONLY", psn=3, len=PMTU, fill=(0x30 + PMTU) % 256)
    assert replay[roceconf.Raw].load[:4] == first[roceconf.Raw].load[:4]  # same bytes, same VA
    ctx.expect_nothing(c)  # nothing more than the one response

    ctx.send(c, "SEND_ONLY", psn=5, ackreq=1, len=16)  # the expected PSN is still 5
    ctx.expect(c, "ACK", psn=5, syndrome="ack")
