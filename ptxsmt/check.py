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

# The lowest `.version` ptxas 13.0 accepts with each `.target` (docs/ptxas-legality.md §1).
TARGET_MIN_PTX: dict[str, tuple[int, int]] = {
    "sm_10": (1, 0), "sm_13": (1, 4), "sm_20": (2, 0), "sm_30": (3, 0), "sm_50": (4, 1),
    "sm_53": (4, 2), "sm_60": (5, 0), "sm_70": (6, 0), "sm_75": (6, 3), "sm_80": (7, 0),
    "sm_86": (7, 1), "sm_87": (7, 4), "sm_88": (7, 3), "sm_89": (7, 8), "sm_90": (7, 8),
    "sm_90a": (8, 0), "sm_100": (8, 6), "sm_100a": (8, 6), "sm_100f": (8, 8), "sm_103": (8, 8),
    "sm_103a": (8, 8), "sm_103f": (8, 8), "sm_110": (9, 0), "sm_110a": (9, 0),
    "sm_110f": (9, 0), "sm_120": (8, 7), "sm_120a": (8, 7), "sm_120f": (8, 8),
    "sm_121": (8, 8), "sm_121a": (8, 8), "sm_121f": (8, 8),
}
# The `.version`s ptxas 13.0 knows.
PTX_VERSIONS: tuple[tuple[int, int], ...] = tuple(
    (major, minor) for major, last in ((1, 5), (2, 3), (3, 2), (4, 3), (5, 1), (6, 5), (7, 8),
                                       (8, 8), (9, 0)) for minor in range(last + 1))
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
    if version not in PTX_VERSIONS:
        return f"PTX ISA {v} is not a version ptxas 13.0 knows (1.0 to 9.0)"
    need = TARGET_MIN_PTX.get(str(target))
    if need is None:
        return f"{target} is not a target ptxas 13.0 knows ({', '.join(TARGET_MIN_PTX)})"
    if version < need:
        return f".target {target} needs PTX ISA {need[0]}.{need[1]} or later (have {v})"
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
