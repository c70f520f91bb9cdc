"""The package layout is the architecture (docs/layout.md): imports flow one way,

    cli -> serve -> report, pairs -> proofs, check, ptxasdiff, synth, triage -> smt -> batch
        -> eval -> fast -> program, solver, function, llvm -> sem -> isa -> terms

and inside smt, the verifier core, its rooms flow one way too:

    smt.queries -> smt.sweeping -> smt.solving

there is no import circle, and only `ptxsmt.report` writes to stdout or stderr.
Function-level (lazy) imports count: a circle hidden in a function is still one.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ptxsmt"

# Lowest first; a module may import from its own layer and the layers below.
LAYERS = (
    ("terms",),
    ("isa",),
    ("sem",),
    ("program", "solver", "resources", "function", "llvm"),
    ("fast",),
    ("eval",),
    ("batch",),
    ("smt",),
    ("proofs", "check", "ptxasdiff", "synth", "triage"),
    ("report", "pairs"),
    ("serve",),
    ("cli", "__main__"),
)
# smt's rooms, lowest first: the solve policy, the sweep, the queries
SMT_ROOMS = ("solving", "sweeping", "queries")
PRINTING_CALLS = {"print", "echo", "secho"}
STD_STREAMS = {"stdout", "stderr"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The ptxsmt modules `name` imports, anywhere in its body."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # `from . import x` names a module
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m in MODULES and m != name}


@cache
def _graph() -> dict[str, set[str]]:
    """Each module's imports, read once the first test asks (not at collection)."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int | None:
    top = module.split(".")[1] if "." in module else None
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def test_every_module_has_a_layer():
    assert [m for m in MODULES if m != "ptxsmt" and _layer(m) is None] == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "ptxsmt"))
def test_imports_flow_down(module):
    upward = [m for m in _graph()[module] if _layer(m) > _layer(module)]
    assert upward == [], f"{module} imports from a higher layer"


def _smt_room(module: str) -> int | None:
    parts = module.split(".")
    return SMT_ROOMS.index(parts[2]) if len(parts) > 2 and parts[1] == "smt" and \
        parts[2] in SMT_ROOMS else None


def test_every_smt_module_is_in_a_room():
    assert [m for m in MODULES if m.startswith("ptxsmt.smt.") and _smt_room(m) is None] == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _smt_room(m) is not None))
def test_the_smt_rooms_import_down(module):
    upward = [m for m in _graph()[module]
              if _smt_room(m) is not None and _smt_room(m) > _smt_room(module)]
    assert upward == [], f"{module} imports from a higher room of smt"


def _cycle_from(start: str) -> list[str] | None:
    stack, on_path = [(start, iter(sorted(_graph()[start])))], [start]
    seen = {start}
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            on_path.pop()
        elif child == start:
            return [*on_path, start]
        elif child not in seen:
            seen.add(child)
            stack.append((child, iter(sorted(_graph()[child]))))
            on_path.append(child)
    return None


def test_no_import_circles():
    cycles = [c for m in sorted(MODULES) if (c := _cycle_from(m))]
    assert cycles == [], " ; ".join(" -> ".join(c) for c in cycles[:3])


def _writes_to_std_streams(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            target = f.value if isinstance(f, ast.Attribute) else None
            name = f.id if isinstance(f, ast.Name) else f.attr if target else ""
            stream = isinstance(target, ast.Attribute) and target.attr in STD_STREAMS \
                and isinstance(target.value, ast.Name) and target.value.id == "sys"
            if name in PRINTING_CALLS or stream:
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("module", sorted(m for m in MODULES if not m.startswith("ptxsmt.report")))
def test_only_report_prints(module):
    assert _writes_to_std_streams(MODULES[module]) == [], f"{module} writes to stdout/stderr"


def test_the_checks_see_a_circle_and_a_print(tmp_path):
    """The checks above must be able to fail."""
    _graph()["ptxsmt.isa.types"].add("ptxsmt.isa.syntax")
    try:
        assert _cycle_from("ptxsmt.isa.types") is not None
        assert _layer("ptxsmt.cli") > _layer("ptxsmt.report") > _layer("ptxsmt.isa.types")
    finally:
        _graph()["ptxsmt.isa.types"].discard("ptxsmt.isa.syntax")
    sample = tmp_path / "m.py"
    sample.write_text("import sys, click\nclick.echo('x')\nsys.stderr.write('y')\nprint(1)\n"
                      "proc.stderr.strip()\n")
    assert _writes_to_std_streams(sample) == [2, 3, 4]


MACHINERY_BUDGET = 1_815  # lines: the batch engine and the fast backend stay small beside
# the semantics they serve (issue 25); +15 for the cache's sealed records (issue 40)


def test_the_evaluation_machinery_stays_within_its_budget():
    lines = sum(len(f.read_text().splitlines()) for folder in ("eval", "batch", "fast")
                for f in (PACKAGE / folder).glob("*.py"))
    assert lines <= MACHINERY_BUDGET, f"eval/, batch/ and fast/ hold {lines:,} lines"
