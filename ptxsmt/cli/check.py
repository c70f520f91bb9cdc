"""`ptxsmt check`: the legality of each line for a target and PTX version."""

from __future__ import annotations

import sys

import click

from .. import report
from ..check import check_line, header_error
from ..isa.targets import parse_target
from ..report import catalogue
from .common import CONTEXT, check_target, check_version, fail


@click.command("check", context_settings=CONTEXT)
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--target", default="sm_90", show_default=True, callback=check_target)
@click.option("--ptx-version", default="9.0", show_default=True, callback=check_version)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def check(source, target, ptx_version, as_json) -> None:
    """Check that each line (one instruction) is legal for a target and PTX version.

    \b
    Legal means ptxas 13.0 accepts it: the catalogue follows ptxas where it
    and the ISA text disagree (docs/ptxas-legality.md). Errors name the line
    and column in SOURCE. Exit 1 if any line is illegal.
    \b
    Examples:
      echo 'setp.lt.ftz.f32 p, a, b;' | ptxsmt check
      ptxsmt check --target sm_80 --ptx-version 7.0 --json kernels.txt
    """
    tgt = parse_target(target)
    if err := header_error(tgt, ptx_version):
        fail(err)
    status = 0
    for number, raw in enumerate(source, 1):
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
