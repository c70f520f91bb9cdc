"""Packed 16-bit integer lanes and `.relu` (issue 43, item 2): `add`, `min`, `max` on
`.u16x2`/`.s16x2` and `min`/`max` `.relu` on `.s16x2`/`.s32` (PTX ISA 9.7.1.1, 9.7.1.12,
9.7.1.13), against plain Python lane by lane, ptxas 13.0 for legality, and the PTX LLVM
22.1 writes for `<2 x i16>` add/smin/smax/umin/umax and `smax(smin(a, b), 0)`.

The ISA: "iA[0] = a[0:15]; iA[1] = a[16:31]; ... d[i] = iA[i] + iB[i]" (lane 0 the low
half; a lane wraps), "(iA[i] < iB[i]) ? iA[i] : iB[i]" compared as the type's lanes are
signed or not, and ".relu clamps the result to 0 if negative": max(min(a, b), 0).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest
from batchbits import evaluate_bits
from hypothesis import given, settings
from hypothesis import strategies as st

from ptxsmt import evaluate
from ptxsmt.batch.programs import compile_program
from ptxsmt.check import check_line
from ptxsmt.fast import FastProgram
from ptxsmt.isa.literals import describe
from ptxsmt.isa.registers import DECLARABLE, fits
from ptxsmt.isa.syntax import format_variant
from ptxsmt.isa.targets import parse_target
from ptxsmt.isa.types import ptx_type
from ptxsmt.isa.variants import Requirement, catalogue, operand_types
from ptxsmt.sem.options import DEFAULT

HERE = Path(__file__).parent
ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")

# (spelling, opcode, lane width, signed, relu): every form the catalogue gains
FORMS = [(f"{op}.{t}", op, 16, t[0] == "s", False) for op in ("add", "min", "max")
         for t in ("u16x2", "s16x2")]
FORMS += [(f"{op}.relu.{t}", op, 16 if t == "s16x2" else 32, True, True)
          for op in ("min", "max") for t in ("s16x2", "s32")]
OPS = {"add": lambda x, y: x + y, "min": min, "max": max}


def want(op: str, w: int, signed: bool, relu: bool, a: int, b: int) -> int:
    """d lane by lane in plain Python: lanes of w bits, lane 0 the low one."""
    mask, out = (1 << w) - 1, 0
    for i in range(32 // w):
        x, y = (a >> (w * i)) & mask, (b >> (w * i)) & mask
        if signed:
            x, y = x - ((x >> (w - 1)) << w), y - ((y >> (w - 1)) << w)
        d = OPS[op](x, y)
        out |= ((max(d, 0) if relu else d) & mask) << (w * i)
    return out


# every pair of words whose lanes are small or extreme: each carry, sign and order case
LANE16 = [0, 1, 2, 0x7FFE, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF]
WORDS = {16: [hi << 16 | lo for hi in LANE16 for lo in LANE16],
         32: [0, 1, 2, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFE, 0x7FFFFFFF, 0x80000000,
              0x80000001, 0xFFFF0000, 0xFFFFFFFE, 0xFFFFFFFF]}


def test_the_catalogue_has_the_forms_ptxas_takes_at_ptx_8_0_sm_90():
    packed = {format_variant(v): catalogue().requirement(v) for v in catalogue()
              if v.relu or v.types[0].name in ("u16x2", "s16x2")}
    assert packed == dict.fromkeys((f[0] for f in FORMS), Requirement((8, 0), 90))


@pytest.mark.parametrize(("spelling", "op", "w", "signed", "relu"), FORMS,
                         ids=[f[0] for f in FORMS])
def test_fast_path_on_every_pair_of_small_and_extreme_lanes(spelling, op, w, signed, relu):
    """numpy code (fast/codegen.py) answers, not the Z3 fallback; 196 to 6,561 pairs."""
    assert isinstance(compile_program(f"{spelling} d, a, b;", DEFAULT), FastProgram)
    words = WORDS[w]
    items = [(f"{spelling} d, a, b;", {"a": hex(a), "b": hex(b)}) for a in words for b in words]
    got = evaluate_bits(items)
    for (_, inputs), out in zip(items, got):
        a, b = int(inputs["a"], 16), int(inputs["b"], 16)
        assert out == {"d": want(op, w, signed, relu, a, b)}, (spelling, hex(a), hex(b))


def _word(w: int):
    lane = st.one_of(st.sampled_from(LANE16 if w == 16 else WORDS[32]),
                     st.integers(0, (1 << w) - 1))
    return st.lists(lane, min_size=32 // w, max_size=32 // w).map(
        lambda ls: sum(x << (w * i) for i, x in enumerate(ls)))


@st.composite
def cases(draw):
    form = draw(st.sampled_from(FORMS))
    return form, draw(_word(form[2])), draw(_word(form[2]))


@settings(max_examples=60, deadline=None)
@given(case=cases())
def test_slow_path_matches_plain_python(case):
    (spelling, op, w, signed, relu), a, b = case
    got = evaluate(f"{spelling} d, a, b;", {"a": hex(a), "b": hex(b)}).outputs
    assert got == {"d": want(op, w, signed, relu, a, b)}


@pytest.mark.parametrize(("ptx", "a", "b", "d"), [
    ("add.u16x2 d, a, b;", 0xFFFF0001, 0x0001FFFF, 0),  # each lane wraps on its own
    ("add.s16x2 d, a, b;", 0x7FFF0000, 0x00010000, 0x80000000),  # wraps, no saturation
    ("max.s16x2 d, a, b;", 0x80000001, 0x00018000, 0x00010001),  # signed lanes
    ("max.u16x2 d, a, b;", 0x80000001, 0x00018000, 0x80008000),  # unsigned lanes
    ("min.relu.s16x2 d, a, b;", 0x00050005, 0xFFFD0003, 0x00000003),  # relu of the min
    ("min.relu.s32 d, a, b;", 5, 0xFFFFFFFD, 0),
    ("max.relu.s32 d, a, b;", 0xFFFFFFFF, 0x80000000, 0),
])
def test_stated_rules(ptx, a, b, d):
    inputs = {"a": hex(a), "b": hex(b)}
    assert evaluate(ptx, inputs).outputs == {"d": d}
    assert evaluate_bits([(ptx, inputs)]) == [{"d": d}]


def test_eval_shows_packed_integer_lanes_high_first():
    assert describe(0xFFFF0001, ptx_type("s16x2")) == "0xffff0001 (-1, 1)"
    assert describe(0xFFFF0001, ptx_type("u16x2")) == "0xffff0001 (65535, 1)"


# ---- legality -------------------------------------------------------------------------------

# ptxas 13.0 at sm_90/PTX 9.0 refuses each ("Unexpected instruction types", "Illegal
# modifier '.relu'", "Modifier '.sat' does not apply to '.s16x2' type", "Illegal modifier
# '.ftz'"): the forms the ISA does not list
NEAR_MISSES = ["sub.s16x2", "sub.u16x2", "neg.s16x2", "abs.s16x2", "add.sat.s16x2",
               "mul.lo.s16x2", "max.relu.u16x2", "min.relu.u32", "max.relu.s16", "min.relu.s64",
               "min.ftz.s16x2"]


def _probe():
    sys.path.insert(0, str(HERE.parent / "scripts"))
    import ptxas_probe

    return ptxas_probe


def _line(spelling: str, regs: tuple[str, ...]) -> str:
    return f"{spelling} " + ", ".join(f"%{r}_{i}" for i, r in enumerate(regs)) + ";"


@ptxas
def test_near_misses_are_illegal_for_ptxas_and_check():
    probe = _probe()
    regs = {"s16": ("s16",) * 3, "s64": ("s64",) * 3, "u32": ("u32",) * 3}
    lines = [_line(s, regs.get(s.rsplit(".", 1)[1], ("b32",) * 3)[:2 if s[:3] in ("neg", "abs")
                                                                      else 3])
             for s in NEAR_MISSES]
    verdicts = probe.probe(lines, "sm_90", "9.0")
    assert all(err is not None for err in verdicts), list(zip(lines, verdicts))
    for s in NEAR_MISSES:
        plain = f"{s} d, a{'' if s[:3] in ('neg', 'abs') else ', b'};"
        assert check_line(plain, parse_target("sm_90"), (9, 0)) is not None, plain


# a packed integer operand "has type .b32": ptxas takes .b32 and .f16x2 registers there,
# refuses .u32, .s32, .f32 ones ("Arguments mismatch")
REGISTERS = ["b32", "f16x2", "u32", "s32", "f32"]


@ptxas
def test_which_registers_a_packed_integer_operand_takes_agrees_with_ptxas():
    probe = _probe()
    cases = [(spelling, reg, slot) for spelling in ("add.u16x2", "max.relu.s16x2")
             for reg in REGISTERS for slot in range(3)]
    lines = [_line(s, tuple(reg if i == slot else "b32" for i in range(3)))
             for s, reg, slot in cases]
    verdicts = probe.probe(lines, "sm_90", "9.0")
    for (spelling, reg, slot), line, err in zip(cases, lines, verdicts):
        v = next(v for v in catalogue() if format_variant(v) == spelling)
        name = "dab"[slot]
        ours = fits(ptx_type(reg), operand_types(v)[name], v.opcode, name, False, v)
        assert ours == (err is None), (line, err)
    assert sum(err is None for err in verdicts) == 2 * 2 * 3  # b32 and f16x2, each slot


# ---- LLVM 22.1's PTX for <2 x i16> and smax(smin(a, b), 0) --------------------------------

needs_llvmlite = pytest.mark.skipif(importlib.util.find_spec("llvmlite") is None,
                                    reason="llvmlite not installed")
PACKED = HERE / "ptx" / "llvm" / "packed_int"
PTX = (PACKED / "packed_int_lite_ptx80_O2.ptx").read_text()


def _refines(name: str, ptx: str):
    from ptxsmt.function import read_function
    from ptxsmt.llvm import read_ir
    from ptxsmt.smt.queries.refinement import ir_refines

    ir = read_ir((PACKED / "packed_int.ll").read_text())[name]
    return ir_refines(ir, read_function(ptx, name), timeout_ms=60_000)


# the IR's value by hand (LangRef: lane-wise add wraps, smin/umax ... compare the lanes)
IR_VALUE = {"add2": ("add", 16, False, False), "smax2": ("max", 16, True, False),
            "smin2": ("min", 16, True, False), "umax2": ("max", 16, False, False),
            "umin2": ("min", 16, False, False), "min_relu32": ("min", 32, True, True),
            "max_relu32": ("max", 32, True, True), "min_relu2": ("min", 16, True, True),
            "max_relu2": ("max", 16, True, True)}


def test_llvm_writes_the_packed_forms():
    for spelling in (f[0] for f in FORMS if f[0] != "add.u16x2"):  # add is add.s16x2 to it
        assert f"\t{spelling} \t" in PTX, spelling


@needs_llvmlite
@pytest.mark.parametrize("name", sorted(IR_VALUE))
def test_llvm_packed_lowering_refines(name):
    r = _refines(name, PTX)
    assert r.verdict == "refines", r


# planted bugs (PTX edits) and the PTX's value by hand: the lanes' signedness flipped,
# .relu dropped, the result's lanes swapped, a saturating add for a wrapping one
def _swapped(x: int) -> int:
    return (x >> 16) | (x & 0xFFFF) << 16


PLANTED = {
    "unsigned compare": ("smax2", [("max.s16x2", "max.u16x2")],
                         lambda a, b: want("max", 16, False, False, a, b)),
    "relu dropped": ("min_relu2", [("min.relu.s16x2", "min.s16x2")],
                     lambda a, b: want("min", 16, True, False, a, b)),
    "relu dropped s32": ("max_relu32", [("max.relu.s32", "max.s32")],
                         lambda a, b: want("max", 32, True, False, a, b)),
    "lanes swapped": ("add2", [("add.s16x2 \t%r3, %r1, %r2;\n\tst.param.b32 \t[func_retval0], %r3;",
                                "add.s16x2 \t%r3, %r1, %r2;\n\tprmt.b32 \t%r3, %r3, 0, 0x1032;\n"
                                "\tst.param.b32 \t[func_retval0], %r3;")],
                      lambda a, b: _swapped(want("add", 16, True, False, a, b))),
}


@needs_llvmlite
@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_planted_packed_bugs_are_different(bug):
    name, edits, ptx_value = PLANTED[bug]
    text = PTX
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    r = _refines(name, text)
    assert r.verdict == "different", r
    a, b = r.inputs["a"], r.inputs["b"]
    assert r.ir_result & 0xFFFFFFFF == want(*IR_VALUE[name], a, b)
    assert r.ptx_result & 0xFFFFFFFF == ptx_value(a, b) != r.ir_result & 0xFFFFFFFF


# an operand whose type no `.reg` declares (ptxas: "may only be used as an instruction
# type") is named in the register error by the type that holds it: declaring the register
# so, as the message says, is legal
@pytest.mark.parametrize("spelling, wrong", [("add.s16x2", "b16"), ("min.relu.s16x2", "b64"),
                                             ("max.u16x2", "u32"), ("add.rn.bf16x2", "b16"),
                                             ("add.u16x2", "v2 .b32")])
def test_a_register_error_names_a_type_that_can_be_declared(spelling, wrong):
    from click.testing import CliRunner

    from ptxsmt.cli import main

    def module(reg: str) -> str:
        return (".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k() {\n"
                f".reg .b32 %r<3>; .reg .{reg} %x;\n{spelling} %r0, %x, %r1;\nret;\n}}\n")

    r = CliRunner().invoke(main, ["check", "-"], input=module(wrong))
    assert r.exit_code == 1, r.output
    named = re.search(r"operand a (?:of \S+ )?needs (?:one )?\.(\w+) ", r.stdout)
    assert named, r.output
    assert named[1] != spelling.rsplit(".", 1)[1] and named[1] in DECLARABLE
    r = CliRunner().invoke(main, ["check", "-"], input=module(named[1]))
    assert r.stdout.startswith(f"ok       {spelling} ") and ": 0 illegal;" in r.stdout, r.output
