"""Generated LLVM IR functions compiled two ways, the pairs issue 23 measures:
`llc-14 -O0` against `opt-14 -O2 | llc-14 -O2` (sm_80), each a function `f` of four
parameters that returns one value.

    python scripts/scale_functions.py OPS KIND [SEED] --out DIR   # DIR/KIND-OPS.O0.ptx, .O2.ptx

KIND: `int` (i32 add/sub/mul/and/or/xor/shifts by constants, constants mixed in), `intnomul`
(the same without mul), `float` (f32 fadd/fsub/fmul, fcmp + select, minnum/maxnum). About a
sixth of the operations sit in if/else diamonds joined by a phi (forward branches). The IR is
free of undefined behaviour and poison (shifts by less than the width, no flags, no
division), and of the min/max that opt folds to a value with another NaN (`folds`), so
the two compiles are equivalent.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
from pathlib import Path

OPS = {"int": ["add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr"],
       "intnomul": ["add", "sub", "and", "or", "xor", "shl", "lshr"],
       "float": ["fadd", "fsub", "fmul", "select", "minnum", "maxnum"]}
PREDICATES = {"i32": ["slt", "ult", "eq", "sgt"], "float": ["olt", "ugt", "oeq"]}


def generate(ops: int, kind: str, seed: int = 0) -> str:
    """The IR text of `f`, about `ops` operations of `kind`."""
    rng = random.Random(seed)
    t = "float" if kind == "float" else "i32"
    values = [f"%p{i}" for i in range(4)]
    lines = [f"define {t} @f({', '.join(f'{t} {p}' for p in values)}) {{", "entry:"]
    names = iter(range(1 << 30))

    # Which earlier value each value is to opt's value numbering (`same`), and the
    # min/max each stands for: what `folds` looks through.
    number: dict[str, str] = {}  # value -> the first value computing the same
    computed: dict[tuple, str] = {}  # (operation, operands' numbers) -> that value
    calls: dict[str, tuple[str, str, str]] = {}  # a min/max's number -> (op, a, b) numbers

    def same(r: str, key: tuple) -> None:
        """r computes `key`: the value that computed it first stands for it (more
        alike than opt finds is no harm: it only keeps min/max operands apart)."""
        number[r] = computed.setdefault(key, r)

    def numbered(v: str) -> str:
        return number.get(v, v)

    def operation() -> str:
        op, a, b = rng.choice(OPS[kind]), rng.choice(values[-12:]), rng.choice(values)
        while op in ("minnum", "maxnum") and folds(op, a, b):  # ends: some parameter never folds
            b = rng.choice(values)
        r = f"%v{next(names)}"
        x, y = numbered(a), numbered(b)
        if op in ("shl", "lshr", "ashr"):
            lines.append(f"  {r} = {op} {t} {a}, {rng.randint(1, 31)}")
        elif op == "select":
            c, compare = f"%c{next(names)}", rng.choice(['olt', 'ogt', 'oge', 'ule', 'une'])
            lines.append(f"  {c} = fcmp {compare} {t} {a}, {b}")
            lines.append(f"  {r} = select i1 {c}, {t} {a}, {t} {b}")
            if x == y:  # select c, v, v is v
                number[r] = x
            else:
                same(r, (op, compare, x, y))
        elif op in ("minnum", "maxnum"):
            lines.append(f"  {r} = call {t} @llvm.{op}.f32({t} {a}, {t} {b})")
            same(r, (op, *sorted((x, y))))
            calls[numbered(r)] = (op, x, y)
        elif t == "i32" and rng.random() < 0.3:
            lines.append(f"  {r} = {op} {t} {a}, {rng.randint(1, 1000)}")
        else:
            lines.append(f"  {r} = {op} {t} {a}, {b}")
            same(r, (op, *(sorted((x, y)) if op in ("fadd", "fmul") else (x, y))))
        values.append(r)
        return r

    def folds(op: str, a: str, b: str) -> bool:
        """opt folds m(x, x) and m(m(x, y), x) to their inner value (InstSimplify), which
        keeps x's NaN where PTX's min and max of two NaNs give any NaN: not equivalent.
        Operands are compared as opt numbers them (`same`)."""
        x, y = numbered(a), numbered(b)
        return x == y or any(calls.get(u, ("",))[0] == op and v in calls[u][1:]
                             for u, v in ((x, y), (y, x)))

    done, block = 0, 0
    while done < ops:
        if rng.random() < 0.15 and done + 6 < ops:  # if/else joined by a phi
            block += 1
            a, b = rng.choice(values[-8:]), rng.choice(values)
            compare = "icmp" if t == "i32" else "fcmp"
            lines.append(f"  %b{block} = {compare} {rng.choice(PREDICATES[t])} {t} {a}, {b}")
            lines.append(f"  br i1 %b{block}, label %t{block}, label %e{block}")
            before = list(values)
            lines.append(f"t{block}:")
            operation()
            x = operation()
            lines.append(f"  br label %j{block}")
            values[:] = before
            lines.append(f"e{block}:")
            y = operation()
            lines.append(f"  br label %j{block}")
            values[:] = before
            r = f"%v{next(names)}"
            lines += [f"j{block}:", f"  {r} = phi {t} [ {x}, %t{block} ], [ {y}, %e{block} ]"]
            if numbered(x) == numbered(y):  # a phi of one value is that value
                number[r] = numbered(x)
            else:
                same(r, ("phi", f"%b{block}", numbered(x), numbered(y)))
            values.append(r)
            done += 5
        else:
            operation()
            done += 1
    total = values[-1]  # the last values combined, so that most stay live
    for v in values[-10:-1]:
        r = f"%v{next(names)}"
        lines.append(f"  {r} = {'xor' if t == 'i32' else 'fadd'} {t} {total}, {v}")
        total = r
    lines += [f"  ret {t} {total}", "}"]
    if t == "float":
        lines += ["declare float @llvm.minnum.f32(float, float)",
                  "declare float @llvm.maxnum.f32(float, float)"]
    return "\n".join(lines) + "\n"


def compile_pair(ir: str, stem: Path) -> tuple[Path, Path]:
    """`stem`.O0.ptx (llc-14 -O0) and `stem`.O2.ptx (opt-14 -O2 | llc-14 -O2), sm_80."""
    llc = ["llc-14", "-march=nvptx64", "-mcpu=sm_80"]
    o0, o2 = stem.with_suffix(".O0.ptx"), stem.with_suffix(".O2.ptx")
    subprocess.run([*llc, "-O0", "-o", str(o0)], input=ir, text=True, check=True)
    optimised = subprocess.run(["opt-14", "-O2", "-S"], input=ir, text=True, check=True,
                               capture_output=True).stdout
    subprocess.run([*llc, "-O2", "-o", str(o2)], input=optimised, text=True, check=True)
    return o0, o2


def available() -> bool:
    return all(shutil.which(tool) for tool in ("llc-14", "opt-14"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ops", type=int)
    ap.add_argument("kind", choices=sorted(OPS))
    ap.add_argument("seed", type=int, nargs="?", default=0)
    ap.add_argument("--out", type=Path, default=Path("."))
    args = ap.parse_args()
    if not available():
        sys.exit("needs llc-14 and opt-14")
    args.out.mkdir(parents=True, exist_ok=True)
    for path in compile_pair(generate(args.ops, args.kind, args.seed),
                             args.out / f"{args.kind}-{args.ops}"):
        print(path)


if __name__ == "__main__":
    main()
