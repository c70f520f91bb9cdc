"""The independent oracle for the LLVM IR semantics: LLVM itself, through llvmlite's MCJIT
on the host (x86-64). Functions take and return integers (floats are bitcast inside the
IR), so no float passes through ctypes. The JIT runs in a child process: a crash there
(an unresolved soft-float call) fails a test instead of killing the suite.

x86-64 LLVM lowers half through libgcc's conversions (__extendhfsf2, __truncsfhf2, ...);
bfloat rounding (__truncsfbf2, __truncdfbf2, not in libgcc 12) is `bf16_bits` here: one
rounding to nearest even on the double's exact value (ml_dtypes 0.6.0 converts a double
to bfloat16 through float32, rounding twice: 1 + 2^-8 + 2^-30 gave 0x3f80, not 0x3f81).
"""

from __future__ import annotations

import inspect
import json
import math
import struct
import subprocess
import sys


def bf16_bits(x: float) -> int:
    """The bfloat16 nearest `x` (ties to even), as compiler-rt's __truncdfbf2: integer
    rounding of x / 2^(e-7), e its binade clamped to the normal range's -126 (below it,
    bfloat16's subnormal step 2^-133); a NaN keeps its sign and top payload, quieted."""
    sign = 0x8000 if math.copysign(1.0, x) < 0 else 0
    if math.isnan(x):
        fraction = struct.unpack("<Q", struct.pack("<d", x))[0] >> 45 & 0x7F
        return sign | 0x7FC0 | fraction
    if math.isinf(x):
        return sign | 0x7F80
    numerator, denominator = abs(x).as_integer_ratio()
    if numerator == 0:
        return sign
    e = numerator.bit_length() - denominator.bit_length()  # 2^e <= |x| < 2^(e+1)
    if numerator << max(0, -e) < denominator << max(0, e):
        e -= 1
    e = max(e, -126)
    # m = |x| / 2^(e-7), rounded to nearest even: in [0, 256] (256: the next binade)
    scaled_num, scaled_den = numerator << max(0, 7 - e), denominator << max(0, e - 7)
    m, rest = divmod(scaled_num, scaled_den)
    if 2 * rest > scaled_den or 2 * rest == scaled_den and m & 1:
        m += 1
    # normal: (e + 127) << 7 | (m - 128); subnormal (e = -126, m < 128): m; both this
    bits = (e + 126) * 128 + m
    return sign | min(bits, 0x7F80)  # past the largest finite: infinity


_CHILD = inspect.getsource(bf16_bits) + r'''
import ctypes, json, math, struct, sys
import llvmlite.binding as llvm

llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
llvm.load_library_permanently("libgcc_s.so.1")

def _as_xmm(bits):  # a 16-bit result returned in xmm0, as the x86-64 ABI passes bf16
    return struct.unpack("<f", struct.pack("<I", bits))[0]

@ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)
def truncsfbf2(x):  # a float is a double exactly
    return _as_xmm(bf16_bits(x))

@ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_double)
def truncdfbf2(x):
    return _as_xmm(bf16_bits(x))

llvm.add_symbol("__truncsfbf2", ctypes.cast(truncsfbf2, ctypes.c_void_p).value)
llvm.add_symbol("__truncdfbf2", ctypes.cast(truncdfbf2, ctypes.c_void_p).value)

job = json.load(sys.stdin)
module = llvm.parse_assembly(job["ir"]); module.verify()
tm = llvm.Target.from_default_triple().create_target_machine()
engine = llvm.create_mcjit_compiler(module, tm); engine.finalize_object()
C = {8: ctypes.c_uint8, 16: ctypes.c_uint16, 32: ctypes.c_uint32, 64: ctypes.c_uint64}
out = {}
for name, (ret, params, memory, inputs) in job["calls"].items():
    addr = engine.get_function_address(name)
    argtypes = [ctypes.c_void_p if w == "ptr" else C[w] for w in params]
    fn = ctypes.CFUNCTYPE(C[ret], *argtypes)(addr)
    results = []
    for args in inputs:
        if memory:
            buf = (ctypes.c_uint8 * memory).from_buffer_copy(bytes(args[-1]))
            value = fn(*args[:-1], ctypes.addressof(buf))
            results.append([value, list(bytes(buf))])
        else:
            results.append(fn(*args))
    out[name] = results
json.dump(out, sys.stdout)
'''


def run_jit(ir: str, calls: dict) -> dict:
    """`calls`: name -> (return width, [param widths or "ptr"], memory bytes (0: none),
    [argument lists]); with memory the last argument is the buffer's initial bytes,
    passed as the pointer, and each result is [value, buffer after]."""
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps({"ir": ir,
                          "calls": calls}), capture_output=True, text=True, timeout=600)
    if proc.returncode:
        raise RuntimeError(f"JIT child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)
