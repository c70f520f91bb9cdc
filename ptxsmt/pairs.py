"""Many equivalence pairs at once (`ptxsmt equiv --batch PAIRS.jsonl`): one JSON result
per input line, in input order.

A line names two .ptx files and a function (`{"a": FILE, "b": FILE, "function": F,
"function_b"?: G, "options"?: {...}}`), an LLVM IR source and the PTX it was compiled to
(the same keys, `a` a .ll file: does `b`'s function refine `a`'s?), or two snippets
(`{"lhs": PTX, "rhs": PTX, "options"?: {...}}`). Each pair is decided by the same library
calls as a single `ptxsmt equiv` (smt.queries: snippets, functions, refinement for IR
against PTX), in a child process of its own: a pair that crashes or runs past its limit
costs only its own line.

Definite verdicts (and IR refused as outside the model) are cached by content (both
files' bytes or both snippets, function names, options, and the fingerprint of ptxsmt's
source and Z3), one small JSON file each under the cache directory (`smt.solving.verdicts`);
unknowns are not cached (a busier machine may decide them). An entry is checked before
it is served: a "different" only once its counterexample replays through the evaluator
to the very values it shows; an entry that fails a check is dropped with one warning and
its pair decided afresh.
"""

from __future__ import annotations

import json
import resource
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from . import report
from .batch import cache
from .function.evaluate import Location, parse_location, read_function_file
from .isa.errors import PtxError
from .isa.module import Function
from .isa.source import read_file, read_text
from .isa.targets import parse_target
from .report.equivalence import counterexample_json, verdict_json
from .report.function import function_verdict_json
from .report.progress import Progress
from .sem.options import DEFAULT_NAN, NAN_POLICIES, VSET_MERGE_SOURCES, Options
from .smt.queries.functions import FunctionCounterexample, FunctionVerdict, replay_counterexample
from .smt.queries.snippets import (
    Counterexample,
    Query,
    ReplayError,
    build_query,
    decide,
    replay,
)
from .smt.solving import budget, verdicts
from .smt.solving.decide import SOLVER_CHOICES, SolverDisagreement
from .synth.executor import executor

OPTIONS = ("timeout", "target", "vset_merge", "solver", "unroll", "outputs", "nan")
FILE_KEYS = {"a", "b", "function", "function_b", "options"}
SNIPPET_KEYS = {"lhs", "rhs", "options"}
IR_OPTIONS = ("timeout", "nan", "unroll")  # IR against PTX: the query's limit, the NaN
# policy, loops unrolled K times
CACHED = ("equivalent", "bounded", "different", "refines", "refused")
# no evaluator of IR replays an IR pair's "different": it is decided afresh each run
UNCACHED = {("ir", "different")}
REPLAY = "replay"  # a decided "different"'s field that the cache keeps, not shown
# what deciding a pair cost, BenchExec's measures (a result's field, never cached):
# cputime and walltime in seconds, memory the peak resident bytes of the pair's process
# or a solver it started; the solver option, the limit, and the sweep's merges
RUN = "run"
PEAK, MERGES = "peak memory", "merges"  # fields the pair's process hands back for RUN


@dataclass(frozen=True)
class Pair:
    line: int
    kind: str  # "functions" | "ir" | "snippets"
    lhs: str  # a path or a snippet
    rhs: str
    function: str | None = None
    function_b: str | None = None
    options: dict = field(default_factory=dict)  # every option, defaults filled in

    def digest(self) -> str:
        """What the pair compares: both inputs and the names read from them."""
        sides = ([read_file(p) for p in (self.lhs, self.rhs)]
                 if self.kind != "snippets" else [s.encode() for s in (self.lhs, self.rhs)])
        # an IR pair's result names the PTX file in its reproduce line
        named = [self.rhs] if self.kind == "ir" else []
        return verdicts.pair_digest(self.kind, sides, [self.function, self.function_b, *named])


def parse_line(number: int, text: str | bytes, defaults: dict, base: Path) -> Pair:
    """One input line as a pair; raise PtxError naming what is wrong with it. Relative
    paths are read from `base`, the folder of the pairs file."""
    if isinstance(text, bytes):  # a line that is not UTF-8 costs only itself
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PtxError(f"not UTF-8 text (byte 0x{text[e.start]:02x} at column "
                           f"{e.start + 1})") from None
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as e:
        raise PtxError(f"not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(spec, dict):
        raise PtxError("not a JSON object")
    options = spec.get("options", {})
    if not isinstance(options, dict):
        raise PtxError("options is not a JSON object")
    if unknown := sorted(set(options) - set(OPTIONS)):
        raise PtxError(f"unknown option {unknown[0]!r} (options: {', '.join(OPTIONS)})")
    options = {**defaults, **options}
    _check_options(options)
    if "lhs" in spec or "rhs" in spec:
        return Pair(number, "snippets", _text(spec, "lhs", SNIPPET_KEYS),
                    _text(spec, "rhs", SNIPPET_KEYS), options=options)
    if "outputs" in spec.get("options", {}):
        raise PtxError("option outputs applies to snippets only")
    paths = [base / _text(spec, side, FILE_KEYS) for side in ("a", "b")]
    for path in paths:
        if not path.is_file():
            raise PtxError(f"{path}: no such file")
    names = [spec.get(k) for k in ("function", "function_b")]
    if not all(n is None or isinstance(n, str) for n in names):
        raise PtxError("function and function_b are names (strings)")
    kind = "functions"
    if paths[0].suffix == ".ll" or paths[1].suffix == ".ll":
        if paths[0].suffix != ".ll" or paths[1].suffix != ".ptx":
            raise PtxError("IR against PTX takes a SOURCE.ll as a and a TARGET.ptx as b")
        if given := sorted(set(spec.get("options", {})) - set(IR_OPTIONS)):
            raise PtxError(f"option {given[0]} does not apply to IR against PTX "
                           f"(options: {', '.join(IR_OPTIONS)})")
        kind = "ir"
    return Pair(number, kind, str(paths[0]), str(paths[1]), names[0],
                names[1] or names[0], options)


def _text(spec: dict, key: str, allowed: set[str]) -> str:
    if unknown := sorted(set(spec) - allowed):
        raise PtxError(f"unknown key {unknown[0]!r} (a pair has {', '.join(sorted(allowed))})")
    if not isinstance(spec.get(key), str) or not spec[key].strip():
        raise PtxError(f"{key} is missing or not a non-empty string")
    return spec[key]


def _check_options(o: dict) -> None:
    timeout = o["timeout"]
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise PtxError(f"timeout {timeout!r} is not a positive number of seconds")
    if not isinstance(o["target"], str):
        raise PtxError("target is not like sm_90")
    parse_target(o["target"])
    if o["vset_merge"] not in VSET_MERGE_SOURCES:
        raise PtxError(f"vset_merge is one of {', '.join(VSET_MERGE_SOURCES)}")
    if o.get("nan", DEFAULT_NAN) not in NAN_POLICIES:
        raise PtxError(f"nan is one of {', '.join(NAN_POLICIES)}")
    if o["solver"] not in SOLVER_CHOICES:
        raise PtxError(f"solver is one of {', '.join(SOLVER_CHOICES)}")
    unroll = o.get("unroll")
    if unroll is not None and (isinstance(unroll, bool) or not isinstance(unroll, int)
                               or unroll < 0):
        raise PtxError(f"unroll {unroll!r} is not a count")
    outputs = o.get("outputs")
    if outputs is not None and not (isinstance(outputs, list)
                                    and all(isinstance(x, str) and x for x in outputs)):
        raise PtxError("outputs is a list of register names")


def decide_pair(pair: Pair) -> dict:
    """The pair's result fields, decided in a child process by the pair's deadline (its
    wall cap from now: `budget.pair`) and killed at its stop if it is still running then
    (`budget.bounded`: unknown, whatever a solver does), and what that cost (`RUN`): the
    CPU time of the child and of every process it started (reaped, so counted here, also
    when it was stopped), its peak memory as it said."""
    start, before = time.perf_counter(), _cpu_of_children()
    measured = {}  # the child's own measures, where it answered
    try:
        with budget.pair(pair.options["timeout"]):
            result = dict(budget.bounded(_measured, pair))
        measured = {"memory": result.pop(PEAK, None), MERGES: result.pop(MERGES, None)}
    except budget.OutOfTime:
        result = {"verdict": "unknown", "reason": budget.OUT_OF_TIME,
                  "seconds": round(time.perf_counter() - start, 4)}
    except Exception as e:  # noqa: BLE001 - a bug or a crash costs only its own line
        died = isinstance(e, budget.ChildDied)
        result = {"verdict": "error", "error": "ptxsmt failed on this pair: "
                  + (str(e) if died else f"{type(e).__name__}: {e}"), "bug": True}
    run = {"cputime": round(_cpu_of_children() - before, 3),
           "walltime": round(time.perf_counter() - start, 3), "memory": None,
           "solver": pair.options["solver"], "limit": pair.options["timeout"],
           "host": socket.gethostname()}
    return {**_load_noted(result, run), RUN: run | measured}


def _load_noted(result: dict, run: dict) -> dict:
    """An `unknown` that its wall cap ended with CPU seconds left says so: the load
    decided it (a rerun on an idle machine, or a raised cap, may decide it)."""
    if result["verdict"] != "unknown" or not budget.wall_bound(
            run["cputime"], run["walltime"], run["limit"]):
        return result
    note = budget.wall_bound_note(run["cputime"], run["walltime"], run["limit"])
    return {**result, "reason": f"{result.get('reason') or 'unknown'}; {note}"}


def _cpu_of_children() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _measured(pair: Pair) -> dict:
    """`_decide` in the pair's own process, and the peak resident memory of that process
    or of the largest solver process it started and reaped (Linux counts kilobytes)."""
    result = _decide(pair)
    peak = max(resource.getrusage(who).ru_maxrss
               for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {**result, PEAK: peak * 1024}


def _options(pair: Pair) -> Options:
    o = pair.options
    return Options(target=parse_target(o["target"]).sm, vset_merge=o["vset_merge"])


def _decide(pair: Pair) -> dict:
    """The pair's result fields; a "different" also its `REPLAY` fields for the cache."""
    o, opts = pair.options, _options(pair)
    try:
        if pair.kind == "snippets":
            verdict = decide(build_query(pair.lhs, pair.rhs, o.get("outputs"), opts,
                                         nan=o.get("nan", DEFAULT_NAN)),
                             o["timeout"], solver=o["solver"])
            cex = verdict.counterexample
            return {**verdict_json(verdict), **({REPLAY: {"inputs": cex.inputs}} if cex else {})}
        if pair.kind == "ir":
            return _decide_ir(pair)
        verdict = _decide_functions(pair, opts)
        cex = verdict.counterexample
        return {**function_verdict_json(verdict), MERGES: verdict.merges, **({REPLAY: {
            "scalars": [{**ev.inputs, **{c.input: c.value for c in ev.chosen}}
                        for ev in (cex.lhs, cex.rhs)],
            "memory": {_typed(loc): v for loc, v in cex.memory.items()},
            "watch": [_typed(loc) for loc in cex.lhs.stores]}} if cex else {})}
    except PtxError as e:
        return {"verdict": "error", "error": str(e), "bad_input": True}
    except (ReplayError, SolverDisagreement) as e:
        return {"verdict": "error", "error": f"ptxsmt bug, please report: {e}", "bug": True}


def _decide_functions(pair: Pair, opts: Options):
    from .function.evaluate import read_function_file
    from .smt.queries.functions import check_function_equivalence

    o = pair.options
    a = read_function_file(pair.lhs, pair.function)
    b = read_function_file(pair.rhs, pair.function_b)
    return check_function_equivalence(a, b, opts, o["timeout"], o.get("unroll") or 0,
                                      o.get("solver") or "auto",
                                      nan=o.get("nan", DEFAULT_NAN))


def _decide_ir(pair: Pair) -> dict:
    """Does the PTX function refine the IR's? The fields of `equiv SOURCE.ll TARGET.ptx
    --json`, and the seconds it took."""
    from .function.evaluate import read_function_file
    from .llvm.errors import Unsupported
    from .llvm.module import read_ir
    from .report.llvm import equiv_row
    from .smt.queries.refinement import Validated, ir_refines

    start = time.perf_counter()
    text = read_text(pair.lhs)  # bounded, and a file that is not UTF-8 is bad input
    try:
        functions = read_ir(text, only=pair.function)
    except Unsupported as e:  # valid IR the reader does not model (a struct type, ...)
        return {**equiv_row(Validated(pair.function or "?", None, e), pair.rhs, ""),
                "seconds": round(time.perf_counter() - start, 4)}
    except PtxError as e:
        raise PtxError(f"{pair.lhs}: {e}") from None
    name = pair.function
    if name is None and len(functions) != 1:
        raise PtxError(f"{pair.lhs} defines {len(functions)} functions: name one (function)")
    name = name or next(iter(functions))
    if name not in functions:
        raise PtxError(f"no function @{name} in {pair.lhs}")
    ptx_fn = read_function_file(pair.rhs, pair.function_b or name)
    try:
        result = Validated(name, ir_refines(functions[name], ptx_fn,
                                            int(pair.options["timeout"] * 1000),
                                            "auto",
                                            nan=pair.options.get("nan", DEFAULT_NAN),
                                            unroll=pair.options.get("unroll") or 0))
    except Unsupported as e:
        result = Validated(name, None, e)
    return {**equiv_row(result, pair.rhs, ptx_fn.name),
            "seconds": round(time.perf_counter() - start, 4)}


def run(lines: Iterable[str | bytes], defaults: dict, base: Path, jobs: int = 1,
        kind: str = "processes", scheduler: str | None = None) -> Iterator[dict]:
    """A result for each line (text, or bytes decoded line by line), in order: {"line",
    "verdict", "seconds", ...}."""
    lines = list(lines)
    results: dict[int, dict] = {}
    todo: list[tuple[Pair, tuple[str, str] | None]] = []
    store = _results_dir()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            results[number] = {"verdict": "skipped", "reason": "blank line"}
            continue
        try:
            pair = parse_line(number, text, defaults, base)
            digest = pair.digest() if store else ""
        except PtxError as e:
            results[number] = {"verdict": "error", "error": str(e), "bad_input": True}
            continue
        address = (verdicts.address(digest, pair.options), digest) if store else None
        if address and (hit := _cached(store, pair, *address)):
            results[number] = {**hit, "cached": True}
        else:
            todo.append((pair, address))
    with Progress("equiv --batch", total=len(lines), unit="pairs") as progress:
        progress.update(len(results))
        pool = executor(kind, min(jobs, max(1, len(todo))), scheduler) if todo else None
        try:
            decided = pool.map(decide_pair, [p for p, _ in todo]) if pool else iter(())
            next_line = 1
            for (pair, address), result in zip(todo, decided):
                replayed, run = result.pop(REPLAY, None), result.pop(RUN, None)
                if address and result["verdict"] in CACHED and \
                        (pair.kind, result["verdict"]) not in UNCACHED:
                    verdicts.write(store, *address, pair.options, result, replayed)
                results[pair.line] = {**result, RUN: run} if run else result
                progress.update()
                while next_line in results:  # stream each line once those before it are out
                    yield _line(next_line, results.pop(next_line))
                    next_line += 1
            for number in sorted(results):
                yield _line(number, results[number])
        finally:
            if pool:
                pool.close()


def _line(number: int, result: dict) -> dict:
    return {"line": number, "verdict": result["verdict"], "seconds": 0.0, **result}


def exit_code(results: Iterable[dict]) -> int:
    """A ptxsmt bug 4, else any different 1, else any bad line 2, else any unknown (or IR
    refused) 3, else 0."""
    verdicts = list(results)
    for code, hit in ((4, lambda r: r.get("bug")), (1, lambda r: r["verdict"] == "different"),
                      (2, lambda r: r["verdict"] == "error"),
                      (3, lambda r: r["verdict"] in ("unknown", "refused"))):
        if any(hit(r) for r in verdicts):
            return code
    return 0


def _results_dir() -> Path | None:
    """Where verdicts are cached: beside the compiled programs, off with them."""
    return cache.directory() / "equiv" if cache.store() is not None else None


def _cached(store: Path, pair: Pair, key: str, digest: str) -> dict | None:
    """The cached result of the pair where every check passes; else None, and an entry
    that failed one is dropped with one warning."""
    entry, problem = verdicts.read(store, key, digest, pair.options)
    if entry is not None and entry.verdict == "different":
        problem = _replays(pair, entry)
    if not problem:
        return entry.result if entry else None
    report.err(f"warning: equiv --batch cache entry {verdicts.path(store, key)}: {problem}; "
               f"dropped, and line {pair.line}'s pair decided afresh")
    verdicts.drop(store, key)
    return None


def _replays(pair: Pair, entry: verdicts.Entry) -> str:
    """"" where the entry's counterexample, run through the evaluator, gives the very
    counterexample it shows; else why not."""
    try:
        replayed(pair, entry.result, entry.replay)
    except (PtxError, ReplayError, msgspec.ValidationError) as e:
        return f"its counterexample does not replay ({e})"
    except Mismatch as e:
        return str(e)
    return ""


class Mismatch(Exception):
    """A stored counterexample that runs, to other values than those it shows."""


@dataclass(frozen=True)
class Replayed:
    """A stored "different" run again: its counterexample and what it ran on (the query
    of two snippets, or both functions)."""
    counterexample: Counterexample | FunctionCounterexample
    ran_on: Query | tuple[Function, Function]


def replayed(pair: Pair, result: dict, fields: dict | None) -> Replayed:
    """A "different" (its `result` fields and `REPLAY` `fields`) run through the evaluator;
    PtxError, ReplayError or msgspec.ValidationError where it does not run, Mismatch
    where it gives another counterexample than the result shows."""
    only_nans = result.get("only_nan_payloads") is True  # two open values differ
    if pair.kind == "snippets":
        r = msgspec.convert(fields, verdicts.SnippetReplay)
        q = build_query(pair.lhs, pair.rhs, pair.options.get("outputs"), _options(pair),
                        nan=pair.options.get("nan", DEFAULT_NAN))
        cex = replay(q, r.inputs, open_differ=only_nans, nan_payloads_only=only_nans)
        found, ran_on = counterexample_json(cex), q
    else:
        r = msgspec.convert(fields, verdicts.FunctionReplay)
        ran_on = (read_function_file(pair.lhs, pair.function),
                  read_function_file(pair.rhs, pair.function_b))
        cex = replay_counterexample(*ran_on, list(r.scalars),
                                    {_location(k): v for k, v in r.memory.items()},
                                    [_location(k) for k in r.watch], _options(pair),
                                    pair.options.get("unroll") or 0, only_nans)
        found = function_verdict_json(FunctionVerdict(
            "different", ran_on[0].name, ran_on[1].name, {}, cex))["counterexample"]
    if found != result.get("counterexample"):
        raise Mismatch("its counterexample is not what the evaluator gives")
    return Replayed(cex, ran_on)


def _typed(loc: Location) -> str:
    return f"{loc}.{loc.type.name}"


def _location(text: str) -> Location:
    parsed = parse_location(text)
    if parsed is None or parsed[2] is None:
        raise PtxError(f"{text!r} is not a typed location")
    return Location(*parsed)
