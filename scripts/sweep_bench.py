"""The sweep benchmark of issue 44 (`scripts/bench.py --sweep`): each pair of
scripts/sweep_corpus.py's corpus under three configurations, the monolithic query by z3,
the same query by bitwuzla alone, and equivalence sweeping; solved count and PAR-2 in
CPU seconds (what another process on the machine does not stretch), wall seconds beside
them; the table goes to docs/sweep-benchmark.md.

A configuration's run on a pair is a fresh process measured by its CPU seconds and those
of every solver process it started and reaped (`getrusage(RUSAGE_CHILDREN)` of a small
wrapper around it): the issue's "on one idle core" is CPU seconds, and several runs at
once (`--jobs`) do not count each other's time. Each measurement is one JSON line of
`--records FILE` as soon as it is made; a run given the same file measures only what is
not in it yet (a run cut short goes on; runs of parts of the work on other machines join).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from threading import Lock

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ("monolithic z3", "monolithic bitwuzla", "sweep")
DEFINITE = ("equivalent", "different", "bounded")
DOC = ROOT / "docs" / "sweep-benchmark.md"
MARKS = ("<!-- the table: scripts/bench.py --sweep writes it -->", "<!-- end of the table -->")
SEED = 44  # the sample's
# the strata a sample spreads over, the first balanced first (`sample`)
STRATA: tuple[Callable[[dict], object], ...] = (
    lambda label: label["kind"], lambda label: label["planted"] is not None,
    lambda label: label["ops"], lambda label: label["compiler"])
KILL_AFTER = 30.0  # wall seconds past a configuration's own wall cap (`wall_cap` x the limit)

# the monolithic query (`--no-sweep`, as `ptxsmt equiv` builds it), handed to bitwuzla
# alone (a sat is not replayed: a baseline, not a verdict ptxsmt gives); the limit is
# CPU seconds, encoding's included
_MONOLITHIC_BITWUZLA = """
import sys, time
from ptxsmt.function.evaluate import read_function_file
from ptxsmt.smt.solving import portfolio
from ptxsmt.smt.queries.functions import check_function_equivalence
a, b, limit = sys.argv[1], sys.argv[2], float(sys.argv[3])
class Query(Exception):
    pass
def emit(assertions):
    raise Query(assertions)
try:
    check_function_equivalence(read_function_file(a, "f"), read_function_file(b, "f"),
                               timeout=limit, sweeping=False, emit=emit)
except Query as q:
    answer = portfolio.solve(q.args[0], max(0.1, limit - time.process_time()), ("bitwuzla",))
    print({"unsat": "equivalent", "sat": "different"}.get(answer.result, "unknown"))
"""

# runs a command and says what it printed, and the CPU seconds of it and of every
# process it reaped (a command killed at the limit is reaped too, so counted)
_MEASURED = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
try:
    out = subprocess.run(sys.argv[2:], capture_output=True, text=True,
                         timeout=float(sys.argv[1])).stdout
except subprocess.TimeoutExpired:
    out = None
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"out": out, "cpu": used.ru_utime + used.ru_stime,
                  "wall": time.perf_counter() - start}))
"""


def command(config: str, a: Path, b: Path, limit: float) -> list[str]:
    if config == "monolithic bitwuzla":
        return [sys.executable, "-c", _MONOLITHIC_BITWUZLA, str(a), str(b), str(limit)]
    flags = ["--no-sweep", "--solver", "z3"] if config == "monolithic z3" else []
    return [sys.executable, "-m", "ptxsmt", "equiv", str(a), str(b), "--function", "f",
            "--json", "--timeout", str(limit), *flags]


def measure(config: str, a: Path, b: Path, limit: float) -> dict:
    """{"verdict", "cpu", "wall"} of one configuration on one pair, in a fresh process."""
    got = measured(command(config, a, b, limit), wall_cap() * limit + KILL_AFTER)
    return {"verdict": verdict_of(got["out"]), "cpu": round(got["cpu"], 3),
            "wall": round(got["wall"], 3)}


def wall_cap() -> float:
    """The wall cap of every run, in multiples of its CPU limit: ptxsmt's (2), or
    PTXSMT_WALL_CAP's where set, which the runs inherit (on a loaded machine a
    measurement raises it, so that the CPU seconds decide: docs/scale.md)."""
    from ptxsmt.smt.solving import budget

    return budget.wall_cap()


def measured(cmd: list[str], kill_after: float) -> dict:
    """{"out": what `cmd` printed (None: killed at `kill_after` wall seconds), "cpu": the
    CPU seconds of it and of every process it reaped, "wall"}."""
    done = subprocess.run([sys.executable, "-c", _MEASURED, str(kill_after), *cmd],
                          capture_output=True, text=True, check=True,
                          env={**os.environ, "PTXSMT_NO_CACHE": "1"})
    return json.loads(done.stdout)


def verdict_of(out: str | None) -> str:
    """The verdict a configuration printed (a JSON object, or a word)."""
    if out is None:
        return "stopped"
    out = out.strip()
    try:
        return json.loads(out)["verdict"] if out.startswith("{") else out.split()[-1]
    except (ValueError, KeyError, IndexError):
        return "error"


def sample(labels: Sequence[dict], n: int | None, seed: int = SEED) -> list[int]:
    """The indices of `n` pairs (None: all), spread over the STRATA: one pair from each
    stratum (kind, equal or planted, size, compiler) before a second from any, and among
    those the kind least taken so far, then equal or planted, size and compiler, in that
    order; ties by a shuffle of `seed`."""
    order = random.Random(seed).sample(range(len(labels)), len(labels))
    keys = [(tuple(key(labels[i]) for key in STRATA), *[(d, key(labels[i]))
             for d, key in enumerate(STRATA)]) for i in range(len(labels))]
    taken: Counter = Counter()
    chosen: list[int] = []
    for _ in range(len(labels) if n is None else min(n, len(labels))):
        best = min((i for i in order if i not in chosen),
                   key=lambda i: [taken[k] for k in keys[i]])
        chosen.append(best)
        taken.update(keys[best])
    return sorted(chosen)


def run(corpus: Path, chosen: Sequence[int], limit: float, jobs: int,
        records: Path | None) -> dict[tuple[int, str], dict]:
    """Every configuration on every chosen line of the corpus, `jobs` at a time; those
    `records` already holds (at this limit) are read, not measured again."""
    lines = [json.loads(x) for x in (corpus / "pairs.jsonl").read_text().splitlines()]
    done: dict[tuple[int, str], dict] = {}
    if records and records.exists():
        for row in map(json.loads, records.read_text().splitlines()):
            if row["limit"] == limit:
                done[row["line"], row["config"]] = row
    todo = [(i, c) for i in chosen for c in CONFIGS if (i + 1, c) not in done]
    lock = Lock()

    def one(task: tuple[int, str]) -> None:
        i, config = task
        row = {"line": i + 1, "config": config, "limit": limit,
               **measure(config, corpus / lines[i]["a"], corpus / lines[i]["b"], limit),
               "load": round(os.getloadavg()[0], 1)}
        with lock:
            done[i + 1, config] = row
            if records:
                with records.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, todo))
    return {(i, c): done[i + 1, c] for i in chosen for c in CONFIGS}


def solved(m: dict, limit: float) -> bool:
    """A definite verdict within the limit's CPU seconds."""
    return m["verdict"] in DEFINITE and m["cpu"] <= limit


def at_wall_cap(m: dict, limit: float) -> bool:
    """Not solved, and ended by the wall cap (`wall_cap` x the limit) with CPU seconds
    left: the machine's load decided it, not the limit."""
    from ptxsmt.smt.solving import budget

    return not solved(m, limit) and budget.wall_bound(m["cpu"], m["wall"], limit)


def par2(results: Sequence[dict], limit: float, clock: str = "cpu") -> float:
    """The mean seconds on `clock` a pair, 2 x `limit` for one not solved (within the
    limit on that clock)."""
    return sum(m[clock] if m["verdict"] in DEFINITE and m[clock] <= limit else 2 * limit
               for m in results) / len(results)


def table(labels: Sequence[dict], runs: dict[str, list[dict]], limit: float) -> str:
    """The markdown the doc shows: per configuration, solved and PAR-2 in CPU seconds,
    PAR-2 on the wall clock beside it, and the verdicts against the label apart."""
    rows = ["| configuration | solved | PAR-2 (CPU s) | PAR-2 (wall s) | equivalent | "
            "different | against the label | unsolved | of them at the wall cap | "
            "CPU s / wall s in all |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    against: dict[str, list[str]] = {}
    for config, results in runs.items():
        ok = [solved(m, limit) for m in results]
        against[config] = [label["name"] for m, s, label in zip(results, ok, labels)
                           if s and m["verdict"] != label["expect"]]
        count = {v: sum(s and m["verdict"] == v for m, s in zip(results, ok))
                 for v in ("equivalent", "different")}
        rows.append(f"| {config} | {sum(ok)} of {len(results)} | {par2(results, limit):,.1f} | "
                    f"{par2(results, limit, 'wall'):,.1f} | {count['equivalent']} | "
                    f"{count['different']} | {len(against[config])} | {len(results) - sum(ok)} | "
                    f"{sum(at_wall_cap(m, limit) for m in results)} | "
                    f"{sum(m['cpu'] for m in results):,.0f} / "
                    f"{sum(m['wall'] for m in results):,.0f} |")
    best = min(CONFIGS[:2], key=lambda c: par2(runs[c], limit))
    largest = [m["cpu"] for m, label in zip(runs["sweep"], labels) if label["ops"] == 1000]
    rows.append(f"\nPAR-2 in CPU seconds of the best monolithic solver ({best}) over the "
                f"sweep's: {par2(runs[best], limit) / par2(runs['sweep'], limit):,.1f}x."
                + (f" The sweep's costliest pair of 1,000 operations: {max(largest):,.1f} "
                   "CPU s." if largest else ""))
    for config, names in against.items():
        if names:
            rows.append(f"\nAgainst the label ({config}): {', '.join(names)}.")
    rows += ["\nBy kind (solved by z3 / bitwuzla / the sweep, of n):\n",
             "| kind | n | monolithic z3 | monolithic bitwuzla | sweep |",
             "|---|---:|---:|---:|---:|"]
    for kind in dict.fromkeys(label["kind"] for label in labels):
        at = [k for k, label in enumerate(labels) if label["kind"] == kind]
        counts = [sum(solved(runs[c][k], limit) for k in at) for c in CONFIGS]
        rows.append(f"| {kind} | {len(at)} | " + " | ".join(map(str, counts)) + " |")
    return "\n".join(rows) + "\n"


def write_doc(text: str, doc: Path = DOC) -> None:
    """`text` between the doc's MARKS, the rest of the doc as it was."""
    head, _, rest = doc.read_text().partition(MARKS[0])
    _, _, tail = rest.partition(MARKS[1])
    doc.write_text(f"{head}{MARKS[0]}\n{text}\n{MARKS[1]}{tail}")


def bench(corpus: Path | None, n: int | None, limit: float, jobs: int,
          records: Path | None = None) -> None:
    """The benchmark on `corpus` (None: generate it), `n` pairs of it (`sample`), each
    configuration limited to `limit` CPU seconds; the table to stdout and the doc."""
    import tempfile

    sys.path.insert(0, str(ROOT / "scripts"))
    import sweep_corpus

    with tempfile.TemporaryDirectory() as place:
        if corpus is None:
            corpus = Path(place)
            sweep_corpus.write(corpus, tuple(sweep_corpus.KINDS), sweep_corpus.SIZES,
                               sweep_corpus.SEEDS, sweep_corpus.COMPILERS)
        labels = [json.loads(x) for x in (corpus / "manifest.jsonl").read_text().splitlines()]
        chosen = sample(labels, n)
        measured = run(corpus, chosen, limit, jobs, records)
    text = table([labels[i] for i in chosen],
                 {c: [measured[i, c] for i in chosen] for c in CONFIGS}, limit)
    print(text)
    loads = [measured[i, c].get("load") for i in chosen for c in CONFIGS]
    loads = [x for x in loads if x is not None]
    what = f"{len(chosen)} of {len(labels)} pairs" + (f" (--sample {n}, seed {SEED})" if n else "")
    write_doc(f"{what}, --limit {limit:g} CPU s, --jobs {jobs}"
              + (f", load average {min(loads):.1f} to {max(loads):.1f} as each run ended"
                 if loads else "") + f":\n\n{text}")
