"""The IR semantics (ptxsmt/llvm) against LLVM itself: every instruction and intrinsic
the encoding models, in small functions generated from a table, run natively by
llvmlite's MCJIT on special and random inputs and compared bit for bit with the Z3 terms
evaluated on the same inputs. Inputs on which the terms say poison or UB are skipped
(LLVM may do anything there); where the IR leaves a choice open (a NaN's bits, the sign
of minnum(+0, -0), fmuladd's rounding) LLVM's answer must be one the terms allow.

PTXSMT_PROFILE=thorough runs many more random inputs per function."""

from __future__ import annotations

import random
import struct

import pytest
import z3

pytest.importorskip("llvmlite")
pytest.importorskip("ml_dtypes")

from llvm_host import run_jit  # noqa: E402
from tier import THOROUGH  # noqa: E402

from ptxsmt.llvm import encode_function, read_ir  # noqa: E402

RANDOM_INPUTS = 400 if THOROUGH else 8
SPECIAL_PAIRS = None if THOROUGH else 40   # special inputs: all of them, or a sample

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
for flags in ("nnan ninf nsz", "fast"):  # fast-math flags on a select and an fptrunc
    case(f"select_{flags}", ["i1", "float", "float"], "float",
         f"select {flags} i1 %a0, float %a1, float %a2")
case("fptrunc_nnan_ninf_nsz", ["double"], "float", "fptrunc nnan ninf nsz double %a0 to float")
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
         ("fptoui", "double", "i64", ""), ("fptosi", "float", "i1", ""),
         ("fptoui", "float", "i1", ""), ("fptosi", "double", "i1", ""),
         ("fptoui", "half", "i1", ""), ("sitofp", "i32", "float", ""),
         ("sitofp", "i64", "float", ""), ("sitofp", "i16", "half", ""),
         ("sitofp", "i64", "double", ""), ("uitofp", "i32", "float", ""),
         ("uitofp", "i64", "double", ""), ("uitofp", "i32", "float", "nneg"),
         ("bitcast", "<2 x half>", "i32", ""), ("bitcast", "float", "<2 x i16>", ""),
         # through the host's __truncdfbf2 (llvm_host.bf16_bits: one rounding); not an
         # integer to bfloat, which x86 LLVM rounds through float (test_llvm_host.py)
         ("fptrunc", "double", "bfloat", "")]
for op, src, dst, flags in CASTS:
    case(f"{op}_{flags}_{src}_{dst}", [src], dst, f"{op} {flags} {src} %a0 to {dst}")

SUFFIX = {"i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "half": "f16",
          "bfloat": "bf16", "float": "f32", "double": "f64", "<2 x half>": "v2f16",
          "<2 x i16>": "v2i16"}
# llvm.fpto{s,u}i.sat: every source format, widths from i1 to i64
for src, dst in (("float", "i32"), ("float", "i8"), ("double", "i64"), ("half", "i16"),
                 ("bfloat", "i32"), ("double", "i1"), ("float", "i64")):
    for name in ("fptosi.sat", "fptoui.sat"):
        case(f"{name}_{src}_{dst}", [src], dst,
             f"call {dst} @llvm.{name}.{dst}.{SUFFIX[src]}({src} %a0)")


def intrinsic(name: str, types: list[str], ret: str, extra: str = "", flags: str = "") -> None:
    t = ret
    args = ", ".join(f"{a} %a{i}" for i, a in enumerate(types))
    call = f"call {flags} {t} @llvm.{name}.{SUFFIX[t]}({args}{extra})"
    case(f"{name}_{flags}_{SUFFIX[t]}_{extra.strip(', ')}", types, ret, call)


for name in ("smin", "smax", "umin", "umax"):
    for t in ("i8", "i32"):
        intrinsic(name, [t, t], t)
for name in ("sadd.sat", "uadd.sat", "ssub.sat", "usub.sat"):
    for t in ("i8", "i16", "i32", "i64", "<2 x i16>"):
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
for name in ("floor", "ceil", "trunc", "round", "roundeven", "rint", "nearbyint"):
    for t in ("float", "double"):
        intrinsic(name, [t], t)
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
                (1 << m) - 1, 1 << m, top - 1, one + (1 << m), (one - (1 << m)) | 3,
                one - (1 << m), one + (1 << m) + (1 << (m - 2))]  # 0.5 and 2.5: ties
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
               *intrinsics.INTEGER, *intrinsics.FLOAT, *intrinsics.FLOAT_TO_INT_SAT]:
        if op.startswith("nvvm."):  # not for the host: tests/test_llvm_sem.py
            continue
        assert f"{op} " in text or f".{op}." in text, op


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ---- control flow, vectors and memory: hand-written functions, the same comparison ----

BUFFER = 16  # bytes behind the pointer argument (the last one), at an aligned address
BASE = 0x1000  # where the terms put it: aligned as malloc's buffer is

HANDWRITTEN = {
    "join": ("i32", ["i32", "i32"], """
  %c = icmp ult i32 %x0, 100
  br i1 %c, label %small, label %big
small:
  %s = mul i32 %x0, 3
  br label %join
big:
  %t = call i32 @llvm.umin.i32(i32 %x0, i32 %x1)
  %d = icmp eq i32 %t, 7
  br i1 %d, label %join, label %other
other:
  br label %join
join:
  %r = phi i32 [ %s, %small ], [ 11, %big ], [ %t, %other ]
  ret i32 %r"""),
    "switch": ("i32", ["i32", "i32"], """
  %k = and i32 %x0, 7
  switch i32 %k, label %other [ i32 0, label %zero
                                i32 3, label %three
                                i32 5, label %three
                                i32 6, label %join ]
zero:
  %z = add i32 %x1, 1
  br label %join
three:
  %t = mul i32 %x1, %k
  br label %join
other:
  br label %join
join:
  %r = phi i32 [ %k, %other ], [ %z, %zero ], [ %t, %three ], [ 99, %entry ]
  ret i32 %r"""),
    "calls": ("i32", ["i32", "i32"], """
  %a = call i32 @helper_mix(i32 %x0, i32 %x1)
  %b = call i32 @helper_mix(i32 %x1, i32 7)
  %c = icmp ult i32 %a, %b
  br i1 %c, label %then, label %join
then:
  %d = call i32 @helper_mix(i32 %b, i32 %a)
  br label %join
join:
  %r = phi i32 [ %d, %then ], [ %a, %entry ]
  ret i32 %r"""),
    "lanes": ("i32", ["i32", "i32"], """
  %v = bitcast i32 %x0 to <2 x half>
  %k = and i32 %x1, 1
  %e = extractelement <2 x half> %v, i32 %k
  %w = insertelement <2 x half> %v, half %e, i32 0
  %s = shufflevector <2 x half> %w, <2 x half> %v, <2 x i32> <i32 3, i32 0>
  %a = fadd <2 x half> %s, %w
  %r = bitcast <2 x half> %a to i32
  ret i32 %r"""),
    "memory": ("i32", ["i32", "i16", "i64", "ptr"], """
  store i32 %x0, ptr %x3, align 4
  %q = getelementptr i8, ptr %x3, i64 2
  store i16 %x1, ptr %q, align 2
  %i = and i64 %x2, 3
  %g = getelementptr i32, ptr %x3, i64 %i
  %l = load i32, ptr %g, align 4
  %h = getelementptr <2 x half>, ptr %x3, i64 2
  %v = load <2 x half>, ptr %h, align 4
  %n = fneg <2 x half> %v
  store <2 x half> %n, ptr %x3, align 4
  %c = icmp ugt i32 %l, 5
  br i1 %c, label %yes, label %no
yes:
  store i32 %l, ptr %h, align 4
  br label %done
no:
  br label %done
done:
  %r = load i32, ptr %x3, align 4
  %s = add i32 %r, %l
  ret i32 %s"""),
    # structs and arrays as values: fields in and out, nested, constants (a c-string
    # too), select and phi of whole structs, a callee taking and returning one
    "aggregates": ("i64", ["i32", "i16", "i8"], """
  %s0 = insertvalue { i32, { i8, [2 x i16] } }
        { i32 1, { i8, [2 x i16] } { i8 2, [2 x i16] [i16 3, i16 4] } }, i16 %x1, 1, 1, 0
  %s1 = insertvalue { i32, { i8, [2 x i16] } } %s0, i8 %x2, 1, 0
  %c = icmp ult i32 %x0, 1000
  %s2 = select i1 %c, { i32, { i8, [2 x i16] } } %s1, { i32, { i8, [2 x i16] } } zeroinitializer
  %in = extractvalue { i32, { i8, [2 x i16] } } %s2, 1
  %b = extractvalue { i8, [2 x i16] } %in, 0
  %h = extractvalue { i32, { i8, [2 x i16] } } %s2, 1, 1, 1
  %p = call { i16, i32 } @helper_pair({ i8, i32 } { i8 7, i32 9 }, i32 %x0, [2 x i8] c"a\\01")
  br i1 %c, label %then, label %join
then:
  %q = insertvalue { i16, i32 } %p, i16 %h, 0
  br label %join
join:
  %r = phi { i16, i32 } [ %q, %then ], [ %p, %entry ]
  %r0 = extractvalue { i16, i32 } %r, 0
  %r1 = extractvalue { i16, i32 } %r, 1
  %w0 = zext i16 %r0 to i64
  %w1 = zext i32 %r1 to i64
  %w2 = zext i8 %b to i64
  %u = shl i64 %w1, 16
  %v = shl i64 %w2, 48
  %o = or i64 %w0, %u
  %r2 = or i64 %o, %v
  ret i64 %r2"""),
    # structs and arrays in memory: each field at its offset, padding untouched
    "struct_memory": ("i32", ["i32", "i16", "ptr"], """
  %s0 = insertvalue { i8, i32, [2 x i16] } poison, i8 7, 0
  %s1 = insertvalue { i8, i32, [2 x i16] } %s0, i32 %x0, 1
  %s2 = insertvalue { i8, i32, [2 x i16] } %s1, [2 x i16] [i16 -1, i16 3], 2
  %s3 = insertvalue { i8, i32, [2 x i16] } %s2, i16 %x1, 2, 1
  %q = getelementptr i8, ptr %x2, i64 4
  %old = load { i16, <2 x i8> }, ptr %q, align 4
  store { i8, i32, [2 x i16] } %s3, ptr %x2, align 4
  %a = extractvalue { i16, <2 x i8> } %old, 0
  %v = extractvalue { i16, <2 x i8> } %old, 1
  %b = extractelement <2 x i8> %v, i32 1
  %n = load [2 x i16], ptr %q, align 2
  %c = extractvalue [2 x i16] %n, 1
  %wa = zext i16 %a to i32
  %wb = zext i8 %b to i32
  %wc = zext i16 %c to i32
  %t = shl i32 %wb, 16
  %u = xor i32 %wa, %t
  %r = add i32 %u, %wc
  ret i32 %r"""),
    # the with.overflow intrinsics: { result, overflow bit } on scalars and vectors
    "overflow": ("i64", ["i16", "i16", "i32", "i32"], """
  %sa = call { i16, i1 } @llvm.sadd.with.overflow.i16(i16 %x0, i16 %x1)
  %ua = call { i16, i1 } @llvm.uadd.with.overflow.i16(i16 %x0, i16 %x1)
  %ss = call { i32, i1 } @llvm.ssub.with.overflow.i32(i32 %x2, i32 %x3)
  %us = call { i32, i1 } @llvm.usub.with.overflow.i32(i32 %x2, i32 %x3)
  %sm = call { i16, i1 } @llvm.smul.with.overflow.i16(i16 %x0, i16 %x1)
  %v = insertelement <2 x i32> <i32 65537, i32 poison>, i32 %x2, i32 1
  %um = call { <2 x i32>, <2 x i1> } @llvm.umul.with.overflow.v2i32(<2 x i32> %v,
                                                                    <2 x i32> %v)
  %o0 = extractvalue { i16, i1 } %sa, 1
  %o1 = extractvalue { i16, i1 } %ua, 1
  %o2 = extractvalue { i32, i1 } %ss, 1
  %o3 = extractvalue { i32, i1 } %us, 1
  %o4 = extractvalue { i16, i1 } %sm, 1
  %ov = extractvalue { <2 x i32>, <2 x i1> } %um, 1
  %o5 = extractelement <2 x i1> %ov, i32 0
  %o6 = extractelement <2 x i1> %ov, i32 1
  %r0 = extractvalue { i16, i1 } %sa, 0
  %r1 = extractvalue { i16, i1 } %sm, 0
  %r2 = extractvalue { i32, i1 } %us, 0
  %r3v = extractvalue { <2 x i32>, <2 x i1> } %um, 0
  %r3 = extractelement <2 x i32> %r3v, i32 1
  %w0 = zext i16 %r0 to i64
  %w1 = zext i16 %r1 to i64
  %w2 = zext i32 %r2 to i64
  %w3 = zext i32 %r3 to i64
  %x = xor i64 %w2, %w3
  %h = shl i64 %w1, 16
  %l = or i64 %x, %h
  %k = shl i64 %w0, 40
  %a0 = or i64 %l, %k
  %b0 = zext i1 %o0 to i64
  %b1 = zext i1 %o1 to i64
  %b2 = zext i1 %o2 to i64
  %b3 = zext i1 %o3 to i64
  %b4 = zext i1 %o4 to i64
  %b5 = zext i1 %o5 to i64
  %b6 = zext i1 %o6 to i64
  %c1 = shl i64 %b1, 1
  %c2 = shl i64 %b2, 2
  %c3 = shl i64 %b3, 3
  %c4 = shl i64 %b4, 4
  %c5 = shl i64 %b5, 5
  %c6 = shl i64 %b6, 6
  %d0 = or i64 %b0, %c1
  %d1 = or i64 %d0, %c2
  %d2 = or i64 %d1, %c3
  %d3 = or i64 %d2, %c4
  %d4 = or i64 %d3, %c5
  %d5 = or i64 %d4, %c6
  %bits = shl i64 %d5, 56
  %r = xor i64 %a0, %bits
  ret i64 %r"""),
}


# a function the hand-written ones call (inlined by the encoder)
HELPER = """
define internal { i16, i32 } @helper_pair({ i8, i32 } %s, i32 %k, [2 x i8] %a) {
  %a0 = extractvalue { i8, i32 } %s, 0
  %a1 = extractvalue [2 x i8] %a, 1
  %d = sub i8 %a0, %a1
  %w = zext i8 %d to i16
  %k1 = extractvalue { i8, i32 } %s, 1
  %m = mul i32 %k, %k1
  %r0 = insertvalue { i16, i32 } undef, i16 %w, 0
  %r1 = insertvalue { i16, i32 } %r0, i32 %m, 1
  ret { i16, i32 } %r1
}
define internal i32 @helper_mix(i32 %p, i32 %q) {
  %s = shl i32 %p, 3
  %c = icmp sgt i32 %s, %q
  br i1 %c, label %big, label %small
big:
  %m = call i32 @llvm.umin.i32(i32 %s, i32 %q)
  ret i32 %m
small:
  %x = xor i32 %p, %q
  ret i32 %x
}
"""


OVERFLOW_DECLS = "".join(
    f"declare {{ {t}, {o} }} @llvm.{op}.with.overflow.{m}({t}, {t})\n"
    for op, (t, o, m) in [("sadd", ("i16", "i1", "i16")), ("uadd", ("i16", "i1", "i16")),
                          ("ssub", ("i32", "i1", "i32")), ("usub", ("i32", "i1", "i32")),
                          ("smul", ("i16", "i1", "i16")),
                          ("umul", ("<2 x i32>", "<2 x i1>", "v2i32"))])


def _handwritten_inputs(name: str, params: list[str]) -> list[list]:
    rng = random.Random(name)
    rows = []
    for _ in range(40 if not THOROUGH else 400):
        args = [rng.choice([0, 1, 7, 100, 0x3C00, 0x7E00, 0xFC00]) if rng.random() < 0.3
                else rng.getrandbits(int(p[1:])) for p in params if p != "ptr"]
        if "ptr" in params:
            args.append([rng.getrandbits(8) for _ in range(BUFFER)])
        rows.append(args)
    return rows


@pytest.mark.parametrize("name", sorted(HANDWRITTEN))
def test_control_flow_vectors_and_memory_agree_with_llvm(name):
    ret, params, body = HANDWRITTEN[name]
    sig = ", ".join(f"{p} %x{i}" for i, p in enumerate(params))
    ir = f"define {ret} @{name}({sig}) {{\nentry:{body}\n}}\n" \
         "declare i32 @llvm.umin.i32(i32, i32)\n" + HELPER + OVERFLOW_DECLS
    enc = encode_function(read_ir(ir)[name])
    rows = _handwritten_inputs(name, params)
    widths = [p if p == "ptr" else int(p[1:]) for p in params]
    out = 64 if ret == "i64" else 32
    results = run_jit(ir, {name: (out, widths, BUFFER if "ptr" in params else 0, rows)})[name]
    checked = 0
    for args, observed in zip(rows, results, strict=True):
        sub = [(enc.params[f"x{i}"], z3.BitVecVal(v, int(p[1:])))
               for i, (v, p) in enumerate(zip(args, params, strict=False)) if p != "ptr"]
        if "ptr" in params:
            mem = z3.K(z3.BitVecSort(64), z3.BitVecVal(0, 8))
            for k, byte in enumerate(args[-1]):
                mem = z3.Store(mem, BASE + k, byte)
            sub += [(enc.params[f"x{len(params) - 1}"], z3.BitVecVal(BASE, 64)),
                    (enc.initial_memory[0].bytes, mem)]
            value, buffer = observed
        else:
            value, buffer = observed, None
        if not z3.is_false(z3.simplify(z3.substitute(enc.ub, *sub))) or \
                not z3.is_false(z3.simplify(z3.substitute(enc.result[0].poison, *sub))):
            continue
        checked += 1
        assert disagreement(z3.simplify(z3.substitute(concat_bits(enc.result), *sub)),
                            value) is None, (name, args)
        if buffer is not None:
            after = [z3.simplify(z3.substitute(z3.Select(enc.memory[0].bytes, BASE + k), *sub))
                     for k in range(BUFFER)]
            assert [b.as_long() for b in after] == buffer, (name, args)
    assert checked > len(rows) // 2


def concat_bits(value) -> z3.BitVecRef:
    return value[0].bits if len(value) == 1 else z3.Concat(*[x.bits for x in reversed(value)])
