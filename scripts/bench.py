"""ptxsmt benchmark: one table, each row a measurement and a ratio against a
baseline measured in the same run.

    python scripts/bench.py [--quick]

Rows:
  batch N texts  `ptxsmt eval --batch FILE` in a fresh process (JSON in and out) on 150k
                 mixed corpus lines (inputs only, in a shuffled order) drawn from N distinct
                 instruction texts (every text of the corpus; 4,900 spread over every
                 family, ~30 lines a text, nearly all of different shapes: the issue's
                 mixed workload; or 100), vs a plain-Python interpreter of the same lines
                 (tests/oracle.py) in-process; cold = an empty cache of compiled programs,
                 warm = the same run again (nothing compiled, no solver imported); each
                 the best of 3 runs, ours and the baseline's in turn
  ... (S shapes) the texts as a compiler emits them: S corpus texts, each with 32
                 register namings (%r0, %r1, ...), ~30 lines a text; texts of one shape
                 compile once; cold and warm with --jobs 2 (the default), warm with one
                 process too
  startup        one `ptxsmt eval` of one instruction, a fresh process, vs a fresh
                 Python that only imports z3 (what any evaluation needs)
  f32 compare    the vectorised setp.lt.f32 (compiled from the Z3 terms) vs numpy's
                 own float32 `<` on the same arrays, one core
  vset4 compare  the vectorised vset4.u32.u32.lt vs a direct numpy byte-lane compare
  f16 sweep      all 2^32 operand pairs of setp.lt.f16 on 2 processes, vs numpy's
                 float16 `<` over the same pairs on one core
  prove          `prove identities` with 2 jobs vs 1 job; share of time in the solver
  equiv chain N  N-instruction equivalence query; ratio = time per instruction
                 relative to the 10-instruction chain (1.0 = linear growth)
  encode K N     `encode_function` on a generated N-instruction function of kind K
                 (straight, diamond, triangle, mixed: tests/branchy.py) vs the old
                 encoding (commit ENCODE_BASELINE) in the same run, fresh processes; the
                 baseline capped (60 s; 20 s --quick) (--only-encode: these)
  check N lines  `ptxsmt check` on a ~100k-line module llc-14 writes (3,000 functions of
                 compares, selects, arithmetic, loads, stores, branches) vs `ptxas -arch
                 sm_80` on the same file, each a fresh process; as plain functions (which
                 ptxas only reads) and as kernels (which it compiles) (--only-check: these)
  fequiv K N     `ptxsmt equiv` of llc-14 -O0 against opt-14 -O2 | llc-14 -O2 of a
                 generated IR function of N operations of kind K (int, intnomul, float:
                 scripts/scale_functions.py), equivalence sweeping against the whole query
                 at once (--no-sweep), each under the issue's limit (--only-fequiv: these)
  big K S MB     `ptxsmt equiv` of function f1 of a generated S MB module
                 (scripts/big_modules.py), K ptx (PTX against itself) or ll (IR against
                 its PTX): wall time and peak memory of a fresh process, vs the reader of
                 commit BIG_BASELINE (every body read) in the same run, capped; then the
                 growth of the time from the first size to the last (--only-big: these)
  normal float N `rewrite.normal` over every node of the query DAG of a generated float
                 pair of N operations (scale_functions.py, llc-14 -O0 against -O2),
                 children first as the sweep rebuilds them, CPU s of a fresh process, vs
                 the NaN-test rewrite with no limit on the terms it rebuilds
                 (float_facts.REBUILT) in the same run, capped (300 CPU s; 60 --quick)
                 (--only-normal: these)
  bf16 OP CPU    `ir_refines` of `OP bfloat` against its PTX, bf16 read through f32 vs
                 not (the baseline capped; "+": it did not finish) (--only-bf16: these)
  sweep bench    (--sweep only; issue 44) the fixed benchmark of scripts/sweep_corpus.py
                 (542 generated -O0/-O2 pairs, equal and planted): solved count and
                 PAR-2 in CPU seconds at --limit (60) for the monolithic query by z3
                 (`--no-sweep --solver z3`), by bitwuzla (the same query, bitwuzla
                 alone), and the sweep (`ptxsmt equiv`'s default), each a fresh process
                 per pair, in one run (scripts/sweep_bench.py); `--sample N` a sample
                 spread over the strata; the table goes to docs/sweep-benchmark.md
Targets (issue 4): batch ratio >= 1; f32 >= 100 M/s; sweep < 60 s; prove --jobs 2
< 30 s; a 1,000-instruction query < 5 s. Issue 12: the compiler-style batch >= 1x cold
(3x warm); f32 >= 0.5x numpy; vset4 within 5x of numpy; a 10,000-instruction chain
< 10 s, linear; one eval < 0.15 s. Issue 21: check within 5x of ptxas. Issue 23: a
5,000-instruction function encoded in < 15 s, linearly; -O0 against -O2 of 100, 300 and
1,000 operations decided equivalent within 30, 60 and 120 s. Issue 40: one function
out of a 10 MB module, PTX or IR, in < 5 s and < 500 MB, the time linear in the size.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from oracle import evaluate as oracle_evaluate  # noqa: E402
from strategies import oracle_desc  # noqa: E402

from ptxsmt import parse_one, proofs  # noqa: E402
from ptxsmt.batch.programs import compile_program  # noqa: E402
from ptxsmt.eval.sweep import sweep  # noqa: E402
from ptxsmt.isa.literals import hex_bits, parse_value  # noqa: E402
from ptxsmt.isa.syntax import format_instruction, rename_registers  # noqa: E402
from ptxsmt.isa.variants import operand_types  # noqa: E402
from ptxsmt.program import Program  # noqa: E402
from ptxsmt.smt.queries.snippets import check_equivalence  # noqa: E402

ROWS: list[tuple[str, str, str, str]] = []


def row(name: str, ours: str, baseline: str, ratio: str) -> None:
    ROWS.append((name, ours, baseline, ratio))
    print(f"{name:<30} {ours:>20} {baseline:>26} {ratio:>10}", flush=True)


def corpus_lines(n: int, distinct: int | None = None, namings: int = 1) -> list[str]:
    """n lines cycled from the corpus; with `distinct`, only from that many instruction texts;
    each text spelled with `namings` different register names."""
    lines = [line for p in sorted((ROOT / "models").glob("*.jsonl")) if p.name != "golden.jsonl"
             for line in p.read_text().splitlines()]
    if distinct:
        texts = list(dict.fromkeys(json.loads(x)["ptx"] for x in lines))
        texts = texts[:: len(texts) // distinct][:distinct]  # spread over every family
        keep = set(texts)
        lines = [x for x in lines if json.loads(x)["ptx"] in keep]
    if namings > 1:
        lines = [renamed(x, k) for k in range(namings) for x in lines]
    lines = list(itertools.islice(itertools.cycle(lines), n))
    random.Random(0).shuffle(lines)  # a mixed batch: a text's lines are not together
    return [json.dumps({k: v for k, v in json.loads(x).items() if k != "outputs"})
            for x in lines]  # what a CI sends: the inputs


def renamed(line: str, k: int) -> str:
    """The line with its registers named as a compiler numbers them (the k-th naming)."""
    obj = json.loads(line)
    program = Program.parse(obj["ptx"])
    names = {r: f"r{16 * k + i}" for i, r in enumerate(program.spelling)}  # in order of use
    percent = {r: "%" + n for r, n in names.items()}
    obj["ptx"] = " ".join(format_instruction(rename_registers(ins, percent))
                          for ins in program.instructions)
    obj["inputs"] = {names[r.lstrip("%")]: v for r, v in obj["inputs"].items()}
    obj.pop("outputs", None)
    return json.dumps(obj)


def plain_python(lines: list[str]) -> str:
    """The baseline: decode JSON, interpret with the oracle, encode JSON."""
    out = io.StringIO()
    parsed: dict[str, tuple] = {}
    for line in lines:
        obj = json.loads(line)
        opts = obj.get("options", {})
        key = (obj["ptx"], opts.get("target", "sm_90"), opts.get("vset_merge", "c"))
        if key not in parsed:
            ins = parse_one(obj["ptx"])  # one instruction, possibly guarded
            target = int(key[1].removeprefix("sm_").rstrip("af"))
            parsed[key] = (ins, operand_types(ins.variant), oracle_desc(ins, target, key[2]))
        ins, types, desc = parsed[key]
        raw = obj["inputs"]
        inputs = {slot: parse_value(raw[o.text], types[slot]) if isinstance(raw[o.text], str)
                  else raw[o.text] for slot, o in ins.sources.items()}
        if ins.guard and (raw[ins.guard.register] in (True, "true")) == ins.guard.negated:
            res = {slot: parse_value(raw[o.text], types[slot]) if isinstance(raw[o.text], str)
                   else raw[o.text] for slot, o in ins.destinations.items()}  # not executed
        else:
            res = oracle_evaluate(desc, inputs)
        obj["outputs"] = {o.text: res[slot] if isinstance(res[slot], bool)
                          else hex_bits(res[slot], types[slot].width)
                          for slot, o in ins.destinations.items()}
        out.write(json.dumps(obj) + "\n")
    return out.getvalue()


# ---- issue 25: the batch engine before and after (one reader on msgspec, a process pool) ----

def bench_batch_before_after(before: Path | None, n: int = 150_000, repeat: int = 3) -> None:
    """The held-out kind of workload (n lines over ~4,900 texts, nearly all of different
    shapes) through `ptxsmt eval --batch --jobs 2` in a fresh process, cold (empty cache)
    and warm, by this checkout ("after") and by the checkout at `before` (the same
    command run with its package), each against the in-process plain-Python interpreter
    of the same lines, taken in turn with ours. A row's ratio is the best baseline time
    over the best of ours (ratios, not times, compare across this busy machine)."""
    lines = corpus_lines(n, 4900)
    texts = len({json.loads(x)["ptx"] for x in lines})
    base_times: list[float] = []
    base = ""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        path.write_text("\n".join(lines) + "\n")
        for name, root in (("before", before), ("after", ROOT)):
            if root is None:
                continue
            cache = Path(tmp) / f"cache-{name}"
            env = {**os.environ, "PTXSMT_CACHE_DIR": str(cache), "PYTHONPATH": str(root)}
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode
            for state in ("cold", "warm"):
                times, base_times = [], []
                for _ in range(repeat):
                    if state == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    seconds, ours = ours_cli(path, env, 2)
                    times.append(seconds)
                    base_seconds, base = timed(plain_python, lines)
                    base_times.append(base_seconds)
                same = _outputs(base) == _outputs(ours)
                ratio = f"{min(base_times) / min(times):.2f}x" + ("" if same else " DIFF")
                row(f"i25 {name} {texts} texts {state}", f"{n / min(times):,.0f} lines/s",
                    f"{n / min(base_times):,.0f} lines/s (python)", ratio)
    for name, root in (("before", before), ("after", ROOT)):
        if root is not None:
            packages = [root / "ptxsmt" / p for p in ("eval", "batch", "fast")]
            count = sum(len(f.read_text().splitlines()) for d in packages if d.is_dir()
                        for f in d.rglob("*.py"))
            row(f"i25 {name} eval+batch+fast", f"{count:,} lines", "", "")


def ours_cli(path: Path, env: dict, jobs: int = 2) -> tuple[float, str]:
    """`ptxsmt eval --batch FILE > answers.jsonl` in a fresh process, as CI runs it (--jobs 2,
    the default): its time, and the answers read back after it (a pipe would time its
    reader too)."""
    answers = path.with_suffix(".answers")
    with open(answers, "wb") as out:
        seconds, _ = timed(subprocess.run, [sys.executable, "-m", "ptxsmt", "eval", "--batch",
                                            str(path), "--jobs", str(jobs)],
                           stdout=out, stderr=subprocess.DEVNULL, env=env, check=False)
    return seconds, answers.read_text()


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


REPEAT = 3  # a batch timing is the best of this many runs, ours and the baseline's taken in
# turn: this machine's speed drifts by half within seconds, and one run apiece can land apart


def bench_batch(n: int, distinct: int | None, namings: int = 1) -> None:
    """Through the CLI: a cold run (empty cache), then a warm one (what a daily CI sees)."""
    lines = corpus_lines(n, distinct, namings)
    texts = len({json.loads(x)["ptx"] for x in lines})
    base_times: list[float] = []

    def baseline() -> str:
        seconds, answers = timed(plain_python, lines)
        base_times.append(seconds)
        return answers

    base = baseline()
    shapes = f" ({distinct} shapes)" if namings > 1 else ""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        path.write_text("\n".join(lines) + "\n")
        cache = Path(tmp) / "cache"
        env = {**os.environ, "PTXSMT_CACHE_DIR": str(cache)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: modules load from bytecode
        for state, jobs in (("cold", 2), ("warm", 2), ("warm --jobs 1", 1)):
            times = []
            for _ in range(REPEAT):
                if state == "cold":
                    shutil.rmtree(cache, ignore_errors=True)
                seconds, ours = ours_cli(path, env, jobs)
                times.append(seconds)
                baseline()
            same = _outputs(base) == _outputs(ours)
            ratio = f"{min(base_times) / min(times):.2f}x" + ("" if same else " DIFF")
            row(f"batch {texts} texts{shapes} {state}", f"{n / min(times):,.0f} lines/s",
                f"{n / min(base_times):,.0f} lines/s (python)", ratio)


def _outputs(jsonl: str) -> list[dict]:
    """Each line's outputs, registers named without `%` (ptxsmt keys them as written)."""
    return [{k.lstrip("%"): v for k, v in json.loads(x)["outputs"].items()}
            for x in jsonl.splitlines()]


def bench_startup() -> None:
    def wall(*args: str) -> float:
        run = [sys.executable, *args]
        return min(timed(lambda: subprocess.run(run, capture_output=True, check=True))[0]
                   for _ in range(5))

    ours = wall("-m", "ptxsmt", "eval", "setp.lt.f32 p, a, b;", "a=1", "b=2")
    base = wall("-c", "import z3")
    row("startup (one eval)", f"{ours * 1000:,.0f} ms", f"{base * 1000:,.0f} ms (import z3)",
        f"{base / ours:.2f}x")


def bench_f32(n: int) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    fast = compile_program("setp.lt.f32 p, a, b;")
    fast({"a": a, "b": b})
    t_ours = min(timed(fast, {"a": a, "b": b})[0] for _ in range(3))
    t_np = min(timed(lambda: a.view(np.float32) < b.view(np.float32))[0] for _ in range(3))
    assert np.array_equal(fast({"a": a, "b": b})["p"], a.view(np.float32) < b.view(np.float32))
    row("f32 compare", f"{n / t_ours / 1e6:,.0f} M evals/s", f"{n / t_np / 1e6:,.0f} M/s (numpy)",
        f"{t_np / t_ours:.2f}x")


def bench_vset4(n: int) -> None:
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    c = np.zeros(n, dtype=np.uint32)
    fast = compile_program("vset4.u32.u32.lt d, a, b, c;")

    def direct():  # byte i of d is 1 where byte i of a < byte i of b (mask all, c unused)
        lt = a.view(np.uint8).reshape(-1, 4) < b.view(np.uint8).reshape(-1, 4)
        return lt.view(np.uint32).ravel()

    t_ours = min(timed(fast, {"a": a, "b": b, "c": c})[0] for _ in range(3))
    t_np = min(timed(direct)[0] for _ in range(3))
    assert np.array_equal(fast({"a": a, "b": b, "c": c})["d"], direct())
    row("vset4 compare", f"{n / t_ours / 1e6:,.0f} M evals/s", f"{n / t_np / 1e6:,.0f} M/s (numpy)",
        f"{t_np / t_ours:.3f}x")


def numpy_f16_sweep() -> int:
    b = np.arange(65536, dtype=np.uint16).view(np.float16).astype(np.float32)
    return sum(int((b[a] < b).sum()) for a in range(65536))


def bench_sweep() -> None:
    t_ours, result = timed(sweep, "setp.lt.f16 p, a, b;", 2)
    t_np, count = timed(numpy_f16_sweep)
    same = "" if count == result.true_counts["p"] else " DIFF"
    row("f16 sweep 2^32", f"{t_ours:,.1f} s (2 procs)", f"{t_np:,.1f} s (numpy, 1 core)",
        f"{t_np / t_ours:.2f}x{same}")


def bench_prove() -> None:
    instances = proofs.load(ROOT / "proofs")
    t2, res2 = timed(proofs.run, instances, 2)
    t1, _ = timed(proofs.run, instances, 1)
    share = sum(r.solver_seconds for r in res2) / max(sum(r.seconds for r in res2), 1e-9)
    row(f"prove ({len(instances)})", f"{t2:,.1f} s (--jobs 2)", f"{t1:,.1f} s (--jobs 1)",
        f"{t1 / t2:.2f}x")
    row("  solver share", f"{100 * share:,.0f}% of instance time", "", "")


def chain(n: int, swapped: bool) -> str:
    """n compares, each and-ed into a new register (p0, p1, ...): n outputs compared, as
    in real code. One register rewritten n times hid costs paid per output."""
    ops = []
    for i in range(n):
        x, y = f"a{i % 8}", f"b{(i * 3) % 8}"
        cmp = ("gt", y, x) if swapped else ("lt", x, y)
        ops.append(f"setp.{cmp[0]}.and.f32 p{i}, {cmp[1]}, {cmp[2]}, p{i - 1};" if i else
                   f"setp.{cmp[0]}.f32 p0, {cmp[1]}, {cmp[2]};")
    return " ".join(ops)


def bench_chains(sizes) -> None:
    base = None
    for n in sizes:
        t, v = timed(check_equivalence, chain(n, False), chain(n, True), None, 120.0)
        per = t / n
        base = base or per
        row(f"equiv chain {n}", f"{t:,.2f} s ({v.verdict})", "", f"{per / base:.2f}")


def _run_quietly(cmd: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, capture_output=True, check=True)


def bench_synth() -> None:
    """`ptxsmt synth --size 2 --jobs 2` per main type in a fresh process: cold (empty
    caches of programs and proofs), then the same run again (every proof from the cache)."""
    for t in ("f32", "f16x2", "s32", "i32"):
        with tempfile.TemporaryDirectory() as place:
            env = {**os.environ, "PTXSMT_CACHE_DIR": place}
            cmd = [sys.executable, "-m", "ptxsmt", "synth", "--types", t, "--size", "2",
                   "--jobs", "2", "--json"]
            runs = [timed(_run_quietly, cmd, env) for _ in range(2)]
        (cold, first), (warm, again) = runs
        stats, rerun = (json.loads(r.stdout)["stats"] for r in (first, again))
        row(f"synth size 2 {t}", f"{cold:,.1f} s cold ({stats['enumerated']:,} snippets)",
            f"{warm:,.1f} s re-run", f"{rerun['cache_hit_rate']:.0%} hits")


# ---- check: a compiler-written module against ptxas ------------------------------------


def llc_module_ir(functions: int, kernels: bool, seed: int = 0) -> str:
    """LLVM IR of `functions` functions (`kernels`: entry points), each a run of
    arithmetic, compares, selects and loads on one type (i16/i32/i64/half/float/double)
    and a branch to one of two stores: what `llc` turns into the setp/selp/mov/cvt lines
    `check` judges and the ld/st/bra lines it counts (about 33 PTX lines a function)."""
    rng = random.Random(seed)
    families = [("i32", "icmp", ["slt", "ult", "eq", "ne", "sgt", "uge"],
                 ["add", "sub", "mul", "and", "or", "xor", "shl", "lshr"]),
                ("i64", "icmp", ["slt", "ult", "eq", "ne", "sle", "ugt"],
                 ["add", "sub", "mul", "and", "xor", "ashr"]),
                ("i16", "icmp", ["slt", "ult", "eq", "ne"], ["add", "sub", "and", "or"]),
                ("float", "fcmp", ["olt", "ogt", "oeq", "une", "ult", "uge", "ord", "uno"],
                 ["fadd", "fsub", "fmul"]),
                ("double", "fcmp", ["olt", "ole", "one", "ueq", "ugt"], ["fadd", "fmul"]),
                ("half", "fcmp", ["olt", "ogt", "une"], ["fadd", "fmul"])]
    out, entries = [], []
    for f in range(functions):
        t, compare, predicates, ops = rng.choice(families)
        values = ["%a", "%b"]
        body = [f"define void @f{f}({t}* %p, {t} %a, {t} %b, i32 %n) {{", "entry:"]
        for i in range(rng.randint(4, 9)):
            body.append(f"  %x{i} = {rng.choice(ops)} {t} {rng.choice(values)}, "
                        f"{rng.choice(values)}")
            body.append(f"  %c{i} = {compare} {rng.choice(predicates)} {t} "
                        f"{rng.choice(values)}, {rng.choice(values)}")
            body.append(f"  %s{i} = select i1 %c{i}, {t} {rng.choice(values)}, "
                        f"{t} {rng.choice(values)}")
            values += [f"%x{i}", f"%s{i}"]
            if rng.random() < 0.4:
                body.append(f"  %g{i} = getelementptr {t}, {t}* %p, i32 {i}")
                body.append(f"  %l{i} = load {t}, {t}* %g{i}")
                values.append(f"%l{i}")
        body += [f"  %cc = icmp slt i32 %n, {rng.randint(1, 100)}",
                 "  br i1 %cc, label %then, label %else", "then:",
                 f"  store {t} {rng.choice(values)}, {t}* %p", "  br label %done", "else:",
                 f"  %q = getelementptr {t}, {t}* %p, i32 1",
                 f"  store {t} {rng.choice(values)}, {t}* %q", "  br label %done", "done:",
                 "  ret void", "}"]
        out.append("\n".join(body))
        entries.append(f"!{f} = !{{void ({t}*, {t}, {t}, i32)* @f{f}, !\"kernel\", i32 1}}")
    listed = ", ".join(f"!{f}" for f in range(functions))
    annotations = f"!nvvm.annotations = !{{{listed}}}\n" + "\n".join(entries) + "\n"
    return "\n\n".join(out) + "\n" + (annotations if kernels else "")


def bench_check(functions: int, kernels: bool) -> None:
    """`ptxsmt check FILE.ptx` vs `ptxas -arch sm_80 FILE.ptx` on the module llc-14 writes
    for `llc_module_ir(functions, kernels)`, each in a fresh process, the best of REPEAT
    runs taken in turn (issue 21: within 5x of ptxas on a 100k-line module). ptxas
    compiles each kernel, but drops functions nothing calls: that module is read and
    checked by ptxas alone, the hard case."""
    llc, ptxas = shutil.which("llc-14"), shutil.which("ptxas")
    if not llc or not ptxas:
        row("check module", "skipped", "needs llc-14 and ptxas", "")
        return
    with tempfile.TemporaryDirectory() as place:
        ir, ptx = Path(place) / "m.ll", Path(place) / "m.ptx"
        ir.write_text(llc_module_ir(functions, kernels))
        subprocess.run([llc, "-march=nvptx64", "-mcpu=sm_80", str(ir), "-o", str(ptx)],
                       check=True)
        lines = ptx.read_text().count("\n")
        ours, theirs = [], []
        for _ in range(REPEAT):
            ours.append(timed(subprocess.run, [sys.executable, "-m", "ptxsmt", "check",
                                               str(ptx)], capture_output=True, check=False)[0])
            theirs.append(timed(subprocess.run, [ptxas, "-arch", "sm_80", str(ptx), "-o",
                                                 str(Path(place) / "m.cubin")],
                                capture_output=True, check=True)[0])
    what = "kernels" if kernels else "functions"
    row(f"check {lines // 1000}k lines ({what})", f"{min(ours):.2f} s "
        f"({lines / min(ours):,.0f} lines/s)", f"{min(theirs):.2f} s ptxas",
        f"{min(ours) / min(theirs):.1f}x")


# ---- issue 23: whole-function encoding, linear (--only-encode) ----

ENCODE_BASELINE = "437a00a"  # the last commit with the old encoding (a path condition
# simplified whole at every branch, every register merged at every join)
ENCODE_KINDS = ("straight", "diamond", "triangle", "mixed")  # tests/branchy.py
_ENCODE_ONE = """
import sys, time
from branchy import branchy
from ptxsmt.function import read_function
from ptxsmt.function.encode import encode_function
encode_function(read_function(branchy(50, sys.argv[1], 1), "f"))  # tables built, warm
fn = read_function(branchy(int(sys.argv[2]), sys.argv[1], 0), "f")
start = time.perf_counter()
encode_function(fn)
print(time.perf_counter() - start)
"""


def _encode_seconds(package: Path, kind: str, n: int, cap: float) -> float | None:
    """Seconds `encode_function` takes on `branchy(n, kind)`, in a fresh process running
    the ptxsmt at `package` (one core); None past `cap` seconds."""
    env = {**os.environ, "PYTHONPATH": f"{package}{os.pathsep}{ROOT / 'tests'}"}
    try:
        done = subprocess.run([sys.executable, "-c", _ENCODE_ONE, kind, str(n)], env=env,
                              cwd=package, capture_output=True, text=True, timeout=cap,
                              check=True)  # cwd: `-c` imports from it first
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.split()[-1])


def _package_at(rev: str, into: Path) -> Path | None:
    """The ptxsmt package of commit `rev` of this checkout, written under `into`."""
    try:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev, "ptxsmt"],
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        archive.extractall(into, filter="data")
    return into


def bench_encode(sizes: tuple[int, ...], cap: float, baseline: str = ENCODE_BASELINE) -> None:
    """`encode_function` on generated functions of n instructions (tests/branchy.py:
    straight-line; if/else diamonds; llc's guarded selects; a mix with nested arms,
    early returns and stores), this checkout against the old encoding (commit
    `baseline`), each in a fresh process; the baseline stops at `cap` seconds (and is
    not run on larger sizes of a kind past it). Issue 23: 5,000 instructions < 15 s,
    linear: the per-instruction time stays flat down a kind's rows."""
    with tempfile.TemporaryDirectory() as place:
        old = _package_at(baseline, Path(place))
        for kind in ENCODE_KINDS:
            over = False
            for n in sizes:
                ours = _encode_seconds(ROOT, kind, n, 600)
                theirs = None if over or old is None else _encode_seconds(old, kind, n, cap)
                mine = f"{ours:,.2f} s ({1e6 * ours / n:,.0f} us/ins)" if ours else "> 600 s"
                if old is None:
                    base, ratio = f"no commit {baseline}", ""
                elif theirs is None:
                    base = f"> {cap:,.0f} s ({'not run' if over else baseline})"
                    ratio = f"> {cap / ours:,.0f}x" if ours else ""
                    over = True
                else:
                    base = f"{theirs:,.2f} s ({baseline})"
                    ratio = f"{theirs / ours:,.1f}x" if ours else ""
                row(f"encode {kind} {n:,}", mine, base, ratio)


# ---- issue 23: function equivalence at compiler scale (--only-fequiv) ----

FEQUIV_KINDS = ("int", "intnomul", "float")  # scripts/scale_functions.py
FEQUIV_LIMITS = {100: 30, 300: 60, 1000: 120}  # the issue's seconds for n operations


def _equiv_seconds(a: Path, b: Path, *flags: str, cap: float) -> tuple[str, float]:
    """(verdict, seconds) of `ptxsmt equiv A B --function f` in a fresh process; the
    verdict "> cap" when it runs past `cap` seconds."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "ptxsmt", "equiv", str(a), str(b),
                               "--function", "f", "--json", "--timeout", str(cap), *flags],
                              capture_output=True, text=True, timeout=2 * cap + 30,
                              check=False)
    except subprocess.TimeoutExpired:
        return f"> {2 * cap + 30:.0f} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    try:
        return json.loads(done.stdout)["verdict"], seconds
    except (ValueError, KeyError):
        return f"error {done.returncode}", seconds


def bench_function_equivalence(sizes: tuple[int, ...], kinds: tuple[str, ...] = FEQUIV_KINDS,
                               seed: int = 0) -> None:
    """`ptxsmt equiv O0.ptx O2.ptx --function f` on generated IR functions of n
    operations compiled by llc-14 -O0 and by opt-14 -O2 | llc-14 -O2
    (scripts/scale_functions.py), with equivalence sweeping (the default) against the
    monolithic query (`--no-sweep`), in the same run, each with --timeout the issue's
    limit for n operations (100: 30 s, 300: 60 s, 1,000: 120 s)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import scale_functions

    if not scale_functions.available():
        row("function equivalence", "skipped", "needs llc-14 and opt-14", "")
        return
    with tempfile.TemporaryDirectory() as place:
        for kind in kinds:
            for n in sizes:
                a, b = scale_functions.compile_pair(scale_functions.generate(n, kind, seed),
                                                    Path(place) / f"{kind}-{n}")
                cap = FEQUIV_LIMITS.get(n, 120)
                ours, t_ours = _equiv_seconds(a, b, cap=cap)
                theirs, t_theirs = _equiv_seconds(a, b, "--no-sweep", cap=cap)
                row(f"fequiv {kind} {n:,}", f"{ours} {t_ours:,.1f} s",
                    f"{theirs} {t_theirs:,.1f} s (monolithic)",
                    f"{t_theirs / t_ours:,.1f}x" if ours == "equivalent" else "")


# ---- issue 40: one function out of a big module, linear (--only-big) ----

BIG_BASELINE = "9276d6c"  # the last commit that read every body of the module
BIG_SIZES = (1, 2.5, 5, 10)  # MB
BIG_GOAL = (5.0, 500)  # seconds and MiB for one function out of 10 MB
_MEASURED = """
import resource, subprocess, sys, time
start = time.perf_counter()
try:
    done = subprocess.run(sys.argv[2:], capture_output=True, timeout=float(sys.argv[1]))
except subprocess.TimeoutExpired:
    sys.exit(print("timeout"))
seconds = time.perf_counter() - start
print(done.returncode, seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _read_one(package: Path, files: tuple[Path, Path], cap: float) -> tuple[float, float] | None:
    """(seconds, peak MiB) of `ptxsmt equiv A B --function f1` (reading f1 of each and
    deciding it, under a second) in a fresh process running the ptxsmt at
    `package`; None past `cap` seconds or on a verdict other than equivalent/refines."""
    env = {**os.environ, "PYTHONPATH": str(package)}
    cmd = [sys.executable, "-c", _MEASURED, str(cap), sys.executable, "-m", "ptxsmt",
           "equiv", *(str(f.resolve()) for f in files), "--function", "f1"]
    out = subprocess.run(cmd, env=env, cwd=package, capture_output=True, text=True,
                         check=True).stdout.split()  # cwd: `-m` imports from it first
    if out[0] == "timeout":
        return None
    if out[0] != "0":
        raise SystemExit(f"big module: {' '.join(cmd[4:])} exited {out[0]}")
    return float(out[1]), int(out[2]) / 1024  # ru_maxrss: KiB on Linux


def bench_big(sizes: tuple[float, ...], cap: float, baseline: str = BIG_BASELINE) -> None:
    """`ptxsmt equiv big.ptx big.ptx --function f1` and `equiv big.ll big.ptx --function
    f1` on scripts/big_modules.py's modules of `sizes` MB (PTX: ~1,280 functions a MB),
    wall time and peak memory of a fresh process, against the reader of commit
    `baseline` (every body read; a dict of every function built per function) in the
    same run, stopped at `cap` seconds (and not run on larger sizes past it). Issue 40:
    10 MB in < 5 s and < 500 MB, reading linear: the last row's time over the first's
    stays within their sizes' ratio."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import big_modules

    with tempfile.TemporaryDirectory() as place:
        old = _package_at(baseline, Path(place) / "old")
        for kind in ("ptx", "ll"):
            over, times = False, {}
            for mb in sizes:
                ll, ptx = Path(place) / f"{mb}.ll", Path(place) / f"{mb}.ptx"
                if not ptx.exists():
                    ll.write_text(big_modules.ir_of_size(mb))
                    ptx.write_text(big_modules.ptx_of_size(mb))
                files = (ptx, ptx) if kind == "ptx" else (ll, ptx)
                ours = _read_one(ROOT, files, 600)
                theirs = None if over or old is None else _read_one(old, files, cap)
                over = theirs is None
                base = (f"{theirs[0]:,.1f} s {theirs[1]:,.0f} MiB" if theirs else
                        f"> {cap:,.0f} s" if old else f"no commit {baseline}")
                ratio = f"{theirs[0] / ours[0]:,.1f}x" if theirs and ours else \
                    f"> {cap / ours[0]:,.0f}x" if old and ours else ""
                mine = f"{ours[0]:,.2f} s {ours[1]:,.0f} MiB" if ours else "> 600 s"
                row(f"big {kind} {files[0].stat().st_size / 1e6:.1f} MB, f1", mine, base, ratio)
                times[mb] = ours
            _big_verdict(kind, times)


def _big_verdict(kind: str, times: dict[float, tuple[float, float] | None]) -> None:
    """The growth of the time from the first size to the last against their sizes'
    (linear: no more), and issue 40's goal at 10 MB."""
    (small, first), (large, last) = list(times.items())[0], list(times.items())[-1]
    if not first or not last or large == small:
        return
    growth = last[0] / first[0]
    linear = "linear" if growth <= large / small else "SUPERLINEAR"
    goal = "" if large < 10 else \
        "goal pass" if last[0] < BIG_GOAL[0] and last[1] < BIG_GOAL[1] else "goal FAIL"
    row(f"big {kind} {large:g} MB / {small:g} MB", f"{growth:,.2f}x time",
        f"{large / small:g}x size", f"{linear} {goal}".strip())

BF16_CASES = (("sm_90", "fdiv"), ("sm_80", "fdiv"), ("sm_80", "fsub"))  # issue 40 item 8


_NORMAL_ONE = """
import sys, time
import z3
from ptxsmt.cli.common import read_function_file
from ptxsmt.smt.queries import functions
from ptxsmt.smt.sweeping import float_facts, rewrite
float_facts.REBUILT = float(sys.argv[3])
got = []
def grab(query, *args, **kwargs):
    got.append(query)
    raise KeyboardInterrupt
functions.sweep_if_large = grab
try:
    functions.check_function_equivalence(*(read_function_file(f, "f") for f in sys.argv[1:3]),
                                         timeout=600)
except KeyboardInterrupt:
    pass
start, out, stack = time.process_time(), {}, list(reversed(got[0]))
while stack:
    t = stack[-1]
    kids = t.children() if z3.is_app(t) else []
    if todo := [c for c in kids if c.get_id() not in out]:
        stack.extend(reversed(todo))
        continue
    stack.pop()
    out[t.get_id()] = rewrite.normal(t.decl()(*[out[c.get_id()] for c in kids]) if kids else t)
print(time.process_time() - start, len(out))
"""


def _normal_seconds(a: Path, b: Path, rebuilt: float, cap: float) -> float | None:
    """CPU seconds of `rewrite.normal` over the query DAG of a against b (None: past
    `cap` CPU seconds, the process's own limit, or it failed)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cap), int(cap)))

    done = subprocess.run([sys.executable, "-c", _NORMAL_ONE, str(a), str(b), str(rebuilt)],
                          capture_output=True, text=True, preexec_fn=limit, check=False)
    return float(done.stdout.split()[0]) if done.returncode == 0 else None


def bench_normal(sizes: tuple[int, ...], cap: float) -> None:
    """`rewrite.normal` over a float pair's query DAG (`_NORMAL_ONE`), the NaN-test
    rewrite limited to REBUILT terms rebuilt against unlimited, each a fresh process,
    both capped at `cap` CPU seconds ("+": the baseline did not finish)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import scale_functions

    from ptxsmt.smt.sweeping.float_facts import REBUILT

    if not scale_functions.available():
        row("normal float", "skipped", "needs llc-14 and opt-14", "")
        return
    with tempfile.TemporaryDirectory() as place:
        for n in sizes:
            a, b = scale_functions.compile_pair(scale_functions.generate(n, "float", 0),
                                                Path(place) / f"float-{n}")
            ours = _normal_seconds(a, b, REBUILT, cap)
            theirs = _normal_seconds(a, b, float("inf"), cap)
            shown = f"{theirs:,.1f} CPU s" if theirs is not None else f"> {cap:.0f} CPU s"
            ratio = "" if ours is None else f"{(theirs or cap) / ours:,.1f}x" + \
                ("+" if theirs is None else "")
            row(f"normal float {n:,}", "> cap" if ours is None else f"{ours:,.1f} CPU s",
                f"{shown} (no limit)", ratio)


def bench_bf16(cap: float) -> None:
    """`ir_refines` of `OP bfloat %a, %b` against llvmlite's PTX for CPU, with bf16 read
    through f32 and fma with constants as add/sub/mul (`sem.sorts.narrowed`, `fused`) vs
    without them (the f32 circuit against the bf16 one, z3 alone), in-process, the
    baseline capped at `cap` seconds."""
    import z3

    from ptxsmt.function import read_function
    from ptxsmt.llvm.module import compile_to_ptx, read_ir
    from ptxsmt.sem import floatarith, sorts
    from ptxsmt.smt.queries.refinement import ir_refines

    for cpu, op in BF16_CASES:
        ir = (f"define bfloat @f(bfloat %a, bfloat %b) {{\n  %r = {op} bfloat %a, %b\n"
              "  ret bfloat %r\n}\n")
        fn, ptx = read_ir(ir)["f"], compile_to_ptx(ir, cpu)
        t_ours, ours = timed(ir_refines, fn, read_function(ptx, "f"), int(cap * 1000))
        through, fused = sorts.THROUGH, floatarith.fused
        sorts.THROUGH, floatarith.fused = {}, lambda rm, x, y, z: z3.fpFMA(rm, x, y, z)
        try:
            t_theirs, theirs = timed(ir_refines, fn, read_function(ptx, "f"), int(cap * 1000))
        finally:
            sorts.THROUGH, floatarith.fused = through, fused
        row(f"bf16 {op} {cpu}", f"{ours.verdict} {t_ours:,.1f} s",
            f"{theirs.verdict} {t_theirs:,.1f} s (f32 vs bf16)",
            f"{t_theirs / t_ours:,.0f}x" + ("" if theirs.verdict == "refines" else "+"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Smaller sizes, no sweep.")
    ap.add_argument("--only-check", action="store_true", help="Only the `check` row.")
    ap.add_argument("--only-encode", action="store_true",
                    help="Only the issue-23 function-encoding rows.")
    ap.add_argument("--only-fequiv", action="store_true",
                    help="Only the issue-23 function-equivalence rows.")
    ap.add_argument("--only-big", action="store_true",
                    help="Only the issue-40 rows: one function out of a big module.")
    ap.add_argument("--only-bf16", action="store_true",
                    help="Only the issue-40 bf16 refinement rows.")
    ap.add_argument("--only-normal", action="store_true",
                    help="Only the issue-44 rows: rewrite.normal over a float pair's DAG.")
    ap.add_argument("--sweep", action="store_true",
                    help="Only the issue-44 sweep benchmark (scripts/sweep_corpus.py).")
    ap.add_argument("--corpus", type=Path, metavar="DIR",
                    help="With --sweep: a corpus sweep_corpus.py wrote (default: generate it).")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="With --sweep: N pairs of it, spread over kind, equal and planted, "
                         "size and compiler (a fixed seed).")
    ap.add_argument("--limit", type=float, default=60.0,
                    help="With --sweep: CPU seconds a pair and configuration.")
    ap.add_argument("--jobs", type=int, default=1,
                    help="With --sweep: runs measured at once (counted in CPU seconds).")
    ap.add_argument("--records", type=Path, metavar="FILE",
                    help="With --sweep: each measurement appended as a JSON line; those "
                         "already in FILE are not measured again.")
    ap.add_argument("--batch-before", type=Path, metavar="CHECKOUT",
                    help="Only the issue-25 batch rows: this checkout against CHECKOUT's.")
    args = ap.parse_args()
    if args.sweep:
        import sweep_bench

        sweep_bench.bench(args.corpus, args.sample, args.limit, args.jobs, args.records)
        return
    if args.only_check:
        print(f"{'row':<30} {'ptxsmt':>20} {'baseline (same run)':>26} {'ratio':>10}")
        for kernels in (False, True):
            bench_check(300 if args.quick else 3000, kernels)
        return
    print(f"{'row':<30} {'ptxsmt':>20} {'baseline (same run)':>26} {'ratio':>10}")
    if args.only_encode:
        bench_encode((100, 1000, 5000) if args.quick else (100, 1000, 5000, 20_000),
                     20.0 if args.quick else 60.0)
        return
    if args.only_fequiv:
        bench_function_equivalence((100, 300) if args.quick else (100, 300, 1000))
        return
    if args.only_big:
        bench_big(BIG_SIZES[:2] if args.quick else BIG_SIZES, 20.0 if args.quick else 120.0)
        return
    if args.only_bf16:
        bench_bf16(20.0 if args.quick else 60.0)
        return
    if args.only_normal:
        bench_normal((100,) if args.quick else (100, 300), 60.0 if args.quick else 300.0)
        return
    if args.batch_before:
        bench_batch_before_after(args.batch_before, 20_000 if args.quick else 150_000)
        return
    n = 20_000 if args.quick else 150_000
    bench_batch(n, None)  # every variant of the corpus: compile cost per text dominates
    bench_batch(n, 4900)  # the issue's mixed workload: ~30 lines a text, ~4,900 shapes
    bench_batch(n, 100)  # a CI replay of one compiler's instructions
    bench_batch(n, 160, 32)  # what compilers emit: registers numbered, ~30 lines a text
    bench_startup()
    bench_f32(1 << 22 if args.quick else 1 << 25)
    bench_vset4(1 << 20 if args.quick else 1 << 22)
    if not args.quick:
        bench_sweep()
    bench_prove()
    bench_chains((10, 100) if args.quick else (10, 100, 1000, 10_000))
    bench_encode((100, 1000, 5000) if args.quick else (100, 1000, 5000, 20_000),
                 20.0 if args.quick else 60.0)
    bench_function_equivalence((100, 300) if args.quick else (100, 300, 1000))
    bench_synth()
    bench_bf16(20.0 if args.quick else 60.0)
    for kernels in (False, True):
        bench_check(300 if args.quick else 3000, kernels)
    bench_big(BIG_SIZES[:2] if args.quick else BIG_SIZES, 20.0 if args.quick else 120.0)


if __name__ == "__main__":
    main()
