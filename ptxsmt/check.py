"""Legality of instruction text for a target and PTX ISA version.

The variant catalogue says which forms exist and what each needs; this
module adds the header facts (which targets ptxas 13.0 knows, the PTX ISA
version each target needs) and answers per line.
"""

from __future__ import annotations

from .isa.syntax import PtxError, format_variant, parse_one
from .isa.targets import PTX_VERSIONS, TARGET_MIN_PTX, Target
from .isa.variants import Requirement, catalogue


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


def check_line(text: str, target: Target, version: tuple[int, int], line: int = 1) -> str | None:
    """None when the instruction is legal for the target and version, else why not;
    `line` is the text's line in its file, and errors about the text name it."""
    if err := header_error(target, version):
        return err
    try:
        ins = parse_one(text)
    except PtxError as e:
        return str(PtxError(e.message, line + (e.line or 1) - 1, e.col))
    req = catalogue().requirement(ins.variant)
    name = format_variant(ins.variant)
    if req is None:
        return str(PtxError(f"'{name}' is not a legal variant", line, ins.col))
    if err := requirement_error(req, target, version):
        return str(PtxError(f"'{name}' {err}", line, ins.col))
    return None
