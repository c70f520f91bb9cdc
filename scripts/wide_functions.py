"""A second generator of issue 23's pairs, written apart from `scale_functions.py` so that
equivalence sweeping is not tuned to one generator's habits: a wider choice of
operations and of branch shapes, the same two compiles (`llc-14 -O0` against
`opt-14 -O2 | llc-14 -O2`, sm_80; `scale_functions.compile_pair`).

    python scripts/wide_functions.py OPS KIND [SEED] [--without OP,OP] --out DIR

KIND `int`: i32 add/sub/mul/and/or/xor, shifts by constants and by a masked register,
udiv/urem by constants (`div`, `rem`), products and sums with constants, icmp + select,
trunc to i8/i16 and back by zext or sext (`ext`). KIND `float`: f32 fadd/fsub/fmul,
products by 2, 0.5, 3, -1 and 1.25 (`scaled`), fcmp + select over eight predicates
(`select`), fneg, fabs, fdiv. Branches: if/else diamonds of one to three operations an
arm, and if-then triangles whose phi keeps the value from before the branch. No
undefined behaviour or poison. Not every float pair is equivalent under PTX: opt
rewrites `x * 2.0` as `x + x`, whose NaN the ISA leaves open (`scaled`, `fneg`,
`fabs`, `fdiv` make such pairs); `--without scaled,fneg,fabs,fdiv` leaves pairs whose
only difference is the compilers' own.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from scale_functions import available, compile_pair

OPS = {"int": ["add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "vshl",
               "div", "rem", "mulc", "addc", "ext", "select"],
       "float": ["fadd", "fsub", "fmul", "fmul", "fadd", "select", "scaled", "fneg",
                 "fdiv", "fabs"]}
COMPARES = {"int": ["slt", "ult", "eq", "ne", "sge", "ugt"],
            "float": ["olt", "ogt", "oge", "ule", "une", "oeq", "uno", "ord"]}


def generate(ops: int, kind: str, seed: int = 0, without: frozenset[str] = frozenset()) -> str:
    """The IR text of `f(a0, a1, a2, a3)`, about `ops` operations of `kind`."""
    rng = random.Random(seed * 7919 + ops)
    t = "float" if kind == "float" else "i32"
    choices = [op for op in OPS[kind] if op not in without]
    values = [f"%a{i}" for i in range(4)]
    lines = [f"define {t} @f({', '.join(f'{t} {v}' for v in values)}) {{", "entry:"]
    names = iter(range(1, 1 << 30))

    def new() -> str:
        return f"%t{next(names)}"

    def operation(pool: list[str]) -> str:
        op, a, b, r = rng.choice(choices), rng.choice(pool[-10:]), rng.choice(pool), new()
        if op in ("shl", "lshr", "ashr"):
            lines.append(f"  {r} = {op} i32 {a}, {rng.randint(0, 31)}")
        elif op == "vshl":
            m = new()
            lines.extend([f"  {m} = and i32 {b}, 31", f"  {r} = shl i32 {a}, {m}"])
        elif op in ("div", "rem"):
            lines.append(f"  {r} = u{op} i32 {a}, {rng.randint(2, 100)}")
        elif op == "mulc":
            lines.append(f"  {r} = mul i32 {a}, {rng.choice([3, 5, 8, 12, 255, 1024, -7])}")
        elif op == "addc":
            lines.append(f"  {r} = add i32 {a}, {rng.randint(-1000, 1000)}")
        elif op == "ext":
            m, w = new(), rng.choice([8, 16])
            lines.extend([f"  {m} = trunc i32 {a} to i{w}",
                          f"  {r} = {rng.choice(['zext', 'sext'])} i{w} {m} to i32"])
        elif op == "select":
            c = new()
            compare = "icmp" if t == "i32" else "fcmp"
            lines.extend([f"  {c} = {compare} {rng.choice(COMPARES[kind])} {t} {a}, {b}",
                          f"  {r} = select i1 {c}, {t} {a}, {t} {b}"])
        elif op == "scaled":
            factor = rng.choice(["2.0", "0.5", "3.0", "-1.0", "1.25"])
            lines.append(f"  {r} = fmul float {a}, {factor}")
        elif op == "fneg":
            lines.append(f"  {r} = fneg float {a}")
        elif op == "fabs":
            lines.append(f"  {r} = call float @llvm.fabs.f32(float {a})")
        else:
            lines.append(f"  {r} = {op} {t} {a}, {b}")
        pool.append(r)
        return r

    def branch(block: int) -> str:
        a, b = rng.choice(values[-8:]), rng.choice(values)
        compare = "icmp" if t == "i32" else "fcmp"
        lines.append(f"  %c{block} = {compare} {rng.choice(COMPARES[kind][:4])} {t} {a}, {b}")
        return a

    done, block, here = 0, 0, "entry"
    while done < ops:
        shape = rng.random()
        if shape < 0.2 and done + 8 < ops:  # a diamond, or a triangle (else keeps `kept`)
            block += 1
            kept = branch(block)
            triangle = shape >= 0.12
            other = f"J{block}" if triangle else f"E{block}"
            lines += [f"  br i1 %c{block}, label %T{block}, label %{other}", f"T{block}:"]
            arm = list(values)
            for _ in range(rng.randint(1, 3)):
                x = operation(arm)
            lines.append(f"  br label %J{block}")
            y, y_from = kept, here
            if not triangle:
                lines.append(f"E{block}:")
                arm = list(values)
                for _ in range(rng.randint(1, 3)):
                    y = operation(arm)
                lines.append(f"  br label %J{block}")
                y_from = f"E{block}"
            r = new()
            lines += [f"J{block}:", f"  {r} = phi {t} [ {x}, %T{block} ], [ {y}, %{y_from} ]"]
            values.append(r)
            here = f"J{block}"
            done += 4 if triangle else 6
        else:
            operation(values)
            done += 1
    total = values[-1]  # the last values combined, so that most stay live
    for v in values[-8:-1]:
        r = new()
        lines.append(f"  {r} = {'xor' if t == 'i32' else 'fadd'} {t} {total}, {v}")
        total = r
    lines += [f"  ret {t} {total}", "}", "declare float @llvm.fabs.f32(float)"]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", type=int)
    ap.add_argument("kind", choices=sorted(OPS))
    ap.add_argument("seed", type=int, nargs="?", default=0)
    ap.add_argument("--without", default="", help="operations left out, e.g. div,rem")
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    without = frozenset(filter(None, args.without.split(",")))
    if unknown := without - set(OPS[args.kind]):
        sys.exit(f"no such {args.kind} operation: {', '.join(sorted(unknown))}")
    if not available():
        sys.exit("needs llc-14 and opt-14")
    args.out.mkdir(parents=True, exist_ok=True)
    tag = f"-without-{'-'.join(sorted(without))}" if without else ""
    for path in compile_pair(generate(args.ops, args.kind, args.seed, without),
                             args.out / f"wide-{args.kind}-{args.ops}-{args.seed}{tag}"):
        print(path)


if __name__ == "__main__":
    main()
