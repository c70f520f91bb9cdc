#!/usr/bin/env python3
"""ptxsmt as a Compiler Explorer tool (docs/serve.md, Compiler Explorer).

Compiler Explorer runs a tool as `EXE [the tool's arguments] SOURCE`, in SOURCE's folder.
The PTX checked is SOURCE itself in a PTX pane; in a CUDA (or LLVM IR) pane it is the
compiler's output beside SOURCE (output.s: nvcc -ptx, clang --cuda-device-only -S),
copied to output.ptx in that (Compiler Explorer's temporary) folder.

The tool's arguments pick the command, `check` where none is given:
  check [OPTIONS]                    ptxsmt check PTX
  eval --function F NAME=VALUE ...   ptxsmt eval PTX --function F ...
  equiv --function F --function-b G  ptxsmt equiv PTX PTX ...: two functions of the pane

$PTXSMT names the ptxsmt to run (default: `ptxsmt` on PATH).
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

COMMANDS = ("check", "eval", "equiv")
OUTPUT = "output.s"  # Compiler Explorer's name for a compiler's assembly output


def ptx_of(source: Path) -> Path:
    if source.suffix == ".ptx":
        return source
    output = source.parent / OUTPUT
    if output.is_file():  # under a .ptx name, which `eval` and `equiv` read as a module
        ptx = output.with_suffix(".ptx")
        ptx.write_bytes(output.read_bytes())
        return ptx
    sys.exit(f"ptxsmt_ce: no PTX: {source.name} is not a .ptx file and the compiler left no "
             f"{OUTPUT} beside it (compile to PTX: nvcc -ptx, or clang --cuda-device-only -S)")


def command(args: list[str]) -> list[str]:
    """The ptxsmt command line for `[COMMAND] [OPTIONS...] SOURCE`."""
    if not args:
        sys.exit("ptxsmt_ce: Compiler Explorer gives the source file as the last argument")
    *options, source = args
    name = options.pop(0) if options and options[0] in COMMANDS else "check"
    ptx = str(ptx_of(Path(source)))
    files = [ptx, ptx] if name == "equiv" else [ptx]
    if name == "equiv" and "--function" not in " ".join(options):
        sys.exit("ptxsmt_ce: equiv compares two functions of the pane: give --function F "
                 "--function-b G")
    return [*shlex.split(os.environ.get("PTXSMT", "ptxsmt")), name, *files, *options]


if __name__ == "__main__":
    argv = command(sys.argv[1:])
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        sys.exit(f"ptxsmt_ce: cannot run {argv[0]}: {e.strerror}")
