"""Big modules of compiler shape, for reading one function out of many (issue 40, item 4).

    python scripts/big_modules.py 10 out/       # out/big.ll and out/big.ptx, ~10 MB each

`ir(functions, seed)` writes LLVM IR as a front end hands it to llc: module globals
(`addrspace(1)` tables, some initialised), helpers `hN` (straight-line arithmetic,
compares and selects on one type, some calling an earlier helper of that type) and
functions `fN` (loads through a pointer argument, a helper called, a branch to one of
two stores), every eighth a kernel (`ptx_kernel`: an `.entry`) that also loads from a
global (ptxsmt's IR reader stops there: "constant '@g..' does not start with its
type", exit 2).
`ptx(text)` is what llvmlite's NVPTX backend (LLVM's llc) emits for it: `.func`s and
`.entry`s calling each other through `call.uni`, `.global` tables. The same seed gives
the same IR; the PTX is that LLVM's output for it.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (type, compare, predicates, binary operations, a constant)
FAMILIES = (("i32", "icmp", ("slt", "ult", "eq", "ne", "sgt", "uge"),
             ("add", "sub", "mul", "and", "or", "xor", "shl", "lshr"), "7"),
            ("i64", "icmp", ("slt", "ult", "eq", "ne", "sle", "ugt"),
             ("add", "sub", "mul", "and", "xor", "ashr"), "3"),
            ("i16", "icmp", ("slt", "ult", "eq", "ne"), ("add", "sub", "and", "or"), "5"),
            ("float", "fcmp", ("olt", "ogt", "oeq", "une", "ult", "uge", "ord", "uno"),
             ("fadd", "fsub", "fmul"), "2.0"),
            ("double", "fcmp", ("olt", "ole", "one", "ueq", "ugt"), ("fadd", "fmul"), "0.5"))
TABLES = 64  # the globals a kernel loads from (a big module has more)
HELPER_DEPTH = 3  # a helper calls helpers at most this deep (the IR reader inlines 8)


def _arithmetic(rng: random.Random, family, values: list[str], lines: list[str],
                steps: int) -> None:
    t, compare, predicates, ops, constant = family
    for i in range(steps):
        lines.append(f"  %x{i} = {rng.choice(ops)} {t} {rng.choice(values)}, "
                     f"{rng.choice([*values, constant])}")
        lines.append(f"  %c{i} = {compare} {rng.choice(predicates)} {t} "
                     f"{rng.choice(values)}, {rng.choice(values)}")
        lines.append(f"  %s{i} = select i1 %c{i}, {t} {rng.choice(values)}, "
                     f"{t} %x{i}")
        values += [f"%x{i}", f"%s{i}"]


def ir(functions: int, seed: int = 0) -> str:
    """An IR module of `functions` helpers and as many functions (see the docstring)."""
    rng, tables_rng = random.Random(seed), random.Random(seed + 1)
    out = ['target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"',
           'target triple = "nvptx64-nvidia-cuda"', ""]
    tables = []  # drawn apart, so fN is the same function in a module of any size
    for g in range(max(TABLES, functions // 50)):
        t = tables_rng.choice(FAMILIES)[0]
        suffix = ".0" if t in ("float", "double") else ""
        init = (f"[{', '.join(f'{t} {tables_rng.randint(0, 9)}{suffix}' for _ in range(4))}]"
                if tables_rng.random() < 0.5 else "zeroinitializer")
        out.append(f"@g{g} = addrspace(1) global [4 x {t}] {init}, align 8")
        tables.append((g, t))
    out.append("")
    helpers: dict[str, list[tuple[int, int]]] = {f[0]: [] for f in FAMILIES}  # type -> (n, depth)
    for n in range(functions):
        family = rng.choice(FAMILIES)
        t = family[0]
        lines = [f"define {t} @h{n}({t} %a, {t} %b) {{"]
        values = ["%a", "%b"]
        _arithmetic(rng, family, values, lines, rng.randint(2, 6))
        depth = 0
        callees = [c for c in helpers[t] if c[1] < HELPER_DEPTH]
        if callees and rng.random() < 0.5:
            callee, depth = rng.choice(callees[-20:])
            depth += 1
            lines.append(f"  %r = call {t} @h{callee}({t} {rng.choice(values)}, "
                         f"{t} {rng.choice(values)})")
            values.append("%r")
        lines += [f"  ret {t} {values[-1]}", "}", ""]
        helpers[t].append((n, depth))
        out += lines

        family = rng.choice(FAMILIES)
        t = family[0]
        kernel = "ptx_kernel " if n % 8 == 7 else ""
        lines = [f"define {kernel}void @f{n}(ptr %p, {t} %a, {t} %b, i32 %n) {{", "entry:"]
        values = ["%a", "%b"]
        for i in range(rng.randint(1, 3)):
            lines += [f"  %q{i} = getelementptr inbounds {t}, ptr %p, i64 {i + 1}",
                      f"  %l{i} = load {t}, ptr %q{i}, align 4"]
            values.append(f"%l{i}")
        typed = [g for g, gt in tables[:TABLES] if gt == t]
        if typed and kernel:
            g = rng.choice(typed)
            lines += [f"  %gp = getelementptr inbounds {t}, ptr addrspace(1) @g{g}, "
                      f"i64 {rng.randint(0, 3)}",
                      f"  %gl = load {t}, ptr addrspace(1) %gp, align 4"]
            values.append("%gl")
        _arithmetic(rng, family, values, lines, rng.randint(2, 5))
        if helpers[t] and rng.random() < 0.7:
            callee = rng.choice(helpers[t][-50:])[0]
            lines.append(f"  %r = call {t} @h{callee}({t} {rng.choice(values)}, "
                         f"{t} {rng.choice(values)})")
            values.append("%r")
        lines += [f"  %cc = icmp slt i32 %n, {rng.randint(1, 100)}",
                  "  br i1 %cc, label %then, label %else", "then:",
                  f"  store {t} {rng.choice(values)}, ptr %p, align 4", "  br label %done",
                  "else:", f"  %e = getelementptr inbounds {t}, ptr %p, i64 1",
                  f"  store {t} {values[-1]}, ptr %e, align 4", "  br label %done", "done:",
                  "  ret void", "}", ""]
        out += lines
    return "\n".join(out)


def ir_of_size(megabytes: float, seed: int = 0) -> str:
    """An `ir` module of about `megabytes` MB (10^6 bytes)."""
    per = len(ir(200, seed)) / 200
    return ir(max(1, round(megabytes * 1e6 / per)), seed)


def ptx(text: str) -> str:
    """What LLVM's NVPTX backend (inside llvmlite, -O2, sm_80) writes for IR `text`."""
    from ptxsmt.llvm.module import compile_to_ptx
    return compile_to_ptx(text)


def ptx_of_size(megabytes: float, seed: int = 0) -> str:
    """A `ptx` module of about `megabytes` MB."""
    per = len(ptx(ir(200, seed))) / 200
    return ptx(ir(max(1, round(megabytes * 1e6 / per)), seed))


def main() -> None:
    megabytes, into = float(sys.argv[1]), Path(sys.argv[2])
    into.mkdir(parents=True, exist_ok=True)
    (into / "big.ll").write_text(ir_of_size(megabytes))
    (into / "big.ptx").write_text(ptx_of_size(megabytes))


if __name__ == "__main__":
    main()
