"""A claim's verdict: confirmed, refuted, not the compiler, or unknown.

Two questions, each answered by the verifier (`verifier`), never here:
- does the PTX compute what its reference does (the IR, or the other PTX), for every
  input? `differ` (a counterexample replayed through the evaluator), `agree` (proved:
  equivalent, refines) or `unknown`; `none` where the reference is the PTX ISA itself;
- at the claim's inputs, does the ISA give the value reported wrong? `fits` (it does,
  bit for bit, or for some choice of what the ISA leaves open), `differs`, `open` (no
  answer), `none` (nothing reported).
The table VERDICT joins them.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..eval.values import Evaluation
from ..function.evaluate import FunctionEvaluation
from ..isa import outline
from ..isa.errors import NotModelled, PtxError, quote
from ..isa.literals import LiteralError, parse_value
from ..isa.module import Function
from ..isa.targets import parse_target
from ..isa.types import PtxType
from ..llvm.errors import Unsupported
from ..program import Program
from ..sem.options import Options
from ..sem.unspecified import UNSPECIFIED, Value
from . import readings, verifier
from .claim import Claim, ClaimError, Code

VERDICTS = ("confirmed", "refuted", "not the compiler", "unknown")
OUTCOMES = ("differ", "agree", "unknown", "none")
AT_INPUTS = ("fits", "differs", "open", "none")
# (what the prover says, what the ISA says of the reported value) -> verdict
VERDICT = {
    **{("differ", at): "confirmed" for at in AT_INPUTS},
    **{("unknown", at): "unknown" for at in AT_INPUTS},
    ("agree", "fits"): "refuted", ("agree", "open"): "refuted", ("agree", "none"): "refuted",
    ("agree", "differs"): "not the compiler",  # proved right, yet something ran it otherwise
    ("none", "fits"): "refuted", ("none", "differs"): "not the compiler",
    ("none", "open"): "unknown",
}
# what a proof's verdict says, by the verdict's own word
OUTCOME = {"different": "differ", "equivalent": "agree", "bounded": "agree",
           "refines": "agree", "unknown": "unknown", "refused": "unknown"}


@dataclass(frozen=True)
class Proof:
    """The prover's verdict on the PTX against its reference: `kind` "snippets"
    (smt.solve.Verdict, with its Query), "functions" (smt.functions.FunctionVerdict) or
    "ir" (llvm.refine.Validated)."""

    kind: str
    verdict: object
    query: object = None
    subject: Function | None = None  # the functions compared (for replay lines)
    reference: Function | None = None
    ir: object = None  # the IR function (llvm.module.IrFunction)

    @property
    def outcome(self) -> str:
        return OUTCOME[self.verdict.verdict]

    @property
    def reason(self) -> str:
        v = self.verdict
        if self.kind == "ir":
            return str(v.refused) if v.refused is not None else v.refinement.reason
        return v.reason or "the solver gave no answer (timeout)"


@dataclass(frozen=True)
class Observed:
    """One output at the claim's inputs: the ISA's value (UNSPECIFIED: left open), what
    was reported (None: nothing), and whether the ISA allows it (None: no answer)."""

    output: str
    type: PtxType
    value: Value
    got: Value | None = None
    expected: Value | None = None
    fits: bool | None = None


@dataclass(frozen=True)
class Triage:
    claim: Claim
    verdict: str
    proof: Proof | None = None
    observed: tuple[Observed, ...] = ()
    evaluation: Evaluation | FunctionEvaluation | None = None
    readings: tuple[str, ...] = ()
    reason: str = ""  # unknown: why
    seconds: float = 0.0
    function: Function | None = None  # the claim's PTX function (None: a snippet)
    unrun: str = ""  # why the PTX could not be run at the claim's inputs

    @property
    def at_inputs(self) -> str:
        return at_inputs(self.observed)


def at_inputs(observed: tuple[Observed, ...]) -> str:
    """What the ISA says of the reported values (AT_INPUTS): one it does not give is
    enough to differ."""
    fits = [o.fits for o in observed if o.got is not None]
    if not fits:
        return "none"
    return "differs" if False in fits else "open" if None in fits else "fits"


@contextmanager
def _field(claim: Claim, where: str, hint: str = ""):
    """Bad input in the claim's `where` (PTX that does not parse, a function it does not
    define, an input it does not read) is a ClaimError naming the file and the field,
    then `hint`; what ptxsmt does not model is not the claim's fault (Unknown)."""
    try:
        yield
    except (NotModelled, Unsupported) as e:
        raise Unknown(str(e)) from None
    except ClaimError as e:
        raise ClaimError(f"{claim.path}: {where}: {e.message}{hint}") from None
    except PtxError as e:
        raise ClaimError(f"{claim.path}: {where}: {e}{hint}") from None


class Unknown(Exception):
    """Something the claim needs that ptxsmt does not model: the verdict is unknown."""


def triage(claim: Claim, timeout: float = 30.0) -> Triage:
    """The claim's verdict; ClaimError where the claim itself is at fault."""
    start = time.perf_counter()
    opts = Options(target=parse_target(claim.target).sm)
    function = ir = None
    try:
        if claim.ir is not None:
            with _field(claim, "[ir]"):
                ir = verifier.ir_function(claim.ir)
        if claim.ptx is None:
            with _field(claim, "[ir]"):
                text = verifier.compile_ir(claim.ir.text, claim.mcpu, claim.opt, claim.mattr)
            mattr = f" -mattr={claim.mattr}" if claim.mattr else ""
            claim = replace(claim, ptx=Code("ptx", text, None, None, f"llvmlite's LLVM "
                                            f"-O{claim.opt}{mattr} for {claim.mcpu}"))
        if claim.ptx.is_module:  # named as the IR function unless the claim says
            with _field(claim, "[ptx]"):
                function = verifier.ptx_function(claim.ptx, ir.name if ir else None)
        proof = None if claim.against == "isa" else \
            _prove(claim, ir, function, opts, timeout)
    except Unknown as e:
        return Triage(claim, "unknown", reason=str(e), function=function,
                      readings=_readings(claim, None, function, ir, ()),
                      seconds=time.perf_counter() - start)
    observed, evaluation, unrun = (), None, ""
    if claim.inputs:
        passed = verifier.ptx_parameters(ir, function) if ir is not None else {}
        claim = replace(claim, inputs=_by_ptx_name(claim, passed))
        try:
            observed, evaluation = _observe(claim, function, opts, passed)
        except Unknown as e:  # the proof stands; the reported value is neither here nor there
            unrun = str(e)
    at = "open" if unrun and claim.got else at_inputs(observed)
    verdict = VERDICT[proof.outcome if proof else "none", at]
    reason = ""
    if verdict == "unknown":
        reason = proof.reason if proof else unrun or "the ISA leaves the output open at " \
            "these inputs, and ptxsmt cannot say whether the reported value is among its values"
    return Triage(claim, verdict, proof, observed, evaluation,
                  _readings(claim, proof, function, ir, observed), reason,
                  time.perf_counter() - start, function, unrun)


def _prove(claim: Claim, ir, function: Function | None, opts: Options,
           timeout: float) -> Proof:
    if ir is not None:
        with _field(claim, "the proof"):
            return Proof("ir", verifier.prove_ir(ir, function, timeout, claim.nan),
                         ir=ir, subject=function)
    reference = claim.reference
    if function is not None:
        with _field(claim, "[reference]"):
            other = verifier.ptx_function(reference, function.name)
        with _field(claim, "the proof"):
            return Proof("functions", verifier.prove_functions(
                function, other, opts, timeout, claim.unroll, claim.nan),
                subject=function, reference=other)
    for code in (claim.ptx, reference):
        with _field(claim, f"[{code.field}]"):
            Program.parse(code.text)
    with _field(claim, "the proof"):
        verdict, query = verifier.prove_snippets(claim.ptx.text, reference.text, opts,
                                                 timeout, claim.nan)
    return Proof("snippets", verdict, query)


def _by_ptx_name(claim: Claim, passed: dict[str, str]) -> dict[str, str | int | bool]:
    """[inputs] with each IR argument's name (`%a` or `a`) as the PTX parameter it is
    passed in (`passed`), a PTX parameter without its `%`; a special register or memory
    location as given."""
    ptx_names = set(passed.values())
    out: dict[str, str | int | bool] = {}
    given: dict[str, str] = {}  # each key of `out` as the claim names it
    for name, value in claim.inputs.items():
        key = name.strip().lstrip("%")
        key = key if key in ptx_names else passed.get(key, name)
        if key in out:
            raise ClaimError(f"{claim.path}: [inputs] {quote(name)}: {key} is given twice "
                             f"(as {quote(given[key])} too)")
        out[key], given[key] = value, name
    return out


def _observe(claim: Claim, function: Function | None, opts: Options, passed: dict[str, str]
             ) -> tuple[tuple[Observed, ...], Evaluation | FunctionEvaluation]:
    """The PTX's outputs at the claim's inputs, each with what was reported of it
    (`passed`: the IR's arguments and their PTX parameters, named in an error)."""
    if function is None:
        with _field(claim, "[ptx]"):
            Program.parse(claim.ptx.text)
    ir_names = ", ".join(f"%{n} is {p}" for n, p in passed.items())
    with _field(claim, "[inputs]", f" (the IR's arguments: {ir_names})" if passed else ""):
        if function is None:
            ev = verifier.run_snippet(claim.ptx.text, claim.inputs, opts)
            outputs = {k: (v, ev.types[k]) for k, v in ev.outputs.items()}
        else:
            ev = verifier.run_function(function, claim.inputs, opts, claim.unroll)
            outputs = ev.outputs()
    got = _reported(claim, "got", claim.got, outputs)
    expected = _reported(claim, "expected", claim.expected, outputs)
    observed = []
    for name, (value, t) in outputs.items():
        fits = None
        if name in got:
            if value is not UNSPECIFIED:
                fits = value == got[name]
            elif function is None:
                fits = verifier.snippet_allows(claim.ptx.text, claim.inputs, name, got[name],
                                               opts)
        observed.append(Observed(name, t, value, got.get(name), expected.get(name), fits))
    return tuple(observed), ev


def _reported(claim: Claim, key: str, values: dict, outputs: dict) -> dict[str, Value]:
    """`[reported] got` (or expected) as bits, by the output names the PTX writes."""
    out = {}
    names = {k.lstrip("%"): k for k in outputs}
    for name, raw in values.items():
        where = f"{claim.path}: [reported] {key} {quote(name)}"
        k = names.get(name.strip().lstrip("%"))
        if k is None:
            raise ClaimError(f"{where}: the PTX writes no such output at these inputs (it "
                             f"writes {', '.join(outputs) or 'none'})")
        t = outputs[k][1]
        try:
            out[k] = raw if isinstance(raw, bool | int) else parse_value(str(raw), t)
        except LiteralError as e:
            raise ClaimError(f"{where}: {e}") from None
    return out


def _readings(claim: Claim, proof: Proof | None, function: Function | None, ir,
              observed: tuple[Observed, ...]) -> tuple[str, ...]:
    """What the verdict rests on: Spec notes of the instructions the PTX functions (and
    their callees) use, the IR function's flags and the refinement's definition, and the
    NaN policy."""
    reference = proof.reference if proof is not None else None
    ptx = [scope(code, fn) for code, fn in ((claim.ptx, function),
                                             (claim.reference, reference)) if code is not None]
    out = readings.spec_notes(*ptx)
    if ir is not None:
        out = [readings.REFINEMENT, *readings.ir_flags(ir.text), *out]
    if proof is not None:
        out += readings.nan_policy(claim.nan, *_nan_facts(proof))
    elif any(o.got is not None for o in observed):
        out.append("the reported value is compared bit for bit with the values the ISA "
                   "allows (an open NaN allows any NaN)")
    return tuple(out)


def scope(code: Code, fn: Function | None) -> str:
    """The PTX a verdict on `fn` reads: the module with every definition blanked but its
    own and its callees' (a snippet whole)."""
    return code.text if fn is None else outline.only(code.text, fn.name)[0]


def _nan_facts(proof: Proof) -> tuple[bool, bool]:
    """(some output is float-typed, agreement proved only up to NaN payloads)."""
    v = proof.verdict
    if proof.kind == "ir":
        r = v.refinement
        return verifier.float_return(proof.ir), bool(r and r.up_to_nan_payloads)
    return v.float_outputs, v.up_to_nan_payloads
