"""A batch answered: read a window of lines, answer it, write the answers in order.

Where a window brings many texts the cache lacks, a standard process pool compiles
them beside this process, which then answers every line (so a pool never changes an
answer, and a worker that fails costs only time).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from itertools import count, islice, repeat
from typing import TYPE_CHECKING

from ..eval.values import outputs_json
from ..isa import source
from ..isa.errors import PtxError
from ..sem.options import DEFAULT, Options
from ..solver import ignore_interrupts
from . import cache, programs
from .engine import Groups, add, answered, evaluate_groups
from .lines import Line, TooLong, answer_object, answers, read_line

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

WINDOW = 1 << 18  # lines read, answered and written at a time (a held-out batch in one)
MIN_POOL_TEXTS = 100  # texts to compile: with fewer, starting workers costs more than it saves
Block = tuple[bytes, int, bool]  # answers (each ending in a newline), how many, any error


def render(lines: Iterable[bytes], opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch (a binary file, or its lines), a block per window. Where a
    window has enough texts the cache lacks, `jobs` processes compile them, a share each;
    this one then answers every line (a warm batch is answered here alone: sharing lines
    out costs more than it saves)."""
    pool, numbers = None, count(1)

    def compile_new(texts: list[str]) -> None:
        nonlocal pool
        if jobs > 1 and len(texts) >= MIN_POOL_TEXTS:
            if pool is None:  # the standard library's pool: only with work to share
                from concurrent.futures import ProcessPoolExecutor

                pool = ProcessPoolExecutor(jobs - 1, initializer=_started,
                                           initargs=(source.limit(),))
            _compile_shared(pool, texts, opts, jobs)

    try:
        with collector_paused():
            for window in _windows(lines):
                read = _read(numbers, window, opts)
                got = outputs(read, opts, compile_new)
                yield (b"\n".join([*answers(read, got), b""]), len(got),
                       not all(type(g) is dict for g in got))
    except BaseException:  # Ctrl-C, a closed output: no waiting for the workers
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    if pool:
        pool.shutdown()


def _compile_shared(pool: ProcessPoolExecutor, texts: list[str], opts: Options,
                    jobs: int) -> None:
    """The texts' programs compiled, a share in each process, the workers' records added
    to this one's cache. A worker that fails costs time, never an answer: its texts are
    compiled here, where their lines are answered."""
    futures = []
    with suppress(Exception):  # a broken pool
        futures = [pool.submit(programs.compile_records, texts[k::jobs], opts)
                   for k in range(1, jobs)]
    programs.compile_records(texts[::jobs], opts)  # this one's share: in its own store
    for future in futures:
        with suppress(Exception):  # the worker failed (or died)
            programs.adopt(future.result())


def _windows(f: Iterable[bytes]) -> Iterator[list[bytes]]:
    """The input's lines, about WINDOW at a time; a file's split from big reads (reading
    it line by line costs a third of a warm batch), each line bounded by the input limit:
    a longer one is a TooLong in its place, and reading goes on after its line end
    (the input ends with a line past twice the limit: /dev/zero has no line end)."""
    read = getattr(f, "read1", None) or getattr(f, "read", None)
    if read is None:
        lines = iter(f)
        while window := list(islice(lines, WINDOW)):
            yield window
        return
    most, window = source.limit(), []
    start, size = [], 0  # the line the blocks so far end in: its pieces (if kept), its size
    while block := read(1 << 22):
        lines = block.split(b"\n")
        size += len(lines[0])
        if size > 2 * most:  # no line end in sight (/dev/zero): the input ends with it
            break
        if size <= most:
            start.append(lines[0])
        if len(lines) == 1:
            continue
        lines[0] = b"".join(start) if size <= most else TooLong()
        start, size = [lines[-1]], len(lines[-1])
        lines.pop()
        if max(map(len, lines)) > most:
            lines = [TooLong() if len(line) > most else line for line in lines]
        window += lines
        if len(window) >= WINDOW:
            yield window
            window = []
    if size:
        window.append(b"".join(start) if size <= most else TooLong())
    yield window


def _started(limit: int) -> None:
    """A worker: the parent's input limit, its records kept to hand back (the parent
    writes the cache); Ctrl-C is the parent's to handle."""
    ignore_interrupts()
    cache.enable(False)
    source.set_limit(limit)
    gc.disable()  # see collector_paused


def _read(numbers: Iterable[int], lines: list[bytes], opts: Options) -> list[Line]:
    return list(map(read_line, islice(numbers, len(lines)), lines, repeat(opts)))


def outputs(read: list[Line], opts: Options = DEFAULT,
            compile_new: Callable[[list[str]], object] | None = None) -> list[dict | str]:
    """Each line's outputs (JSON values by register) or its error."""
    groups: Groups = {}
    for i, line in enumerate(read):
        if line.ptx is not None and line.error is None:
            add(groups, line.ptx if line.opts is opts else (line.ptx, line.opts), i, line.inputs)
    got = evaluate_groups(groups, len(read), opts, compile_new)
    for k in [k for k, g in enumerate(got) if g is None]:  # errors and functions in place
        got[k] = read[k].error or _function_answer(read[k])
    return [g if type(g) is dict else str(g) for g in got]


def _answered(windows: Iterable[list[bytes]], opts: Options) -> Iterator[tuple[Line, dict | str]]:
    """Each line as read, with its outputs or error."""
    numbers = count(1)
    with collector_paused():
        for window in windows:
            read = _read(numbers, window, opts)
            yield from zip(read, outputs(read, opts))


def run_jsonl(lines: Iterable[bytes | str],
              opts: Options = DEFAULT) -> Iterator[tuple[dict, str | None]]:
    """Per line: its object with "outputs" (or "error") set, and the error."""
    lines = (x.encode() if isinstance(x, str) else x for x in lines)
    for line, got in _answered(_windows(lines), opts):
        yield answer_object(line, got), None if type(got) is dict else got


def check_jsonl(lines: Iterable[bytes], opts: Options = DEFAULT) -> Iterator[dict | None]:
    """Per line: None when its stored "outputs" are reproduced, else the difference
    {"line", "ptx" (or "file", "function"), "inputs", ("options"), "expected", "got"}."""
    for line, got in _answered(_windows(lines), opts):
        obj = line.whole()
        if type(got) is dict and got == obj.get("outputs"):
            yield None
            continue
        code = {k: obj[k] for k in ("file", "function") if k in obj} or {"ptx": obj.get("ptx")}
        options = {"options": obj["options"]} if "options" in obj else {}  # to rerun it
        yield {"line": line.number, **code, "inputs": obj.get("inputs"), **options,
               "expected": obj.get("outputs"), "got": got}


def _function_answer(line: Line) -> dict | PtxError:
    """The JSON outputs of a line that names a function of a PTX file (with Z3: the slow
    path, as `ptxsmt eval FILE.ptx` takes it; the file read within the input limit)."""
    from ..function.evaluate import evaluate_function, read_function_file

    return answered(lambda: outputs_json(evaluate_function(read_function_file(
        line.obj["file"], line.obj.get("function")), line.obj.get("inputs", {}),
        line.opts).outputs()))


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: a batch makes no cycles (JSON objects,
    programs, errors kept without their tracebacks), and scanning its live objects
    over and over costs a third of the time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
