"""The on-disk cache of compiled programs only ever saves time: a warm run answers what a
cold one does without importing Z3, a cache that cannot be used (damaged, in the way, off)
changes no answer and prints no traceback, and the file's name changes with anything a
program depends on.

Answers are held against the models' stored outputs (`eval --batch --check`) and the
independent reference (tests/reference.py), never against the cache itself. Each test
has a cache directory of its own and empties the in-process caches first, so the disk is
what is read.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from importlib.metadata import version
from pathlib import Path

import pytest
from batchbits import evaluate_bits
from click.testing import CliRunner
from reference import UNSPECIFIED
from reference import run as reference

from ptxsmt import Options, PtxError, evaluate
from ptxsmt.batch import cache, engine, programs
from ptxsmt.batch.engine import evaluate_many
from ptxsmt.cli import main
from ptxsmt.fast import Unsupported

MODELS = Path(__file__).resolve().parent.parent / "models"
# (model file, text[, inputs]): a few of each text's lines (those inputs only), with their
# stored outputs
VSET_H1 = "vset2.s32.s32.eq d.h1, a, b, c;"
SAMPLE = [
    ("setp.jsonl", "setp.lt.f32 p|q, a, b;"),
    ("half-set.jsonl", "set.eq.and.f16x2.f16x2 d, a, b, c;"),
    ("vset4.jsonl", "vset4.u32.u32.lt d, a, b, c;"),
    ("selp.jsonl", "selp.b32 d, a, b, c;"),
    ("slct.jsonl", "slct.f32.s32 d, a, b, c;"),
    ("guards.jsonl", "@!g set.eq.and.ftz.s32.f16x2 d, a, b, c;"),
    ("sm_1x.jsonl", "set.eq.and.f32.f32 d, a, b, c;"),
    # one line under two options, two answers: the options are part of a program's key
    ("vset2.jsonl", VSET_H1, {"a": "0x00000002", "b": "0xffffffff", "c": "0x00000000"}),
    ("vset-merge-b.jsonl", VSET_H1, {"a": "0x00000002", "b": "0xffffffff", "c": "0x00000000"}),
]
# `ptxsmt ARGS` in a fresh process, then (to stderr) its exit code, whether it imported Z3 and
# the parser (a run that compiles nothing does neither) and the problem its store met
_RUN = """
import json, sys
from ptxsmt.cli import main
from ptxsmt.batch import cache
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as e:
    code = e.code
store = cache.store()
print(json.dumps({"exit": code, "z3": "z3" in sys.modules,
                  "parser": "ptxsmt.isa.body" in sys.modules,
                  "problem": store.failed if store else None}), file=sys.stderr)
"""


def _sample_lines(per_text: int = 3, sample=SAMPLE) -> list[str]:
    lines = []
    for name, text, *inputs in sample:
        with open(MODELS / name) as f:
            objs = [(line, json.loads(line)) for line in f]
        found = [line for line, obj in objs
                 if obj["ptx"] == text and (not inputs or obj["inputs"] == inputs[0])]
        assert found, (name, text)
        lines += found[:per_text]
    return lines


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(_sample_lines()))
    return path


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    """This test's own cache directory; the cache on, and nothing of it held in memory."""
    place = tmp_path / "cache"
    monkeypatch.setenv("PTXSMT_CACHE_DIR", str(place))
    monkeypatch.setattr(cache, "_ENABLED", True)  # `--no-cache` in-process turns it off
    monkeypatch.setattr(cache, "_STORE", None)
    _forget()
    yield place
    _forget()


def _forget() -> None:
    programs.compile_program.cache_clear()


def _env(place: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PTXSMT_NO_CACHE"}
    return {**env, "PTXSMT_CACHE_DIR": str(place), **extra}


def _run(place: Path, *args: str, **extra: str) -> tuple[dict, list[dict], str]:
    """A fresh process runs `ptxsmt ARGS`: (its report, its JSONL output, its stderr)."""
    proc = subprocess.run([sys.executable, "-c", _RUN, *args], env=_env(place, **extra),
                          capture_output=True, text=True, timeout=120)
    *lines, last = proc.stderr.splitlines()
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(last), [json.loads(x) for x in proc.stdout.splitlines()], "\n".join(lines)


def _stored(sample: Path) -> list[dict]:
    return [json.loads(x)["outputs"] for x in sample.read_text().splitlines()]


def _outputs(answers: list[dict]) -> list[dict]:
    assert all("error" not in a for a in answers), answers
    return [a["outputs"] for a in answers]


def _files(place: Path) -> list[str]:
    return sorted(p.name for p in place.glob("programs-*")) if place.is_dir() else []


def _keys(place: Path) -> list[str]:
    (path,) = place.glob("programs-*.sqlite")
    with closing(sqlite3.connect(path)) as db:
        return sorted(key for (key,) in db.execute("SELECT key FROM programs"))


# ---- a warm run -----------------------------------------------------------------------------

def test_a_warm_batch_answers_from_the_cache_without_the_solver(cache_dir, sample):
    cold, cold_answers, _ = _run(cache_dir, "eval", "--batch", str(sample))
    assert cold == {"exit": 0, "z3": True, "parser": True, "problem": None}
    assert _outputs(cold_answers) == _stored(sample)
    warm, warm_answers, _ = _run(cache_dir, "eval", "--batch", str(sample))
    assert warm == {"exit": 0, "z3": False, "parser": False, "problem": None}
    assert warm_answers == cold_answers
    checked, _, summary = _run(cache_dir, "eval", "--batch", str(sample), "--check")
    assert checked == {"exit": 0, "z3": False, "parser": False, "problem": None}
    assert summary == f"check: {len(_stored(sample))} passed, 0 failed"


# ---- what the cache holds ---------------------------------------------------------------------

SAME_SHAPE = [("setp.lt.f32 p, a, 0f3F800000;", "p"), ("setp.lt.f32 %p9, %f1, 0f40400000;", "p9")]
TWO = 0x40000000  # 2.0: below 3.0, not below 1.0; each text must keep its own immediate


def _answer(text: str, register: str, value: int) -> bool:
    program = programs.compile_program(text)
    (name,) = program.inputs
    return bool(program({name: [value]})[register][0])


def _expected(text: str, register: str, value: int) -> bool:
    name = "a" if " a," in text else "f1"
    return reference(text, {name: value})[register]


def test_one_shape_record_and_a_text_record_each_and_each_text_its_own_answer(
        cache_dir, monkeypatch):
    store = cache.store()
    assert store.count() == 0
    (first, p), (second, p9) = SAME_SHAPE
    assert _answer(first, p, TWO) is _expected(first, p, TWO) is False
    assert store.count() == 2  # the text's shape and the shape's program
    assert _answer(second, p9, TWO) is _expected(second, p9, TWO) is True
    assert store.count() == 3  # one more text, the same shape
    keys = _keys(cache_dir)
    assert [k for k in keys if k.startswith("text ")] == sorted(
        f"text {Options()!r} {t}" for t, _ in SAME_SHAPE)
    (shape_key,) = [k for k in keys if k.startswith("shape ")]
    record = programs._decode(store.get(shape_key))
    assert type(record) is programs.Record and record.code  # marshalled bytecode
    # warm: neither the code generator nor the parser's shape is needed, answers unchanged
    _forget()
    monkeypatch.setattr(programs, "_generate", _never)
    monkeypatch.setattr(programs, "shaped", _never)
    for value in (TWO, 0x3F000000, 0x7FC00000, 0x80000000):  # 2.0, 0.5, NaN, -0.0
        for text, register in SAME_SHAPE:
            assert _answer(text, register, value) is _expected(text, register, value), text
    assert store.count() == 3


def _never(*args):
    raise AssertionError(f"compiled or parsed afresh: {args}")


# ---- the cache off ------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["--no-cache", "PTXSMT_NO_CACHE=1"])
def test_the_cache_off_reads_and_writes_nothing_and_answers_right(cache_dir, sample, how):
    flag, env = ([how], {}) if how.startswith("--") else ([], {"PTXSMT_NO_CACHE": "1"})
    off, answers, _ = _run(cache_dir, "eval", "--batch", str(sample), *flag, **env)
    assert off["exit"] == 0 and _outputs(answers) == _stored(sample)
    assert _files(cache_dir) == []
    _run(cache_dir, "eval", "--batch", str(sample))  # now a warm cache it must not read
    before = _keys(cache_dir)
    off, answers, _ = _run(cache_dir, "eval", "--batch", str(sample), "--check", *flag, **env)
    assert off == {"exit": 0, "z3": True, "parser": True, "problem": None}  # compiled afresh
    assert _keys(cache_dir) == before
    if env:  # and `ptxsmt cache` says so
        proc = subprocess.run([sys.executable, "-m", "ptxsmt", "cache", "--json"],
                              env=_env(cache_dir, **env), capture_output=True, text=True)
        assert json.loads(proc.stdout)["enabled"] is False, proc.stdout


def test_no_cache_in_process_writes_nothing(cache_dir, sample):
    r = CliRunner().invoke(main, ["eval", "--no-cache", "--batch", str(sample), "--check"])
    assert r.exit_code == 0, r.output
    assert cache.store() is None and _files(cache_dir) == []


# ---- a cache that cannot be used ------------------------------------------------------------

def _garbage(place: Path, sample: Path) -> None:
    place.mkdir()
    (place / f"programs-{cache.fingerprint()}.sqlite").write_bytes(bytes(range(256)) * 64)


def _torn(place: Path, sample: Path) -> None:
    """A cache that worked, then lost its pages past the first (the header and schema)."""
    _run(place, "eval", "--batch", str(sample))
    (path,) = place.glob("programs-*.sqlite")
    with closing(sqlite3.connect(path)) as db:  # what the write-ahead log holds, in the file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[:4096] + bytes(i * 7 % 256 for i in range(len(data) - 4096)))


def _a_file(place: Path, sample: Path) -> None:
    place.write_text("not a directory\n")


def _read_only(place: Path, sample: Path) -> None:
    place.mkdir()
    place.chmod(0o555)


DAMAGE = [
    pytest.param(_garbage, id="garbage-file"),
    pytest.param(_torn, id="torn-file"),
    pytest.param(_a_file, id="directory-is-a-file"),
    pytest.param(_read_only, id="read-only-directory", marks=pytest.mark.skipif(
        hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")),
]


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_cache_that_cannot_be_used_changes_no_answer(cache_dir, sample, damage):
    damage(cache_dir, sample)
    for _ in range(2):  # and the run after it: nothing was made of the damage
        run, answers, stderr = _run(cache_dir, "eval", "--batch", str(sample))
        assert run["exit"] == 0 and run["z3"] and run["problem"], run
        assert _outputs(answers) == _stored(sample)
        assert stderr == "", stderr
    checked, _, summary = _run(cache_dir, "eval", "--batch", str(sample), "--check")
    assert checked["exit"] == 0 and summary == f"check: {len(_stored(sample))} passed, 0 failed"
    proc = subprocess.run([sys.executable, "-m", "ptxsmt", "cache", "--json"],
                          env=_env(cache_dir), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    shown = json.loads(proc.stdout)
    assert shown["problem"] and shown["programs"] == 0 and shown["enabled"], shown
    assert shown["directory"] == str(cache_dir)
    # in-process, without the batch's fallback to the slow path: the store turns itself off
    for text, register in SAME_SHAPE:
        assert _answer(text, register, TWO) is _expected(text, register, TWO)
    assert cache.store().failed


# ---- the file's name: what a program depends on -----------------------------------------------

def test_the_fingerprint_follows_the_source_z3_and_python(tmp_path, monkeypatch):
    original = cache.fingerprint()
    copy = tmp_path / "ptxsmt"
    shutil.copytree(cache._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE", copy)
    assert cache.fingerprint() == original  # the source's text, not where it lies
    source = copy / "sem" / "options.py"
    text = source.read_text()
    source.write_text(text + "# an edit\n")
    edited = cache.fingerprint()
    assert edited != original
    source.write_text(text)
    assert cache.fingerprint() == original
    (copy / "eval" / "new_module.py").write_text("")
    assert cache.fingerprint() not in (original, edited)
    (copy / "eval" / "new_module.py").unlink()
    monkeypatch.setattr(cache, "z3_release", lambda: "z3_solver-9.9.9.dist-info")
    other_z3 = cache.fingerprint()
    assert other_z3 != original
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert cache.fingerprint() not in (original, other_z3)


def test_thez3_release_is_the_installed_distribution():
    assert cache.z3_release() == f"z3_solver-{version('z3-solver')}.dist-info"


# ---- concurrent runs ------------------------------------------------------------------------

def test_two_cold_runs_at_once_share_one_cache(cache_dir, sample):
    args = [sys.executable, "-m", "ptxsmt", "eval", "--batch", str(sample), "--check"]
    procs = [subprocess.Popen(args, env=_env(cache_dir), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out == "" and "Traceback" not in err, (out, err)
    warm, _, summary = _run(cache_dir, "eval", "--batch", str(sample), "--check")
    assert warm == {"exit": 0, "z3": False, "parser": False, "problem": None}
    assert summary == f"check: {len(_stored(sample))} passed, 0 failed"


def test_a_batch_command_writes_its_answers_and_programs_before_it_ends(cache_dir, sample):
    """`ptxsmt eval --batch` ends its process at once when done (`cli.common.run`, no
    teardown): what it answered and compiled is written first. A bad line's exit code
    survives it."""
    stored = _stored(sample)
    with open(sample, "a") as f:
        f.write('{"ptx": "setp.lt.u32 p, a;", "inputs": {}}\n')
    proc = subprocess.run([sys.executable, "-m", "ptxsmt", "eval", "--batch", str(sample)],
                          env=_env(cache_dir), capture_output=True, text=True, timeout=120)
    *answers, bad = [json.loads(x) for x in proc.stdout.splitlines()]
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert _outputs(answers) == stored and "error" in bad
    warm, _, _ = _run(cache_dir, "eval", "--batch", str(sample))
    # compiled nothing; the bad line is parsed again for its error (an error is never cached)
    assert warm == {"exit": 1, "z3": False, "parser": True, "problem": None}


def test_records_are_written_a_batch_at_a_time_and_read_before(cache_dir):
    """Puts wait for the batch's end (one transaction: concurrent runs no longer queue on
    each other's locks record by record), and this run reads them before that."""
    store = cache.store()
    store.get("probe")  # the file exists, empty
    store.put("text a", b"record a")
    store.put("text a", b"record a2")  # INSERT OR IGNORE: the first stays
    assert store.get("text a") == b"record a" and _keys(cache_dir) == []
    evaluate_many([("setp.lt.u32 p, a, b;", {"a": "0x00000001", "b": "0x00000002"})])
    assert {"text a", f"text {Options()!r} setp.lt.u32 p, a, b;"} <= set(_keys(cache_dir))
    assert store.pending == {} and store.get("text a") == b"record a"


# ---- a shape the fast path refuses ----------------------------------------------------------

CVT = "cvt.f32.f16 x, a; setp.nan.f32 p, x, x;"
F16 = ["0x7e01", "0xfc01", "0x8001", "0x03ff", "0x8000", "0x0000", "0x7c00", "0x3c00"]


def test_an_unsupported_shape_is_remembered_and_answered_by_the_slow_path(
        cache_dir, monkeypatch):
    with pytest.raises(Unsupported, match="leaves open") as cold:
        programs.compile_program(CVT)
    cache.flush()  # a batch writes at its end; a lone compile at exit
    records = [cache.store().get(k) for k in _keys(cache_dir) if k.startswith("shape ")]
    assert [programs._decode(r) for r in records] == [str(cold.value)]  # why, no program
    _forget()
    monkeypatch.setattr(programs, "_generate", _never)
    with pytest.raises(Unsupported) as warm:
        programs.compile_program(CVT)
    assert str(warm.value) == str(cold.value)
    rows = [{"a": a} for a in F16]
    got = evaluate_bits([(CVT, r) for r in rows])
    for row, answer in zip(rows, got):
        want = reference(CVT, {"a": int(row["a"], 16)})
        if want["x"] == UNSPECIFIED:  # a NaN's cvt: the ISA leaves x open
            assert isinstance(answer, PtxError) and "unspecified" in str(answer), row
            with pytest.raises(PtxError, match="unspecified"):
                evaluate(CVT, row)
        else:
            assert answer == {"x": want["x"], "p": want["p"]}, row
            assert answer == evaluate(CVT, row).outputs
    assert any(isinstance(a, PtxError) for a in got) and not all(
        isinstance(a, PtxError) for a in got)


# ---- `ptxsmt cache` -------------------------------------------------------------------------

def test_the_cache_command_shows_and_clears(cache_dir, sample):
    runner = CliRunner()
    assert runner.invoke(main, ["eval", "--batch", str(sample), "--check"]).exit_code == 0
    shown = json.loads(runner.invoke(main, ["cache", "--json"]).stdout)
    assert shown["directory"] == str(cache_dir) and shown["problem"] is None
    assert shown["programs"] == cache.store().count() > 0
    assert Path(shown["file"]).parent == cache_dir and Path(shown["file"]).is_file()
    text = runner.invoke(main, ["cache"])
    assert text.exit_code == 0
    assert f"cache directory: {cache_dir}\n" in text.stdout
    assert f"programs: {shown['programs']:,}\n" in text.stdout
    cleared = runner.invoke(main, ["cache", "--clear"])
    assert cleared.exit_code == 0 and f"from {cache_dir}" in cleared.stdout, cleared.output
    assert _files(cache_dir) == []
    _forget()
    again = runner.invoke(main, ["eval", "--batch", str(sample), "--check"])
    assert again.exit_code == 0, again.output
    assert cache.store().count() == shown["programs"]  # compiled and stored afresh
    assert runner.invoke(main, ["cache", "--clear", "--json"]).exit_code == 0
    assert _files(cache_dir) == []


# ---- files of other builds ------------------------------------------------------------------

DAY = 24 * 3600


def _age(path: Path, days: float) -> Path:
    path.write_bytes(b"")
    then = time.time() - days * DAY
    os.utime(path, (then, then))
    return path


def test_files_of_other_builds_unused_for_a_week_are_removed(cache_dir):
    cache_dir.mkdir()
    old = [_age(cache_dir / name, 8) for name in ("programs-0000.sqlite",
                                                   "programs-0000.sqlite-wal")]
    recent = _age(cache_dir / "programs-1111.sqlite", 1)
    not_ours = _age(cache_dir / "notes-0000.sqlite", 8)
    assert cache.store().count() == 0  # creates this build's file
    assert not any(p.exists() for p in old)
    assert recent.exists() and not_ours.exists()
    kept = sorted(p.name for p in cache_dir.glob("programs-*.sqlite"))
    assert kept == sorted(["programs-1111.sqlite", cache.store().path.name])


def test_a_file_that_is_only_read_is_in_use(cache_dir, monkeypatch):
    """A warm run only reads, which leaves a SQLite file's mtime as it was: the run marks
    it used, so a build read every day keeps its file when another build starts one."""
    text, register = SAME_SHAPE[0]
    _answer(text, register, TWO)  # this build's file, with a program in it
    path = cache.store().path
    monkeypatch.setattr(cache, "_STORE", None)  # closed: the run is over
    os.utime(path, (time.time() - 8 * DAY,) * 2)
    _forget()
    assert _answer(text, register, TWO) is _expected(text, register, TWO)  # a warm run
    assert time.time() - path.stat().st_mtime < 3600
    monkeypatch.setattr(cache, "_STORE", None)
    monkeypatch.setattr(cache, "z3_release", lambda: "z3_solver-9.9.9.dist-info")
    assert cache.store().path != path and cache.store().count() == 0  # another build's file
    assert path.exists()


# ---- a window's records: one query; a pool's records: the parent's cache ----------------------

_WINDOW = [(f"setp.{op}.u32 p, a, {k};", {"a": "0x00000005"}) for op in ("lt", "ge")
           for k in (3, 9)]


def test_a_batch_reads_its_texts_records_in_one_query(cache_dir, monkeypatch):
    evaluate_many(_WINDOW)
    cache.flush()
    monkeypatch.setattr(cache, "_STORE", None)  # a fresh process: nothing held in memory
    _forget()
    queries = []
    real = cache.Store._run
    monkeypatch.setattr(cache.Store, "_run", lambda self, sql, *a, **k:
                        queries.append(sql.split()[0]) or real(self, sql, *a, **k))
    assert evaluate_bits(_WINDOW) == [{"p": 5 < 3}, {"p": 5 < 9}, {"p": 5 >= 3}, {"p": 5 >= 9}]
    assert queries == ["SELECT"]  # the window's four texts, read at once


def test_records_a_worker_compiles_answer_in_the_parent(cache_dir, monkeypatch):
    """What `compile_records` hands back (here: this process, its cache off) is adopted by
    the parent's cache, and the parent answers from it by the fast path."""
    monkeypatch.setattr(engine, "_slow", lambda *a: pytest.fail("took the slow path"))
    monkeypatch.setattr(cache, "_ENABLED", False)
    records = programs.compile_records([text for text, _ in _WINDOW], Options())
    monkeypatch.setattr(cache, "_ENABLED", True)
    _forget()
    for key, record in records:  # as the parent adds a worker's records
        cache.store().put(key, record)
    monkeypatch.setattr(programs, "_generate", _never)  # nothing compiled in the parent
    assert evaluate_bits(_WINDOW) == [{"p": 5 < 3}, {"p": 5 < 9}, {"p": 5 >= 3}, {"p": 5 >= 9}]
