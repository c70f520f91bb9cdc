"""The IR semantics' poison, UB and non-determinism against plain-Python oracles written
from the LangRef text (exact integer arithmetic, Python floats), and the encoding's
refusals. The host JIT (tests/test_llvm_jit.py) cannot see these: native code wraps where
the IR is poison, and traps or returns garbage where it is undefined."""

from __future__ import annotations

import math
import random
import struct

import pytest
import z3

pytest.importorskip("llvmlite")

from ptxsmt.llvm import Unsupported, encode_function, read_ir  # noqa: E402


def encode(body: str, params: str = "i8 %a, i8 %b", ret: str = "i8", decls: str = ""):
    ir = f"define {ret} @f({params}) {{\n{body}\n}}\n{decls}"
    return encode_function(read_ir(ir)["f"])


def outcome(enc, **inputs) -> tuple[bool, bool, z3.ExprRef]:
    """(UB, poison, bits) on these inputs; bits may still hold the IR's open choices."""
    sub = [(enc.params[k], z3.BitVecVal(v, enc.params[k].size())) for k, v in inputs.items()]

    def ev(t):
        return z3.simplify(z3.substitute(t, *sub))
    ub, poison = ev(enc.ub), ev(z3.Or(*[x.poison for x in enc.result]))
    assert z3.is_bool(ub) and (z3.is_true(ub) or z3.is_false(ub)), ub
    assert z3.is_true(poison) or z3.is_false(poison), poison
    return z3.is_true(ub), z3.is_true(poison), ev(enc.result[0].bits)


def possible(bits: z3.ExprRef) -> set[int] | None:
    """Every value `bits` can take over the open choices (None when there are many)."""
    found, s = set(), z3.Solver()
    while len(found) < 5 and s.check(*[bits != v for v in found]) == z3.sat:
        found.add(s.model().eval(bits, model_completion=True).as_long())
    return found if len(found) < 5 else None


def s8(x: int) -> int:
    return x - 256 if x & 0x80 else x


PAIRS = sorted({(a, b) for a in (0, 1, 2, 7, 64, 127, 128, 129, 254, 255)
                for b in (0, 1, 2, 3, 7, 8, 9, 127, 128, 255)}
               | {(random.Random(i).getrandbits(8), random.Random(-i).getrandbits(8))
                  for i in range(40)})


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# (opcode flags): the LangRef's poison condition on i8 (unsigned a, b), in exact integers
POISON = {
    "add nuw": lambda a, b: a + b > 255,
    "add nsw": lambda a, b: not -128 <= s8(a) + s8(b) <= 127,
    "sub nuw": lambda a, b: a - b < 0,
    "sub nsw": lambda a, b: not -128 <= s8(a) - s8(b) <= 127,
    "mul nuw": lambda a, b: a * b > 255,
    "mul nsw": lambda a, b: not -128 <= s8(a) * s8(b) <= 127,
    "shl": lambda a, b: b >= 8,
    "shl nuw": lambda a, b: b >= 8 or (a << b) > 255,
    "shl nsw": lambda a, b: b >= 8 or not -128 <= s8(a) * 2 ** b <= 127,
    "lshr": lambda a, b: b >= 8,
    "lshr exact": lambda a, b: b >= 8 or a % 2 ** b != 0,
    "ashr exact": lambda a, b: b >= 8 or a % 2 ** b != 0,
    "udiv exact": lambda a, b: a % b != 0,
    "sdiv exact": lambda a, b: s8(a) - _trunc_div(s8(a), s8(b)) * s8(b) != 0,
    "or disjoint": lambda a, b: a & b != 0,
    "add nuw nsw": lambda a, b: a + b > 255 or not -128 <= s8(a) + s8(b) <= 127,
    "shl nuw nsw": lambda a, b: b >= 8 or (a << b) > 255 or not -128 <= s8(a) * 2 ** b <= 127,
    "sub nuw nsw": lambda a, b: a < b or not -128 <= s8(a) - s8(b) <= 127,
    "add": lambda a, b: False,
    "udiv": lambda a, b: False,
}
# (opcode): the LangRef's undefined behaviour on i8
UB = {
    "udiv": lambda a, b: b == 0, "urem": lambda a, b: b == 0,
    "sdiv": lambda a, b: b == 0 or (s8(a) == -128 and s8(b) == -1),
    "srem": lambda a, b: b == 0 or (s8(a) == -128 and s8(b) == -1),
}


@pytest.mark.parametrize("instruction", sorted(POISON))
def test_integer_poison_matches_the_langref(instruction):
    op, *flags = instruction.split()
    enc = encode(f"%r = {op} {' '.join(flags)} i8 %a, %b\nret i8 %r")
    for a, b in PAIRS:
        ub, poison, _ = outcome(enc, a=a, b=b)
        if ub:
            continue
        assert poison == POISON[instruction](a, b), (instruction, a, b)


@pytest.mark.parametrize("op", sorted(UB))
def test_division_ub_matches_the_langref(op):
    enc = encode(f"%r = {op} i8 %a, %b\nret i8 %r")
    for a, b in PAIRS:
        assert outcome(enc, a=a, b=b)[0] == UB[op](a, b), (op, a, b)


def test_a_poison_divisor_is_ub_and_a_poison_dividend_is_poison():
    assert outcome(encode("%r = udiv i8 %a, poison\nret i8 %r"), a=5)[0]
    ub, poison, _ = outcome(encode("%r = udiv i8 poison, %b\nret i8 %r"), b=5)
    assert (ub, poison) == (False, True)


CASTS = {  # instruction on an i16 %a: (result type, when poison)
    "trunc nuw i16 %a to i8": ("i8", lambda a: a > 255),
    "trunc nsw i16 %a to i8": ("i8", lambda a: not (a < 128 or a >= 0xFF80)),
    "zext nneg i16 %a to i32": ("i32", lambda a: a >= 0x8000),
    "uitofp nneg i16 %a to float": ("float", lambda a: a >= 0x8000),
    "trunc i16 %a to i8": ("i8", lambda a: False),
}


@pytest.mark.parametrize("instruction", sorted(CASTS))
def test_cast_poison_matches_the_langref(instruction):
    ret, rule = CASTS[instruction]
    enc = encode(f"%r = {instruction}\nret {ret} %r", "i16 %a", ret)
    for a in (0, 1, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFF7F, 0xFF80, 0xFFFF):
        assert outcome(enc, a=a)[1] == rule(a), (instruction, hex(a))


@pytest.mark.parametrize("pred", ["eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt",
                                  "sle"])
def test_icmp_samesign_is_poison_on_different_signs(pred):
    """icmp samesign: "if the operands have different signs, the result is poison";
    otherwise the plain compare (exact integers on i8)."""
    plain = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
             "ugt": lambda a, b: a > b, "uge": lambda a, b: a >= b,
             "ult": lambda a, b: a < b, "ule": lambda a, b: a <= b,
             "sgt": lambda a, b: s8(a) > s8(b), "sge": lambda a, b: s8(a) >= s8(b),
             "slt": lambda a, b: s8(a) < s8(b), "sle": lambda a, b: s8(a) <= s8(b)}[pred]
    enc = encode(f"%c = icmp samesign {pred} i8 %a, %b\n%r = zext i1 %c to i8\nret i8 %r")
    for a, b in PAIRS:
        ub, poison, bits = outcome(enc, a=a, b=b)
        assert not ub and poison == ((a >> 7) != (b >> 7)), (pred, a, b)
        if not poison:
            assert possible(bits) == {int(plain(a, b))}, (pred, a, b)


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1.5, -1.5, 2.5, -0.99, 127.9, 128.0, -128.0, -128.9,
          -129.0, 255.5, 256.0, 2.0 ** 31, -(2.0 ** 31), 2.0 ** 32, math.inf, -math.inf, math.nan,
          1e-40]


@pytest.mark.parametrize("op,width,lo,hi", [("fptosi", 1, -1, 0), ("fptoui", 1, 0, 1),
                                            ("fptosi", 8, -128, 127), ("fptoui", 8, 0, 255),
                                            ("fptosi", 32, -2 ** 31, 2 ** 31 - 1),
                                            ("fptoui", 32, 0, 2 ** 32 - 1)])
def test_float_to_int_out_of_range_is_poison(op, width, lo, hi):
    """"If the value cannot fit in ty2, the result is a poison value" (after rounding
    toward zero)."""
    enc = encode(f"%x = bitcast i32 %a to float\n%r = {op} float %x to i{width}\n"
                 f"ret i{width} %r", "i32 %a", f"i{width}")
    for x in FLOATS:
        _, poison, bits = outcome(enc, a=_f32(x))
        fits = math.isfinite(x) and lo <= math.trunc(x) <= hi
        assert poison == (not fits), (op, width, x)
        if fits:
            assert bits.as_long() == math.trunc(x) % 2 ** width, (op, x)


SAT_SOURCES = {"float": (32, "<f", "<I"), "double": (64, "<d", "<Q")}


@pytest.mark.parametrize("op,width", [(op, w) for op in ("fptosi", "fptoui")
                                      for w in (1, 8, 13, 32, 64)])
@pytest.mark.parametrize("src", sorted(SAT_SOURCES))
def test_saturating_float_to_int_matches_the_langref(op, width, src):
    """llvm.fpto{s,u}i.sat: "If the argument is any NaN, zero is returned", below the
    range its least value, above its greatest, else rounded toward zero; never poison
    (exact Python integers: math.trunc, clamped)."""
    bits, pack, unpack = SAT_SOURCES[src]
    suffix = f"i{width}.f{bits}"
    enc = encode(f"%x = bitcast i{bits} %a to {src}\n"
                 f"%r = call i{width} @llvm.{op}.sat.{suffix}({src} %x)\nret i{width} %r",
                 f"i{bits} %a", f"i{width}")
    lo, hi = (-(2 ** (width - 1)), 2 ** (width - 1) - 1) if op == "fptosi" else \
        (0, 2 ** width - 1)
    edges = [float(v + d) for v in (lo, hi, lo - 1, hi + 1) for d in (0, 0.5, -0.5)
             if math.isfinite(float(v + d))]
    for x in FLOATS + edges + [1e30, -1e30, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 64]:
        a = struct.unpack(unpack, struct.pack(pack, x))[0]
        x = struct.unpack(pack, struct.pack(pack, x))[0]  # the value the format holds
        _, poison, got = outcome(enc, a=a)
        want = 0 if math.isnan(x) else lo if x < lo else hi if x > hi else \
            max(lo, min(hi, math.trunc(x)))
        assert not poison and got.as_long() == want % 2 ** width, (op, width, src, x)


@pytest.mark.parametrize("flags,rule", [
    ("nnan", lambda a, b, r: math.isnan(a) or math.isnan(b) or math.isnan(r)),
    ("ninf", lambda a, b, r: math.isinf(a) or math.isinf(b) or math.isinf(r)),
    ("", lambda a, b, r: False)])
def test_fast_math_poison(flags, rule):
    enc = encode(f"%x = bitcast i32 %a to float\n%y = bitcast i32 %b to float\n"
                 f"%s = fadd {flags} float %x, %y\n%r = bitcast float %s to i32\nret i32 %r",
                 "i32 %a, i32 %b", "i32")
    values = [0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 3e38]
    for a in values:
        for b in values:
            r = float("nan") if math.isinf(a) and math.isinf(b) and a != b else a + b
            r = math.inf if r == 6e38 else r
            assert outcome(enc, a=_f32(a), b=_f32(b))[1] == rule(a, b, r), (flags, a, b)


FCMP = {  # written from the LangRef's list, one line each
    "false": lambda a, b: False, "true": lambda a, b: True,
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "one": lambda a, b: not _uno(a, b) and a != b, "ord": lambda a, b: not _uno(a, b),
    "ueq": lambda a, b: _uno(a, b) or a == b, "ugt": lambda a, b: _uno(a, b) or a > b,
    "uge": lambda a, b: _uno(a, b) or a >= b, "ult": lambda a, b: _uno(a, b) or a < b,
    "ule": lambda a, b: _uno(a, b) or a <= b, "une": lambda a, b: _uno(a, b) or a != b,
    "uno": lambda a, b: _uno(a, b),
}


def _uno(a: float, b: float) -> bool:
    return math.isnan(a) or math.isnan(b)


@pytest.mark.parametrize("pred", sorted(FCMP))
def test_fcmp_predicates_match_the_langref(pred):
    enc = encode(f"%x = bitcast i32 %a to float\n%y = bitcast i32 %b to float\n"
                 f"%c = fcmp {pred} float %x, %y\n%r = zext i1 %c to i8\nret i8 %r",
                 "i32 %a, i32 %b", "i8")
    values = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
    for a in values:
        for b in values:
            got = outcome(enc, a=_f32(a), b=_f32(b))[2].as_long()
            assert got == FCMP[pred](a, b), (pred, a, b)


# A float `%y` from %x = bitcast %a, passed on by each instruction that takes fast-math
# flags and only moves or rounds its value; FLAGS is put where the flags go.
MOVERS = {
    "select": "%y = select FLAGS i1 true, float %x, float 2.0",
    "phi": "br label %j\nj:\n%y = phi FLAGS float [ %x, %entry ]",
    "call": "%y = call FLAGS float @id(float %x)",
    "fptrunc": "%d = fpext float %x to double\n%y = fptrunc FLAGS double %d to float",
    "fadd": "%y = fadd FLAGS float %x, -0.0",
}
POS_ZERO, NEG_ZERO = 0x00000000, 0x80000000


def _mover(name: str, flags: str):
    return encode(f"entry:\n%x = bitcast i32 %a to float\n"
                  f"{MOVERS[name].replace('FLAGS', flags)}\n"
                  "%r = bitcast float %y to i32\nret i32 %r", "i32 %a", "i32",
                  "define float @id(float %v) {\nret float %v\n}")


@pytest.mark.parametrize("name", sorted(MOVERS))
@pytest.mark.parametrize("flags", ["", "nsz", "fast"])
def test_nsz_makes_a_zero_either_zero_and_nothing_else(name, flags):
    """"nsz: ... treat the sign of a zero argument or zero result as insignificant": a
    zero result may be +0.0 or -0.0; any other value is the one the instruction gives."""
    if flags == "fast" and name not in ("select", "phi"):
        pytest.skip("afn, arcp and reassoc are refused where they can change a value")
    enc = _mover(name, flags)
    for x in (0.0, -0.0, 1.0, -2.5, math.inf, 1e-40):
        want = {_f32(x)}
        if x == 0 and flags:
            want = {POS_ZERO, NEG_ZERO}
        assert possible(outcome(enc, a=_f32(x))[2]) == want, (name, flags, x)


@pytest.mark.parametrize("name", sorted(MOVERS))
def test_nnan_ninf_make_a_moved_value_poison(name):
    for flags, poison in (("nnan", math.isnan), ("ninf", math.isinf), ("", lambda x: False)):
        enc = _mover(name, flags)
        for x in (0.0, 1.0, math.nan, math.inf, -math.inf):
            assert outcome(enc, a=_f32(x))[1] == poison(x), (name, flags, x)


def test_fcmp_nnan_ninf_make_poison():
    enc = encode("%x = bitcast i32 %a to float\n%c = fcmp nnan ninf olt float %x, 1.0\n"
                 "%r = zext i1 %c to i8\nret i8 %r", "i32 %a", "i8")
    for x, poison in ((0.0, False), (math.nan, True), (math.inf, True), (-math.inf, True)):
        assert outcome(enc, a=_f32(x))[1] == poison, x


POS0, NEG0, ONE, QNAN, SNAN = 0x00000000, 0x80000000, 0x3F800000, 0x7FC00000, 0x7F800001
ONE_OR_NAN = "ONE_OR_NAN"
# intrinsic (and flags), a, b: every result the current LangRef allows (None: any NaN;
# ONE_OR_NAN: 1.0 or any NaN). minnum/maxnum since LLVM 22 (#112852, #170067, #172012):
# -0.0 < +0.0, an sNaN operand gives NaN or the other operand; `nsz` on any min/max:
# either operand for opposite zeros, never a sign out of thin air.
MINMAX = {
    ("minnum", POS0, NEG0): {NEG0}, ("maxnum", NEG0, POS0): {POS0},
    ("minnum", NEG0, POS0): {NEG0}, ("maxnum", POS0, NEG0): {POS0},
    ("minnum", QNAN, ONE): {ONE}, ("maxnum", ONE, QNAN): {ONE},
    ("minnum", SNAN, ONE): ONE_OR_NAN, ("maxnum", ONE, SNAN): ONE_OR_NAN,
    ("minnum", SNAN, QNAN): None, ("minnum", QNAN, QNAN): None,
    ("minnum nsz", POS0, NEG0): {POS0, NEG0}, ("maxnum nsz", NEG0, POS0): {POS0, NEG0},
    ("minnum nsz", POS0, POS0): {POS0}, ("minnum nsz", ONE, NEG0): {NEG0},
    ("minimum", POS0, NEG0): {NEG0}, ("minimum", NEG0, POS0): {NEG0},
    ("maximum", NEG0, POS0): {POS0}, ("maximum", POS0, NEG0): {POS0},
    ("minimum", QNAN, ONE): None, ("maximum", ONE, SNAN): None,
    ("minimum nsz", NEG0, POS0): {POS0, NEG0}, ("maximum nsz", ONE, POS0): {ONE},
    ("minimum nsz", ONE, POS0): {POS0},
    ("minimumnum", POS0, NEG0): {NEG0}, ("maximumnum", NEG0, POS0): {POS0},
    ("minimumnum", QNAN, ONE): {ONE}, ("maximumnum", ONE, SNAN): {ONE},
    ("minimumnum", QNAN, QNAN): None,
    ("minimumnum nsz", POS0, NEG0): {POS0, NEG0}, ("maximumnum nsz", NEG0, NEG0): {NEG0},
    ("maximumnum nsz", SNAN, POS0): {POS0},
}


def _is_nan_bits(bits: z3.ExprRef) -> z3.BoolRef:
    return z3.And(z3.Extract(30, 23, bits) == 255, z3.Extract(22, 0, bits) != 0)


@pytest.mark.parametrize("key", sorted(MINMAX), ids=lambda k: f"{k[0]}-{k[1]:x}-{k[2]:x}")
def test_min_max_signed_zeros_and_nans(key):
    call, a, b = key
    name, _, flags = call.partition(" ")
    enc = encode(f"%x = bitcast i32 %a to float\n%y = bitcast i32 %b to float\n"
                 f"%m = call {flags} float @llvm.{name}.f32(float %x, float %y)\n"
                 "%r = bitcast float %m to i32\nret i32 %r", "i32 %a, i32 %b", "i32",
                 f"declare float @llvm.{name}.f32(float, float)")
    bits = outcome(enc, a=a, b=b)[2]
    allowed = possible(bits)
    if MINMAX[key] is None:  # any NaN: at least two, and never a number
        s = z3.Solver()
        s.add(z3.Not(_is_nan_bits(bits)))
        assert allowed is None and s.check() == z3.unsat
    elif MINMAX[key] == ONE_OR_NAN:  # 1.0, a NaN, and nothing else
        s = z3.Solver()
        assert s.check(bits == ONE) == z3.sat and s.check(_is_nan_bits(bits)) == z3.sat
        assert s.check(bits != ONE, z3.Not(_is_nan_bits(bits))) == z3.unsat
    else:
        assert allowed == MINMAX[key]


def test_select_is_poison_only_through_the_chosen_arm_and_the_condition():
    enc = encode("%c = trunc i8 %a to i1\n%r = select i1 %c, i8 %b, i8 poison\nret i8 %r")
    assert outcome(enc, a=1, b=5)[1:] == (False, z3.BitVecVal(5, 8))
    assert outcome(enc, a=0, b=5)[1]
    enc = encode("%r = select i1 poison, i8 %a, i8 %b\nret i8 %r")
    assert outcome(enc, a=1, b=1)[1]


def test_freeze_fixes_one_value_and_undef_is_free_per_use():
    frozen = encode("%f = freeze i8 poison\n%r = sub i8 %f, %f\nret i8 %r", "i8 %a")
    assert outcome(frozen, a=0)[1:] == (False, z3.BitVecVal(0, 8))
    loose = encode("%x = add i8 undef, 0\n%y = add i8 undef, 0\n%r = sub i8 %x, %y\nret i8 %r",
                   "i8 %a")
    assert possible(outcome(loose, a=0)[2]) is None
    kept = encode("%f = freeze i8 %a\nret i8 %f", "i8 %a")
    assert outcome(kept, a=7)[1:] == (False, z3.BitVecVal(7, 8))


def test_phi_takes_the_edge_that_ran_and_branch_on_poison_is_ub():
    enc = encode("entry:\n%c = icmp ult i8 %a, 10\nbr i1 %c, label %small, label %big\n"
                 "small:\n%s = add i8 %a, 100\nbr label %join\n"
                 "big:\n%g = sub i8 %a, 1\nbr label %join\n"
                 "join:\n%r = phi i8 [ %s, %small ], [ %g, %big ]\nret i8 %r")
    assert outcome(enc, a=3, b=0)[2].as_long() == 103
    assert outcome(enc, a=30, b=0)[2].as_long() == 29
    enc = encode("entry:\nbr i1 poison, label %x, label %y\nx:\nret i8 1\ny:\nret i8 2")
    assert outcome(enc, a=0, b=0)[0]


@pytest.mark.parametrize("flag,zero,rule", [("false", 0, lambda a: False),
                                            ("true", 0, lambda a: a == 0)])
@pytest.mark.parametrize("name", ["ctlz", "cttz"])
def test_count_zeros_is_zero_poison(name, flag, zero, rule):
    enc = encode(f"%r = call i8 @llvm.{name}.i8(i8 %a, i1 {flag})\nret i8 %r", "i8 %a", "i8",
                 f"declare i8 @llvm.{name}.i8(i8, i1)")
    for a in (0, 1, 0x80, 0x10):
        ub, poison, bits = outcome(enc, a=a)
        assert poison == rule(a)
        if not poison:
            want = 8 if a == 0 else (8 - a.bit_length() if name == "ctlz"
                                     else (a & -a).bit_length() - 1)
            assert bits.as_long() == want


def test_abs_int_min_poison():
    for flag, poison in (("false", False), ("true", True)):
        enc = encode(f"%r = call i8 @llvm.abs.i8(i8 %a, i1 {flag})\nret i8 %r", "i8 %a", "i8",
                     "declare i8 @llvm.abs.i8(i8, i1)")
        assert outcome(enc, a=0x80)[1:] == (poison, z3.BitVecVal(0x80, 8))
        assert outcome(enc, a=0xFF)[1:] == (False, z3.BitVecVal(1, 8))


def test_memory_is_bytes_little_endian_and_bad_pointers_are_ub():
    enc = encode("store i32 %v, ptr %p, align 4\n%q = getelementptr i8, ptr %p, i64 1\n"
                 "%r = load i16, ptr %q, align 1\nret i16 %r", "ptr %p, i32 %v", "i16")
    assert outcome(enc, p=0x1000, v=0x11223344)[2].as_long() == 0x2233
    assert outcome(enc, p=0x1002, v=0)[0]  # misaligned for align 4
    assert outcome(enc, p=0, v=0)[0]  # null in address space 0
    poisoned = encode("store i32 poison, ptr %p, align 4\n%r = load i8, ptr %p, align 1\n"
                      "ret i8 %r", "ptr %p", "i8")
    assert outcome(poisoned, p=0x1000)[1]


def test_sregs_are_inputs_shared_by_name():
    enc = encode("%x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
                 "%y = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n%r = sub i32 %x, %y\nret i32 %r",
                 "", "i32", "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()")
    assert set(enc.sregs) == {"tid.x"}
    assert z3.simplify(enc.result[0].bits).as_long() == 0


@pytest.mark.parametrize("body,reason", [
    ("entry:\nbr label %l\nl:\n%i = phi i8 [ 0, %entry ], [ %j, %l ]\n%j = add i8 %i, 1\n"
     "%c = icmp ult i8 %j, %a\nbr i1 %c, label %l, label %e\ne:\nret i8 %j", "loop"),
    ("%r = call i8 @g(i8 %a)\nret i8 %r", "call"),
    ("%x = fdiv arcp float 1.0, 2.0\nret i8 %a", "fast-math"),
    ("%m = fmul contract float 1.0, 2.0\n%e = fpext float %m to double\n"
     "%x = fadd contract double %e, 1.0\nret i8 %a", "fast-math"),
    ("%x = fadd float 1.0, 2.0\nret i8 %a\n}\nattributes #0 = { \"denormal-fp-math-f32\"="
     "\"preserve-sign,preserve-sign\" }\ndefine void @unused() #0 {\nret void", None),
    ("%x = fadd fast float 1.0, 2.0\nret i8 %a", "fast-math"),
    ("%x = load volatile i8, ptr null, align 1\nret i8 %x", "memory"),
])
def test_what_the_encoding_refuses(body, reason):
    decl = "declare i8 @g(i8)" if "@g" in body else ""
    if reason is None:  # an attribute group on another function changes nothing here
        encode(body, "i8 %a", "i8", decl)
        return
    with pytest.raises(Unsupported) as e:
        encode(body, "i8 %a", "i8", decl)
    assert e.value.reason == reason


def test_an_unsafe_fp_environment_is_refused():
    """(The denormal modes are modelled: tests/test_llvm_denormal.py.)"""
    ir = "define float @f(float %a) #0 {\n%r = fadd float %a, 1.0\nret float %r\n}\n" \
         "attributes #0 = { \"unsafe-fp-math\"=\"true\" }"
    with pytest.raises(Unsupported) as e:
        encode_function(read_ir(ir)["f"])
    assert e.value.reason == "fp environment"


def _fma_pair() -> tuple[int, int, int]:
    """a, b, c (float bits) where a*b+c rounded once differs from rounding twice."""
    a = 1.0 + 2.0 ** -12
    return _f32(a), _f32(a), _f32(-(1.0 + 2.0 ** -11))


@pytest.mark.parametrize("mul,add,fusible", [("contract", "contract", True),
                                             ("", "contract", False), ("contract", "", False)])
def test_contract_lets_a_multiply_and_add_fuse(mul, add, fusible):
    """contract on both: "fusing a multiply followed by an addition into a fused
    multiply-and-add"; either result is allowed, and only then."""
    enc = encode("%x = bitcast i32 %a to float\n%y = bitcast i32 %b to float\n"
                 f"%z = bitcast i32 %c to float\n%m = fmul {mul} float %x, %y\n"
                 f"%s = fadd {add} float %m, %z\n%r = bitcast float %s to i32\nret i32 %r",
                 "i32 %a, i32 %b, i32 %c", "i32")
    a, b, c = _fma_pair()
    x = 1.0 + 2.0 ** -12
    exact = x * x - (1.0 + 2.0 ** -11)  # 2^-24, exact in a double
    twice = struct.unpack("<f", struct.pack("<f", x * x))[0] - (1.0 + 2.0 ** -11)
    assert exact != twice
    want = {_f32(twice), _f32(exact)} if fusible else {_f32(twice)}
    assert possible(outcome(enc, a=a, b=b, c=c)[2]) == want


@pytest.mark.parametrize("line,sign", [("%s = fsub contract float %m, %z", 1),
                                       ("%s = fsub contract float %z, %m", -1),
                                       ("%n = fneg contract float %m\n"
                                        "%s = fadd contract float %z, %n", -1)])
def test_contract_fuses_subtractions_with_their_signs(line, sign):
    enc = encode("%x = bitcast i32 %a to float\n%y = bitcast i32 %b to float\n"
                 "%z = bitcast i32 %c to float\n%m = fmul contract float %x, %y\n"
                 f"{line}\n%r = bitcast float %s to i32\nret i32 %r",
                 "i32 %a, i32 %b, i32 %c", "i32")
    x, c = 1.0 + 2.0 ** -12, 1.0 + 2.0 ** -11
    exact = sign * (x * x - c)  # 2^-24 rounded once: exact in a float
    product = struct.unpack("<f", struct.pack("<f", x * x))[0]  # rounds to c (a tie)
    twice = product - c if sign == 1 else c - product  # +0.0 either way, never -0.0
    got = possible(outcome(enc, a=_f32(x), b=_f32(x), c=_f32(c))[2])
    assert got == {_f32(exact), _f32(twice)}


def test_switch_on_poison_is_ub_and_takes_its_case():
    """"If 'value' is poison, the behavior is undefined"; otherwise the matching case's
    destination, or the default."""
    body = ("entry:\n%x = add nuw i8 %a, %b\nswitch i8 %x, label %d [ i8 -1, label %m\n"
            "i8 3, label %m ]\nm:\nret i8 1\nd:\nret i8 2")
    enc = encode(body)
    assert outcome(enc, a=255, b=1)[0]  # a + b wraps: poison: UB
    for a, b, want in ((1, 2, 1), (250, 5, 1), (1, 1, 2), (0, 0, 2)):
        ub, poison, bits = outcome(enc, a=a, b=b)
        assert (ub, poison, bits.as_long()) == (False, False, want)


def test_a_call_of_a_defined_function_is_its_body_with_its_ub_and_poison():
    """The callee's undefined behaviour (a division by zero) is the caller's where the
    call runs, and a poison argument is poison inside; a callee that touches memory is
    refused."""
    callee = ("define internal i8 @div(i8 %p, i8 %q) {\n%r = udiv i8 %p, %q\nret i8 %r\n}\n"
              "define internal i8 @inc(i8 %p) {\n%r = add nuw i8 %p, 1\nret i8 %r\n}\n")
    enc = encode("entry:\n%c = icmp eq i8 %a, 0\nbr i1 %c, label %z, label %d\n"
                 "z:\nret i8 9\nd:\n%x = call i8 @div(i8 %b, i8 %a)\n"
                 "%y = call i8 @inc(i8 %x)\nret i8 %y", decls=callee)
    assert outcome(enc, a=0, b=5)[:2] == (False, False)  # the call does not run
    ub, poison, bits = outcome(enc, a=2, b=9)
    assert (ub, poison, bits.as_long()) == (False, False, 5)
    assert outcome(enc, a=1, b=255)[1]  # 255 + 1 overflows nuw in @inc: poison
    enc = encode("%x = call i8 @div(i8 %a, i8 %b)\nret i8 %x", decls=callee)
    assert outcome(enc, a=1, b=0)[0]
    with pytest.raises(Unsupported):
        encode("%x = call i8 @ld(ptr null)\nret i8 %x",
               decls="define i8 @ld(ptr %p) {\n%v = load i8, ptr %p\nret i8 %v\n}")
