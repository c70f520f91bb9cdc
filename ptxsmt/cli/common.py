"""What every command shares: the group's error handling, option types and helpers.

Exit codes: 0 success, 1 a negative answer (an illegal line, a failed batch
line), 2 bad input, 130 interrupted (Ctrl-C). Bad input is one line on stderr,
never a traceback; option values are checked before any work starts.
"""

from __future__ import annotations

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
from ..sem.options import VSET_MERGE_SOURCES, Options
from ..solver import MAX_JOBS

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
MAX_TIMEOUT = 1e6  # seconds; z3 takes milliseconds as a 32-bit number


_quick_exit = False


def allow_quick_exit() -> None:
    """This command leaves no process running and no file open when it returns, so `run`
    may end the process at once."""
    global _quick_exit
    _quick_exit = True


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
        return super().get_command(ctx, name)

    def main(self, *args, **kwargs):
        for stream in (sys.stdout, sys.stderr):  # a non-UTF-8 argument must not crash output
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors="backslashreplace")
        if not kwargs.get("standalone_mode", True):
            return super().main(*args, **kwargs)
        try:
            code = super().main(*args, **{**kwargs, "standalone_mode": False})
        except click.exceptions.NoArgsIsHelpError as e:
            report.err(e.ctx.get_help() if e.ctx else e.format_message())
            sys.exit(2)
        except click.ClickException as e:
            hint = f" (try '{e.ctx.command_path} -h')" if getattr(e, "ctx", None) else ""
            fail(_shorten(e.format_message()) + hint, e.exit_code)
        except click.Abort:  # end of input at a prompt; Ctrl-C is handled in invoke
            fail("aborted", 1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            report.err("interrupted")
            sys.exit(EXIT_INTERRUPTED)


def run(group: click.Group) -> NoReturn:
    """The console command: the group, then out. After a command that allowed it (a batch
    evaluation), the process ends once its output and cache are written, without
    tearing its objects down one by one (0.15 s after a big batch, for memory the
    system frees at once)."""
    try:
        group.main()
        code: object = 0
    except SystemExit as e:
        code = e.code
    if not _quick_exit:
        sys.exit(code)
    if code is not None and not isinstance(code, int):
        report.err(str(code))
        code = 1
    cache.flush()  # as atexit would
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nothing more can be said there
            stream.flush()
    os._exit(code or 0)


def _shorten(text: str, limit: int = 300) -> str:
    """Cut the middle out of a long message (click quotes a 5,000-digit value whole)."""
    return text if len(text) <= limit else text[:limit // 2] + "…" + text[-limit // 3:]


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


def options(target: str, vset_merge: str) -> Options:
    return Options(target=parse_target(target).sm, vset_merge=vset_merge)


def read_text(file, option: str) -> str:
    """A file's text, bounded and decoded by `isa.source`, else one clear error naming it."""
    name = f"{option} {getattr(file, 'name', '-')}"
    try:
        return source.decode(source.read_stream(file, name), name)
    except PtxError as e:
        fail(str(e))


target_option = click.option("--target", default="sm_90", show_default=True, callback=check_target,
                             help="sm_ target (sm_1x flushes f32 set/setp/slct subnormals).")
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




def check_version(ctx, param, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_version(value)
    except PtxError as e:
        raise click.BadParameter(e.message) from None


def is_ptx_file(arg: str | None) -> bool:
    """A `.ptx` path that exists: eval and equiv read a function from it."""
    return bool(arg) and arg.endswith(".ptx") and Path(arg).is_file()


def read_function_file(path: str, name: str | None):
    """The function `name` of the PTX file at `path` (one clear error otherwise)."""
    from ..eval.function import read_function_file as read  # imports Z3: a function needs it

    try:
        return read(path, name)
    except PtxError as e:
        fail(str(e))

