"""The forms of ptxsmt's partly modelled opcodes that it does not judge (isa/unmodelled.py).

`check` calls a spelling of such an opcode illegal when its modifiers are ones the
opcode's syntax gives and it is outside the catalogue (or has another operand count):
that is sound only if ptxas refuses every such spelling that no row of `UNMODELLED`
names. The live test assembles them all again (about 23,000 lines a header;
PTXSMT_PROFILE=thorough under every header of the measurement).
"""

from __future__ import annotations

import shutil
import sys
from itertools import product
from pathlib import Path

import pytest
from tier import THOROUGH

from ptxsmt.isa.opcodes import FLAG_MODIFIERS, ROUNDINGS, SHIFT_DIRECTIONS, SYNTAX, TYPE_ROLES
from ptxsmt.isa.syntax import parse_variant
from ptxsmt.isa.types import TYPES
from ptxsmt.isa.unmodelled import UNMODELLED, unmodelled
from ptxsmt.isa.variants import catalogue, operand_slots, operand_types, requirement

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
# the headers of the measurement (isa/unmodelled.py): old targets, sm_90, the newest; the
# suite asks sm_100a (every row but mad.f32's, sm_1x/sm_20's, is open there)
ALL_HEADERS = [("sm_13", "1.4"), ("sm_20", "2.0"), ("sm_53", "6.5"), ("sm_90", "9.0"),
               ("sm_90a", "9.0"), ("sm_100a", "9.0"), ("sm_103a", "9.0"), ("sm_110a", "9.0"),
               ("sm_120a", "9.0"), ("sm_121a", "9.0")]
HEADERS = ALL_HEADERS if THOROUGH else [("sm_100a", "9.0")]
# ptxas's words for a line refused for its operands only (it may take other operands)
FOR_OPERANDS = ("Arguments mismatch", "Unknown symbol")


def _values(kind: str, syntax) -> tuple:
    flags = {field: spelled for spelled, field in FLAG_MODIFIERS.items()}
    if kind in TYPE_ROLES:
        return tuple(TYPES)
    domain = {"rnd": ROUNDINGS, "mode": syntax.modes, "dir": SHIFT_DIRECTIONS}.get(kind)
    return (None, *(domain if domain is not None else (flags[kind],)))


def spellings():
    """Every spelling of each partly modelled opcode its syntax gives: each modifier
    present or not, in print order, and every type."""
    for opcode, syntax in SYNTAX.items():
        if syntax.partial:
            for combo in product(*(_values(k, syntax) for k in syntax.modifiers)):
                yield ".".join([opcode, *filter(None, combo)])


def candidates():
    """(spelling, operand count, line): a spelling outside the catalogue with the
    catalogue's operand count, a catalogued one with one fewer and one more, each operand
    a register of its slot's type."""
    sys.path.insert(0, str(SCRIPTS))
    from ptxas_probe import reg

    for spelling in spellings():
        v = parse_variant(spelling)
        slots = operand_slots(v)
        counts = [len(slots)] if requirement(v) is None else [len(slots) - 1, len(slots) + 1]
        try:
            types = [operand_types(v)[s].name for s in slots]
        except KeyError:  # mul.wide.u64: no type twice as wide
            types = [v.types[0].name] * len(slots)
        for n in counts:
            names = (types + types[-1:])[:n]
            yield spelling, n, f"{spelling} {', '.join(reg(t, i) for i, t in enumerate(names))};"


def test_no_row_hides_a_catalogued_form():
    for v in catalogue():
        if v.syntax.partial:
            assert unmodelled(v, len(operand_slots(v))) is None, v


def test_the_spellings_cover_the_catalogue():
    partial = {str(v) for v in catalogue() if v.syntax.partial}
    assert partial <= set(spellings())


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")
def test_ptxas_refuses_every_spelling_no_row_names():
    sys.path.insert(0, str(SCRIPTS))
    import ptxas_probe

    lines = list(candidates())
    open_forms = set()  # (spelling, count) ptxas took somewhere, or refused for operands
    for target, version in HEADERS:
        results = ptxas_probe.probe_detailed([c[2] for c in lines], target, version, chunk=4000)
        for (spelling, n, _), (ok, messages) in zip(lines, results):
            if ok or (version == "9.0" and requirement(parse_variant(spelling)) is None
                      and all(m.startswith(FOR_OPERANDS) for m in messages)):
                open_forms.add((spelling, n))
    unnamed = sorted(f for f in open_forms if unmodelled(parse_variant(f[0]), f[1]) is None)
    assert unnamed == [], unnamed[:20]
    used = {UNMODELLED.index(unmodelled(parse_variant(s), n)) for s, n in open_forms}
    assert used == set(range(len(UNMODELLED))) or not THOROUGH  # no row is dead
