"""`synthesize`: enumerate, fingerprint, prove, minimise; then near misses.

For each type, pool by pool (predicates first: their compares are the parts of every
other pool's snippets):

1. enumerate the pool's snippets (`grammar`);
2. evaluate each on the characteristic operands (`operands`) with the vectorised
   evaluator and group snippets whose outputs agree on every row;
3. in each group, prove every member equal to the group's smallest, skipping members
   already known equal to it (`minimise`); a refuted member's counterexample joins the
   rows and its group is split on it, so nothing is ever assumed from a fingerprint;
4. keep the proved pairs no other kept pair implies (`minimise`), and look for near
   misses between the simplest groups (`nearmiss`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import nearmiss, proofcache
from .boolean import learn, note, relate_literals
from .grammar import Domain, Pool, Snippet, enumerate_snippets
from .minimise import Classes
from .nearmiss import NearMiss
from .operands import Rows, characteristic
from .text import instructions, registers
from .work import fingerprint_task, outputs_on, prove_task

BATCH = 128  # snippets per fingerprint task


@dataclass(frozen=True)
class Rule:
    lhs: str
    rhs: str
    pool: Pool


@dataclass
class Stats:
    enumerated: int = 0
    unsupported: int = 0  # snippets the vectorised evaluator cannot run (left out)
    groups: int = 0
    candidates: int = 0  # pairs sent to the solver
    proved: int = 0
    refuted: int = 0
    unknown: int = 0
    derived: int = 0  # proved pairs dropped because the kept rules imply them
    cache_hits: int = 0
    cache_lookups: int = 0
    seconds: float = 0.0

    @property
    def hit_rate(self) -> float:
        return self.cache_hits / self.cache_lookups if self.cache_lookups else 0.0


@dataclass
class Synthesis:
    rules: list[Rule] = field(default_factory=list)
    near_misses: list[NearMiss] = field(default_factory=list)
    stats: Stats = field(default_factory=Stats)
    groups: dict[Pool, list[list[str]]] = field(default_factory=dict)  # equal snippets


@dataclass(frozen=True)
class Config:
    types: tuple[Domain, ...]
    size: int = 2
    families: tuple[str, ...] = ()
    timeout: float = 30.0
    seed: int = 0
    near_misses: int = 40  # per pool at most


class Prover:
    """Proofs through the cache, the rest on the executor, results in task order."""

    def __init__(self, executor, stats: Stats, timeout: float,
                 progress: Callable[[int], None] | None = None):
        self.executor, self.stats, self.timeout = executor, stats, timeout
        self.progress = progress or (lambda n: None)

    def run(self, pairs: list[tuple[str, str]], outputs: tuple[str, ...],
            with_classes: bool = False, reading: tuple = ()) -> list[dict]:
        """`reading`: how the class report reads registers, ((register, lane type name,
        lanes), ...); see `Pool.reading`."""
        tasks = [(lhs, rhs, outputs, self.timeout, with_classes, reading) for lhs, rhs in pairs]
        results: list[dict | None] = [proofcache.get(t) for t in tasks]
        self.stats.cache_lookups += len(tasks)
        self.stats.cache_hits += sum(r is not None for r in results)
        todo = [i for i, r in enumerate(results) if r is None]
        self.progress(len(tasks) - len(todo))
        for i, result in zip(todo, self.executor.map(prove_task, [tasks[i] for i in todo])):
            results[i] = result
            proofcache.put(tasks[i], result)
            self.progress(1)
        proofcache.flush()
        return results


def synthesize(config: Config, executor, progress: Callable[[str, int, int], None] | None = None
               ) -> Synthesis:
    """`progress(stage, done, total)` is told of each batch finished."""
    start = time.perf_counter()
    result = Synthesis()
    stats = result.stats
    for t in config.types:
        snippets = enumerate_snippets(t, config.size, config.families)
        stats.enumerated += len(snippets)
        order = {s.text: sort_key(s) for s in snippets}
        classes, kept = Classes(order), Classes(order)  # all proved / the kept rules'
        by_pool: dict[Pool, list[Snippet]] = {}
        for s in sorted(snippets, key=sort_key):
            by_pool.setdefault(s.pool, []).append(s)
        for pool in sorted(by_pool, key=lambda p: p.kind != "pred"):
            members = by_pool[pool]
            tick = _ticker(progress, f"{pool.name}", len(members))
            prover = Prover(executor, stats, config.timeout, tick)
            rows = characteristic(pool, config.seed)
            groups = _group(members, rows, executor, stats, tick)
            stats.groups += len(groups)
            proved = _settle(groups, rows, classes, prover, stats)
            result.rules += _keep(proved, kept, groups, pool, stats)
            result.groups[pool] = groups
            result.near_misses += nearmiss.find(pool, groups, rows, prover, config.near_misses)
    stats.seconds = time.perf_counter() - start
    return result


def _tier(m: str, rep: str, order: dict[str, tuple]) -> tuple[int, int]:
    """Pairs are proved a tier at a time, simplest first (fewest reads of c, then
    fewest steps), so what the simpler rules imply is never sent to the solver."""
    return reads_c(m) + reads_c(rep), order[m][0]


def reads_c(text: str) -> int:
    """How many times the snippet names c."""
    return sum(registers(ins).count("c") for ins in instructions(text))


def sort_key(s: Snippet) -> tuple:
    """Smaller first: fewer steps, shorter text, operands in order (a, b), then text."""
    swapped = sum(1 for ins in instructions(s.text)
                  if [str(ins.operands.get(k)) for k in "ab"] == ["b", "a"])
    return (s.size, len(s.text), swapped, s.text)


def _ticker(progress, stage: str, total: int) -> Callable[[int], None]:
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(stage, done, total)

    return tick


def _group(members: list[Snippet], rows: Rows, executor, stats: Stats,
           tick: Callable[[int], None]) -> list[list[str]]:
    """Snippets with equal outputs on every row, each group smallest first."""
    columns = rows.arrays()
    texts = [s.text for s in members]
    batches = [texts[i:i + BATCH] for i in range(0, len(texts), BATCH)]
    tasks = [(batch, columns, rows.pool.outputs) for batch in batches]
    groups: dict[str, list[str]] = {}
    for batch, digests in zip(batches, executor.map(fingerprint_task, tasks)):
        for text, digest in zip(batch, digests):
            if digest is None:
                stats.unsupported += 1
            else:
                groups.setdefault(digest, []).append(text)
        tick(len(batch))
    return list(groups.values())  # members keep the enumeration's order: smallest first


def _settle(groups: list[list[str]], rows: Rows, classes: Classes, prover: Prover,
            stats: Stats) -> list[tuple[str, str]]:
    """Prove each group's members equal to its first, splitting groups on
    counterexamples; returns the proved pairs (member, representative) and leaves
    `groups` holding the proved groups (an undecided member alone in its own)."""
    proved: list[tuple[str, str]] = []
    todo = list(groups)
    groups.clear()
    order = classes.order
    while todo:
        for group in todo:  # congruence and Boolean algebra on what is proved so far
            for m in group:
                note(classes, m)
        pairs = [(m, g[0]) for g in todo for m in _unexplained(g, classes)]
        simplest = min((_tier(m, rep, order) for m, rep in pairs), default=None)
        pairs = [(m, rep) for m, rep in pairs if _tier(m, rep, order) == simplest]
        results = prover.run(pairs, rows.pool.outputs)
        stats.candidates += len(pairs)
        broken: set[str] = set()  # representatives with a member not proved equal
        undecided: set[str] = set()
        for (m, rep), r in zip(pairs, results):
            if r["verdict"] == "equivalent":
                stats.proved += 1
                proved.append((m, rep))
                learn(classes, m, rep)
                continue
            broken.add(rep)
            if r["verdict"] == "different":
                stats.refuted += 1
                rows.add(r["counterexample"]["inputs"])
            else:
                stats.unknown += 1
                undecided.add(m)
        next_round = []
        for group in todo:
            if group[0] not in broken:
                settled = all(classes.same(m, group[0]) for m in group)
                (groups if settled else next_round).append(group)
                continue
            groups.extend([m] for m in group if m in undecided)
            next_round += _split([m for m in group if m not in undecided], rows)
        todo = next_round
    return proved


def _unexplained(group: list[str], classes: Classes) -> list[str]:
    """One member of each class in the group other than the representative's."""
    seen = {classes.find(group[0])}
    out = []
    for m in group[1:]:
        root = classes.find(m)
        if root not in seen:
            seen.add(root)
            out.append(m)
    return out


def _split(group: list[str], rows: Rows) -> list[list[str]]:
    """The group regrouped by outputs on the rows added since it was formed."""
    columns = rows.arrays()
    parts: dict[bytes, list[str]] = {}
    for m in group:
        parts.setdefault(outputs_on(m, columns, rows.pool.outputs).tobytes(), []).append(m)
    return list(parts.values())


def _keep(proved: list[tuple[str, str]], kept: Classes, groups: list[list[str]], pool: Pool,
          stats: Stats) -> list[Rule]:
    """The proved pairs, simplest first (fewest reads of c, then smallest), that the
    rules kept before (this type's other pools' too: their compares are congruence's
    parts) do not imply: `setp.lt; not.pred` = `setp.geu` is kept, and the BoolOp
    forms it gives by Boolean algebra are not. Before each kind of pair, every snippet
    of the pool is read with what the rules so far give."""
    out, tier = [], None
    for m, rep in sorted(proved, key=lambda p: (_tier(*p, kept.order), kept.order[p[0]],
                                                 kept.order[p[1]])):
        if _tier(m, rep, kept.order) != tier:
            tier = _tier(m, rep, kept.order)
            for _ in range(2):  # a snippet read later may join an earlier one's class
                for text in (t for g in groups for t in g):
                    note(kept, text)
        note(kept, m)
        note(kept, rep)
        if kept.same(m, rep):
            relate_literals(kept, m, rep)  # implied, and what it says of compares is too
            stats.derived += 1
            continue
        learn(kept, m, rep)
        out.append(Rule(m, rep, pool))
    return out
