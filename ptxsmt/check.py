"""Legality of instruction text for a target and PTX ISA version.

The variant catalogue says which forms exist and what each needs; this
module adds the header facts (which targets ptxas 13.0 knows, the PTX ISA
version each target needs) and answers per line, or per instruction of a module.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from .isa.body import Checked, Generic, Rejected, Repeat, parse
from .isa.errors import NotModelled
from .isa.module import Function, Module, called, read_functions
from .isa.syntax import Instruction, PtxError, format_variant
from .isa.targets import PTX_VERSIONS, TARGET_MIN_PTX, Target
from .isa.variants import Requirement, Variant, requirement


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
    `line` is the text's line in its file, and errors about the text name it. A line
    ptxsmt does not model (`ld`, `add.cc`, `max.xorsign.abs`) is neither: NotModelled is raised."""
    if err := header_error(target, version):
        return err
    try:
        instructions = parse(text)
    except PtxError as e:
        placed = type(e)(e.message, line + (e.line or 1) - 1, e.col)
        if isinstance(e, NotModelled):
            raise placed from None
        return str(placed)
    return next(filter(None, (instruction_error(ins, target, version, line)
                              for ins in instructions)), None)


def instruction_error(ins: Instruction, target: Target, version: tuple[int, int],
                      line: int | None = None) -> str | None:
    """Why ptxas refuses a parsed instruction for the target and version, or None;
    `line` (if given) replaces its own line number."""
    why = variant_error(ins.variant, target, version)
    return None if why is None else str(PtxError(why, line or ins.line, ins.col))


def variant_error(variant: Variant, target: Target, version: tuple[int, int]) -> str | None:
    """Why ptxas refuses every instruction of `variant` for the target and version (no
    place), or None."""
    req = requirement(variant)
    if req is None:
        return f"'{format_variant(variant)}' is not a legal variant"
    if err := requirement_error(req, target, version):
        return f"'{format_variant(variant)}' {err}"
    return None


@dataclass(frozen=True)
class Verdict:
    """One instruction of a module: where, and why it is illegal (None: legal)."""

    function: str
    line: int
    col: int
    text: str
    error: str | None


# A module's or a run of lines' verdict: illegal if a line is, else not judged if ptxsmt
# could not judge a line (ptxas may refuse it), else legal.
LEGAL, ILLEGAL, NOT_JUDGED = "legal", "illegal", "not judged"


def verdict(illegal: int, unjudged: int) -> str:
    return ILLEGAL if illegal else NOT_JUDGED if unjudged else LEGAL


@dataclass(frozen=True)
class ModuleCheck:
    target: Target
    version: tuple[int, int]
    verdicts: list[Verdict]  # the instructions of ptxsmt's families, in order
    unjudged: int  # instructions outside them (ld, st, bra, add.cc, ...)

    @property
    def illegal(self) -> int:
        return sum(v.error is not None for v in self.verdicts)

    @property
    def verdict(self) -> str:
        return verdict(self.illegal, self.unjudged)

    @property
    def legal(self) -> bool:
        """Every instruction judged, and legal: never true while one is not judged."""
        return self.verdict == LEGAL


def check_module(module: Module, target: Target | None = None,
                 version: tuple[int, int] | None = None) -> ModuleCheck:
    """Each instruction of ptxsmt's families, against the module's `.target`/`.version`
    unless `target`/`version` say otherwise; the header must name both or they must be
    given. A header ptxas refuses raises PtxError."""
    judge = Judge(target, version)
    judge.start(module)
    verdicts = [v for fn in module.functions for v in judge.function(fn)]
    return ModuleCheck(judge.target, judge.version, verdicts, judge.unjudged)


class Judge:
    """The legality of a module's instructions, function by function as it is read:
    `for verdict in Judge().read(text)`; then `.target`, `.version`, `.unjudged`. Each
    variant is judged once a run, and each instruction shape is parsed once (`Repeat`)."""

    def __init__(self, target: Target | None = None, version: tuple[int, int] | None = None):
        self.target, self.version = target, version
        self.unjudged = self.judged = 0
        self.lines = 0  # of the text read so far (the last function's first line)
        self._started = False
        # by the variant's id (a shape's Repeats share its variant; hashing one costs)
        self._errors: dict[int, tuple[Variant, str | None]] = {}

    def read(self, text: str) -> Iterator[Verdict]:
        """Read and judge a module's text; PtxError for what cannot be read."""
        module, seen = Module(), {}
        for fn in read_functions(text, module, seen=seen):
            self.lines = fn.line
            if fn.body is None:
                continue
            self.start(module)
            yield from self.function(fn)
            fn.body = None  # judged: nothing keeps it
        self.start(module)

    def start(self, module: Module) -> None:
        """Fix the target and version from the header (given ones win), once."""
        if self._started:
            return
        self.target = self.target or module.target
        self.version = self.version or module.version
        if self.target is None or self.version is None:
            raise PtxError("the module has no .target or .version; give --target and "
                           "--ptx-version")
        if err := header_error(self.target, self.version):
            raise PtxError(err)
        self._started = True

    def function(self, fn: Function) -> list[Verdict]:
        if fn.body is None:
            return []
        out = []
        self.unjudged += fn.body.skipped
        for item in fn.body.items:
            if (judged := _judged(item)) is not None:
                variant, text, line, col = judged
                out.append(Verdict(fn.name, line, col, text, self._error(variant, line, col)))
            elif isinstance(item, Rejected):
                e = item.error
                out.append(Verdict(fn.name, e.line or 0, e.col, item.text, str(e)))
            elif isinstance(item, Generic):
                self.unjudged += 1
        self.judged += len(out)
        return out

    def refusals(self, fn: Function) -> Iterator[str]:
        """Why ptxas refuses instructions of `fn` for the target and version alone (what
        it refuses everywhere is `Rejected`, the reader's error), each placed."""
        for item in fn.body.items:
            if (judged := _judged(item)) is None:
                continue
            variant, _, line, col = judged
            if why := self._error(variant, line, col):
                yield f"in {fn.name}: {why}"

    def _error(self, variant: Variant, line: int, col: int) -> str | None:
        known = self._errors.get(id(variant))
        if known is None:  # the variant is kept with its answer, so its id stays its own
            known = self._errors[id(variant)] = (variant, variant_error(variant, self.target,
                                                                        self.version))
        why = known[1]
        return None if why is None else str(PtxError(why, line, col))


def _judged(item) -> tuple[Variant, str, int, int] | None:
    """A body item's variant, text and place, where it is an instruction to judge."""
    if isinstance(item, Checked):
        ins = item.instruction
        return ins.variant, ins.text, ins.line, ins.col
    if isinstance(item, Repeat):
        return item.variant, item.text, item.line, item.col
    return None


def header_refusals(fn: Function) -> list[str]:
    """Why ptxas refuses instructions of `fn`, and of the functions it calls, for its
    module's `.target` and `.version` (llc-14 writes sm_80's `max.NaN` into sm_70 code):
    ptxsmt reads them as the ISA defines them, so its commands warn rather than refuse.
    Where ptxas refuses the header itself, that alone; none where it lacks either."""
    if fn.header is None:
        return []
    if err := header_error(*fn.header):
        return [err]
    judge = Judge(*fn.header)
    judge.start(Module())
    return [why for f in _reached(fn) for why in judge.refusals(f)]


def _reached(fn: Function) -> Iterator[Function]:
    """`fn` and the functions it calls, transitively, each once (those with a body)."""
    functions, seen, wanted = fn.module or {fn.name: fn}, set(), [fn.name]
    while wanted:
        f = functions.get(name := wanted.pop())
        if f is None or f.body is None or name in seen:
            continue
        seen.add(name)
        yield f
        wanted += called(f.body)
