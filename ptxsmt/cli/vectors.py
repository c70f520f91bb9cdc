"""`ptxsmt vectors`: operands that reach every reachable case, as batch JSONL."""

from __future__ import annotations

import click

from .. import report
from ..isa.body import parse_one
from ..isa.errors import PtxError, quote
from ..isa.syntax import parse_variant
from ..isa.variants import FAMILIES, catalogue
from ..report.progress import Progress
from ..smt.queries.vectors import instruction_forms, vectors_for
from .common import (
    CONTEXT,
    OutputFile,
    fail,
    given,
    hardware_option,
    is_ptx_file,
    max_input_option,
    merge_option,
    options,
    read_function_file,
    refuse,
    target_option,
    write_failed,
)

FAMILY_LIMIT = 20  # vectors per form with --family: half-set alone has 3,696 forms
MAX_VECTORS = 100_000
MAX_PER_CASE = 1000  # past this a case is enumerating models, not covering cases


@click.command("vectors", context_settings=CONTEXT)
@click.argument("what", required=False, metavar="[VARIANT|PTX|FILE.ptx]")
@click.option("--family", type=click.Choice(FAMILIES), help="Every variant of a family.")
@click.option("--per-case", type=click.IntRange(1, MAX_PER_CASE), default=1, show_default=True,
              help="Vectors for each reachable case (distinct operands).")
@click.option("--limit", type=click.IntRange(min=1), default=None,
              help=f"At most this many per instruction form [default: every reachable case; "
                   f"{FAMILY_LIMIT} with --family].")
@click.option("--max-vectors", type=click.IntRange(min=1), default=MAX_VECTORS,
              show_default=True, help="Stop (exit 1) after this many vectors in all.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--function", "function", metavar="NAME",
              help="With FILE.ptx: the function (default: the file's only one).")
@click.option("--out", type=OutputFile(), default="-",
              help="JSONL output (default stdout).")
@target_option
@merge_option
@hardware_option
@max_input_option
def vectors(what, family, per_case, limit, max_vectors, seed, function, out, target,
            vset_merge, hardware) -> None:
    """Operands that reach every reachable case of a variant, as batch JSONL.

    \b
    Cases are combinations of operand classes (NaN, ±inf, ±0, ±subnormal, ±normal;
    integer extremes and signs; predicate values; per lane for x2 types) and
    output outcomes (each predicate true/false, which operand a select took, each
    vset lane's result or count). Outputs are filled in by the evaluator; a case
    whose output the ISA leaves open is skipped, unless --hardware sm_90 gives it
    (each line then carries "options": {"hardware": "sm_90"}). With
    FILE.ptx: inputs that drive each setp of the function each way on a path that
    reaches it, as batch lines {"file", "function", "inputs", "outputs", "case"}.
    \b
    Examples:
      ptxsmt vectors setp.lt.ftz.f32
      ptxsmt vectors 'vset4.u32.u32.lt d.b20, a, b, c;' --per-case 2
      ptxsmt vectors --family slct --limit 10 --out slct.jsonl
      ptxsmt vectors min.NaN.f32 --hardware sm_90
      ptxsmt vectors kernels.ptx --function _Z4pickPKiS0_Piii > pick.jsonl
    """
    if bool(what) == bool(family):
        fail("give a variant (or one instruction), a .ptx file, or --family F")
    if function or is_ptx_file(what):
        if not is_ptx_file(what):
            fail(f"--function drives a .ptx file's function; "
                 f"{quote(what) + ' is not one' if what else 'give FILE.ptx'}")
        refuse(given("family", "per_case", "limit", "max_vectors", "seed"),
               "to a .ptx file's function (each setp is driven each way once)")
        _function_vectors(what, function, options(target, vset_merge, hardware), out)
        return
    try:
        opts = options(target, vset_merge, hardware)
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
        write_failed(out, e)
    report.err(f"{n} vectors from {len(texts)} instruction forms")


def _function_vectors(path: str, name: str | None, opts, out) -> None:
    from ..smt.queries.function_vectors import function_vectors  # the solver

    fn = read_function_file(path, name)
    checked = fn.body.checked if fn.body else []
    if not any(c.instruction.variant.opcode == "setp" for c in checked):
        report.err(f"warning: {path}: function {fn.name} has no setp: no vectors (they drive "
                   "each setp's predicates both ways)")
        return
    try:
        with Progress("vectors", unit="vectors") as bar:
            for vec in function_vectors(path, fn, opts):
                out.write(report.dumps(vec) + "\n")
                bar.update()
        if not bar.done:
            report.err(f"warning: {path}: no setp of {fn.name} is reached both ways: "
                       "no vectors")
    except PtxError as e:
        fail(f"{path}: {e}")
    except OSError as e:
        write_failed(out, e)
