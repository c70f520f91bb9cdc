"""NVVM intrinsics that are one PTX instruction. The NVVM IR specification defines
`llvm.nvvm.add.rm.f` as PTX's `add.rm.f32`, `llvm.nvvm.mulhi.i` as `mul.hi.s32`, and so
on: their meaning here is that instruction's (ptxsmt.sem, the terms the PTX side uses),
with operand poison propagating. The table only says which instruction;
tests/test_llvm_nvvm.py checks each entry against the instruction LLVM's own NVPTX
backend emits for the intrinsic.
"""

from __future__ import annotations

from functools import cache

import z3

from ..isa.body import parse_one
from ..sem.convert import sm80_form
from ..sem.families import semantics

ROUNDINGS = ("rn", "rz", "rm", "rp")
FLOAT = {"f": "f32", "d": "f64"}
INT = {"i": "s32", "ui": "u32", "ll": "s64", "ull": "u64"}


def _table() -> dict[str, str]:
    """intrinsic base name (after `llvm.`) -> the PTX instruction's spelling."""
    out = {}
    for r in ROUNDINGS:
        for op in ("add", "mul", "div", "fma"):
            out[f"nvvm.{op}.{r}.d"] = f"{op}.{r}.f64"
            out[f"nvvm.{op}.{r}.f"] = f"{op}.{r}.f32"
            out[f"nvvm.{op}.{r}.ftz.f"] = f"{op}.{r}.ftz.f32"
        out[f"nvvm.sqrt.{r}.f"] = f"sqrt.{r}.f32"
        out[f"nvvm.sqrt.{r}.ftz.f"] = f"sqrt.{r}.ftz.f32"
        out[f"nvvm.sqrt.{r}.d"] = f"sqrt.{r}.f64"
        out[f"nvvm.rcp.{r}.f"] = f"rcp.{r}.f32"
        out[f"nvvm.rcp.{r}.ftz.f"] = f"rcp.{r}.ftz.f32"
        out[f"nvvm.rcp.{r}.d"] = f"rcp.{r}.f64"
        # conversions: float -> integer round to an integer (cvt.rni etc.)
        for src, ft in FLOAT.items():
            for dst, it in INT.items():
                name = f"{src}2{dst}"
                out[f"nvvm.{name}.{r}"] = f"cvt.{r}i.{it}.{ft}"
                if src == "f":
                    out[f"nvvm.{name}.{r}.ftz"] = f"cvt.{r}i.ftz.{it}.{ft}"
                out[f"nvvm.{dst}2{src}.{r}"] = f"cvt.{r}.{ft}.{it}"
        out[f"nvvm.d2f.{r}"] = f"cvt.{r}.f32.f64"
        out[f"nvvm.d2f.{r}.ftz"] = f"cvt.{r}.ftz.f32.f64"
    for op, ptx in (("fmin", "min"), ("fmax", "max")):
        out[f"nvvm.{op}.f"] = f"{ptx}.f32"
        out[f"nvvm.{op}.ftz.f"] = f"{ptx}.ftz.f32"
        out[f"nvvm.{op}.nan.f"] = f"{ptx}.NaN.f32"
        out[f"nvvm.{op}.ftz.nan.f"] = f"{ptx}.ftz.NaN.f32"
        out[f"nvvm.{op}.d"] = f"{ptx}.f64"
    for suffix, t in (("s", "s16"), ("us", "u16"), ("i", "s32"), ("ui", "u32"), ("ll", "s64"),
                      ("ull", "u64")):
        out[f"nvvm.mulhi.{suffix}"] = f"mul.hi.{t}"
    # (mul24, sad and the .approx forms wait for their PTX semantics)
    for r in ("rn", "rz"):  # float to bfloat / half (two floats to <2 x ...>)
        for relu in ("", ".relu"):
            out[f"nvvm.f2bf16.{r}{relu}"] = f"cvt.{r}{relu}.bf16.f32"
            out[f"nvvm.ff2bf16x2.{r}{relu}"] = f"cvt.{r}{relu}.bf16x2.f32"
            out[f"nvvm.ff2f16x2.{r}{relu}"] = f"cvt.{r}{relu}.f16x2.f32"
    out["nvvm.f2tf32.rna"] = "cvt.rna.tf32.f32"
    out["nvvm.saturate.f"] = "cvt.sat.f32.f32"
    out["nvvm.saturate.ftz.f"] = "cvt.ftz.sat.f32.f32"
    out["nvvm.saturate.d"] = "cvt.sat.f64.f64"
    out["nvvm.prmt"] = "prmt.b32"
    return out


PTX = _table()
OPERANDS = ("a", "b", "c")


@cache
def _instruction(spelling: str, count: int):
    regs = ", ".join(f"%r{k}" for k in range(count + 1))
    return parse_one(f"{spelling} {regs};")


def ptx_types(base: str) -> tuple[str, list[str]]:
    """The PTX types of the destination and the operands of PTX[base] (the last type
    modifier is the source's, the one before it a cvt's destination)."""
    spelling = PTX[base]
    types = [m for m in spelling.split(".")[1:]
             if m[0] in "fsubt" and m.lstrip("bt")[1:].removesuffix("x2").isdigit()]
    count = 3 if spelling.startswith(("fma", "prmt")) else \
        2 if spelling.endswith("x2.f32") else \
        1 if spelling.startswith(("cvt", "sqrt", "rcp")) else 2
    return types[0], [types[-1]] * count


def apply(base: str, args: list[z3.BitVecRef]) -> z3.BitVecRef:
    """The destination of PTX[base] on these operand bits."""
    outside = sm80_form(PTX[base], args)  # cvt forms the variant catalogue does not hold
    if outside is not None:
        return outside
    ins = _instruction(PTX[base], len(args))
    padded = [*args, *[None] * (3 - len(args))]
    return semantics(ins, *padded)["d"]
