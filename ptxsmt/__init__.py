"""ptxsmt: a symbolic verifier for PTX comparison and selection instructions.

The Z3 encoding in `ptxsmt.sem` is the single source of truth: evaluation
(`ptxsmt.eval`: one snippet, or a JSONL batch with `ptxsmt.eval.jsonl.run_jsonl`),
equivalence proofs and test vectors (`ptxsmt.smt`) are derived from it; legality
comes from the syntax tables in `ptxsmt.isa`. Layers, lowest first: isa, sem,
program, eval, smt, proofs, report, cli (tests/test_architecture.py holds them).
"""

from .check import check_line
from .eval.values import Evaluation
from .isa.body import parse, parse_one
from .isa.modifiers import BoolOp, CmpOp, LaneSpec
from .isa.syntax import Instruction, PtxError
from .isa.targets import parse_target, parse_version
from .isa.types import PtxType, ptx_type
from .isa.variants import Requirement, Variant, catalogue
from .program import Program
from .sem.options import Options


def __getattr__(name: str):
    if name == "evaluate":  # imports Z3: `import ptxsmt` alone does not
        from .eval.evaluate import evaluate

        return evaluate
    raise AttributeError(f"module 'ptxsmt' has no attribute {name!r}")


__all__ = [
    "BoolOp", "CmpOp", "Evaluation", "Instruction", "LaneSpec", "Options", "Program",
    "PtxError", "PtxType", "Requirement", "Variant", "catalogue", "check_line", "evaluate",
    "parse", "parse_one", "parse_target", "parse_version", "ptx_type",
]
