"""Generated PTX functions of n instructions, straight-line or with forward branches
that join, in the subset tests/ptx_interp.py runs (add, sub, mul.lo, shl, min, max,
selp, setp, mov, bra, st, ret): for the scaling tests of whole-function encoding and
the encode rows of scripts/bench.py.

Kinds:
  straight  arithmetic only, each instruction a new register over the last few
  diamond   if/else chains: `@p bra ELSE; ...; bra.uni JOIN; ELSE: ...; JOIN:`, both
            arms writing the register read after the join (a phi, as llc writes it), or
            only the first, the other keeping what a `mov` before the branch wrote
  triangle  guarded selects as llc writes them at -O0: `mov r, a; @p bra L; <op> r; L:`
  mixed     diamonds and triangles, some arms nested, some with a store or an early ret

Test-only: no z3, no ptxsmt.
"""

from __future__ import annotations

import random

KINDS = ("straight", "diamond", "triangle", "mixed")
PARAMS = ("f_a", "f_b", "f_c")
_OPS = ("add.s32", "sub.s32", "mul.lo.s32", "min.s32", "max.u32", "shl.b32")
_CMPS = ("lt.s32", "ge.u32", "eq.s32", "ne.s32", "gt.u32", "le.s32")


_COMMUTE = ("add", "mul")
_FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}


class _Writer:
    def __init__(self, seed: int, swapped: bool):
        self.rng = random.Random(seed)
        self.swapped = swapped
        self.lines: list[str] = []
        self.count = 0  # instructions (labels not counted)
        self.r = 0  # registers %r1.. used
        self.p = 0
        self.labels = 0
        self.pool = ["%r1", "%r2", "%r3"]  # recent values to read

    def emit(self, text: str) -> None:
        self.lines.append(f"\t{text};")
        self.count += 1

    def label(self, prefix: str) -> str:
        self.labels += 1
        return f"$L_{prefix}{self.labels}"

    def fresh(self) -> str:
        self.r += 1
        return f"%r{self.r}"

    def src(self) -> str:
        return self.rng.choice(self.pool[-4:])

    def operand(self) -> str:
        return self.src() if self.rng.random() < 0.8 else str(self.rng.randrange(-9, 100))

    def op(self, dest: str | None = None) -> str:
        dest = dest or self.fresh()
        name = self.rng.choice(_OPS)
        second = str(self.rng.randrange(1, 5)) if name.startswith("shl") else self.operand()
        first = self.src()
        if self.swapped and name.startswith(_COMMUTE):
            first, second = second, first
        self.emit(f"{name} {dest}, {first}, {second}")
        self.pool.append(dest)
        return dest

    def compare(self) -> str:
        self.p += 1
        a = self.src()
        b = self.rng.choice([x for x in self.pool[-5:] if x != a] or ["7"]) \
            if self.rng.random() < 0.8 else str(self.rng.randrange(-9, 100))
        cmp, t = self.rng.choice(_CMPS).split(".")
        if self.swapped and b.startswith("%"):
            cmp, a, b = _FLIP[cmp], b, a
        self.emit(f"setp.{cmp}.{t} %p{self.p}, {a}, {b}")
        return f"%p{self.p}"

    def diamond(self, depth: int = 0) -> None:
        phi = self.fresh()
        one_sided = self.rng.random() < 0.3  # only the arm that jumps writes the phi
        if one_sided:
            self.emit(f"mov.b32 {phi}, {self.src()}")
        p, other, join = self.compare(), self.label("else"), self.label("join")
        self.emit(f"@{p} bra {other}")
        pool = list(self.pool)
        for side in (0, 1):
            if side:
                self.lines.append(f"{other}:")
                self.pool = list(pool)
            for _ in range(self.rng.randrange(1, 3)):
                self.op()
            if depth < 1 and self.rng.random() < 0.2:
                self.diamond(depth + 1)
            if not (one_sided and side):
                self.emit(f"mov.b32 {phi}, {self.src()}")
            if not side:
                self.emit(f"bra.uni {join}")
        self.lines.append(f"{join}:")
        self.pool = [*pool, phi]

    def triangle(self) -> None:
        dest = self.fresh()
        self.emit(f"mov.b32 {dest}, {self.src()}")
        p, skip = self.compare(), self.label("skip")
        self.emit(f"@{p} bra {skip}")
        self.op(dest)
        self.lines.append(f"{skip}:")
        self.pool.append(dest)

    def store(self, offset: int) -> None:
        self.emit(f"st.global.u32 [%rd1+{4 * offset}], {self.src()}")

    def early_return(self) -> None:
        p, skip = self.compare(), self.label("go")
        self.emit(f"@!{p} bra {skip}")
        self.emit(f"st.param.b32 [func_retval0], {self.src()}")
        self.emit("ret")
        self.lines.append(f"{skip}:")


def branchy(n: int, kind: str, seed: int = 0, swapped: bool = False) -> str:
    """A `.func (.param .b32 func_retval0) f(f_a, f_b, f_c, f_o)` of about n
    instructions of `kind` (see the module docstring); f_o points to global memory.
    `swapped`: the same function spelled otherwise (the operands of add and mul
    swapped, each compare of two registers mirrored: `lt a, b` as `gt b, a`)."""
    w = _Writer(seed, swapped)
    for k, name in enumerate(PARAMS):
        w.emit(f"ld.param.u32 %r{k + 1}, [{name}]")
    w.r = len(PARAMS)
    w.emit("ld.param.u64 %rd1, [f_o]")
    stores = 0
    while w.count < n - 2:
        if kind == "straight":
            w.op()
        elif kind == "diamond":
            w.diamond()
        elif kind == "triangle":
            w.triangle()
        else:
            roll = w.rng.random()
            if roll < 0.35:
                w.diamond()
            elif roll < 0.7:
                w.triangle()
            elif roll < 0.75:
                w.early_return()
            else:
                w.op()
        if kind in ("straight", "mixed") and w.rng.random() < 0.03:
            w.store(stores % 16)
            stores += 1
    w.emit(f"st.param.b32 [func_retval0], {w.src()}")
    w.emit("ret")
    head = [".version 7.0", ".target sm_80", ".address_size 64", "",
            ".visible .func (.param .b32 func_retval0) f(.param .b32 f_a, .param .b32 f_b, "
            ".param .b32 f_c, .param .b64 f_o)", "{",
            f"\t.reg .pred %p<{w.p + 1}>;", f"\t.reg .b32 %r<{w.r + 1}>;", "\t.reg .b64 %rd<2>;"]
    return "\n".join([*head, *w.lines, "}", ""])
