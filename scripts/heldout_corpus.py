"""A held-out corpus for issue 44, written apart from `sweep_corpus.py` so that the sweep
is not tuned to one generator's habits: small float, half and compare-heavy functions
(20 to 100 PTX instructions), compiled `-O0` against `-O2`, and planted differences that
sit on the edges only a solver finds (NaN, ±0, one ulp, equality).

    python scripts/heldout_corpus.py --out DIR [--seeds 8] [--first-seed 2000] [--only KIND,KIND]

writes DIR/NAME.O0.ptx, DIR/NAME.O2.ptx, DIR/pairs.jsonl (`ptxsmt equiv --batch` lines)
and DIR/manifest.jsonl (the layout of `sweep_corpus.py`: name, kind, ops, compiler,
target, seed, fmf, ptx (instructions of the -O2 side), planted, masked, audit, expect:
the labels of scripts/planted_pairs.py, audited by ptxas), so that
`scripts/bench.py --sweep --corpus DIR` reads it too. Fixed seeds, 1000 up (none of
`sweep_corpus.py`'s): the same tools write the same bytes.

Kinds (each IR function `f`; values drawn from typed pools, operations from a table):
`fcmp` (f32 under all 16 fcmp predicates, icmp under all 10, i1 and/or/xor/not,
selects of compares, returns i32), `fsel` (f32 minnum/maxnum/minimum/maximum,
fabs/copysign/fneg, selects and phis on compares, returns float), `half` (half and
<2 x half> arithmetic and compares, half<->float<->double conversions, returns float),
`mixed` (i32, i1, f32, f64: sitofp/uitofp, fptosi/fptoui of clamped values and their
saturating intrinsics, returns i32). Every function has diamonds joined by phis on a
compare. Half the functions of a kind carry fast-math flags `nnan ninf` on operations
whose operands are bounded finite values (clamped by minnum/maxnum), so the flags
never make poison and the pair stays equal. Compilers: llc-14 (`llc-14 -O0` against
`opt-14 -O2 | llc-14 -O2`) and the LLVM 22 inside llvmlite; sm_80, every fourth seed
sm_70.

No undefined behaviour: no float's bits are observed (no bitcast of a float that may be
a NaN: PTX leaves NaN payloads open), a copysign takes its sign from a parameter or a
bounded value (a NaN's sign is open too), an fptosi/fptoui converts only a clamped value.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from pathlib import Path

import planted_pairs

KINDS = ("fcmp", "fsel", "half", "mixed")
COMPILERS = ("llc14", "llvm22")
SEEDS = 10
FIRST_SEED = 1000
FCMP = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
        "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
ICMP = ("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle")
BOUND = 1.0e4       # a clamped value's magnitude
FLAGS = "nnan ninf"
CALL = re.compile(r"call (\S+) @(llvm\.[\w.]+)\((.*)\)")


class Function:
    """An IR function under construction: typed pools of values, the lines written."""

    def __init__(self, rng: random.Random, params: list[tuple[str, str]], fmf: bool):
        self.rng, self.fmf, self.lines = rng, fmf, []
        self.pools: dict[str, list[str]] = {}
        self.bounded: dict[str, float] = {}   # value -> magnitude bound (finite, not NaN)
        self.params = params
        self.count = 0
        for t, name in params:
            self.pools.setdefault(t, []).append(name)

    def new(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def pick(self, t: str, recent: int = 8) -> str:
        pool = self.pools[t]
        return self.rng.choice(pool[-recent:] if self.rng.random() < 0.7 else pool)

    def emit(self, t: str, text: str, bound: float | None = None) -> str:
        r = self.new()
        self.lines.append(f"  {r} = {text}")
        self.pools.setdefault(t, []).append(r)
        if bound is not None:
            self.bounded[r] = bound
        return r

    def has(self, t: str) -> bool:
        return bool(self.pools.get(t))

    # ---- shared operations ----

    def clamp(self, t: str, x: str) -> str:
        """x clamped to [-BOUND, BOUND]: finite and never a NaN (maxnum drops a NaN)."""
        suffix = {"float": "f32", "half": "f16", "double": "f64"}[t]
        b = {"half": "1.0e3"}.get(t, "1.0e4")
        lo = self.emit(t, f"call {t} @llvm.maxnum.{suffix}({t} {x}, {t} -{b})")
        return self.emit(t, f"call {t} @llvm.minnum.{suffix}({t} {lo}, {t} {b})",
                         1.0e3 if t == "half" else BOUND)

    def arith(self, t: str) -> str:
        """fadd/fsub/fmul; with fast-math flags where both operands are bounded and the
        result stays far from overflow."""
        op = self.rng.choice(["fadd", "fsub", "fmul", "fadd"])
        bounded = [v for v in self.pools[t][-12:] if v in self.bounded]
        limit = 6.0e4 if t == "half" else 1.0e30
        if self.fmf and len(bounded) >= 2 and self.rng.random() < 0.7:
            a, b = self.rng.choice(bounded), self.rng.choice(bounded)
            ba, bb = self.bounded[a], self.bounded[b]
            bound = ba * bb if op == "fmul" else ba + bb
            if bound < limit:
                return self.emit(t, f"{op} {FLAGS} {t} {a}, {b}", bound)
        return self.emit(t, f"{op} {t} {self.pick(t)}, {self.pick(t)}")

    def fcmp(self, t: str, predicates=FCMP) -> str:
        a, b = self.pick(t), self.pick(t)
        flags = f"{FLAGS} " if self.fmf and a in self.bounded and b in self.bounded else ""
        if self.rng.random() < 0.25:  # against a constant: the compare's edges at a point
            b = self.rng.choice(["0.0", "-0.0", "1.0", "-2.5", "1.0e3"])
            flags = ""
        return self.emit("i1", f"fcmp {flags}{self.rng.choice(predicates)} {t} {a}, {b}")

    def icmp(self) -> str:
        a = self.pick("i32")
        b = self.pick("i32") if self.rng.random() < 0.7 else str(self.rng.choice(
            [0, 1, -1, 7, 255, 1 << 31, 100000]))
        return self.emit("i1", f"icmp {self.rng.choice(ICMP)} i32 {a}, {b}")

    def logic(self) -> str:
        op = self.rng.choice(["and", "or", "xor", "not"])
        a = self.pick("i1")
        if op == "not":
            return self.emit("i1", f"xor i1 {a}, true")
        return self.emit("i1", f"{op} i1 {a}, {self.pick('i1')}")

    def select(self, t: str) -> str:
        if not self.has("i1"):
            self.fcmp(t) if t != "i32" else self.icmp()
        c, a, b = self.pick("i1", 4), self.pick(t), self.pick(t)
        bound = max(self.bounded[a], self.bounded[b]) \
            if a in self.bounded and b in self.bounded else None
        return self.emit(t, f"select i1 {c}, {t} {a}, {t} {b}", bound)

    def minmax(self, t: str) -> str:
        suffix = {"float": "f32", "half": "f16", "double": "f64"}[t]
        which = self.rng.choice(["minnum", "maxnum", "minimum", "maximum"])
        a, b = self.pick(t), self.pick(t)
        bound = max(self.bounded[a], self.bounded[b]) \
            if a in self.bounded and b in self.bounded else None
        return self.emit(t, f"call {t} @llvm.{which}.{suffix}({t} {a}, {t} {b})", bound)

    def sign(self, t: str) -> str:
        suffix = {"float": "f32", "half": "f16"}[t]
        op = self.rng.choice(["fabs", "fneg", "copysign"])
        a = self.pick(t)
        if op == "fneg":
            return self.emit(t, f"fneg {t} {a}", self.bounded.get(a))
        if op == "fabs":
            return self.emit(t, f"call {t} @llvm.fabs.{suffix}({t} {a})", self.bounded.get(a))
        # the sign from a parameter or a bounded value: a computed NaN's sign is open
        signs = [p for ty, p in self.params if ty == t] + \
            [v for v in self.pools[t] if v in self.bounded]
        return self.emit(t, f"call {t} @llvm.copysign.{suffix}({t} {a}, {t} "
                            f"{self.rng.choice(signs)})", self.bounded.get(a))

    def diamond(self, t: str, arm) -> None:
        """if (compare) { arm } else { arm }, joined by a phi of type t."""
        c = self.pick("i1", 3) if self.has("i1") else self.fcmp(t)
        k = self.count
        self.lines.append(f"  br i1 {c}, label %t{k}, label %e{k}")
        saved = {ty: list(pool) for ty, pool in self.pools.items()}
        self.lines.append(f"t{k}:")
        x = arm()
        self.lines.append(f"  br label %j{k}")
        self.pools = {ty: list(pool) for ty, pool in saved.items()}
        self.lines.append(f"e{k}:")
        y = arm()
        self.lines.append(f"  br label %j{k}")
        self.pools = saved
        self.lines.append(f"j{k}:")
        bound = max(self.bounded[x], self.bounded[y]) \
            if x in self.bounded and y in self.bounded else None
        self.emit(t, f"phi {t} [ {x}, %t{k} ], [ {y}, %e{k} ]", bound)

    def text(self, ret: str, value: str) -> str:
        head = ", ".join(f"{t} {p}" for t, p in self.params)
        return "\n".join([f"define {ret} @f({head}) {{", "entry:", *self.lines,
                          f"  ret {ret} {value}", "}", *self.declarations(), ""])

    def declarations(self) -> list[str]:
        """`declare` lines for the intrinsics called (LLVM 14 wants them)."""
        seen = {}
        for line in self.lines:
            if m := CALL.search(line):
                types = ", ".join(a.rsplit(" ", 1)[0] for a in m[3].split(", "))
                seen.setdefault(m[2], f"declare {m[1]} @{m[2]}({types})")
        return [seen[name] for name in sorted(seen)]

    def fold(self, t: str, op: str, count: int) -> str:
        """The last `count` values of type t combined, so that most stay live."""
        values = self.pools[t][-count:]
        total = values[-1]
        for v in values[:-1]:
            total = self.emit(t, f"{op} {t} {total}, {v}")
        return total

    def to_i32(self, c: str) -> str:
        return self.emit("i32", f"zext i1 {c} to i32")


def _run(f: Function, ops: int, table: dict, branch_type: str) -> None:
    names, weights = zip(*table.items())
    done = 0
    while done < ops:
        if f.rng.random() < 0.12 and done + 6 < ops:
            f.diamond(branch_type, lambda: (f.arith(branch_type), f.arith(branch_type))[-1]
                      if branch_type != "i32" else f.emit(
                          "i32", f"add i32 {f.pick('i32')}, {f.pick('i32')}"))
            done += 4
            continue
        f.rng.choices(names, weights)[0](f)
        done += 1


def fcmp_kind(ops: int, seed: int, fmf: bool) -> str:
    """f32 and i32 compares under every predicate, i1 logic, selects; returns i32."""
    rng = random.Random(f"fcmp-{ops}-{seed}")
    f = Function(rng, [("float", "%x0"), ("float", "%x1"), ("float", "%x2"),
                       ("i32", "%n0"), ("i32", "%n1")], fmf)
    if fmf:
        f.clamp("float", "%x0")
        f.clamp("float", "%x1")
    f.fcmp("float")
    f.icmp()
    table = {lambda f: f.fcmp("float"): 5, lambda f: f.icmp(): 2, lambda f: f.logic(): 3,
             lambda f: f.select("float"): 2, lambda f: f.select("i32"): 2,
             lambda f: f.arith("float"): 2, lambda f: f.to_i32(f.pick("i1")): 1,
             lambda f: f.emit("i32", f"add i32 {f.pick('i32')}, {f.pick('i32')}"): 1}
    _run(f, ops, table, "float")
    for k, c in enumerate(f.pools["i1"][-6:]):  # the last compares, a bit each
        f.emit("i32", f"shl i32 {f.to_i32(c)}, {k}")
    return f.text("i32", f.fold("i32", "xor", 10))


def fsel_kind(ops: int, seed: int, fmf: bool) -> str:
    """f32 min/max in all four flavours, fabs/copysign/fneg, selects and phis; returns
    float (compared payload-free)."""
    rng = random.Random(f"fsel-{ops}-{seed}")
    f = Function(rng, [("float", f"%x{i}") for i in range(4)], fmf)
    if fmf:
        for x in ("%x0", "%x1", "%x2"):
            f.clamp("float", x)
    f.fcmp("float")
    table = {lambda f: f.minmax("float"): 4, lambda f: f.sign("float"): 3,
             lambda f: f.select("float"): 3, lambda f: f.fcmp("float"): 2,
             lambda f: f.arith("float"): 3, lambda f: f.logic(): 1}
    _run(f, ops, table, "float")
    return f.text("float", f.fold("float", "fadd", 6))


def half_kind(ops: int, seed: int, fmf: bool) -> str:
    """half and <2 x half> arithmetic and compares, conversions to and from float and
    double; returns float."""
    rng = random.Random(f"half-{ops}-{seed}")
    f = Function(rng, [("half", "%h0"), ("half", "%h1"), ("<2 x half>", "%w0"),
                       ("float", "%x0")], fmf)
    if fmf:
        f.clamp("half", "%h0")
        f.clamp("half", "%h1")
    f.fcmp("half")

    def vector(f: Function) -> str:
        op = f.rng.choice(["fadd", "fsub", "fmul", "insert", "extract", "extract"])
        w = f.pick("<2 x half>")
        if op == "insert":
            return f.emit("<2 x half>", f"insertelement <2 x half> {w}, half "
                                        f"{f.pick('half')}, i32 {f.rng.randint(0, 1)}")
        if op == "extract":
            return f.emit("half", f"extractelement <2 x half> {w}, i32 {f.rng.randint(0, 1)}")
        return f.emit("<2 x half>", f"{op} <2 x half> {w}, {f.pick('<2 x half>')}")

    def convert(f: Function) -> str:
        op = f.rng.choice(["h2f", "f2h", "h2d", "d2h", "f2d", "d2f", "i2h"])
        if op == "h2f":
            h = f.pick("half")
            return f.emit("float", f"fpext half {h} to float", f.bounded.get(h))
        if op == "f2h":
            return f.emit("half", f"fptrunc float {f.pick('float')} to half")
        if op == "h2d":
            return f.emit("double", f"fpext half {f.pick('half')} to double")
        if op == "d2h" and f.has("double"):
            return f.emit("half", f"fptrunc double {f.pick('double')} to half")
        if op == "f2d":
            return f.emit("double", f"fpext float {f.pick('float')} to double")
        if op == "d2f" and f.has("double"):
            d = f.emit("double", f"fadd double {f.pick('double')}, {f.pick('double')}")
            return f.emit("float", f"fptrunc double {d} to float")
        n = f.emit("i32", f"fptosi half {f.clamp('half', f.pick('half'))} to i32")
        return f.emit("half", f"sitofp i32 {n} to half")

    table = {lambda f: f.arith("half"): 4, lambda f: f.fcmp("half"): 2,
             lambda f: f.select("half"): 2, vector: 3, convert: 3,
             lambda f: f.minmax("half"): 1, lambda f: f.sign("half"): 1,
             lambda f: f.arith("float"): 1}
    _run(f, ops, table, "half")
    f.emit("float", f"fpext half {f.fold('half', 'fadd', 4)} to float")
    lane = f.emit("half", f"extractelement <2 x half> {f.pick('<2 x half>', 2)}, i32 1")
    f.emit("float", f"fpext half {lane} to float")
    return f.text("float", f.fold("float", "fadd", 3))


def mixed_kind(ops: int, seed: int, fmf: bool) -> str:
    """i32, i1, f32 and f64 meeting through conversions; returns i32."""
    rng = random.Random(f"mixed-{ops}-{seed}")
    f = Function(rng, [("i32", "%n0"), ("i32", "%n1"), ("float", "%x0"),
                       ("double", "%d0")], fmf)
    f.clamp("float", "%x0")
    f.icmp()

    def to_float(f: Function) -> str:
        op, t = f.rng.choice(["sitofp", "uitofp"]), f.rng.choice(["float", "double"])
        return f.emit(t, f"{op} i32 {f.pick('i32')} to {t}")

    def to_int(f: Function) -> str:
        t = f.rng.choice(["float", "float", "double"])
        if f.rng.random() < 0.4:  # the saturating intrinsics: every input defined
            op = f.rng.choice(["fptosi", "fptoui"])
            suffix = "f32" if t == "float" else "f64"
            return f.emit("i32", f"call i32 @llvm.{op}.sat.i32.{suffix}({t} {f.pick(t)})")
        x = f.clamp(t, f.pick(t))
        if f.rng.random() < 0.5:
            return f.emit("i32", f"fptosi {t} {x} to i32")
        a = f.emit(t, f"call {t} @llvm.fabs.{'f32' if t == 'float' else 'f64'}({t} {x})",
                   BOUND)
        return f.emit("i32", f"fptoui {t} {a} to i32")

    def int_op(f: Function) -> str:
        op = f.rng.choice(["add", "sub", "mul", "and", "or", "xor", "lshr", "ashr"])
        b = str(f.rng.randint(1, 31)) if op in ("lshr", "ashr") else f.pick("i32")
        return f.emit("i32", f"{op} i32 {f.pick('i32')}, {b}")

    def extend(f: Function) -> str:
        return f.emit("i32", f"{f.rng.choice(['zext', 'sext'])} i1 {f.pick('i1')} to i32")

    table = {to_float: 3, to_int: 3, int_op: 3, extend: 1, lambda f: f.icmp(): 2,
             lambda f: f.fcmp("float"): 2, lambda f: f.fcmp("double", ("olt", "uge", "one",
                                                                        "ueq")): 1,
             lambda f: f.logic(): 1, lambda f: f.select("i32"): 2,
             lambda f: f.arith("float"): 2, lambda f: f.arith("double"): 1}
    _run(f, ops, table, "i32")
    for c in f.pools["i1"][-3:]:
        f.to_i32(c)
    return f.text("i32", f.fold("i32", "xor", 8))


GENERATORS = {"fcmp": fcmp_kind, "fsel": fsel_kind, "half": half_kind, "mixed": mixed_kind}
OPS = (20, 30, 45, 60)  # IR operations before the final fold; PTX 20 to 100 instructions


# ---- the two compiles ------------------------------------------------------------------



# ---- planted differences: edges a random input almost never hits ----------------------

def _ulp(m: re.Match) -> str:  # a float immediate one ulp up
    return f"{m[1]}{int(m[2], 16) + 1:08X}"


def _or_equal(m: re.Match) -> str:  # lt as le, gt as ge
    return f"setp.{m[1][0]}e{m[2]}"


def _zero(m: re.Match) -> str:  # +0 as -0 and back
    return m[1] + ("80000000" if m[2] == "00000000" else "00000000")


# (name, pattern of an instruction line, replacement), most telling first; `min.NaN`
# is sm_80's (NEEDS_SM80)
NEEDS_SM80 = {"nan-min"}
MUTATIONS = [
    ("unordered-flip", re.compile(r"\bsetp\.(eq|ne|lt|le|gt|ge)\.(f16|f32|f64)"),
     r"setp.\1u.\2"),
    ("ordered-flip", re.compile(r"\bsetp\.(eq|ne|lt|le|gt|ge)u\.(f16|f32|f64)"),
     r"setp.\1.\2"),
    ("strict-flip", re.compile(r"\bsetp\.(lt|gt)(u?\.(?:f16|f32|f64))"), _or_equal),
    # (of two registers: a clamp's min against a constant never sees a NaN beside it)
    ("nan-min", re.compile(r"\b(min|max)\.(f16|f32)(?=\s+%\w+, %\w+, %\w+;)"),
     r"\1.NaN.\2"),
    ("nan-min-dropped", re.compile(r"\b(min|max)\.NaN\.(f16|f32)"), r"\1.\2"),
    ("zero-sign", re.compile(r"(\b0f)(00000000|80000000)\b"), _zero),
    ("ulp", re.compile(r"(\bsetp\.\w+\.f32\s+%p\d+, %f\d+, 0f)([0-9A-F]{8})"), _ulp),
    ("signed-flip", re.compile(r"\bsetp\.(lt|gt|le|ge)\.s32"), r"setp.\1.u32"),
    ("int-strict-flip", re.compile(r"\bsetp\.(lt|gt)(\.[us]32)"), _or_equal),
]


def plant(ptx: str, rng: random.Random) -> tuple[str, str] | None:
    """`ptx` with one instruction changed, and the mutation's name; None if none applies."""
    sm80 = int(re.search(r"\.target sm_(\d+)", ptx)[1]) >= 80 if ".target" in ptx else True
    return planted_pairs.plant(ptx, rng, [m for m in MUTATIONS
                                          if sm80 or m[0] not in NEEDS_SM80])


def instructions(ptx: str) -> int:
    """PTX instructions in the function body (lines ending in ';' past the signature)."""
    body = ptx[ptx.find("{"):]
    return sum(1 for line in body.split("\n")
               if line.strip().endswith(";") and not line.strip().startswith((".reg", "//")))


# ---- the corpus --------------------------------------------------------------------------

def pairs(kinds=KINDS, seeds=SEEDS, compilers=COMPILERS, first_seed=FIRST_SEED):
    """(name, kind, ops, compiler, target, seed, fmf), in a fixed order."""
    for kind in kinds:
        for compiler in compilers:
            for seed in range(first_seed, first_seed + seeds):
                ops = OPS[seed % len(OPS)]
                target = "sm_70" if seed % 4 == 3 else "sm_80"
                fmf = seed % 2 == 1
                yield (f"{kind}-{compiler}-{seed}", kind, ops, compiler, target, seed, fmf)


def write(out: Path, kinds=KINDS, seeds=SEEDS, compilers=COMPILERS,
          audit: bool = True, first_seed: int = FIRST_SEED) -> tuple[int, list[str]]:
    """Both compiles of every pair, its planted twin (labelled by the ptxas audit of
    planted_pairs.py unless not `audit`), and the two index files."""
    corpus = planted_pairs.Corpus(out, planted_pairs.find_assembler() if audit else None)
    failed = []
    for name, kind, ops, compiler, target, seed, fmf in pairs(kinds, seeds, compilers, first_seed):
        ir = GENERATORS[kind](ops, seed, fmf)
        try:
            o0, o2 = planted_pairs.COMPILE[compiler](ir, target)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            why = getattr(e, "stderr", None) or str(e)
            failed.append(f"{name}: {why.strip().splitlines()[0][:200]}")
            continue
        (out / f"{name}.ll").write_text(ir)
        corpus.add(name, o0, o2, plant(o2, random.Random(name)), kind=kind, ops=ops,
                   compiler=compiler, target=target, seed=seed, fmf=fmf,
                   ptx=instructions(o2))
    return corpus.save(), failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="kinds, e.g. fcmp,half (default: all)")
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--first-seed", type=int, default=FIRST_SEED,
                    help=f"a fresh held-out set: other seeds (default {FIRST_SEED}; "
                         "2000 wrote docs/sweep-benchmark.md's second set)")
    ap.add_argument("--compilers", default=",".join(COMPILERS))
    ap.add_argument("--no-audit", action="store_true",
                    help="label the planted pairs as planted, without ptxas's audit")
    args = ap.parse_args()
    kinds = tuple(filter(None, args.only.split(","))) or KINDS
    compilers = tuple(filter(None, args.compilers.split(",")))
    if unknown := (set(kinds) - set(KINDS)) | (set(compilers) - set(COMPILERS)):
        sys.exit(f"unknown kind or compiler: {', '.join(sorted(unknown))}")
    n, failed = write(args.out, kinds, args.seeds, compilers, not args.no_audit,
                      args.first_seed)
    print(f"{n} pairs in {args.out / 'pairs.jsonl'} (labels: {args.out / 'manifest.jsonl'})")
    for line in failed:
        print(f"not compiled: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
