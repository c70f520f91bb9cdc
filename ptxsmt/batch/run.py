"""A batch answered: read a window of lines, answer it, write the answers in order.

Where a window brings many texts the cache lacks, a standard process pool compiles
them beside this process, which then answers every line (so a pool never changes an
answer, and a worker that fails costs only time).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from operator import attrgetter

from ..eval.values import outputs_json
from ..isa import source
from ..isa.errors import PtxError
from ..sem.options import DEFAULT, Options
from ..solver import ignore_interrupts
from . import cache, programs
from .engine import answered, evaluate_many
from .lines import Line, TooLong, answer_object, answers, read_lines

WINDOW = 1 << 18  # lines read, answered and written at a time (a held-out batch in one)
MIN_POOL_TEXTS = 100  # texts to compile: with fewer, starting workers costs more than it saves
Block = tuple[bytes, int, bool]  # answers (each ending in a newline), how many, any error


def render(lines: Iterable[bytes], opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch (a binary file, or its lines), a block per window."""
    for read, got in _answered(lines, opts, jobs):
        yield answers(read, got), len(got), str in map(type, got)  # errors are strings


def _answered(lines: Iterable[bytes], opts: Options,
              jobs: int = 1) -> Iterator[tuple[list[Line], list[dict | str]]]:
    """Each window's lines as read, with their outputs or errors. Where a window has
    enough texts the cache lacks, `jobs` processes compile them, a share each; this one
    then answers every line (a warm batch is answered here alone: sharing lines out
    costs more than it saves). The cyclic garbage collector is paused meanwhile: a batch
    makes no cycles (JSON objects, programs, errors kept without their tracebacks), and
    scanning its live objects over and over costs a third of the time."""
    pool, first, collecting = None, 1, gc.isenabled()

    def compile_new(texts: list[str]) -> None:
        nonlocal pool
        if jobs > 1 and len(texts) >= MIN_POOL_TEXTS:
            if pool is None:  # the standard library's pool: only with work to share
                from concurrent.futures import ProcessPoolExecutor

                pool = ProcessPoolExecutor(jobs - 1, initializer=_started,
                                           initargs=(source.limit(),))
            programs.compile_shared(pool, texts, opts, jobs)

    gc.disable()
    try:
        for window in _windows(lines):
            read = read_lines(first, window, opts)
            first += len(window)
            yield read, outputs(read, opts, compile_new)
    except BaseException:  # Ctrl-C, a closed output: no waiting for the workers
        if pool:
            pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        if collecting:
            gc.enable()
    if pool:
        pool.shutdown()


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


def _started(limit: int) -> None:
    """A worker: the parent's input limit, its records kept to hand back (the parent
    writes the cache); Ctrl-C is the parent's to handle."""
    ignore_interrupts()
    cache.enable(False)
    source.set_limit(limit)
    gc.disable()  # see _answered


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
    """Each line as read, with its outputs or error."""
    for read, got in _answered(lines, opts):
        yield from zip(read, got)


def _function_answer(line: Line) -> dict | PtxError:
    """The JSON outputs of a line that names a function of a PTX file (with Z3: the slow
    path, as `ptxsmt eval FILE.ptx` takes it; the file read within the input limit)."""
    from ..function.evaluate import evaluate_function, read_function_file

    return answered(lambda: outputs_json(evaluate_function(read_function_file(
        line.obj["file"], line.obj.get("function")), line.obj.get("inputs", {}),
        line.opts).outputs()))
