"""The IR semantics (ptxsmt/llvm) against LLVM itself: every instruction and intrinsic
the encoding models, in small functions generated from a table, run natively by
llvmlite's MCJIT on special and random inputs and compared bit for bit with the Z3 terms
evaluated on the same inputs. Inputs on which the terms say poison or UB are skipped
(LLVM may do anything there); where the IR leaves a choice open (a NaN's bits, the sign
of minnum(+0, -0), fmuladd's rounding) LLVM's answer must be one the terms allow.

PTXSMT_PROFILE=thorough runs many more random inputs per function."""

from __future__ import annotations

import os
import random
import struct

import pytest
import z3

pytest.importorskip("llvmlite")
pytest.importorskip("ml_dtypes")

from llvm_host import run_jit  # noqa: E402

from ptxsmt.llvm import encode_function, read_ir  # noqa: E402

THOROUGH = os.environ.get("PTXSMT_PROFILE") == "thorough"
RANDOM_INPUTS = 400 if THOROUGH else 12
SPECIAL_PAIRS = None if THOROUGH else 60   # special inputs: all of them, or a sample

# IR type -> the integer that carries its bits across the call
CARRIER = {"i1": "i8", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
           "half": "i16", "bfloat": "i16", "float": "i32", "double": "i64",
           "<2 x half>": "i32", "<2 x i16>": "i32"}
WIDTH = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "half": 16, "bfloat": 16,
         "float": 32, "double": 64, "<2 x half>": 32, "<2 x i16>": 32}

CASES: list[tuple[str, list[str], str, str]] = []  # (name, argument types, result type, body)


def case(name: str, args: list[str], ret: str, body: str) -> None:
    for old, new in ((".", "_"), (" ", "_"), ("<2_x_half>", "v2f16"), ("<2_x_i16>", "v2i16")):
        name = name.replace(old, new)
    CASES.append((name, args, ret, body))


INT_BINARY = {"add": ["", "nsw", "nuw", "nsw nuw"], "sub": ["", "nsw", "nuw"],
              "mul": ["", "nsw", "nuw"], "udiv": ["", "exact"], "sdiv": ["", "exact"],
              "urem": [""], "srem": [""], "shl": ["", "nsw", "nuw"], "lshr": ["", "exact"],
              "ashr": ["", "exact"], "and": [""], "or": ["", "disjoint"], "xor": [""]}
for op, flag_sets in INT_BINARY.items():
    for flags in flag_sets:
        for t in ("i8", "i32", "i64"):
            case(f"{op}_{flags}_{t}", [t, t], t, f"{op} {flags} {t} %a0, %a1")
for pred in ("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"):
    for t in ("i8", "i32"):
        case(f"icmp_{pred}_{t}", [t, t], "i1", f"icmp {pred} {t} %a0, %a1")
    case(f"icmp_samesign_{pred}", ["i32", "i32"], "i1", f"icmp samesign {pred} i32 %a0, %a1")

FCMP = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
        "ult", "ule", "une", "uno", "true")
for pred in FCMP:
    for t in ("float", "half", "double"):
        case(f"fcmp_{pred}_{t}", [t, t], "i1", f"fcmp {pred} {t} %a0, %a1")
    case(f"fcmp_nnan_ninf_{pred}", ["float", "float"], "i1",
         f"fcmp nnan ninf {pred} float %a0, %a1")
case("fcmp_v2f16_ult", ["<2 x half>", "<2 x half>"], "<2 x i1>", "")  # built below

FLOATS = ("half", "bfloat", "float", "double")
for op in ("fadd", "fsub", "fmul", "fdiv"):
    for t in (*FLOATS, "<2 x half>"):
        case(f"{op}_{t}", [t, t], t, f"{op} {t} %a0, %a1")
    case(f"{op}_nnan_ninf_nsz", ["float", "float"], "float", f"{op} nnan ninf nsz float %a0, %a1")
for t in (*FLOATS, "<2 x half>"):
    case(f"fneg_{t}", [t], t, f"fneg {t} %a0")
for t in ("i32", "float", "<2 x half>"):
    case(f"select_{t}", ["i1", t, t], t, f"select i1 %a0, {t} %a1, {t} %a2")
case("freeze_i32", ["i32"], "i32", "freeze i32 %a0")

CASTS = [("trunc", "i32", "i8", ""), ("trunc", "i32", "i8", "nuw"), ("trunc", "i32", "i8", "nsw"),
         ("trunc", "i64", "i32", ""), ("zext", "i8", "i32", ""), ("zext", "i8", "i32", "nneg"),
         ("sext", "i8", "i32", ""), ("sext", "i32", "i64", ""),
         ("fptrunc", "double", "float", ""), ("fptrunc", "float", "half", ""),
         ("fptrunc", "double", "half", ""), ("fptrunc", "float", "bfloat", ""),
         ("fpext", "half", "float", ""), ("fpext", "bfloat", "float", ""),
         ("fpext", "float", "double", ""), ("fpext", "half", "double", ""),
         ("fptosi", "float", "i32", ""), ("fptosi", "float", "i8", ""),
         ("fptosi", "double", "i64", ""), ("fptosi", "half", "i16", ""),
         ("fptoui", "float", "i32", ""), ("fptoui", "float", "i8", ""),
         ("fptoui", "double", "i64", ""), ("sitofp", "i32", "float", ""),
         ("sitofp", "i64", "float", ""), ("sitofp", "i16", "half", ""),
         ("sitofp", "i64", "double", ""), ("uitofp", "i32", "float", ""),
         ("uitofp", "i64", "double", ""), ("uitofp", "i32", "float", "nneg"),
         ("bitcast", "<2 x half>", "i32", ""), ("bitcast", "float", "<2 x i16>", "")]
for op, src, dst, flags in CASTS:
    case(f"{op}_{flags}_{src}_{dst}", [src], dst, f"{op} {flags} {src} %a0 to {dst}")

SUFFIX = {"i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "half": "f16",
          "bfloat": "bf16", "float": "f32", "double": "f64", "<2 x half>": "v2f16"}


def intrinsic(name: str, types: list[str], ret: str, extra: str = "", flags: str = "") -> None:
    t = ret
    args = ", ".join(f"{a} %a{i}" for i, a in enumerate(types))
    call = f"call {flags} {t} @llvm.{name}.{SUFFIX[t]}({args}{extra})"
    case(f"{name}_{flags}_{SUFFIX[t]}_{extra.strip(', ')}", types, ret, call)


for name in ("smin", "smax", "umin", "umax", "sadd.sat", "uadd.sat", "ssub.sat", "usub.sat"):
    for t in ("i8", "i32"):
        intrinsic(name, [t, t], t)
for t in ("i8", "i32"):
    intrinsic("abs", [t], t, ", i1 false")
    intrinsic("abs", [t], t, ", i1 true")
    for name in ("fshl", "fshr"):
        intrinsic(name, [t, t, t], t)
    intrinsic("ctpop", [t], t)
    intrinsic("bitreverse", [t], t)
    for name in ("ctlz", "cttz"):
        intrinsic(name, [t], t, ", i1 false")
        intrinsic(name, [t], t, ", i1 true")
for t in ("i16", "i32", "i64"):
    intrinsic("bswap", [t], t)
for name in ("minnum", "maxnum", "minimum", "maximum", "minimumnum", "maximumnum", "copysign"):
    for t in ("half", "float", "double", "<2 x half>"):
        intrinsic(name, [t, t], t)
intrinsic("minnum", ["float", "float"], "float", flags="nsz")
for t in ("half", "bfloat", "float", "double"):
    intrinsic("fabs", [t], t)
for t in ("half", "float", "double"):
    intrinsic("sqrt", [t], t)
    intrinsic("fma", [t, t, t], t)
intrinsic("fmuladd", ["float", "float", "float"], "float")
intrinsic("fabs", ["float"], "float", flags="nnan")


def _function(name: str, args: list[str], ret: str, body: str) -> str:
    params = ", ".join(f"{CARRIER[a]} %x{i}" for i, a in enumerate(args))
    lines = []
    for i, a in enumerate(args):
        if a == "i1":
            lines.append(f"%a{i} = trunc i8 %x{i} to i1")
        elif CARRIER[a] != a:
            lines.append(f"%a{i} = bitcast {CARRIER[a]} %x{i} to {a}")
        else:
            lines.append(f"%a{i} = add {a} %x{i}, 0")
    if name == "fcmp_v2f16_ult":
        body = "fcmp ult <2 x half> %a0, %a1"
        lines += [f"%r = {body}", "%o2 = bitcast <2 x i1> %r to i2", "%o = zext i2 %o2 to i8"]
        return f"define i8 @{name}({params}) {{\n  " + "\n  ".join(lines) + "\n  ret i8 %o\n}\n"
    lines.append(f"%r = {body}")
    carrier = CARRIER[ret]
    if ret == "i1":
        lines.append("%o = zext i1 %r to i8")
    elif carrier != ret:
        lines.append(f"%o = bitcast {ret} %r to {carrier}")
    else:
        lines.append(f"%o = add {ret} %r, 0")
    return f"define {carrier} @{name}({params}) {{\n  " + "\n  ".join(lines) + \
        f"\n  ret {carrier} %o\n}}\n"


def _special(t: str) -> list[int]:
    w = WIDTH[t]
    if t in ("half", "bfloat", "float", "double", "<2 x half>"):
        fmt = {"half": (5, 10), "bfloat": (8, 7), "float": (8, 23), "double": (11, 52),
               "<2 x half>": (5, 10)}[t]
        e, m = fmt
        lane = 1 + e + m
        top = ((1 << e) - 1) << m
        one = ((1 << (e - 1)) - 1) << m
        vals = [0, one, one | (1 << (m - 1)), top, top | (1 << (m - 1)), top | 1, 1,
                (1 << m) - 1, 1 << m, top - 1, one + (1 << m), (one - (1 << m)) | 3]
        vals += [v | (1 << (lane - 1)) for v in vals]
        if t == "<2 x half>":
            return [a | (b << 16) for a, b in zip(vals, vals[3:] + vals[:3], strict=True)]
        return vals
    if w == 1:
        return [0, 1]
    return sorted({0, 1, 2, 3, w - 1, w, (1 << w) - 1, (1 << (w - 1)), (1 << (w - 1)) - 1,
                   (1 << w) - 2, 7, 0x55 % (1 << w)})


def _inputs(name: str, args: list[str]) -> list[list[int]]:
    rng = random.Random(name)
    specials = [_special(a) for a in args]
    combos = [[]]
    for s in specials:
        combos = [c + [v] for c in combos for v in s]
    if SPECIAL_PAIRS is not None and len(combos) > SPECIAL_PAIRS:
        combos = rng.sample(combos, SPECIAL_PAIRS)
    for _ in range(RANDOM_INPUTS):
        combos.append([rng.choice(s) if rng.random() < 0.3 else rng.getrandbits(WIDTH[a])
                       for s, a in zip(specials, args, strict=True)])
    return [[v & ((1 << WIDTH[a]) - 1) for v, a in zip(c, args, strict=True)] for c in combos]


def evaluate(enc, values: dict[str, int], out_width: int) -> z3.BitVecRef | None:
    """The result's bits on these inputs (a constant, or a term of the choices the IR
    leaves open), or None where the terms say UB or poison (LLVM may do anything)."""
    sub = [(enc.params[k], z3.BitVecVal(v, enc.params[k].size())) for k, v in values.items()]
    ub = z3.simplify(z3.substitute(enc.ub, *sub))
    poison = z3.simplify(z3.substitute(z3.Or(*[x.poison for x in enc.result]), *sub))
    if not z3.is_false(ub) or not z3.is_false(poison):
        return None
    bits = enc.result[0].bits if len(enc.result) == 1 else \
        z3.Concat(*[x.bits for x in reversed(enc.result)])
    if bits.size() < out_width:
        bits = z3.ZeroExt(out_width - bits.size(), bits)
    return z3.simplify(z3.substitute(bits, *sub))


def disagreement(expected: z3.BitVecRef, observed: int) -> str | None:
    """None when LLVM's answer is one the terms allow, else why not."""
    if z3.is_bv_value(expected):
        return None if expected.as_long() == observed else f"terms give {expected.as_long():#x}"
    s = z3.Solver()
    s.add(expected == observed)
    return None if s.check() == z3.sat else f"terms cannot give {observed:#x}: {expected}"


@pytest.fixture(scope="module")
def jitted():
    """Every case's defined inputs (UB would trap natively: a division by zero) with the
    terms' answer, and LLVM's answers to them."""
    ir = "\n".join(_function(*c) for c in CASES)
    encs = read_ir(ir)
    calls, expected = {}, {}
    for name, args, ret, _ in CASES:
        enc = encode_function(encs[name])
        out = 8 if name == "fcmp_v2f16_ult" else int(CARRIER[ret][1:])
        rows = [(a, evaluate(enc, {f"x{i}": v for i, v in enumerate(a)}, out))
                for a in _inputs(name, args)]
        rows = [(a, e) for a, e in rows if e is not None]
        expected[name] = rows
        calls[name] = (out, [int(CARRIER[a][1:]) for a in args], 0, [a for a, _ in rows])
    return expected, run_jit(ir, calls)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_terms_agree_with_llvm(jitted, name):
    expected, results = jitted
    wrong = [f"inputs {[hex(a) for a in args]}: LLVM {observed:#x}, {why}"
             for (args, e), observed in zip(expected[name], results[name], strict=True)
             if (why := disagreement(e, observed))]
    assert not wrong, f"{len(wrong)} disagreements, first: {wrong[:3]}"
    assert expected[name] or name.startswith("fcmp_nnan"), "no input was checked"


def test_every_instruction_and_intrinsic_is_in_the_table():
    from ptxsmt.llvm import floating, integer, intrinsics
    text = " ".join(c[3] for c in CASES)
    for op in [*integer.BINARY, *integer.ICMP, *floating.FCMP, *floating.BINARY,
               *intrinsics.INTEGER, *intrinsics.FLOAT]:
        assert f"{op} " in text or f".{op}." in text, op


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]
