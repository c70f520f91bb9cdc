"""The identity library: load proofs/*.toml, expand the grids, prove, compare.

An identity file holds `[[identity]]` tables:

    name = "unsigned-aliases"
    description = "lo/ls/hi/hs are the unsigned lt/le/gt/ge"
    lhs = "setp.${alias}.${t} p, a, b;"
    rhs = "setp.${cmp}.${t} p, a, b;"
    grid = { t = ["u16", "u32"], op = [{ alias = "lo", cmp = "lt" }, ...] }
    expect = "holds"                      # or "fails"
    witness = { some = ["NaN"] }          # fails only: the counterexample's shape
    outputs = ["p"]                       # optional: registers compared
    lhs_options = { vset_merge = "b" }    # optional, also rhs_options / options

`${x}` placeholders (PTX uses braces itself) range over the grid: the product
of its keys; a key whose values are tables sets several placeholders at once.
"""

from __future__ import annotations

import itertools
import time
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from string import Template

from .isa import source
from .isa.errors import PtxError
from .sem.options import Options
from .smt.queries.classes import input_classes
from .smt.queries.snippets import Counterexample, ReplayError, build_query, check_equivalence
from .solver import ignore_interrupts

VERDICTS = {"equivalent": "holds", "different": "fails", "unknown": "unknown"}
_SHAPES = {"name": str, "description": str, "lhs": str, "rhs": str, "expect": str,
           "grid": dict, "witness": dict, "outputs": list, "options": dict,
           "lhs_options": dict, "rhs_options": dict}
_KEYS = set(_SHAPES)
_KIND_NAMES = {str: "string", dict: "table", list: "list"}


@dataclass(frozen=True)
class Instance:
    name: str
    instance: str  # the grid point, e.g. "t=u32 cmp=lt"
    lhs: str
    rhs: str
    expect: str
    description: str = ""
    witness: dict[str, tuple[str, ...]] = field(default_factory=dict)
    outputs: tuple[str, ...] | None = None
    lhs_options: Options = Options()
    rhs_options: Options = Options()

    @property
    def id(self) -> str:
        return f"{self.name}[{self.instance}]" if self.instance else self.name


@dataclass(frozen=True)
class Result:
    instance: Instance
    verdict: str  # holds | fails | unknown | error
    counterexample: Counterexample | None = None
    seconds: float = 0.0
    solver_seconds: float = 0.0
    witness_ok: bool | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.verdict == self.instance.expect and self.witness_ok is not False


# ---- loading ----------------------------------------------------------------------------


def load(directory: str | Path) -> list[Instance]:
    """The identities of every *.toml in the folder and its subfolders (proofs/synth/
    holds the rules `ptxsmt synth` found, so `prove identities` re-proves them)."""
    files = sorted(Path(directory).rglob("*.toml"))
    if not files:
        raise PtxError(f"no identity files (*.toml) in {directory}")
    out: list[Instance] = []
    for path in files:
        name = path.relative_to(directory)
        try:
            data = tomllib.loads(source.read_text(str(path)))
        except tomllib.TOMLDecodeError as e:
            raise PtxError(f"{name}: {e}") from None
        tables = data.get("identity", [])
        if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
            raise PtxError(f"{name}: 'identity' must be tables ([[identity]]), "
                           f"not {type(tables).__name__}")
        for i, entry in enumerate(tables, 1):
            out += expand(entry, f"{name}, identity {i}")
    if not out:
        where = files[0] if len(files) == 1 else f"any of the {len(files)} *.toml in {directory}"
        raise PtxError(f"no [[identity]] table in {where}")
    names = [x.id for x in out]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise PtxError(f"duplicate identity instances: {', '.join(sorted(dupes)[:5])}")
    return out


def expand(entry: dict, where: str) -> list[Instance]:
    unknown = set(entry) - _KEYS
    missing = {"name", "lhs", "rhs", "expect"} - set(entry)
    if unknown or missing:
        problem = f"unknown keys {sorted(unknown)}" if unknown else f"missing {sorted(missing)}"
        raise PtxError(f"{where}: {problem}")
    if entry["expect"] not in ("holds", "fails"):
        raise PtxError(f"{where}: expect must be 'holds' or 'fails'")
    for key, kind in _SHAPES.items():
        if key in entry and not isinstance(entry[key], kind):
            raise PtxError(f"{where}: {key} must be a {_KIND_NAMES[kind]}")
    for table in ("grid", "witness"):
        for key, values in entry.get(table, {}).items():
            if not isinstance(values, list):
                raise PtxError(f"{where}: {table}.{key} must be a list")
    base = dict(entry.get("options", {}))
    lhs_opts = _options({**base, **entry.get("lhs_options", {})}, where)
    rhs_opts = _options({**base, **entry.get("rhs_options", {})}, where)
    witness = {k: tuple(v) for k, v in entry.get("witness", {}).items()}
    grid = entry.get("grid", {})
    out = []
    for point in itertools.product(*([(k, v) for v in vals] for k, vals in grid.items())):
        values: dict[str, str] = {}
        label = []
        for key, value in point:
            if isinstance(value, dict):
                values.update({k: str(x) for k, x in value.items()})
                shown = [str(x) for x in value.values() if str(x)[:1] not in "0-"]
                label.append(f"{key}={'/'.join(shown)}")
            else:
                values[key] = str(value)
                label.append(f"{key}={value}")
        try:
            lhs = Template(entry["lhs"]).substitute(values)
            rhs = Template(entry["rhs"]).substitute(values)
        except (KeyError, ValueError) as e:
            raise PtxError(f"{where}: placeholder {e} has no grid value") from None
        out.append(Instance(entry["name"], " ".join(label), lhs, rhs, entry["expect"],
                            entry.get("description", ""), witness,
                            tuple(entry["outputs"]) if "outputs" in entry else None,
                            lhs_opts, rhs_opts))
    return out


def _options(raw: dict, where: str) -> Options:
    try:
        opts = Options.from_json(raw)
    except PtxError as e:
        raise PtxError(f"{where}: bad options: {e}") from None
    if opts.hardware is not None:  # one chip's choices are no proof about PTX
        raise PtxError(f'{where}: bad options: "hardware" is for evaluation; a proof reads '
                       "the ISA, whose open values stay open")
    return opts


def select(instances: list[Instance], pattern: str | None) -> list[Instance]:
    if not pattern:
        return instances
    return [x for x in instances if pattern in x.id or pattern in x.name]


# ---- running ----------------------------------------------------------------------------


def prove(inst: Instance, timeout: float | None = 30.0) -> Result:
    start = time.perf_counter()
    try:
        v = check_equivalence(inst.lhs, inst.rhs, inst.outputs, timeout, inst.lhs_options,
                              rhs_opts=inst.rhs_options)
    except (PtxError, ReplayError) as e:
        return Result(inst, "error", error=str(e), seconds=time.perf_counter() - start)
    witness_ok = None
    if v.counterexample is not None and inst.witness:
        witness_ok = matches_witness(inst.witness, v.counterexample)
    return Result(inst, VERDICTS[v.verdict], v.counterexample, v.seconds, v.solver_seconds,
                  witness_ok)


def matches_witness(witness: dict[str, tuple[str, ...]], cex) -> bool:
    """`some`: some input is in one of the classes; a register name: that input is.
    The classes come from the Z3 class terms, evaluated on the counterexample's inputs."""
    found = input_classes(cex.inputs, cex.types)
    for key, wanted in witness.items():
        pool = set().union(*found.values()) if key == "some" else found.get(key, set())
        if not any(_class_matches(c, w) for c in pool for w in wanted):
            return False
    return True


def _class_matches(cls: str, wanted: str) -> bool:
    return cls == wanted or cls.lstrip("+-") == wanted


def run(instances: list[Instance], jobs: int = 1, timeout: float | None = 30.0,
        progress: Callable[[Result], None] | None = None) -> list[Result]:
    if jobs <= 1:
        results = []
        for inst in instances:
            results.append(prove(inst, timeout))
            if progress:
                progress(results[-1])
        return results
    # Ctrl-C: the workers ignore it; this process stops waiting and the pool is terminated
    with get_context("fork").Pool(jobs, initializer=ignore_interrupts) as pool:
        results = []
        for r in pool.imap(_prove_star, ((inst, timeout) for inst in instances), chunksize=4):
            results.append(r)
            if progress:
                progress(r)
        return results


def _prove_star(args) -> Result:
    return prove(*args)


def emit_smt2(instances: Iterable[Instance], directory: str | Path) -> int:
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    n = 0
    for inst in instances:
        q = build_query(inst.lhs, inst.rhs, inst.outputs, inst.lhs_options, inst.rhs_options)
        safe = "".join(ch if ch.isalnum() or ch in "-_=" else "_" for ch in inst.id)
        (path / f"{safe}.smt2").write_text(q.smt2())
        n += 1
    return n
