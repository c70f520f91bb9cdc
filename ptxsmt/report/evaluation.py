"""`eval`: one evaluation as text or JSON, and the summary of a batch check."""

from __future__ import annotations

from ..eval.values import Evaluation, to_json
from ..isa.literals import describe


def evaluation_json(ptx: str, ev: Evaluation, hardware: str | None = None) -> dict:
    """`hardware`: the chip whose values stand for the ISA's open ones (named if any)."""
    return {
        "ptx": ptx,
        **({"hardware": hardware} if hardware else {}),
        "inputs": {ev.name(k): to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
        **({"open": {c.input: c.spelled for c in ev.chosen}} if ev.chosen else {}),
        "outputs": {ev.name(k): to_json(v, ev.types[k]) for k, v in ev.outputs.items()},
    }


def evaluation_text(ptx: str, ev: Evaluation, hardware: str | None = None) -> str:
    lines = [" ".join(ptx.split()) + (f"   (open values as {hardware} gives them)"
                                      if hardware else "")]
    width = max((len(ev.name(k)) for k in (*ev.inputs, *ev.outputs)), default=1)
    lines += [f"  in   {ev.name(k):<{width}} = {describe(v, ev.types[k])}"
              for k, v in ev.inputs.items()]
    lines += [f"  open {c.input} = {str(c.spelled).lower()}" for c in ev.chosen]
    lines += [f"  out  {ev.name(k):<{width}} = {describe(v, ev.types[k])}"
              for k, v in ev.outputs.items()]
    return "\n".join(lines)


def check_summary(passed: int, failed: int) -> str:
    return f"check: {passed} passed, {failed} failed"
