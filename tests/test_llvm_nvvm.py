"""NVVM intrinsics that are one PTX instruction (ptxsmt/llvm/nvvm.py): each table entry
is the instruction LLVM's own NVPTX backend (llvmlite's LLVM) emits for the intrinsic,
what LLVM emits refines the IR, and a wrong rounding planted in the PTX is found."""

from __future__ import annotations

import re
import struct
from fractions import Fraction

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.function import read_function  # noqa: E402
from ptxsmt.llvm import nvvm, read_ir  # noqa: E402
from ptxsmt.llvm.module import compile_to_ptx  # noqa: E402
from ptxsmt.llvm.refine import ir_refines  # noqa: E402

IR_TYPE = {"f32": "float", "f64": "double", "s32": "i32", "u32": "i32", "s64": "i64",
           "u64": "i64", "b32": "i32"}


def _function(base: str) -> str:
    dest, sources = nvvm.ptx_types(base)
    ret = IR_TYPE[dest]
    args = ", ".join(f"{IR_TYPE[t]} %a{i}" for i, t in enumerate(sources))
    return (f"declare {ret} @llvm.{base}({', '.join(IR_TYPE[t] for t in sources)})\n"
            f"define {ret} @{base.replace('.', '_')}({args}) {{\n"
            f"  %r = call {ret} @llvm.{base}({args})\n  ret {ret} %r\n}}\n")


@pytest.fixture(scope="module")
def compiled():
    ir = "".join(_function(b) for b in sorted(nvvm.PTX))
    return ir, compile_to_ptx(ir, opt=2)


def test_each_intrinsic_is_the_instruction_llvm_emits(compiled):
    _, ptx = compiled
    bodies = dict(re.findall(r"\.func\s+\([^)]*\)\s+(\w+)\((.*?)\n}", ptx, re.S))
    wrong = {}
    for base, spelling in sorted(nvvm.PTX.items()):
        emitted = [line.split()[0] for line in bodies[base.replace(".", "_")].splitlines()
                   if line.startswith("\t") and not line.strip().startswith(
                       ("ld.param", "st.param", "ret", ".reg", ".param", "//"))]
        if spelling not in emitted:
            wrong[base] = (spelling, emitted)
    assert not wrong


SAMPLE = ("nvvm.add.rm.f", "nvvm.mulhi.ll", "nvvm.f2i.rz", "nvvm.d2f.rn", "nvvm.fmax.nan.f",
          "nvvm.prmt", "nvvm.fma.rp.d", "nvvm.ull2f.rz")


@pytest.mark.parametrize("base", SAMPLE)
def test_what_llvm_emits_refines(compiled, base):
    ir, ptx = compiled
    name = base.replace(".", "_")
    r = ir_refines(read_ir(ir)[name], read_function(ptx, name), timeout_ms=60_000)
    assert r.verdict == "refines", r


def _f32(bits: int) -> Fraction:
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def test_a_wrong_rounding_is_found(compiled):
    """add.rn planted for add.rm: the counterexample's exact sum is not a float, and the
    IR's result is the float just below it (rounded toward minus infinity)."""
    ir, ptx = compiled
    bad = ptx.replace("add.rm.f32", "add.rn.f32")
    r = ir_refines(read_ir(ir)["nvvm_add_rm_f"], read_function(bad, "nvvm_add_rm_f"),
                   timeout_ms=60_000)
    assert r.verdict == "different", r
    exact = _f32(r.inputs["a0"]) + _f32(r.inputs["a1"])
    assert _f32(r.ir_result) < exact  # rounded down
    assert _f32(r.ptx_result) > exact  # rounded to the nearer float, above
