"""What a worker process runs for a request: its verdict, decided by `ptxsmt.pairs` as
`equiv --batch` decides a line, or a stored "different" replayed; a "different" is shown
only as the evaluator replays it, as a table of inputs and both sides' outputs.

Everything here returns plain data (JSON values): it crosses a process boundary."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import msgspec

from .. import pairs
from ..eval.values import UNSPECIFIED, to_json
from ..isa.errors import PtxError
from ..isa.literals import describe
from ..isa.types import PtxType
from ..report.equivalence import reproduce
from ..report.function import reproduce as reproduce_function
from ..smt.queries.classes import value_class
from ..smt.queries.functions import FunctionVerdict
from ..smt.queries.snippets import ReplayError
from .request import FILES, Request


def prove(request: str, stored: dict | None = None) -> dict:
    """{"result": the verdict's fields, "replay": what a "different" is replayed from,
    "shown": its table (None for any other verdict), "stored": whether it came from
    `stored`}; or {"stale": why} where a `stored` "different" ({"result", "replay"}) does
    not replay to what it shows."""
    req = Request.from_json(request)
    with tempfile.TemporaryDirectory(prefix="ptxsmt-serve-") as folder:
        pair = req.pair(Path(folder))
        if stored:
            result, fields = stored["result"], stored["replay"]
        else:  # a message names the inputs as the page's links do (a.ptx), not the folder
            result = json.loads(json.dumps(pairs.decide_pair(pair)).replace(folder + "/", ""))
            fields = result.pop(pairs.REPLAY, None)
        if req.kind == "ir" and result["verdict"] == "different":  # decided just now
            return {"result": result, "replay": None, "shown": ir_table(result),
                    "stored": False}
        if result["verdict"] != "different" or fields is None:
            return {"result": result, "replay": fields, "shown": None, "stored": bool(stored)}
        try:
            replayed = pairs.replayed(pair, result, fields)
        except (PtxError, ReplayError, msgspec.ValidationError, pairs.Mismatch) as e:
            if stored:
                return {"stale": f"its counterexample does not replay ({e})"}
            return {"result": {"verdict": "error", "bug": True,
                               "error": f"ptxsmt bug, please report: {e}"},
                    "replay": None, "shown": None, "stored": False}
        return {"result": result, "replay": fields, "shown": table(req, result, replayed),
                "stored": bool(stored)}


def table(req: Request, result: dict, replayed: pairs.Replayed) -> dict:
    """A replayed counterexample as rows: {"inputs": [...], "memory": [...],
    "outputs": [...], "reproduce": [the `ptxsmt eval` line of each side]}."""
    cex = replayed.counterexample
    if req.kind == "snippets":
        q = replayed.ran_on
        inputs = [_cell(k, v, cex.types[k]) for k, v in cex.inputs.items()]
        outputs = [_output(o, cex.lhs[o], cex.rhs[o], cex.types[o], o in cex.differ)
                   for o in result["outputs"]]
        return {"inputs": inputs, "memory": [], "outputs": outputs,
                "reproduce": [reproduce(req.lhs, cex, q.lhs.types),
                              reproduce(req.rhs, cex, q.rhs.types, 1)]}
    types = {**cex.lhs.types, **cex.rhs.types}
    inputs = [_cell(k, v, types[k]) for k, v in {**cex.lhs.inputs, **cex.rhs.inputs}.items()]
    memory = [_cell(f"{loc}.{loc.type.name}", v, loc.type) for loc, v in cex.memory.items()]
    lhs, rhs = cex.lhs.outputs(), cex.rhs.outputs()
    outputs = [_output(k, lhs[k][0], rhs[k][0], lhs[k][1], k in cex.differ)
               for k in lhs if k in rhs]
    verdict = FunctionVerdict("different", result["lhs"], result["rhs"], {}, cex,
                              unroll=req.options.get("unroll") or 0)
    return {"inputs": inputs, "memory": memory, "outputs": outputs,
            "reproduce": reproduce_function(verdict, *FILES[req.kind])}


def ir_table(result: dict) -> dict:
    """An IR pair's "different" as the same rows: its fields name no types, so the values
    are bits (no evaluator of IR replays it: it is never stored, and decided each time)."""
    cex = result["counterexample"]
    inputs = [{"name": f"%{k}", "type": "", "hex": v, "decoded": v, "class": ""}
              for k, v in cex["inputs"].items()]
    ir, ptx = (int(cex[side], 16) for side in ("ir", "ptx"))
    width = 4 * (max(len(cex["ir"]), len(cex["ptx"])) - 2)
    output = {"name": "result", "type": "", "differs": True, "bits": _bits(ir, ptx, width),
              **{side: {"name": "result", "type": "", "hex": cex[key], "decoded": cex[key],
                        "class": ""} for side, key in (("lhs", "ir"), ("rhs", "ptx"))}}
    return {"inputs": inputs, "memory": [], "outputs": [output],
            "reproduce": [cex["reproduce"]["ptx"]] if "reproduce" in cex else []}


def _cell(name: str, value, t: PtxType) -> dict:
    """A value as the page shows it: bits in hex, decoded, and its operand class."""
    if value is UNSPECIFIED:
        return {"name": name, "type": t.name, "hex": "unspecified",
                "decoded": "a value the PTX ISA leaves open", "class": ""}
    bits = to_json(value, t)
    return {"name": name, "type": t.name, "hex": str(bits).lower(),
            "decoded": describe(value, t),
            "class": value_class(int(value), t) if t.lanes == 1 else ""}


def _output(name: str, a, b, t: PtxType, differs: bool) -> dict:
    """Both sides' value of an output, and which of its bits differ (for highlighting)."""
    left, right = _cell(name, a, t), _cell(name, b, t)
    known = UNSPECIFIED not in (a, b)
    return {"name": name, "type": t.name, "lhs": left, "rhs": right, "differs": differs,
            "bits": _bits(int(a), int(b), t.width) if known else None}


def _bits(a: int, b: int, width: int) -> list[list[tuple[str, str, bool]]]:
    """Both values' bits, most significant first, in groups of 4: (a's, b's, differ?)."""
    rows = [((a >> i) & 1, (b >> i) & 1) for i in reversed(range(width))]
    cells = [(str(x), str(y), x != y) for x, y in rows]
    return [cells[i:i + 4] for i in range(0, width, 4)]
