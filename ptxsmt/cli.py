"""Command line: thin click commands over the library.

Exit codes: 0 success, 1 a negative answer (an illegal line, a failed batch
line), 2 bad input. Bad input is one line on stderr, never a traceback.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path

import click

from . import proofs, report
from .check import check_line
from .commands.ptxas_diff import ptxas_diff
from .isa.syntax import PtxError, parse_one
from .isa.targets import parse_target, parse_version
from .isa.variants import FAMILIES, catalogue, spec_catalogue
from .resources import library_dir
from .sem.options import VSET_MERGE_SOURCES, Options
from .smt.batch import evaluate_many
from .smt.classes import class_report
from .smt.evaluate import evaluate
from .smt.solve import ReplayError, build_query, check_equivalence

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def options(target: str, vset_merge: str) -> Options:
    return Options(target=parse_target(target).sm, vset_merge=vset_merge)


target_option = click.option("--target", default="sm_90", show_default=True,
                             help="sm_ target (sm_1x flushes f32 set/setp/slct subnormals).")
merge_option = click.option("--vset-merge", type=click.Choice(VSET_MERGE_SOURCES), default="c",
                            show_default=True,
                            help="vset merge: unmasked lanes from c (pseudocode) or b (prose).")


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="ptxsmt")
def main() -> None:
    """Symbolic verifier for PTX set, setp, selp, slct, vset2 and vset4.

    \b
    Examples:
      ptxsmt eval 'setp.ltu.f32 p|q, a, b;' a=nan b=1.0
      ptxsmt eval --batch vectors.jsonl
      echo 'set.lt.bf16.f32 d, a, b;' | ptxsmt check --target sm_80
      ptxsmt variants --family vset2
      ptxsmt equiv 'setp.lt.f32 p, a, b; not.pred p, p;' 'setp.ge.f32 p, a, b;'
      ptxsmt prove identities --jobs 2
      ptxsmt vectors setp.lt.ftz.f32 --out lt.jsonl
      ptxsmt sweep setp.lt.f16
      ptxsmt ptxas-diff models/golden.jsonl
    """


@main.command("eval", context_settings=CONTEXT)
@click.argument("ptx", required=False)
@click.argument("assignments", nargs=-1)
@click.option("--batch", "batch", type=click.File("r"), metavar="FILE",
              help="JSONL of {\"ptx\", \"inputs\"}; '-' for stdin.")
@click.option("--check", "check_outputs", is_flag=True,
              help="With --batch: compare with each line's \"outputs\"; print only differences.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@target_option
@merge_option
def eval_cmd(ptx, assignments, batch, check_outputs, as_json, target, vset_merge) -> None:
    """Evaluate PTX on concrete operands: NAME=VALUE for each register read.

    \b
    VALUE is hex bits (0x7e00), a PTX literal (0f3F800000, 0d..., -3) or a
    friendly value (1.0, -0.0, nan, inf, true). Outputs are the registers written.
    \b
    Examples:
      ptxsmt eval 'setp.ltu.f32 p|q, a, b;' a=nan b=1.0
      ptxsmt eval --json 'set.gtu.u32.f16x2 d, a, b;' a=0x3c007e00 b=0
      ptxsmt eval '@g selp.b32 d, a, b, c;' g=false d=7 a=1 b=2 c=true
      ptxsmt eval --batch vectors.jsonl > results.jsonl
      ptxsmt eval --batch models/golden.jsonl --check
    """
    try:
        opts = options(target, vset_merge)
    except PtxError as e:
        fail(e.message)
    if batch is not None:
        if ptx:
            fail("give either PTX text or --batch, not both")
        sys.exit(check_batch(batch, opts) if check_outputs else run_batch(batch, opts))
    if not ptx:
        fail("no PTX given (try: ptxsmt eval 'setp.lt.f32 p, a, b;' a=1 b=2)")
    inputs = {}
    for item in assignments:
        name, eq, value = item.partition("=")
        if not eq or not name:
            fail(f"operand {item!r} is not NAME=VALUE")
        inputs[name.strip()] = value.strip()
    try:
        ev = evaluate(ptx, inputs, opts)
    except PtxError as e:
        fail(str(e))
    if as_json:
        click.echo(report.dumps(report.evaluation_json(ptx, ev)))
    else:
        click.echo(report.evaluation_text(ptx, ev))


def run_batch(lines: Iterable[str], opts: Options) -> int:
    """Answer every line, in order; a bad line gets "error" in place. Exit 1 if any did."""
    status = 0
    for obj, error in _batch(lines, opts):
        status |= error is not None
        click.echo(report.dumps(obj))
    return status


def check_batch(lines: Iterable[str], opts: Options) -> int:
    """Recompute every line's outputs; report lines whose stored outputs differ."""
    total = bad = 0
    for obj, error in _batch(lines, opts, keep_stored=True):
        total += 1
        stored, got = obj.pop("stored", None), obj.get("outputs")
        if error or got != stored:
            bad += 1
            click.echo(report.dumps({"line": obj.pop("line"), "ptx": obj.get("ptx"),
                                     "inputs": obj.get("inputs"), "expected": stored,
                                     "got": error or got}))
    click.echo(f"check: {total - bad} passed, {bad} failed", err=True)
    return 1 if bad else 0


def _batch(lines: Iterable[str], opts: Options, keep_stored: bool = False,
           chunk: int = 65536):
    """(object with outputs or error, error) per non-blank line, in order. Lines are
    evaluated a chunk at a time, grouped by instruction text, so memory stays flat.
    The cyclic garbage collector is paused while a chunk is in flight (JSON objects
    make no cycles; scanning tens of thousands of live dicts over and over cost a
    third of the time) and its young generations run between chunks."""
    parsed: list[tuple[int, dict, str | None]] = []
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for number, line in enumerate(lines, 1):
            if line.strip():
                obj, error = _parse_batch_line(line)
                if keep_stored:
                    obj["stored"], obj["line"] = obj.pop("outputs", None), number
                parsed.append((number, obj, error))
                if len(parsed) == chunk:
                    yield from _answer(parsed, opts)
                    parsed = []
                    gc.collect(1)  # the young generations only: caches stay unscanned
        yield from _answer(parsed, opts)
    finally:
        if was_enabled:
            gc.enable()


def _answer(parsed: list[tuple[int, dict, str | None]], opts: Options):
    todo = [(obj["ptx"], obj.get("inputs", {})) for _, obj, error in parsed if error is None]
    answers = iter(evaluate_many(todo, opts, json_values=True))
    for number, obj, error in parsed:
        if error is None:
            answer = next(answers)
            if isinstance(answer, PtxError):
                error = str(answer)
            else:
                obj["outputs"] = answer.outputs
        if error is not None:
            obj["error"] = f"line {number}: {error}"
        yield obj, error


def _parse_batch_line(line: str) -> tuple[dict, str | None]:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        return {}, f"invalid JSON: {e.msg} at column {e.colno}"
    if not isinstance(obj, dict) or not isinstance(obj.get("ptx"), str):
        return (obj if isinstance(obj, dict) else {}), 'expected {"ptx": "...", "inputs": {...}}'
    if not isinstance(obj.get("inputs", {}), dict):
        return obj, '"inputs" must be an object'
    return obj, None


@main.command(context_settings=CONTEXT)
@click.argument("source", type=click.File("r"), default="-")
@click.option("--target", default="sm_90", show_default=True)
@click.option("--ptx-version", default="9.0", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def check(source, target, ptx_version, as_json) -> None:
    """Check that each line (one instruction) is legal for a target and PTX version.

    \b
    Legal means ptxas 13.0 accepts it: the catalogue follows ptxas where it
    and the ISA text disagree (docs/ptxas-legality.md). Exit 1 if any line
    is illegal.
    \b
    Examples:
      echo 'setp.lt.ftz.f32 p, a, b;' | ptxsmt check
      ptxsmt check --target sm_80 --ptx-version 7.0 --json kernels.txt
    """
    try:
        tgt, version = parse_target(target), parse_version(ptx_version)
    except PtxError as e:
        fail(e.message)
    status = 0
    for line in source:
        text = line.strip()
        if not text or text.startswith("//"):
            continue
        error = check_line(text, tgt, version)
        status |= error is not None
        if as_json:
            click.echo(report.dumps({"ptx": text, "legal": error is None, "error": error}))
        else:
            click.echo(f"ok       {text}" if error is None else f"illegal  {text}  -- {error}")
    sys.exit(status)


@main.command(context_settings=CONTEXT)
@click.option("--family", type=click.Choice((*FAMILIES, "glue")), help="Only this family.")
@click.option("--spec", is_flag=True, help="The ISA text's catalogue, before ptxas corrections.")
@click.option("--json", "as_json", is_flag=True)
def variants(family, spec, as_json) -> None:
    """List the legal variants with the PTX ISA version and sm_ target each needs.

    \b
    Examples:
      ptxsmt variants --family half-setp
      ptxsmt variants --json | jq length
    """
    rows = report.variants_rows(spec_catalogue() if spec else catalogue(), family)
    click.echo(report.dumps(rows) if as_json else report.variants_text(rows))


EXIT_VERDICT = {"equivalent": 0, "different": 1, "unknown": 3}


@main.command(context_settings=CONTEXT)
@click.argument("lhs", required=False)
@click.argument("rhs", required=False)
@click.option("-a", "lhs_file", type=click.File("r"), help="Read the first snippet from a file.")
@click.option("-b", "rhs_file", type=click.File("r"), help="Read the second snippet from a file.")
@click.option("--outputs", help="Registers to compare, e.g. p,d (default: written by both).")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds.")
@click.option("--all-classes", is_flag=True,
              help="Report which operand-class combinations break it and which are safe.")
@click.option("--emit-smt2", type=click.Path(file_okay=False), metavar="DIR",
              help="Also write the query as a standalone SMT-LIB 2 file.")
@click.option("--json", "as_json", is_flag=True)
@target_option
@merge_option
def equiv(lhs, rhs, lhs_file, rhs_file, outputs, timeout, all_classes, emit_smt2, as_json,
          target, vset_merge) -> None:
    """Prove two PTX snippets equal, or find operands where they differ.

    \b
    Inputs are the registers read before written; outputs compared are the
    registers both snippets write. Exit 0 equivalent, 1 different (with a
    counterexample), 2 bad input, 3 unknown (timeout; never reported as equal).
    \b
    Examples:
      ptxsmt equiv 'setp.lo.u32 p, a, b;' 'setp.lt.u32 p, a, b;'
      ptxsmt equiv 'setp.lt.f32 p, a, b; not.pred p, p;' 'setp.ge.f32 p, a, b;' --all-classes
      ptxsmt equiv -a before.ptx -b after.ptx --outputs d --json
    """
    lhs = lhs_file.read() if lhs_file else lhs
    rhs = rhs_file.read() if rhs_file else rhs
    if not lhs or not rhs:
        fail("give two snippets (as arguments or with -a FILE -b FILE)")
    try:
        opts = options(target, vset_merge)
        outs = outputs.split(",") if outputs else None
        query = build_query(lhs, rhs, outs, opts)
        if emit_smt2:
            write_smt2(emit_smt2, "equiv", query.smt2())
        verdict = check_equivalence(lhs, rhs, outs, timeout, opts)
        classes = class_report(query, timeout) if all_classes and verdict.counterexample else None
    except PtxError as e:
        fail(str(e))
    except ReplayError as e:
        fail(f"ptxsmt bug, please report: {e}", code=4)
    if as_json:
        click.echo(report.dumps(report.verdict_json(verdict, classes)))
    else:
        click.echo(report.verdict_text(verdict, lhs, rhs, query.lhs.types, query.rhs.types,
                                       classes))
    sys.exit(EXIT_VERDICT[verdict.verdict])


def write_smt2(directory: str, name: str, text: str) -> Path:
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    target = path / f"{name}.smt2"
    target.write_text(text)
    return target


@main.group(context_settings=CONTEXT)
def prove() -> None:
    """Prove libraries of identities."""


@prove.command(context_settings=CONTEXT)
@click.option("-k", "pattern", help="Only identities whose name[instance] contains this.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Worker processes.")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="Seconds per instance.")
@click.option("--library", "--dir", "directory", default=None, metavar="DIR",
              type=click.Path(file_okay=False),
              help="A folder of identity files (*.toml) [default: the library ptxsmt ships].")
@click.option("--emit-smt2", "smt2_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Also write each instance's query as SMT-LIB 2.")
@click.option("-v", "--verbose", is_flag=True, help="List every instance, not only mismatches.")
@click.option("--json", "as_json", is_flag=True)
def identities(pattern, jobs, timeout, directory, smt2_dir, verbose, as_json) -> None:
    """Run the identity library; exit 0 only if every verdict is the expected one.

    \b
    Examples:
      ptxsmt prove identities
      ptxsmt prove identities -k ftz --verbose
      ptxsmt prove identities --jobs 2 --json > results.json
    """
    try:
        instances = proofs.select(proofs.load(directory or library_dir()), pattern)
        if smt2_dir:
            proofs.emit_smt2(instances, smt2_dir)
    except PtxError as e:
        fail(str(e))
    if not instances:
        fail(f"no identity matches {pattern!r}")
    start = time.perf_counter()
    show = not as_json and sys.stderr.isatty()
    with click.progressbar(length=len(instances), label="proving", file=sys.stderr,
                           hidden=not show) as bar:
        results = proofs.run(instances, jobs, timeout, progress=lambda r: bar.update(1))
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"results": [report.result_json(r) for r in results],
                               "summary": report.summary(results, wall)}, indent=1))
    else:
        click.echo(report.results_text(results, wall, verbose))
    sys.exit(0 if all(r.ok for r in results) else 1)


@main.command(context_settings=CONTEXT)
@click.argument("what", required=False, metavar="[VARIANT|PTX]")
@click.option("--family", type=click.Choice(FAMILIES), help="Every variant of a family.")
@click.option("--per-case", type=int, default=1, show_default=True,
              help="Vectors for each reachable case.")
@click.option("--limit", type=int, default=None, help="At most this many per instruction form.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.File("w"), default="-", help="JSONL output (default stdout).")
@target_option
@merge_option
def vectors(what, family, per_case, limit, seed, out, target, vset_merge) -> None:
    """Operands that reach every reachable case of a variant, as batch JSONL.

    \b
    Cases are combinations of operand classes (NaN, ±inf, ±0, ±subnormal, ±normal;
    integer extremes and signs; predicate values; per lane for x2 types) and
    output outcomes (each predicate true/false, which operand a select took, each
    vset lane's result or count). Outputs are filled in by the evaluator.
    \b
    Examples:
      ptxsmt vectors setp.lt.ftz.f32
      ptxsmt vectors 'vset4.u32.u32.lt d.b20, a, b, c;' --per-case 2
      ptxsmt vectors --family slct --limit 10 --out slct.jsonl
    """
    from .isa.syntax import parse_variant
    from .smt.vectors import instruction_forms, vectors_for

    if bool(what) == bool(family):
        fail("give a variant (or one instruction), or --family F")
    try:
        opts = options(target, vset_merge)
        if family:
            texts = [t for v in catalogue().family(family) for t in instruction_forms(v)]
        elif " " in what.strip():
            parse_one(what)
            texts = [what.strip()]
        else:
            v = parse_variant(what)
            if v not in catalogue():
                fail(f"'{what}' is not a legal variant")
            texts = instruction_forms(v)
        n = 0
        for text in texts:
            for vec in vectors_for(text, per_case, limit, opts, seed):
                out.write(report.dumps(vec) + "\n")
                n += 1
    except PtxError as e:
        fail(str(e))
    click.echo(f"{n} vectors from {len(texts)} instruction forms", err=True)


@main.command(context_settings=CONTEXT)
@click.argument("what", metavar="VARIANT|PTX")
@click.option("--jobs", type=int, default=2, show_default=True, help="Worker processes.")
@click.option("--blocks", "blocks_file", type=click.File("w"), default=None,
              help="Also write the 256 per-block digests as JSON (to bisect a difference).")
@click.option("--json", "as_json", is_flag=True)
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
    from . import sweep as sweeping
    from .isa.syntax import parse_variant
    from .smt.vectors import instruction_forms

    try:
        opts = options(target, vset_merge)
        text = what.strip() if " " in what.strip() else instruction_forms(parse_variant(what))[0]
        parse_one(text)
        sweeping.sweep_inputs(text, opts)
    except PtxError as e:
        fail(str(e))
    show = not as_json and sys.stderr.isatty()
    with click.progressbar(length=sweeping.BLOCKS, label="sweeping", file=sys.stderr,
                           hidden=not show) as bar:
        result = sweeping.sweep(text, jobs, opts, progress=bar.update)
    if blocks_file:
        blocks_file.write(report.dumps(result.blocks) + "\n")
    summary = {"ptx": text, "pairs": result.pairs, "digests": result.digests,
               "true_counts": result.true_counts, "seconds": round(result.seconds, 2)}
    if as_json:
        click.echo(report.dumps(summary))
    else:
        click.echo(f"{text}  {result.pairs:,} operand combinations in {result.seconds:.1f} s")
        for name, digest in result.digests.items():
            count = result.true_counts.get(name)
            extra = f"  true in {count:,}" if count is not None else ""
            click.echo(f"  {name}: sha256 {digest}{extra}")


main.add_command(ptxas_diff)
