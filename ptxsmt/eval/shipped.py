"""The core programs that ship with ptxsmt, so even a first run compiles nothing with Z3.

`programs.jsonl.xz`, built by `python scripts/make_programs.py`, holds the program
record (`FastProgram.to_json()`, or `unsupported: why`) of the core (`core.py`) of
every catalogue variant under the default options, keyed like the cache's records.
Records are text, not bytecode, so one file serves every Python.

Its first line is the fingerprint of the sources a program depends on: the grammar
and catalogue (`isa/`), the semantics (`sem/`, `program.py`) and the code generator
and its vocabulary (`eval/codegen.py`, `eval/fast.py`). Where the installed sources
differ (an edit to the semantics, not yet rebuilt), the file is ignored and every
program is compiled as before: never a stale program. The Z3 release is pinned, not
fingerprinted: another release may simplify a term differently, never to other values.
The file is read once per process, and only when a core is missing from memory and
the on-disk cache. It is part of the package, not the cache: `--no-cache` still reads it.
"""

from __future__ import annotations

import hashlib
import json
import lzma
from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
PATH = Path(__file__).resolve().with_name("programs.jsonl.xz")
SOURCES = ("isa", "sem", "program.py", "eval/codegen.py", "eval/fast.py")


def fingerprint() -> str:
    """What the shipped programs depend on: the bytes of SOURCES' Python files."""
    digest = hashlib.sha256()
    for name in SOURCES:
        path = _PACKAGE / name
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(_PACKAGE)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:20]


def record(key: str) -> str | None:
    """The shipped record under `key` (a cache key: `core OPTIONS TEXT`), or None."""
    return _records().get(key)


@cache
def _records() -> dict[str, str]:
    """The file's records by key; none where it is missing, damaged or not fresh."""
    try:
        header, *lines = lzma.decompress(PATH.read_bytes()).decode().splitlines()
        fresh = json.loads(header)["fingerprint"] == fingerprint()
    except (OSError, lzma.LZMAError, ValueError, KeyError, TypeError):
        return {}
    if not fresh:
        return {}
    return dict(line.split("\t", 1) for line in lines)


def encode(records: dict[str, str]) -> bytes:
    """The file's bytes: the fingerprint, then `key<TAB>record` lines in key order (the
    same records give the same bytes)."""
    lines = [json.dumps({"fingerprint": fingerprint()}),
             *(f"{key}\t{records[key]}" for key in sorted(records))]
    return lzma.compress("\n".join(lines).encode() + b"\n", preset=9 | lzma.PRESET_EXTREME)
