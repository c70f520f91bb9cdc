"""The one place triage calls the verifier: each entry point it needs, by what it asks.

Triage decides nothing itself: a proof is `smt.solve`'s (snippets), `smt.functions`'s
(two functions) or `llvm.refine`'s (IR against PTX), a value at given inputs the
evaluator's. When those entry points change (one `decide(query)` for snippets,
functions and IR), only this module follows.
"""

from __future__ import annotations

from collections.abc import Mapping

import z3

from ..eval.evaluate import evaluate
from ..eval.values import Evaluation, convert_inputs
from ..function import read_function
from ..function.encode import encode_function
from ..function.evaluate import FunctionEvaluation, evaluate_function
from ..isa.errors import NotModelled
from ..isa.module import Function
from ..llvm.errors import Unsupported
from ..llvm.module import compile_to_ptx, function_names, read_ir
from ..program import compiled
from ..sem.options import Options
from ..sem.sorts import register_value
from ..smt.queries.functions import FunctionVerdict, check_function_equivalence
from ..smt.queries.refinement import Validated, _float_return, ir_refines, linked_params
from ..smt.queries.snippets import Query, Verdict, build_query, decide
from ..solver import check
from .claim import ClaimError, Code

SOLVER = "auto"  # z3 first, then bitwuzla racing it where installed
# (`smt.solving.decide.check_with`)


def compile_ir(text: str, cpu: str, opt: int, features: str = "") -> str:
    """The PTX llvmlite's LLVM makes of IR `text` (`ptxsmt tv`'s compiler)."""
    return compile_to_ptx(text, cpu=cpu, opt=opt, features=features)


def ptx_function(code: Code, name: str | None) -> Function:
    """The function `name` (code.function first) of a PTX module; PtxError if absent."""
    return read_function(code.text, code.function or name)


def ir_function(code: Code):
    """The IR function the claim names (or the only one); ClaimError if absent."""
    functions = read_ir(code.text, only=code.function)
    if code.function is None and len(functions) != 1:
        raise ClaimError(f"defines {len(functions)} functions: name one "
                         f"(function = \"...\")")
    name = code.function or next(iter(functions))
    if name not in functions:
        raise ClaimError(f"no function @{name} (it defines "
                         f"{', '.join('@' + n for n in function_names(code.text)) or 'none'})")
    return functions[name]


def ptx_parameters(ir, ptx: Function) -> dict[str, str]:
    """Each IR argument's name -> the PTX parameter it is passed in (by position, as the
    refinement links them)."""
    return {name: param.name for name, _, param in linked_params(ir, ptx)}


def prove_snippets(subject: str, reference: str, opts: Options, timeout: float,
                   nan: str) -> tuple[Verdict, Query]:
    query = build_query(subject, reference, None, opts, nan=nan)
    return decide(query, timeout, solver=SOLVER), query


def prove_functions(subject: Function, reference: Function, opts: Options, timeout: float,
                    unroll: int, nan: str) -> FunctionVerdict:
    return check_function_equivalence(subject, reference, opts, timeout, unroll, SOLVER,
                                      nan=nan)


def prove_ir(ir, ptx: Function, timeout: float, nan: str) -> Validated:
    try:
        return Validated(ir.name, ir_refines(ir, ptx, int(timeout * 1000), SOLVER,
                                             nan=nan))
    except Unsupported as e:
        return Validated(ir.name, None, e)


def float_return(ir) -> bool:
    """Some lane of the IR function's return value is a float: the NaN policy matters."""
    return _float_return(ir)


def run_snippet(text: str, inputs: Mapping[str, object], opts: Options) -> Evaluation:
    """The snippet's outputs at `inputs`; one the ISA leaves open is UNSPECIFIED."""
    return evaluate(text, inputs, opts, unspecified_ok=True)


def run_function(fn: Function, inputs: Mapping[str, object], opts: Options,
                 unroll: int) -> FunctionEvaluation:
    """The function's outputs at `inputs`; NotModelled where they rest on an instruction
    ptxsmt does not model whose result the inputs do not give (`r5=...`)."""
    enc = encode_function(fn, opts, unmodelled="input", unroll=unroll)
    given = {k.strip().lstrip("%") for k in inputs}
    if missing := [k for k in enc.opaque if k not in given]:
        raise NotModelled(f"its value at these inputs rests on "
                          f"{'; '.join(sorted(enc.uninterpreted))}, which ptxsmt does not "
                          f"model (an input {missing[0]}=VALUE gives its result)")
    return evaluate_function(fn, inputs, opts, unroll=unroll)


def snippet_allows(text: str, inputs: Mapping[str, object], output: str, bits: int | bool,
                   opts: Options) -> bool | None:
    """Whether some choice of the values the ISA leaves open at `inputs` (a NaN's bits,
    a mul and add fused or not) makes `output` exactly `bits`; None: no answer."""
    program, enc = compiled(text, opts)
    values = convert_inputs(inputs, program.types, enc.inputs)
    pairs = [(const, register_value(values[k], program.types[k]))
             for k, const in enc.inputs.items() if k in values]
    s = z3.Solver()
    s.set("timeout", 10_000)
    term = z3.substitute(enc.outputs[output], *pairs) if pairs else enc.outputs[output]
    s.add(term == register_value(bits, program.types[output]))
    answer = check(s)
    return None if answer == z3.unknown else answer == z3.sat
