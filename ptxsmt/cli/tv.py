"""`ptxsmt tv`: translation validation of LLVM's NVPTX backend on one IR file."""

from __future__ import annotations

import click

from .. import report
from ..isa.errors import PtxError
from ..report import llvm as rendering
from .common import CONTEXT, fail, read_text

EXIT = {"refines": 0, "different": 1}


@click.command("tv", context_settings=CONTEXT)
@click.argument("file", type=click.File("rb"))
@click.option("--mcpu", default="sm_80", show_default=True, help="The sm_ to compile for.")
@click.option("-O", "opt", type=click.IntRange(0, 3), default=2, show_default=True,
              help="LLVM's optimisation level.")
@click.option("--function", "only", metavar="NAME", help="Only this function.")
@click.option("--timeout", type=click.FloatRange(0, 1e6, min_open=True), default=30.0,
              show_default=True, help="Seconds per function.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def tv(file, mcpu, opt, only, timeout, as_json) -> None:
    """Compile FILE.ll with the LLVM inside llvmlite and check that the PTX of every
    function refines its IR (docs/llvm.md).

    \b
    Verdicts: refines, different (with the inputs, the IR's and the PTX's results),
    unknown (why), refused (IR outside what ptxsmt models). Exit 0 when every function
    refines, 1 when one is different, 3 when some are unknown or refused, 2 on bad input.
    \b
    Examples:
      ptxsmt tv kernels.ll
      ptxsmt tv kernels.ll --mcpu sm_90 -O 0 --function add --json
    """
    from ..llvm.refine import validate_module
    from ..smt.portfolio import second_solver
    text = read_text(file, "FILE")
    try:
        results = validate_module(text, cpu=mcpu, opt=opt, timeout_ms=int(timeout * 1000),
                                  only=only, second=second_solver())
    except PtxError as e:
        fail(str(e))
    report.out(rendering.tv_json(results) if as_json else rendering.tv_text(results))
    verdicts = {v.verdict for v in results}
    raise SystemExit(1 if "different" in verdicts else
                     max((EXIT.get(v, 3) for v in verdicts), default=0))
