"""Build ptxsmt's corpus of compiler function pairs, tests/corpus/functions/, deterministically.

    python scripts/make_function_corpus.py [--out tests/corpus/functions] [--llvm-tests DIR]

The sources are this project's own, in tests/corpus/src/: `scalar.ll` (small UB-free IR
functions of the kinds LLVM's NVPTX CodeGen tests exercise), `extra.ll` (the calling
convention and the state spaces), `nvvm.ll` (NVVM intrinsics: directed rounding, conversions,
bit operations), `more.ll` and `more.cu` (lookup tables, loops with a bound from a
parameter, atomics, half and i8 parameters, early returns) and `kernels.cu` (small CUDA
kernels). Each is compiled several ways, one
PTX file per build:

  llvm14-*  llc-14 -O0, or opt-14 -O2 | llc-14 -O2  (-march=nvptx64 -mcpu=sm_XX)
  llvm22-*  the LLVM inside llvmlite, its NVPTX target, optimised with its pass builder at -O2
  nvcc-*    nvcc -ptx -G or -O3 -arch=sm_XX

and a pair is one function in two builds (-O0/-G against -O2/-O3, sm_80 against sm_53/sm_90,
LLVM 14 against the newer LLVM). `--llvm-tests DIR` adds every function of the .ll files in DIR
(e.g. llvm/test/CodeGen/NVPTX of llvm/llvm-project) the same way; those stay uncommitted.

manifest.jsonl has a line per pair: {"id", "a", "b", "function", "source", "expect", "why"};
paths are relative to the repository root. "expect" is "equivalent" unless a pair is known to
differ ("different": a compiler miscompile or documented behaviour, or a mutant: one
instruction of a build changed on purpose; "why" says which), may be refused ("refused-ok":
equivalent or refused, never different) or must be refused ("refused": ptxas rejects the
module; the generator checks each mutant with ptxas when it is installed).
Triton is not a source: it is not installed here. Needs llc-14, opt-14, nvcc and llvmlite
(ptxas optional); the same tools give the same files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import llvmlite.binding as llvm

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "tests" / "corpus" / "src"
OUT = ROOT / "tests" / "corpus" / "functions"

LLVM_BUILDS = {  # name: (compiler, opt level, sm)
    "llvm14-O0-sm80": ("llvm14", 0, "sm_80"),
    "llvm14-O2-sm80": ("llvm14", 2, "sm_80"),
    "llvm14-O2-sm53": ("llvm14", 2, "sm_53"),
    "llvm22-O0-sm80": ("llvm22", 0, "sm_80"),
    "llvm22-O2-sm80": ("llvm22", 2, "sm_80"),
    "llvm22-O2-sm90": ("llvm22", 2, "sm_90"),
    "llvm22-O2-sm53": ("llvm22", 2, "sm_53"),
}
LLVM_PAIRS = [  # (a, b, what differs)
    ("llvm14-O0-sm80", "llvm14-O2-sm80", "LLVM 14 -O0 vs -O2"),
    ("llvm14-O2-sm80", "llvm14-O2-sm53", "LLVM 14 sm_80 vs sm_53"),
    ("llvm22-O0-sm80", "llvm22-O2-sm80", "LLVM 22 -O0 vs -O2"),
    ("llvm22-O2-sm80", "llvm22-O2-sm90", "LLVM 22 sm_80 vs sm_90"),
    ("llvm22-O2-sm80", "llvm22-O2-sm53", "LLVM 22 sm_80 vs sm_53"),
    ("llvm14-O2-sm80", "llvm22-O2-sm80", "LLVM 14 vs LLVM 22 at -O2"),
]
NVCC_BUILDS = {
    "nvcc-G-sm80": ("-G", "sm_80"),
    "nvcc-O3-sm80": ("-O3", "sm_80"),
    "nvcc-O3-sm75": ("-O3", "sm_75"),
    "nvcc-G-sm90": ("-G", "sm_90"),
    "nvcc-O3-sm90": ("-O3", "sm_90"),
}
NVCC_PAIRS = [
    ("nvcc-G-sm80", "nvcc-O3-sm80", "nvcc -G vs -O3"),
    ("nvcc-G-sm90", "nvcc-O3-sm90", "nvcc -G vs -O3"),
    ("nvcc-O3-sm80", "nvcc-O3-sm75", "nvcc sm_80 vs sm_75 (CUDA 13 has no sm_53)"),
    ("nvcc-O3-sm80", "nvcc-O3-sm90", "nvcc sm_80 vs sm_90"),
]

# Pairs known to differ, by (function, what differs): a documented compiler behaviour, not a
# miscompile. A pair not listed is expected equivalent; the runner triages every other
# "different" (scripts/function_corpus.py).
ROTATE64 = ("LLVM 14 miscompile: it lowers a 64-bit rotate by a variable amount (fshl/fshr "
            "i64) to shl.b64/shr.b64 by the amount and 64 - amount, unmasked; PTX clamps shifts "
            "of 64 or more, so an amount >= 64 gives 0 (rotl 1 by 0xffffffff: 0, not "
            "0x8000000000000000). LLVM 22 masks the amount")
INT_TO_FP_RZ = ("LLVM 14 miscompile: opt -O2 (InstCombine's NVVM intrinsic folding) turns the "
                "round-toward-zero integer-to-float intrinsics (i2f.rz, ui2f.rz, ll2d.rz) into "
                "sitofp/uitofp, which round to nearest: cvt.rz becomes cvt.rn (0x7fffffff "
                "gives 2147483520.0 before, 2147483648.0 after). LLVM 22 keeps cvt.rz")
ROTATE64_NVVM = ("LLVM 14 lowers llvm.nvvm.rotate.b64 / rotate.right.b64 to two shf.l/r.wrap.b32 "
                 "on the two halves with the amount as given: shf takes it modulo 32 and the "
                 "halves are never swapped, so an amount of 32..63 (mod 64) rotates by 32 too "
                 "few (rotate 0x10000 by 0xffffffff: 0x800000000000, not 0x8000); LLVM 22 "
                 "upgrades the intrinsic to llvm.fshl/fshr.i64 (modulo 64)")
NARROW_RETURN = ("an {t} return travels in a .param .b32 whose bits above {t} the NVPTX ABI "
                 "leaves open: LLVM 14 zero-extends, LLVM 22 leaves {what}; the .b32 differs "
                 "there (the low {w} bits agree, by the IR oracle)")
KNOWN_DIFFERENT = {
    **{(f, "LLVM 14 vs LLVM 22 at -O2"): ROTATE64_NVVM for f in ("rotate_b64", "rotate_right_b64")},
    ("mul8", "LLVM 14 vs LLVM 22 at -O2"): NARROW_RETURN.format(
        t="i8", w=8, what="the 32-bit product's upper bits"),
    ("trunc32", "LLVM 14 vs LLVM 22 at -O2"): NARROW_RETURN.format(
        t="i16", w=16, what="the argument's upper bits"),
    ("sel_i8_sum", "LLVM 14 vs LLVM 22 at -O2"): NARROW_RETURN.format(
        t="i8", w=8, what="the carry of the 16-bit add of the bytes (bit 8)"),
    ("fcmp_ueq_h", "LLVM 14 vs LLVM 22 at -O2"): NARROW_RETURN.format(
        t="i1", w=1, what="all ones for true (selp.b32 -1, 0)"),
    **{(f, what): INT_TO_FP_RZ for f in ("i2f_rz", "ui2f_rz", "ll2d_rz")
       for what in ("LLVM 14 -O0 vs -O2", "LLVM 14 vs LLVM 22 at -O2")},
    ("rotl64_var", "LLVM 14 vs LLVM 22 at -O2"): ROTATE64,
    ("rotr64_var", "LLVM 14 vs LLVM 22 at -O2"): ROTATE64,
    ("k_fmul_add", "nvcc -G vs -O3"): "nvcc -G writes mul.f32 and add.f32 (no rounding "
                                      "modifier: ptxas may fuse them or not); -O3 writes "
                                      "fma.rn.f32, one rounding instead of two",
}


# Wrong compiles made on purpose: one edit inside one function of one build. The pair (the
# build, its mutant) must never be "equivalent". (build, function, old text, new text, why)
MUTANTS = [
    ("scalar.llvm22-O0-sm80", "switch_dense", "[func_retval0], 52;", "[func_retval0], 53;",
     "case 2 of a brx.idx jump table returns 53 instead of 52"),
    ("scalar.llvm14-O2-sm80", "fcmp_une", "setp.neu.f32", "setp.ne.f32",
     "unordered compare made ordered (NaN operands)"),
    ("scalar.llvm14-O2-sm80", "cond_store", "@%p1 bra", "@!%p1 bra",
     "the guarded store runs under the opposite guard"),
    ("scalar.llvm22-O2-sm80", "rotl32_var", "shf.l.wrap", "shf.r.wrap",
     "rotate left made rotate right"),
    ("scalar.llvm14-O2-sm80", "fminnum", "min.f32", "max.f32", "min made max"),
    ("scalar.llvm22-O2-sm80", "hcmp_olt", "setp.lt.f16", "setp.ltu.f16",
     "ordered half compare made unordered"),
    ("scalar.llvm14-O2-sm80", "store_sum", "[%rd1+12]", "[%rd1+8]",
     "the store's offset 12 made 8"),
    ("scalar.llvm22-O2-sm80", "load_sext8", "ld.s8", "ld.u8",
     "a signed byte load made zero-extending"),
    ("scalar.llvm14-O2-sm80", "smax32", "max.s32", "max.u32", "signed max made unsigned"),
    ("scalar.llvm14-O2-sm80", "load_add", "[%rd1+4]", "[%rd1]",
     "the second load reads the first word again"),
    ("scalar.llvm14-O0-sm80", "udiv_var", "div.u32", "rem.u32", "division made remainder"),
    ("extra.llvm14-O2-sm80", "agg_param", "[agg_param_param_0+4]", "[agg_param_param_0]",
     "an aggregate parameter's second word read at offset 0"),
    ("extra.llvm14-O2-sm80", "pair_ret", "[func_retval0+4], %r4", "[func_retval0+4], %r3",
     "a struct return's second field gets the first's value"),
    ("extra.llvm14-O2-sm80", "local_array", "mov.u32 \t%r5, 7;", "mov.u32 \t%r5, 8;",
     "a local array's element 3 holds 8 instead of 7"),
    ("extra.llvm22-O0-sm80", "shared_store", "shl.b32", "shr.u32",
     "the value stored to shared memory shifted right instead of left"),
    # modules ptxas rejects: the pair must be refused (exit 2), never answered
    ("scalar.llvm14-O2-sm80", "cond_store", "@%p1 bra", "@%r1 bra",
     "a branch guarded by a .b32 register", "refused"),
    ("scalar.llvm14-O2-sm80", "cond_store", "bra \tLBB91_2;", "bra \tLBB91_7;",
     "a branch to an undefined label", "refused"),
    ("scalar.llvm14-O2-sm80", "cond_store", "\tst.u32", "LBB91_2:\n\tst.u32",
     "a label defined twice", "refused"),
    ("kernels.nvcc-O3-sm80", "k_max", "max.s32", "min.s32", "max made min"),
    ("kernels.nvcc-O3-sm80", "k_shift", "shr.s32", "shr.u32",
     "arithmetic shift right made logical"),
]


def function_span(text: str, function: str) -> tuple[int, int]:
    """Where `function`'s definition starts and ends (its closing brace) in a module."""
    start = re.search(rf"^\.(?:visible|weak|extern)?\s*\.(?:func|entry)\b[^\n]*\b{function}\(",
                      text, re.M)
    if start is None:
        raise ValueError(f"{function} not found")
    end = text.index("\n}", start.start())
    return start.start(), end + 2


def mutate(out: Path, build: str, function: str, old: str, new: str, why: str,
           expect: str = "different") -> dict:
    original = out / f"{build}.ptx"
    text = original.read_text()
    lo, hi = function_span(text, function)
    body = text[lo:hi]
    if body.count(old) != 1:
        raise ValueError(f"mutant of {function} in {build}: {old!r} occurs {body.count(old)}x")
    tag = "reject" if expect == "refused" else "mutant"
    same = [m for m in MUTANTS if m[1] == function and (m[5:] or ("different",))[0] == expect]
    if len(same) > 1:  # several edits of one function: numbered in MUTANTS' order
        tag += str(next(i for i, m in enumerate(same, 1) if m[2] == old and m[3] == new))
    mutant = out / f"{build.split('.')[0]}.{tag}-{function}.ptx"
    mutant.write_text(text[:lo] + body.replace(old, new) + text[hi:])
    why = f"{why} ({old.strip()} -> {new.strip()})"
    verdict = ptxas_verdict(mutant)
    if verdict is not None:  # ptxas, independent of ptxsmt, says whether the module is legal
        if (verdict == "") != (expect != "refused"):
            raise ValueError(f"{mutant.name}: ptxas says {verdict or 'legal'}, expected {expect}")
        if verdict:
            why += f"; ptxas: {verdict}"
    return {"id": f"{tag}:{function}:{build.split('.')[1]}~{tag}", "a": rel(original),
            "b": rel(mutant), "function": function, "source": "mutant", "expect": expect,
            "why": why}


def ptxas_verdict(ptx: Path) -> str | None:
    """ptxas's first error for a module ("" when it accepts it), or None without ptxas."""
    if shutil.which("ptxas") is None:
        return None
    target = re.search(r"^\.target\s+(sm_\w+)", ptx.read_text(), re.M).group(1)
    run = subprocess.run(["ptxas", "-arch", target, str(ptx), "-o", os.devnull],
                         capture_output=True, text=True)
    if run.returncode == 0:
        return ""
    first = run.stderr.strip().splitlines()[0]
    return re.sub(r"^ptxas \S+, ", "", first.replace(str(ptx), ptx.name))


def typed_to_opaque(ir: str) -> str:
    """LLVM 14 IR with typed pointers to the newer LLVM's `ptr` (it reads no typed pointers)."""
    return re.sub(r"\b(?:i\d+|half|float|double)((?: addrspace\(\d+\))?)\*", r"ptr\1", ir)


def llc14(ll: Path, opt: int, sm: str, out: Path) -> None:
    # LLVM's newer test IR has opaque pointers (`ptr %p`), which LLVM 14 reads only when told
    opaque = ["-opaque-pointers"] if re.search(r"[(,]\s*ptr\b", ll.read_text()) else []
    llc = ["llc-14", *opaque, "-march=nvptx64", f"-mcpu={sm}", f"-O{opt}", "-o", str(out)]
    if opt == 0:
        subprocess.run([*llc, str(ll)], check=True)
    else:
        optimised = subprocess.run(["opt-14", *opaque, f"-O{opt}", "-S", str(ll)], check=True,
                                   capture_output=True, text=True).stdout
        subprocess.run(llc, input=optimised, check=True, text=True)


def llvm22(ll: Path, opt: int, sm: str, out: Path) -> None:
    """In a process of its own: the LLVM inside llvmlite aborts the process on IR its NVPTX
    backend cannot select ("LLVM ERROR: Cannot select", LLVM's test IR for a newer sm)."""
    run = subprocess.run([sys.executable, __file__, "--llvm22", str(ll), str(opt), sm, str(out)],
                         capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError((run.stderr.strip() or f"exit {run.returncode}").splitlines()[-1])


def _llvm22_here(ll: Path, opt: int, sm: str, out: Path) -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    module = llvm.parse_assembly(typed_to_opaque(ll.read_text()))
    module.verify()
    machine = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(
        cpu=sm, opt=opt)
    if opt:
        tuning = llvm.create_pipeline_tuning_options(speed_level=opt)
        builder = llvm.create_pass_builder(machine, tuning)
        builder.getModulePassManager().run(module, builder)
    out.write_text(machine.emit_assembly(module))


def exported_functions(ll: Path) -> list[str]:
    """The functions a build keeps under their own name: defined, not internal."""
    module = llvm.parse_assembly(typed_to_opaque(ll.read_text()))
    return [f.name for f in module.functions
            if not f.is_declaration and f.linkage == llvm.Linkage.external]


def kernels(cu: Path) -> list[str]:
    return re.findall(r'extern "C" __global__ void (\w+)\(', cu.read_text())


def rel(path: Path) -> str:
    return str(path.resolve().relative_to(ROOT))


def build_llvm(ll: Path, tag: str, out: Path, source: str) -> list[dict]:
    files = {}
    for name, (compiler, opt, sm) in LLVM_BUILDS.items():
        target = out / f"{tag}.{name}.ptx"
        try:
            (llc14 if compiler == "llvm14" else llvm22)(ll, opt, sm, target)
        except (subprocess.CalledProcessError, RuntimeError) as e:
            print(f"{ll.name} {name}: not compiled ({str(e).splitlines()[0]})", file=sys.stderr)
            continue
        files[name] = target
    pairs = []
    for function in exported_functions(ll):
        for a, b, what in LLVM_PAIRS:
            if a in files and b in files:
                pairs.append(pair(files[a], files[b], function, source, what))
    return pairs


def build_nvcc(cu: Path, out: Path) -> list[dict]:
    files = {}
    for name, (flag, sm) in NVCC_BUILDS.items():
        target = out / f"{cu.stem}.{name}.ptx"
        subprocess.run(["nvcc", "-ptx", f"-arch={sm}", flag, str(cu), "-o", str(target)],
                       check=True)
        files[name] = target
    return [pair(files[a], files[b], k, "nvcc", what)
            for k in kernels(cu) for a, b, what in NVCC_PAIRS]


# Pairs a verifier may refuse (or call equivalent), never "different": by function.
MAY_REFUSE = {
    "indirect_call": "the callee is a parameter: the same pointer and arguments on both sides",
    "atomic_add": "an atomic read-modify-write: the same address and operand on both sides",
    "k_atomic": "an atomic read-modify-write: the same address and operand on both sides",
    "k_printf": "a call to vprintf, defined outside the module",
    "k_shfl": "a warp shuffle reads other threads' registers",
    "k_sync_shared": "threads exchange values through shared memory across a barrier",
}


def pair(a: Path, b: Path, function: str, source: str, what: str) -> dict:
    known = KNOWN_DIFFERENT.get((function, what))
    build = lambda p: p.name.split(".")[1]  # noqa: E731
    if function in MAY_REFUSE and not known:
        return {"id": f"{a.name.split('.')[0]}:{function}:{build(a)}~{build(b)}",
                "a": rel(a), "b": rel(b), "function": function, "source": source,
                "expect": "refused-ok", "why": f"{what}: {MAY_REFUSE[function]}"}
    return {"id": f"{a.name.split('.')[0]}:{function}:{build(a)}~{build(b)}",
            "a": rel(a), "b": rel(b), "function": function, "source": source,
            "expect": "different" if known else "equivalent",
            "why": known or (f"{what}: same source" + (
                ", no UB, so the same function" if source != "llvm-test" else
                "; LLVM's test IR may be poison on some inputs, which may differ"))}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--llvm22"]:  # one build, in the child process `llvm22` starts
        _llvm22_here(Path(argv[1]), int(argv[2]), argv[3], Path(argv[4]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--llvm-tests", type=Path, help="also compile every .ll file in DIR")
    args = ap.parse_args(argv)
    for tool in ("llc-14", "opt-14", "nvcc"):
        if shutil.which(tool) is None:
            print(f"error: {tool} not found", file=sys.stderr)
            return 2
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ptx"):
        old.unlink()
    pairs = build_llvm(SRC / "scalar.ll", "scalar", out, "llvm-ir")
    pairs += build_llvm(SRC / "extra.ll", "extra", out, "llvm-ir")
    pairs += build_llvm(SRC / "nvvm.ll", "nvvm", out, "llvm-ir")
    pairs += build_llvm(SRC / "more.ll", "more", out, "llvm-ir")
    pairs += build_nvcc(SRC / "kernels.cu", out)
    pairs += build_nvcc(SRC / "more.cu", out)
    pairs += [mutate(out, *m) for m in MUTANTS]
    if args.llvm_tests:
        with tempfile.TemporaryDirectory() as tmp:
            for ll in sorted(args.llvm_tests.glob("*.ll")):
                lines = [t for t in ll.read_text().splitlines() if not t.startswith("; RUN")]
                local = Path(tmp) / ll.name
                local.write_text("\n".join(lines) + "\n")
                pairs += build_llvm(local, f"llvmtest-{ll.stem}", out, "llvm-test")
    with (out / "manifest.jsonl").open("w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    print(f"{len(pairs)} pairs in {rel(out / 'manifest.jsonl')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
