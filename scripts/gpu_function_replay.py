"""Replay whole PTX functions on a GPU and compare silicon with ptxsmt (issue 41, item 5).

Every `.func` whose parameters and single return value are scalars is wrapped in a kernel
that loads each thread's arguments from memory (so ptxas cannot fold them), calls the
function, and stores what it returned. Both sides of each pair run on the same inputs:
special values of each parameter's width, seeded random ones, and every counterexample
ptxsmt printed for the pair (`--results`: `equiv --json` lines with the pair's `id` added,
or the function corpus's results file, whose verdicts are then the ones checked).

Three steps; only the second needs a GPU::

    python scripts/gpu_function_replay.py generate build/fr \
        --manifest tests/corpus/functions/manifest.jsonl
    nvcc -O2 -o build/fr/replay scripts/templates/function_replay.cu
    build/fr/replay build/fr
    python scripts/gpu_function_replay.py check build/fr --out models/hw/functions.jsonl

`generate` writes DIR/NNN.ptx (each source module with the wrapper kernels appended; ptxas
checks each one where it is on PATH), DIR/NNN.in (the arguments, 8 bytes a parameter, little
endian), DIR/jobs.tsv (module, kernel, count, argument and result sizes, files) and
DIR/expected.jsonl (ptxsmt's value of every call; an open value is "unspecified"). The
program writes DIR/NNN.out and DIR/gpu.txt. `check` reports:

  silicon vs ptxsmt   a call whose result silicon and ptxsmt disagree on (an open value allows
                      any bits);
  pair contradicted   a pair ptxsmt (`--results`; else the manifest) calls
                      equivalent on which the two sides' silicon results differ where neither
                      is open, other than as two NaNs (equivalence is up to NaN payloads);

and exits 1 if there is any. Without a GPU, `fake DIR` writes the .out files from
expected.jsonl (`--flip` changes bit 0 of the first call's result, to exercise the report):
the tests run the whole pipeline that way; it says nothing about silicon.

Left out, with the reason on stderr: functions with an aggregate or array parameter or
return, with no or several return values, that read memory or special registers (their
results depend on more than the arguments), modules ptxas rejects, and pairs whose two sides
do not take the same parameter widths.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ptxsmt.function.evaluate import evaluate_function, read_function_file
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.module import Function
from ptxsmt.sem.unspecified import UNSPECIFIED

SLOT = 8  # bytes of argument memory per parameter, whatever its width
WIDTHS = (8, 16, 32, 64)
BLOCK = 128


def specials(width: int) -> list[int]:
    """Bit patterns that break functions: the integer edges and, for the float formats of
    that width, ±0, ±1, ±inf, quiet, negative and signalling NaNs and subnormals."""
    top, full = 1 << (width - 1), (1 << width) - 1
    ints = [0, 1, 2, full, top, top - 1, top + 1]
    floats = {
        16: [0x8000, 0x3C00, 0xBC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D00, 0x0001, 0x8001,
             0x3F80, 0x7F80, 0x7FC0, 0x0040],  # f16, then bf16's 1.0, inf, NaN, subnormal
        32: [0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
             0xFFC00000, 0x7FA00000, 0x00000001, 0x807FFFFF, 0x4F000000],
        64: [1 << 63, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
             0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
             0x7FF4000000000000, 1, 0x800FFFFFFFFFFFFF],
    }.get(width, [])
    return list(dict.fromkeys(ints + floats))


def vectors(widths: list[int], count: int, seed: str) -> list[list[int]]:
    """`count` argument tuples: each special of one parameter with the others cycling
    through theirs, then seeded random bits (half of them specials mixed in)."""
    rng = random.Random(seed)
    pools = [specials(w) for w in widths]
    out: list[list[int]] = []
    for i, pool in enumerate(pools):
        for k, v in enumerate(pool):
            out.append([v if j == i else p[(k * 7 + j) % len(p)] for j, p in enumerate(pools)])
    out = out[: count // 2]
    while len(out) < count:
        out.append([rng.choice(p) if rng.random() < 0.3 else rng.getrandbits(w)
                    for p, w in zip(pools, widths)])
    return out


@dataclass
class Side:
    path: str
    fn: Function

    @property
    def widths(self) -> list[int]:
        return [p.type.width for p in self.fn.params]


def replayable(path: str, name: str) -> Side | str:
    """The function, or why it cannot be replayed as a call with scalar arguments."""
    try:
        fn = read_function_file(path, name)
    except PtxError as e:
        return f"unreadable: {e}"
    if fn.kind != "func":
        return "a kernel (.entry): its results are in memory"
    if len(fn.returns) != 1:
        return f"{len(fn.returns)} return values"
    for p in (*fn.params, *fn.returns):
        if p.array is not None or p.type.width not in WIDTHS:
            return f"{p.name} is not a scalar"
    side = Side(path, fn)
    try:
        ev = evaluate_function(fn, dict(zip(_names(fn), [0] * len(fn.params))))
    except PtxError as e:
        return f"needs more than its arguments: {e}"
    if ev.memory or ev.stores:
        return "reads or writes memory"
    return side


def _names(fn: Function) -> list[str]:
    return [p.name for p in fn.params]


def expected(side: Side, args: list[int]) -> str | None:
    """ptxsmt's result as hex of the return's width; None where the ISA leaves it open."""
    ev = evaluate_function(side.fn, dict(zip(_names(side.fn), args)))
    (value,) = ev.returns.values()
    if value is UNSPECIFIED:
        return None
    return f"{int(value):#0{side.fn.returns[0].type.width // 4 + 2}x}"


def wrapper(fn: Function, kernel: str) -> str:
    """A kernel: thread i loads its arguments from `args + i*8*n`, calls `fn` and stores
    the return at `results + i*8`."""
    n = len(fn.params)
    ret = fn.returns[0]
    lines = [f".visible .entry {kernel}(.param .u64 args, .param .u64 results, .param .u32 count)",
             "{", "\t.reg .pred %p<2>;", "\t.reg .b32 %r<4>;", "\t.reg .b64 %rd<8>;",
             *[f"\t.reg .b{max(w, 16)} %a{w}_<{n + 2}>;" for w in WIDTHS],
             "\tmov.u32 %r0, %ctaid.x;", "\tmov.u32 %r1, %ntid.x;", "\tmov.u32 %r2, %tid.x;",
             "\tmad.lo.u32 %r0, %r0, %r1, %r2;", "\tld.param.u32 %r3, [count];",
             "\tsetp.ge.u32 %p0, %r0, %r3;", "\t@%p0 bra DONE;",
             "\tld.param.u64 %rd0, [args];", "\tcvta.to.global.u64 %rd0, %rd0;",
             f"\tmul.wide.u32 %rd1, %r0, {SLOT * n};", "\tadd.s64 %rd0, %rd0, %rd1;",
             "\tld.param.u64 %rd2, [results];", "\tcvta.to.global.u64 %rd2, %rd2;",
             f"\tmul.wide.u32 %rd3, %r0, {SLOT};", "\tadd.s64 %rd2, %rd2, %rd3;", "\t{"]
    for i, p in enumerate(fn.params):
        w = p.type.width
        align = f" .align {p.align}" if p.align else ""
        lines += [f"\t.param{align} .b{w} arg{i};",
                  f"\tld.global.{'u8' if w == 8 else f'b{w}'} %a{w}_{i}, [%rd0+{SLOT * i}];",
                  f"\tst.param.b{w} [arg{i}], %a{w}_{i};"]
    w = ret.type.width
    align = f" .align {ret.align}" if ret.align else ""
    args = ", ".join(f"arg{i}" for i in range(n))
    lines += [f"\t.param{align} .b{w} ret;", f"\tcall.uni (ret), {fn.name}, ({args});",
              f"\tld.param.b{w} %a{w}_{n}, [ret];",
              f"\tst.global.{'u8' if w == 8 else f'b{w}'} [%rd2], %a{w}_{n};", "\t}",
              "DONE:", "\tret;", "}", ""]
    return "\n".join(lines)


def read_jsonl(path: str) -> Iterable[dict]:
    for k, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{k}: not JSON ({e.msg})")


def pairs(args) -> list[dict]:
    found = list(read_jsonl(args.manifest)) if args.manifest else []
    if args.pair:
        a, b, fn = args.pair
        found.append({"id": f"{fn}:{a}~{b}", "a": a, "b": b, "function": fn})
    for p in found:
        p.setdefault("id", f"{p['function']}:{p['a']}~{p['b']}")
    return found[: args.limit] if args.limit else found


def answers(paths: list[str]) -> dict[str, list[dict]]:
    """Pair id -> ptxsmt's answers for it (`verdict`, `counterexample`): `equiv --json`
    lines with an `id` added, or the function corpus's results file."""
    found: dict[str, list[dict]] = {}
    for path in paths:
        for r in read_jsonl(path):
            if "id" in r:
                found.setdefault(r["id"], []).append(r)
    return found


def generate(args) -> int:
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    given = answers(args.results)
    sides: dict[tuple[str, str], Side | str] = {}
    calls: dict[tuple[str, str], list[list[int]]] = {}
    kept = []
    for p in pairs(args):
        ends = [sides.setdefault((p[k], p["function"]), replayable(p[k], p["function"]))
                for k in ("a", "b")]
        if why := next((e for e in ends if isinstance(e, str)), None):
            print(f"left out {p['id']}: {why}", file=sys.stderr)
            continue
        a, b = ends
        if a.widths != b.widths:
            print(f"left out {p['id']}: parameter widths {a.widths} and {b.widths}",
                  file=sys.stderr)
            continue
        args_list = vectors(a.widths, args.vectors, p["id"])
        for r in given.get(p["id"], []):
            values = [(r.get("counterexample") or {}).get("inputs", {}).get(n)
                      for n in _names(a.fn)]
            if all(isinstance(v, str) for v in values):
                args_list.append([int(v, 16) for v in values])
        for s in (a, b):
            calls.setdefault((s.path, s.fn.name), [])
            calls[(s.path, s.fn.name)] += [v for v in args_list
                                           if v not in calls[(s.path, s.fn.name)]]
        verdicts = [r["verdict"] for r in given.get(p["id"], []) if "verdict" in r]
        kept.append({**p, "expect": verdicts[-1] if verdicts else p.get("expect")})
    jobs, records, modules = [], [], {}
    for (path, name), arglist in calls.items():
        side = sides[(path, name)]
        m = modules.setdefault(path, {"file": f"{len(modules):03d}", "kernels": []})
        kernel = f"__ptxsmt_replay_{len(m['kernels'])}"
        m["kernels"].append(wrapper(side.fn, kernel))
        stem = f"{m['file']}_{len(m['kernels']) - 1}"
        blob = b"".join(v.to_bytes(SLOT, "little") for args_ in arglist for v in args_)
        (out / f"{stem}.in").write_bytes(blob)
        jobs.append(f"{m['file']}.ptx\t{kernel}\t{len(arglist)}\t{SLOT * len(side.fn.params)}"
                    f"\t{SLOT}\t{stem}.in\t{stem}.out")
        for args_ in arglist:
            records.append({"file": path, "function": name, "job": stem,
                            "inputs": dict(zip(_names(side.fn),
                                               [f"{v:#x}" for v in args_])),
                            "width": side.fn.returns[0].type.width,
                            "ptxsmt": expected(side, args_)})
    for path, m in modules.items():
        text = Path(path).read_text() + "\n" + "\n".join(m["kernels"])
        (out / f"{m['file']}.ptx").write_text(text)
        if args.ptxas and (why := ptxas_rejects(out / f"{m['file']}.ptx")):
            sys.exit(f"{path}: ptxas rejects the module with its wrappers: {why}")
    (out / "jobs.tsv").write_text("".join(j + "\n" for j in jobs))
    (out / "expected.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (out / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in kept))
    print(f"{len(kept)} pairs, {len(calls)} functions, {len(records)} calls in "
          f"{len(modules)} modules -> {out}", file=sys.stderr)
    return 0


def ptxas_rejects(path: Path) -> str | None:
    if not shutil.which("ptxas"):
        return None
    run = subprocess.run(["ptxas", "-arch=sm_90", str(path), "-o", "/dev/null"],
                         capture_output=True, text=True)
    return run.stderr.strip().splitlines()[0] if run.returncode else None


def fake(args) -> int:
    """The .out files as ptxsmt predicts them (open values as 0): the pipeline without a GPU."""
    out = Path(args.dir)
    results: dict[str, bytearray] = {}
    for k, r in enumerate(read_jsonl(str(out / "expected.jsonl"))):
        value = int(r["ptxsmt"] or "0x0", 16) ^ (1 if args.flip and k == 0 else 0)
        results.setdefault(r["job"], bytearray()).extend(value.to_bytes(SLOT, "little"))
    for job, blob in results.items():
        (out / f"{job}.out").write_bytes(bytes(blob))
    (out / "gpu.txt").write_text("fake (ptxsmt's own values)\n")
    return 0


def check(args) -> int:
    out = Path(args.dir)
    gpu = (out / "gpu.txt").read_text().strip() if (out / "gpu.txt").exists() else "?"
    seen: dict[str, int] = {}
    silicon: dict[tuple[str, str], dict[tuple, dict]] = {}  # (file, function) -> inputs -> row
    rows, disagree = [], []
    for r in read_jsonl(str(out / "expected.jsonl")):
        k = seen[r["job"]] = seen.get(r["job"], -1) + 1
        blob = (out / f"{r['job']}.out").read_bytes()[SLOT * k: SLOT * (k + 1)]
        hw = int.from_bytes(blob, "little") & ((1 << r["width"]) - 1)
        row = {**r, "hw": f"{hw:#0{r['width'] // 4 + 2}x}", "gpu": gpu}
        rows.append(row)
        silicon.setdefault((r["file"], r["function"]), {})[tuple(r["inputs"].values())] = row
        if r["ptxsmt"] is not None and int(r["ptxsmt"], 16) != hw:
            disagree.append(f"silicon vs ptxsmt: {r['function']} in {r['file']} "
                            f"{r['inputs']}: ptxsmt {r['ptxsmt']}, silicon {row['hw']}")
    contradicted = 0
    for p in read_jsonl(str(out / "pairs.jsonl")):
        if p.get("expect") != "equivalent":
            continue
        other = silicon.get((p["b"], p["function"]), {})
        for ins, ra in silicon.get((p["a"], p["function"]), {}).items():
            rb = other.get(ins)
            if rb and ra["hw"] != rb["hw"] and None not in (ra["ptxsmt"], rb["ptxsmt"]) \
                    and not both_nan(ra["hw"], rb["hw"], ra["width"]):
                contradicted += 1
                disagree.append(f"pair contradicted: {p['id']} {ra['inputs']}: "
                                f"{ra['hw']} vs {rb['hw']}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text("".join(json.dumps(r) + "\n" for r in rows))
    for line in disagree:
        print(line)
    print(f"{len(rows)} calls on {gpu}: {len(disagree) - contradicted} disagree with ptxsmt, "
          f"{contradicted} contradict an equivalent pair")
    return 1 if disagree else 0


def both_nan(a: str, b: str, width: int) -> bool:
    """Both results are NaNs of one float format of their width: an "equivalent" verdict
    is up to NaN payloads by default (docs/spec-notes.md), so silicon's payloads may differ."""
    formats = {16: [(5, 10), (8, 7)], 32: [(8, 23)], 64: [(11, 52)]}.get(width, [])

    def nan(bits: int, e: int, m: int) -> bool:
        return (bits >> m) & ((1 << e) - 1) == (1 << e) - 1 and bits & ((1 << m) - 1) != 0

    return any(nan(int(a, 16), e, m) and nan(int(b, 16), e, m) for e, m in formats)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    g = sub.add_parser("generate", help="the modules, arguments and ptxsmt's values")
    g.add_argument("dir")
    g.add_argument("--manifest", help="function pairs, one JSON object a line (a, b, function)")
    g.add_argument("--pair", nargs=3, metavar=("A.ptx", "B.ptx", "FUNCTION"))
    g.add_argument("--results", action="append", default=[], metavar="FILE.jsonl",
                   help="ptxsmt's answers by pair id (`id`, `verdict`, `counterexample`): "
                        "their counterexamples are replayed, their verdicts checked")
    g.add_argument("--vectors", type=int, default=48, help="calls per pair (default 48)")
    g.add_argument("--limit", type=int, help="the first N pairs")
    g.add_argument("--no-ptxas", dest="ptxas", action="store_false")
    f = sub.add_parser("fake", help="write the results as ptxsmt predicts them (no GPU)")
    f.add_argument("dir")
    f.add_argument("--flip", action="store_true")
    c = sub.add_parser("check", help="compare silicon with ptxsmt and across each pair")
    c.add_argument("dir")
    c.add_argument("--out", help="every call with both values, JSONL (models/hw/)")
    args = ap.parse_args(argv)
    if args.step == "generate" and not (args.manifest or args.pair):
        ap.error("generate needs --manifest or --pair")
    return {"generate": generate, "fake": fake, "check": check}[args.step](args)


if __name__ == "__main__":
    sys.exit(main())
