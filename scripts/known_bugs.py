"""Run ptxsmt on the known-bug corpus (tests/ptx/llvm/known-bugs/) and write its table
into docs/known-bugs.md.

    python scripts/known_bugs.py [--only NAME ...] [--rebuild] [--no-write] [--claims DIR]

Each case's IR is checked against the PTX an affected compiler wrote and against a fixed
compiler's (or the fix's) PTX by `ptxsmt equiv NAME.ll NAME.{affected,fixed}.ptx
--function NAME --json` (one child process each, timed: the seconds a user waits). A
"different" is then checked twice, independently of the refinement query: llvmlite's JIT
runs the IR on the counterexample's inputs on the host, and `ptxsmt eval` runs the PTX side
(scripts/llvm_nvptx_tests.py's `confirm`). `--rebuild` first remakes every compiler-made PTX
file with llc-14 and llvmlite's LLVM (bugs.toml says which).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tests"))

from llvm_nvptx_tests import confirm  # noqa: E402  (the JIT and eval checks of a "different")

CORPUS = ROOT / "tests" / "ptx" / "llvm" / "known-bugs"
DOC = ROOT / "docs" / "known-bugs.md"
BEGIN, END = "<!-- known-bugs table: scripts/known_bugs.py -->", "<!-- end of table -->"
SIDES = ("affected", "fixed")
# what each side must give, by kind (a case with `needs` may give `today` instead)
EXPECTED = {"llvm": ("different", "refines"), "ptxas": ("refines", "refines"),
            "ir": ("refines", "refines")}
DEFAULTS = {"kind": "llvm", "nan": "payload-free", "jit": True, "needs": "", "today": ""}


def cases() -> list[dict]:
    data = tomllib.loads((CORPUS / "bugs.toml").read_text())
    return [{**DEFAULTS, **bug} for bug in data["bug"]]


# what `ptxsmt triage` must say of each side's claim, by kind: the PTX of a ptxas case is
# right, and the value the GPU gave (`inputs`, `got`) is not the ISA's
TRIAGED = {"llvm": ("confirmed", "refuted"), "ptxas": ("not the compiler", "refuted"),
           "ir": ("refuted", "refuted")}


def claim(case: dict, side: str, at: Path = CORPUS) -> dict:
    """The claim file (docs/triage.md) that one side's PTX miscompiles the case's IR, as a
    dict for TOML or JSON, its paths relative to the folder `at` it is written to; a
    ptxas case's affected side carries the inputs and the value the report saw."""
    name = case["name"]

    def where(suffix: str) -> str:
        return os.path.relpath(CORPUS / f"{name}{suffix}", at)
    out = {"title": f"{name} ({side}: {case[side]}): {case['title']}",
           "ir": {"file": where(".ll"), "function": name},
           "ptx": {"file": where(f".{side}.ptx"), "function": name},
           "options": {"nan": case["nan"]}}
    if case["report"].startswith("http"):
        out["link"] = case["report"]
    if side == "affected" and "got" in case:
        out["inputs"], out["reported"] = case["inputs"], {"got": case["got"]}
    return out


def made_by(source: str) -> tuple[str, str, bool] | None:
    """("llc-14" or "llvm-22", "sm_XX", run the O2 pipeline first) for a compiler-made file;
    None for one written by hand."""
    m = re.fullmatch(r"(llc-14|llvm-22) (sm_\d+)( opt)?", source)
    return (m.group(1), m.group(2), bool(m.group(3))) if m else None


def compile_ptx(ll: Path, compiler: str, cpu: str, pipeline: bool) -> str:
    if compiler == "llc-14":
        ir = ll.read_text()
        if pipeline:  # opt-14's O2 for the NVPTX target (its TTI folds NVVM intrinsics)
            ir = subprocess.run(["opt-14", "-O2", "-mtriple=nvptx64-nvidia-cuda", "-S"],
                                input=ir, capture_output=True, text=True, check=True).stdout
        return subprocess.run(["llc-14", "-march=nvptx64", f"-mcpu={cpu}", "-O2", "-o", "-"],
                              input=ir, capture_output=True, text=True, check=True).stdout
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = llvm.parse_assembly(ll.read_text())
    module.triple = "nvptx64-nvidia-cuda"
    machine = llvm.Target.from_triple(module.triple).create_target_machine(cpu=cpu, opt=2)
    if pipeline:  # the middle end's O2 (where IR-to-IR folds such as InstCombine's run)
        builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(2))
        builder.getModulePassManager().run(module, builder)
    return machine.emit_assembly(module)


def rebuild(case: dict) -> None:
    ll = CORPUS / f"{case['name']}.ll"
    for side in SIDES:
        how = made_by(case[side])
        if how is not None:
            (CORPUS / f"{case['name']}.{side}.ptx").write_text(compile_ptx(ll, *how))


def check(case: dict, side: str) -> dict:
    """`ptxsmt equiv` on one side: its JSON object, the seconds it took, and for a
    "different" the JIT's and eval's values of the counterexample."""
    ll, ptx = CORPUS / f"{case['name']}.ll", CORPUS / f"{case['name']}.{side}.ptx"
    cmd = [sys.executable, "-m", "ptxsmt", "equiv", str(ll), str(ptx), "--function",
           case["name"], "--json", "--nan", case["nan"]]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.monotonic() - start
    row = json.loads(p.stdout) if p.stdout.strip() else \
        {"verdict": "error", "reason": p.stderr.strip()[-200:]}
    row["seconds"] = seconds
    if row["verdict"] == "different":
        row["checks"] = confirm(row, {"a": str(ll), "function": case["name"]})
        if not case["jit"]:
            row["checks"]["jit"] = None
    return row


def replayed(row: dict) -> bool:
    """The counterexample's IR value as the host JIT computes it (where it can) and its
    PTX value as `ptxsmt eval` computes it are the ones printed, and they differ."""
    cex, got = row["counterexample"], row["checks"]
    ir, ptx = cex.get("ir"), cex.get("ptx")
    jit_ok = got["jit"] is None or (isinstance(got["jit"], int) and ir is not None
                                    and got["jit"] == int(ir, 16))
    # a NaN the ISA leaves open: eval says so ("unspecified"), and the PTX may give any
    eval_ok = got["eval"] == "unspecified" if cex.get("open_nan") else \
        got["eval"] is not None and ptx is not None and int(got["eval"], 16) == int(ptx, 16)
    return jit_ok and eval_ok and ir != ptx


def outcome(case: dict, rows: dict) -> str:
    """found / missed / expected (a ptxas or IR-level case as it should be) / WRONG."""
    want = EXPECTED[case["kind"]]
    got = tuple(rows[side]["verdict"] for side in SIDES)
    if got[1] == "different" or (case["kind"] != "llvm" and got[0] == "different"):
        return "WRONG"
    if case["kind"] != "llvm":
        return "expected" if got == want else "missed"
    if got[0] == "different":
        return "found" if replayed(rows["affected"]) else "unconfirmed"
    return "missed"


def _verdict(row: dict) -> str:
    v = row["verdict"]
    if v == "different":
        c = row["counterexample"]
        inputs = ", ".join(f"%{k}={x}" for k, x in c["inputs"].items()) or "no inputs"
        ptx = f"PTX may give {c['ptx']} (an open NaN)" if c.get("open_nan") else \
            f"PTX {c['ptx']}"
        return f"different ({inputs}; IR {c['ir']}, {ptx})"
    return f"{v} ({row['reason']})" if row.get("reason") else v


def _link(url: str) -> str:
    if not url:
        return ""
    m = re.search(r"/(issues|pull)/(\d+)$", url)
    name = f"#{m.group(2)}" if m and "llvm/llvm-project" in url else \
        (f"{url.split('/')[3]}#{m.group(2)}" if m else Path(url).name)
    return f"[{name}]({url})" if url.startswith("http") else f"`{url}`"


def _source(how: str) -> str:
    """Where a PTX file came from, short: the compiler, or "hand-made" (the file says how)."""
    return "hand-made" if how.startswith("hand") else how


def table(results: list[tuple[dict, dict, str]]) -> str:
    lines = ["| case | bug | report / fix | affected PTX: verdict | fixed PTX: verdict "
             "| s | result |", "|---|---|---|---|---|---|---|"]
    for case, rows, result in results:
        a, f = rows["affected"], rows["fixed"]
        fix = case["fix"] if case["fix"] != case["report"] else ""
        links = " / ".join(x for x in (_link(case["report"]), _link(fix)) if x)
        seconds = a["seconds"] + f["seconds"]
        need = f" (needs: {case['needs']})" if case["needs"] else ""
        lines.append(f"| `{case['name']}` | {case['title']} | {links} "
                     f"| {_source(case['affected'])}: {_verdict(a)} "
                     f"| {_source(case['fixed'])}: {_verdict(f)} "
                     f"| {seconds:.1f} | {result}{need} |")
    return "\n".join(lines)


def summary(results: list[tuple[dict, dict, str]]) -> str:
    llvm = [r for c, _, r in results if c["kind"] == "llvm"]
    found, wrong = llvm.count("found"), sum(r == "WRONG" for _, _, r in results)
    reports = {c["report"] for c, _, _ in results if c["kind"] == "llvm"}
    found_in = {c["report"] for c, _, r in results if r == "found"}
    times = sorted(rows["affected"]["seconds"] + rows["fixed"]["seconds"]
                   for _, rows, _ in results)
    return (f"Recall: **{found} of {len(llvm)}** miscompile cases found with a replayed "
            f"counterexample ({len(llvm) - found} need what ptxsmt lacks), from "
            f"{len(found_in)} of {len(reports)} distinct reports; "
            f"{sum(r == 'expected' for c, _, r in results if c['kind'] != 'llvm')} of "
            f"{sum(c['kind'] != 'llvm' for c, _, _ in results)} ptxas/IR-level cases "
            f"refine on both sides; {wrong} wrong verdicts. Time per case (both sides, "
            f"wall, one process each): median {times[len(times) // 2]:.1f} s, "
            f"max {times[-1]:.1f} s.")


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    DOC.write_text(doc[:start] + "\n" + text + "\n" + doc[end:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="these cases only (the doc is not written)")
    ap.add_argument("--rebuild", action="store_true", help="remake compiler-made PTX first")
    ap.add_argument("--no-write", action="store_true", help="print, leave the doc alone")
    ap.add_argument("--claims", type=Path, metavar="DIR",
                    help="write each side as a `ptxsmt triage` claim file in DIR, and stop")
    args = ap.parse_args()
    todo = [c for c in cases() if not args.only or c["name"] in args.only]
    if args.claims:  # then `ptxsmt triage DIR`
        args.claims.mkdir(parents=True, exist_ok=True)
        for case in todo:
            for side in SIDES:
                (args.claims / f"{case['name']}.{side}.json").write_text(
                    json.dumps(claim(case, side, args.claims.resolve()), indent=2) + "\n")
        return
    results = []
    for case in todo:
        if args.rebuild:
            rebuild(case)
        rows = {side: check(case, side) for side in SIDES}
        result = outcome(case, rows)
        print(f"{case['name']}: {result}; affected {_verdict(rows['affected'])}; "
              f"fixed {_verdict(rows['fixed'])}", flush=True)
        results.append((case, rows, result))
    text = summary(results) + "\n\n" + table(results)
    print(text)
    if not args.only and not args.no_write:
        write_doc(text)


if __name__ == "__main__":
    main()
