"""A batch answered: read a window of lines, answer it, write the answers in order.

With --jobs N, a large window is answered in N shares: this process answers the first,
a worker of a standard process pool each other (its lines sent as read, its answers back
as written), where the cache knows the share's texts. A window that brings many new texts
is answered here whole, its texts compiled by every process, a share each. A pool never
changes an answer, and a worker that fails costs only time.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from itertools import islice
from operator import attrgetter

from ..eval.values import outputs_json
from ..isa import source
from ..isa.errors import PtxError
from ..sem.options import DEFAULT, Options
from ..solver import die_with, ignore_interrupts
from . import cache, programs
from .engine import answered, evaluate_many
from .lines import Line, TooLong, answer_object, answers, read_lines

WINDOW = 1 << 18  # lines read, answered and written at a time (a held-out batch in one)
MIN_POOL_TEXTS = 100  # texts to compile: with fewer, starting workers costs more than it saves
SHARED_LINES = 20_000  # a window's lines worth sharing: fewer are answered before a worker starts
Block = tuple[bytes, int, bool]  # answers (each ending in a newline), how many, any error


def render(lines: Iterable[bytes], opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch (a binary file, or its lines), a block per share of a window."""
    workers, first = _Workers(jobs, opts), 1
    try:
        for window in _windows(lines):
            yield from _window_blocks(first, window, opts, workers)
            first += len(window)
    except BaseException:  # Ctrl-C, a closed output: no waiting for the workers
        if workers.pool:
            workers.pool.shutdown(wait=False, cancel_futures=True)
        raise
    if workers.pool:
        workers.pool.shutdown()


def _window_blocks(first: int, window: list[bytes], opts: Options,
                   workers: _Workers) -> Iterator[Block]:
    """A window's answers, a block per share (the first share's decides whether the window
    is warm enough to share)."""
    jobs = workers.jobs if len(window) >= SHARED_LINES else 1
    bounds = [len(window) * k // jobs for k in range(jobs + 1)]
    shares = [(first + start, window[start:end]) for start, end in zip(bounds[1:], bounds[2:])]
    futures = [workers.submit(answer_warm_share, start, raws, opts) for start, raws in shares]
    read = read_lines(first, window[:bounds[1]], opts)
    if shares and not _warm(read, opts):  # the workers' shares come back unanswered
        read += read_lines(first + len(read), window[len(read):], opts)
        shares = []
    yield _block(read, outputs(read, opts, workers.compile_new))
    for (start, raws), future in zip(shares, futures):
        block = None
        with suppress(Exception):  # the worker failed (or died): its share is answered here
            block = future.result()
        if block is None:
            read = read_lines(start, raws, opts)
            block = _block(read, outputs(read, opts, workers.compile_new))
        yield block


def answer_warm_share(first: int, raws: list[bytes], opts: Options) -> Block | None:
    """A share's answers (its lines numbered from `first`); None where the cache lacks
    many of its texts."""
    read = read_lines(first, raws, opts)
    return _block(read, outputs(read, opts)) if _warm(read, opts) else None


def _warm(read: list[Line], opts: Options) -> bool:
    texts = {line.ptx for line in read if line.opts is opts and line.ptx is not None}
    return len(programs.missing(list(texts), opts)) < MIN_POOL_TEXTS


def _block(read: list[Line], got: list[dict | str]) -> Block:
    return answers(read, got), len(got), str in map(type, got)  # errors are strings


class _Workers:
    """A standard process pool of `jobs` - 1 workers, started when there is first work."""

    def __init__(self, jobs: int, opts: Options):
        self.jobs, self.opts, self.pool = jobs, opts, None

    def submit(self, fn: Callable, *args):
        """fn(*args)'s future in a worker, or None where the pool is broken."""
        if self.pool is None:  # imported only where there is work to share
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(self.jobs - 1, initializer=_started, initargs=(
                os.getpid(), source.limit(), cache.store() is not None))
        with suppress(Exception):
            return self.pool.submit(fn, *args)
        return None

    def compile_new(self, texts: list[str]) -> None:
        if self.jobs > 1 and len(texts) >= MIN_POOL_TEXTS:
            programs.compile_shared(self.submit, texts, self.opts, self.jobs)


def _windows(f: Iterable[bytes]) -> Iterator[list[bytes]]:
    """The input's lines, WINDOW at a time; a file's read within the input limit."""
    lines = _bounded(f.readline, source.limit()) if hasattr(f, "readline") else iter(f)
    while window := list(islice(lines, WINDOW)):
        yield window


def _bounded(readline: Callable[[int], bytes], most: int) -> Iterator[bytes]:
    """A file's lines, each at most `most` bytes: a longer one is a TooLong in its place,
    and reading goes on after its line end (the input ends with a line past twice the
    limit: /dev/zero has no line end)."""
    while line := readline(most + 1):
        if line.endswith(b"\n") or len(line) <= most:
            yield line
            continue
        size = len(line)
        while not line.endswith(b"\n") and size <= 2 * most and (line := readline(most + 1)):
            size += len(line) - line.endswith(b"\n")
        yield TooLong()
        if size > 2 * most:
            return


def _started(parent: int, limit: int, cached: bool) -> None:
    """A worker: gone with its parent (a reader that goes away ends the parent at once), with
    the parent's input limit and cache setting, the cyclic garbage collector paused (as the
    batch command pauses it); Ctrl-C is the parent's to handle."""
    die_with(parent)
    ignore_interrupts()
    cache.enable(cached)
    source.set_limit(limit)
    gc.disable()


def outputs(read: list[Line], opts: Options = DEFAULT,
            compile_new: Callable[[list[str]], object] | None = None) -> list[dict | str]:
    """Each line's outputs (JSON values by register) or its error."""
    snippets = [line for line in read if line.error is None and line.ptx is not None]
    got = evaluate_many(list(map(attrgetter("ptx", "inputs", "opts"), snippets)), opts,
                        compile_new)
    if len(snippets) < len(read):  # errors and functions in their places
        answered = iter(got)
        got = [line.error or (next(answered) if line.ptx is not None
                              else _function_answer(line)) for line in read]
    return got if {*map(type, got)} <= {dict} else [g if type(g) is dict else str(g) for g in got]


def run_jsonl(lines: Iterable[bytes | str],
              opts: Options = DEFAULT) -> Iterator[tuple[dict, str | None]]:
    """Per line: its object with "outputs" (or "error") set, and the error."""
    lines = (x.encode() if isinstance(x, str) else x for x in lines)
    for line, got in _each(lines, opts):
        yield answer_object(line, got), None if type(got) is dict else got


def check_jsonl(lines: Iterable[bytes], opts: Options = DEFAULT) -> Iterator[dict | None]:
    """Per line: None when its stored "outputs" are reproduced, else the difference
    {"line", "ptx" (or "file", "function"), "inputs", ("options"), "expected", "got"}."""
    for line, got in _each(lines, opts):
        obj = line.whole()
        if type(got) is dict and got == obj.get("outputs"):
            yield None
            continue
        code = {k: obj[k] for k in ("file", "function") if k in obj} or {"ptx": obj.get("ptx")}
        options = {"options": obj["options"]} if "options" in obj else {}  # to rerun it
        yield {"line": line.number, **code, "inputs": obj.get("inputs"), **options,
               "expected": obj.get("outputs"), "got": got}


def _each(lines: Iterable[bytes], opts: Options) -> Iterator[tuple[Line, dict | str]]:
    """Each line as read, with its outputs or error (here alone)."""
    first = 1
    for window in _windows(lines):
        read = read_lines(first, window, opts)
        first += len(window)
        yield from zip(read, outputs(read, opts))


def _function_answer(line: Line) -> dict | PtxError:
    """The JSON outputs of a line that names a function of a PTX file (with Z3: the slow
    path, as `ptxsmt eval FILE.ptx` takes it; the file read within the input limit)."""
    from ..function.evaluate import evaluate_function, read_function_file

    return answered(lambda: outputs_json(evaluate_function(read_function_file(
        line.obj["file"], line.obj.get("function")), line.obj.get("inputs", {}),
        line.opts).outputs()))
