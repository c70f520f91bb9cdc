"""Run `ptxsmt equiv` over the function corpus and triage every verdict.

    python scripts/function_corpus.py [--manifest tests/corpus/functions/manifest.jsonl]
        [--results build/function-corpus.jsonl] [--only TEXT] [--rerun]
        [--doc docs/function-corpus.md]

One pair at a time (`python -m ptxsmt equiv A B --function F --json --timeout 20`, each in its
own process), results kept in --results so a second run only triages (--rerun runs again).
It writes docs/function-corpus.md: verdict counts, refusals grouped by reason, and every
"different" (and every wrong "equivalent") with its triage:

  expected        the manifest says the pair differs (a documented compiler behaviour)
  miscompile      a real compiler bug: the IR, run natively by llvmlite's JIT on the
                  counterexample's inputs, agrees with one side and not the other
  false alarm     ptxsmt's fault, by class: opaque instruction (one side's unmodelled
                  result is free), memory space (shared/local reached through generic
                  addresses), brx.idx (a jump table read as data), bits beyond a narrow
                  (i8/i16) return, ...
  unsound         an "equivalent" where the manifest says "different" (a mutant), or an
                  answer where it says "refused" (a module ptxas rejects)

The oracle for the LLVM IR pairs is the IR itself: `llvmlite` compiles the source function for
the host and runs it on the counterexample's inputs; the side whose output differs from the IR's
is the wrong one. An "equivalent" reached with a jump table left unmodelled (brx.idx) is
listed too: the verdict is right only because both compiles are.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import ctypes
import hashlib
import json
import math
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from make_function_corpus import SRC, function_span, typed_to_opaque  # noqa: E402

MANIFEST = ROOT / "tests" / "corpus" / "functions" / "manifest.jsonl"
DOC = ROOT / "docs" / "function-corpus.md"
TIMEOUT = 20


def run_pair(p: dict) -> dict:
    """One `ptxsmt equiv` run, as the CLI answers it."""
    cmd = [sys.executable, "-m", "ptxsmt", "equiv", p["a"], p["b"], "--function", p["function"],
           "--json", "--timeout", str(TIMEOUT)]
    if "function_b" in p:
        cmd += ["--function-b", p["function_b"]]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=6 * TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"rc": None, "stdout": "", "stderr": "hung past 6x --timeout"}
    return {"rc": run.returncode, "stdout": run.stdout, "stderr": run.stderr}


def pair_key(p: dict) -> str:
    """A stored result is reused only for the same function text in the same two files, run
    by the same ptxsmt sources (a change anywhere in ptxsmt/ runs every pair again)."""
    h = hashlib.sha256(ptxsmt_digest().encode())
    for part in (p["a"], p["b"], p["function"], p.get("function_b", "")):
        h.update(part.encode() + b"\0")
    for path in (p["a"], p["b"]):
        h.update(function_text(path, p["function"]).encode() + b"\0")
    return h.hexdigest()[:20]


_DIGEST: list[str] = []


def ptxsmt_digest() -> str:
    """A hash of every source file of the ptxsmt package that answers the pairs."""
    if not _DIGEST:
        h = hashlib.sha256()
        for path in sorted((ROOT / "ptxsmt").rglob("*.py")):
            h.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
        _DIGEST.append(h.hexdigest())
    return _DIGEST[0]


def outcome(raw: dict) -> tuple[str, dict | None, str]:
    """(equivalent | different | unknown | refused | crash, the JSON answer, a reason)."""
    answer = None
    with contextlib.suppress(ValueError):
        answer = json.loads(raw["stdout"])
    err = raw["stderr"].strip()
    last = err.splitlines()[-1] if err else ""
    if raw["rc"] == 0 and answer and answer.get("verdict") == "equivalent":
        return "equivalent", answer, ""
    if raw["rc"] == 1 and answer and answer.get("verdict") == "different":
        return "different", answer, ""
    if raw["rc"] == 3:
        return "unknown", answer, (answer or {}).get("reason", last)
    if raw["rc"] == 2 and last.startswith("error:") and "Traceback" not in err:
        return "refused", answer, last[len("error:"):].strip()
    return "crash", answer, last or f"exit {raw['rc']}"


def reason_class(reason: str, function: str) -> str:
    """A refusal's message without its places, registers, names and types, to group by."""
    r = re.sub(r"^\S+\.ptx: ", "", reason)  # the same reason in every build's file
    r = re.sub(rf"\b{re.escape(function)}\b", "F", r)
    r = re.sub(r"\.[bsuf]\d+\b", ".T", r)
    r = re.sub(r"\['\w+'(?:, '\w+')*\]", "[types]", r)
    r = re.sub(r"^line \d+, col \d+: ", "", r)
    r = re.sub(r"\bon line \d+", "", r)
    r = re.sub(r"\bL(?:__)?BB\w+", "X", r)
    r = re.sub(r"%\w+|\$\w+|\b\w+_param_\d+\b", "X", r)
    r = re.sub(r'"[^"]*"', '"…"', r)
    r = re.sub(r"\b0x[0-9a-f]+\b|\b\d+\b", "N", r)
    return r


# ---- the IR oracle: llvmlite runs the source function natively ---------------------------

class IrOracle:
    """The source IR of the llvm-ir pairs, compiled for the host. Arguments and results
    travel as bit patterns (a wrapper per function), so half, i1 and i8 need no ctypes type."""

    def __init__(self, ll: Path) -> None:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        text = typed_to_opaque(ll.read_text())
        text = re.sub(r'target (?:triple|datalayout) = "[^"]*"\n', "", text)
        # the host has no special registers: they read 0 (their functions are not called)
        text = re.sub(r"@llvm\.nvvm\.([\w.]+)", r"@host_\1", text)
        text = re.sub(r"declare (i\d+) (@host_[\w.]+)\(\)", r"define \1 \2() { ret \1 0 }", text)
        module = llvm.parse_assembly(text)
        self.signatures = {}
        wrappers = []
        for f in module.functions:
            if f.is_declaration or f.linkage != llvm.Linkage.external:
                continue
            ret, *args = (str(t) for t in f.global_value_type.elements)
            # half arithmetic on the host calls compiler-rt, which the JIT does not link
            if any(not _scalar(t) for t in [ret, *args]) or re.search(r"nvvm|half", str(f)):
                continue
            self.signatures[f.name] = (ret, args)
            wrappers.append(_wrapper(f.name, ret, args))
        module = llvm.parse_assembly(text + "\n".join(wrappers))
        module.verify()
        machine = llvm.Target.from_default_triple().create_target_machine()
        self._machine, self._module = machine, module  # the engine needs both alive
        self._engine = llvm.create_mcjit_compiler(module, machine)
        self._engine.finalize_object()
        self._cache = {}

    def __call__(self, function: str, args: list[int]) -> int | None:
        if function not in self.signatures:
            return None
        if function not in self._cache:
            n = len(self.signatures[function][1])
            address = self._engine.get_function_address(f"jit_{function}")
            self._cache[function] = ctypes.CFUNCTYPE(ctypes.c_uint64,
                                                     *[ctypes.c_uint64] * n)(address)
        return self._cache[function](*args)


WIDTHS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "half": 16, "float": 32,
          "double": 64}


def _scalar(t: str) -> bool:
    return t in WIDTHS


def _wrapper(name: str, ret: str, args: list[str]) -> str:
    lines, names = [], []
    for i, t in enumerate(args):
        bits = f"i{WIDTHS[t]}"
        lines.append(f"  %t{i} = trunc i64 %a{i} to {bits}" if bits != "i64"
                     else f"  %t{i} = add i64 %a{i}, 0")
        lines.append(f"  %v{i} = bitcast {bits} %t{i} to {t}" if t != bits
                     else f"  %v{i} = add {t} %t{i}, 0")
        names.append(f"{t} %v{i}")
    rbits = f"i{WIDTHS[ret]}"
    lines.append(f"  %r = call {ret} @{name}({', '.join(names)})")
    lines.append(f"  %rb = bitcast {ret} %r to {rbits}" if ret != rbits else
                 f"  %rb = add {rbits} %r, 0")
    lines.append("  %rw = zext i" + str(WIDTHS[ret]) + " %rb to i64" if WIDTHS[ret] < 64
                 else "  %rw = add i64 %rb, 0")
    params = ", ".join(f"i64 %a{i}" for i in range(len(args)))
    return f"define i64 @jit_{name}({params}) {{\n" + "\n".join(lines) + "\n  ret i64 %rw\n}\n"


def same_value(t: str, ir: int, ptx: int) -> bool:
    """The IR's result against a PTX return value: bits, any NaN for any NaN, and only the
    IR type's low bits (an i1/i8/i16 return travels in a wider .param)."""
    w = WIDTHS[t]
    ptx &= (1 << w) - 1
    ir &= (1 << w) - 1
    if t in ("half", "float", "double"):
        return ir == ptx or (_isnan(t, ir) and _isnan(t, ptx))
    return ir == ptx


def _isnan(t: str, bits: int) -> bool:
    if t == "half":
        return (bits & 0x7C00) == 0x7C00 and bits & 0x3FF != 0
    fmt, width = ("<f", 4) if t == "float" else ("<d", 8)
    return math.isnan(struct.unpack(fmt, bits.to_bytes(width, "little"))[0])


def param_values(function: str, inputs: dict[str, str], n: int) -> list[int] | None:
    try:
        return [int(inputs[f"{function}_param_{i}"], 16) for i in range(n)]
    except KeyError:
        return None


def return_value(side: dict) -> int | None:
    values = [v for k, v in side.items() if "retval" in k or k.startswith("return")]
    return int(values[0], 16) if len(values) == 1 else None


# ---- triage -------------------------------------------------------------------------------

OPAQUE_HINT = re.compile(r"\b(?:shf|prmt|popc|clz|brev|bfe|bfi|div|rem|cvt|mul\.hi|mul\.wide|"
                         r"mad|fma|sqrt|rcp)\b")


ORACLE_SOURCES = ("scalar", "more")  # the IR files whose functions llvmlite runs natively


def triage_different(p: dict, answer: dict,
                     oracle: dict[str, IrOracle] | None) -> tuple[str, str]:
    """(class, evidence) of a "different" verdict. ptxsmt's counterexample values are evidence
    only where it models every instruction, so the classes of its known blind spots come
    first and the IR oracle last."""
    cex = answer.get("counterexample", {})
    replay = _replay(p, cex, oracle)
    uninterpreted = sorted({str(u) for u in answer.get("uninterpreted") or []})
    if p["expect"] == "different":
        checked = f" [IR oracle: {replay[1]}]" if replay and not uninterpreted else ""
        return "expected", p["why"] + checked
    differ = " ".join(cex.get("differ", []))
    if any(u.startswith("brx.idx") for u in uninterpreted):
        return "false alarm: brx.idx read as data", "unmodelled: " + ", ".join(uninterpreted)
    if uninterpreted:
        return "false alarm: opaque instruction", "unmodelled: " + ", ".join(uninterpreted)
    if "local[" in differ or "shared[" in differ or _uses(p, r"cvta(?:\.to)?\.(?:shared|local)"):
        return "false alarm: memory space", f"differ: {differ}"
    if replay:
        return replay
    return "untriaged", f"differ: {differ}"


def _replay(p: dict, cex: dict,
            oracle: dict[str, IrOracle] | None) -> tuple[str, str] | None:
    """The IR run natively on the counterexample's parameters, against both sides' returns."""
    oracle = (oracle or {}).get(Path(p["a"]).name.split(".")[0])
    if not (oracle and p["source"] in ("llvm-ir", "mutant")
            and p["function"] in oracle.signatures):
        return None
    ret, args = oracle.signatures[p["function"]]
    values = param_values(p["function"], cex.get("inputs", {}), len(args))
    lhs, rhs = return_value(cex.get("lhs", {})), return_value(cex.get("rhs", {}))
    if values is None or lhs is None or rhs is None:
        return None
    ir = oracle(p["function"], values)
    a_ok, b_ok = same_value(ret, ir, lhs), same_value(ret, ir, rhs)
    shown = f"IR gives {ir:#x}, A {lhs:#x}, B {rhs:#x} on {[hex(v) for v in values]}"
    if a_ok != b_ok:
        return "miscompile", f"{Path(p['b'] if a_ok else p['a']).name} is wrong: {shown}"
    if a_ok and b_ok and WIDTHS[ret] < 32:
        return ("false alarm: bits beyond a narrow return",
                f"{ret} returned in a .b32: the sides differ only above bit {WIDTHS[ret]}; "
                + shown)
    return ("false alarm: counterexample does not replay" if a_ok and b_ok else
            "untriaged: both sides differ from the IR"), shown


def _uses(p: dict, pattern: str) -> bool:
    return any(re.search(pattern, function_text(path, p["function"])) for path in (p["a"], p["b"]))


_TEXTS: dict[tuple[str, str], str] = {}


def function_text(path: str, function: str) -> str:
    """The function's definition in the module at `path`."""
    if (path, function) not in _TEXTS:
        text = (ROOT / path).read_text()
        lo, hi = function_span(text, function)
        _TEXTS[path, function] = text[lo:hi]
    return _TEXTS[path, function]


# ---- the report ---------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifest", type=Path, default=MANIFEST)
    ap.add_argument("--results", type=Path, default=ROOT / "build" / "function-corpus.jsonl")
    ap.add_argument("--doc", type=Path, default=DOC)
    ap.add_argument("--only", help="pairs whose id contains TEXT")
    ap.add_argument("--rerun", action="store_true", help="run every pair again")
    ap.add_argument("--known-wrong", action="store_true",
                    help="print tests/test_function_corpus.py's KNOWN_WRONG for these results")
    args = ap.parse_args(argv)
    pairs = [json.loads(line) for line in args.manifest.read_text().splitlines() if line]
    if args.only:
        pairs = [p for p in pairs if args.only in p["id"]]
    done = {}
    if args.results.exists() and not args.rerun:
        for line in args.results.read_text().splitlines():
            r = json.loads(line)
            done[r["key"]] = r
    args.results.parent.mkdir(parents=True, exist_ok=True)
    with args.results.open("a") as log:
        for i, p in enumerate(pairs):
            if pair_key(p) in done:
                continue
            print(f"[{i + 1}/{len(pairs)}] {p['id']}", file=sys.stderr, flush=True)
            done[pair_key(p)] = {"key": pair_key(p), "id": p["id"], **run_pair(p)}
            log.write(json.dumps(done[pair_key(p)]) + "\n")
            log.flush()
    oracle = {stem: IrOracle(SRC / f"{stem}.ll") for stem in ORACLE_SOURCES}
    rows = []
    for p in pairs:
        verdict, answer, reason = outcome(done[pair_key(p)])
        row = {"pair": p, "verdict": verdict, "reason": reason, "answer": answer}
        if p["expect"] == "refused" and verdict != "refused":
            row["class"] = "unsound: ptxas rejects the module, ptxsmt answers"
            row["evidence"] = p["why"]
        elif verdict == "different":
            row["class"], row["evidence"] = triage_different(p, answer, oracle)
        elif verdict == "equivalent" and p["expect"] == "different":
            jumps = any(str(u).startswith("brx.idx") for u in answer.get("uninterpreted") or [])
            row["class"] = "unsound equivalent" + (": brx.idx read as data" if jumps else "")
            row["evidence"] = p["why"]
        elif verdict == "equivalent" and any(
                str(u).startswith("brx.idx") for u in answer.get("uninterpreted") or []):
            row["class"] = "right by chance: brx.idx read as data"
            row["evidence"] = ("both sides jump through a table ptxsmt does not follow; only "
                               "the fall-through path was compared")
        rows.append(row)
    if args.known_wrong:
        print("KNOWN_WRONG: dict[str, str] = {")
        for r in rows:
            if r in wrong_verdicts(rows):
                why = r.get("class") or f"crash: {r['reason']}"
                print(f'    "{r["pair"]["id"]}":\n        "{why}",')
        print("}")
        return 0
    args.doc.write_text(render(rows, args.manifest))
    counts = collections.Counter(r["verdict"] for r in rows)
    print(", ".join(f"{k} {v}" for k, v in counts.most_common()), file=sys.stderr)
    return 0


def render(rows: list[dict], manifest: Path) -> str:
    counts = collections.Counter(r["verdict"] for r in rows)
    sources = collections.Counter(r["pair"]["source"] for r in rows)
    out = ["# Function corpus: ptxsmt's verdicts on compiler pairs", "",
           "*Generated by `python scripts/function_corpus.py` (do not edit by hand); the pairs "
           "are built by `python scripts/make_function_corpus.py`.*", "",
           f"{len(rows)} pairs from `{manifest.resolve().relative_to(ROOT)}` (" +
           ", ".join(f"{v} {k}" for k, v in sources.most_common()) +
           "): one function compiled two ways, `ptxsmt equiv A B --function F --json "
           f"--timeout {TIMEOUT}`.", "",
           "Each pair's expectation comes from how it was made, not from ptxsmt: two compiles "
           "of UB-free source are equivalent unless the manifest names a documented "
           "difference; a mutant (one instruction of a build changed on purpose) always "
           "differs. A \"different\" is triaged below: `expected`, a real `miscompile` (the "
           "IR run natively by llvmlite's JIT on the counterexample's inputs agrees with one "
           "side only), or a ptxsmt `false alarm` of a named class. "
           "`tests/test_function_corpus.py` runs a subset (all with PTXSMT_PROFILE=thorough) "
           "and marks today's wrong verdicts xfail by class.", "",
           "| verdict | pairs | " + " | ".join(SOURCES) + " |",
           "|---|---:|" + "---:|" * len(SOURCES)]
    for v in ("equivalent", "different", "unknown", "refused", "crash"):
        by = collections.Counter(r["pair"]["source"] for r in rows if r["verdict"] == v)
        out.append(f"| {v} | {counts.get(v, 0)} | " + " | ".join(str(by.get(s, 0))
                                                             for s in SOURCES) + " |")
    wrong = wrong_verdicts(rows)
    out += ["", f"Wrong verdicts: {len(wrong)} ("
            f"{sum(r['verdict'] == 'different' for r in wrong)} false \"different\", "
            f"{sum(r['verdict'] == 'equivalent' for r in wrong)} unsound \"equivalent\", "
            f"{counts.get('crash', 0)} crashes); refusals: {counts.get('refused', 0)}."]
    classes = collections.Counter(r["class"] for r in rows if "class" in r)
    out += ["", "## Triage of every \"different\" and every wrong \"equivalent\"", "",
            "| class | pairs |", "|---|---:|"]
    out += [f"| {c} | {n} |" for c, n in classes.most_common()]
    out += ["", "| pair | verdict | class | evidence |", "|---|---|---|---|"]
    for r in sorted((r for r in rows if "class" in r), key=lambda r: (r["class"], r["pair"]["id"])):
        out.append(f"| `{r['pair']['id']}` | {r['verdict']} | {r['class']} | "
                   f"{_cell(r['evidence'])} |")
    for kind in ("refused", "unknown", "crash"):
        group = collections.defaultdict(list)
        for r in rows:
            if r["verdict"] == kind:
                group[reason_class(r["reason"], r["pair"]["function"])].append(r)
        if not group:
            continue
        out += ["", f"## {kind.capitalize()} pairs, by reason", "",
                "| reason | pairs | example |", "|---|---:|---|"]
        for reason, rs in sorted(group.items(), key=lambda kv: -len(kv[1])):
            ex = rs[0]
            out.append(f"| {_cell(reason)} | {len(rs)} | `{ex['pair']['id']}`: "
                       f"{_cell(ex['reason'])} |")
    return "\n".join(out) + "\n"


def wrong_verdicts(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r.get("class", "").startswith(("false alarm", "unsound"))
            or r["verdict"] == "crash"]


SOURCES = ("llvm-ir", "nvcc", "mutant", "llvm-test")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(ROOT))
    sys.exit(main())
