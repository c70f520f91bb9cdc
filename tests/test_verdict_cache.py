"""`equiv --batch`'s cache is checked, never trusted (issue 40): an entry tampered with
in any way, or one that belongs to another pair, build or set of options, is dropped with
one warning naming its file, and its pair is decided afresh to the verdict an untampered
run gives. A "different" is served only once its counterexample replays through the
evaluator; the pairs' verdicts are known by construction (u32 addition commutes; adding 1
and adding 2 to a word in memory differ everywhere)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.smt import verdicts

SCALAR = """.version 8.4
.target sm_90
.address_size 64
.visible .func (.param .b32 out) f(.param .b32 a, .param .b32 b)
{{
	.reg .b32 %r<4>;
	ld.param.u32 %r1, [a];
	ld.param.u32 %r2, [b];
	{body}
	st.param.b32 [out], %r3;
	ret;
}}
"""
MEMORY = """.version 8.4
.target sm_90
.address_size 64
.visible .func m(.param .b64 p)
{{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	ld.global.u32 %r1, [%rd1];
	add.u32 %r2, %r1, {k};
	st.global.u32 [%rd1], %r2;
	ret;
}}
"""
FILES = {"add.ptx": SCALAR.format(body="add.u32 %r3, %r1, %r2;"),
         "swapped.ptx": SCALAR.format(body="add.u32 %r3, %r2, %r1;"),
         "sub.ptx": SCALAR.format(body="sub.u32 %r3, %r1, %r2;"),
         "inc1.ptx": MEMORY.format(k=1), "inc2.ptx": MEMORY.format(k=2)}
LINES = {  # name -> (line, its verdict)
    "snippets equivalent": ({"lhs": "add.u32 d, a, b;", "rhs": "add.u32 d, b, a;"},
                            "equivalent"),
    "snippets different": ({"lhs": "add.u32 d, a, b;", "rhs": "sub.u32 d, a, b;"},
                           "different"),
    "functions equivalent": ({"a": "add.ptx", "b": "swapped.ptx", "function": "f"},
                             "equivalent"),
    "functions different": ({"a": "add.ptx", "b": "sub.ptx", "function": "f"}, "different"),
    "memory different": ({"a": "inc1.ptx", "b": "inc2.ptx", "function": "m"}, "different"),
}


def _run(folder: Path) -> tuple[list[dict], str]:
    r = CliRunner().invoke(main, ["equiv", "--batch", str(folder / "pairs.jsonl")])
    assert r.exit_code == 1, r.output
    return [json.loads(x) for x in r.stdout.splitlines()], r.stderr


def _plain(results: list[dict]) -> list[dict]:
    """What a run answers, less how long it took and whether it came from the cache."""
    return [{k: v for k, v in r.items() if k not in ("seconds", "cached")} for r in results]


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> tuple[Path, list[dict]]:
    """A folder of pairs decided once (its cache filled), and the answers."""
    folder = tmp_path_factory.mktemp("decided")
    for name, text in FILES.items():
        (folder / name).write_text(text)
    (folder / "pairs.jsonl").write_text("".join(json.dumps(line) + "\n"
                                                for line, _ in LINES.values()))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PTXSMT_CACHE_DIR", str(folder / "cache"))
        answers, _ = _run(folder)
    assert [r["verdict"] for r in answers] == [v for _, v in LINES.values()]
    return folder, answers


@pytest.fixture
def work(decided, tmp_path, monkeypatch) -> Path:
    """A copy of the decided folder, its cache this test's to tamper with."""
    folder = tmp_path / "work"
    shutil.copytree(decided[0], folder)
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(folder / "cache"))
    return folder


def _entries(folder: Path) -> dict[str, Path]:
    """Each line's entry file, by the line's name in LINES."""
    out = {}
    for path in (folder / "cache" / "equiv").glob("*.json"):
        result = json.loads(path.read_bytes())["result"]
        kind = "snippets" if "outputs" in result else \
            "memory" if result.get("lhs") == "m" else "functions"
        out[f"{kind} {result['verdict']}"] = path
    assert sorted(out) == sorted(LINES)
    return out


def _sealed(entry: dict) -> bytes:
    """The entry with its check recomputed: a forger's edit, not a hand's."""
    fields = msgspec.convert(entry, verdicts.Entry)
    fields.check = verdicts.checksum(fields)
    return msgspec.json.encode(fields)


def test_an_untampered_cache_is_served_without_a_warning(decided, work):
    answers, stderr = _run(work)
    assert [r.get("cached") for r in answers] == [True] * len(LINES)
    assert _plain(answers) == _plain(decided[1]) and stderr == ""


def _edit(**changes):
    def edit(entry: dict) -> bytes:
        return json.dumps({**entry, **changes}).encode()
    return edit


def _flip(verdict: str, seal: bool = False):
    def edit(entry: dict) -> bytes:
        entry = {**entry, "verdict": verdict, "result": {**entry["result"], "verdict": verdict}}
        return _sealed(entry) if seal else json.dumps(entry).encode()
    return edit


def _careful_flip(entry: dict) -> bytes:
    """A "different" made an "equivalent" in every field a verdict shows (only the check
    is stale)."""
    result = {k: v for k, v in entry["result"].items() if k != "counterexample"}
    if "outputs" in result:  # a snippet's verdict shows a null counterexample
        result["counterexample"] = None
    return json.dumps({**entry, "verdict": "equivalent", "replay": None,
                       "result": {**result, "verdict": "equivalent"}}).encode()


def _counterexample(seal: bool):
    def edit(entry: dict) -> bytes:
        cex = entry["result"]["counterexample"]
        name = next(iter(cex["lhs"]))
        cex["lhs"][name] = "0x0000002a" if cex["lhs"][name] != "0x0000002a" else "0x0000002b"
        return _sealed(entry) if seal else json.dumps(entry).encode()
    return edit


def _replay_inputs(entry: dict) -> bytes:
    """Other inputs, the counterexample shown left as it was, the check recomputed."""
    replay = entry["replay"]
    for inputs in [replay["inputs"]] if "inputs" in replay else replay["scalars"]:
        for k in inputs:
            inputs[k] ^= 0x40
    for k in replay.get("memory", {}):
        replay["memory"][k] ^= 0x40
    return _sealed(entry)


def _sealed_edit(**changes):
    def edit(entry: dict) -> bytes:
        return _sealed({**entry, **changes})
    return edit


TAMPERS = {  # name -> (the lines it is tried on, the edit: entry -> the file's new bytes)
    "verdict only": (["snippets different", "functions different"],
                     lambda e: b'{"verdict": "equivalent"}'),
    "a string": (["snippets different", "functions equivalent"], lambda e: b'"different"'),
    "a list": (["snippets equivalent", "memory different"], lambda e: b"[1, 2]"),
    "garbage bytes": (["snippets equivalent", "functions different"],
                      lambda e: bytes(range(256))),
    "truncated": (list(LINES), lambda e: json.dumps(e).encode()[:200]),
    "empty": (["functions equivalent"], lambda e: b""),
    "not UTF-8": (["snippets equivalent"],
                  lambda e: json.dumps(e).encode().replace(b'"schema"', b'"sch\xffema"')),
    "a field missing": (["snippets different"],
                        lambda e: json.dumps({k: v for k, v in e.items() if k != "pair"})
                        .encode()),
    "a field mistyped": (["functions equivalent"], _edit(schema="1")),
    "an unknown field": (["snippets equivalent"], _edit(trusted=True)),
    "flipped to equivalent": (["snippets different", "memory different"],
                              _flip("equivalent")),
    "flipped to equivalent, carefully": (["snippets different", "functions different",
                                          "memory different"], _careful_flip),
    "flipped to different": (["snippets equivalent", "functions equivalent"],
                             _flip("different")),
    "flipped to different, sealed": (["snippets equivalent", "functions equivalent"],
                                     _flip("different", seal=True)),
    "counterexample edited": (["snippets different", "functions different"],
                              _counterexample(seal=False)),
    "counterexample edited, sealed": (["snippets different", "functions different",
                                       "memory different"], _counterexample(seal=True)),
    "replay inputs edited, sealed": (["snippets different", "functions different",
                                      "memory different"], _replay_inputs),
    "another build": (["snippets equivalent"], _edit(build="0" * 20)),
    "another build, sealed": (["functions equivalent"], _sealed_edit(build="0" * 20)),
    "another Z3, sealed": (["snippets equivalent"], _sealed_edit(z3="z3_solver-1.0")),
    "another schema, sealed": (["snippets equivalent"], _sealed_edit(schema=2)),
    "other options, sealed": (["functions equivalent"],
                              lambda e: _sealed({**e, "options": {**e["options"],
                                                                  "timeout": 1.0}})),
    "a replay on an equivalent, sealed": (["snippets equivalent"],
                                          _sealed_edit(replay={"inputs": {"a": 1}})),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_entry_changes_no_verdict_and_warns_once(decided, work, name):
    lines, tamper = TAMPERS[name]
    entries = _entries(work)
    for line in lines:
        path = entries[line]
        path.write_bytes(tamper(json.loads(path.read_bytes())))
    answers, stderr = _run(work)
    assert _plain(answers) == _plain(decided[1])
    tampered = [n for n, (line, _) in enumerate(LINES.items()) if line in lines]
    assert [n for n, r in enumerate(answers) if not r.get("cached")] == tampered
    warnings = stderr.splitlines()
    assert len(warnings) == len(lines) and "Traceback" not in stderr
    for line in lines:
        assert sum(str(entries[line]) in w for w in warnings) == 1
    assert all(w.startswith("warning: equiv --batch cache entry ") and "decided afresh" in w
               for w in warnings)
    # the pair decided afresh is cached again: the next run is served, and quiet
    again, stderr = _run(work)
    assert _plain(again) == _plain(decided[1]) and stderr == ""
    assert all(r.get("cached") for r in again)


def test_an_entry_of_another_pair_is_not_served(decided, work):
    """A whole, sealed entry moved to another pair's address (as a copy between caches
    or a hand would): its digest is not that pair's."""
    entries = _entries(work)
    for source, target in (("snippets equivalent", "snippets different"),
                           ("functions equivalent", "functions different"),
                           ("functions different", "memory different")):
        entries[target].write_bytes(entries[source].read_bytes())
    answers, stderr = _run(work)
    assert _plain(answers) == _plain(decided[1])
    assert stderr.count("it is for another pair") == 3
    assert [r.get("cached") for r in answers] == [True, None, True, None, None]
