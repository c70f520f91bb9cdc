"""Run ptxsmt on LLVM's own NVPTX CodeGen tests and write docs/llvm-nvptx-tests.md.

    python scripts/llvm_nvptx_tests.py DIR [--work /tmp/llvm-nvptx-work] [--timeout 10]

DIR holds llvm/test/CodeGen/NVPTX/*.ll files (public reference data: keep them out of
the repository). Each file is compiled for sm_80 by llc-14 and by the NVPTX backend of
the LLVM inside llvmlite, at -O0 and -O2; a module that does not compile whole is split
into one module per function, so one function LLVM rejects costs only itself. Every
(IR function, PTX) pair is then decided by `ptxsmt equiv --batch` (one child process per
pair, the verdict cache), and each "different" is checked twice, independently of the
refinement query: llvmlite's JIT runs the IR on the counterexample's inputs on the host,
and `ptxsmt eval` runs the PTX side. TRIAGE below says what each one is.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from llvm_host import run_jit  # noqa: E402  (the IR oracle the IR semantics is tested against)

from ptxsmt.isa.errors import PtxError  # noqa: E402
from ptxsmt.llvm.module import IrType, read_ir  # noqa: E402

CPU = "sm_80"
OPTS = (0, 2)
COMPILERS = ("llc14", "llvm22")
DOC = ROOT / "docs" / "llvm-nvptx-tests.md"

# What each "different" is, after reading the IR, the PTX and the counterexample:
# (file stem, function) -> (class, explanation). "miscompile" is LLVM's bug (the JIT and
# `ptxsmt eval` columns confirm the two results); any other class is ptxsmt's.
MISCOMPILE = "miscompile"
NAN_SIGN = "miscompile by the PTX ISA's NaN rule"
ABI = "miscompile under ptxsmt's calling convention"
_ROT64 = ("LLVM 14 builds a 64-bit rotate from two shf.l/shf.r.wrap.b32 that take the amount "
          "mod 32, so an amount of 32 to 63 rotates the wrong way round (the halves are not "
          "swapped); fixed upstream in LLVM 19 ('[NVPTX] Fix 64 bits rotations with large "
          "shift values').")
_ROT64_AMT = ("llvm.fshl/fshr.i64 with a rotate amount in a register: LLVM 14 shifts by the "
              "amount's low 32 bits unmasked (shl.b64/shr.b64 by >= 64 give 0 in PTX) where the "
              "IR rotates by the amount mod 64; LLVM 22 masks it.")
_CVT_I1 = ("fptoui/fptosi to i1 is lowered as (bits of x == 0), so 0.0 gives 1 and 1.0 (or "
           "-1.0) gives 0; the IR's result is x truncated toward zero (0 or 1; poison "
           "otherwise). Both LLVM 14 and the LLVM 22.1 in llvmlite; upstream now compares "
           "x >= 1.0 / x <= -1.0 (the test's own comment).")
_BFE = ("llc-14 turns (x & mask) >>s k and (x >>s k) & mask into a bfe.u, which zero-fills "
        "where the IR's arithmetic shift copies the sign bit (and where pos+len passes the "
        "register's width); upstream added these tests with the fix.")
_ABS64 = ("llvm.fabs (and copysign through abs/neg/selp) lowered to abs.f64, which the PTX "
          "ISA says passes a NaN through unchanged: a negative NaN keeps its sign, where "
          "LangRef's fabs clears the sign bit of every value. By the ISA text, not checked on "
          "a GPU.")
_ABS_FTZ = ("llvm.fabs in a \"denormal-fp-math-f32\"=\"preserve-sign\" function lowered to "
             "abs.ftz.f32, which flushes a denormal input to zero (PTX ISA: .ftz \"flushes "
             "subnormal inputs and results to sign-preserving zero\"); LangRef's fabs changes "
             "only the sign bit (\"completely identical to the input except for the sign "
             "bit\"), and the denormal mode governs floating-point operations, not this bit "
             "operation. Both LLVMs; upstream's open fix lowers fabs/fneg as and/xor "
             "(llvm/llvm-project#219089).")
_INT_BF16 = ("uitofp of an i32 (or i64) to bfloat lowered as cvt.rn.f32.u32 (.u64) then "
             "cvt.rn.bf16.f32, which rounds twice: LangRef's uitofp rounds once (\"the "
             "value is rounded using the default rounding mode\"), and %a = 0x2020001 = "
             "2^25 + 2^17 + 1 is just above the midpoint of bfloat 0x4c00 and 0x4c01, so "
             "0x4c01, where the float on the way (0x2020000, ties to even) is the midpoint "
             "and gives 0x4c00. The JIT column agrees with the PTX, not the IR: x86-64 LLVM "
             "lowers it the same way (through float and __truncsfbf2); exact integer "
             "arithmetic (tests/test_llvm_miscompiles.py) gives the IR's 0x4c01. LLVM 22.1; "
             "llc-14 cannot select bfloat conversions.")
TRIAGE: dict[tuple[str, str], tuple[str, str]] = {
    ("bf16-instructions", "test_uitofp_i32"): (MISCOMPILE, _INT_BF16),
    ("bf16-instructions", "test_uitofp_i64"): (MISCOMPILE, _INT_BF16),
    ("rotate", "rotate64"): (MISCOMPILE, _ROT64),
    ("rotate", "rotateright64"): (MISCOMPILE, _ROT64),
    ("rotate", "rotl64"): (MISCOMPILE, _ROT64_AMT),
    ("rotate", "rotr64"): (MISCOMPILE, _ROT64_AMT),
    **{("convert-fp", f"cvt_{s}1_{t}"): (MISCOMPILE, _CVT_I1)
       for s in "us" for t in ("f16", "f32", "f64")},
    **{("bfe", f): (MISCOMPILE, _BFE) for f in (
        "bfe3", "bfe4", "bfe_ashr_signed_32", "bfe_ashr_signed_64", "no_bfe_on_64bit_overflow",
        "no_bfe_on_64bit_overflow_shr_and_pair")},
    ("i1-int-to-fp", "foo2"): (MISCOMPILE, "sitofp i1 true is -1.0; LLVM 14 widens the i1 "
                               "with selp.u32 1, 0 (not -1, 0) before cvt.rn.f32.s32 and gives "
                               "+1.0."),
    ("i1-int-to-fp", "foo4"): (MISCOMPILE, "as @foo2, for double: +1.0 where the IR says -1.0."),
    ("i1-int-to-fp", "foo6"): (MISCOMPILE, "as @foo2, for half: 0x3c00 (+1.0) where the IR "
                               "says 0xbc00 (-1.0)."),
    ("mulwide", "mulwide_sext_shl_topbit_i16"): (
        MISCOMPILE, "sext (shl nsw i16 x, 15) becomes mul.wide.s16 x, -32768: the shift's "
        "multiplier 2^15 does not fit s16, so x = -1 gives +32768 where the IR says -32768 "
        "(no signed overflow: -1 << 15 is -32768). LLVM 22.1; upstream added this test with "
        "the fix."),
    ("mulwide", "mulwide_sext_shl_topbit_i32"): (
        MISCOMPILE, "as the i16 case: mul.wide.s32 x, -2^31 for sext (shl nsw i32 x, 31)."),
    ("mulwide", "mulwideu7"): (
        ABI, "an i7 parameter arrives in a .b8 param whose top bit the IR does not define "
        "(no zeroext); llc-14 -O2 multiplies the byte unmasked (LLVM 22 and llc-14 -O0 mask "
        "it with 127). A miscompile if a caller may leave that bit set, as ptxsmt assumes."),
    ("math-intrins", "abs_double"): (NAN_SIGN, _ABS64),
    ("math-intrins", "abs_float_ftz"): (MISCOMPILE, _ABS_FTZ),
    ("copysign", "fcopysign_d_h"): (NAN_SIGN, _ABS64),
}

_LLVMLITE_COMPILE = r'''
import sys
from ptxsmt.llvm.module import compile_to_ptx
try:
    sys.stdout.write(compile_to_ptx(sys.stdin.read(), cpu=sys.argv[1], opt=int(sys.argv[2])))
except Exception as e:
    sys.stderr.write(f"error: {e}\n"); sys.exit(1)
'''


def normalized(text: str) -> str:
    """The test's IR for nvptx64: its own datalayout and triple (some are 32-bit) go."""
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("target datalayout", "target triple")))


def only_function(text: str, name: str) -> str:
    """LLVM 22's printing of module `text` with every other definition a declaration."""
    import llvmlite.binding as llvm

    printed = str(llvm.parse_assembly(text)).splitlines()
    out, skipping = [], False
    for line in printed:
        if skipping:
            skipping = line != "}"
            continue
        mine = re.search(rf"@(\"?){re.escape(name)}\1\(", line)
        if line.startswith("define ") and not mine:
            header = re.sub(r"^define\s+(internal |private |linkonce_odr |weak |dso_local )*",
                            "declare ", line).rsplit("{", 1)[0].rstrip()
            out.append(header)
            skipping = True
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def defined_functions(text: str) -> list[str]:
    """The functions IR `text` defines, by LLVM 22's parser (RuntimeError if it fails)."""
    import llvmlite.binding as llvm

    module = llvm.parse_assembly(text)
    module.verify()
    return [f.name for f in module.functions if not f.is_declaration]


def failure(stderr: str, code: int) -> str:
    """A compile failure's class, for the tallies."""
    text = stderr.strip()
    for pattern, reason in (
            (r"ptr type is only supported|expected type", "IR syntax newer than LLVM 14 (ptr)"),
            (r"Undefined external symbol \"?(\w+)", "libcall unavailable on NVPTX: {0}"),
            (r"Cannot select: .*?(\w+(?:\.\w+)*)\s", "cannot select {0}"),
            (r"Cannot select", "cannot select"),
            (r"Intrinsic name not mangled|Invalid intrinsic|unknown intrinsic|Unknown intrinsic",
             "unknown intrinsic"),
            (r"error: (?:<stdin>|[^:]*):\d+:\d+: error: (.{0,60})", "IR rejected: {0}"),
            (r"error: [^:]*:\d+:\d+: (.{0,60})", "IR rejected: {0}"),
            (r"LLVM ERROR: (.{0,70})", "{0}")):
        if m := re.search(pattern, text):
            return reason.format(*m.groups())
    if code < 0 or "Stack dump" in text or "PLEASE submit" in text:
        return "backend crash"
    return (text.splitlines() or ["failed"])[0][:80]


def compile_llc14(src: Path, out: Path, opt: int) -> tuple[bool, str]:
    for extra in ([], ["-opaque-pointers"]):
        p = subprocess.run(["llc-14", "-march=nvptx64", f"-mcpu={CPU}", f"-O{opt}", *extra,
                            str(src), "-o", str(out)], capture_output=True, text=True,
                           timeout=300)
        if p.returncode == 0:
            return True, ""
        if "-opaque-pointers" not in p.stderr:
            break
    return False, failure(p.stderr, p.returncode)


def compile_llvm22(src: Path, out: Path, opt: int) -> tuple[bool, str]:
    p = subprocess.run([sys.executable, "-c", _LLVMLITE_COMPILE, CPU, str(opt)],
                       input=src.read_text(), capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    if p.returncode == 0:
        out.write_text(p.stdout)
        return True, ""
    return False, failure(p.stderr, p.returncode)


COMPILE = {"llc14": compile_llc14, "llvm22": compile_llvm22}


def extract_llc14(src: Path, name: str, out: Path) -> bool:
    """LLVM 14's own extraction of one function (the IR must parse in LLVM 14)."""
    for extra in ([], ["-opaque-pointers"]):
        p = subprocess.run(["llvm-extract-14", "-S", f"--func={name}", *extra, str(src),
                            "-o", str(out)], capture_output=True, text=True, timeout=300)
        if p.returncode == 0:
            return True
    return False


def build(files: list[Path], work: Path, timeout: float) -> tuple[list[dict], dict]:
    """Compile every file; the pairs to decide, and what was skipped (by reason)."""
    pairs, skipped = [], defaultdict(Counter)
    meta = {"files": 0, "functions": 0, "unparsed": Counter(), "compiled": Counter()}
    (work / "src").mkdir(parents=True, exist_ok=True)
    for path in files:
        text = normalized(path.read_text())
        try:  # every defined function is a pair; ptxsmt refuses those it does not model
            functions = defined_functions(text)
        except RuntimeError as e:
            meta["unparsed"][str(e).strip().splitlines()[0][:90]] += 1
            continue
        meta["files"] += 1
        meta["functions"] += len(functions)
        src = work / "src" / path.name
        src.write_text(text)
        for compiler in COMPILERS:
            for opt in OPTS:
                config = f"{compiler}-O{opt}"
                folder = work / config
                folder.mkdir(exist_ok=True)
                ptx = folder / f"{path.stem}.ptx"
                ok, why = COMPILE[compiler](src, ptx, opt)
                if ok:
                    meta["compiled"][config] += 1
                    pairs += [{"a": str(src), "b": str(ptx), "function": f,
                               "options": {"timeout": timeout}, "_config": config,
                               "_file": path.stem} for f in functions]
                    continue
                for f in functions:  # one module per function
                    one = folder / f"{path.stem}.{f}.ll"
                    if compiler == "llc14":
                        if not extract_llc14(src, f, one):
                            skipped[config][why] += 1
                            continue
                    else:
                        one.write_text(only_function(text, f))
                    fptx = folder / f"{path.stem}.{f}.ptx"
                    fok, fwhy = COMPILE[compiler](one, fptx, opt)
                    if fok:
                        pairs.append({"a": str(src), "b": str(fptx), "function": f,
                                      "options": {"timeout": timeout}, "_config": config,
                                      "_file": path.stem})
                    else:
                        skipped[config][fwhy] += 1
    return pairs, {"skipped": skipped, **meta}


def ptxas_rejects(pairs: list[dict]) -> dict[str, str]:
    """NVIDIA's assembler on every PTX file: the files it rejects, with its first error
    and the line it names (PTX a compiler must not write, whatever ptxsmt says of it)."""
    out = {}
    for path in sorted({p["b"] for p in pairs}):
        proc = subprocess.run(["ptxas", "-c", f"-arch={CPU}", path, "-o", os.devnull],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode:
            first = next((x for x in proc.stderr.splitlines() if "error" in x),
                         proc.stderr.strip()[:100])
            m = re.search(r"line (\d+)", first)
            line = Path(path).read_text().splitlines()[int(m.group(1)) - 1].strip() if m else ""
            out[path] = f"{first.split('; ', 1)[-1].strip()} [`{line}`]"
    return out


def decide(pairs: list[dict], work: Path, jobs: int) -> list[dict]:
    path = work / "pairs.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in p.items() if not k.startswith("_")})
                            + "\n" for p in pairs))
    proc = subprocess.run([sys.executable, "-m", "ptxsmt", "equiv", "--batch", str(path),
                           "--jobs", str(jobs)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    if len(results) != len(pairs):
        sys.exit(f"equiv --batch answered {len(results)} of {len(pairs)} lines: "
                 f"{proc.stderr[-500:]}")
    (work / "results.jsonl").write_text(proc.stdout)
    return results


# --- checking a "different" independently: the IR on the host JIT, the PTX by ptxsmt eval

def _int_type(t: IrType) -> str:
    return f"i{t.width * t.lanes}"


def _image_bits(t: IrType) -> int:
    """Bits of a value as ptxsmt's counterexamples give it: an aggregate's memory image."""
    return 8 * t.size if t.kind == "struct" else t.width * t.lanes


def _fields(t: IrType, path: tuple[int, ...] = ()):
    """(index path, field type) of each field of a struct that is not an aggregate."""
    for k, f in enumerate(t.fields):
        if f.kind == "struct":
            yield from _fields(f, (*path, k))
        else:
            yield (*path, k), f


def _leaf_offsets(t: IrType) -> list[tuple[tuple[int, ...], IrType, int]]:
    """(index path, field type, byte offset) of each such field (a vector: its lane 0's)."""
    out, lane = [], 0
    for path, f in _fields(t):
        out.append((path, f, t.offsets[lane]))
        lane += len(f.leaves)
    return out


def _from_image(t: IrType, x: str, w: int, tag: str, body: list[str]) -> str:
    """IR building a value of aggregate type t from its memory image in i{w} %x."""
    agg = "poison"
    for n, (path, f, at) in enumerate(_leaf_offsets(t)):
        bits = _int_type(f)
        body.append(f"%{tag}s{n} = lshr i{w} {x}, {8 * at}")
        body.append(f"%{tag}t{n} = trunc i{w} %{tag}s{n} to {bits}")
        v = f"%{tag}t{n}"
        if f.kind == "float" or f.lanes > 1:
            body.append(f"%{tag}c{n} = bitcast {bits} {v} to {f.text}")
            v = f"%{tag}c{n}"
        body.append(f"%{tag}a{n} = insertvalue {t.text} {agg}, {f.text} {v}, "
                    + ", ".join(map(str, path)))
        agg = f"%{tag}a{n}"
    return agg


def _to_image(t: IrType, r: str, w: int, body: list[str]) -> str:
    """IR packing aggregate %r of type t into its memory image, an i{w} (padding 0)."""
    acc = "0"
    for n, (path, f, at) in enumerate(_leaf_offsets(t)):
        bits = _int_type(f)
        body.append(f"%re{n} = extractvalue {t.text} {r}, " + ", ".join(map(str, path)))
        v = f"%re{n}"
        if f.kind == "float" or f.lanes > 1:
            body.append(f"%rb{n} = bitcast {f.text} {v} to {bits}")
            v = f"%rb{n}"
        body.append(f"%rz{n} = zext {bits} {v} to i{w}")
        body.append(f"%rs{n} = shl i{w} %rz{n}, {8 * at}")
        body.append(f"%ro{n} = or i{w} {acc}, %rs{n}")
        acc = f"%ro{n}"
    return acc


def host_call(src: Path, name: str) -> tuple[str, tuple, list[str]] | None:
    """A wrapper taking and returning integers (floats bitcast inside the IR; a struct or
    array as its memory image, fields at their offsets), as tests/llvm_host.py runs
    them; None for a function with pointers or no result."""
    fn = read_ir(src.read_text())[name]
    types = [t for _, t in fn.params] + [fn.returns]
    if fn.returns.kind in ("void", "ptr") or any(
            x.kind == "ptr" for t in types for x in t.leaves) or \
            any(t.kind == "struct" and not t.offsets for t in types):
        return None
    widths = [_host_width(_image_bits(t)) for _, t in fn.params]
    ret_w = _host_width(_image_bits(fn.returns))
    if None in widths or ret_w is None:
        return None
    body, args = [], []
    for i, ((_, t), w) in enumerate(zip(fn.params, widths)):
        x = f"%x{i}"
        if t.kind == "struct":
            args.append(f"{t.text} {_from_image(t, x, w, f'p{i}', body)}")
            continue
        bits = _int_type(t)
        if w != t.width * t.lanes:
            body.append(f"%t{i} = trunc i{w} {x} to {bits}")
            x = f"%t{i}"
        if t.kind == "float" or t.lanes > 1:
            body.append(f"%c{i} = bitcast {bits} {x} to {t.text}")
            x = f"%c{i}"
        args.append(f"{t.text} {x}")
    body.append(f"%r = call {fn.returns.text} @{name}({', '.join(args)})")
    r, bits = "%r", _int_type(fn.returns)
    if fn.returns.kind == "struct":
        r = _to_image(fn.returns, r, ret_w, body)
    elif fn.returns.kind == "float" or fn.returns.lanes > 1:
        body.append(f"%rb = bitcast {fn.returns.text} %r to {bits}")
        r = "%rb"
    if fn.returns.kind != "struct" and ret_w != fn.returns.width * fn.returns.lanes:
        body.append(f"%rz = zext {bits} {r} to i{ret_w}")
        r = "%rz"
    params = ", ".join(f"i{w} %x{i}" for i, w in enumerate(widths))
    wrapper = (f"define i{ret_w} @host.{name}({params}) {{\n  "
               + "\n  ".join(body) + f"\n  ret i{ret_w} {r}\n}}\n")
    wrapper = _as_spelled(wrapper, src.read_text())
    return wrapper, (ret_w, widths), [n for n, _ in fn.params]


def _as_spelled(wrapper: str, source: str) -> str:
    """Named struct types as the source spells them: this process's LLVM context names a
    second module's %S `%S.0` (every module is read into the one global context)."""
    def name(m: re.Match) -> str:
        t = m.group(0)
        while f"{t} = type" not in source and re.search(r"\.\d+$", t):
            t = t.rsplit(".", 1)[0]
        return t if f"{t} = type" in source else m.group(0)
    return re.sub(r"%[A-Za-z$._][\w$.]*\.\d+(?=[\s,}\]>)]|$)", name, wrapper)


def _host_width(bits: int) -> int | None:
    return next((w for w in (8, 16, 32, 64) if bits <= w), None)


def confirm(row: dict, pair: dict) -> dict:
    """The IR's result on the host JIT and the PTX's by `ptxsmt eval`, for the doc."""
    cex = row["counterexample"]
    out = {"jit": None, "eval": None}
    try:
        call = host_call(Path(pair["a"]), pair["function"])
    except PtxError:  # a module the reader refuses: no wrapper
        call = None
    if call is not None and cex.get("ir") is not None:
        wrapper, (ret_w, widths), names = call
        inputs = [int(cex["inputs"][n], 16) & ((1 << w) - 1) for n, w in zip(names, widths)]
        ir = Path(pair["a"]).read_text() + "\n" + wrapper
        try:
            value = run_jit(ir, {f"host.{pair['function']}": (ret_w, widths, 0, [inputs])})
            out["jit"] = next(iter(value.values()))[0]
        except RuntimeError as e:
            out["jit"] = f"JIT failed: {str(e).splitlines()[-1][:80]}"
    line = cex.get("reproduce", {}).get("ptx")
    if line:
        args = shlex.split(line)  # ptxsmt eval FILE --function F NAME=BITS...
        p = subprocess.run([sys.executable, "-m", "ptxsmt", *args[1:], "--json"],
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
        if p.returncode == 0:
            out["eval"] = json.loads(p.stdout).get("outputs", {}).get("func_retval0")
        else:
            out["eval"] = f"eval failed: {p.stderr.strip()[:80]}"
    return out


# --- the document

def _reason(row: dict) -> str:
    reason = row.get("reason") or row.get("error") or ""
    if row["verdict"] == "refused":  # the class and what: "intrinsic: @llvm.ceil.f32"
        detail = row.get("detail", "").removeprefix("unsupported ")
        return re.sub(r" on @\S+| in @\S+|@test_\w+|@dummy_\w+", "", detail)[:110]
    reason = re.sub(r"/\S+/", "", reason)
    reason = re.sub(r"%\w+", "%r", reason)
    return re.sub(r"\d+(\.\d+)?", "N", reason)[:110]


def write_doc(pairs: list[dict], results: list[dict], meta: dict, checks: dict,
              rejected: dict[str, str], files: int, seconds: float, timeout: float) -> str:
    configs = [f"{c}-O{o}" for c in COMPILERS for o in OPTS]
    table = defaultdict(Counter)
    reasons = defaultdict(Counter)
    examples = defaultdict(set)
    different = []
    for pair, row in zip(pairs, results):
        v = row["verdict"]
        table[pair["_config"]][v] += 1
        if v in ("refused", "unknown", "error"):
            reasons[v][_reason(row)] += 1
            examples[(v, _reason(row))].add(pair["function"])
        if v == "different":
            different.append((pair, row))
    skipped = meta["skipped"]
    w = []
    w.append("# LLVM's own NVPTX tests, validated\n")
    w.append("Generated by `scripts/llvm_nvptx_tests.py` (do not edit by hand: change the "
             "script's TRIAGE table and run it again). The IR functions of "
             f"`llvm/test/CodeGen/NVPTX/*.ll` ({files} files fetched, "
             f"{meta['files']} read by llvmlite, {meta['functions']} functions) were compiled "
             f"for {CPU} by llc-14 and by the NVPTX backend of the LLVM 22 inside llvmlite, "
             "at -O0 and -O2, and every (IR function, PTX) pair was decided by `ptxsmt equiv "
             f"--batch` (a {timeout:g} s limit per pair, one pair at a time). A file's own "
             "datalayout and triple are dropped (some are 32-bit); the RUN lines' flags "
             "(`-fp-contract=fast`, `--nvptx-no-f16-math`, other sm_ targets) are not used: "
             "every file is compiled the same way.\n")
    w.append("Verdicts: **refines** (proved: for every input without UB the PTX returns "
             "and stores what the IR does wherever that is not poison), **different** (a "
             "counterexample, replayed), **unknown** (no verdict, and why), **refused** (IR "
             "outside what ptxsmt models), **error** (the pair could not be read).\n")
    w.append("| compiler | modules compiled | functions not compiled | refines | different "
             "| unknown | refused | error |")
    w.append("|---|---|---|---|---|---|---|---|")
    total = Counter()
    for c in configs:
        t = table[c]
        total.update(t)
        nskip = sum(skipped[c].values())
        total["skipped"] += nskip
        w.append(f"| {c} | {meta['compiled'][c]} of {meta['files']} | {nskip} | {t['refines']} "
                 f"| {t['different']} | {t['unknown']} | {t['refused']} | {t['error']} |")
    w.append(f"| all | | {total['skipped']} | {total['refines']} | {total['different']} | "
             f"{total['unknown']} | {total['refused']} | {total['error']} |\n")
    decided = sum(total[k] for k in ("refines", "different", "unknown", "refused", "error"))
    w.append(f"{decided} pairs in {seconds:.0f} s of wall time (cached verdicts included).\n")
    wrong = sum(1 for p, r in zip(pairs, results)
                if r["verdict"] == "different" or p["b"] in rejected)
    correct = decided - wrong
    w.append(f"**Proved share of the correct compiles: {total['refines']} of {correct}, "
             f"{100 * total['refines'] / max(correct, 1):.1f} %**: the pairs less the "
             f"{wrong} that are not correct compiles, those found different (each a "
             "miscompile, below) and those whose PTX ptxas rejects; unknown, refused and "
             "error count against it.\n")
    w.append("## Different, triaged\n")
    if not different:
        w.append("None.\n")
    w.append("Each counterexample is checked apart from the refinement query: **JIT** is the "
             "IR's result computed by LLVM itself (llvmlite's MCJIT on the host, the "
             "function called through an integer wrapper), **eval** the PTX's by `ptxsmt "
             "eval` (the reproduce line). Both agreeing with the reported results, and the "
             "class below, make it a miscompile; a mismatch is a ptxsmt bug.\n")
    grouped = defaultdict(list)
    for pair, row in different:
        grouped[(pair["_file"], pair["function"])].append((pair, row))
    for key, found in grouped.items():
        cls, note = TRIAGE.get(key, ("untriaged", "not yet looked at"))
        seen_in = ", ".join(p["_config"] for p, _ in found)
        w.append(f"- **{key[0]}.ll @{key[1]}** ({seen_in}): **{cls}**. {note}")
        for pair, row in found:
            cex = row["counterexample"]
            chk = checks.get((pair["_config"], *key), {})
            inputs = ", ".join(f"%{k}={v}" for k, v in cex["inputs"].items())
            jit, ev = chk.get("jit"), chk.get("eval")
            jit_s = "n/a" if jit is None else (f"{jit:#x}" if isinstance(jit, int) else jit)
            w.append(f"  - {pair['_config']}: inputs {inputs}; IR {cex.get('ir')} (JIT {jit_s}); "
                     f"PTX {cex.get('ptx')} (eval {ev if ev is not None else 'n/a'}); "
                     f"`ptxsmt equiv {Path(pair['a']).name} {pair['_config']}/"
                     f"{Path(pair['b']).name} --function {pair['function']}` after "
                     f"{_compile_line(pair)}")
    w.append("")
    w.append("## PTX that ptxas rejects\n")
    w.append(f"`ptxas -arch={CPU}` on every PTX file compiled (the instruction it names, and "
             "the functions of that file not proved): PTX the compiler must not write.\n")
    if not rejected:
        w.append("None.\n")
    for path, message in sorted(rejected.items()):
        config = Path(path).parent.name
        names = sorted({p["function"] for p, r in zip(pairs, results)
                        if p["b"] == path and r["verdict"] != "refines"})
        w.append(f"- {config}/{Path(path).name}: {message}; not proved there: "
                 + (", ".join(f"@{n}" for n in names) or "none"))
    w.append("")
    for v, title in (("refused", "Refused, by reason"), ("unknown", "Unknown, by reason"),
                     ("error", "Errors, by message")):
        w.append(f"## {title}\n")
        if not reasons[v]:
            w.append("None.\n")
            continue
        w.append("| pairs | reason | functions (some) |")
        w.append("|---|---|---|")
        for reason, n in reasons[v].most_common():
            some = sorted(examples[(v, reason)])
            shown = ", ".join(some[:6]) + (f" and {len(some) - 6} more" if len(some) > 6 else "")
            w.append(f"| {n} | {reason.replace('|', '/')} | {shown} |")
        w.append("")
    w.append("## Not compiled, by reason\n")
    w.append("Functions the compiler rejects (alone, in a module of their own) are not "
             "pairs. llc-14 reads only typed pointers unless told `-opaque-pointers` (tried "
             "second), and its NVPTX backend then crashes on pointer parameters.\n")
    rows = [(c, r, n) for c in configs for r, n in skipped[c].most_common()]
    if rows:
        w.append("| compiler | count | reason |")
        w.append("|---|---|---|")
        w += [f"| {c} | {n} | {r.replace('|', '/')} |" for c, r, n in rows]
    else:
        w.append("None.")
    if meta["unparsed"]:
        w.append("\nFiles llvmlite (LLVM 22) does not read: " + "; ".join(
            f"{n} × {r}" for r, n in meta["unparsed"].most_common()))
    w.append("")
    return "\n".join(w)


def _compile_line(pair: dict) -> str:
    config = pair["_config"]
    opt = config.rsplit("O", 1)[1]
    if config.startswith("llc14"):
        return f"`llc-14 -march=nvptx64 -mcpu={CPU} -O{opt} {Path(pair['a']).name}`"
    return f"`ptxsmt tv {Path(pair['a']).name} --mcpu {CPU} -O {opt} --function {pair['function']}`"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--work", type=Path, default=Path("/tmp/llvm-nvptx-work"))
    ap.add_argument("--timeout", type=float, default=10.0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--doc", type=Path, default=DOC)
    a = ap.parse_args()
    files = sorted(a.dir.glob("*.ll"))
    if not files:
        sys.exit(f"no .ll files in {a.dir}")
    start = time.monotonic()
    pairs, meta = build(files, a.work, a.timeout)
    print(f"{len(pairs)} pairs from {meta['files']} files", file=sys.stderr)
    results = decide(pairs, a.work, a.jobs)
    seconds = time.monotonic() - start
    checks = {(p["_config"], p["_file"], p["function"]): confirm(r, p)
              for p, r in zip(pairs, results) if r["verdict"] == "different"}
    rejected = ptxas_rejects(pairs)
    a.doc.write_text(write_doc(pairs, results, meta, checks, rejected, len(files), seconds,
                               a.timeout))
    print(f"wrote {a.doc}", file=sys.stderr)


if __name__ == "__main__":
    main()
