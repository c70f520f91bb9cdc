"""NVVM intrinsics that are one PTX instruction (ptxsmt/llvm/nvvm.py): each table entry
is the instruction LLVM's own NVPTX backend (llvmlite's LLVM) emits for the intrinsic,
what LLVM emits refines the IR, and a wrong signedness planted in the PTX is found."""

from __future__ import annotations

import re

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


def _s64(x: int) -> int:
    return x - (1 << 64) if x >> 63 else x


def test_a_wrong_signedness_is_found(compiled):
    """mul.hi.u64 planted for llvm.nvvm.mulhi.ll (mul.hi.s64): the counterexample's IR
    value is the high half of the signed product, the PTX's of the unsigned one.
    (Integers: a float counterexample may hinge on a PTX NaN left unspecified.)"""
    ir, ptx = compiled
    assert "mul.hi.s64" in ptx
    bad = ptx.replace("mul.hi.s64", "mul.hi.u64")
    r = ir_refines(read_ir(ir)["nvvm_mulhi_ll"], read_function(bad, "nvvm_mulhi_ll"),
                   timeout_ms=60_000)
    assert r.verdict == "different", r
    a, b = r.inputs["a0"], r.inputs["a1"]
    assert r.ir_result == (_s64(a) * _s64(b) >> 64) % (1 << 64)
    assert r.ptx_result == (a * b) >> 64 != r.ir_result
