"""`ptxsmt check`: the legality of each line, or of each instruction of a PTX module."""

from __future__ import annotations

import re
import sys

import click

from .. import report
from ..check import check_line, check_module, header_error
from ..isa.errors import PtxError
from ..isa.module import read_module
from ..isa.targets import parse_target, parse_version
from ..report import catalogue
from .common import CONTEXT, check_target, check_version, fail, max_input_option

DEFAULT_TARGET, DEFAULT_VERSION = "sm_90", "9.0"
# A whole file, not lines: named *.ptx, or a line that starts with `.version`.
_MODULE_HEADER = re.compile(rb"^\s*\.version\b", re.M)


@click.command("check", context_settings=CONTEXT)
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--target", callback=check_target,
              help=f"[default: the module's .target, else {DEFAULT_TARGET}]")
@click.option("--ptx-version", callback=check_version,
              help=f"[default: the module's .version, else {DEFAULT_VERSION}]")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per line (per module for a module).")
@max_input_option
def check(source, target, ptx_version, as_json) -> None:
    """Check that each line (instructions, `.reg` declarations) is legal for a target and
    PTX version, or each instruction of a PTX module (a *.ptx file, or text with a
    `.version` line) with its declared register types.

    \b
    Legal means ptxas 13.0 accepts it: the catalogue follows ptxas where it
    and the ISA text disagree (docs/ptxas-legality.md). Errors name the line
    and column in SOURCE (and the function, in a module). A module is checked
    against its own .target and .version unless --target/--ptx-version say
    otherwise; instructions outside ptxsmt's families (ld, st, bra, add, ...)
    are counted, not judged. Exit 1 if anything is illegal, 2 if the input
    cannot be read.
    \b
    Examples:
      echo 'setp.lt.ftz.f32 p, a, b;' | ptxsmt check
      ptxsmt check --target sm_80 --ptx-version 7.0 --json kernels.txt
      nvcc -ptx -arch=sm_90 k.cu -o k.ptx && ptxsmt check k.ptx
    """
    data = source.read()
    if str(getattr(source, "name", "")).endswith(".ptx") or _MODULE_HEADER.search(data):
        _check_module(data, target, ptx_version, as_json)
    else:
        _check_lines(data, target or DEFAULT_TARGET,
                     ptx_version or parse_version(DEFAULT_VERSION), as_json)


def _check_module(data: bytes, target, version, as_json) -> None:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        fail(f"line {line}: not UTF-8 text (byte 0x{data[e.start]:02x})")
    try:
        result = check_module(read_module(text), target and parse_target(target), version)
    except PtxError as e:
        fail(str(e))
    if as_json:
        report.out(report.dumps(catalogue.module_check_json(result)))
    else:
        report.out(catalogue.module_check_text(result))
    sys.exit(0 if result.legal else 1)


def _check_lines(data: bytes, target, ptx_version, as_json) -> None:
    tgt = parse_target(target)
    if err := header_error(tgt, ptx_version):
        fail(err)
    status = 0
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
            error = None
        except UnicodeDecodeError as e:
            line = raw.decode("utf-8", "backslashreplace").rstrip("\r\n")
            error = f"line {number}: not UTF-8 text (byte 0x{raw[e.start]:02x})"
        if number == 1:
            line = line.removeprefix("\ufeff")
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        error = error or check_line(line, tgt, ptx_version, number)
        status |= error is not None
        if as_json:
            report.out(report.dumps(catalogue.check_json(number, text, error)))
        else:
            report.out(catalogue.check_text(text, error))
    sys.exit(status)
