"""What the two corpus generators (scripts/sweep_corpus.py, scripts/heldout_corpus.py)
share: planting one mutation in the -O2 PTX, writing each pair and its planted twin,
and the label each pair gets, audited by ptxas.

    python scripts/planted_pairs.py DIR [--out MANIFEST]

audits the planted pairs of a corpus already written (DIR/manifest.jsonl as an older
generator wrote it) and writes the manifest with its labels (to DIR/manifest.jsonl, or
MANIFEST).

The labels. A pair as compiled is one IR function compiled two ways: "equivalent" (the
compilers' correctness is the evidence). A planted twin changes one instruction of the
-O2 side, but the mutation may be masked (dead, or absorbed by what reads it), so each
is audited: `ptxas -c -O3` assembles its -O2 side and the unplanted -O2 side and
`nvdisasm -c` lists both. The manifest row of a planted twin says

- `"masked": true`, `"expect": "equivalent"`: the SASS is identical (but for addresses,
  encodings and register-reuse hints): ptxas removed or absorbed the mutation. Evidence,
  not proof (a ptxas bug could make it so).
- `"masked": false`, `"expect": "different"`: the SASS differs: ptxas kept the mutation.
  Not proof that it is live either: a compare made unordered on a value that is never a
  NaN keeps its instruction and changes nothing.
- `"masked": null`, `"expect": "different"` (the label as planted, unaudited): ptxas or
  nvdisasm missing, or ptxas refused a side (llc-14 writes sm_80's `max.NaN` into sm_70
  code).

and `"audit"` says which, with the ptxas release. A verdict against such a label is a
finding to be looked at (scripts/check_results.py lists them).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ptxsmt.ptxasdiff.tools import find_tool, ptxas_version

PLANTED = "-planted"  # a planted twin's name: its pair's name and this


# ---- planting ----------------------------------------------------------------------------

# ---- the two compilers: -O0 against -O2 of one IR function ------------------------------

def compile_llc14(ir: str, target: str) -> tuple[str, str]:
    llc = ["llc-14", "-march=nvptx64", f"-mcpu={target}"]
    o0 = subprocess.run([*llc, "-O0"], input=ir, text=True, check=True,
                        capture_output=True).stdout
    optimised = subprocess.run(["opt-14", "-O2", "-S"], input=ir, text=True, check=True,
                               capture_output=True).stdout
    o2 = subprocess.run([*llc, "-O2"], input=optimised, text=True, check=True,
                        capture_output=True).stdout
    return o0, o2


def compile_llvm22(ir: str, target: str) -> tuple[str, str]:
    """llvmlite's LLVM (22): no passes and codegen -O0; its -O2 pipeline and codegen -O2."""
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    machine_for = llvm.Target.from_triple("nvptx64-nvidia-cuda")
    out = []
    for level in (0, 2):
        module = llvm.parse_assembly(ir)
        module.triple = "nvptx64-nvidia-cuda"
        machine = machine_for.create_target_machine(cpu=target, opt=level)
        if level:
            passes = llvm.create_pass_builder(
                machine, llvm.create_pipeline_tuning_options(speed_level=level))
            passes.getModulePassManager().run(module, passes)
        out.append(machine.emit_assembly(module))
    return out[0], out[1]


COMPILE = {"llc14": compile_llc14, "llvm22": compile_llvm22}


def plant(ptx: str, rng: random.Random, mutations) -> tuple[str, str] | None:
    """`ptx` with one instruction changed, and the mutation's name: a mutation of
    `mutations` ((name, pattern of an instruction line, replacement)) that applies and an
    occurrence of it, both picked by `rng`; None if none applies."""
    lines = ptx.split("\n")
    applies = [(name, pattern, replacement, where) for name, pattern, replacement in mutations
               if (where := [i for i, line in enumerate(lines) if pattern.search(line)
                             and not line.lstrip().startswith("//")])]
    if not applies:
        return None
    name, pattern, replacement, where = rng.choice(applies)
    i = rng.choice(where)
    lines[i] = pattern.sub(replacement, lines[i], count=1)
    return "\n".join(lines), name


# ---- SASS: the audit's evidence ------------------------------------------------------------

_COMMENT = re.compile(r"/\*.*?\*/")  # nvdisasm's addresses (/*0040*/) and encodings
_REUSE = re.compile(r"\.reuse\b")    # an operand-cache hint: no value changes with it
_ERROR = re.compile(r", line (\d+); (?:error|fatal)\s*: (.*)")


def normalise(sass: str) -> str:
    """nvdisasm's listing without what moves when no instruction changes: addresses,
    encodings, register-reuse hints and spacing."""
    lines = (" ".join(_REUSE.sub("", _COMMENT.sub("", line)).split())
             for line in sass.splitlines())
    return "\n".join(line for line in lines if line)


class Refused(Exception):
    """ptxas did not assemble a side, or kept no code of the function: no evidence."""


@dataclass(frozen=True)
class Assembler:
    """ptxas and nvdisasm, and the targets this ptxas assembles."""

    ptxas: str
    nvdisasm: str
    release: str        # "V13.0.88"
    targets: tuple[int, ...]  # the sm_NN it takes, ascending

    def arch(self, ptx: str) -> str:
        """The oldest target ptxas takes at or above the PTX's `.target` (CUDA 13 dropped
        sm_70: sm_70 code is assembled for sm_75)."""
        wanted = int(m[1]) if (m := re.search(r"\.target\s+sm_(\d+)", ptx)) else 0
        newer = [t for t in self.targets if t >= wanted]
        if not newer:
            raise Refused(f"ptxas: no target from sm_{wanted} up")
        return f"sm_{newer[0]}"

    def sass(self, ptx: str, function: str) -> str:
        """The normalised SASS of `function` (`-c`: a `.func` nothing calls is kept)."""
        with tempfile.TemporaryDirectory(prefix="planted_") as tmp:
            source, cubin = Path(tmp) / "f.ptx", Path(tmp) / "f.cubin"
            source.write_text(ptx)
            run = subprocess.run([self.ptxas, "-c", "-O3", "-arch", self.arch(ptx),
                                  str(source), "-o", str(cubin)],
                                 capture_output=True, text=True, check=False, timeout=600)
            if run.returncode != 0:
                said = _ERROR.search(run.stdout + run.stderr)
                raise Refused(f"ptxas: line {said[1]}: {said[2].strip()}" if said
                              else f"ptxas: exit status {run.returncode}")
            listed = subprocess.run([self.nvdisasm, "-c", str(cubin)], capture_output=True,
                                    text=True, check=False, timeout=600)
        if listed.returncode != 0:
            raise Refused(f"nvdisasm: {(listed.stderr.strip() or 'failed').splitlines()[0]}")
        listing = listed.stdout
        if f".text.{function}:" not in listing:
            raise Refused(f"ptxas kept no code of {function}")
        return normalise(listing)


def find_assembler() -> Assembler | None:
    """ptxas and nvdisasm on PATH or in the nvidia pip packages; None if either is missing."""
    ptxas, nvdisasm = find_tool("ptxas"), find_tool("nvdisasm")
    if not (ptxas and nvdisasm):
        return None
    helps = subprocess.run([ptxas, "--help"], capture_output=True, text=True,
                           check=False).stdout
    release = ptxas_version(ptxas).rsplit(" ", 1)[-1]
    return Assembler(ptxas, nvdisasm, release,
                     tuple(sorted({int(t) for t in re.findall(r"'sm_(\d+)'", helps)})))


def audit(plain: str, planted: str, assembler: Assembler | None,
          function: str = "f") -> dict:
    """The label fields of a planted twin: `masked`, `audit` and `expect` (the module's
    docstring)."""
    if assembler is None:
        return {"masked": None, "audit": "not audited: ptxas or nvdisasm not found",
                "expect": "different"}
    sass = {}
    for side, text in (("unplanted", plain), ("planted", planted)):
        try:
            sass[side] = assembler.sass(text, function)
        except Refused as e:
            return {"masked": None, "audit": f"not audited: the {side} -O2 side: {e}",
                    "expect": "different"}
    how = f"ptxas {assembler.release} -O3 -arch {assembler.arch(plain)}"
    if sass["unplanted"] == sass["planted"]:
        return {"masked": True, "audit": f"{how}: identical SASS: masked (evidence, not proof)",
                "expect": "equivalent"}
    return {"masked": False, "audit": f"{how}: the SASS differs: kept (not proof it is live)",
            "expect": "different"}


# ---- writing a corpus --------------------------------------------------------------------

class Corpus:
    """A corpus being written into `out`: NAME.O0.ptx and NAME.O2.ptx of each pair, the
    planted twin's NAME-planted.O2.ptx, and on `save` pairs.jsonl (`ptxsmt equiv --batch`
    lines) and manifest.jsonl (one labelled row a line, the same order)."""

    def __init__(self, out: Path, assembler: Assembler | None):
        self.out, self.assembler = out, assembler
        self.batch: list[dict] = []
        self.manifest: list[dict] = []
        out.mkdir(parents=True, exist_ok=True)

    def add(self, name: str, o0: str, o2: str, planted: tuple[str, str] | None,
            **fields) -> None:
        """A pair (the manifest row: name, `fields`, planted, expect) and its planted twin
        (`planted`: its -O2 text and the mutation's name) if any."""
        (self.out / f"{name}.O0.ptx").write_text(o0)
        self._row(name, name, o2, {**fields, "planted": None, "expect": "equivalent"})
        if planted:
            text, mutation = planted
            self._row(name, name + PLANTED, text, {**fields, "planted": mutation,
                                                   **audit(o2, text, self.assembler)})

    def _row(self, pair: str, stem: str, o2: str, row: dict) -> None:
        (self.out / f"{stem}.O2.ptx").write_text(o2)
        self.batch.append({"a": f"{pair}.O0.ptx", "b": f"{stem}.O2.ptx", "function": "f"})
        self.manifest.append({"name": stem, **row})

    def save(self) -> int:
        for file, rows in (("pairs.jsonl", self.batch), ("manifest.jsonl", self.manifest)):
            (self.out / file).write_text("".join(json.dumps(r) + "\n" for r in rows))
        return len(self.batch)


def reaudit(folder: Path, assembler: Assembler | None) -> list[dict]:
    """The rows of `folder`'s manifest, each planted one labelled afresh."""
    rows = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    labelled = []
    for row in rows:
        if row.get("planted"):
            plain = (folder / f"{row['name'].removesuffix(PLANTED)}.O2.ptx").read_text()
            planted = (folder / f"{row['name']}.O2.ptx").read_text()
            fields = {k: v for k, v in row.items() if k not in ("masked", "audit", "expect")}
            row = {**fields, **audit(plain, planted, assembler)}
        labelled.append(row)
    return labelled


def main() -> None:
    ap = argparse.ArgumentParser(description="Audit a corpus's planted pairs with ptxas.")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, help="the labelled manifest (default: in place)")
    args = ap.parse_args()
    if not (args.folder / "manifest.jsonl").is_file():
        sys.exit(f"{args.folder}: no manifest.jsonl")
    assembler = find_assembler()
    if assembler is None:
        sys.exit("needs ptxas and nvdisasm (the CUDA toolkit, or pip's nvidia-cuda-nvcc "
                 "and nvidia-cuda-nvdisasm)")
    rows = reaudit(args.folder, assembler)
    out = args.out or args.folder / "manifest.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    masked = sum(r.get("masked") is True for r in rows)
    print(f"{sum(bool(r.get('planted')) for r in rows)} planted pairs, {masked} masked: {out}")


if __name__ == "__main__":
    main()
