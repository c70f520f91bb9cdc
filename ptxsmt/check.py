"""Legality of instruction text for a target and PTX ISA version.

The variant catalogue says which forms exist and what each needs; this
module adds the header facts (which targets ptxas 13.0 knows, the PTX ISA
version each target needs) and answers per line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .isa.syntax import PtxError, format_variant, parse_one
from .isa.variants import Requirement, catalogue

# The targets ptxas 13.0 assembles for, with the PTX ISA version each first appeared in.
TARGET_MIN_PTX: dict[int, tuple[int, int]] = {
    75: (6, 3), 80: (7, 0), 86: (7, 1), 87: (7, 4), 88: (9, 0), 89: (7, 8), 90: (7, 8),
    100: (8, 6), 103: (8, 8), 110: (9, 0), 120: (8, 7), 121: (8, 8),
}
PTX_VERSIONS = ((9, 0),)  # refined from ptxas probing; see docs/ptxas-legality.md
_TARGET = re.compile(r"(?:sm_)?(\d+)([af]?)")
_VERSION = re.compile(r"(\d+)\.(\d+)")


@dataclass(frozen=True)
class Target:
    sm: int
    suffix: str = ""

    def __str__(self) -> str:
        return f"sm_{self.sm}{self.suffix}"


def parse_target(text: str) -> Target:
    m = _TARGET.fullmatch(text.strip())
    if not m:
        raise PtxError(f"target {text!r} is not like sm_90")
    return Target(int(m.group(1)), m.group(2))


def parse_version(text: str) -> tuple[int, int]:
    m = _VERSION.fullmatch(text.strip())
    if not m:
        raise PtxError(f"PTX ISA version {text!r} is not like 9.0")
    return int(m.group(1)), int(m.group(2))


def header_error(target: Target, version: tuple[int, int]) -> str | None:
    """Why `.version V` / `.target sm_X` is refused regardless of the instruction."""
    v = f"{version[0]}.{version[1]}"
    if version > (9, 0) or version < (1, 0):
        return f"PTX ISA {v} is not a version ptxas 13.0 knows (1.0 to 9.0)"
    if target.sm not in TARGET_MIN_PTX:
        return f"{target} is not a target ptxas 13.0 assembles for"
    need = TARGET_MIN_PTX.get(target.sm)
    if need and version < need:
        return f"{target} needs PTX ISA {need[0]}.{need[1]} or later (have {v})"
    return None


def requirement_error(req: Requirement, target: Target, version: tuple[int, int]) -> str | None:
    if version < req.ptx:
        return f"needs PTX ISA {req.ptx[0]}.{req.ptx[1]} (have {version[0]}.{version[1]})"
    if target.sm < req.sm:
        return f"needs sm_{req.sm} or higher (target is {target})"
    return None


def check_line(text: str, target: Target, version: tuple[int, int]) -> str | None:
    """None when the instruction is legal for the target and version, else why not."""
    if err := header_error(target, version):
        return err
    try:
        ins = parse_one(text)
    except PtxError as e:
        return str(e)
    req = catalogue().requirement(ins.variant)
    name = format_variant(ins.variant)
    if req is None:
        return f"'{name}' is not a legal variant"
    if err := requirement_error(req, target, version):
        return f"'{name}' {err}"
    return None
