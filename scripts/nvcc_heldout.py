"""A second held-out corpus for issue 44, from another generator than the LLVM IR of
`heldout_corpus.py`: CUDA C++ device functions compiled by nvcc (NVVM and its own
front end, libdevice, cuda_fp16.h's inline assembly), so that the sweep is checked
against a compiler whose habits it was not tuned to.

    python scripts/nvcc_heldout.py --out DIR [--seeds 10] [--only KIND,KIND]

writes DIR/NAME.cu, DIR/NAME.O0.ptx (the unoptimised side), DIR/NAME.O2.ptx (nvcc -O3),
DIR/pairs.jsonl and DIR/manifest.jsonl in the layout of `heldout_corpus.py` (the labels
of planted_pairs.py, audited by ptxas), plus the fields `level` and `math`.

Each function is `extern "C" __device__ __noinline__ f(...)` in its own translation
unit, compiled `-rdc=true -ptx` (a `.func` is kept only in relocatable code) for sm_80.
The unoptimised side is `-G` (device debug: every value through the local stack, every
library function a call) or `-Xcicc -O0` (NVVM unoptimised, calls kept), the optimised
side `-O3`; both sides take the same math flags: `precise` (nvcc's defaults) or `fast`
(`--use_fast_math`: flush-to-zero on every f32 instruction). Level and math alternate
by seed.

Kinds (values drawn from typed pools, operations from a table, an if/else now and
then): `fcmp` (f32 under the six C compares and their negations, isnan/isinf/isfinite,
int and unsigned compares, &&/||/!, ternaries; returns int), `fsel` (fminf/fmaxf,
fabsf, copysignf, negation, ternaries on compares; returns float), `half` (`__half`
and `__half2` from cuda_fp16.h: __hadd/__hmul/__hmin/__hmax/__hmin_nan/__hgt/__hltu/
__hisnan/__hfma ..., conversions; returns float), `mixed` (int, unsigned, float,
double: int-to-float casts, the __float2int_rn family, min/max; returns int).

No undefined behaviour and no open value reaching a return: integer arithmetic is
unsigned, a float becomes an int only through the __float2int_* intrinsics (which
saturate), a copysign takes its sign from a parameter, and a product (a float `*`,
__hmul, __hmul2, or its negation or lane) never feeds an addition: `-fmad=true`, nvcc's
default, lets the unoptimised side's mul.f32 + add.f32 be fused or not while -O3
writes fma.rn, and cuda_fp16.h's mul.f16 (no rounding modifier) may be fused by ptxas
into an add.f16 beside it at -O3 but not across the calls of -G or -O0: differences
the compilers may make (half-O0-precise-4401 was one, before this rule).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import heldout_corpus
import planted_pairs

KINDS = ("fcmp", "fsel", "half", "mixed")
SEEDS = 10
FIRST_SEED = 4400  # none of the other generators' seeds
TARGET = "sm_80"
LEVELS = {"G": ["-G"], "O0": ["-Xcicc", "-O0"]}  # the unoptimised side, against -O3
MATH = {"precise": [], "fast": ["--use_fast_math"]}
OPS = (14, 20, 26, 32)  # C operations before the final fold: -O3 PTX of 20 to 100 instructions
C_COMPARES = ("<", "<=", ">", ">=", "==", "!=")
HEADER = "#include <cuda_fp16.h>\n\n"


class Source:
    """A device function under construction: typed pools of values, the lines written."""

    def __init__(self, rng: random.Random, params: list[tuple[str, str]]):
        self.rng, self.params, self.lines, self.count = rng, params, [], 0
        self.pools: dict[str, list[str]] = {}
        # products (__hmul's too), and their negations and lanes: kept from + and -
        self.products: set[str] = set()
        for t, name in params:
            self.pools.setdefault(t, []).append(name)

    def pick(self, t: str, recent: int = 6, avoid: set[str] = frozenset()) -> str:
        pool = [v for v in self.pools[t] if v not in avoid] or self.pools[t]
        return self.rng.choice(pool[-recent:] if self.rng.random() < 0.7 else pool)

    def emit(self, t: str, expr: str, product_of: tuple[str, ...] = ()) -> str:
        """A new value of type t; a product if `product_of` holds one (-x of a product
        still fuses into an fma)."""
        self.count += 1
        name = f"v{self.count}"
        self.lines.append(f"  {t} {name} = {expr};")
        self.pools.setdefault(t, []).append(name)
        if self.products & set(product_of):
            self.products.add(name)
        return name

    def has(self, t: str) -> bool:
        return bool(self.pools.get(t))

    def signs(self, t: str) -> list[str]:
        """Values whose sign is defined: the parameters (a computed NaN's sign is open)."""
        return [p for ty, p in self.params if ty == t]

    # ---- shared operations ----

    def arith(self, t: str = "float") -> str:
        op = self.rng.choice(["+", "-", "*", "+", "__fmul_rn"])
        if op == "__fmul_rn":
            return self.emit(t, f"__fmul_rn({self.pick(t)}, {self.pick(t)})")
        avoid = self.products if op in "+-" else set()
        v = self.emit(t, f"{self.pick(t, avoid=avoid)} {op} {self.pick(t, avoid=avoid)}")
        if op == "*":
            self.products.add(v)
        return v

    def fcompare(self, t: str = "float") -> str:
        a = self.pick(t)
        b = self.pick(t, avoid={a}) if self.rng.random() < 0.75 else self.rng.choice(
            ["0.0f", "-0.0f", "1.0f", "-2.5f", "1.0e3f"])
        form = self.rng.random()
        if form < 0.15:
            return self.emit("bool", f"{self.rng.choice(['isnan', 'isinf', 'isfinite'])}({a})")
        if form < 0.45:  # an unordered compare
            return self.emit("bool", f"!({a} {self.rng.choice(C_COMPARES)} {b})")
        return self.emit("bool", f"{a} {self.rng.choice(C_COMPARES)} {b}")

    def icompare(self) -> str:
        t = self.rng.choice(["int", "unsigned"])
        a = self.pick("unsigned")
        b = self.pick("unsigned", avoid={a}) if self.rng.random() < 0.7 else \
            f"{self.rng.choice([0, 1, 7, 255, 100000, 0x80000000, 0xFFFFFFFF])}u"
        return self.emit("bool", f"({t}){a} {self.rng.choice(C_COMPARES)} ({t}){b}")

    def logic(self) -> str:
        op = self.rng.choice(["&&", "||", "^", "!"])
        if op == "!":
            return self.emit("bool", f"!{self.pick('bool')}")
        a = self.pick("bool")
        return self.emit("bool", f"{a} {op} {self.pick('bool', avoid={a})}")

    def select(self, t: str) -> str:
        if not self.has("bool"):
            self.fcompare()
        a = self.pick(t)
        return self.emit(t, f"{self.pick('bool', 4)} ? {a} : {self.pick(t, avoid={a})}")

    def int_op(self) -> str:
        op = self.rng.choice(["+", "^", "&", "|", "-", "<<", ">>", "*"])
        b = f"{self.rng.randint(1, 31)}" if op in ("<<", ">>") else self.pick("unsigned")
        return self.emit("unsigned", f"{self.pick('unsigned')} {op} {b}")

    def to_unsigned(self, c: str) -> str:
        return self.emit("unsigned", f"(unsigned){c}")

    def diamond(self, t: str, arm) -> None:
        """if (c) { v = arm } else { v = arm }: a branch that -O3 may make a select."""
        if not self.has("bool"):
            self.fcompare()
        c = self.pick("bool", 3)
        self.count += 1
        v = f"v{self.count}"
        self.lines.append(f"  {t} {v};")
        self.lines.append(f"  if ({c}) {{ {v} = {arm()}; }} else {{ {v} = {arm()}; }}")
        self.pools[t].append(v)

    def fold(self, t: str, op: str, count: int) -> str:
        """The last `count` values of type t combined, so that most stay live."""
        values = self.pools[t][-count:]
        total = values[-1]
        for v in values[:-1]:
            total = self.emit(t, op.format(total, v))
        return total

    def text(self, ret: str, value: str) -> str:
        head = ", ".join(f"{t} {p}" for t, p in self.params)
        return "\n".join([HEADER + f'extern "C" __device__ __noinline__ {ret} f({head})',
                          "{", *self.lines, f"  return {value};", "}", ""])


def _run(s: Source, ops: int, table: dict, arm) -> None:
    names, weights = zip(*table.items())
    for _ in range(ops):
        if s.rng.random() < 0.12:
            s.diamond(*arm(s))
        else:
            s.rng.choices(names, weights)[0](s)


def _expr_arm(t: str, make):
    """An arm of a diamond: type t and a function of the source giving an expression."""
    return lambda s: (t, lambda: make(s))


def fcmp_kind(ops: int, seed: int) -> str:
    """f32 and integer compares, bool logic, ternaries; returns int (the compares' bits)."""
    s = Source(random.Random(f"nvcc-fcmp-{ops}-{seed}"),
               [("float", "x0"), ("float", "x1"), ("float", "x2"), ("unsigned", "n0"),
                ("unsigned", "n1")])
    s.fcompare()
    s.icompare()
    table = {lambda s: s.fcompare(): 5, lambda s: s.icompare(): 2, lambda s: s.logic(): 3,
             lambda s: s.select("float"): 2, lambda s: s.select("unsigned"): 2,
             lambda s: s.arith(): 2, lambda s: s.int_op(): 1}
    _run(s, ops, table, _expr_arm("float", lambda s: f"{s.pick('float', avoid=s.products)}"
                                  f" + {s.pick('float', avoid=s.products)}"))
    for k, c in enumerate(s.pools["bool"][-8:]):  # the last compares, a bit each
        s.emit("unsigned", f"(unsigned){c} << {k}")
    return s.text("unsigned", s.fold("unsigned", "{} ^ {}", 10))


def fsel_kind(ops: int, seed: int) -> str:
    """fminf/fmaxf, fabsf/copysignf/negation, ternaries on compares; returns float."""
    s = Source(random.Random(f"nvcc-fsel-{ops}-{seed}"),
               [("float", f"x{i}") for i in range(4)])
    s.fcompare()

    def minmax(s: Source) -> str:
        return s.emit("float", f"{s.rng.choice(['fminf', 'fmaxf'])}({s.pick('float')}, "
                               f"{s.pick('float')})")

    def sign(s: Source) -> str:
        op, a = s.rng.choice(["fabsf", "-", "copysignf"]), s.pick("float")
        if op == "-":
            return s.emit("float", f"-{a}", (a,))
        if op == "fabsf":
            return s.emit("float", f"fabsf({a})", (a,))
        return s.emit("float", f"copysignf({a}, {s.rng.choice(s.signs('float'))})", (a,))

    def clamp(s: Source) -> str:
        return s.emit("float", f"fmaxf(fminf({s.pick('float')}, 1.0e4f), -1.0e4f)")

    table = {minmax: 4, sign: 3, clamp: 1, lambda s: s.select("float"): 3,
             lambda s: s.fcompare(): 2, lambda s: s.arith(): 2, lambda s: s.logic(): 1}
    _run(s, ops, table, _expr_arm("float", lambda s: f"fmaxf({s.pick('float')}, "
                                  f"{s.pick('float')})"))
    return s.text("float", s.fold("float", "fminf({}, {})", 3))


HALF_BINARY = ("__hadd", "__hsub", "__hmul", "__hmin", "__hmax", "__hmin_nan", "__hmax_nan")
HALF_COMPARE = ("__heq", "__hne", "__hlt", "__hle", "__hgt", "__hge", "__hequ", "__hneu",
                "__hltu", "__hleu", "__hgtu", "__hgeu")
HALF2_BINARY = ("__hadd2", "__hmul2", "__hmin2", "__hmax2", "__hsub2")
# cuda_fp16.h's __hmul is `mul.f16` without a rounding modifier: ptxas may fuse it into
# the add.f16 that reads it (the ISA allows it; __hmul_rn is the one it may not)
HALF_PRODUCTS = ("__hmul", "__hmul2")
HALF_SUMS = ("__hadd", "__hsub", "__hadd2", "__hsub2")


def half_kind(ops: int, seed: int) -> str:
    """__half and __half2 arithmetic, min/max, compares and conversions; returns float."""
    s = Source(random.Random(f"nvcc-half-{ops}-{seed}"),
               [("__half", "h0"), ("__half", "h1"), ("__half", "h2"), ("float", "x0")])
    s.emit("__half2", "__halves2half2(h2, h1)")  # (a __half2 parameter goes by pointer)

    def binary(s: Source) -> str:
        op = s.rng.choice(HALF_BINARY)
        avoid = s.products if op in HALF_SUMS else set()
        v = s.emit("__half", f"{op}({s.pick('__half', avoid=avoid)}, "
                             f"{s.pick('__half', avoid=avoid)})")
        if op in HALF_PRODUCTS:
            s.products.add(v)
        return v

    def compare(s: Source) -> str:
        if s.rng.random() < 0.15:
            return s.emit("bool", f"__hisnan({s.pick('__half')})")
        return s.emit("bool", f"{s.rng.choice(HALF_COMPARE)}({s.pick('__half')}, "
                              f"{s.pick('__half')})")

    def unary(s: Source) -> str:
        op = s.rng.choice(["__hneg", "__habs", "__hfma"])
        if op == "__hfma":
            return s.emit("__half", f"__hfma({s.pick('__half')}, {s.pick('__half')}, "
                                    f"{s.pick('__half')})")
        a = s.pick("__half")
        return s.emit("__half", f"{op}({a})", (a,))

    def vector(s: Source) -> str:
        op = s.rng.choice([*HALF2_BINARY, "low", "high", "pack"])
        if op in ("low", "high"):
            w = s.pick("__half2")
            return s.emit("__half", f"__{op}2half({w})", (w,))
        if op == "pack":
            a, b = s.pick("__half"), s.pick("__half")
            return s.emit("__half2", f"__halves2half2({a}, {b})", (a, b))
        avoid = s.products if op in HALF_SUMS else set()
        v = s.emit("__half2", f"{op}({s.pick('__half2', avoid=avoid)}, "
                              f"{s.pick('__half2', avoid=avoid)})")
        if op in HALF_PRODUCTS:
            s.products.add(v)
        return v

    def convert(s: Source) -> str:
        op = s.rng.choice(["h2f", "f2h", "f2h", "h2f"])
        if op == "h2f":
            return s.emit("float", f"__half2float({s.pick('__half')})")
        return s.emit("__half", f"__float2half({s.pick('float')})")

    table = {binary: 4, compare: 3, unary: 1, vector: 2, convert: 2,
             lambda s: s.select("__half"): 2, lambda s: s.arith(): 1}
    _run(s, ops, table, _expr_arm("__half", lambda s: f"__hmax({s.pick('__half')}, "
                                  f"{s.pick('__half')})"))
    for c in s.pools.get("bool", [])[-2:]:
        s.emit("float", f"{c} ? 1.0f : -1.0f")
    s.emit("float", f"__half2float({s.fold('__half', '__hmax({}, {})', 3)})")
    s.emit("float", f"__high2float({s.pick('__half2', 2)})")
    return s.text("float", s.fold("float", "fmaxf({}, {})", 4))


INT_FROM_FLOAT = ("__float2int_rn", "__float2int_rz", "__float2int_rd", "__float2int_ru",
                  "__float2uint_rn", "__float2uint_rz")


def mixed_kind(ops: int, seed: int) -> str:
    """int, unsigned, float and double meeting through conversions; returns unsigned."""
    s = Source(random.Random(f"nvcc-mixed-{ops}-{seed}"),
               [("unsigned", "n0"), ("unsigned", "n1"), ("float", "x0"), ("double", "d0")])
    s.icompare()

    def to_float(s: Source) -> str:
        t, signed = s.rng.choice(["float", "double"]), s.rng.choice(["(int)", ""])
        return s.emit(t, f"({t}){signed}{s.pick('unsigned')}")

    def to_int(s: Source) -> str:
        if s.rng.random() < 0.3:
            return s.emit("unsigned", f"(unsigned)__double2int_rz({s.pick('double')})")
        return s.emit("unsigned", f"(unsigned){s.rng.choice(INT_FROM_FLOAT)}"
                                  f"({s.pick('float')})")

    def minmax(s: Source) -> str:
        t = s.rng.choice(["int", "unsigned"])
        return s.emit("unsigned", f"(unsigned){s.rng.choice(['min', 'max'])}(({t})"
                                  f"{s.pick('unsigned')}, ({t}){s.pick('unsigned')})")

    def double_op(s: Source) -> str:
        if s.rng.random() < 0.5:
            return s.emit("bool", f"{s.pick('double')} {s.rng.choice(C_COMPARES)} "
                                  f"{s.pick('double')}")
        return s.emit("double", f"fmin({s.pick('double')}, {s.pick('double')})")

    table = {to_float: 3, to_int: 3, lambda s: s.int_op(): 3, minmax: 1,
             lambda s: s.icompare(): 2, lambda s: s.fcompare(): 2, double_op: 1,
             lambda s: s.logic(): 1, lambda s: s.select("unsigned"): 2,
             lambda s: s.arith(): 2}
    _run(s, ops, table, _expr_arm("unsigned", lambda s: f"{s.pick('unsigned')} + "
                                  f"{s.pick('unsigned')}"))
    for c in s.pools["bool"][-3:]:
        s.to_unsigned(c)
    return s.text("unsigned", s.fold("unsigned", "{} ^ {}", 8))


GENERATORS = {"fcmp": fcmp_kind, "fsel": fsel_kind, "half": half_kind, "mixed": mixed_kind}


# ---- nvcc ----------------------------------------------------------------------------------

def find_nvcc() -> str | None:
    return shutil.which("nvcc")


def compile_nvcc(source: str, level: str, math: str) -> tuple[str, str]:
    """(the unoptimised side, -O3) of one translation unit, as PTX text. nvcc names
    internal functions by a hash of the source's path, and -G writes the path and the
    working directory: the source is compiled as f.cu in a folder named by its digest
    (the same source, the same bytes)."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise RuntimeError("nvcc not found")
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / "nvcc_heldout" / digest
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "f.cu").write_text(source)
    out = []
    with tempfile.TemporaryDirectory(prefix="nvcc_heldout_") as tmp:
        for flags in (LEVELS[level], ["-O3"]):
            ptx = Path(tmp) / "f.ptx"
            subprocess.run([nvcc, f"-arch={TARGET}", "-ptx", "-rdc=true", *flags, *MATH[math],
                            "f.cu", "-o", str(ptx)], check=True, capture_output=True,
                           text=True, timeout=300, cwd=folder)
            out.append(ptx.read_text())
    return out[0], out[1]


# ---- planted differences --------------------------------------------------------------------

def _flush_dropped(m: re.Match) -> str:
    return m[0].replace(".ftz", "", 1)


# heldout_corpus's mutations, and those nvcc's PTX invites: cuda_fp16.h's inline assembly
# (`min.f16 %rs3,%rs8,%rs2;`, no spaces), --use_fast_math's .ftz, cvt.rn.f16.f32's rounding
MUTATIONS = [
    *heldout_corpus.MUTATIONS,
    ("nan-min-asm", re.compile(r"\b(min|max)\.(f16|f16x2)(?=\s+%\w+,%\w+,%\w+;)"),
     r"\1.NaN.\2"),
    ("ftz-dropped", re.compile(r"\b(?:setp|min|max|add|sub|mul|fma)(?:\.\w+)*\.ftz\.f32\b"),
     _flush_dropped),
    ("rounding", re.compile(r"\bcvt\.rn\.f16\.f32\b"), "cvt.rz.f16.f32"),
]


def plant(ptx: str, rng: random.Random) -> tuple[str, str] | None:
    """`ptx` with one instruction changed, and the mutation's name; None if none applies."""
    return planted_pairs.plant(ptx, rng, MUTATIONS)


# ---- the corpus --------------------------------------------------------------------------

def pairs(kinds=KINDS, seeds=SEEDS):
    """(name, kind, ops, level, math, seed), in a fixed order: level and math alternate."""
    for kind in kinds:
        for seed in range(FIRST_SEED, FIRST_SEED + seeds):
            level = tuple(LEVELS)[seed % 2]
            math = tuple(MATH)[seed // 2 % 2]
            yield (f"{kind}-{level}-{math}-{seed}", kind, OPS[seed % len(OPS)], level, math,
                   seed)


def write(out: Path, kinds=KINDS, seeds=SEEDS, audit: bool = True) -> tuple[int, list[str]]:
    """Both compiles of every function, its planted twin (labelled by ptxas's audit
    unless not `audit`), and the two index files."""
    corpus = planted_pairs.Corpus(out, planted_pairs.find_assembler() if audit else None)
    failed = []
    for name, kind, ops, level, math, seed in pairs(kinds, seeds):
        source = GENERATORS[kind](ops, seed)
        try:
            o0, o3 = compile_nvcc(source, level, math)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            why = getattr(e, "stderr", None) or str(e)
            failed.append(f"{name}: {why.strip().splitlines()[0][:200]}")
            continue
        (out / f"{name}.cu").write_text(source)
        corpus.add(name, o0, o3, plant(o3, random.Random(name)), kind=kind, ops=ops,
                   compiler="nvcc", level=level, math=math, target=TARGET, seed=seed,
                   ptx=heldout_corpus.instructions(o3))
    return corpus.save(), failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="kinds, e.g. fcmp,half (default: all)")
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--no-audit", action="store_true",
                    help="label the planted pairs as planted, without ptxas's audit")
    args = ap.parse_args()
    kinds = tuple(filter(None, args.only.split(","))) or KINDS
    if unknown := set(kinds) - set(KINDS):
        sys.exit(f"unknown kind: {', '.join(sorted(unknown))}")
    if find_nvcc() is None:
        sys.exit("needs nvcc (the CUDA toolkit) on PATH")
    n, failed = write(args.out, kinds, args.seeds, not args.no_audit)
    print(f"{n} pairs in {args.out / 'pairs.jsonl'} (labels: {args.out / 'manifest.jsonl'})")
    for line in failed:
        print(f"not compiled: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
