"""The grammar both ways, and its errors."""

from __future__ import annotations

import pytest

from ptxsmt import PtxError, parse, parse_one
from ptxsmt.isa.syntax import SINGLE_P_TYPES, SYNTAX, format_instruction, format_variant
from ptxsmt.isa.variants import catalogue


def test_every_variant_prints_and_parses_back():
    for v in catalogue():
        syntax = SYNTAX[v.opcode]
        slots = [s for s in syntax.operands if s != "c" or v.boolop or not syntax.optional_c]
        dest = "p" if v.stype.name in SINGLE_P_TYPES else "p|q"
        ops = ", ".join(dest if s == "p" else s for s in slots)
        ins = parse_one(f"{format_variant(v)} {ops};")
        assert ins.variant == v
        assert parse_one(format_instruction(ins)) == ins


def test_snippet_with_guards_comments_and_percent_names():
    ins = parse("""
        // a rewrite
        @%p1 setp.lt.and.ftz.f32 %p2|_, %f1, 0f3F800000, !%p3;  /* inline */ selp.b32 r, 1, -2, p2
        @!q vset2.s32.u32.ge.add r.h1, a.h01, b.h22, c;
    """)
    assert [str(i.variant) for i in ins] == [
        "setp.lt.and.ftz.f32", "selp.b32", "vset2.s32.u32.ge.add"]
    assert ins[0].guard.register == "p1" and not ins[0].guard.negated
    assert ins[0].operands["q"].kind == "sink" and ins[0].operands["c"].negated
    assert ins[1].line == 3 and ins[2].guard.negated
    assert ins[2].lane_spec("d").lanes == {1} and ins[2].lane_spec("a").by_lane == (1, 0)
    assert ins[2].lane_spec("b").by_lane == (2, 2)


@pytest.mark.parametrize("text", [
    "selp.b32 d, a, b, !c;", "setp.lt.and.f32 p, a, b, !1;", "set.eq.or.u32.s32 d, a, b, 0;",
    "setp.ftz.lt.f32 p, a, b;", "set.f32.lt.and.f32 d, a, b, c;",
    "vset2.add.u32.u32.lt d, a, b, c;",
    "setp.lt.f16x2 p, a, b;", "setp.lt.f16 p|_, a, b;", "setp.lt.f32 _, a, b;",
    "setp.lt.f64 p, a, 1.5;", "setp.eq.b64 p, a, 1.0;", "setp.eq.b32 p, a, 0f3F800000;",
    "vset4.u32.u32.lt d, a .b3210, b.b7654, c;", "setp.lt.f32 p | q, a, b;",
])
def test_forms_ptxas_accepts(text):
    parse_one(text)


def test_vset_defaults():
    ins = parse_one("vset4.u32.u32.lt d, a, b, c;")
    assert ins.lane_spec("d").lanes == {0, 1, 2, 3}
    assert ins.lane_spec("a").by_lane == (0, 1, 2, 3)
    assert ins.lane_spec("b").by_lane == (4, 5, 6, 7)


@pytest.mark.parametrize("immediate", ["42", "-7", "0x2A", "052", "0b101010", "42U"])
def test_integer_immediates(immediate):
    assert parse_one(f"setp.eq.s32 p, a, {immediate};").operands["b"].kind == "imm"


@pytest.mark.parametrize("text,col,fragment", [
    ("setp.lt.foo.f32 p, a, b;", 9, "unknown modifier '.foo'"),
    ("setp.lt.f32 p, a;", 12, "takes 3 operands"),
    ("setp.lt.and.f32 p, a, b;", 16, "takes 4 operands"),
    ("setp.lt.f32.f32 p, a, b;", 1, "needs one type"),
    ("setp.f32 p, a, b;", 1, "needs a comparison"),
    ("frob.lt.f32 p, a, b;", 1, "unknown instruction 'frob'"),
    ("setp.lt.lt.f32 p, a, b;", 9, "repeated comparison"),
    ("selp.lt.b32 d, a, b, c;", 6, "selp does not take comparison"),
    ("setp.lt.u16 p, a, 70000;", 19, "out of range"),
    ("setp.lt.u32 p, a, 0x1ffffffff;", 19, "does not fit"),
    ("setp.lt.f32 p, a, 1;", 19, ".f32 immediates are written"),
    ("setp.lt.f16 p, a, 0x3c00;", 19, "no .f16 literal"),
    ("setp.lt.f16 p|q, a, b;", 13, "writes only p"),
    ("setp.lt.bf16 _|q, a, b;", 14, "writes only p"),
    ("vset2.u32.u32.lt d, a, 1, c;", 24, "must be registers"),
    ("setp.lt.and.bf16x2 p|q, a, b, 1;", 31, "predicate register"),
    ("setp.lt.and.f32 p, a, b, 2;", 26, "predicate register"),
    ("setp.lt.f32 _|_, a, b;", 13, "sink"),
    ("set.lt.u32.f32 _, a, b;", 16, "sink"),
    ("setp.lt.f32 1, a, b;", 13, "must be a register"),
    ("selp.b32 d, !a, b, c;", 13, "'!' is only allowed"),
    ("vset2.u32.u32.lt d.b10, a, b, c;", 18, "lane modifiers start with '.h'"),
    ("vset2.u32.u32.lt d, a.h4, b, c;", 21, "invalid vset2 selector"),
    ("vset4.u32.u32.lt d.b01, a, b, c;", 18, "invalid vset4 mask"),
    ("setp.lt.f32 p.h10, a, b;", 13, "unexpected operand modifier"),
    ("setp.lt.f32 p, a, b; setp.eq.f16 p, a, b;", 22, None),
])
def test_errors_name_problem_and_place(text, col, fragment):
    with pytest.raises(PtxError) as err:
        parse_one(text)
    assert err.value.line == 1 and err.value.col == col
    if fragment:
        assert fragment in err.value.message
