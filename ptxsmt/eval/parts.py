"""A batch file answered in parts, a process a part, the answers in the file's order.

Each line is answered on its own, so a file cut at line boundaries answers part by
part exactly as it does whole. `jobs - 1` forked processes each answer one part into
a temporary file while this process answers the first; their answers follow its own,
in order. Only a regular file big enough to repay a fork is cut (stdin and small files
are answered here, whole), and only where the platform forks. A part whose process
fails is answered again here: a part costs time, never an answer.
"""

from __future__ import annotations

import os
import signal
import stat
import tempfile
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from ..sem.options import DEFAULT, Options
from .jsonl import Block, render_jsonl

MIN_PART_BYTES = 1 << 21  # below ~8k lines a part, a process costs more than it saves
# A part's lines a chunk at a time: twice a whole file's chunk, as each process holds only
# its part (a text's lines in one chunk are grouped once; 10% faster at 150k lines).
PART_CHUNK = 1 << 17
_READ = 1 << 20


class Part(NamedTuple):
    start: int  # byte offsets: the first byte of its first line, one past its last line
    end: int
    line: int  # the number of its first line


def render_file(f: BinaryIO, opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch file (see `render_jsonl`), in `jobs` processes where the
    file is big enough and the platform forks, else in this one."""
    parts = split(f, jobs) if jobs > 1 and hasattr(os, "fork") else []
    if len(parts) < 2:
        yield from render_jsonl(f, opts)
        return
    children: list[tuple[int, BinaryIO, Part]] = []
    try:
        for part in parts[1:]:
            children.append((*_fork(f.name, part, opts), part))
        yield from render_jsonl(_lines(f.name, parts[0]), opts, PART_CHUNK, parts[0].line)
        while children:
            pid, out, part = children.pop(0)
            code = _exit_code(os.waitpid(pid, 0)[1])
            if code in (0, 1):  # answered: 1 says a line of it is an error
                yield from _blocks(out)
                yield b"", 0, code == 1
            else:  # the process failed: answer its part here
                yield from render_jsonl(_lines(f.name, part), opts, PART_CHUNK, part.line)
            out.close()
    finally:  # interrupted: no process outlives the run
        for pid, out, _ in children:
            _stop(pid)
            out.close()


def split(f: BinaryIO, jobs: int) -> list[Part]:
    """`jobs` parts of a regular file, cut at line boundaries, or [] where it is not one
    or is too small to be worth it."""
    try:
        info = os.fstat(f.fileno())
        begin = f.tell()
    except (OSError, AttributeError, ValueError):  # not a file with a descriptor
        return []
    if not stat.S_ISREG(info.st_mode) or not os.path.isfile(getattr(f, "name", "")):
        return []
    size = info.st_size - begin
    jobs = min(jobs, size // MIN_PART_BYTES)
    if jobs < 2:
        return []
    with open(f.name, "rb") as g:
        cuts = [begin]
        for k in range(1, jobs):
            g.seek(begin + k * size // jobs - 1)
            g.readline()  # to the start of the next line
            cuts.append(g.tell())
        cuts.append(info.st_size)
        cuts = sorted(set(cuts))
        g.seek(begin)
        lines, numbers = 1, []
        for start in cuts[:-1]:
            while g.tell() < start:
                lines += g.read(min(_READ, start - g.tell())).count(b"\n")
            numbers.append(lines)
    return [Part(start, end, line) for start, end, line in zip(cuts, cuts[1:], numbers)
            if end > start]


def _lines(path: str, part: Part) -> Iterator[bytes]:
    """The lines of one part, read through a handle of its own (a forked process shares
    its parent's file offsets)."""
    with open(path, "rb") as g:
        g.seek(part.start)
        left = part.end - part.start
        for line in g:
            left -= len(line)
            yield line
            if left <= 0:
                return


def _fork(path: str, part: Part, opts: Options) -> tuple[int, BinaryIO]:
    """A process answering `part` into a temporary file: (its pid, the file). It exits
    0 when every line was answered, 1 when a line is an error, anything else on failure."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 (the caller reads it, then closes it)
    pid = os.fork()
    if pid == 0:  # the child: never returns, never runs its parent's cleanup
        code = 2
        try:
            failed = False
            for data, _, bad in render_jsonl(_lines(path, part), opts, PART_CHUNK, part.line):
                out.write(data)
                failed = failed or bad
            out.flush()
            code = 1 if failed else 0
        finally:
            os._exit(code)
    return pid, out


def _blocks(out: BinaryIO) -> Iterator[Block]:
    out.seek(0)
    while data := out.read(_READ):
        yield data, data.count(b"\n"), False


def _exit_code(status: int) -> int:
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass  # gone already
