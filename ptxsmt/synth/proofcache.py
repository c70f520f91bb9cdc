"""The proof-result cache: a verdict is a pure function of the query, so it is kept.

Content-addressed: the key is a hash of the two snippet texts, the compared outputs
and what was asked (with or without the class report, and how it reads the
operands); the file's name carries the
fingerprint of ptxsmt's sources and of the installed Z3 (`ptxsmt.batch.cache`), so a
changed semantics or solver never reads an old verdict. It lives beside the program
cache and is turned off with it (`--no-cache`, PTXSMT_NO_CACHE=1). An "unknown" (a
timeout) is not kept: a later run with more time may decide it.
"""

from __future__ import annotations

import hashlib
import json

from ..batch import cache

_STORES: dict[str, cache.Store] = {}  # by the program cache's file: one per build and place


def _store() -> cache.Store | None:
    programs = cache.store()  # None when the cache is off
    if programs is None:
        return None
    if str(programs.path) not in _STORES:
        path = programs.path.with_name(programs.path.name.replace("programs-", "synth-proofs-"))
        _STORES[str(programs.path)] = cache.Store(path, programs.place)
    return _STORES[str(programs.path)]


def key(task: tuple) -> str:
    lhs, rhs, outputs, _timeout, with_classes, reading = task
    asked = [lhs, rhs, list(outputs), with_classes] + ([reading] if with_classes else [])
    return hashlib.sha256(json.dumps(asked).encode()).hexdigest()


def get(task: tuple) -> dict | None:
    store = _store()
    hit = store.get(key(task)) if store else None
    return json.loads(hit) if hit else None


def put(task: tuple, result: dict) -> None:
    store = _store()
    if store and result["verdict"] != "unknown":
        store.put(key(task), json.dumps(result).encode())


def flush() -> None:
    for store in _STORES.values():
        store.flush()
