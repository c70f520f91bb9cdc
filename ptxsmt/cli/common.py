"""What every command shares: the group's error handling, option types and helpers.

Exit codes: 0 success, 1 a negative answer (an illegal line, a failed batch
line), 2 bad input, 130 interrupted (Ctrl-C). Bad input is one line on stderr,
never a traceback; option values are checked before any work starts.
"""

from __future__ import annotations

import errno
import math
import os
import sys
from contextlib import suppress
from importlib import import_module
from pathlib import Path
from typing import NoReturn

import click

from .. import report
from ..batch import cache
from ..isa import source
from ..isa.errors import PtxError, quote
from ..isa.targets import parse_target, parse_version
from ..sem.options import (
    DEFAULT_NAN,
    HARDWARE,
    NAN_POLICIES,
    VSET_MERGE_SOURCES,
    Options,
    check_hardware,
)
from ..solver import MAX_JOBS
from . import interrupts

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
STREAM_ERRORS = {errno.EPIPE, errno.ENOSPC, errno.EBADF, errno.EIO, errno.EFBIG, errno.EDQUOT}
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader went away (`ptxsmt ... | head`)
MAX_TIMEOUT = 1e6  # seconds; z3 takes milliseconds as a 32-bit number


_quick_exit = False
_console = False  # set by `run`: the command is the process's own (not a test's call)


def allow_quick_exit() -> None:
    """This command leaves no process running and no file open when it returns, so `run`
    may end the process at once."""
    global _quick_exit
    _quick_exit = True


def is_console() -> bool:
    """The command is the process's own (`run`): its time counts from the process's
    start; in a test's process, from the call."""
    return _console


def fail(message: str, code: int = 2) -> NoReturn:
    report.err(f"error: {message}")
    sys.exit(code)


class Main(click.Group):
    """The command group: a usage error is one line (exit 2), like every other bad input,
    and Ctrl-C stops at once with exit 130; it is never turned into a verdict. Commands
    are imported when used (`lazy`: name -> "module:function" in this package), so
    `ptxsmt eval` does not pay for numpy, the prover or the ptxas tooling."""

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, function = self.lazy[name].split(":")
            self.add_command(getattr(import_module(f"{__package__}.{module}"), function), name)
            interrupts.command_loaded()
        return super().get_command(ctx, name)

    def main(self, *args, **kwargs):
        for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 argument must not crash output
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        if not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        _read_max_input_env()
        _read_wall_cap_env()
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.NoArgsIsHelpError as e:
            report.err(e.ctx.get_help() if e.ctx else e.format_message())
            sys.exit(2)
        except click.ClickException as e:
            hint = f" (try '{e.ctx.command_path} -h')" if getattr(e, "ctx", None) else ""
            fail(_shorten(e.format_message()) + hint, e.exit_code)
        except click.Abort as e:  # end of input at a prompt, or Ctrl-C while reading options
            if isinstance(e.__context__, KeyboardInterrupt) or interrupts.seen():
                interrupted()
            fail("aborted", 1)
        except report.OutputError as e:
            output_failed(e)
        except OSError as e:  # commands name the files they write: this is click's own echo
            if e.filename is None and e.errno in STREAM_ERRORS:  # (--help > /dev/full)
                output_failed(report.OutputError.from_os(e))
            fail(f"{quote(e.filename) + ': ' if e.filename else ''}{e.strerror or e}")
        except RuntimeError as e:  # click finds no stream for '-': it was closed at start
            closed = [name for name in ("stdin", "stdout") if getattr(sys, name) is None
                      and name in str(e)]
            if not closed:
                raise
            fail(f"{closed[0]} is closed (give a FILE instead of '-')")
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()
        except Exception:
            if interrupts.seen():  # e.g. ctypes' ArgumentError around a KeyboardInterrupt
                interrupted()
            raise


def interrupted() -> NoReturn:
    report.err("interrupted")
    # an object the Ctrl-C cut short mid-construction (a z3 term without its context)
    # fails to tear down at exit: nothing to report after "interrupted"
    sys.unraisablehook = lambda unraisable: None
    sys.exit(EXIT_INTERRUPTED)


def run(group: click.Group) -> NoReturn:
    """The console command: the group, then out. After a command that allowed it (a batch
    evaluation), the process ends once its output and cache are written, without
    tearing its objects down one by one (0.15 s after a big batch, for memory the
    system frees at once)."""
    global _console
    _console = True
    _hold_closed_descriptors()
    interrupts.install()
    try:
        try:
            group.main()
        except KeyboardInterrupt:  # before or after the command itself
            interrupted()
        code: object = 0
    except SystemExit as e:
        code = e.code
    while cache.DROPPED:
        report.err(f"warning: cache record dropped (it is made afresh): {cache.DROPPED.pop(0)}")
    try:
        _flush_stdout()
    except SystemExit as e:
        code = e.code
    if not _quick_exit:
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        report.err(str(code))
        code = 1
    cache.flush()  # as atexit would
    with suppress(report.OutputError):  # stdout was flushed above: only stderr may hold more
        report.flush()
    os._exit(code or 0)


def output_failed(e: report.OutputError) -> NoReturn:
    """Results that cannot be written: one line (none for a reader that went away, as
    `| head` does), exit 2."""
    report.discard_stdout()
    if e.broken_pipe:
        sys.exit(EXIT_BROKEN_PIPE)
    fail(str(e))


def write_failed(file, e: OSError) -> NoReturn:
    """A command's output file (or stdout, as '-') could not take a write."""
    name = getattr(file, "name", "-")
    if name in ("-", "<stdout>"):
        output_failed(report.OutputError.from_os(e))
    fail(f"cannot write {quote(name)}: {e.strerror or e}")


def _flush_stdout() -> None:
    try:
        report.flush()
    except report.OutputError as e:
        output_failed(e)


def _hold_closed_descriptors() -> None:
    """Started with stdin, stdout or stderr closed (`<&-`): Python has set that stream to
    None, and the commands say so when they need it; the descriptor itself is held on
    /dev/null so that no file or pipe opened later takes its number (and ptxas or a
    worker, inheriting it, writes into that file)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            with suppress(OSError):
                held = os.open(os.devnull, os.O_RDWR)
                if held != fd:
                    os.dup2(held, fd)
                    os.close(held)


def _shorten(text: str, limit: int = 300) -> str:
    """Cut the middle out of a long message (click quotes a 5,000-digit value whole)."""
    return text if len(text) <= limit else text[:limit // 2] + "…" + text[-limit // 3:]


class OutputFile(click.File):
    """A file to write results to, '-' for stdout (which must be open)."""

    def __init__(self):
        super().__init__("w", lazy=False)

    def convert(self, value, param, ctx):
        if value == "-" and sys.stdout is None:
            raise report.OutputError("stdout is closed")
        return super().convert(value, param, ctx)


class Finite(click.FloatRange):
    """A FloatRange that refuses nan too (nan passes every range check)."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{quote(value)} is not a number", param, ctx)
        return number


def check_target(ctx, param, value: str | None) -> str | None:
    if value is None:  # not given: the command picks (check: the module's .target)
        return None
    try:
        parse_target(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None
    return value


def check_features(ctx, param, value: str) -> str:
    """LLVM target features (llc's -mattr), checked before any IR is compiled."""
    from ..llvm.module import parse_features
    try:
        return parse_features(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None


def writable_dir(ctx, param, value: str | None) -> str | None:
    """A folder to write into, made now: an unwritable path is refused before the work."""
    if value is not None:
        try:
            Path(value).mkdir(parents=True, exist_ok=True)
            probe = Path(value) / f".ptxsmt-{os.getpid()}"
            probe.touch()
            probe.unlink()
        except OSError as e:
            raise click.BadParameter(f"cannot write to {quote(value)}: "
                                     f"{e.strerror or e}") from None
    return value


def options(target: str, vset_merge: str, hardware: str | None = None) -> Options:
    return Options(target=parse_target(target).sm, vset_merge=vset_merge, hardware=hardware)


def read_text(file, option: str) -> str:
    """A file's text, bounded and decoded by `isa.source`, else one clear error naming it."""
    name = f"{option} {getattr(file, 'name', '-')}"
    try:
        return source.decode(source.read_stream(file, name), name)
    except PtxError as e:
        fail(str(e))


target_option = click.option("--target", default="sm_90", show_default=True, callback=check_target,
                             help="sm_ target (sm_1x flushes f32 set/setp/slct subnormals).")


def check_hardware_option(ctx, param, value: str | None) -> str | None:
    try:
        return value if value is None else check_hardware(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None


hardware_option = click.option(
    "--hardware", metavar="CHIP", callback=check_hardware_option,
    help=f"Give the values the PTX ISA leaves open (NaN bits, division by zero) as CHIP "
         f"computes them ({', '.join(HARDWARE)}; docs/hardware.md); default: left open.")
merge_option = click.option("--vset-merge", type=click.Choice(VSET_MERGE_SOURCES), default="c",
                            show_default=True,
                            help="vset merge: unmasked lanes from c (pseudocode) or b (prose).")


def _cache_off(ctx, param, value: bool) -> None:
    if value:
        cache.enable(False)


cache_option = click.option("--no-cache", is_flag=True, expose_value=False, callback=_cache_off,
                            help="Compile every program afresh; read and write no cache "
                                 "(also PTXSMT_NO_CACHE=1; see `ptxsmt cache`).")


def jobs_option(default: int):
    return click.option("--jobs", type=click.IntRange(1, MAX_JOBS), default=default,
                        show_default=True, help="Worker processes.")


def timeout_option(what: str):
    return click.option("--timeout", type=Finite(0, MAX_TIMEOUT, min_open=True), default=30.0,
                        show_default=True, help=what)


nan_option = click.option(
    "--nan", type=click.Choice(NAN_POLICIES), default=DEFAULT_NAN, show_default=True,
    help="NaNs at float-typed outputs: payload-free, any NaN equals any NaN (a NaN the ISA "
         "leaves open may be any NaN); exact, their bits compared (docs/equiv.md).")




class Size(click.ParamType):
    """A size in bytes: 1000000, 64K, 512M, 2G, 1.5GiB (K, M, G, T are powers of 1024)."""

    name = "size"
    UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        number, unit = (text[:-1], text[-1]) if text[-1:] in self.UNITS else (text, "")
        try:
            size = int(float(number) * self.UNITS[unit]) if number else 0
        except (ValueError, OverflowError):
            size = 0
        if size < 1:
            self.fail(f"{quote(value)} is not a size (e.g. 1000000, 512M, 2G)", param, ctx)
        return size


def _max_input(ctx, param, value: int | None) -> None:
    if value is not None:
        source.set_limit(value)
        os.environ["PTXSMT_MAX_INPUT"] = str(value)  # worker processes read the same limit


def _read_max_input_env() -> None:
    """PTXSMT_MAX_INPUT takes what --max-input takes (512M, 2G); a value that is not a size
    is refused, not silently replaced by the default."""
    value = os.environ.get("PTXSMT_MAX_INPUT")
    if value is not None:
        try:
            _max_input(None, None, Size().convert(value, None, None))  # bytes for workers too
        except click.BadParameter:
            fail(f"PTXSMT_MAX_INPUT={quote(value)} is not a size (e.g. 1000000, 512M, 2G)")


def _read_wall_cap_env() -> None:
    """PTXSMT_WALL_CAP (`budget.wall_cap`, the variable's one reader) is refused before any
    command where it is no cap; budget (and z3) imported only where it is set."""
    if "PTXSMT_WALL_CAP" in os.environ:
        from ..smt.solving.budget import wall_cap
        try:
            wall_cap()
        except PtxError as e:
            fail(str(e))


max_input_option = click.option(
    "--max-input", type=Size(), metavar="SIZE", expose_value=False, callback=_max_input,
    is_eager=True,
    help=f"Refuse an input file larger than this, e.g. 512M, 2G [default: "
         f"{source.DEFAULT_LIMIT // 2**20}M, or PTXSMT_MAX_INPUT=SIZE].")


def check_version(ctx, param, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_version(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None


def given(*names: str) -> list[str]:
    """Which of these parameters (by their Python names) the user set on the command line:
    a default is never "given"."""
    ctx = click.get_current_context()
    sources = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)
    flags = {p.name: p.opts[0] for p in ctx.command.params}
    return [flags[n] for n in names if ctx.get_parameter_source(n) in sources]


def refuse(names: list[str], why: str) -> None:
    """Options that do not apply here are refused, never silently ignored."""
    if names:
        fail(f"{', '.join(names)} {'does' if len(names) == 1 else 'do'} not apply {why}")


def warn_unused(names: list[str], why: str) -> None:
    """Options that change nothing here (a harmless habit) get one line on stderr."""
    if names:
        report.err(f"warning: {', '.join(names)} {'has' if len(names) == 1 else 'have'} "
                   f"no effect {why}")


def is_ptx_file(arg: str | None) -> bool:
    """A `.ptx` path that exists: eval and equiv read a function from it."""
    return bool(arg) and arg.endswith(".ptx") and Path(arg).is_file()


def read_function_file(path: str, name: str | None):
    """The function `name` of the PTX file at `path` (one clear error otherwise)."""
    from ..function.evaluate import read_function_file as read  # imports Z3: a function needs it

    try:
        fn = read(path, name)
    except PtxError as e:
        fail(str(e))
    from ..check import header_refusals

    # llc-14's sm_80 `max.NaN` in sm_70 code
    warn_refusals(path, header_refusals(fn), f"`ptxsmt check {path}`")
    return fn


def warn_refusals(where: str, refusals: list[str], lister: str) -> None:
    """What ptxas refuses of PTX for its module's `.target`/`.version`
    (check.header_refusals), the first and how many more (`lister` lists them), as one
    warning on stderr: ptxsmt reads the code as the ISA defines it."""
    if refusals:
        more = len(refusals) - 1
        others = f" and {more} more ({lister} lists them)" if more else ""
        report.err(f"warning: {where}: {refusals[0]}: ptxas refuses it{others}; ptxsmt reads "
                   "the code as the PTX ISA defines it")

