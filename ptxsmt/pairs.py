"""Many equivalence pairs at once (`ptxsmt equiv --batch PAIRS.jsonl`): one JSON result
per input line, in input order.

A line names two .ptx files and a function (`{"a": FILE, "b": FILE, "function": F,
"function_b"?: G, "options"?: {...}}`), an LLVM IR source and the PTX it was compiled to
(the same keys, `a` a .ll file: does `b`'s function refine `a`'s?), or two snippets
(`{"lhs": PTX, "rhs": PTX, "options"?: {...}}`). Each pair is decided by the same library
calls as a single `ptxsmt equiv` (smt.solve for snippets, smt.functions for functions,
llvm.refine for IR against PTX), in a child process of its own: a pair that crashes or
runs past its limit costs only its own line.

Definite verdicts (and IR refused as outside the model) are cached by content (both
files' bytes or both snippets, function names, options, and the fingerprint of ptxsmt's
source and Z3), one small JSON file each under the cache directory; unknowns are not
cached (a busier machine may decide them).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from .batch import cache
from .isa.errors import PtxError
from .isa.targets import parse_target
from .report.equivalence import verdict_json
from .report.function import function_verdict_json
from .report.progress import Progress
from .sem.options import VSET_MERGE_SOURCES, Options
from .smt.child import race
from .smt.solve import SOLVER_CHOICES, ReplayError, SolverDisagreement, build_query, decide
from .synth.executor import executor

OPTIONS = ("timeout", "target", "vset_merge", "solver", "unroll", "outputs")
FILE_KEYS = {"a", "b", "function", "function_b", "options"}
SNIPPET_KEYS = {"lhs", "rhs", "options"}
IR_OPTIONS = ("timeout",)  # IR against PTX: the refinement query's limit only
CACHED = ("equivalent", "bounded", "different", "refines", "refused")
STOP_MARGIN = 5.0  # seconds past twice the solver's limit before a pair is stopped


@dataclass(frozen=True)
class Pair:
    line: int
    kind: str  # "functions" | "ir" | "snippets"
    lhs: str  # a path or a snippet
    rhs: str
    function: str | None = None
    function_b: str | None = None
    options: dict = field(default_factory=dict)  # every option, defaults filled in

    def key(self) -> str:
        """The content address of the pair's verdict."""
        digest = hashlib.sha256(cache.fingerprint().encode())
        sides = ([Path(p).read_bytes() for p in (self.lhs, self.rhs)]
                 if self.kind != "snippets" else [s.encode() for s in (self.lhs, self.rhs)])
        # an IR pair's counterexample names the PTX file in its reproduce line
        named = [self.rhs] if self.kind == "ir" else []
        for part in (self.kind.encode(), *sides,
                     json.dumps([self.function, self.function_b, self.options, *named],
                                sort_keys=True).encode()):
            digest.update(len(part).to_bytes(8, "little") + part)
        return digest.hexdigest()


def parse_line(number: int, text: str, defaults: dict, base: Path) -> Pair:
    """One input line as a pair; raise PtxError naming what is wrong with it. Relative
    paths are read from `base`, the folder of the pairs file."""
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
    """The pair's result fields, decided in a child process stopped at its limit."""
    start = time.perf_counter()
    limit = 2 * pair.options["timeout"] + STOP_MARGIN
    outcome = race({"pair": (_decide, (pair,))}, limit)["pair"]
    if outcome.status == "ok":
        return outcome.value
    if outcome.status == "stopped":
        return {"verdict": "unknown", "reason": f"stopped after {limit:g} s",
                "seconds": round(time.perf_counter() - start, 4)}
    return {"verdict": "error", "error": f"ptxsmt failed on this pair: {outcome.value}",
            "bug": True}


def _decide(pair: Pair) -> dict:
    o = pair.options
    opts = Options(target=parse_target(o["target"]).sm, vset_merge=o["vset_merge"])
    try:
        if pair.kind == "snippets":
            verdict = decide(build_query(pair.lhs, pair.rhs, o.get("outputs"), opts),
                             o["timeout"], solver=o["solver"])
            return verdict_json(verdict)
        if pair.kind == "ir":
            return _decide_ir(pair)
        return function_verdict_json(_decide_functions(pair, opts))
    except PtxError as e:
        return {"verdict": "error", "error": str(e)}
    except (ReplayError, SolverDisagreement) as e:
        return {"verdict": "error", "error": f"ptxsmt bug, please report: {e}", "bug": True}
    finally:  # the child leaves without atexit: keep the programs its replay compiled
        cache.flush()


def _decide_functions(pair: Pair, opts: Options):
    from .function.evaluate import read_function_file
    from .smt.functions import check_function_equivalence

    o = pair.options
    a = read_function_file(pair.lhs, pair.function)
    b = read_function_file(pair.rhs, pair.function_b)
    return check_function_equivalence(a, b, opts, o["timeout"], o.get("unroll") or 0,
                                      o.get("solver") or "auto")


def _decide_ir(pair: Pair) -> dict:
    """Does the PTX function refine the IR's? The fields of `equiv SOURCE.ll TARGET.ptx
    --json`, and the seconds it took."""
    from .function.evaluate import read_function_file
    from .llvm.errors import Unsupported
    from .llvm.module import read_ir
    from .llvm.refine import Validated, ir_refines
    from .report.llvm import equiv_row
    from .smt.portfolio import second_solver

    start = time.perf_counter()
    try:
        functions = read_ir(Path(pair.lhs).read_text())
    except OSError as e:
        raise PtxError(f"{pair.lhs}: {e.strerror or e}") from None
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
                                            second_solver()))
    except Unsupported as e:
        result = Validated(name, None, e)
    return {**equiv_row(result, pair.rhs, ptx_fn.name),
            "seconds": round(time.perf_counter() - start, 4)}


def run(lines: Iterable[str], defaults: dict, base: Path, jobs: int = 1,
        kind: str = "processes", scheduler: str | None = None) -> Iterator[dict]:
    """A result for each line, in order: {"line", "verdict", "seconds", ...}."""
    lines = list(lines)
    results: dict[int, dict] = {}
    todo: list[tuple[Pair, str | None]] = []
    store = _results_dir()
    for number, text in enumerate(lines, 1):
        if not text.strip():
            results[number] = {"verdict": "skipped", "reason": "blank line"}
            continue
        try:
            pair = parse_line(number, text, defaults, base)
            key = pair.key() if store else None
        except (PtxError, OSError) as e:
            results[number] = {"verdict": "error", "error": getattr(e, "message", str(e)),
                               "bad_input": True}
            continue
        if key and (hit := _read(store, key)):
            results[number] = {**hit, "cached": True}
        else:
            todo.append((pair, key))
    with Progress("equiv --batch", total=len(lines), unit="pairs") as progress:
        progress.update(len(results))
        pool = executor(kind, min(jobs, max(1, len(todo))), scheduler) if todo else None
        try:
            decided = pool.map(decide_pair, [p for p, _ in todo]) if pool else iter(())
            next_line = 1
            for (pair, key), result in zip(todo, decided):
                if key and result["verdict"] in CACHED:
                    _write(store, key, result)
                results[pair.line] = result
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


def _read(store: Path, key: str) -> dict | None:
    try:
        return json.loads((store / f"{key}.json").read_text())
    except (OSError, ValueError):
        return None


def _write(store: Path, key: str, result: dict) -> None:
    """Atomically (a concurrent run reads the whole file or none); a failure only costs
    the cache entry."""
    tmp = store / f".{key}.{os.getpid()}.tmp"
    try:
        store.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(result))
        os.replace(tmp, store / f"{key}.json")
    except OSError:
        with suppress(OSError):
            tmp.unlink()
