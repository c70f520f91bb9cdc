"""The fixed benchmark of issue 44: generated IR functions compiled two ways, `-O0`
against `-O2` (llc-14: `llc -O0` against `opt -O2 | llc -O2`; LLVM 22, the one inside
llvmlite: no passes and codegen -O0 against its -O2 pipeline and codegen -O2; sm_80),
each pair as written and again with one planted difference in the -O2 side.

    python scripts/sweep_corpus.py --out DIR [--only KIND,KIND] [--sizes 50,100] [--seeds 2]

writes DIR/NAME.O0.ptx, DIR/NAME.O2.ptx for each pair, DIR/pairs.jsonl (the lines of
`ptxsmt equiv --batch`) and DIR/manifest.jsonl (one object a line, the same order:
name, kind, ops, compiler, seed, `planted` (the mutation, or null), for a planted
pair `masked` and `audit` (ptxas's evidence), and `expect`, "equivalent" or
"different": scripts/planted_pairs.py). Everything is drawn from fixed seeds: the same tools give
the same bytes. The default is 9 kinds x 2 compilers (bf16 LLVM 22 only) x 4 sizes
(50, 100, 300, 1,000 IR operations) x 4 seeds = 272 pairs, and a planted twin of
each where a mutation applies to its -O2 side: 542 pairs (llc-14 and LLVM 22 of 2026).

Kinds: `int`, `intnomul`, `float` (scripts/scale_functions.py), `wide-int` (udiv/urem by
constants, masked shifts, selects) and `wide-float` (eight fcmp predicates;
scripts/wide_functions.py), `half` and `bf16` (fadd/fsub/fmul, fcmp + select over half
or bfloat; llc-14 cannot select bf16 arithmetic: LLVM 22 only), `mixed` (i32 and float
values meeting through sitofp/uitofp, bitcast and zext of a compare), `div` (udiv, sdiv,
urem, srem by constants, powers of two among them, and by variables kept nonzero and
positive, so the IR has no undefined behaviour).

A planted difference changes one instruction of the -O2 PTX: the seed picks a kind of
mutation among those that apply, and an instruction it applies to. The kinds: a magic
multiplier of a division by a
constant one off (wrong only for large dividends), `lt` as `le` (wrong only where the
two are equal), an ordered float compare as unordered or back (wrong only at NaN), a
signed compare as unsigned (wrong where the signs differ), `min`/`max` swapped (wrong
where they differ: ±0 and NaN cases included), an integer immediate one off. A
mutation of dead or masked code leaves the pair equal: such a pair is labelled
"different" unless ptxas assembles both -O2 sides to the same SASS (then "equivalent",
`"masked": true`; scripts/planted_pairs.py). A label is evidence, not a proof: a
verdict against it is reported (scripts/check_results.py), not counted as wrong without
a look. The equal pairs are labelled "equivalent" for the same reason (the generators
avoid what PTX's open NaNs make unequal; see docs/scale.md).
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from pathlib import Path

import planted_pairs
import scale_functions
import wide_functions

SIZES = (50, 100, 300, 1000)
SEEDS = 4
COMPILERS = ("llc14", "llvm22")


# ---- the new kinds -----------------------------------------------------------------------

def small_float(ops: int, t: str, seed: int) -> str:
    """`t` (half or bfloat) fadd/fsub/fmul and fcmp + select, diamonds joined by a phi."""
    rng = random.Random(f"{t}-{ops}-{seed}")
    values = [f"%p{i}" for i in range(4)]
    lines = [f"define {t} @f({', '.join(f'{t} {p}' for p in values)}) {{", "entry:"]
    names = iter(range(1 << 30))

    def operation(pool: list[str]) -> str:
        op, a, b = rng.choice(["fadd", "fsub", "fmul", "fadd", "select"]), \
            rng.choice(pool[-10:]), rng.choice(pool)
        r = f"%v{next(names)}"
        if op == "select":
            c = f"%c{next(names)}"
            lines.append(f"  {c} = fcmp {rng.choice(['olt', 'ogt', 'ule', 'une'])} {t} {a}, {b}")
            lines.append(f"  {r} = select i1 {c}, {t} {a}, {t} {b}")
        else:
            lines.append(f"  {r} = {op} {t} {a}, {b}")
        pool.append(r)
        return r
    _body(ops, rng, values, lines, names, operation, t, "fcmp olt", "fadd")
    return "\n".join(lines) + "\n"


def mixed(ops: int, seed: int) -> str:
    """i32 and float values: each side's arithmetic, and conversions between them."""
    rng = random.Random(f"mixed-{ops}-{seed}")
    ints, floats = ["%p0", "%p1"], ["%p2", "%p3"]
    lines = ["define i32 @f(i32 %p0, i32 %p1, float %p2, float %p3) {", "entry:"]
    names = iter(range(1 << 30))

    def operation(pool: list[str]) -> str:
        r = f"%v{next(names)}"
        ivals = [v for v in pool if v in ints] or ints
        fvals = [v for v in pool if v in floats] or floats
        op = rng.choice(["add", "xor", "mul", "lshr", "fadd", "fmul", "sitofp", "uitofp",
                         "bits", "fcmp"])
        a, b = rng.choice(ivals[-8:]), rng.choice(ivals)
        x, y = rng.choice(fvals[-8:]), rng.choice(fvals)
        if op == "lshr":
            lines.append(f"  {r} = lshr i32 {a}, {rng.randint(1, 31)}")
        elif op in ("add", "xor", "mul"):
            lines.append(f"  {r} = {op} i32 {a}, {b}")
        elif op in ("fadd", "fmul"):
            lines.append(f"  {r} = {op} float {x}, {y}")
        elif op in ("sitofp", "uitofp"):
            lines.append(f"  {r} = {op} i32 {a} to float")
        elif op == "bits":
            lines.append(f"  {r} = bitcast float {x} to i32")
        else:
            c = f"%c{next(names)}"
            lines.append(f"  {c} = fcmp {rng.choice(['olt', 'uge', 'oeq'])} float {x}, {y}")
            lines.append(f"  {r} = zext i1 {c} to i32")
        (floats if op in ("fadd", "fmul", "sitofp", "uitofp") else ints).append(r)
        pool.append(r)
        return r
    pool = ["%p0", "%p1", "%p2", "%p3"]
    done = 0
    while done < ops:
        operation(pool)
        done += 1
    total = ints[-1]
    for v in [*ints[-6:-1], *(f"%b{i}" for i in range(3))]:
        if v.startswith("%b"):  # the last floats' bits, so that they stay live
            lines.append(f"  {v} = bitcast float {floats[-1 - int(v[2:])]} to i32")
        r = f"%v{next(names)}"
        lines.append(f"  {r} = xor i32 {total}, {v}")
        total = r
    lines += [f"  ret i32 {total}", "}"]
    return "\n".join(lines) + "\n"


DIVISORS = (2, 3, 7, 10, 16, 25, 100, 1000, 641, 65537)


def div(ops: int, seed: int) -> str:
    """i32 division and remainder, signed and unsigned, by constants and by variables
    (`(b & 0xffff) | 1`: nonzero and positive), among adds, xors and products."""
    rng = random.Random(f"div-{ops}-{seed}")
    values = [f"%p{i}" for i in range(4)]
    lines = [f"define i32 @f({', '.join(f'i32 {p}' for p in values)}) {{", "entry:"]
    names = iter(range(1 << 30))

    def operation(pool: list[str]) -> str:
        op, a, b = rng.choice(["udiv", "sdiv", "urem", "srem", "add", "xor", "mul", "sub"]), \
            rng.choice(pool[-10:]), rng.choice(pool)
        r = f"%v{next(names)}"
        if op in ("add", "xor", "mul", "sub"):
            lines.append(f"  {r} = {op} i32 {a}, {b}")
        elif rng.random() < 0.6:
            c = rng.choice(DIVISORS)
            if op[0] == "s" and rng.random() < 0.3:
                c = -c
            lines.append(f"  {r} = {op} i32 {a}, {c}")
        else:
            m, d = f"%m{next(names)}", f"%d{next(names)}"
            lines.extend([f"  {m} = and i32 {b}, 65535", f"  {d} = or i32 {m}, 1",
                          f"  {r} = {op} i32 {a}, {d}"])
        pool.append(r)
        return r
    _body(ops, rng, values, lines, names, operation, "i32", "icmp ult", "xor")
    return "\n".join(lines) + "\n"


def _body(ops, rng, values, lines, names, operation, t, compare, combine) -> None:
    """`ops` operations, about a sixth in if/else diamonds joined by a phi, then the
    last values combined (so that most stay live) and returned."""
    done, block = 0, 0
    while done < ops:
        if rng.random() < 0.15 and done + 6 < ops:
            block += 1
            lines.append(f"  %b{block} = {compare} {t} {rng.choice(values[-8:])}, "
                         f"{rng.choice(values)}")
            lines += [f"  br i1 %b{block}, label %t{block}, label %e{block}", f"t{block}:"]
            arm = list(values)
            operation(arm)
            x = operation(arm)
            lines += [f"  br label %j{block}", f"e{block}:"]
            y = operation(list(values))
            r = f"%v{next(names)}"
            lines += [f"  br label %j{block}", f"j{block}:",
                      f"  {r} = phi {t} [ {x}, %t{block} ], [ {y}, %e{block} ]"]
            values.append(r)
            done += 5
        else:
            operation(values)
            done += 1
    total = values[-1]
    for v in values[-10:-1]:
        r = f"%v{next(names)}"
        lines.append(f"  {r} = {combine} {t} {total}, {v}")
        total = r
    lines += [f"  ret {t} {total}", "}"]


WIDE_FLOAT_WITHOUT = frozenset({"scaled", "fneg", "fabs", "fdiv"})  # open NaNs: unequal
KINDS = {
    "int": lambda n, s: scale_functions.generate(n, "int", s),
    "intnomul": lambda n, s: scale_functions.generate(n, "intnomul", s),
    "float": lambda n, s: scale_functions.generate(n, "float", s),
    "wide-int": lambda n, s: wide_functions.generate(n, "int", s),
    "wide-float": lambda n, s: wide_functions.generate(n, "float", s, WIDE_FLOAT_WITHOUT),
    "half": lambda n, s: small_float(n, "half", s),
    "bf16": lambda n, s: small_float(n, "bfloat", s),
    "mixed": mixed,
    "div": div,
}
LLVM22_ONLY = {"bf16"}  # llc-14 cannot select bf16 arithmetic


# ---- the two compiles ------------------------------------------------------------------



# ---- planted differences ---------------------------------------------------------------

def _magic(m: re.Match) -> str:  # a division's multiplier one off
    return f"{m[1]}{int(m[2]) + 1}"


# (name, pattern of an instruction line, replacement), rarest first
MUTATIONS = [
    ("magic+1", re.compile(r"(\bmul\.hi\.[us]32\s+%r\d+, %r\d+, )(-?\d{6,})"), _magic),
    ("lt-as-le", re.compile(r"\bsetp\.lt\.([us]\d+)"), r"setp.le.\1"),
    ("gt-as-ge", re.compile(r"\bsetp\.gt\.([us]\d+)"), r"setp.ge.\1"),
    ("ordered-as-unordered", re.compile(r"\bsetp\.(lt|gt|le|ge|eq)\.(f16|bf16|f32)"),
     r"setp.\1u.\2"),
    ("unordered-as-ordered", re.compile(r"\bsetp\.(lt|gt|le|ge|ne)u\.(f16|bf16|f32)"),
     r"setp.\1.\2"),
    ("signed-as-unsigned", re.compile(r"\bsetp\.(lt|gt|le|ge)\.s32"), r"setp.\1.u32"),
    ("min-as-max", re.compile(r"\bmin\.(f16|bf16|f32|s32|u32)"), r"max.\1"),
    ("immediate+1", re.compile(r"(\b(?:add|xor|and|or|mul\.lo)\.[a-z]\d+\s+%r\d+, %r\d+, )"
                               r"(\d+);"), lambda m: f"{m[1]}{int(m[2]) + 1};"),
]


def plant(ptx: str, rng: random.Random) -> tuple[str, str] | None:
    """`ptx` with one instruction changed, and the mutation's name; None if none applies."""
    return planted_pairs.plant(ptx, rng, MUTATIONS)


# ---- the corpus --------------------------------------------------------------------------

def pairs(kinds=tuple(KINDS), sizes=SIZES, seeds=SEEDS, compilers=COMPILERS):
    """(name, kind, ops, compiler, seed), in a fixed order."""
    for kind in kinds:
        for compiler in compilers:
            if kind in LLVM22_ONLY and compiler != "llvm22":
                continue
            for ops in sizes:
                for seed in range(seeds):
                    yield f"{kind}-{ops}-{compiler}-{seed}", kind, ops, compiler, seed


def write(out: Path, kinds, sizes, seeds, compilers, audit: bool = True) -> tuple[int, list[str]]:
    """Both compiles of every pair, its planted twin (labelled by the ptxas audit of
    planted_pairs.py unless not `audit`), and the two index files."""
    corpus = planted_pairs.Corpus(out, planted_pairs.find_assembler() if audit else None)
    failed = []
    for name, kind, ops, compiler, seed in pairs(kinds, sizes, seeds, compilers):
        try:
            o0, o2 = planted_pairs.COMPILE[compiler](KINDS[kind](ops, seed), "sm_80")
        except (subprocess.CalledProcessError, RuntimeError) as e:
            failed.append(f"{name}: {str(e).strip().splitlines()[0][:200]}")
            continue
        corpus.add(name, o0, o2, plant(o2, random.Random(name)), kind=kind, ops=ops,
                   compiler=compiler, seed=seed)
    return corpus.save(), failed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--only", default="", help="kinds, e.g. int,div (default: all)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--seeds", type=int, default=SEEDS)
    ap.add_argument("--compilers", default=",".join(COMPILERS))
    ap.add_argument("--no-audit", action="store_true",
                    help="label the planted pairs as planted, without ptxas's audit")
    args = ap.parse_args()
    kinds = tuple(filter(None, args.only.split(","))) or tuple(KINDS)
    compilers = tuple(filter(None, args.compilers.split(",")))
    if unknown := (set(kinds) - set(KINDS)) | (set(compilers) - set(COMPILERS)):
        sys.exit(f"unknown kind or compiler: {', '.join(sorted(unknown))}")
    if "llc14" in compilers and not scale_functions.available():
        sys.exit("needs llc-14 and opt-14 (or --compilers llvm22)")
    n, failed = write(args.out, kinds, tuple(int(s) for s in args.sizes.split(",")),
                      args.seeds, compilers, not args.no_audit)
    print(f"{n} pairs in {args.out / 'pairs.jsonl'} (labels: {args.out / 'manifest.jsonl'})")
    for line in failed:
        print(f"not compiled: {line}", file=sys.stderr)


if __name__ == "__main__":
    main()
