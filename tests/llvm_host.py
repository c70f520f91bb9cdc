"""The independent oracle for the LLVM IR semantics: LLVM itself, through llvmlite's MCJIT
on the host (x86-64). Functions take and return integers (floats are bitcast inside the
IR), so no float passes through ctypes. The JIT runs in a child process: a crash there
(an unresolved soft-float call) fails a test instead of killing the suite.

x86-64 LLVM lowers half through libgcc's conversions (__extendhfsf2, __truncsfhf2, ...);
bfloat rounding (__truncsfbf2, __truncdfbf2, not in libgcc 12) comes from ml_dtypes here.
"""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = r'''
import ctypes, json, struct, sys
import llvmlite.binding as llvm
import ml_dtypes, numpy as np

llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
llvm.load_library_permanently("libgcc_s.so.1")

def _as_xmm(bits):  # a 16-bit result returned in xmm0, as the x86-64 ABI passes bf16
    return struct.unpack("<f", struct.pack("<I", bits))[0]

@ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)
def truncsfbf2(x):
    return _as_xmm(int(np.float32(x).astype(ml_dtypes.bfloat16).view(np.uint16)))

@ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_double)
def truncdfbf2(x):
    return _as_xmm(int(np.float64(x).astype(ml_dtypes.bfloat16).view(np.uint16)))

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
