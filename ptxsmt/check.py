"""Legality of instruction text for a target and PTX ISA version.

The variant catalogue says which forms exist and what each needs; this
module adds the header facts (which targets ptxas 13.0 knows, the PTX ISA
version each target needs) and answers per line, or per instruction of a module.
"""

from __future__ import annotations

from dataclasses import dataclass

from .isa.body import Checked, Rejected, parse
from .isa.module import Module
from .isa.syntax import Instruction, PtxError, format_variant
from .isa.targets import PTX_VERSIONS, TARGET_MIN_PTX, Target
from .isa.variants import Requirement, requirement


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
        instructions = parse(text)
    except PtxError as e:
        return str(PtxError(e.message, line + (e.line or 1) - 1, e.col))
    return next(filter(None, (instruction_error(ins, target, version, line)
                              for ins in instructions)), None)


def instruction_error(ins: Instruction, target: Target, version: tuple[int, int],
                      line: int | None = None) -> str | None:
    """Why ptxas refuses a parsed instruction for the target and version, or None;
    `line` (if given) replaces its own line number."""
    req = requirement(ins.variant)
    name = format_variant(ins.variant)
    place = (line or ins.line, ins.col)
    if req is None:
        return str(PtxError(f"'{name}' is not a legal variant", *place))
    if err := requirement_error(req, target, version):
        return str(PtxError(f"'{name}' {err}", *place))
    return None


@dataclass(frozen=True)
class Verdict:
    """One instruction of a module: where, and why it is illegal (None: legal)."""

    function: str
    line: int
    col: int
    text: str
    error: str | None


@dataclass(frozen=True)
class ModuleCheck:
    target: Target
    version: tuple[int, int]
    verdicts: list[Verdict]  # the instructions of ptxsmt's families, in order
    unjudged: int  # instructions outside them (ld, st, bra, add, ...)

    @property
    def legal(self) -> bool:
        return all(v.error is None for v in self.verdicts)


def check_module(module: Module, target: Target | None = None,
                 version: tuple[int, int] | None = None) -> ModuleCheck:
    """Each instruction of ptxsmt's families, against the module's `.target`/`.version`
    unless `target`/`version` say otherwise; the header must name both or they must be
    given. A header ptxas refuses raises PtxError."""
    target = target or module.target
    version = version or module.version
    if target is None or version is None:
        raise PtxError("the module has no .target or .version; give --target and "
                       "--ptx-version")
    if err := header_error(target, version):
        raise PtxError(err)
    verdicts, unjudged = [], 0
    for fn in module.functions:
        if fn.body is None:
            continue
        unjudged += len(fn.body.generic)
        for item in fn.body.items:
            if isinstance(item, Checked):
                ins = item.instruction
                verdicts.append(Verdict(fn.name, ins.line, ins.col, ins.text,
                                        instruction_error(ins, target, version)))
            elif isinstance(item, Rejected):
                e = item.error
                verdicts.append(Verdict(fn.name, e.line or 0, e.col, item.text, str(e)))
    return ModuleCheck(target, version, verdicts, unjudged)
