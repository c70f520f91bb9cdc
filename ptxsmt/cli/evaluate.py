"""`ptxsmt eval`: one snippet on concrete operands, or a JSONL batch."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable
from typing import BinaryIO

import click

from .. import report
from ..isa.errors import PtxError, quote
from ..report import evaluation
from ..report.progress import Progress
from ..sem.options import Options
from .common import (
    CONTEXT,
    allow_quick_exit,
    cache_option,
    fail,
    given,
    hardware_option,
    is_ptx_file,
    jobs_option,
    max_input_option,
    merge_option,
    options,
    read_function_file,
    refuse,
    target_option,
    warn_unused,
)


@click.command("eval", context_settings=CONTEXT)
@click.argument("ptx", required=False)
@click.argument("assignments", nargs=-1)
@click.option("--batch", "batch", type=click.File("rb"), metavar="FILE",
              help="JSONL of {\"ptx\", \"inputs\", \"options\"}; '-' for stdin.")
@click.option("--check", "check_outputs", is_flag=True,
              help="With --batch: compare with each line's \"outputs\"; print only differences.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: inputs, outputs, open values taken.")
@click.option("--function", "function", metavar="NAME",
              help="With a .ptx file: the function to run (default: the file's only one).")
@click.option("--unroll", type=click.IntRange(0, 64), default=0, metavar="K",
              help="With FILE.ptx: run each loop up to K times (more is an error).")
@jobs_option(2)
@cache_option
@target_option
@merge_option
@hardware_option
@max_input_option
def eval_cmd(ptx, assignments, batch, check_outputs, as_json, function, unroll, jobs, target,
             vset_merge, hardware) -> None:
    """Evaluate PTX on concrete operands: NAME=VALUE for each register read.

    \b
    VALUE is hex bits (0x7e00), a PTX literal (0f3F800000, 0d..., -3) or a
    friendly value (1.0, -0.0, nan, inf, true). Outputs are the registers written.
    With FILE.ptx: one function, inputs by parameter name, special register
    (tid.x), memory location (global[0x1000], global[0x1000].u32), the register
    an unmodelled instruction writes (%r5) or a value the ISA leaves open, as an
    equiv counterexample names it ('open[mul.rn.f32 NaN of 0x...]=0x7fffffff');
    outputs are the return values and the memory each st wrote.
    With --hardware sm_90 an output the ISA leaves open (a NaN's bits, a
    division by zero) is what an H200 gives (min.NaN.f32: 0x7fffffff), not
    "unspecified"; JSON names it ("hardware": "sm_90").
    A batch line's "options" ({"target": "sm_13", "vset_merge": "b",
    "hardware": "sm_90"}) apply on top of --target, --vset-merge and --hardware.
    A batch line's inputs are read as eval's (open[...] values too); a batch
    answers each line with the line itself and its "outputs" (or "error"), in
    the input's order; a big batch is shared among --jobs processes.
    --json prints one object: "inputs" as read (hex), "outputs" (a function's
    return values, and its "memory"), the open values given ("open").
    Exit 0 evaluated (every batch line answered), 1 a batch line's error or a
    --check difference, 2 bad input (an output the ISA leaves open included,
    without --hardware or its open[...] value), 130 interrupted.
    \b
    Examples:
      ptxsmt eval 'setp.ltu.f32 p|q, a, b;' a=nan b=1.0
      ptxsmt eval --json 'set.gtu.u32.f16x2 d, a, b;' a=0x3c007e00 b=0
      ptxsmt eval '@g selp.b32 d, a, b, c;' g=false d=7 a=1 b=2 c=true
      ptxsmt eval --hardware sm_90 'min.NaN.f32 d, a, b;' a=nan b=1.0
      ptxsmt eval --batch vectors.jsonl > results.jsonl
      ptxsmt eval --batch models/golden.jsonl --check
      ptxsmt eval k.ptx --function f f_param_0=7 tid.x=1 'global[0x1004]=5'
    """
    opts = options(target, vset_merge, hardware)
    if check_outputs and batch is None:
        fail("--check compares a batch's stored outputs; give --batch FILE")
    if batch is not None:
        if ptx or assignments:
            fail("give either PTX text and operands or --batch, not both")
        refuse(given("function"), "to --batch (a line names its function: {\"file\", "
                                  "\"function\", \"inputs\"})")
        warn_unused(given("as_json"), "with --batch: its answers are JSON lines already")
        sys.exit(check_batch(batch, opts) if check_outputs else run_batch(batch, opts, jobs))
    warn_unused(given("jobs"), "without --batch")
    if not ptx:
        fail("no PTX given (try: ptxsmt eval 'setp.lt.f32 p, a, b;' a=1 b=2)")
    inputs: dict[str, str] = {}
    for item in assignments:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            fail(f"operand {quote(item)} is not NAME=VALUE")
        key = name.strip()
        if key.lstrip("%") in {k.lstrip("%") for k in inputs}:
            fail(f"input {quote(key)} is given twice")
        inputs[key] = value.strip()
    if function or is_ptx_file(ptx):
        eval_function(ptx, function, inputs, opts, as_json, unroll)
        return
    try:
        from ..eval.evaluate import evaluate  # the solver: not for a batch

        ev = evaluate(ptx, inputs, opts)
    except PtxError as e:
        fail(str(e))
    if as_json:
        report.out(report.dumps(evaluation.evaluation_json(ptx, ev, hardware)))
    else:
        report.out(evaluation.evaluation_text(ptx, ev, hardware))


def eval_function(path: str, name: str | None, inputs: dict[str, str], opts: Options,
                  as_json: bool, unroll: int = 0) -> None:
    from ..function.evaluate import evaluate_function  # the solver: not for a batch
    from ..report import function

    fn = read_function_file(path, name)
    try:
        ev = evaluate_function(fn, inputs, opts, unroll=unroll)
    except PtxError as e:
        fail(f"{path}: {e}")
    report.out(report.dumps(function.function_json(ev, opts.hardware)) if as_json
               else function.function_text(ev))


def _pause_cycle_collection() -> None:
    """For the rest of the command: a batch makes no cycles (JSON objects, programs, errors
    kept without their tracebacks), and scanning its live objects over and over costs a
    third of the time."""
    gc.disable()


def run_batch(batch: BinaryIO, opts: Options, jobs: int = 1) -> int:
    """Answer every line, in order; a bad line gets "error" in place. Exit 1 if any did."""
    from ..batch.run import render  # numpy: only a batch needs it

    allow_quick_exit()  # its workers are stopped when render ends
    _pause_cycle_collection()
    status = 0
    with Progress("eval --batch", unit="lines") as bar:
        for data, lines, failed in render(batch, opts, jobs):
            status |= failed
            report.out_bytes(data)
            bar.update(lines)
    return status


def check_batch(lines: Iterable[bytes | str], opts: Options) -> int:
    """Recompute every line's outputs; report lines whose stored outputs differ."""
    from ..batch.run import check_jsonl

    _pause_cycle_collection()
    total = bad = 0
    with Progress("eval --batch --check", unit="lines") as bar:
        for diff in check_jsonl(lines, opts):
            total += 1
            bar.update()
            if diff is not None:
                bad += 1
                report.out(report.dumps(diff))
    report.err(evaluation.check_summary(total - bad, bad))
    return 1 if bad else 0
