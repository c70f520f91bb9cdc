"""The proof-result cache: a verdict is a pure function of the query, so it is kept.

Content-addressed: the key is a hash of the two snippet texts, the compared outputs
and what was asked (with or without the class report, and how it reads the
operands); the file's name carries the
fingerprint of ptxsmt's sources and of the installed Z3 (`ptxsmt.batch.cache`), so a
changed semantics or solver never reads an old verdict. It lives beside the program
cache and is turned off with it (`--no-cache`, PTXSMT_NO_CACHE=1). An "unknown" (a
timeout) is not kept: a later run with more time may decide it.

Checked, never trusted: a record is an entry of `smt.solving.verdicts` (the digest of both
texts, what was asked, the build, a check over every field) and a "different" is
served only once its counterexample replays through the evaluator to the values it
shows. A record that fails is dropped (the proof is run again and its record replaces
it) and named in `cache.DROPPED`, for the command to warn of.
"""

from __future__ import annotations

import json

import msgspec

from ..batch import cache
from ..isa.errors import PtxError
from ..smt.queries.snippets import ReplayError, build_query, replay
from ..smt.solving import verdicts
from .work import plain_counterexample

_STORES: dict[str, cache.Store] = {}  # by the program cache's file: one per build and place


def _store() -> cache.Store | None:
    programs = cache.store()  # None when the cache is off
    if programs is None:
        return None
    if str(programs.path) not in _STORES:
        path = programs.path.with_name(programs.path.name.replace("programs-", "synth-proofs-"))
        _STORES[str(programs.path)] = cache.Store(path, programs.place)
    return _STORES[str(programs.path)]


def _address(task: tuple) -> tuple[str, str, dict]:
    """The task's key, the digest of its texts, and what was asked (as JSON reads it back)."""
    lhs, rhs, outputs, _timeout, with_classes, reading = task
    pair = verdicts.pair_digest("synth", [lhs.encode(), rhs.encode()], [])
    asked = json.loads(json.dumps({"outputs": list(outputs), "with_classes": with_classes,
                                   "reading": list(reading) if with_classes else []}))
    return verdicts.address(pair, asked), pair, asked


def get(task: tuple) -> dict | None:
    store = _store()
    if store is None:
        return None
    key, pair, asked = _address(task)
    hit = store.get(key)
    if hit is None:
        return None
    entry, problem = verdicts.decode(hit, key, pair, asked)
    if entry is not None and entry.verdict == "different":
        problem = _replays(task, entry)
    if not problem:
        return entry.result
    cache.DROPPED.append(f"{store.path}: the proof of {task[0]!r} against {task[1]!r}: {problem}")
    store.known[key] = None  # dropped: the proof run again replaces the record
    return None


def _replays(task: tuple, entry: verdicts.Entry) -> str:
    """"" where the counterexample, run through the evaluator, is the one stored."""
    lhs, rhs, outputs = task[:3]
    try:
        inputs = msgspec.convert(entry.replay, verdicts.SnippetReplay).inputs
        found = plain_counterexample(replay(build_query(lhs, rhs, outputs), inputs))
    except (PtxError, ReplayError, msgspec.ValidationError) as e:
        return f"its counterexample does not replay ({e})"
    if found != entry.result.get("counterexample"):
        return "its counterexample is not what the evaluator gives"
    return ""


def put(task: tuple, result: dict) -> None:
    store = _store()
    if store and result["verdict"] != "unknown":
        key, pair, asked = _address(task)
        cex = result.get("counterexample")
        store.put(key, verdicts.encode(key, pair, asked, result,
                                       {"inputs": cex["inputs"]} if cex else None))


def flush() -> None:
    for store in _STORES.values():
        store.flush()
