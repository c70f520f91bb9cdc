"""A batch answered: read a window of lines, answer it, write the answers in order.

Big input is answered by `jobs` processes, this one and a standard pool of the others:
each window's lines are dealt by instruction text (all the lines of a text to one
process, which compiles and runs it once; a text with more lines than a share is cut),
the first share answered here while the pool answers the rest. A share whose worker
fails is answered here: a failure costs time, never an answer.
"""

from __future__ import annotations

import gc
import heapq
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from itertools import count, islice, repeat

import msgspec

from ..eval.values import outputs_json
from ..isa import source
from ..isa.errors import PtxError, quote
from ..sem.options import DEFAULT, Options
from ..solver import ignore_interrupts
from . import cache, programs
from .engine import evaluate_many
from .lines import Line, TooLong, answers, read_line

WINDOW = 1 << 18  # lines read, answered and written at a time (a held-out batch in one)
MIN_POOL_TEXTS = 100  # texts to compile: with fewer, starting workers costs more than it saves
Block = tuple[bytes, int, bool]  # answers (each ending in a newline), how many, any error


def render(lines: Iterable[bytes], opts: Options = DEFAULT, jobs: int = 1) -> Iterator[Block]:
    """The answers to a batch (a binary file, or its lines), a block per window, in `jobs`
    processes where the first window has enough to compile (a warm batch is answered
    here: sharing it out costs more than it saves)."""
    with collector_paused():
        windows = _windows(lines)
        first = next(windows, [])
        if jobs == 1 or programs.missing(set(_texts(first)), opts) < MIN_POOL_TEXTS:
            yield from _blocks(first, windows, opts, None, jobs)
            return
        settings = (cache.store() is not None, source.limit())
        pool = ProcessPoolExecutor(jobs - 1, initializer=_started, initargs=settings)
        try:
            yield from _blocks(first, windows, opts, pool, jobs)
        except BaseException:  # Ctrl-C, a closed output: no waiting for the workers
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()


def _blocks(window: list[bytes], windows: Iterator[list[bytes]], opts: Options,
            pool: ProcessPoolExecutor | None, jobs: int) -> Iterator[Block]:
    first = 1
    while window:
        numbers = range(first, first + len(window))
        if pool is None:
            answers, failed = answer_lines(numbers, window, opts)
        else:
            answers, failed = _pooled(pool, numbers, window, opts, jobs)
        yield b"\n".join([*answers, b""]), len(answers), failed
        first += len(window)
        window = next(windows, [])


def _pooled(pool: ProcessPoolExecutor, numbers: range, window: list[bytes], opts: Options,
            jobs: int) -> tuple[list[bytes], bool]:
    shares = [([numbers[k] for k in share], [window[k] for k in share], share)
              for share in deal(window, jobs)]
    futures = [_submitted(pool, numbers, lines, opts) for numbers, lines, _ in shares[1:]]
    answers: list[bytes] = [b""] * len(window)
    failed = False
    for k, (numbers, lines, share) in enumerate(shares):
        try:  # the first share here, meanwhile the others in the pool
            got, bad = futures[k - 1].result() if k else answer_lines(numbers, lines, opts)
        except Exception:  # the worker failed (or died): its share is answered here
            got, bad = answer_lines(numbers, lines, opts)
        failed |= bad
        for k, text in zip(share, got):
            answers[k] = text
    return answers, failed


def _submitted(pool: ProcessPoolExecutor, *args) -> Future:
    try:
        return pool.submit(answer_lines, *args)
    except Exception as e:  # a broken pool: the share is answered here
        future: Future = Future()
        future.set_exception(e)
        return future


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


def _started(cache_on: bool, limit: int) -> None:
    """A worker: the parent's settings; Ctrl-C is the parent's to handle."""
    ignore_interrupts()
    cache.enable(cache_on)
    source.set_limit(limit)
    gc.disable()  # see collector_paused


class _Text(msgspec.Struct):
    ptx: str = ""


_text = msgspec.json.Decoder(_Text).decode


def deal(window: list[bytes], jobs: int) -> list[list[int]]:
    """The window's positions in `jobs` shares (fewer for a small window): the lines of a
    text together, a text with more lines than a share cut; the biggest piece first,
    each to the share with the fewest lines so far."""
    by_text: dict[str, list[int]] = {}
    for k, key in enumerate(_texts(window)):
        by_text.setdefault(key, []).append(k)
    most = -(-len(window) // jobs)
    pieces = [group[i:i + most] for group in by_text.values() for i in range(0, len(group), most)]
    loads = [(0, w, []) for w in range(jobs)]
    for piece in sorted(pieces, key=len, reverse=True):
        size, w, share = heapq.heappop(loads)
        share.extend(piece)
        heapq.heappush(loads, (size + len(piece), w, share))
    return [sorted(share) for _, _, share in loads if share]


def _texts(window: list[bytes]) -> Iterator[str]:
    """Each line's text ("" where it has none)."""
    for raw in window:
        try:
            yield _text(raw).ptx
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            yield ""  # answered wherever it lands


def answer_lines(numbers: Sequence[int], lines: list[bytes],
                 opts: Options = DEFAULT) -> tuple[list[bytes], bool]:
    """Each line's answer (without its newline), for lines numbered as in their file,
    and whether any answer is an error."""
    read, got = results(numbers, lines, opts)
    return answers(read, got), not all(type(g) is dict for g in got)


def results(numbers: Sequence[int], lines: list[bytes],
            opts: Options = DEFAULT) -> tuple[list[Line], list[dict | str]]:
    """Each line as read, and its outputs (JSON values by register) or its error."""
    with collector_paused():
        read = list(map(read_line, numbers, lines, repeat(opts)))
        snippets = [line for line in read if line.error is None and line.ptx is not None]
        got = evaluate_many([(line.ptx, line.inputs, line.opts) for line in snippets], opts)
        if len(snippets) < len(read):  # errors and functions in their places
            answered = iter(got)
            got = [line.error or (next(answered) if line.ptx is not None
                                  else _function_answer(line)) for line in read]
        return read, [g if type(g) is dict else str(g) for g in got]


def run_jsonl(lines: Iterable[bytes | str], opts: Options = DEFAULT,
              chunk: int = WINDOW) -> Iterator[tuple[dict, str | None]]:
    """Per line: its object with "outputs" (or "error") set, and the error; `chunk`
    lines evaluated at a time."""
    lines, numbers = iter(lines), count(1)
    while window := [x.encode() if isinstance(x, str) else x for x in islice(lines, chunk)]:
        for line, got in zip(*results(list(islice(numbers, len(window))), window, opts)):
            obj = line.whole()
            obj.update({"outputs": got} if type(got) is dict
                       else {"error": f"line {line.number}: {got}"})
            yield obj, None if type(got) is dict else got


def check_jsonl(lines: Iterable[bytes], opts: Options = DEFAULT) -> Iterator[dict | None]:
    """Per line: None when its stored "outputs" are reproduced, else the difference
    {"line", "ptx" (or "file", "function"), "inputs", ("options"), "expected", "got"}."""
    numbers = count(1)
    for window in _windows(lines):
        for line, got in zip(*results(list(islice(numbers, len(window))), window, opts)):
            obj = line.whole()
            if type(got) is dict and got == obj.get("outputs"):
                yield None
                continue
            code = {k: obj[k] for k in ("file", "function") if k in obj} or {"ptx": obj.get("ptx")}
            options = {"options": obj["options"]} if "options" in obj else {}  # to reproduce it
            yield {"line": line.number, **code, "inputs": obj.get("inputs"), **options,
                   "expected": obj.get("outputs"), "got": got}


def _function_answer(line: Line) -> dict | PtxError:
    """The JSON outputs of a line that names a function of a PTX file (with Z3: the slow
    path, as `ptxsmt eval FILE.ptx` takes it; the file read within the input limit)."""
    from ..function.evaluate import evaluate_function, read_function_file

    try:
        fn = read_function_file(line.obj["file"], line.obj.get("function"))
        return outputs_json(evaluate_function(fn, line.obj.get("inputs", {}), line.opts).outputs())
    except PtxError as e:
        return e.with_traceback(None)
    except Exception as e:  # a bug in ptxsmt, reported on its line only
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


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
