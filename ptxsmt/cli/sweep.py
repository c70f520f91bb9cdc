"""`ptxsmt sweep`: every operand pair of a 16-bit variant, digested."""

from __future__ import annotations

import click

from .. import report
from ..eval import sweep as sweeping
from ..isa.body import parse_one
from ..isa.errors import PtxError
from ..isa.syntax import parse_variant
from ..report import sweep as rendering
from ..report.progress import Progress
from ..smt.queries.vectors import instruction_forms
from .common import (
    CONTEXT,
    OutputFile,
    cache_option,
    fail,
    jobs_option,
    merge_option,
    options,
    target_option,
    write_failed,
)


@click.command("sweep", context_settings=CONTEXT)
@click.argument("what", metavar="VARIANT|PTX")
@jobs_option(2)
@click.option("--blocks", "blocks_file", type=OutputFile(), default=None,
              help="Also write the 256 per-block digests as JSON (to bisect a difference).")
@click.option("--json", "as_json", is_flag=True)
@cache_option
@target_option
@merge_option
def sweep(what, jobs, blocks_file, as_json, target, vset_merge) -> None:
    """Evaluate a 16-bit-operand variant on all 2^32 operand pairs and digest the result.

    \b
    The digest is SHA-256 over 256 block hashes (a-values in order, b from 0 to
    0xffff, predicate outputs as packed bits, others as little-endian words), so
    two runs, two versions or two emulators can be compared; predicate inputs
    are swept too (x2 per predicate).
    \b
    Examples:
      ptxsmt sweep setp.lt.f16
      ptxsmt sweep 'set.gtu.u16.bf16 d, a, b;' --jobs 2 --json
    """
    try:
        opts = options(target, vset_merge)
        text = what.strip() if " " in what.strip() else instruction_forms(parse_variant(what))[0]
        parse_one(text)
        sweeping.sweep_inputs(text, opts)
    except PtxError as e:
        fail(str(e))
    with Progress("sweeping", total=sweeping.BLOCKS, unit="blocks") as bar:
        result = sweeping.sweep(text, jobs, opts, progress=bar.update)
    if blocks_file:
        try:
            blocks_file.write(report.dumps(result.blocks) + "\n")
        except OSError as e:
            write_failed(blocks_file, e)
    if as_json:
        report.out(report.dumps(rendering.sweep_json(text, result)))
    else:
        report.out(rendering.sweep_text(text, result))
