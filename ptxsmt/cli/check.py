"""`ptxsmt check`: the legality of each line, or of each instruction of a PTX module."""

from __future__ import annotations

import sys

import click

from .. import report
from ..check import (
    ILLEGAL,
    LEGAL,
    NOT_JUDGED,
    Judge,
    ModuleCheck,
    check_line,
    header_error,
    verdict,
)
from ..isa import source
from ..isa.errors import NotModelled, PtxError
from ..isa.targets import parse_target, parse_version
from ..report import catalogue
from ..report.progress import Progress
from .common import CONTEXT, check_target, check_version, fail, max_input_option

DEFAULT_TARGET, DEFAULT_VERSION = "sm_90", "9.0"
EXIT = {LEGAL: 0, ILLEGAL: 1, NOT_JUDGED: 5}  # docs/cli.md


@click.command("check", context_settings=CONTEXT)
@click.argument("source_file", metavar="SOURCE", type=click.File("rb"), default="-")
@click.option("--target", callback=check_target,
              help=f"[default: the module's .target, else {DEFAULT_TARGET}]")
@click.option("--ptx-version", callback=check_version,
              help=f"[default: the module's .version, else {DEFAULT_VERSION}]")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per line (per module for a module).")
@max_input_option
def check(source_file, target, ptx_version, as_json) -> None:
    """Check that each line (instructions, `.reg` declarations) is legal for a target and
    PTX version, or each instruction of a PTX module (a *.ptx file, or text with a
    `.version` line) with its declared register types.

    \b
    Legal means ptxas 13.0 accepts it: the catalogue follows ptxas where it
    and the ISA text disagree (docs/ptxas-legality.md). Errors name the line
    and column in SOURCE (and the function, in a module). A module is checked
    against its own .target and .version unless --target/--ptx-version say
    otherwise; a module ptxas refuses as a whole (a label or function defined
    twice, a branch to no label) is an error. A module's lines are printed as
    each function is judged, with progress on stderr on long runs. A line
    ptxsmt does not model (ld, st, bra, add.cc, max.xorsign.abs, ...) is counted
    "not judged", never legal (docs/check.md). Exit 0 if every line is judged
    legal, 1 if one is illegal, 5 if none is illegal but one is not judged,
    2 if the input cannot be read.
    \b
    Examples:
      echo 'setp.lt.ftz.f32 p, a, b;' | ptxsmt check
      ptxsmt check --target sm_80 --ptx-version 7.0 --json kernels.txt
      nvcc -ptx -arch=sm_90 k.cu -o k.ptx && ptxsmt check k.ptx
    """
    name = str(getattr(source_file, "name", "-"))
    try:
        data = source.read_stream(source_file, name)
    except PtxError as e:
        fail(str(e))
    if source.is_module(name, data):
        _check_module(data, name, target, ptx_version, as_json)
    else:
        _check_lines(data, target or DEFAULT_TARGET,
                     ptx_version or parse_version(DEFAULT_VERSION), as_json)


def _check_module(data: bytes, name: str, target, version, as_json) -> None:
    place = "" if name in ("-", "<stdin>") else f"{name}: "  # what errors name: the file
    try:
        text = source.decode(data, name).removeprefix("\ufeff")
    except PtxError as e:
        fail(place + str(e).removeprefix(f"{name}: "))
    judge = Judge(target and parse_target(target), version)
    verdicts, illegal = [], 0
    try:
        with Progress("check", total=text.count("\n") + 1, unit="lines") as bar:
            for fn_verdicts in _by_function(judge, text, bar):
                illegal += sum(v.error is not None for v in fn_verdicts)
                if as_json:
                    verdicts += fn_verdicts
                elif fn_verdicts:
                    report.out(catalogue.verdicts_text(fn_verdicts, place))
    except PtxError as e:
        fail(place + str(e))
    result = ModuleCheck(judge.target, judge.version, verdicts, judge.unjudged)
    if as_json:
        report.out(report.dumps(catalogue.module_check_json(result)))
    else:
        report.out(catalogue.module_summary_text(result, judged=judge.judged, illegal=illegal))
    sys.exit(EXIT[verdict(illegal, judge.unjudged)])


def _by_function(judge: Judge, text: str, bar: Progress):
    """The verdicts of each function in turn, the progress bar advanced by its lines."""
    verdicts, function = [], None
    for v in judge.read(text):
        if v.function != function and verdicts:
            yield verdicts
            verdicts = []
        function = v.function
        verdicts.append(v)
        bar.update(max(0, judge.lines - bar.done))
    if verdicts:
        yield verdicts
    bar.update(max(0, bar.total - bar.done))


def _check_lines(data: bytes, target, ptx_version, as_json) -> None:
    tgt = parse_target(target)
    if err := header_error(tgt, ptx_version):
        fail(err)
    illegal = unjudged = 0
    # a line ends at LF (or CRLF); a CR alone is whitespace, as ptxas reads it
    for number, raw in enumerate(data.split(b"\n"), 1):
        raw = raw.removesuffix(b"\r")
        try:
            line = raw.decode("utf-8")
            error = None
        except UnicodeDecodeError as e:
            line = raw.decode("utf-8", "backslashreplace")
            error = f"line {number}: not UTF-8 text (byte 0x{raw[e.start]:02x})"
        if number == 1:
            line = line.removeprefix("\ufeff")
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        not_judged = None
        try:
            error = error or check_line(line, tgt, ptx_version, number)
        except NotModelled as e:
            not_judged = str(e)
        illegal += error is not None
        unjudged += not_judged is not None
        if as_json:
            report.out(report.dumps(catalogue.check_json(number, text, error, not_judged)))
        else:
            report.out(catalogue.check_text(text, error, not_judged))
    sys.exit(EXIT[verdict(illegal, unjudged)])
