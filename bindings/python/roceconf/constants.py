"""Symbolic values, from the codec's own name tables (nothing here is written by hand):

    Opcode.RC_SEND_ONLY             BTH opcodes (dissector/opcode.h)
    Syndrome.NAK_PSN_SEQUENCE_ERROR AETH syndromes, each name at its first value (names.h)
    NakCode.PSN_SEQUENCE_ERROR      NAK codes (IBA Table 46), the NAK syndromes' low 5 bits
    CmMessage.REQ                   CM attribute IDs (the MAD field table)
    RejReason.INVALID_SERVICE_ID    REJ reasons (IBA Table 109, dissector/mad/cm_names.h)

They are IntEnums: give them wherever a number goes (`BTH(opcode=Opcode.RC_SEND_ONLY)`,
`ctx.send(c, Opcode.RC_SEND_ONLY)`, `ctx.expect(c, "NAK", syndrome=Syndrome....)`). A field with
value names also takes the name as a string, as the table has it or as an identifier:
`AETH(syndrome="NAK_PSN_SEQUENCE_ERROR")`, `REJ(reason="No QP available")` or
`REJ(reason="NO_QP_AVAILABLE")`. Identifiers are the names in capitals, words joined by "_"
(ClassPortInfo is CmMessage.CLASS_PORT_INFO); the table's own spelling is `Member.label`.
"""

from __future__ import annotations

import enum
from typing import Dict, Iterable, Tuple, Type

from . import _roceconf as _core

__all__ = ["Opcode", "Syndrome", "NakCode", "CmMessage", "RejReason"]


def _enum(name: str, doc: str, rows: Iterable[Tuple[str, str, int]]) -> Type[enum.IntEnum]:
    rows = list(rows)
    cls = enum.IntEnum(name, [(ident, value) for ident, _, value in rows], module=__name__)
    labels: Dict[str, str] = {ident: label for ident, label, _ in rows}
    cls.__doc__ = doc
    cls.label = property(lambda self: labels[self.name])  # type: ignore[attr-defined]
    return cls


Opcode = _enum("Opcode", "BTH opcodes, from the codec's opcode table.",
               _core.value_names("bth.opcode"))
Syndrome = _enum("Syndrome", "AETH syndromes (ACK and RNR_NAK at their first value: credit and "
                 "timer codes are the low 5 bits).", _core.value_names("aeth.syndrome"))
NakCode = _enum("NakCode", "NAK codes (the low 5 bits of a NAK syndrome).", _core.nak_codes())
CmMessage = _enum("CmMessage", "CM messages by attribute ID.", _core.value_names("mad.attr_id"))
RejReason = _enum("RejReason", "REJ reasons.", _core.value_names("cm.reason"))
