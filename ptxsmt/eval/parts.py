"""A batch answered by several processes, the answers in the input's order.

Each line is answered on its own, so any process may answer any line. The lines are
dealt by their instruction text: all the lines of a text go to one process, which
parses, compiles and runs that text once (cut by line ranges, every process met
nearly every text of a mixed batch, and paid for each). A window that dealing by
text would leave lopsided (a replay of one instruction) is dealt in line ranges, so
it still runs on every process. `jobs - 1` processes are forked once and fed a
window of lines at a time while this one answers its own share, so memory stays
flat and a stream (stdin) is dealt too: each is sent its share of a window as one
block of bytes, and the process of each line of the window (a byte each: it numbers
its lines from them). Input too small to repay a fork is answered here, whole; a
regular file big enough forks before it is read. A process that fails leaves its
share to this one: a failure costs time, never an answer.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator
from itertools import chain, compress, count, islice
from operator import itemgetter
from typing import TYPE_CHECKING

from ..sem.options import DEFAULT, Options
from . import cache
from .jsonl import Block, answer_block, collector_paused, render_jsonl

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

WINDOW = 1 << 17  # lines dealt, answered and written at a time
MIN_FORK_LINES = 8192  # below this, a process costs more than it saves
MIN_FORK_BYTES = 1 << 20  # a regular file this big (about as many lines) forks first


def render_file(f: Iterable[bytes], opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch (see `render_jsonl`), in `jobs` processes where the input
    is big enough and the platform forks, else in this one."""
    with collector_paused():  # in the processes forked here too
        yield from _render(iter(f), _file_left(f), opts, jobs)


def _file_left(f: Iterable[bytes]) -> int | None:
    """The bytes left to read of a regular file; None for a stream (a pipe, stdin) or
    anything else."""
    try:
        fd = f.fileno()  # type: ignore[attr-defined]
        if stat.S_ISREG((st := os.fstat(fd)).st_mode):
            return st.st_size - f.tell()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        pass
    return None


def _render(lines: Iterator[bytes], left: int | None, opts: Options,
            jobs: int) -> Iterator[Block]:
    windows = _windows(lines)
    workers: list[_Worker] = []
    try:
        forks = jobs > 1 and hasattr(os, "fork")
        if forks and left is not None and left >= MIN_FORK_BYTES:
            # before reading: a line read here and shared with a worker would be copied,
            # page by page, the first time this process touched it after the fork
            workers = [_Worker(k, opts) for k in range(1, jobs)]
        first = next(windows, [])
        if forks and not workers and len(first) >= MIN_FORK_LINES:
            workers = [_Worker(k, opts) for k in range(1, jobs)]
        if not workers:
            yield from render_jsonl(chain(first, chain.from_iterable(windows)), opts, WINDOW)
            return
        number = 1
        for window in chain([first], windows):
            yield _answer_window(window, number, workers, opts)
            number += len(window)
    except BaseException:  # interrupted: no process outlives the run
        for worker in workers:
            worker.stop(kill=True)
        raise
    for worker in workers:
        worker.stop()


def _windows(lines: Iterator[bytes]) -> Iterator[list[bytes]]:
    """The lines, WINDOW at a time; a last window under a quarter of that joins the one
    before it (a text met in two windows is grouped twice)."""
    window = list(islice(lines, WINDOW))
    while window:
        tail = list(islice(lines, WINDOW // 4))
        if len(tail) < WINDOW // 4:
            yield window + tail
            return
        yield window
        window = tail + list(islice(lines, WINDOW - len(tail)))


def _answer_window(window: list[bytes], number: int, workers: list[_Worker],
                   opts: Options) -> Block:
    """The window's answers (its first line is line `number`): each worker is sent its
    share and answers it while this process answers its own."""
    owners = deal(window, len(workers) + 1)
    for worker in workers:
        worker.send((number, owners, share(window, owners, worker.rank)))
    answers = [answer_block(share(window, owners, 0), numbers(owners, 0, number), opts)]
    for worker in workers:
        answers.append(worker.receive() or
                       answer_block(share(window, owners, worker.rank),
                                    numbers(owners, worker.rank, number), opts))
    queues = [iter(texts) for texts, _ in answers]
    texts = list(filter(None, map(next, map(queues.__getitem__, owners))))  # no blank line
    lines = len(texts)
    texts.append("")  # the last line's newline, without copying the whole block again
    return "\n".join(texts).encode() if lines else b"", lines, any(f for _, f in answers)


def share(window: list[bytes], owners: bytes, rank: int) -> bytes:
    """The lines of the window process `rank` answers, as one block, each line ending
    in a newline (the input's last may have none)."""
    block = b"".join(compress(window, _mine(owners, rank)))
    return block if block.endswith(b"\n") or not block else block + b"\n"


def numbers(owners: bytes, rank: int, number: int) -> list[int]:
    """The numbers of the lines of process `rank`'s share (the window's first is line
    `number`)."""
    return list(compress(count(number), _mine(owners, rank)))


def _mine(owners: bytes, rank: int) -> bytes:
    """1 for each line of process `rank`, 0 for the others' (one C pass)."""
    return owners.translate(bytes(rank) + b"\x01" + bytes(255 - rank))


def deal(window: list[bytes], n: int) -> bytes:
    """The process (0 .. n-1) of each line: by a hash of its instruction text (the bytes
    of the `"ptx"` value as written). A window that this deals unevenly (a few texts
    with most of the lines: a replay of one instruction) is dealt in ranges of lines.
    Process 0 (this one) takes a bigger share: it starts first."""
    cuts = _cuts(n)
    keys = list(map(_TEXT, map(_PTX_VALUE.match, window)))  # C loops, no Python a line
    owner_of = {key: bisect_right(cuts, zlib.crc32(key or b"") / 2**32) for key in set(keys)}
    owners = bytes(map(owner_of.__getitem__, keys))
    shares = [owners.count(k) / len(window) for k in range(n)]
    if any(share > 1.5 * (high - low) for share, low, high in zip(shares, [0, *cuts], cuts + [1])):
        return bytes(bisect_right(cuts, k / len(window)) for k in range(len(window)))
    return owners


# the text (only to deal: a `\"` cuts it), or None (the empty alternative always matches)
_PTX_VALUE = re.compile(rb'.*?"ptx"\s*:\s*"([^"]*)|')
_TEXT = itemgetter(1)
PARENT_SHARE = 1.1  # of a forked process's: the others wait for the window this one reads
# and sends them (merging and writing wait for all of them, this one included)


def _cuts(n: int) -> list[float]:
    """Where each process's share of [0, 1) ends, the last one's left out."""
    total = PARENT_SHARE + n - 1
    return [(PARENT_SHARE + k) / total for k in range(n - 1)]


class _Worker:
    """A forked process that answers the shares it is sent until it is sent None."""

    def __init__(self, rank: int, opts: Options):
        from multiprocessing import Pipe  # only a batch that forks needs it

        self.rank = rank
        self.conn, theirs = Pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns, never runs its parent's cleanup
            self.conn.close()
            _serve(theirs, rank, opts)
        theirs.close()
        self.alive = True

    def send(self, message: tuple[int, bytes, bytes]) -> None:
        """Its share of a window: (the window's first line's number, the process of each
        of the window's lines, the share's lines as one block)."""
        try:
            self.conn.send(message)
        except (OSError, ValueError):
            self.alive = False

    def receive(self) -> tuple[list[str | None], bool] | None:
        """Its answers to its share of the last window (in order, "" for a blank line),
        or None where it failed (then it is stopped)."""
        if self.alive:
            try:
                texts, failed = self.conn.recv()
                return texts.split("\n"), failed
            except (EOFError, OSError):
                pass
        self.stop(kill=True)
        return None

    def stop(self, kill: bool = False) -> None:
        """Tell it to finish (it writes its new programs to the cache and leaves), or
        end it now."""
        if self.pid <= 0:
            return
        if self.alive and not kill:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                kill = True
        self.alive = False
        self.conn.close()
        try:
            if kill:
                os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass  # gone already
        self.pid = 0


def _serve(conn: Connection, rank: int, opts: Options) -> None:
    code = 2  # any failure: the parent answers the share itself
    try:
        while (sent := conn.recv()) is not None:
            number, owners, block = sent
            texts, failed = answer_block(block, numbers(owners, rank, number), opts)
            conn.send(("\n".join(text or "" for text in texts), failed))
        code = 0
    finally:
        cache.flush()  # this process's new programs (it leaves without atexit)
        os._exit(code)
