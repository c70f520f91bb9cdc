"""Command line: thin click commands over the library.

Exit codes: 0 success, 1 a negative answer (an illegal line, a failed batch
line), 2 bad input, 130 interrupted (Ctrl-C). Bad input is one line on stderr,
never a traceback; option values are checked before any work starts.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

import click

from . import proofs, report
from .check import check_line, header_error
from .commands.ptxas_diff import ptxas_diff
from .eval.evaluate import evaluate
from .eval.jsonl import check_jsonl, run_jsonl
from .isa.errors import quote
from .isa.syntax import PtxError, parse_one
from .isa.targets import parse_target, parse_version
from .isa.variants import FAMILIES, catalogue, spec_catalogue
from .report.progress import Progress
from .resources import library_dir
from .sem.options import VSET_MERGE_SOURCES, Options
from .smt.classes import class_report
from .smt.solve import ReplayError, build_query, check_equivalence
from .solver import MAX_JOBS

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
MAX_TIMEOUT = 1e6  # seconds; z3 takes milliseconds as a 32-bit number


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


class Main(click.Group):
    """The command group: a usage error is one line (exit 2), like every other bad input,
    and Ctrl-C stops at once with exit 130; it is never turned into a verdict."""

    def main(self, *args, **kwargs):
        for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 argument must not crash output
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        if not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.NoArgsIsHelpError as e:
            click.echo(e.ctx.get_help() if e.ctx else e.format_message(), err=True)
            sys.exit(2)
        except click.ClickException as e:
            hint = f" (try '{e.ctx.command_path} -h')" if getattr(e, "ctx", None) else ""
            fail(_shorten(e.format_message()) + hint, e.exit_code)
        except click.Abort:  # end of input at a prompt; Ctrl-C is handled in invoke
            fail("aborted", 1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)


def _shorten(text: str, limit: int = 300) -> str:
    """Cut the middle out of a long message (click quotes a 5,000-digit value whole)."""
    return text if len(text) <= limit else text[:limit // 2] + "…" + text[-limit // 3:]


class Finite(click.FloatRange):
    """A FloatRange that refuses nan too (nan passes every range check)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{quote(value)} is not a number", param, ctx)
        return number


def _target(ctx, param, value: str) -> str:
    try:
        parse_target(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None
    return value


def _writable_dir(ctx, param, value: str | None) -> str | None:
    """A folder to write into, made now: an unwritable path is refused before the work."""
    if value is not None:
        try:
            Path(value).mkdir(parents=True, exist_ok=True)
            probe = Path(value) / f".ptxsmt-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError as e:
            raise click.BadParameter(f"cannot write to {quote(value)}: "
                                     f"{e.strerror or e}") from None
    return value


def options(target: str, vset_merge: str) -> Options:
    return Options(target=parse_target(target).sm, vset_merge=vset_merge)


def read_text(file, option: str) -> str:
    """A file's text: UTF-8 (a BOM skipped), else one clear error naming the place."""
    data = file.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        name = getattr(file, "name", "-")
        fail(f"{option} {name}: line {line}: not UTF-8 text (byte 0x{data[e.start]:02x})")


target_option = click.option("--target", default="sm_90", show_default=True, callback=_target,
                             help="sm_ target (sm_1x flushes f32 set/setp/slct subnormals).")
merge_option = click.option("--vset-merge", type=click.Choice(VSET_MERGE_SOURCES), default="c",
                            show_default=True,
                            help="vset merge: unmasked lanes from c (pseudocode) or b (prose).")


def jobs_option(default: int):
    return click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=default,
                        show_default=True, help="Worker processes.")


def timeout_option(what: str):
    return click.option("--timeout", type=Finite(0, MAX_TIMEOUT, min_open=True), default=30.0,
                        show_default=True, help=what)


@click.group(cls=Main, context_settings=CONTEXT)
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
@click.option("--batch", "batch", type=click.File("rb"), metavar="FILE",
              help="JSONL of {\"ptx\", \"inputs\", \"options\"}; '-' for stdin.")
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
    A batch line's "options" ({"target": "sm_13", "vset_merge": "b"}) apply on
    top of --target and --vset-merge.
    \b
    Examples:
      ptxsmt eval 'setp.ltu.f32 p|q, a, b;' a=nan b=1.0
      ptxsmt eval --json 'set.gtu.u32.f16x2 d, a, b;' a=0x3c007e00 b=0
      ptxsmt eval '@g selp.b32 d, a, b, c;' g=false d=7 a=1 b=2 c=true
      ptxsmt eval --batch vectors.jsonl > results.jsonl
      ptxsmt eval --batch models/golden.jsonl --check
    """
    opts = options(target, vset_merge)
    if check_outputs and batch is None:
        fail("--check compares a batch's stored outputs; give --batch FILE")
    if batch is not None:
        if ptx or assignments:
            fail("give either PTX text and operands or --batch, not both")
        sys.exit(check_batch(batch, opts) if check_outputs else run_batch(batch, opts))
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
    try:
        ev = evaluate(ptx, inputs, opts)
    except PtxError as e:
        fail(str(e))
    if as_json:
        click.echo(report.dumps(report.evaluation_json(ptx, ev)))
    else:
        click.echo(report.evaluation_text(ptx, ev))


def run_batch(lines: Iterable[bytes | str], opts: Options) -> int:
    """Answer every line, in order; a bad line gets "error" in place. Exit 1 if any did."""
    status = 0
    with Progress("eval --batch", unit="lines") as bar:
        for obj, error in run_jsonl(lines, opts):
            status |= error is not None
            click.echo(report.dumps(obj))
            bar.update()
    return status


def check_batch(lines: Iterable[bytes | str], opts: Options) -> int:
    """Recompute every line's outputs; report lines whose stored outputs differ."""
    total = bad = 0
    with Progress("eval --batch --check", unit="lines") as bar:
        for diff in check_jsonl(lines, opts):
            total += 1
            bar.update()
            if diff is not None:
                bad += 1
                click.echo(report.dumps(diff))
    click.echo(f"check: {total - bad} passed, {bad} failed", err=True)
    return 1 if bad else 0


def _version(ctx, param, value: str) -> tuple[int, int]:
    try:
        return parse_version(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None


@main.command(context_settings=CONTEXT)
@click.argument("source", type=click.File("rb"), default="-")
@click.option("--target", default="sm_90", show_default=True, callback=_target)
@click.option("--ptx-version", default="9.0", show_default=True, callback=_version)
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
            click.echo(report.dumps({"line": number, "ptx": text, "legal": error is None,
                                     "error": error}))
        else:
            shown = text if text.isprintable() and len(text) <= 200 else quote(text, 200)
            click.echo(f"ok       {shown}" if error is None else f"illegal  {shown}  -- {error}")
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
@click.option("-a", "lhs_file", type=click.File("rb"), help="Read the first snippet from a file.")
@click.option("-b", "rhs_file", type=click.File("rb"), help="Read the second snippet from a file.")
@click.option("--outputs", help="Registers to compare, e.g. p,d (default: written by both).")
@timeout_option("Seconds.")
@click.option("--all-classes", is_flag=True,
              help="Report which operand-class combinations break it and which are safe.")
@click.option("--emit-smt2", type=click.Path(file_okay=False), metavar="DIR",
              callback=_writable_dir, help="Also write the query as a standalone SMT-LIB 2 file.")
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
    if (lhs_file or rhs_file) and lhs:
        fail("give the snippets either as arguments or with -a FILE -b FILE, not both")
    if lhs_file:
        lhs = read_text(lhs_file, "-a")
    if rhs_file:
        rhs = read_text(rhs_file, "-b")
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
    target = Path(directory) / f"{name}.smt2"
    try:
        target.write_text(text)
    except OSError as e:
        fail(f"cannot write {quote(str(target))}: {e.strerror or e}")
    return target


@main.group(context_settings=CONTEXT)
def prove() -> None:
    """Prove libraries of identities."""


@prove.command(context_settings=CONTEXT)
@click.option("-k", "pattern", help="Only identities whose name[instance] contains this.")
@jobs_option(1)
@timeout_option("Seconds per instance.")
@click.option("--library", "--dir", "directory", default=None, metavar="DIR",
              type=click.Path(file_okay=False),
              help="A folder of identity files (*.toml) [default: the library ptxsmt ships].")
@click.option("--emit-smt2", "smt2_dir", type=click.Path(file_okay=False), metavar="DIR",
              callback=_writable_dir, help="Also write each instance's query as SMT-LIB 2.")
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
    except UnicodeDecodeError as e:
        fail(f"the identity library holds a file that is not UTF-8 text ({e.reason})")
    except OSError as e:  # an unreadable library, a failed write
        fail(f"{quote(str(e.filename or 'identity library'))}: {e.strerror or e}")
    if not instances:
        fail(f"no identity matches {quote(pattern)}")
    start = time.perf_counter()
    with Progress("proving", total=len(instances), unit="instances") as bar:
        results = proofs.run(instances, jobs, timeout, progress=lambda r: bar.update())
    wall = time.perf_counter() - start
    if as_json:
        click.echo(json.dumps({"results": [report.result_json(r) for r in results],
                               "summary": report.summary(results, wall)}, indent=1))
    else:
        click.echo(report.results_text(results, wall, verbose))
    sys.exit(0 if all(r.ok for r in results) else 1)


FAMILY_LIMIT = 20  # vectors per form with --family: half-set alone has 3,696 forms
MAX_VECTORS = 100_000
MAX_PER_CASE = 1000  # past this a case is enumerating models, not covering cases


@main.command(context_settings=CONTEXT)
@click.argument("what", required=False, metavar="[VARIANT|PTX]")
@click.option("--family", type=click.Choice(FAMILIES), help="Every variant of a family.")
@click.option("--per-case", type=click.IntRange(1, MAX_PER_CASE), default=1, show_default=True,
              help="Vectors for each reachable case (distinct operands).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help=f"At most this many per instruction form [default: every reachable case; "
                   f"{FAMILY_LIMIT} with --family].")
@click.option("--max-vectors", type=click.IntRange(min=1), default=MAX_VECTORS,
              show_default=True, help="Stop (exit 1) after this many vectors in all.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", type=click.File("w", lazy=False), default="-",
              help="JSONL output (default stdout).")
@target_option
@merge_option
def vectors(what, family, per_case, limit, max_vectors, seed, out, target, vset_merge) -> None:
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
            limit = limit or FAMILY_LIMIT
        elif " " in what.strip():
            parse_one(what)
            texts = [what.strip()]
        else:
            v = parse_variant(what)
            if v not in catalogue():
                fail(f"{quote(what)} is not a legal variant")
            texts = instruction_forms(v)
        n = 0
        with Progress("vectors", total=len(texts), unit="forms") as bar:
            for text in texts:
                for vec in vectors_for(text, per_case, limit, opts, seed):
                    if n == max_vectors:
                        fail(f"stopped after {n:,} vectors (--max-vectors {max_vectors:,}), at "
                             f"form {bar.done + 1:,} of {len(texts):,}; raise --max-vectors "
                             f"or lower --limit", code=1)
                    out.write(report.dumps(vec) + "\n")
                    n += 1
                    bar.update(0)  # a form can take a while: keep the elapsed time current
                bar.update()
    except PtxError as e:
        fail(str(e))
    except OSError as e:
        fail(f"cannot write {quote(out.name)}: {e.strerror or e}")
    click.echo(f"{n} vectors from {len(texts)} instruction forms", err=True)


@main.command(context_settings=CONTEXT)
@click.argument("what", metavar="VARIANT|PTX")
@jobs_option(2)
@click.option("--blocks", "blocks_file", type=click.File("w", lazy=False), default=None,
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
    from .eval import sweep as sweeping
    from .isa.syntax import parse_variant
    from .smt.vectors import instruction_forms

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
            fail(f"cannot write {quote(blocks_file.name)}: {e.strerror or e}")
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
