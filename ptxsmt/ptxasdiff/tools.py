"""Finding and running NVIDIA's tools: ptxas, nvdisasm/cuobjdump."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class DiffError(Exception):
    """Bad input or a missing tool: the whole run cannot go on."""


class ReadbackError(DiffError):
    """The SASS could not be read back unambiguously (a guard failed, a store is missing)."""

    kernel: str | None = None  # the PTX and SASS it happened in, when known
    sass: str | None = None


# ---- tools ------------------------------------------------------------------------------


def find_tool(name: str) -> str | None:
    """An NVIDIA tool on PATH, else in the `nvidia-*` pip packages (nvidia/cu*/bin), else
    under $CUDA_HOME / /usr/local/cuda."""
    found = shutil.which(name)
    if found:
        return found
    dirs: list[Path] = []
    try:
        import nvidia  # namespace package of the nvidia-cuda-* wheels

        for root in nvidia.__path__:
            dirs += sorted(Path(root).glob("*/bin"), reverse=True)
    except ImportError:
        pass
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            dirs.append(Path(os.environ[env]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    for d in dirs:
        p = d / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def resolve_ptxas(ptxas: str = "ptxas") -> str:
    path = shutil.which(ptxas) if os.sep not in ptxas else (ptxas if os.access(ptxas, os.X_OK)
                                                           else None)
    if path is None and ptxas == "ptxas":
        path = find_tool("ptxas")
    if path is None:
        raise DiffError(f"ptxas not found ({ptxas!r}); install the CUDA toolkit or "
                        "pip install nvidia-cuda-nvcc, or pass --ptxas PATH")
    return path


def resolve_disassembler() -> list[str]:
    """The command that prints SASS with instruction encodings for a cubin."""
    if nvd := find_tool("nvdisasm"):
        return [nvd, "-c", "-hex"]
    if cob := find_tool("cuobjdump"):
        return [cob, "-sass"]
    raise DiffError("neither nvdisasm nor cuobjdump found; "
                    "pip install nvidia-cuda-nvdisasm (or nvidia-cuda-cuobjdump)")


def ptxas_version(ptxas: str) -> str:
    try:
        out = subprocess.run([ptxas, "--version"], capture_output=True, text=True,
                             check=False, timeout=60).stdout
    except OSError as e:
        raise DiffError(f"cannot run {ptxas}: {e}") from None
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("Cuda compilation tools"):
            return line
    if not lines:
        raise DiffError(f"{ptxas} --version printed nothing; is it ptxas?")
    return lines[-1]

# ---- assembling -------------------------------------------------------------------------

_MSG = re.compile(r"^ptxas .*?, line (\d+); (error|fatal|warning)\s*: (.*)$")


@dataclass(frozen=True)
class Message:
    """A ptxas message that names a source line."""

    line: int
    severity: str  # "error", "fatal" (a syntax error: nothing after it was checked), "warning"
    text: str


@dataclass
class PtxasRun:
    """What one ptxas run said."""

    status: int  # exit status; negative: killed by that signal
    messages: list[Message]  # those naming a source line, in the order printed
    loose: list[str]  # the other lines printed, but for "... aborted due to errors"
    output: str  # everything printed, stdout then stderr

    @property
    def errors(self) -> list[Message]:
        return [m for m in self.messages if m.severity != "warning"]

    @property
    def failure(self) -> str:
        """Why it failed, in the words no source line carries."""
        crash = [f"ptxas crashed (signal {-self.status})"] if self.status < 0 else []
        return "; ".join(crash + self.loose) or f"exit status {self.status}"


def run_ptxas(text: str, ptxas: str, arch: str, opt: int = 3,
              cubin: Path | None = None) -> PtxasRun:
    """Assemble `text` with `ptxas -O<opt> -arch <arch>`, writing the cubin to `cubin` (or
    nowhere)."""
    with tempfile.TemporaryDirectory(prefix="ptxsmt_ptxas_") as tmp:
        src = Path(tmp) / "k.ptx"
        src.write_text(text)
        out = str(cubin) if cubin is not None else os.devnull
        try:
            proc = subprocess.run([ptxas, f"-O{opt}", "-arch", arch, str(src), "-o", out],
                                  capture_output=True, text=True, check=False, timeout=900)
        except subprocess.TimeoutExpired:
            raise DiffError("ptxas took over 900 s on one kernel") from None
    output = proc.stdout + proc.stderr
    messages: list[Message] = []
    loose: list[str] = []
    for line in output.splitlines():
        if m := _MSG.match(line.strip()):
            messages.append(Message(int(m.group(1)), m.group(2), m.group(3).strip()))
        elif line.strip() and "aborted due to errors" not in line:
            loose.append(line.strip())
    return PtxasRun(proc.returncode, messages, loose, output)


@dataclass
class Assembled:
    sass: str | None  # None when ptxas refused the kernel
    errors: dict[int, str]  # source line -> its first error
    loose: str = ""  # messages without a line number


def assemble(text: str, ptxas: str, disasm: Sequence[str], arch: str, opt: int = 3) -> Assembled:
    with tempfile.TemporaryDirectory(prefix="ptxsmt_diff_") as tmp:
        cubin = Path(tmp) / "k.cubin"
        run = run_ptxas(text, ptxas, arch, opt, cubin)
        if run.status != 0:
            errors: dict[int, str] = {}
            for m in run.errors:
                errors.setdefault(m.line, m.text)
            return Assembled(None, errors, run.failure)
        dis = subprocess.run([*disasm, str(cubin)], capture_output=True, text=True, check=False)
        if dis.returncode != 0:
            raise DiffError(f"{Path(disasm[0]).name} failed: {dis.stderr.strip()[:300]}")
        return Assembled(dis.stdout, {})
