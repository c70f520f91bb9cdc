"""The on-disk cache of compiled programs (docs/batch.md, The cache): one SQLite file per
build, named by a fingerprint of ptxsmt's sources, Z3 and Python. A record sealed by a
hash of its key and bytes that fails it is dropped (DROPPED) and replaced (INSERT OR
REPLACE). Writes are a batch's worth in one transaction (concurrent runs that wrote
record by record waited on each other's locks); a cache that cannot be used is skipped.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sqlite3
import sys
import time
from contextlib import suppress
from importlib.util import find_spec
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_STALE_SECONDS = 7 * 24 * 3600


def directory() -> Path:
    """Where the cache lives (it may not exist yet)."""
    if place := os.environ.get("PTXSMT_CACHE_DIR"):
        return Path(place)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ptxsmt"


def fingerprint() -> str:
    """What a compiled program depends on: ptxsmt's source, the installed Z3 and the
    Python that runs it."""
    digest = hashlib.sha256()
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(str(path.relative_to(_PACKAGE)).encode() + b"\0" + path.read_bytes())
    digest.update(z3_release().encode())
    digest.update(sys.version.encode())  # the cache keeps marshalled bytecode
    return digest.hexdigest()[:20]


def z3_release() -> str:
    """The installed Z3's distribution name and version, read without importing Z3."""
    spec = find_spec("z3")
    if spec is None or spec.origin is None:
        return "no z3"
    package = Path(spec.origin).parent
    releases = sorted(p.name for p in package.parent.glob("z3_solver-*.dist-info"))
    return releases[-1] if releases else str(package.stat().st_mtime_ns)


class Store:
    """Records by key, in one SQLite file; every failure turns the store off."""

    def __init__(self, path: Path | None, place: str | None = None):
        self.path = path  # None: records kept in memory only
        self.place = place  # $PTXSMT_CACHE_DIR when opened (tests change it)
        self.db: sqlite3.Connection | None = None
        self.failed: str | None = None if path else "in memory"
        self.known: dict[str, bytes | None] = {}  # prefetched or put (None: dropped)
        self.pending: dict[str, bytes] = {}  # put, not yet written

    def _connect(self) -> sqlite3.Connection:
        if self.db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fresh = not self.path.exists()
            # BEGIN IMMEDIATE: a write takes the lock at its start, within the timeout
            # (one that must upgrade from reading fails at once where another writes)
            db = sqlite3.connect(self.path, timeout=30, isolation_level="IMMEDIATE")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a lost write is a recompile
            db.execute("CREATE TABLE IF NOT EXISTS programs "
                       "(key TEXT PRIMARY KEY, record BLOB NOT NULL)")
            if fresh:
                _remove_stale(self.path)
            else:  # a run that only reads leaves the mtime alone (WAL): mark it used
                with suppress(OSError):  # not ours to touch: reading it is still fine
                    os.utime(self.path)
            self.db = db
        return self.db

    def _run(self, sql: str, rows, many: bool = False):
        """The statement's cursor; None where the store failed (now or before)."""
        if self.failed:
            return None
        try:
            with self._connect() as db:  # a transaction (a write's): committed, or rolled back
                return (db.executemany if many else db.execute)(sql, rows)
        except (sqlite3.Error, OSError) as e:
            self.failed = f"{type(e).__name__}: {e}"
            return None

    def get(self, key: str) -> bytes | None:
        """The record stored under `key`, or None."""
        if key not in self.known:
            self.prefetch([key])
        return self.known.get(key)

    def prefetch(self, keys: list[str]) -> None:
        """Read the records of these keys now, in a few queries, for `get` to return."""
        keys = [key for key in keys if key not in self.known]
        for start in range(0, len(keys), 500):  # SQLite's limit on parameters: 999 or more
            part = keys[start:start + 500]
            cursor = self._run("SELECT key, record FROM programs WHERE key IN "
                               f"({', '.join('?' * len(part))})", part)
            for key, sealed in cursor or ():
                self.known[key] = sealed[16:] if sealed[:16] == seal(key, sealed[16:]) else None
                if self.known[key] is None:
                    DROPPED.append(f"{self.path}: the record of {key[:60]!r} fails its seal")

    def put(self, key: str, record: bytes) -> None:
        """Store a record: written at the next `flush`, or once 512 are waiting."""
        if self.known.get(key) is None:  # new, or dropped: replaced
            self.known[key] = self.pending[key] = record
        if len(self.pending) >= 512:
            self.flush()

    def count(self) -> int:
        self.flush()
        cursor = self._run("SELECT count(*) FROM programs", ())
        return cursor.fetchone()[0] if cursor else 0

    def flush(self) -> None:
        """Write the records put since the last flush, in one transaction (kept in
        memory where the store cannot write them)."""
        if self.pending and not self.failed:
            rows, self.pending = [(k, seal(k, r) + r) for k, r in self.pending.items()], {}
            self._run("INSERT OR REPLACE INTO programs VALUES (?, ?)", rows, many=True)


def seal(key: str, record: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + record).digest()[:16]


DROPPED: list[str] = []  # records that failed a check, "FILE: the problem": to warn of


def _remove_stale(current: Path) -> None:
    """Files of other builds of ptxsmt that no run has touched for a week."""
    for path in current.parent.glob("programs-*.sqlite*"):
        with suppress(OSError):  # another run removed it, or it is not ours to remove
            if not path.name.startswith(current.name) and \
                    time.time() - path.stat().st_mtime > _STALE_SECONDS:
                path.unlink()


_STORE: Store | None = None
_ENABLED = os.environ.get("PTXSMT_NO_CACHE", "") in ("", "0")


def _forked() -> None:
    """A forked process never uses its parent's connection (SQLite forbids it); it
    opens its own when it first needs one."""
    if _STORE is not None:
        _STORE.db = None


if hasattr(os, "register_at_fork"):  # where there is no fork, nothing is forked
    os.register_at_fork(after_in_child=_forked)


def flush() -> None:
    """Write what this run has put so far (a forked process leaves without atexit)."""
    if _STORE is not None:
        _STORE.flush()


atexit.register(flush)


def enable(on: bool) -> None:
    """Use the cache (the default) or not (`--no-cache`)."""
    global _ENABLED
    _ENABLED = on


def store() -> Store | None:
    """This run's store, or None when the cache is off."""
    global _STORE
    if not _ENABLED:
        return None
    place = os.environ.get("PTXSMT_CACHE_DIR")
    if _STORE is None or _STORE.place != place:
        flush()
        _STORE = Store(directory() / f"programs-{fingerprint()}.sqlite", place)
    return _STORE


def info() -> dict[str, object]:
    """Where the cache is and what it holds, for `ptxsmt cache`."""
    current = store()
    files = sorted(directory().glob("programs-*.sqlite"))
    return {"directory": str(directory()), "enabled": current is not None,
            "file": str(current.path) if current else None,
            "programs": current.count() if current else 0,
            "other_builds": [str(p) for p in files if not current or p != current.path],
            "problem": current.failed if current else None}


def clear() -> int:
    """Remove every cache file (of every build: programs, synth's proofs, equiv --batch's
    verdicts); the number of files removed."""
    global _STORE
    flush()
    _STORE = None
    paths = [*directory().glob("*-*.sqlite*"), *directory().glob("equiv/*.json")]
    for path in paths:
        path.unlink(missing_ok=True)
    return len(paths)
