"""Build (and measure) a corpus of IR-PTX pairs for translation validation.

Each IR module is compiled for sm_80 by llc-14 and by the LLVM inside llvmlite, at -O0
and -O2; a pair is (IR file, function, PTX file). Sources: the repository's IR fixtures
(tests/ptx/llvm14*.ll, tests/corpus/src/*.ll), the functions of tests/test_llvm_jit.py's
table, hand-written IR for the bug classes of issue 24 (ordered/unordered fcmp, the
min/max family, signed zeros, 64-bit shifts and rotates by large amounts, narrow
parameters and returns with zeroext/signext), and LLVM's NVPTX tests where a directory
of them is given (--llvm-tests).

    python scripts/make_llvm_corpus.py --out /work/llvm-corpus            # write pairs
    python scripts/make_llvm_corpus.py --out /work/llvm-corpus --measure  # and check them

Bulk output stays outside the repository. `--measure` checks every pair in this process
(one at a time, --timeout seconds each), caches verdicts in OUT/verdicts.jsonl (keyed by
the pair's files' hash) and prints refines / different / unknown (by reason) / refused
(by reason) and the proved share of the pairs that are not different.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILERS = ("llc14", "lite")
LEVELS = (0, 2)


# ---- hand-written IR for the bug classes ------------------------------------------------------

def _handwritten() -> dict[str, str]:
    """The bug classes, as modules: minimumnum/maximumnum apart (llc-14 does not know
    them and calls them by a name PTX cannot spell, which spoils its whole file)."""
    out, late = [], []
    fcmp = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
            "ule", "une", "uno")
    for t in ("float", "double", "half"):
        for p in fcmp:
            out.append(f"define i1 @fcmp_{p}_{t}({t} %a, {t} %b) {{\n  %c = fcmp {p} {t} %a, %b\n"
                       f"  ret i1 %c\n}}")
            out.append(f"define {t} @sel_{p}_{t}({t} %a, {t} %b) {{\n  %c = fcmp {p} {t} %a, %b\n"
                       f"  %r = select i1 %c, {t} %a, {t} %b\n  ret {t} %r\n}}")
    suffix = {"float": "f32", "double": "f64", "half": "f16"}
    for name in ("minnum", "maxnum", "minimum", "maximum", "minimumnum", "maximumnum"):
        into = late if name.endswith("num") and len(name) > 6 else out
        for t in ("float", "double", "half"):
            s = suffix[t]
            into.append(f"declare {t} @llvm.{name}.{s}({t}, {t})")
            into.append(f"define {t} @{name}_{s}({t} %a, {t} %b) {{\n"
                       f"  %r = call {t} @llvm.{name}.{s}({t} %a, {t} %b)\n  ret {t} %r\n}}")
            into.append(f"define {t} @{name}_zero_{s}({t} %a) {{\n"
                       f"  %r = call {t} @llvm.{name}.{s}({t} %a, {t} -0.0)\n  ret {t} %r\n}}")
    for name in ("fadd", "fsub", "fmul"):
        out.append(f"define float @{name}_nsz(float %a, float %b) {{\n"
                   f"  %r = {name} nsz float %a, %b\n  ret float %r\n}}")
        out.append(f"define float @{name}_negzero(float %a) {{\n"
                   f"  %r = {name} float %a, -0.0\n  ret float %r\n}}")
    out.append("define float @fneg_f32(float %a) {\n  %r = fneg float %a\n  ret float %r\n}")
    out.append("define float @fsub_zero(float %a) {\n  %r = fsub float 0.0, %a\n  ret float %r\n}")
    for op in ("shl", "lshr", "ashr"):
        for amount in ("%n", "32", "63", "33"):
            tag = "var" if amount == "%n" else amount
            out.append(f"define i64 @{op}_{tag}_i64(i64 %a, i64 %n) {{\n"
                       f"  %r = {op} i64 %a, {amount}\n  ret i64 %r\n}}")
        out.append(f"define i64 @{op}_masked_i64(i64 %a, i64 %n) {{\n  %m = and i64 %n, 63\n"
                   f"  %r = {op} i64 %a, %m\n  ret i64 %r\n}}")
    for name in ("fshl", "fshr"):
        for t in ("i64", "i32"):
            out.append(f"declare {t} @llvm.{name}.{t}({t}, {t}, {t})")
            out.append(f"define {t} @rot_{name}_{t}({t} %a, {t} %n) {{\n"
                       f"  %r = call {t} @llvm.{name}.{t}({t} %a, {t} %a, {t} %n)\n"
                       f"  ret {t} %r\n}}")
            out.append(f"define {t} @{name}_{t}({t} %a, {t} %b, {t} %n) {{\n"
                       f"  %r = call {t} @llvm.{name}.{t}({t} %a, {t} %b, {t} %n)\n"
                       f"  ret {t} %r\n}}")
            for k in (1, 31, 33, 63, 64, 65):
                out.append(f"define {t} @rot_{name}_{k}_{t}({t} %a) {{\n"
                           f"  %r = call {t} @llvm.{name}.{t}({t} %a, {t} %a, {t} {k})\n"
                           f"  ret {t} %r\n}}")
    for t in ("i1", "i8", "i16"):
        for attr in ("", "zeroext ", "signext "):
            tag = attr.strip() or "plain"
            out.append(f"define {attr}{t} @ret_{tag}_{t}({t} {attr}%a, {t} {attr}%b) {{\n"
                       f"  %r = add {t} %a, %b\n  ret {t} %r\n}}")
            widen = f"zext i1 %c to {t}" if t != "i1" else "and i1 %c, true"
            out.append(f"define {attr}{t} @cmp_{tag}_{t}(i32 %a, i32 %b) {{\n"
                       f"  %c = icmp slt i32 %a, %b\n  %r = {widen}\n"
                       f"  ret {t} %r\n}}")
            out.append(f"define i32 @arg_{tag}_{t}({t} {attr}%a) {{\n"
                       f"  %r = sext {t} %a to i32\n  ret i32 %r\n}}")
    return {"bugclasses": "\n\n".join(out) + "\n", "minmaxnum": "\n\n".join(late) + "\n"}


def _jit_table() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_llvm_jit as jit  # the table of every modelled instruction
    return "\n".join(jit._function(*c) for c in jit.CASES)


# ---- compiling --------------------------------------------------------------------------------

def _llc14(text: str, opt: int) -> str | None:
    for extra in ([], ["-opaque-pointers"]):
        cmd = ["llc-14", "-march=nvptx64", "-mcpu=sm_80", f"-O{opt}", *extra, "-o", "-"]
        r = subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            return r.stdout
    return None


DEFINE = re.compile(r"^define [^\n]*?@([\w.$]+)\(.*?^}$", re.M | re.S)


def split_functions(text: str) -> dict[str, str]:
    """Each function alone with everything that is not a definition (declarations,
    globals, attributes): for a compiler that cannot read some functions of a module."""
    preamble = DEFINE.sub("", text)
    return {m.group(1): preamble + "\n" + m.group(0) + "\n" for m in DEFINE.finditer(text)}


def _lite(text: str, opt: int) -> str | None:
    """llvmlite's NVPTX backend, in a child process: an LLVM fatal error ("Cannot
    select") ends the process that meets it."""
    code = ("import sys; from ptxsmt.llvm.module import compile_to_ptx; "
            f"sys.stdout.write(compile_to_ptx(sys.stdin.read(), cpu='sm_80', opt={opt}))")
    r = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                       text=True, timeout=300)
    return r.stdout if r.returncode == 0 else None


def _functions(text: str) -> list[str]:
    from ptxsmt.llvm import read_ir
    from ptxsmt.llvm.errors import LlvmError
    try:
        return list(read_ir(text))
    except LlvmError:
        return []


def sources(llvm_tests: Path | None) -> dict[str, str]:
    out = {}
    fixtures = [*(ROOT / "tests/ptx").glob("llvm14*.ll"), *(ROOT / "tests/corpus/src").glob("*.ll"),
                *(ROOT / "tests/ptx/llvm").glob("*.ll")]
    for p in sorted(fixtures):
        out[f"repo/{p.stem}"] = p.read_text()
    out["jit/table"] = _jit_table()
    for name, text in _handwritten().items():
        out[f"hand/{name}"] = text
    if llvm_tests is not None:
        for p in sorted(llvm_tests.glob("*.ll")):
            out[f"nvptx/{p.stem}"] = re.sub(r"^\s*;.*$", "", p.read_text(), flags=re.M)
    return out


def build(out_dir: Path, llvm_tests: Path | None) -> list[dict]:
    pairs = []
    for key, text in sources(llvm_tests).items():
        names = _functions(text)
        if not names:
            print(f"{key}: not read by llvmlite, skipped", file=sys.stderr)
            continue
        d = out_dir / key
        d.mkdir(parents=True, exist_ok=True)
        (d / "source.ll").write_text(text)
        for compiler in COMPILERS:
            for opt in LEVELS:
                compile_ = _llc14 if compiler == "llc14" else _lite
                ptx = compile_(text, opt)
                outputs = {f"{compiler}-O{opt}.ptx": ptx} if ptx is not None else {
                    f"{compiler}-O{opt}.{name}.ptx": compile_(alone, opt)
                    for name, alone in split_functions(text).items()}
                for file, ptx in outputs.items():
                    if ptx is None:
                        print(f"{key}: {compiler} -O{opt} failed ({file})", file=sys.stderr)
                        continue
                    path = d / file
                    path.write_text(ptx)
                    defined = {m.group(1) for m in re.finditer(
                        r"\.(?:visible|weak)?\s*\.(?:entry|func)\s*(?:\([^)]*\)\s*)?(\w+)", ptx)}
                    for name in names:
                        if name in defined:
                            pairs.append({"ir": str(d / "source.ll"), "function": name,
                                          "ptx": str(path), "compiler": compiler, "opt": opt,
                                          "source": key})
    with open(out_dir / "pairs.jsonl", "w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    return pairs


# ---- measuring --------------------------------------------------------------------------------

def _check(pair: dict, timeout_ms: int, texts: dict) -> dict:
    from ptxsmt.function import read_function
    from ptxsmt.llvm import read_ir
    from ptxsmt.llvm.errors import LlvmError, Unsupported
    from ptxsmt.smt.queries.refinement import ir_refines
    try:
        if pair["ir"] not in texts:
            texts.clear()
            texts[pair["ir"]] = read_ir(Path(pair["ir"]).read_text())
        fn = texts[pair["ir"]][pair["function"]]
        r = ir_refines(fn, read_function(Path(pair["ptx"]).read_text(), pair["function"]),
                       timeout_ms, "auto")
        return {"verdict": r.verdict, "reason": r.reason}
    except Unsupported as e:
        return {"verdict": "refused", "reason": e.reason, "detail": str(e)}
    except (LlvmError, Exception) as e:  # noqa: BLE001 - a crash is a finding, keep going
        return {"verdict": "error", "reason": type(e).__name__, "detail": str(e)[:200]}


def _key(pair: dict) -> str:
    h = hashlib.sha256()
    for k in ("ir", "ptx"):
        h.update(Path(pair[k]).read_bytes())
    h.update(pair["function"].encode())
    return h.hexdigest()[:24]


def _reason_class(v: dict) -> str:
    r = v.get("reason", "")
    if v["verdict"] == "unknown":
        if r.startswith("the PTX uses"):
            return "unmodelled PTX"
        if r.startswith("PTX:"):
            return "PTX not followed: " + r[4:60].strip()
        return r[:60]
    return r


def measure(out_dir: Path, pairs: list[dict], timeout_s: float, ptx_filter: str | None,
            semantic_version: str) -> None:
    cache_path = out_dir / "verdicts.jsonl"
    cache = {}
    if cache_path.exists():
        for line in cache_path.read_text().splitlines():
            row = json.loads(line)
            if row.get("version") == semantic_version:
                cache[row["key"]] = row
    texts: dict = {}
    results = []
    with open(cache_path, "a") as f:
        for n, pair in enumerate(pairs):
            if ptx_filter and ptx_filter not in pair["ptx"] + pair["function"]:
                continue
            key = _key(pair)
            if key not in cache:
                v = _check(pair, int(timeout_s * 1000), texts)
                cache[key] = {"key": key, "version": semantic_version, **pair, **v}
                f.write(json.dumps(cache[key]) + "\n")
                f.flush()
            results.append(cache[key])
            if n % 50 == 0:
                print(f"... {n}/{len(pairs)}", file=sys.stderr)
    counts = Counter(r["verdict"] for r in results)
    print(f"{len(results)} pairs: " + ", ".join(f"{v} {c}" for v, c in counts.most_common()))
    for verdict in ("unknown", "refused", "error"):
        by = Counter(_reason_class(r) for r in results if r["verdict"] == verdict)
        for reason, c in by.most_common(12):
            print(f"  {verdict:8} {c:4}  {reason}")
    for r in results:
        if r["verdict"] == "different":
            print(f"  different: {r['source']} @{r['function']} {r['compiler']} -O{r['opt']}")
    correct = len(results) - counts["different"]
    if correct:
        print(f"proved {counts['refines']}/{correct} = {100 * counts['refines'] / correct:.1f}% "
              "of the pairs not found different")
    by_source = Counter()
    for r in results:
        by_source[r["source"].split("/")[0], r["verdict"] == "refines"] += 1
    for s in sorted({k[0] for k in by_source}):
        total = by_source[s, True] + by_source[s, False]
        print(f"  {s:6} {by_source[s, True]}/{total} refine")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("/work/llvm-corpus"))
    ap.add_argument("--llvm-tests", type=Path, default=None,
                    help="a directory of LLVM's llvm/test/CodeGen/NVPTX/*.ll")
    ap.add_argument("--measure", action="store_true", help="check every pair and summarise")
    ap.add_argument("--reuse", action="store_true", help="measure the pairs already written")
    ap.add_argument("--timeout", type=float, default=4.0, help="seconds per pair")
    ap.add_argument("--only", default=None, help="pairs whose PTX path or function has this")
    ap.add_argument("--version", default="", help="a tag for cached verdicts (bump on change)")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    if a.reuse:
        pairs = [json.loads(x) for x in (a.out / "pairs.jsonl").read_text().splitlines()]
    else:
        pairs = build(a.out, a.llvm_tests)
        print(f"{len(pairs)} pairs written to {a.out}/pairs.jsonl")
    if a.measure:
        measure(a.out, pairs, a.timeout, a.only, a.version)


if __name__ == "__main__":
    main()
