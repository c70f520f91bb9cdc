"""Hypothesis strategies over the variant catalogue, and the bridge to the oracle.

The bridge only copies structure (opcode, modifier spellings, operand values)
from a parsed instruction into the oracle's plain description; the oracle
computes the answer on its own.
"""

from __future__ import annotations

from hypothesis import strategies as st

from ptxsmt.isa.syntax import UNPARSABLE_SELECTORS, Instruction, format_variant
from ptxsmt.isa.types import PRED, PtxType
from ptxsmt.isa.variants import Variant, catalogue, operand_slots, operand_types

# Bit patterns where float semantics turn: zeros, subnormal edges, normal edges, inf, NaNs.
_SPECIAL = {
    16: [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x8400, 0x3C00, 0xBC00,
         0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7D00, 0x7FFF,
         0x007F, 0x807F, 0x0080, 0x3F80, 0xBF80, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81],
    32: [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000,
         0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
         0xFFC00000, 0x7F800001, 0x7FFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x00000002],
    64: [0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 1 << 52, 0x3FF0000000000000,
         0xBFF0000000000000, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
         0x7FF0000000000001, (1 << 63) - 1, (1 << 64) - 1],
}


def bits(width: int) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(_SPECIAL.get(width, [0, 1])),
                     st.integers(0, (1 << width) - 1))


def lane_bits(t: PtxType) -> st.SearchStrategy[int]:
    """Register bits; packed registers get special values per lane."""
    if not t.is_packed:
        return bits(t.width)
    lane = bits(t.lane_width)
    return st.tuples(lane, lane).map(lambda p: p[0] | (p[1] << 16))


def variants(family: str) -> st.SearchStrategy[Variant]:
    return st.sampled_from(catalogue().family(family))


@st.composite
def vset_operands(draw, v: Variant) -> str:
    """d{.mask}, a{.asel}, b{.bsel}, c with each modifier present or defaulted."""
    prefix, lanes = v.syntax.lane_prefix, v.syntax.lanes

    def spec(digits) -> str:
        return "." + prefix + "".join(map(str, digits)) if draw(st.booleans()) else ""

    mask = draw(st.lists(st.integers(0, lanes - 1), min_size=1, max_size=lanes, unique=True))
    sel = st.lists(st.integers(0, 2 * lanes - 1), min_size=lanes, max_size=lanes).filter(
        lambda digits: prefix + "".join(map(str, digits)) not in UNPARSABLE_SELECTORS)
    return (f"d{spec(sorted(mask, reverse=True))}, a{spec(draw(sel))}, "
            f"b{spec(draw(sel))}, c")


@st.composite
def instruction_text(draw, v: Variant) -> str:
    """An instruction of variant `v` on registers d/p/q/a/b/c, with sinks and `!c`."""
    name = format_variant(v)
    if v.syntax.lane_prefix:
        return f"{name} {draw(vset_operands(v))};"
    operands = list(operand_slots(v))
    if v.syntax.pair_dest:
        pair = v.compared_type.predicate_pair
        operands[0] = draw(st.sampled_from(["p|q", "p|q", "p|_", "_|q", "p"] if pair
                                           else ["p", "p|_"]))
    if operands[-1] == "c" and operand_types(v)["c"] is PRED:  # slct's c is a value
        operands[-1] = draw(st.sampled_from(["c", "!c"]))
    return f"{name} {', '.join(operands)};"


def oracle_desc(ins: Instruction, target: int = 90, vset_merge: str = "c") -> dict:
    v = ins.variant
    c = ins.operands.get("c")
    desc = {
        "opcode": v.opcode,
        "cmp": v.cmp.value if v.cmp else None,
        "boolop": v.boolop.value if v.boolop else None,
        "negc": bool(c and c.negated),
        "ftz": v.ftz,
        "add": v.add,
        "sat": v.sat,
        "nan": v.nan,
        "relu": v.relu,
        "mode": v.mode,
        "rnd": v.rnd,
        "dir": v.dir,
        "family": v.family,
        "sm": target,
        "vset_merge": vset_merge,
    }
    desc |= {role: t.name for role, t in v.roles.items()}  # the ISA's names, as the oracle's
    if v.syntax.lane_prefix:
        for slot, key in (("d", "mask"), ("a", "asel"), ("b", "bsel")):
            spec = ins.operands[slot].lane_spec
            desc[key] = spec.spelling[1:] if spec else None
    return desc
