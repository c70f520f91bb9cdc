"""`triage`: a claim's verdict as text, as a JSON line, or as Markdown to paste into an
issue tracker; the proof's own rendering (equiv's, tv's) inside it, and the `ptxsmt
eval` lines and GPU steps that let anyone check it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from ..eval.values import UNSPECIFIED, to_json
from ..triage.claim import Code
from ..triage.decide import Observed, Triage, scope
from . import dumps, equivalence, function, llvm, show

GPU_ARCH = "sm_90"


def ptx_path(t: Triage, code: Code) -> str:
    """Where `ptxsmt eval` finds the code: its file, or for inline text the file the
    report asks to save it as."""
    suffix = {"ptx": "ptx", "reference": "reference.ptx"}[code.field]
    return code.path or f"{Path(t.claim.path).stem}.{suffix}"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _argument(name: str, value: object) -> str:
    """NAME=VALUE as `ptxsmt eval` reads it: a claim's integer is bits, so hex."""
    shown = str(value).lower() if isinstance(value, bool) else \
        hex(value) if isinstance(value, int) else str(value)
    return shlex.quote(f"{name}={shown}")


def summary(t: Triage) -> str:
    """One sentence: the verdict and what it rests on."""
    proof = t.proof
    differs = [o for o in t.observed if o.fits is False]
    if t.verdict == "confirmed":
        what = "the PTX does not refine the IR" if proof.kind == "ir" else \
            "the PTX and the reference differ"
        return f"{what}: a counterexample, replayed through the evaluator"
    if t.verdict == "unknown":
        return "no verdict" + ("" if proof is not None else f": {t.reason}")
    proved = ""
    if proof is not None:
        proved = "the PTX refines the IR" if proof.kind == "ir" else \
            "the PTX and the reference agree"
        proved += f" for every input on which each loop runs at most {proof.verdict.unroll} " \
            "times" if proof.verdict.verdict == "bounded" else " for every input"
    if t.verdict == "not the compiler":
        seen = "; ".join(f"{o.output}: the ISA gives {show(o.value, o.type)}, not the "
                         f"reported {show(o.got, o.type)}" for o in differs)
        return (f"{'proved: ' + proved + '; ' if proved else ''}the PTX is right by the ISA "
                f"at the claim's inputs ({seen}): suspect ptxas or the hardware")
    fits = t.at_inputs == "fits"
    gives = "allows" if any(o.got is not None and o.value is UNSPECIFIED for o in t.observed) \
        else "gives exactly"
    at = f"at the claim's inputs the ISA {gives} the value reported wrong"
    if proved:
        return f"proved: {proved}" + (f"; {at}" if fits else "")
    return f"{at}; whether a compiler should have written this PTX needs its source " \
        "([ir]) or other PTX ([reference])"


def _proof_text(t: Triage) -> str:
    p = t.proof
    if p.kind == "snippets":
        q = p.query
        return equivalence.verdict_text(p.verdict, q.lhs_text, q.rhs_text, q.lhs.types,
                                        q.rhs.types)
    if p.kind == "functions":
        return function.function_verdict_text(p.verdict, ptx_path(t, t.claim.ptx),
                                              ptx_path(t, t.claim.reference))
    return llvm.equiv_text(p.verdict, ptx_path(t, t.claim.ptx), p.subject.name)


def reproduce(t: Triage) -> list[str]:
    """`ptxsmt eval` lines: the counterexample on each side (confirmed), and the PTX at
    the claim's inputs."""
    lines = []
    p = t.proof
    if t.verdict == "confirmed":
        v = p.verdict
        if p.kind == "snippets":
            q = p.query
            lines += [equivalence.reproduce(q.lhs_text, v.counterexample, q.lhs.types),
                      equivalence.reproduce(q.rhs_text, v.counterexample, q.rhs.types, 1)]
        elif p.kind == "functions":
            lines += function.reproduce(v, ptx_path(t, t.claim.ptx),
                                        ptx_path(t, t.claim.reference))
        elif (line := llvm.reproduce(v, ptx_path(t, t.claim.ptx), p.subject.name)):
            lines.append(line)
    if t.evaluation is not None:
        args = " ".join(_argument(k, v) for k, v in t.claim.inputs.items())
        head = f"ptxsmt eval {shlex.quote(_flat(t.claim.ptx.text))}" if t.function is None \
            else f"ptxsmt eval {shlex.quote(ptx_path(t, t.claim.ptx))} --function " \
                 f"{t.function.name}" + (f" --unroll {t.claim.unroll}" if t.claim.unroll else "")
        line = f"{head} {args}".rstrip()
        if line not in lines:
            lines.append(line)
    return lines


def gpu_steps(t: Triage) -> list[str]:
    """What to run on a GPU to see what ptxas makes of the PTX at the claim's inputs."""
    if t.verdict != "not the compiler" or t.evaluation is None:
        return []
    ev = t.evaluation
    if t.function is None:
        vector = {"ptx": _flat(t.claim.ptx.text),
                  "inputs": {ev.name(k): to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
                  "outputs": {o.output: to_json(o.value, o.type) for o in t.observed}}
        return ["cat > claim.jsonl <<'EOF'", json.dumps(vector), "EOF",
                "python scripts/gpu_replay.py claim.jsonl --out claim.cu",
                f"nvcc -arch={GPU_ARCH} -o claim claim.cu && ./claim   "
                "# MISMATCH: the GPU does not give the ISA's value",
                "cuobjdump -sass claim   # the SASS ptxas made of it"]
    path, name = ptx_path(t, t.claim.ptx), t.function.name
    record = {"id": f"{name}:{path}~{path}",
              "counterexample": {"inputs": {k: to_json(v, ev.types[k])
                                            for k, v in ev.inputs.items()}}}
    return ["cat > claim.jsonl <<'EOF'", json.dumps(record), "EOF",
            f"python scripts/gpu_function_replay.py generate build/claim --pair {path} {path} "
            f"{name} --results claim.jsonl",
            "nvcc -O2 -o build/claim/replay scripts/templates/function_replay.cu",
            "build/claim/replay build/claim",
            "python scripts/gpu_function_replay.py check build/claim   "
            "# 'silicon vs ptxsmt': the GPU does not give the ISA's value",
            f"ptxas -arch={GPU_ARCH} -O3 build/claim/000.ptx -o claim.cubin && "
            "nvdisasm -c claim.cubin   # the SASS"]


def _observed_line(o: Observed) -> str:
    parts = [f"{o.output} = {show(o.value, o.type)} by the ISA"]
    if o.got is not None:
        verdict = {True: "the ISA gives it", False: "not the ISA's value",
                   None: "the ISA leaves it open: no answer"}[o.fits]
        parts.append(f"reported {show(o.got, o.type)} ({verdict})")
    if o.expected is not None:
        parts.append(f"expected {show(o.expected, o.type)}")
    return "; ".join(parts)


def text(t: Triage) -> str:
    c = t.claim
    lines = [f"{c.path}: {t.verdict}" + (f" -- {c.title}" if c.title else ""),
             f"  {summary(t)}"]
    proof = _proof_text(t) if t.proof is not None else ""
    lines += [f"  {line}" for line in proof.splitlines()]
    if t.observed:
        lines.append("  at the claim's inputs:")
        lines += [f"    {_observed_line(o)}" for o in t.observed]
    elif t.unrun and t.unrun != t.reason:
        lines.append(f"  at the claim's inputs: {t.unrun}")
    if (replay := [x for x in reproduce(t) if x not in proof]):  # not twice
        lines += ["  ptxsmt eval:", *(f"    {x}" for x in replay)]
    unsaved = [c for c in (c.ptx, c.reference) if c is not None and c.path is None
               and c.is_module]
    what = {"ptx": "PTX", "reference": "reference PTX"}
    lines += [f"  {ptx_path(t, u)}: the claim's {what[u.field]}"
              f"{' (' + u.made + ')' if u.made else ''}, as --markdown shows it" for u in unsaved]
    if t.readings:
        lines += ["  rests on:", *(f"    {r}" for r in t.readings)]
    if (steps := gpu_steps(t)):
        lines += ["  on a GPU:", *(f"    {s}" for s in steps)]
    return "\n".join(lines)


def _proof_json(t: Triage) -> dict | None:
    p = t.proof
    if p is None:
        return None
    if p.kind == "snippets":
        return equivalence.verdict_json(p.verdict)
    if p.kind == "functions":
        return function.function_verdict_json(p.verdict)
    return llvm.equiv_row(p.verdict, ptx_path(t, t.claim.ptx), p.subject.name)


def row(t: Triage) -> dict:
    c = t.claim
    out = {"claim": c.path, "title": c.title, "link": c.link, "verdict": t.verdict,
           "against": c.against, "summary": summary(t), "proof": _proof_json(t)}
    if t.observed:
        out["at_inputs"] = {
            "inputs": {k: v if isinstance(v, bool | str) else hex(v)
                       for k, v in c.inputs.items()},
            "outputs": {o.output: {"isa": to_json(o.value, o.type),
                                   **({"reported": to_json(o.got, o.type), "fits": o.fits}
                                      if o.got is not None else {}),
                                   **({"expected": to_json(o.expected, o.type)}
                                      if o.expected is not None else {})}
                        for o in t.observed}}
    out |= {"reproduce": reproduce(t), "rests_on": list(t.readings), "gpu": gpu_steps(t),
            "seconds": round(t.seconds, 3)}
    if t.reason:
        out["reason"] = t.reason
    if t.unrun:
        out["at_inputs"] = {"unrun": t.unrun}
    return out


def json_line(t: Triage) -> str:
    return dumps(row(t))


def error_json(path: str, message: str) -> str:
    return dumps({"claim": path, "error": message})


def _fence(body: str, lang: str = "") -> list[str]:
    ticks = "````" if "```" in body else "```"
    return [f"{ticks}{lang}", body, ticks]


def markdown(t: Triage) -> str:
    """A section for an issue tracker: the verdict first, then the evidence."""
    c = t.claim
    title = f" — {c.title}" if c.title else ""
    out = [f"### ptxsmt triage: **{t.verdict}**{title}", ""]
    if c.link:
        out += [f"Claim: {c.link}", ""]
    out += [summary(t) + ".", ""]
    if t.proof is not None:
        out += ["**What the prover said** (`ptxsmt equiv`):", "",
                *_fence(_proof_text(t), "console"), ""]
    if t.observed:
        out += ["**At the claim's inputs** (the evaluator's values, by the ISA):", "",
                "| output | by the ISA | reported | expected |", "|---|---|---|---|"]
        out += [f"| `{o.output}` | {_cell(o.value, o)} | {_cell(o.got, o)}"
                f"{'' if o.fits is None else ' ✓' if o.fits else ' ✗'} | "
                f"{_cell(o.expected, o)} |" for o in t.observed]
        out.append("")
    elif t.unrun and t.unrun != t.reason:
        out += [f"**At the claim's inputs:** {t.unrun}.", ""]
    if (replay := reproduce(t)):
        out += ["**Reproduce:**", "", *_fence("\n".join(replay), "bash"), ""]
    if t.readings:
        out += ["**Rests on** (docs/spec-notes.md, docs/llvm.md):", "",
                *(f"- {r}" for r in t.readings), ""]
    if (steps := gpu_steps(t)):
        out += ["**On a GPU** (is it ptxas?):", "", *_fence("\n".join(steps), "bash"), ""]
    for code in (c.ptx, c.ir, c.reference):
        if code is not None:
            out += _code_block(t, code)
    out.append(f"<sub>ptxsmt triage, {t.seconds:.2f} s</sub>")
    return "\n".join(out)


def _cell(value, o: Observed) -> str:
    return "" if value is None else f"`{show(value, o.type)}`"


def _code_block(t: Triage, code: Code) -> list[str]:
    """The claim's code, folded: of a module, only the function compared and its callees
    (the IR function alone); inline text with the file name the eval lines use."""
    what = {"ptx": "PTX", "ir": "LLVM IR", "reference": "reference PTX"}[code.field]
    where = code.path if code.path else ptx_path(t, code) if code.is_module and \
        code.field != "ir" else "inline"
    p = t.proof
    if code.field == "ir":
        body = p.ir.text if p is not None and p.ir is not None else code.text
    else:
        body = scope(code, t.function if code.field == "ptx" else p and p.reference)
    lang = "llvm" if code.field == "ir" else "ptx"
    made = f"; {code.made}" if code.made else ""
    return [f"<details><summary>{what} ({where}{made})</summary>", "",
            *_fence(re.sub(r"\n\s*\n(\s*\n)+", "\n\n", body).strip("\n"), lang), "",
            "</details>", ""]
