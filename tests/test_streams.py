"""Streams: results on stdout only, progress and errors on stderr, and a closed, full or
interrupted stream ends a command with one line (or silently) and a non-zero exit."""

from __future__ import annotations

import ast
import json
import os
import pty
import select
import signal
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest
from test_cli import SLOW

TESTS = Path(__file__).parent

# click >= 8.2 merges stderr into `Result.output`; progress lines (after a few seconds on a
# busy machine) land in it, so anything that parses a result reads `.stdout`, and anything
# that counts an error's lines reads `.stderr`. `x in r.output` and an assert's message are fine.
PARSES = {"splitlines", "startswith", "endswith", "count", "strip", "split", "partition"}


def _misreads(tree: ast.AST) -> list[int]:
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr in PARSES
                    and isinstance(f.value, ast.Attribute) and f.value.attr == "output"):
                bad.append(node.lineno)
            if isinstance(f, ast.Attribute) and f.attr in {"loads", "load"} and any(
                    isinstance(a, ast.Attribute) and a.attr == "output" for a in node.args):
                bad.append(node.lineno)
    return bad


def test_no_test_parses_the_mixed_output_of_a_cli_run():
    found = {p.name: lines for p in sorted(TESTS.glob("*.py"))
             if (lines := _misreads(ast.parse(p.read_text())))}
    assert not found, f"parse result.stdout (or .stderr), not .output: {found}"


def test_the_guard_sees_each_kind_of_misread():
    for text in ("json.loads(r.output)", "r.output.splitlines()",
                 "r.output.startswith('error')", "len(r.output.strip().splitlines())"):
        assert _misreads(ast.parse(text)), text
    for text in ("json.loads(r.stdout)", "'x' in r.output", "r.stderr.count('\\n')"):
        assert not _misreads(ast.parse(text)), text


def test_progress_goes_to_stderr_and_leaves_stdout_parseable(monkeypatch):
    """Progress forced on from the first step: the JSON on stdout still parses."""
    from click.testing import CliRunner

    from ptxsmt.cli import main
    from ptxsmt.report import progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "EVERY_LINE", 0.0)
    r = CliRunner().invoke(main, ["prove", "identities", "-k", "unsigned-aliases", "--json"])
    assert r.exit_code == 0, r.output
    assert "proving: " in r.stderr and "proving: " not in r.stdout
    assert json.loads(r.stdout)["results"]


# ---- Ctrl-C on a terminal --------------------------------------------------------------

BUSY_CPU = 2.0  # seconds of CPU the command has spent: past its imports, deep in the work
BOUND = 120.0  # seconds: only so that a test that fails does not hang


def _cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and its live descendants (a pool's workers do the work)."""
    stats = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except (OSError, ValueError):
            continue
        if entry.isdigit():
            stats[int(entry)] = int(fields[1]), int(fields[11]) + int(fields[12])
    tree, grown = {pid}, True
    while grown:
        grown = bool({p for p, (parent, _) in stats.items() if parent in tree} - tree)
        tree |= {p for p, (parent, _) in stats.items() if parent in tree}
    return sum(stats[p][1] for p in tree if p in stats) / os.sysconf("SC_CLK_TCK")


def _ctrl_c_on_a_terminal(args: list[str], stdout: Path) -> tuple[int | None, str]:
    """Run ptxsmt as a terminal's foreground job (its own pty, SIGINT at its default) with
    stdout to a file, type Ctrl-C once it is deep in its work, and return its exit code
    and what the terminal showed. The line discipline, not the test, sends the SIGINT."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: as an interactive shell starts a job
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # this runner may ignore it
            out = os.open(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1)
            os.execv(sys.executable, [sys.executable, "-m", "ptxsmt", *args])
        finally:
            os._exit(127)
    shown, sent, end = b"", False, time.monotonic() + BOUND
    status = None
    while time.monotonic() < end:
        if not sent and _cpu_seconds(pid) >= BUSY_CPU:
            os.write(fd, b"\x03")  # what the Ctrl-C key sends
            sent = True
        if select.select([fd], [], [], 0.1)[0]:
            with suppress(OSError):  # the child is gone and the pty closed
                shown += os.read(fd, 65536)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        pytest.fail(f"still running {BOUND:.0f} s after Ctrl-C: {shown[-500:]!r}")
    os.close(fd)
    assert sent, "the command ended before it was busy"
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


LONG_RUNS = {
    "vectors": ["vectors", "--family", "vset4"],  # thousands of short z3 searches
    "equiv": ["equiv", "--timeout", "600", "--outputs", "m", *SLOW],  # one long z3 search
    "sweep": ["sweep", "setp.lt.f16", "--jobs", "2"],  # a worker pool
}


@pytest.mark.parametrize("command", LONG_RUNS)
def test_ctrl_c_on_a_terminal_stops_the_command_with_130(command, tmp_path):
    code, shown = _ctrl_c_on_a_terminal(LONG_RUNS[command], tmp_path / "out")
    assert code == 130, shown[-2000:]
    assert shown.rstrip().endswith("interrupted") and "Traceback" not in shown, shown[-2000:]


# ---- closed and full streams -----------------------------------------------------------

SNIPPET = "setp.lt.f32 p, a, b;"
LINE = '{"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1", "b": "2"}, "outputs": {"p": true}}\n'
COMMANDS = {  # each writes a result on stdout and exits 0 when its streams are fine
    "eval": ["eval", SNIPPET, "a=1", "b=2"],
    "eval --json": ["eval", "--json", SNIPPET, "a=1", "b=2"],
    "eval --batch": ["eval", "--batch", "{batch}"],
    "check": ["check", "-"],
    "variants": ["variants", "--family", "slct"],
    "vectors": ["vectors", "setp.lt.f32"],
    "equiv": ["equiv", SNIPPET, "setp.gt.f32 p, b, a;"],
    "prove": ["prove", "identities", "-k", "unsigned-aliases"],
    "cache": ["cache"],
    "--help": ["--help"],
}
READS_STDIN = {"eval --batch -": ["eval", "--batch", "-"], "check": ["check", "-"],
               "equiv -a -": ["equiv", "-a", "-", "-b", "{snippet}"]}


def _run(args: list[str], tmp_path: Path, close=(), stdout=None, stderr=None):
    import subprocess

    batch, snippet = tmp_path / "b.jsonl", tmp_path / "s.ptx"
    batch.write_text(LINE)
    snippet.write_text(SNIPPET + "\n")
    args = [a.format(batch=batch, snippet=snippet) for a in args]
    with open(snippet, "rb") as stdin:
        return subprocess.run(
            [sys.executable, "-m", "ptxsmt", *args], stdin=stdin,
            stdout=stdout or subprocess.PIPE, stderr=stderr or subprocess.PIPE,
            preexec_fn=lambda: [os.close(fd) for fd in close], timeout=300)


def _one_error(err: bytes, *fragments: str) -> None:
    text = err.decode()
    assert text.count("\n") == 1 and text.startswith("error: "), text[-2000:]
    assert all(f in text for f in fragments), text


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "--help"])  # click's: silent
def test_closed_stdout_is_one_line_and_exit_2(command, tmp_path):
    r = _run(COMMANDS[command], tmp_path, close=[1])
    assert r.returncode == 2, r.stderr.decode()[-2000:]
    _one_error(r.stderr, "stdout is closed")


@pytest.mark.parametrize("command", COMMANDS)
def test_full_stdout_is_one_line_and_exit_2(command, tmp_path):
    with open("/dev/full", "wb") as full:
        r = _run(COMMANDS[command], tmp_path, stdout=full)
    assert r.returncode == 2, r.stderr.decode()[-2000:]
    _one_error(r.stderr, "cannot write to stdout: No space left on device")


@pytest.mark.parametrize("command", READS_STDIN)
def test_reading_a_closed_stdin_is_one_line_and_exit_2(command, tmp_path):
    r = _run(READS_STDIN[command], tmp_path, close=[0])
    assert r.returncode == 2, r.stderr.decode()[-2000:]
    _one_error(r.stderr, "stdin is closed")
    assert r.stdout == b""


@pytest.mark.parametrize("command", ["eval", "variants", "vectors"])
def test_a_closed_stdin_that_is_not_read_changes_nothing(command, tmp_path):
    assert _run(COMMANDS[command], tmp_path, close=[0]).returncode == 0


@pytest.mark.parametrize("command", ["eval --batch", "vectors", "variants"])
def test_closed_or_full_stderr_changes_no_result(command, tmp_path):
    expected = _run(COMMANDS[command], tmp_path)
    assert expected.returncode == 0 and expected.stdout
    closed = _run(COMMANDS[command], tmp_path, close=[2])
    with open("/dev/full", "wb") as full:
        filled = _run(COMMANDS[command], tmp_path, stderr=full)
    assert (closed.returncode, closed.stdout) == (0, expected.stdout)
    assert (filled.returncode, filled.stdout) == (0, expected.stdout)


@pytest.mark.parametrize("command", ["variants", "eval --batch"])
def test_nowhere_to_write_anything_exits_2_quietly(command, tmp_path):
    with open("/dev/full", "wb") as full:
        r = _run(COMMANDS[command], tmp_path, close=[2], stdout=full)
    assert r.returncode == 2


# ---- bounded input: --max-input --------------------------------------------------------


def _cli(*args: str):
    from click.testing import CliRunner

    from ptxsmt.cli import main
    from ptxsmt.isa import source

    try:
        return CliRunner().invoke(main, list(args))
    finally:
        source.set_limit(None)  # the option sets the process's limit
        os.environ.pop("PTXSMT_MAX_INPUT", None)


@pytest.mark.parametrize("args", [
    ["eval", "{big}", "--function", "f"],
    ["eval", "--batch", "{batch}"],
    ["equiv", "-a", "{big}", "-b", "{big}"],
    ["equiv", "{big}", "{big}"],
    ["vectors", "{big}"],
    ["prove", "identities", "--library", "{lib}"],
])
def test_an_input_over_max_input_is_one_error_naming_it(args, tmp_path):
    big = tmp_path / "big.ptx"
    big.write_text("// " + "x" * 3000 + "\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "big.toml").write_text("# " + "x" * 3000 + "\n")
    batch = tmp_path / "b.jsonl"
    batch.write_text(json.dumps({"file": str(big), "function": "f", "inputs": {}}) + "\n" + LINE)
    args = [a.format(big=big, batch=batch, lib=tmp_path / "lib") for a in args]
    r = _cli(*args, "--max-input", "2K")
    text = r.stdout if "--batch" in args else r.stderr
    assert "larger than the input limit of 2048 bytes" in text, r.output
    assert str(tmp_path)[:12] in text or "big." in text  # the file, named (long names cut)
    if "--batch" in args:  # that line's error; the good line still answered
        first, second = r.stdout.splitlines()
        assert "error" in first and '"outputs": {"p": true}' in second
        assert r.exit_code == 1
    else:
        assert r.exit_code == 2 and r.stderr.count("\n") == 1


def test_max_input_raises_the_limit_above_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("PTXSMT_MAX_INPUT", "1000")  # a default the option overrides
    snippet = tmp_path / "s.ptx"
    snippet.write_text("setp.lt.f32 p, a, b; // " + "x" * 2000 + "\n")
    assert _cli("equiv", "-a", str(snippet), "-b", str(snippet)).exit_code == 2
    r = _cli("equiv", "-a", str(snippet), "-b", str(snippet), "--max-input", "1M")
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("size,bytes_", [("2048", 2048), ("64K", 65536), ("512M", 512 << 20),
                                         ("2G", 2 << 30), ("1.5GiB", 3 << 29), ("3kb", 3072)])
def test_max_input_reads_sizes(size, bytes_):
    from ptxsmt.cli.common import Size

    assert Size().convert(size, None, None) == bytes_


@pytest.mark.parametrize("size", ["0", "-1", "12Q", "", "M", "nan", "inf", "1e400"])
def test_max_input_refuses_what_is_not_a_size(size):
    r = _cli("variants", "--max-input", size)
    assert r.exit_code == 2 and "--max-input" in r.stderr and r.stderr.count("\n") == 1


def test_every_command_that_reads_files_takes_max_input():
    from ptxsmt.cli import COMMANDS, main

    ctx = main.make_context("ptxsmt", ["variants"])
    readers = {"eval", "check", "equiv", "vectors", "ptxas-diff", "triage"}
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        if name == "prove":
            command = command.get_command(ctx, "identities")
        has = any(p.name == "max_input" for p in command.params)
        assert has == (name in readers | {"prove"}), name
        if has:
            assert "--max-input" in command.get_help(ctx) and "256M" in command.get_help(ctx)


def test_the_environment_limit_takes_sizes_and_refuses_what_is_not_one(tmp_path, monkeypatch):
    snippet = tmp_path / "s.ptx"
    snippet.write_text("setp.lt.f32 p, a, b; // " + "x" * 2000 + "\n")
    monkeypatch.setenv("PTXSMT_MAX_INPUT", "1K")
    r = _cli("equiv", "-a", str(snippet), "-b", str(snippet))
    assert r.exit_code == 2 and "limit of 1024 bytes" in r.stderr
    monkeypatch.setenv("PTXSMT_MAX_INPUT", "lots")
    r = _cli("variants")
    assert r.exit_code == 2 and r.stderr == \
        'error: PTXSMT_MAX_INPUT="lots" is not a size (e.g. 1000000, 512M, 2G)\n'


def test_an_unexpected_os_error_is_not_called_a_stdout_failure(monkeypatch):
    """Only a write error on a stream is stdout's; a refused connection says itself."""
    from ptxsmt.cli import variants

    def refused(*args, **kwargs):
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(variants.rendering, "variants_rows", refused)
    r = _cli("variants")
    assert (r.exit_code, r.stderr) == (2, "error: Connection refused\n")


def test_any_error_raised_by_an_interrupted_call_is_the_interruption(monkeypatch):
    """ctypes wraps a KeyboardInterrupt raised while it converts a z3 call's arguments in
    an ArgumentError: after a SIGINT that is exit 130, not a traceback."""
    import ctypes

    from ptxsmt.cli import interrupts, variants

    def interrupted_inside_ctypes(*args, **kwargs):
        interrupts._seen.set()  # what the watcher does when the signal arrives
        raise ctypes.ArgumentError("argument 2: KeyboardInterrupt: ")

    monkeypatch.setattr(variants.rendering, "variants_rows", interrupted_inside_ctypes)
    try:
        r = _cli("variants")
    finally:
        interrupts._seen.clear()
    assert (r.exit_code, r.stderr) == (130, "interrupted\n")
    monkeypatch.setattr(variants.rendering, "variants_rows", lambda *a: 1 / 0)
    assert _cli("variants").exit_code == 1  # no SIGINT: a bug stays a bug


def test_an_interrupted_finaliser_is_not_reported(monkeypatch):
    """A Ctrl-C inside z3's `AstRef.__del__` reaches the unraisable hook as a ctypes
    ArgumentError around the KeyboardInterrupt: after a SIGINT it is the interruption,
    not a traceback on the terminal; before one, an error in a finaliser is reported."""
    import ctypes
    from types import SimpleNamespace

    from ptxsmt.cli import interrupts

    reported = []
    monkeypatch.setattr(sys, "__unraisablehook__", reported.append)
    wrapped = SimpleNamespace(exc_type=ctypes.ArgumentError)
    interrupts._seen.set()
    try:
        interrupts._unraisable(wrapped)
    finally:
        interrupts._seen.clear()
    interrupts._unraisable(SimpleNamespace(exc_type=KeyboardInterrupt))
    assert reported == []
    interrupts._unraisable(wrapped)
    assert reported == [wrapped]
