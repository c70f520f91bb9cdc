"""The grammar both ways, and its errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptxsmt import PtxError, parse, parse_one
from ptxsmt.isa.opcodes import SYNTAX, TYPE_ROLES, WIDE
from ptxsmt.isa.syntax import format_instruction, format_variant, parse_variant
from ptxsmt.isa.types import PRED, ptx_type
from ptxsmt.isa.variants import Variant, catalogue, operand_slots, operand_types


def test_opcode_table_names_its_types():
    """The operand slots, the compared type and the variants' types all use the roles
    the opcode's syntax line names; a variant reads each by that name and no other."""
    for opcode, syntax in SYNTAX.items():
        roles = syntax.type_roles
        assert roles and set(roles) <= set(TYPE_ROLES) and len(set(roles)) == len(roles)
        named = {t for t in syntax.operands.values() if isinstance(t, str)}
        if WIDE in named:  # `type`, twice as wide under .wide (mul, mad)
            named = (named - {WIDE}) | {"type"}
        assert named <= set(roles) and syntax.compared in ("", *roles), opcode
        assert set(syntax.lane_defaults) == ({"mask", "asel", "bsel"} if syntax.lanes > 1
                                             else set()), opcode
    for v in catalogue():
        assert tuple(v.roles) == v.syntax.type_roles and tuple(v.roles.values()) == v.types
        for role in TYPE_ROLES:
            if role in v.roles:
                assert getattr(v, role) is v.roles[role]
            else:
                with pytest.raises(AttributeError):
                    getattr(v, role)
        assert set(operand_slots(v)) <= set(operand_types(v))
        assert parse_variant(str(v)) == v


@pytest.mark.parametrize("spelling,roles,operands", [
    ("set.lt.and.u32.f32", {"dtype": "u32", "stype": "f32"},
     {"d": "u32", "a": "f32", "b": "f32", "c": "pred"}),
    ("setp.lt.f16x2", {"type": "f16x2"},
     {"p": "pred", "q": "pred", "a": "f16x2", "b": "f16x2", "c": "pred"}),
    ("selp.f64", {"type": "f64"}, {"d": "f64", "a": "f64", "b": "f64", "c": "pred"}),
    ("slct.ftz.b16.f32", {"dtype": "b16", "ctype": "f32"},
     {"d": "b16", "a": "b16", "b": "b16", "c": "f32"}),
    ("vset4.s32.u32.lt", {"atype": "s32", "btype": "u32"},
     {"d": "b32", "a": "b32", "b": "b32", "c": "b32"}),
    ("cvt.f32.bf16", {"dtype": "f32", "atype": "bf16"}, {"d": "f32", "a": "bf16"}),
    ("xor.pred", {"type": "pred"}, {"d": "pred", "a": "pred", "b": "pred"}),
])
def test_types_by_their_isa_names(spelling, roles, operands):
    v = parse_variant(spelling)
    assert {k: t.name for k, t in v.roles.items()} == roles
    assert {k: t.name for k, t in operand_types(v).items()} == operands
    assert str(v) == spelling


def test_roles_build_variants():
    v = parse_variant("slct.ftz.b16.f32")
    assert v == Variant.of("slct", {"ctype": ptx_type("f32"), "dtype": ptx_type("b16")},
                           ftz=True)
    with pytest.raises(ValueError, match="slct has types dtype, ctype"):
        Variant.of("slct", {"dtype": ptx_type("b16"), "stype": PRED})


def test_every_variant_prints_and_parses_back():
    for v in catalogue():
        dest = "p|q" if v.syntax.pair_dest and v.compared_type.predicate_pair else "p"
        ops = ", ".join(dest if s == "p" else s for s in operand_slots(v))
        ins = parse_one(f"{format_variant(v)} {ops};")
        assert ins.variant == v
        assert parse_one(format_instruction(ins)) == ins


def test_snippet_with_guards_comments_and_percent_names():
    ins = parse("""
        // a rewrite
        @%p1 setp.lt.and.ftz.f32 %p2|_, %f1, 0f3F800000, !%p3;  /* inline */ selp.b32 r, 1, -2, p2;
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
    ("setp.lt.foo.f32 p, a, b;", 9, 'unknown modifier ".foo"'),
    ("setp.lt.f32 p, a;", 12, "takes 3 operands"),
    ("setp.lt.and.f32 p, a, b;", 16, "takes 4 operands"),
    ("setp.lt.f32.f32 p, a, b;", 1, "needs one type"),
    ("setp.f32 p, a, b;", 1, "needs a comparison"),
    ("frob.lt.f32 p, a, b;", 1, 'unknown instruction "frob"'),
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
    ("setp.lt.and.f32 p, a, b, 2.0;", 26, "predicate register or an integer"),
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


# ---- what ptxas 13.0 refuses, refused here too (measured with /usr/local/bin/ptxas) -------

@pytest.mark.parametrize("text,col,fragment", [
    ("setp.lt.f32 p, a, b", 20, "missing ';'"),
    ("setp.lt.f32 p, a, b;;", 21, "empty statement"),
    ("setp.lt.f32 p, a, b; ;", 22, "empty statement"),
    (";", 1, "empty statement"),
    ("setp.lt.f32 p, a, b; /* x */ ;", 30, "empty statement"),
    ("setp.lt.f32 p, a, b; setp.lt.f32 q, a, b", 41, "missing ';'"),
    ("setp.lt.u32 p, a, 1 setp.lt.u32 q, a, 1;", 12, "takes 3 operands"),  # no ; between
    ("setp.lt.foo.f32 p, a, b", 9, "unknown modifier"),  # the statement's own error first
])
def test_statements_end_with_a_semicolon(text, col, fragment):
    with pytest.raises(PtxError) as err:
        parse(text)
    assert (err.value.line, err.value.col) == (1, col) and fragment in err.value.message


def test_missing_semicolon_names_the_line():
    with pytest.raises(PtxError) as err:
        parse("setp.lt.u32 p, a, b;\nsetp.lt.u32 q, a, b\nselp.b32 d, a, b, p;")
    assert (err.value.line, err.value.col) == (2, 20) and "missing ';'" in err.value.message
    assert len(parse("setp.lt.u32 p, a, b; // done\r\n\n/* a\n b */ selp.b32 d, a, b, p;\n")) == 2


# Each immediate as ptxas 13.0 reads it in `setp.eq.T p, a, IMM;` (True: accepted).
IMMEDIATES = [
    ("u32", "09", False), ("u32", "08", False), ("u32", "-09", False), ("u32", "019", False),
    ("u32", "07", True), ("u32", "00", True), ("u32", "0", True), ("u32", "-07", True),
    ("u32", "7u", False), ("u32", "0x1u", False), ("u32", "07u", False), ("u32", "0b1u", False),
    ("u32", "7U", True), ("u32", "0x1U", True), ("u32", "0b1U", True), ("u32", "07U", True),
    ("f32", "1e400", False), ("f32", "-1e400", False), ("f32", "1e-400", False),
    ("f32", "1e-320", False), ("f32", "2e-324", False), ("f32", "1.7976931348623159e308", False),
    ("f32", "1.7976931348623157e308", True), ("f32", "0.0e-400", True), ("f32", "0e999", True),
    ("f32", "09.5", True), ("f32", "1.", True), ("f32", ".5", True), ("f64", "1e-300", True),
]


def _accepted(text: str) -> bool:
    try:
        parse_one(text)
        return True
    except PtxError:
        return False


@pytest.mark.parametrize("t,imm,ok", IMMEDIATES)
def test_immediates_as_ptxas_reads_them(t, imm, ok):
    assert _accepted(f"setp.eq.{t} p, a, {imm};") == ok


ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


@ptxas
def test_immediate_table_is_what_ptxas_says():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    from ptxas_probe import probe, reg

    lines = [f"setp.eq.{t} {reg('pred')}, {reg(t)}, {imm};" for t, imm, _ in IMMEDIATES]
    assert [err is None for err in probe(lines)] == [ok for _, _, ok in IMMEDIATES]


@ptxas
@pytest.mark.parametrize("body,ok", [
    ("setp.eq.u32 p, a, 1;", True), ("setp.eq.u32 p, a, 1;;", False),
    ("setp.eq.u32 p, a, 1;\n;", False), ("setp.eq.u32 p, a, 1", False),
    ("setp.eq.u32 p, a, 1\nsetp.eq.u32 q, a, 1;", False), ("setp.eq.u32 p, a, 1;/* x */;", False),
])
def test_statement_rules_are_what_ptxas_says(body, ok, tmp_path):
    src = tmp_path / "k.ptx"
    src.write_text(".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
                   ".reg .pred p, q; .reg .u32 a;\n" + body + "\nret;\n}\n")
    run = subprocess.run(["ptxas", "-arch", "sm_90", str(src), "-o", str(tmp_path / "k.o")],
                         capture_output=True, text=True)
    assert (run.returncode == 0) == ok == _accepted(body), run.stderr
