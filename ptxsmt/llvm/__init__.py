"""LLVM IR as Z3 terms, beside the LangRef: the source side of translation validation.

`read_ir` parses and verifies IR text with llvmlite (an optional extra: `pip install
ptxsmt[llvm]`) and `encode_function` turns one function into terms: its result as
(bits, poison) lanes, the condition under which it has undefined behaviour, and the
memory it leaves. Values are poison per lane; undef, `freeze` of poison and a NaN
result are fresh choices the encoding lists. docs/llvm.md says what is modelled and
what is refused.
"""

from .encode import Encoding, encode_function
from .errors import LlvmError, Unsupported
from .module import IrFunction, read_ir

__all__ = ["Encoding", "IrFunction", "LlvmError", "Unsupported", "encode_function", "read_ir"]
