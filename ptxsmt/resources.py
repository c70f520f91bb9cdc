"""Where the data that ships with ptxsmt lives: the identity library and the vectors.

A wheel carries `proofs/` and `models/` inside the package (`ptxsmt/_data/`, copied there
by setup.py at build time); an editable install or a checkout reads the top-level folders.
"""

from __future__ import annotations

from pathlib import Path

from .isa.errors import PtxError

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`proofs` or `models`, wherever this installation keeps it."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise PtxError(f"this installation of ptxsmt has no {name}/ folder; reinstall it, "
                   f"or name the folder explicitly")


def library_dir() -> Path:
    return data_dir("proofs")


def model_files() -> list[Path]:
    """The shipped vector corpus, models/*.jsonl (not models/hw/)."""
    return sorted(data_dir("models").glob("*.jsonl"))
