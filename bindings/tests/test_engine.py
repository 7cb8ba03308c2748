"""Python cases on the engine: the same steps and verdicts as script cases, against the
reference target with and without a defect; assertion failures FAIL, other exceptions ERROR,
both naming the case line."""

import inspect

import pytest

import roceconf


def line_of(func, text):
    """The file line of `text` inside `func`, as steps name it."""
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, l in enumerate(lines) if text in l)


class Cases:  # not collected by the pytest plugin: some of these fail on purpose

    @roceconf.case(id="pytest/duplicate-send", clause="IBA Vol 1 9.7.5.1.1 (C9-104)",
                   needs=["responder"])
    def duplicate_send(ctx):
        """A duplicate SEND is ACKed again with the same MSN and not executed twice."""
        c = ctx.connect()
        ctx.send(c, "SEND_ONLY", psn=0, ackreq=True, len=64)
        ack = ctx.expect(c, "ACK", psn=0, syndrome="ack")
        assert ack[roceconf.AETH].msn == 1, f"first ACK carries MSN {ack[roceconf.AETH].msn}"
        ctx.send(c, "SEND_ONLY", psn=0, ackreq=True, len=64)
        ctx.expect(c, "ACK", psn=0, msn=1)
        ctx.expect_nothing(c)


    @roceconf.case(id="pytest/control-steps", clause="IBA Vol 1 11.4 (control)",
                   needs=["control"])
    def control_steps(ctx):
        """Control-API steps: a QP made without CM, receives posted, a completion polled."""
        c = ctx.open("c", recv=0)
        ctx.step("post recv c count=1 len=64")
        ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=32)
        ctx.expect(c, "ACK", psn=0)
        ctx.step("poll c status=SUCCESS opcode=RECV byte_len=32")
        assert ctx.counters(), "the reference target has counters"


    @roceconf.case(id="pytest/short-keys", clause="IBA Vol 1 9.2 (BTH)", needs=["responder"])
    def short_keys(ctx):
        """A step's short keys are the field table's aliases of the decoded names."""
        c = ctx.connect()
        ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=8)
        ctx.step("expect c ACK psn=0 se=0 tver=0")

    @roceconf.case(id="pytest/short-keys-differ", clause="IBA Vol 1 9.2 (BTH)", needs=["responder"])
    def short_keys_differ(ctx):
        """The same expectation with a solicited bit the ACK does not carry."""
        c = ctx.connect()
        ctx.send(c, "SEND_ONLY", psn=0, ackreq=1, len=8)
        ctx.step("expect c ACK psn=0 se=1 tver=0")

    @roceconf.case(id="pytest/asserts", clause="-")
    def asserts(ctx):
        """An assertion fails the case."""
        ctx.note("about to fail")
        assert 1 + 1 == 3, "arithmetic"


    @roceconf.case(id="pytest/raises", clause="-")
    def raises(ctx):
        """Any other exception is an ERROR naming the line."""
        {}["missing"]


    @roceconf.case(id="pytest/skips", clause="-", needs=["pkey-limited"])
    def skips(ctx):
        """A capability the target lacks is a SKIP with the reason."""
        ctx.skip("not this time")


def test_pass_on_the_clean_reference():
    r = roceconf.run_case(Cases.duplicate_send)
    assert r.verdict == "pass", r.explain()
    kinds = {e["kind"] for e in r.events}
    assert {"sent", "received", "expect-met", "silence-ok"} <= kinds
    assert any(e["frame"] and "SEND_ONLY" in e["text"] for e in r.events)


def test_short_keys_match_the_decoded_fields():
    r = roceconf.run_case(Cases.short_keys)
    assert r.verdict == "pass", r.explain()
    r = roceconf.run_case(Cases.short_keys_differ)
    assert r.verdict == "fail", r.explain()
    assert any(d[0] == "bth.solicited" and d[1] == "1" and d[2] == "0" for d in r.diffs), r.diffs


def test_fail_with_the_defect_it_targets():
    r = roceconf.run_case(Cases.duplicate_send, quirks=["msn-stuck"])
    assert r.verdict == "fail", r.explain()
    assert "test_engine.py:" in r.failed_step
    r = roceconf.run_case(Cases.duplicate_send, quirks=["dup-reexecute"])
    assert r.verdict == "fail"
    line = line_of(Cases.duplicate_send, 'ctx.expect(c, "ACK", psn=0, msn=1)')
    assert r.failed_step.startswith(f"test_engine.py:{line} expect c ACK psn=0 msn=1")
    assert ("aeth.msn", "1 (1)", "2") in r.diffs or any(d[0] == "aeth.msn" for d in r.diffs)


def test_control_steps_and_shared_target():
    target = roceconf.Target.reference()
    for _ in range(2):  # the target is reset before each case
        r = roceconf.run_case(Cases.control_steps, target)
        assert r.verdict == "pass", r.explain()


def test_assertion_is_fail_and_exception_is_error():
    r = roceconf.run_case(Cases.asserts)
    assert r.verdict == "fail" and "arithmetic" in r.reason
    assert f"test_engine.py:{line_of(Cases.asserts, 'assert 1 + 1')}" in r.failed_step
    r = roceconf.run_case(Cases.raises)
    assert r.verdict == "error" and r.reason.startswith("KeyError: 'missing'")
    assert f"test_engine.py:{line_of(Cases.raises, 'missing')}" in r.reason


def test_skip_when_a_capability_is_missing():
    r = roceconf.run_case(Cases.skips)
    assert r.verdict == "skip"


def test_context_cannot_outlive_its_case():
    kept = []

    @roceconf.case(id="pytest/keeps-context", clause="-")
    def keeps(ctx):
        kept.append(ctx)

    assert roceconf.run_case(keeps).verdict == "pass"
    with pytest.raises(roceconf.CaseError, match="has ended"):
        kept[0].note("too late")


def test_case_metadata_and_mistakes():
    info = Cases.duplicate_send.roceconf_case
    assert info.id == "pytest/duplicate-send" and info.area == "pytest"
    assert info.title.startswith("A duplicate SEND")
    assert info.requirement == "MUST" and info.needs == ["responder"]
    with pytest.raises(roceconf.CaseError, match="MUST, SHOULD or MAY"):
        roceconf.case(clause="x", requirement="OPTIONAL")
    with pytest.raises(roceconf.CaseError, match="unknown capability"):
        roceconf.case(clause="x", needs=["teleport"])

    @roceconf.case(id="pytest/bad-step", clause="-")
    def bad_step(ctx):
        ctx.step("frobnicate c")

    r = roceconf.run_case(bad_step)
    assert r.verdict == "error" and "frobnicate" in r.reason


def test_citation_apart_from_its_rule():
    """A case may give its citation as the catalogue does: numbers apart from the paraphrase."""

    @roceconf.case(id="pytest/cited", citation="9.7.5 C9-105", rule="duplicates are re-ACKed",
                   checked="Linux rxe duplicate_request", needs=["responder"])
    def cited(ctx):
        ctx.connect()

    r = roceconf.run_case(cited)
    assert r.verdict == "pass", r.explain()
    assert r.citation == "9.7.5 C9-105" and r.rule == "duplicates are re-ACKed"
    assert r.release == "IBA Vol 1 Release 1.2.1 + Annex A17"
    assert r.checked == "Linux rxe duplicate_request"
    assert r.clause == ("9.7.5 C9-105 (IBA Vol 1 Release 1.2.1 + Annex A17): "
                        "duplicates are re-ACKed")
    with pytest.raises(roceconf.CaseError, match="paraphrase goes in rule="):
        roceconf.case(citation="9.7.5 (duplicates)")
    with pytest.raises(roceconf.CaseError, match="clause=... or citation="):
        roceconf.case(requirement="MUST")
