"""Permalinks in a local SQLite file: a row a request, under its content address.

A row holds the request (both inputs, names, options) and, once decided, its verdict as
a `smt.solving.verdicts` entry: sealed by its check, and served only where every field matches
the request and this build of ptxsmt (`verdicts.decode`); a "different" is replayed
before it is shown (the caller's: it needs a worker). The request itself is sealed too:
a row whose seal fails is refused, never re-run as something it was not. Unknowns and
errors are not stored (a quieter server may decide them), nor an IR pair's "different"
(no evaluator of IR replays it): a visit decides them again."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from .. import pairs
from ..smt.solving import verdicts
from .request import Request


def default_path() -> Path:
    """$PTXSMT_SERVE_DB, else ptxsmt's folder in the user's data directory."""
    if place := os.environ.get("PTXSMT_SERVE_DB"):
        return Path(place)
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "ptxsmt" / "links.sqlite"


def seal(key: str, request: str) -> str:
    return hashlib.sha256(f"{key}\0{request}".encode()).hexdigest()


class Store:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(self._connect()) as db, db:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS links (key TEXT PRIMARY KEY, "
                       "request TEXT NOT NULL, seal TEXT NOT NULL, verdict BLOB, "
                       "created REAL NOT NULL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=10)  # one a call: threads share no state

    def add(self, req: Request) -> str:
        """Keep the request (if new) and return its key."""
        key, text = req.key(), req.to_json()
        with closing(self._connect()) as db, db:
            db.execute("INSERT OR IGNORE INTO links VALUES (?, ?, ?, NULL, ?)",
                       (key, text, seal(key, text), time.time()))
        return key

    def request(self, key: str) -> tuple[Request | None, str]:
        """The request stored under `key`, else (None, why: "" where there is none)."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT request, seal FROM links WHERE key = ?",
                             (key,)).fetchone()
        if row is None:
            return None, ""
        text, sealed = row
        if sealed != seal(key, text):
            return None, "the stored request fails its seal (edited?)"
        try:
            return Request.from_json(text), ""
        except (ValueError, TypeError) as e:
            return None, f"the stored request cannot be read ({e})"

    def verdict(self, key: str, req: Request) -> tuple[verdicts.Entry | None, str]:
        """The stored verdict where it may be served (a "different" still to be
        replayed), else (None, why: "" where none is stored)."""
        with closing(self._connect()) as db:
            row = db.execute("SELECT verdict FROM links WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] is None:
            return None, ""
        return verdicts.decode(row[0], req.key(), req.digest(), req.options)

    def put_verdict(self, key: str, req: Request, result: dict, replay: dict | None) -> None:
        """Keep a verdict `equiv --batch` would cache (a definite one that can be checked
        again); anything else clears it."""
        kept = result.get("verdict") in pairs.CACHED and \
            (req.kind, result["verdict"]) not in pairs.UNCACHED
        entry = verdicts.encode(req.key(), req.digest(), req.options, result, replay) \
            if kept else None
        with closing(self._connect()) as db, db:
            db.execute("UPDATE links SET verdict = ? WHERE key = ?", (entry, key))

    def drop_verdict(self, key: str) -> None:
        with closing(self._connect()) as db, db:
            db.execute("UPDATE links SET verdict = NULL WHERE key = ?", (key,))
