"""ptxsmt: a symbolic verifier for NVIDIA PTX, its whole functions and the IR they came from.

The Z3 encoding in `ptxsmt.sem` is the single source of truth: evaluation
(`ptxsmt.eval`: one snippet, or a JSONL batch with `ptxsmt.batch.run.run_jsonl`),
equivalence proofs and test vectors (`ptxsmt.smt`) are derived from it; legality
comes from the syntax tables in `ptxsmt.isa`. Layers, lowest first: isa, sem,
program, eval, smt, proofs, report, cli (tests/test_architecture.py holds them).
"""

from importlib import import_module

# Each name from the module that defines it, on first use: a batch that answers from
# compiled programs never imports the parser, the variant tables or Z3.
_HOMES = {
    "check_line": "check", "Evaluation": "eval.values", "evaluate": "eval.evaluate",
    "parse": "isa.body", "parse_one": "isa.body",
    "BoolOp": "isa.modifiers", "CmpOp": "isa.modifiers", "LaneSpec": "isa.modifiers",
    "Instruction": "isa.syntax", "PtxError": "isa.syntax",
    "parse_target": "isa.targets", "parse_version": "isa.targets",
    "PtxType": "isa.types", "ptx_type": "isa.types",
    "Requirement": "isa.variants", "Variant": "isa.variants", "catalogue": "isa.variants",
    "Program": "program", "Options": "sem.options",
}


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'ptxsmt' has no attribute {name!r}")
    return getattr(import_module(f".{_HOMES[name]}", __name__), name)


__all__ = [
    "BoolOp", "CmpOp", "Evaluation", "Instruction", "LaneSpec", "Options", "Program",
    "PtxError", "PtxType", "Requirement", "Variant", "catalogue", "check_line", "evaluate",
    "parse", "parse_one", "parse_target", "parse_version", "ptx_type",
]
