"""Streams: results on stdout only, progress and errors on stderr, and a closed, full or
interrupted stream ends a command with one line (or silently) and a non-zero exit."""

from __future__ import annotations

import ast
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
    import json

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
