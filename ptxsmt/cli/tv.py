"""`ptxsmt tv`: translation validation of LLVM's NVPTX backend on one IR file."""

from __future__ import annotations

import click

from .. import report
from ..isa.errors import PtxError
from ..report import llvm as rendering
from ..report.progress import Progress
from ..smt.solving.phrases import EXIT
from . import interrupts
from .common import CONTEXT, check_features, fail, nan_option, read_text, warn_refusals


@click.command("tv", context_settings=CONTEXT)
@click.argument("file", type=click.File("rb"))
@click.option("--mcpu", default="sm_80", show_default=True, help="The sm_ to compile for.")
@click.option("--mattr", default="", metavar="FEATURES", callback=check_features,
              help="LLVM target features, as llc's -mattr: +ptx80 (PTX 8.0 forms such as "
                   "max.relu.s16x2), several as +ptx80,+sm_90.")
@click.option("-O", "opt", type=click.IntRange(0, 3), default=2, show_default=True,
              help="LLVM's optimisation level.")
@click.option("--function", "only", metavar="NAME", help="Only this function.")
@click.option("--timeout", type=click.FloatRange(0, 1e6, min_open=True), default=30.0,
              show_default=True, help="Seconds per function.")
@click.option("--json", "as_json", is_flag=True,
              help="JSON lines: one object per function, then a summary object.")
@click.option("--unroll", type=click.IntRange(0, 64), default=0, metavar="K",
              help="Unroll each loop K times; a proof is then \"refines up to K "
                   "iterations\" where an input runs a loop more often (without it: up to "
                   "4, and such a proof is unknown).")
@nan_option
def tv(file, mcpu, mattr, opt, only, timeout, as_json, unroll, nan) -> None:
    """Compile FILE.ll with the LLVM inside llvmlite and check that the PTX of every
    function refines its IR (docs/llvm.md). Each verdict is printed as it is decided,
    in the file's order.

    \b
    Verdicts: refines, refines up to K iterations (--unroll K, where an input runs a loop
    more often), different (with the inputs, the IR's and the PTX's results), unknown
    (why), refused (IR outside what ptxsmt models). Exit 0 when every function
    refines, 1 when one is different, 3 when some are unknown or refused, 2 on bad input
    (a file that defines no function included), 4 on a ptxsmt bug (two solvers that
    disagree), 130 when Ctrl-C or SIGTERM (`timeout`) stopped the run: the verdicts
    printed stay, the summary says how many were decided. --json: a JSON line a
    function as decided, then a summary line.
    \b
    Examples:
      ptxsmt tv kernels.ll
      ptxsmt tv kernels.ll --mcpu sm_90 -O 0 --function add --json
      ptxsmt tv packed.ll --mcpu sm_90 --mattr +ptx80
    """
    from ..smt.queries.refinement import validate_module
    text = read_text(file, "FILE")
    try:
        names, verdicts = validate_module(text, cpu=mcpu, opt=opt,
                                          timeout_ms=int(timeout * 1000), only=only,
                                          solver="auto", nan=nan, features=mattr,
                                          unroll=unroll)
    except PtxError as e:
        fail(str(e))
    interrupts.stop_on_terminate()
    results = _stream(names, verdicts, as_json)
    kinds = {v.verdict for v in results}
    raise SystemExit(1 if "different" in kinds else max(EXIT[v] for v in kinds))


def _stream(names: list[str], verdicts, as_json: bool) -> list:
    """Print each verdict as it comes, then the summary; on Ctrl-C or SIGTERM the summary
    of what was decided, then the interruption goes on (exit 130). Two solvers that
    disagree are a bug, as for snippets (exit 4): the verdicts printed stay. What ptxas
    refuses of a function's PTX for its header is its JSON line's `ptxas_refuses`, or a
    warning on stderr, as `equiv` warns of a file."""
    from ..check import header_refusals
    from ..smt.solving.decide import SolverDisagreement
    summary = rendering.tv_summary_json if as_json else rendering.tv_summary
    results = []
    with Progress("tv", total=len(names), unit="functions", terminal_only=True) as bar:
        try:
            for v in verdicts:
                if interrupts.seen():  # decided as z3 was stopped ("canceled"): no verdict
                    raise KeyboardInterrupt
                bar.clear()
                refusals = header_refusals(v.ptx) if v.ptx else []
                with interrupts.held():  # the summary counts exactly the lines printed
                    if not as_json:
                        warn_refusals(f"the PTX of @{v.name}", refusals, "`tv --json`")
                    # flushed: a pipe's reader has it now
                    report.out(rendering.tv_json_line(v, refusals) if as_json
                               else rendering.tv_line(v))
                    results.append(v)
                bar.update()
        except PtxError as e:
            fail(str(e))
        except SolverDisagreement as e:
            bar.clear()
            fail(f"ptxsmt bug, please report: {e}", code=4)
        except BaseException as e:  # a Ctrl-C may surface wrapped (see interrupts)
            if not (isinstance(e, KeyboardInterrupt) or interrupts.seen()):
                raise
            bar.clear()
            report.out(summary(results, len(names), True))
            raise KeyboardInterrupt from None
    report.out(summary(results, len(names), False))
    return results
