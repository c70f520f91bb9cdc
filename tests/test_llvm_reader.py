"""ptxsmt/llvm/reader.py: the facts read from LLVM's printed IR, checked against IR that
LLVM itself printed (llvmlite), and llvmlite's place as an optional extra."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

pytest.importorskip("llvmlite")

from ptxsmt.llvm import LlvmError, Unsupported, read_ir, reader  # noqa: E402


def _instructions(body: str, params: str = "i32 %a, i32 %b, float %x, float %y, ptr %p",
                  decls: str = "") -> list[str]:
    fn = read_ir(f"define void @f({params}) {{\n{body}\nret void\n}}\n{decls}")["f"]
    return [str(i) for b in fn.value.blocks for i in b.instructions]


@pytest.mark.parametrize("line,opcode,flags,predicate", [
    ("%r = add nuw nsw i32 %a, %b", "add", {"nuw", "nsw"}, None),
    ("%r = sdiv exact i32 %a, %b", "sdiv", {"exact"}, None),
    ("%r = or disjoint i32 %a, %b", "or", {"disjoint"}, None),
    ("%r = icmp samesign ult i32 %a, %b", "icmp", {"samesign"}, "ult"),
    ("%r = fcmp nnan ninf une float %x, %y", "fcmp", {"nnan", "ninf"}, "une"),
    ("%r = fcmp ord float %x, %y", "fcmp", set(), "ord"),
    ("%r = fadd fast float %x, %y", "fadd", reader.FAST_MATH - {"fast"} | {"fast"}, None),
    ("%r = trunc nuw nsw i32 %a to i8", "trunc", {"nuw", "nsw"}, None),
    ("%r = zext nneg i32 %a to i64", "zext", {"nneg"}, None),
    ("%r = tail call nsz float @llvm.minnum.f32(float %x, float %y)", "call", {"nsz"}, None),
    ("%r = load volatile i32, ptr %p, align 4", "load", {"volatile"}, None),
])
def test_flags_and_predicates_as_llvm_prints_them(line, opcode, flags, predicate):
    decl = "declare float @llvm.minnum.f32(float, float)"
    (printed, _) = _instructions(line, decls=decl)
    got = reader.instruction(printed)
    assert (got.opcode, set(got.flags), got.predicate) == (opcode, flags, predicate)


def test_alignment_gep_size_and_shuffle_mask():
    load, gep, gep2, shuf = _instructions(
        "%l = load i32, ptr %p, align 8\n%g = getelementptr inbounds [4 x i16], ptr %p, i64 %i\n"
        "%h = getelementptr <2 x half>, ptr %p, i64 1\n"
        "%s = shufflevector <2 x half> %v, <2 x half> %v, <2 x i32> <i32 3, i32 poison>",
        "ptr %p, i64 %i, <2 x half> %v")[:4]
    assert reader.alignment(load) == 8
    assert reader.gep_element_size(gep) == 8 and reader.gep_element_size(gep2) == 4
    assert reader.shuffle_mask(shuf) == [3, None]


def _operands(ir_type: str, literal: str) -> str:
    fn = read_ir(f"define {ir_type} @f() {{\nret {ir_type} {literal}\n}}")["f"]
    (ret,) = [i for b in fn.value.blocks for i in b.instructions]
    (op,) = ret.operands
    return str(op)


@pytest.mark.parametrize("ir_type,literal,bits", [
    ("float", "0x7FF4000000000000", 0x7FA00000),        # a signalling NaN keeps its payload
    ("float", "0xFFF8000020000000", 0xFFC00001),        # payload's low bit, sign
    ("float", "1.5", 0x3FC00000), ("float", "-0.0", 0x80000000),
    ("float", "0x3FB99999A0000000", struct.unpack("<I", struct.pack("<f", 0.1))[0]),
    ("double", "0.1", struct.unpack("<Q", struct.pack("<d", 0.1))[0]),
    ("half", "0xH7E01", 0x7E01), ("bfloat", "0xRFF81", 0xFF81),
    ("float", "0x7FF0000000000000", 0x7F800000),
])
def test_float_constants_keep_their_bits(ir_type, literal, bits):
    printed = _operands(ir_type, literal)
    t = {"float": (32, 8, 24), "double": (64, 11, 53), "half": (16, 5, 11),
         "bfloat": (16, 8, 8)}[ir_type]
    (word,) = reader.constant_words(printed, ir_type)
    assert reader.float_literal(word, *t) == bits


def test_vector_constants_one_word_per_lane():
    assert reader.constant_words(_operands("<2 x half>", "<half 0xH3C00, half poison>"),
                                 "<2 x half>") == ["0xH3C00", "poison"]
    splat = _operands("<2 x i32>", "splat (i32 7)")
    assert reader.constant_words(splat, "<2 x i32>") in (["7"], ["7", "7"])


@pytest.mark.parametrize("callee,base", [
    ("llvm.sadd.sat.v2i16", "sadd.sat"), ("llvm.minnum.f32", "minnum"),
    ("llvm.maximumnum.v2f16", "maximumnum"), ("llvm.fma.bf16", "fma"),
    ("llvm.ctlz.i64", "ctlz"), ("llvm.nvvm.read.ptx.sreg.tid.x", "nvvm.read.ptx.sreg.tid.x"),
])
def test_intrinsic_base_names(callee, base):
    assert reader.intrinsic_base(callee) == base


def test_return_attributes_and_signature():
    fns = read_ir("define zeroext i8 @f(i8 signext %a, ptr %p) {\nret i8 %a\n}")
    f = fns["f"]
    assert f.return_attributes == {"zeroext"}
    assert [(n, t.text) for n, t in f.params] == [("a", "i8"), ("p", "ptr")]


def test_bad_ir_is_one_line_naming_the_place():
    with pytest.raises(LlvmError) as e:
        read_ir("define i32 @f(i32 %a) {\n  %r = add i32 %a, %zz\n  ret i32 %r\n}")
    assert "2:" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(Unsupported):
        from ptxsmt.llvm import encode_function
        encode_function(read_ir("define x86_fp80 @g(x86_fp80 %a) {\nret x86_fp80 %a\n}")["g"])


def test_llvmlite_is_optional():
    """Importing ptxsmt.llvm needs no llvmlite; reading IR without it is one clear line."""
    code = ("import sys; sys.modules['llvmlite'] = None; sys.modules['llvmlite.binding'] = None\n"
            "import ptxsmt.llvm as l\n"
            "try:\n    l.read_ir('')\nexcept l.LlvmError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "reading LLVM IR needs llvmlite: pip install 'ptxsmt[llvm]'"
