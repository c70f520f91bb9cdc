"""The README stays short, its commands are the ones CI runs, and its numbers (and the
docs' that repeat them) are counted from the library, the catalogue and the corpus, so
they cannot go stale. Generated pages name the script that writes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ptxsmt import proofs
from ptxsmt.isa.variants import catalogue

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 300
COMMANDS = ["pip install -e . && ptxsmt prove identities",
            "pip install -e '.[test]' && python -m pytest -q"]
# pages that repeat the README's numbers
NUMBERED = [README] + [ROOT / "docs" / n for n in ("identities.md", "testing.md", "vectors.md")]
# generated page -> the script that writes it
GENERATED = {"docs/layout.md": "scripts/make_layout.py",
             "docs/synth-near-misses.md": "scripts/make_synth.py",
             "docs/synth-inversions.md": "scripts/make_synth.py",
             "docs/sweep-benchmark.md": "scripts/bench.py"}


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def _counts() -> dict[str, int]:
    library = proofs.load(ROOT / "proofs")
    vectors = sum(len(f.read_text().splitlines()) for f in (ROOT / "models").glob("*.jsonl"))
    return {"identities": len({i.name for i in library}), "instances": len(library),
            "variants": len(catalogue()), "vectors": vectors}


# each fact, as the pages spell it: (pattern, the count each group must equal)
FACTS = [
    (r"([\d,]+) identities, ([\d,]+) instances", ("identities", "instances")),
    (r"([\d,]+) of \1 instances \(([\d,]+) identities\)", ("instances", "identities")),
    (r"([\d,]+) catalogue variants", ("variants",)),
    (r"`models/` holds ([\d,]+)", ("vectors",)),
]


def test_readme_is_short():
    assert len(README.read_text().splitlines()) <= MAX_LINES


def test_first_code_block_is_the_two_commands():
    """.ci/run runs these, one per line, each in a fresh virtualenv."""
    block = README.read_text().split("```")[1]
    lines = [s for s in block.splitlines()[1:] if s.strip() and not s.lstrip().startswith("#")]
    assert lines == COMMANDS


@pytest.mark.parametrize(("pattern", "names"), FACTS, ids=[" ".join(n) for _, n in FACTS])
def test_numbers_are_counted(pattern, names):
    counts = _counts()
    found = [(page.name, m) for page in NUMBERED for m in re.finditer(pattern, page.read_text())]
    assert any(page == README.name for page, _ in found), f"the README states no {names}"
    for page, m in found:
        stated = dict(zip(names, map(_number, m.groups())))
        assert stated == {n: counts[n] for n in names}, (page, m.group(0))


def test_links_resolve():
    for page in [README, *(ROOT / "docs").glob("*.md")]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), (page.name, target)


@pytest.mark.parametrize(("page", "script"), GENERATED.items())
def test_generated_pages_name_their_script(page, script):
    head = "\n".join((ROOT / page).read_text().splitlines()[:3])
    assert script in head
    assert Path(page).name in (ROOT / script).read_text()


def test_docs_index_lists_every_page():
    """docs/index.md is the way into docs/: a page it does not list is a page nobody finds."""
    index = ROOT / "docs" / "index.md"
    listed = set(re.findall(r"\]\(([\w.-]+\.md)\)", index.read_text()))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {index.name}
    assert pages <= listed, sorted(pages - listed)


def test_layout_page_is_what_the_docstrings_say():
    """docs/layout.md is written from the modules' docstrings; rerun the script after
    adding, moving or redescribing a module."""
    import subprocess
    import sys
    check = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_layout.py"), "--check"])
    assert check.returncode == 0, "docs/layout.md is stale: python scripts/make_layout.py"
