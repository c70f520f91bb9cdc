"""Streams: results on stdout only, progress and errors on stderr, and a closed, full or
interrupted stream ends a command with one line (or silently) and a non-zero exit."""

from __future__ import annotations

import ast
from pathlib import Path

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
