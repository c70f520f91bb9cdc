"""Verdicts kept on disk (`equiv --batch`'s cache): checked, never trusted.

One JSON file an entry, named by the pair's content address (`address`). An entry holds
what makes it checkable: the digest of both inputs (texts or files' bytes, function
names), every option the verdict was decided under, the build of ptxsmt (the fingerprint
of its sources, which takes in the installed Z3's release) and Z3's release by name, the
verdict's fields, for a "different" what its counterexample is replayed from, and
`check`, the SHA-256 of all of these (no secret: a hand edit that leaves it stale is
seen; a forger who recomputes it still meets the replay). `read` serves an entry only
where it has the schema and every field matches the pair asked about; otherwise it names
the problem, the caller warns once and decides the pair afresh. Replaying a "different"
is the caller's (it needs the pair's files), before anything is served.
"""

from __future__ import annotations

import hashlib
import json
import os
from contextlib import suppress
from functools import cache as once
from pathlib import Path
from typing import Any, Literal

import msgspec

from ...batch import cache

SCHEMA = 1
Verdict = Literal["equivalent", "bounded", "different", "refines", "refused"]


class Entry(msgspec.Struct, forbid_unknown_fields=True):
    schema: int
    key: str  # the content address: the file's name
    pair: str  # SHA-256 of the kind, both inputs and the function names
    options: dict[str, Any]  # every option, defaults filled in
    build: str  # cache.fingerprint(): ptxsmt's sources, Z3, Python
    z3: str
    verdict: Verdict
    result: dict[str, Any]  # the fields served, `verdict` among them
    replay: dict[str, Any] | None  # a "different"'s inputs, as the replay reads them
    check: str  # SHA-256 over every other field


class SnippetReplay(msgspec.Struct, forbid_unknown_fields=True):
    """A "different" of two snippets: the inputs its counterexample is replayed from."""
    inputs: dict[str, int | bool]


class FunctionReplay(msgspec.Struct, forbid_unknown_fields=True):
    """A "different" of two functions: each side's scalar inputs under its own names."""
    scalars: tuple[dict[str, int | bool], dict[str, int | bool]]
    memory: dict[str, int]  # SPACE[ADDRESS].TYPE: the initial memory
    watch: list[str]  # SPACE[ADDRESS].TYPE: where each side's final value is shown


@once
def _build() -> tuple[str, str]:
    """This build's fingerprint and Z3's release (the sources hashed once a process)."""
    return cache.fingerprint(), cache.z3_release()


def pair_digest(kind: str, sides: list[bytes], names: list) -> str:
    """What was compared: both inputs, length-prefixed, and the names read from them."""
    digest = hashlib.sha256()
    for part in (kind.encode(), *sides, json.dumps(names).encode()):
        digest.update(len(part).to_bytes(8, "little") + part)
    return digest.hexdigest()


def address(pair: str, options: dict) -> str:
    """The content address of a verdict: the pair, every option (a new option is in the
    dict, so in the address, by construction) and the build."""
    return hashlib.sha256(f"{pair}\0{_canonical(options)}\0{_build()[0]}"
                          .encode()).hexdigest()


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def checksum(entry: Entry) -> str:
    fields = msgspec.structs.asdict(entry)
    fields.pop("check")
    return hashlib.sha256(_canonical(fields).encode()).hexdigest()


def path(folder: Path, key: str) -> Path:
    return folder / f"{key}.json"


def read(folder: Path, key: str, pair: str, options: dict) -> tuple[Entry | None, str]:
    """The entry in `folder` under `key` where it is sound to serve, else (None, the
    problem: "" where there is no entry). A "different" still needs its replay."""
    try:
        return decode(path(folder, key).read_bytes(), key, pair, options)
    except FileNotFoundError:
        return None, ""
    except OSError as e:
        return None, f"cannot be read ({e.strerror or e})"


def decode(data: bytes, key: str, pair: str, options: dict) -> tuple[Entry | None, str]:
    """An entry's bytes as `read` serves them (another store's: synth's proof cache)."""
    try:
        entry = msgspec.json.decode(data, type=Entry)
    except (msgspec.DecodeError, UnicodeDecodeError) as e:  # bad JSON or UTF-8, truncated;
        return None, f"not a cache entry ({e})"  # a string, a list, a field missing or mistyped
    problems = (
        (entry.schema != SCHEMA, f"schema {entry.schema}, not {SCHEMA}"),
        (entry.check != checksum(entry), "its check does not match its fields (edited?)"),
        (entry.key != key or entry.pair != pair, "it is for another pair"),
        ((entry.build, entry.z3) != _build(),
         "it is from another build of ptxsmt or Z3"),
        (entry.options != options, "it was decided under other options"),
        (entry.result.get("verdict") != entry.verdict, "its verdict fields disagree"),
        ((entry.replay is None) != (entry.verdict != "different"),
         "a \"different\" without its replay, or a replay without a \"different\""),
    )
    for bad, problem in problems:
        if bad:
            return None, problem
    return entry, ""


def drop(folder: Path, key: str) -> None:
    """Remove an entry that was not served (a later run must not warn again)."""
    with suppress(OSError):
        path(folder, key).unlink()


def encode(key: str, pair: str, options: dict, result: dict, replay: dict | None) -> bytes:
    """An entry's bytes, sealed by its check."""
    entry = Entry(SCHEMA, key, pair, options, *_build(), result["verdict"], result, replay, "")
    entry.check = checksum(entry)
    return msgspec.json.encode(entry)


def write(folder: Path, key: str, pair: str, options: dict, result: dict,
          replay: dict | None) -> None:
    """Atomically (a concurrent run reads the whole file or none); a failure only costs
    the entry."""
    tmp = folder / f".{key}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(encode(key, pair, options, result, replay))
        os.replace(tmp, path(folder, key))
    except OSError:
        with suppress(OSError):
            tmp.unlink()
