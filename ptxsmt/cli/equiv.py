"""`ptxsmt equiv`: prove two snippets equal or find operands where they differ."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from .. import report
from ..isa.errors import PtxError, quote
from ..report import equivalence, function
from ..sem.options import DEFAULT_NAN
from ..smt.queries.classes import class_report
from ..smt.queries.snippets import ReplayError, Verdict, build_query, decide
from ..smt.solving import budget
from ..smt.solving.decide import SOLVER_CHOICES, SolverDisagreement
from ..smt.solving.phrases import EXIT
from ..smt.solving.portfolio import unavailable
from ..smt.solving.smt2 import script
from ..solver import Z3_FIRST_SECONDS
from ..synth.executor import EXECUTORS
from .common import (
    CONTEXT,
    allow_quick_exit,
    cache_option,
    fail,
    given,
    is_console,
    is_ptx_file,
    jobs_option,
    max_input_option,
    merge_option,
    nan_option,
    options,
    read_function_file,
    read_text,
    refuse,
    target_option,
    timeout_option,
    warn_unused,
    writable_dir,
)
from .link import link_option


@click.command("equiv", context_settings=CONTEXT)
@click.argument("lhs", required=False)
@click.argument("rhs", required=False)
@click.option("-a", "lhs_file", type=click.File("rb"), help="Read the first snippet from a file.")
@click.option("-b", "rhs_file", type=click.File("rb"), help="Read the second snippet from a file.")
@click.option("--outputs", help="Registers to compare, e.g. p,d (default: written by both).")
@timeout_option("CPU seconds of the work (each solver process its own): the same "
                "verdict under any load; past a wall-clock cap of twice that, unknown.")
@click.option("--all-classes", is_flag=True,
              help="Report which operand-class combinations break it and which are safe.")
@click.option("--emit-smt2", type=click.Path(file_okay=False), metavar="DIR",
              callback=writable_dir,
              help="Also write the query as a standalone SMT-LIB 2 file: DIR/equiv.smt2 for "
                   "snippets, DIR/FUNCTION.smt2 for functions (sat: they differ).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: the verdict and any counterexample.")
@click.option("--function", "function", metavar="NAME",
              help="With two .ptx files, or SOURCE.ll and TARGET.ptx: the function to "
                   "compare (default: the only one).")
@click.option("--unroll", type=click.IntRange(0, 64), default=0, metavar="K",
              help="With two .ptx files (or SOURCE.ll and TARGET.ptx): unroll each loop K "
                   "times; a verdict is then 'equivalent (refines) up to K iterations'. "
                   "Without it a loop runs up to 4 times, and agreement there is 'unknown' "
                   "(exit 3).")
@click.option("--function-b", "function_b", metavar="NAME",
              help="The second file's function, if named otherwise.")
@click.option("--solver", type=click.Choice(SOLVER_CHOICES), default="auto", show_default=True,
              help=f"auto: z3 alone for {Z3_FIRST_SECONDS:g} s, then bitwuzla races it for "
                   "the time left "
                   "(z3 alone where bitwuzla is not installed); z3: z3 alone; portfolio: "
                   "z3, bitwuzla and cvc5 race from the start (pip install "
                   "'ptxsmt[portfolio]'); the first definite answer wins.")
@click.option("--no-sweep", "no_sweep", is_flag=True,
              help="With two .ptx files: ask the whole query at once, without first "
                   "merging the values both functions share (equivalence sweeping, "
                   "docs/scale.md); for comparison.")
@click.option("--certify", is_flag=True,
              help="With two .ptx files: ask a solver again for each merge the sweep made by "
                   "a rule rather than a proof (IEEE classes, truth tables, phi cases); "
                   "'equivalent' only if every one is proved.")
@click.option("--batch", "batch", type=click.File("rb"), metavar="PAIRS.jsonl",
              help="Many pairs, one JSON object a line (see docs/scale.md); one JSON result "
                   "line each, in order.")
@jobs_option(1)
@click.option("--executor", type=click.Choice(EXECUTORS), default="processes",
              show_default=True, help="With --batch: worker processes here, or dask.")
@click.option("--scheduler", metavar="ADDRESS", help="With --executor dask: a running scheduler.")
@cache_option
@target_option
@merge_option
@max_input_option
@nan_option
@link_option
def equiv(lhs, rhs, lhs_file, rhs_file, outputs, timeout, all_classes, emit_smt2, as_json,
          function, unroll, function_b, solver, no_sweep, certify, batch, jobs, executor,
          scheduler, target, vset_merge, nan) -> None:
    """Prove two PTX snippets equal, or find operands where they differ.

    \b
    Inputs are the registers read before written; outputs compared are the
    registers both snippets write. Two .ptx files: one function of each, equal
    when their return values and global and shared memory agree for all
    parameters, special registers and initial memory (a loop: with --unroll K
    "equivalent up to K iterations"; without, up to 4 and "unknown"). SOURCE.ll
    and TARGET.ptx: does the PTX function refine the IR's (docs/llvm.md)?
    --json prints one object: the verdict and its counterexample (inputs, each
    side's outputs, the open values taken; docs/equiv.md); --batch prints one
    such line a pair, with its run (CPU seconds, memory, merges).
    Exit 0 equivalent (refines; or up to K iterations), 1 different (with a
    counterexample), 2 bad input, 3 unknown (timeout, a difference only through
    what ptxsmt does not model; never reported as equal) or IR refused, 4 a
    ptxsmt bug caught by its own replay, 130 interrupted. A batch: the worst of
    its pairs (4, then 1, 2, 3).
    \b
    Examples:
      ptxsmt equiv 'setp.lo.u32 p, a, b;' 'setp.lt.u32 p, a, b;'
      ptxsmt equiv 'setp.lt.f32 p, a, b; not.pred p, p;' 'setp.ge.f32 p, a, b;' --all-classes
      ptxsmt equiv -a before.ptx -b after.ptx --outputs d --json
      ptxsmt equiv k_O0.ptx k_O3.ptx --function _Z4pickPKiS0_Piii
      ptxsmt equiv k_O0.ptx k_O3.ptx --function _Z3sumPKiPii --unroll 4
      ptxsmt equiv k.ll k.ptx --function add
      ptxsmt equiv k_O0.ptx k_O3.ptx --function f --emit-smt2 queries/
      ptxsmt equiv k_O0.ptx k_O3.ptx --function f --certify --json
      ptxsmt equiv 'shl.b32 d, a, 1;' 'add.u32 d, a, a;' --solver portfolio
      ptxsmt equiv --batch pairs.jsonl --jobs 2 > results.jsonl
    """
    if solver == "portfolio" and (missing := unavailable()):
        report.err(f"warning: {' and '.join(missing)} not installed: the portfolio is z3 alone "
                   "(pip install 'ptxsmt[portfolio]')")
    if batch:
        from .equiv_batch import run_batch

        refuse(given("lhs", "rhs", "lhs_file", "rhs_file", "outputs", "all_classes", "emit_smt2",
                     "function", "function_b", "no_sweep", "certify"),
               "with --batch (each line names its pair)")
        warn_unused(given("as_json"), "with --batch (its output is JSON lines)")
        if scheduler and executor != "dask":
            refuse(["--scheduler"], "without --executor dask")
        run_batch(batch, jobs, executor, scheduler, timeout, solver, unroll, target, vset_merge,
                  nan)
    refuse(given("jobs", "executor", "scheduler"), "without --batch")
    # one pair: its wall cap counts from the process's start, and ends with the command
    click.get_current_context().with_resource(
        budget.pair(timeout, budget.started() if is_console() else None))
    if any(a and a.endswith(".ll") for a in (lhs, rhs)):
        refuse(given("outputs", "all_classes", "lhs_file", "rhs_file",
                     "solver", "target", "vset_merge", "no_sweep", "certify"),
               "to SOURCE.ll against TARGET.ptx")
        equiv_ir(lhs, rhs, function, function_b, timeout, as_json, emit_smt2, nan, unroll)
    for arg in (lhs, rhs):
        if arg and arg.strip().endswith(".ptx") and " " not in arg.strip() \
                and not is_ptx_file(arg):
            fail(f"{quote(arg)}: no such file")
    files = [a for a in (lhs, rhs) if is_ptx_file(a)]
    if function or function_b or len(files) == 2:
        refuse(given("outputs", "all_classes", "lhs_file", "rhs_file"),
               "to two .ptx files' functions (only to snippets)")
        equiv_functions(lhs, rhs, function, function_b or function, timeout, target,
                        vset_merge, as_json, unroll, solver, emit_smt2, not no_sweep, certify,
                        nan)
    if files:
        fail(f"{quote(files[0])} is a .ptx file and the other argument is not: give two .ptx "
             "files (functions) or two snippets")
    refuse(given("function_b", "no_sweep", "certify"),
           "to snippets (only with --function and two .ptx files)")
    if (lhs_file or rhs_file) and (lhs or rhs):
        fail("give the snippets either as arguments or with -a FILE -b FILE, not both")
    if bool(lhs_file) != bool(rhs_file):
        fail(f"give the other snippet too (-{'b' if lhs_file else 'a'} FILE)")
    if lhs_file:
        lhs = read_text(lhs_file, "-a")
        rhs = read_text(rhs_file, "-b")
        for option, text, file in (("-a", lhs, lhs_file), ("-b", rhs, rhs_file)):
            if not text.strip():
                fail(f"{option} {getattr(file, 'name', '-')}: the snippet is empty")
    if not lhs or not rhs:
        fail("give two snippets (as arguments or with -a FILE -b FILE)")
    try:
        opts = options(target, vset_merge)
        outs = [o.strip() for o in outputs.split(",")] if outputs else None
        if outs is not None and not all(outs):
            fail(f"--outputs {quote(outputs)}: a register name is empty")
        query = build_query(lhs, rhs, outs, opts, nan=nan)
        if emit_smt2:
            write_smt2(emit_smt2, "equiv", query.smt2())
        try:
            verdict, classes = budget.bounded(_snippets, query, timeout, solver, all_classes)
        except budget.OutOfTime:
            verdict, classes = Verdict("unknown", query.outputs, reason=budget.OUT_OF_TIME,
                                       nan=nan), None
    except PtxError as e:
        fail(str(e))
    except (ReplayError, SolverDisagreement) as e:
        fail(f"ptxsmt bug, please report: {e}", code=4)
    if as_json:
        report.out(report.dumps(equivalence.verdict_json(verdict, classes)))
    else:
        report.out(equivalence.verdict_text(verdict, lhs, rhs, query.lhs.types, query.rhs.types,
                                       classes))
    sys.exit(EXIT[verdict.verdict])


def _snippets(query, timeout: float, solver: str, all_classes: bool):
    """The snippets' verdict, and their class report where asked and they differ."""
    verdict = decide(query, timeout, solver=solver)
    return verdict, class_report(query, timeout) if all_classes and verdict.counterexample \
        else None


def equiv_functions(lhs: str, rhs: str, name: str | None, name_b: str | None, timeout: float,
                    target: str, vset_merge: str, as_json: bool, unroll: int = 0,
                    solver: str = "auto", emit_smt2: str | None = None,
                    sweeping: bool = True, certifying: bool = False,
                    nan: str = DEFAULT_NAN) -> None:
    from ..smt.queries.functions import FunctionVerdict, check_function_equivalence

    if not lhs or not rhs:
        fail("give two .ptx files")
    for arg in (lhs, rhs):
        if not is_ptx_file(arg):
            fail(f"--function compares two .ptx files' functions; {quote(arg)} is not a .ptx file")
    a, b = read_function_file(lhs, name), read_function_file(rhs, name_b)
    opts = options(target, vset_merge)
    emit = emitter(emit_smt2, a.name, [
        "ptxsmt function equivalence query: sat means the functions differ somewhere both "
        "are defined (unsat: equivalent, if no undefined behaviour is reached)",
        f"first: {a.name} in {lhs}", f"second: {b.name} in {rhs}"])
    start = time.perf_counter()
    try:
        verdict = budget.bounded(check_function_equivalence, a, b, opts, timeout, unroll,
                                 solver, emit, sweeping, certifying, nan)
    except budget.OutOfTime:
        verdict = FunctionVerdict("unknown", a.name, b.name, {}, reason=budget.OUT_OF_TIME,
                                  seconds=time.perf_counter() - start, nan=nan)
    except PtxError as e:
        fail(f"{_culprit(a, lhs, rhs, opts, unroll)}: {e}")
    except (ReplayError, SolverDisagreement) as e:
        fail(f"ptxsmt bug, please report: {e}", code=4)
    report.out(report.dumps(function.function_verdict_json(verdict)) if as_json
               else function.function_verdict_text(verdict, lhs, rhs))
    allow_quick_exit()  # the check reaped its solvers; freeing its terms one by one at
    sys.exit(EXIT[verdict.verdict])  # exit took 20 s after a 1,000-operation one


def equiv_ir(source: str, target: str, name: str | None, name_b: str | None, timeout: float,
             as_json: bool, emit_smt2: str | None = None, nan: str = DEFAULT_NAN,
             unroll: int = 0) -> None:
    """Does TARGET.ptx's function refine SOURCE.ll's? Verdicts as `ptxsmt tv`'s."""
    from ..llvm.errors import Unsupported
    from ..llvm.module import function_names, read_ir
    from ..report import llvm as rendering
    from ..smt.queries.refinement import Refinement, Validated, ir_refines

    if not (source and source.endswith(".ll") and target and target.endswith(".ptx")):
        fail("IR against PTX takes SOURCE.ll first and TARGET.ptx second")
    for path in (source, target):
        if not Path(path).is_file():
            fail(f"{quote(path)}: no such file")
    with open(source, "rb") as f:
        text = read_text(f, "SOURCE")
    try:
        functions = read_ir(text, only=name)  # with a name, only what it needs is read
    except PtxError as e:
        fail(str(e))
    if name is None and len(functions) != 1:
        fail(f"{quote(source)} defines {len(functions)} functions: name one with --function")
    name = name or next(iter(functions))
    if name not in functions:
        fail(f"no function @{name} in {quote(source)} (it defines "
             f"{', '.join('@' + n for n in function_names(text)) or 'none'})")
    ptx_fn = read_function_file(target, name_b or name)
    emit = emitter(emit_smt2, name, [
        "ptxsmt refinement query: sat means the PTX does not refine the IR (unsat: it does)",
        f"source: @{name} in {source}", f"target: {ptx_fn.name} in {target}"])
    try:
        result = Validated(name, budget.bounded(ir_refines, functions[name], ptx_fn,
                                                int(timeout * 1000), "auto", emit, nan, unroll))
    except budget.OutOfTime:
        result = Validated(name, Refinement("unknown", budget.OUT_OF_TIME, nan=nan))
    except Unsupported as e:
        result = Validated(name, None, e)
    except PtxError as e:
        fail(str(e))
    except SolverDisagreement as e:
        fail(f"ptxsmt bug, please report: {e}", code=4)
    report.out(rendering.equiv_json(result, target, ptx_fn.name) if as_json
               else rendering.equiv_text(result, target, ptx_fn.name))
    sys.exit(EXIT[result.verdict])


def _culprit(fn, lhs: str, rhs: str, opts, unroll: int) -> str:
    """Which file's function an error belongs to: the first, if it fails alone."""
    from ..function.encode import encode_function
    from ..function.unroll import DEFAULT_UNROLL

    try:
        encode_function(fn, opts, unroll=unroll or DEFAULT_UNROLL)
    except PtxError:
        return lhs
    return rhs


def emitter(directory: str | None, name: str, comments: list[str]):
    """For --emit-smt2 DIR: a hook that writes the query a verdict comes from to
    DIR/NAME.smt2 as the standard script the portfolio's solvers read (None: none)."""
    if directory is None:
        return None

    def emit(assertions) -> None:
        write_smt2(directory, "".join(c if c.isalnum() or c in "_-.$" else "_" for c in name),
                   script(assertions, comments))
    return emit


def write_smt2(directory: str, name: str, text: str) -> Path:
    target = Path(directory) / f"{name}.smt2"
    try:
        target.write_text(text)
    except OSError as e:
        fail(f"cannot write {quote(str(target))}: {e.strerror or e}")
    return target
