"""`equiv --batch`'s cache is checked, never trusted (issue 40): an entry tampered with
in any way, or one that belongs to another pair, build or set of options, is dropped with
one warning naming its file, and its pair is decided afresh to the verdict an untampered
run gives. A "different" is served only once its counterexample replays through the
evaluator; the pairs' verdicts are known by construction (u32 addition commutes; adding 1
and adding 2 to a word in memory differ everywhere)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from ptxsmt.batch import cache
from ptxsmt.cli import main
from ptxsmt.smt.solving import verdicts
from ptxsmt.synth import proofcache, search
from ptxsmt.synth.executor import Serial

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
    return [{k: v for k, v in r.items() if k not in ("seconds", "cached", "run")}
            for r in results]


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


# ---- synth's proof cache: the same rule ------------------------------------------------------

PROOFS = [("add.u32 d, a, b;", "add.u32 d, b, a;"), ("add.u32 d, a, b;", "sub.u32 d, a, b;"),
          ("and.b32 d, a, b;", "or.b32 d, a, b;")]  # equivalent, different, different


def _prove(place: Path, monkeypatch) -> tuple[list[dict], search.Stats]:
    """The pairs proved through the cache at `place`, as a fresh process would (nothing
    of the cache held in memory)."""
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(place))
    monkeypatch.setattr(cache, "_ENABLED", True)
    monkeypatch.setattr(cache, "_STORE", None)
    monkeypatch.setattr(proofcache, "_STORES", {})
    stats = search.Stats()
    results = search.Prover(Serial(), stats, 10.0).run(PROOFS, ("d",))
    return results, stats


def _proof_rows(place: Path) -> tuple[Path, dict[str, bytes]]:
    """The proof cache's file and its records (less the store's seal)."""
    [path] = place.glob("synth-proofs-*.sqlite")
    with sqlite3.connect(path) as db:
        return path, {k: r[16:] for k, r in db.execute("SELECT key, record FROM programs")}


def _put_rows(path: Path, rows: dict[str, bytes]) -> None:
    """Records written over the old, with the store's seal: the edit is the record's, for
    the proof cache's own checks to find."""
    with sqlite3.connect(path) as db:
        db.executemany("UPDATE programs SET record = ? WHERE key = ?",
                       [(cache.seal(k, r) + r, k) for k, r in rows.items()])


PROOF_TAMPERS = {
    "garbage bytes": lambda e: bytes(range(256)),
    "a list": lambda e: b"[1, 2]",
    "verdict only": lambda e: b'{"verdict": "equivalent"}',
    "flipped to different, sealed": _flip("different", seal=True),
    "flipped to equivalent, carefully": _careful_flip,
    "counterexample edited, sealed": _counterexample(seal=True),
    "replay inputs edited, sealed": _replay_inputs,
}


@pytest.fixture(scope="module")
def proved(tmp_path_factory) -> tuple[Path, list[dict]]:
    place = tmp_path_factory.mktemp("proofs")
    with pytest.MonkeyPatch.context() as mp:
        results, stats = _prove(place, mp)
        cache.flush()
        proofcache.flush()
    assert [r["verdict"] for r in results] == ["equivalent", "different", "different"]
    assert stats.cache_hits == 0
    return place, results


@pytest.mark.parametrize("name", sorted(PROOF_TAMPERS))
def test_a_tampered_proof_changes_no_verdict_and_is_named_once(proved, tmp_path, monkeypatch,
                                                                name):
    place = tmp_path / "cache"
    shutil.copytree(proved[0], place)
    path, rows = _proof_rows(place)
    tamper = PROOF_TAMPERS[name]
    targets = [k for k in rows if json.loads(rows[k])["verdict"] ==
               ("equivalent" if "to different" in name or "a list" in name else "different")]
    _put_rows(path, {k: tamper(json.loads(rows[k])) for k in targets})
    cache.DROPPED.clear()
    results, stats = _prove(place, monkeypatch)
    assert results == proved[1]
    assert stats.cache_hits == len(PROOFS) - len(targets)
    problems, cache.DROPPED[:] = list(cache.DROPPED), []
    assert len(problems) == len(targets) and all(p.startswith(f"{path}: ") for p in problems)
    proofcache.flush()  # the pair proved afresh replaces its record
    results, stats = _prove(place, monkeypatch)
    assert results == proved[1] and stats.cache_hits == len(PROOFS)
    assert cache.DROPPED == []


def test_a_proof_of_another_pair_is_not_served(proved, tmp_path, monkeypatch):
    place = tmp_path / "cache"
    shutil.copytree(proved[0], place)
    path, rows = _proof_rows(place)
    keys = sorted(rows, key=lambda k: json.loads(rows[k])["verdict"])  # different first
    _put_rows(path, {keys[0]: rows[keys[1]], keys[1]: rows[keys[0]]})  # two differents swap
    cache.DROPPED.clear()
    results, stats = _prove(place, monkeypatch)
    assert results == proved[1] and stats.cache_hits == 1
    assert [p.endswith("it is for another pair") for p in cache.DROPPED] == [True] * 2


def test_a_record_without_its_seal_is_dropped_and_replaced(proved, tmp_path, monkeypatch):
    """The store's own check (every record of every SQLite cache): a record edited in
    place, its seal stale."""
    place = tmp_path / "cache"
    shutil.copytree(proved[0], place)
    path, rows = _proof_rows(place)
    with sqlite3.connect(path) as db:
        db.executemany("UPDATE programs SET record = ? WHERE key = ?",
                       [(b"x" * 16 + r, k) for k, r in rows.items()])
    cache.DROPPED.clear()
    results, stats = _prove(place, monkeypatch)
    assert results == proved[1] and stats.cache_hits == 0
    assert [p.endswith("fails its seal") for p in cache.DROPPED] == [True] * len(PROOFS)
    proofcache.flush()
    assert _prove(place, monkeypatch)[1].cache_hits == len(PROOFS)


# ---- the compiled programs of eval --batch: the store's seal ----------------------------------

def test_a_program_moved_to_another_text_is_dropped_with_a_warning(tmp_path):
    """Two texts' sealed records swapped (add's program under sub's text would answer
    every sub line with a sum): each is dropped with one warning, recompiled, replaced."""
    place = tmp_path / "cache"
    lines = tmp_path / "lines.jsonl"
    lines.write_text("".join(json.dumps({"ptx": f"{op}.u32 d, a, b;", "inputs": {"a": 7, "b": 5}})
                             + "\n" for op in ("add", "sub")))
    env = {**os.environ, "PTXSMT_CACHE_DIR": str(place)}

    def run() -> tuple[list[str], str]:
        r = subprocess.run([sys.executable, "-m", "ptxsmt", "eval", "--batch", str(lines)],
                           env=env, capture_output=True, text=True, check=True)
        return [json.loads(x)["outputs"]["d"] for x in r.stdout.splitlines()], r.stderr

    assert run() == (["0x0000000c", "0x00000002"], "")
    [path] = place.glob("programs-*.sqlite")
    with sqlite3.connect(path) as db:
        texts = dict(db.execute("SELECT key, record FROM programs WHERE key LIKE 'text %'"))
        add, sub = sorted(texts)
        db.executemany("UPDATE programs SET record = ? WHERE key = ?",
                       [(texts[sub], add), (texts[add], sub)])
    answers, stderr = run()
    assert answers == ["0x0000000c", "0x00000002"]
    warnings = stderr.splitlines()
    assert len(warnings) == 2 and all(w.startswith("warning: cache record dropped") and
                                      str(path) in w and "fails its seal" in w
                                      for w in warnings)
    assert run() == (["0x0000000c", "0x00000002"], "")


def test_cache_clear_removes_the_verdicts_too(work):
    assert list((work / "cache" / "equiv").glob("*.json"))
    r = CliRunner().invoke(main, ["cache", "--clear"])
    assert r.exit_code == 0, r.output
    assert list((work / "cache").rglob("*.json")) == []
    assert list((work / "cache").glob("*.sqlite*")) == []
