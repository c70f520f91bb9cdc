"""`ptxsmt serve` through Flask's test client: verdicts, the counterexample table checked
against plain-Python arithmetic and the independent PTX interpreter, permalinks that
re-replay a stored "different" (and refuse a forged one), the worker pool's limits, and
50 hostile requests answered with clear errors and no traceback."""

from __future__ import annotations

import json
import math
import os
import shlex
import socket
import struct
import time
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from ptx_interp import run as interpret

from ptxsmt.cli import main
from ptxsmt.serve import jobs
from ptxsmt.serve.app import MAX_BODY, create_app
from ptxsmt.serve.request import MAX_SIDE
from ptxsmt.smt.solving import verdicts

PTX = Path(__file__).parent / "ptx"
MISCOMPILE = {"lhs": "setp.lt.f32 p, a, b;\nnot.pred p, p;", "rhs": "setp.ge.f32 p, a, b;"}
WAIT = 120  # seconds a verdict may take on a loaded machine; a test never waits on timing


@pytest.fixture
def db(tmp_path):
    return tmp_path / "links.sqlite"


@pytest.fixture
def app(db):
    app = create_app(db, workers=2, queue=4)
    yield app
    app.extensions["ptxsmt"]["pool"].close()


def finished(client, key: str) -> dict:
    """The request's state once its worker is done."""
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        now = client.get(f"/api/r/{key}").get_json()
        if now["state"] not in ("queued", "running"):
            return now
        time.sleep(0.05)
    raise AssertionError(f"no verdict within {WAIT} s")


def submit(client, fields: dict) -> str:
    r = client.post("/run", data=fields)
    assert r.status_code == 303, r.data
    return r.headers["Location"].rsplit("/", 1)[1]


def f32(hex_bits: str) -> float:
    return struct.unpack("<f", int(hex_bits, 16).to_bytes(4, "little"))[0]


def test_a_miscompile_shows_its_counterexample_table(app):
    client = app.test_client()
    key = submit(client, MISCOMPILE)
    now = finished(client, key)
    assert now["state"] == "done" and now["result"]["verdict"] == "different"
    inputs = {c["name"]: c for c in now["shown"]["inputs"]}
    a, b = f32(inputs["a"]["hex"]), f32(inputs["b"]["hex"])
    # plain Python: not(a < b) and a >= b disagree exactly when a or b is NaN
    expected = [not (a < b), a >= b]
    assert expected[0] != expected[1]
    assert [inputs[x]["class"] == "NaN" for x in "ab"] == [math.isnan(a), math.isnan(b)]
    (p,) = now["shown"]["outputs"]
    assert p["differs"] and [p[s]["hex"] for s in ("lhs", "rhs")] == \
        [json.dumps(v) for v in expected]
    assert p["bits"] == [[[str(int(expected[0])), str(int(expected[1])), True]]]
    page = client.get(f"/r/{key}").data.decode()
    assert 'class="x"' in page and f"/r/{key}" in page
    for line, value in zip(now["shown"]["reproduce"], expected):  # each line replays it
        assert line.startswith("ptxsmt eval ")
        r = CliRunner().invoke(main, ["eval", *shlex.split(line)[2:], "--json"])
        assert json.loads(r.stdout)["outputs"]["p"] is value


def test_function_pair_table_agrees_with_the_independent_interpreter(app):
    client = app.test_client()
    lhs = (PTX / "func_sm90_O3.ptx").read_text()
    rhs = (PTX / "func_sm90_O3_wrong.ptx").read_text()
    name = "_Z4pickPKiS0_Piii"
    key = submit(client, {"lhs": lhs, "rhs": rhs, "function": name})
    now = finished(client, key)
    assert now["result"]["verdict"] == "different"
    cex = now["result"]["counterexample"]
    params = {k: int(v, 16) for k, v in cex["inputs"].items() if "param" in k}
    specials = {k: int(v, 16) for k, v in cex["inputs"].items() if "param" not in k}
    memory = {}
    for loc, v in cex["memory"].items():
        at = int(loc[loc.index("[") + 1:loc.index("]")], 16)
        memory.update({at + i: (int(v, 16) >> 8 * i) & 0xFF for i in range(4)})
    (where,) = cex["differ"]
    at = int(where[where.index("[") + 1:where.index("]")], 16)
    ends = [interpret(text, name, params, specials, memory)[1] for text in (lhs, rhs)]
    words = [sum(m.get(at + i, 0) << 8 * i for i in range(4)) for m in ends]
    assert words[0] != words[1]
    shown = {o["name"]: o for o in now["shown"]["outputs"]}[where]
    assert [int(shown[s]["hex"], 16) for s in ("lhs", "rhs")] == words
    assert now["shown"]["reproduce"][0].startswith(f"ptxsmt eval a.ptx --function {name} ")
    assert client.get(f"/r/{key}/a").data.decode() == lhs  # what the replay line reads


def test_a_stored_different_is_replayed_before_it_is_shown(app, db):
    client = app.test_client()
    key = submit(client, MISCOMPILE)
    first = finished(client, key)
    later = create_app(db, workers=1)  # a restarted server: only the store remembers
    try:
        again = finished(later.test_client(), key)
        assert again["stored"] and again["shown"] == first["shown"] and not again["note"]
        assert later.extensions["ptxsmt"]["pool"].get(key) is not None  # a worker replayed it
    finally:
        later.extensions["ptxsmt"]["pool"].close()


def _forge(db: Path, key: str, edit) -> None:
    """Rewrite the stored verdict of `key` with `edit(entry)`, its check recomputed (a
    forger's entry: only the replay can tell)."""
    import sqlite3
    with sqlite3.connect(db) as con:
        (blob,) = con.execute("SELECT verdict FROM links WHERE key = ?", (key,)).fetchone()
        entry = msgspec.json.decode(blob, type=verdicts.Entry)
        edit(entry)
        entry.check = verdicts.checksum(entry)
        con.execute("UPDATE links SET verdict = ? WHERE key = ?",
                    (msgspec.json.encode(entry), key))


@pytest.mark.parametrize("edit, verdict", [
    # the shown outputs swapped: the replay gives the true ones
    (lambda e: e.result["counterexample"].update(lhs={"p": False}, rhs={"p": True}),
     "different"),
    # a "different" that is not: the inputs no longer split the two sides
    (lambda e: e.replay.update(inputs={"a": 0, "b": 0x3F800000}), "different"),
])
def test_a_forged_different_is_not_served(app, db, edit, verdict):
    client = app.test_client()
    key = submit(client, MISCOMPILE)
    truth = finished(client, key)
    _forge(db, key, edit)
    later = create_app(db, workers=1)
    try:
        now = finished(later.test_client(), key)
        assert "does not replay" in now["note"] or "not what the evaluator" in now["note"]
        assert now["result"]["verdict"] == verdict and not now["stored"]
        assert now["shown"]["outputs"][0]["lhs"] != {} and \
            truth["result"]["verdict"] == "different"
    finally:
        later.extensions["ptxsmt"]["pool"].close()


def test_an_edited_entry_fails_its_check_and_an_equivalent_is_served_from_the_store(app, db):
    client = app.test_client()
    key = submit(client, {"lhs": "setp.lt.f32 p, a, b;", "rhs": "setp.gt.f32 p, b, a;"})
    assert finished(client, key)["result"]["verdict"] == "equivalent"
    later = create_app(db, workers=1)
    try:
        now = later.test_client().get(f"/api/r/{key}").get_json()
        assert now["state"] == "done" and now["stored"]  # no worker needed
    finally:
        later.extensions["ptxsmt"]["pool"].close()
    import sqlite3
    with sqlite3.connect(db) as con:  # a hand edit that leaves the check stale
        (blob,) = con.execute("SELECT verdict FROM links").fetchone()
        con.execute("UPDATE links SET verdict = ?", (blob.replace(b"equivalent", b"refines"),))
    later = create_app(db, workers=1)
    try:
        now = finished(later.test_client(), key)
        assert "check does not match" in now["note"] and not now["stored"]
        assert now["result"]["verdict"] == "equivalent"
    finally:
        later.extensions["ptxsmt"]["pool"].close()


def test_a_sealed_request_that_was_edited_is_refused(app, db):
    client = app.test_client()
    key = submit(client, {"lhs": "setp.lt.f32 p, a, b;", "rhs": "setp.gt.f32 p, b, a;"})
    import sqlite3
    with sqlite3.connect(db) as con:
        con.execute("UPDATE links SET request = replace(request, 'gt', 'ge')")
    r = client.get(f"/r/{key}")
    assert r.status_code == 409 and b"fails its seal" in r.data


def test_equiv_link_prints_a_permalink_the_server_proves(db, monkeypatch):
    monkeypatch.setenv("PTXSMT_SERVE_DB", str(db))
    monkeypatch.setenv("PTXSMT_SERVE_URL", "http://example.test:9/")
    r = CliRunner().invoke(main, ["equiv", MISCOMPILE["lhs"], MISCOMPILE["rhs"], "--link"])
    assert r.exit_code == 1
    link = r.stdout.splitlines()[-1]
    assert link.startswith("link: http://example.test:9/r/")
    app = create_app(db, workers=1)
    try:
        now = finished(app.test_client(), link.rsplit("/", 1)[1])
        assert now["result"]["verdict"] == "different"
    finally:
        app.extensions["ptxsmt"]["pool"].close()
    bad = CliRunner().invoke(main, ["equiv", "nonsense", "x", "--link"])
    assert bad.exit_code == 2 and "link:" not in bad.output and bad.stderr.startswith("error")


# --- the worker pool: limits, cancelling, no blocking (functions the workers import) ---

def hang(pid_file: str) -> None:
    Path(pid_file).write_text(str(os.getpid()))
    while True:
        time.sleep(1)


def hog() -> int:
    return len(bytearray(4 << 30))


def quick() -> str:
    return "done"


def _settled(pool: jobs.Pool, key: str) -> jobs.Job:
    end = time.monotonic() + WAIT
    while (job := pool.get(key)).state in jobs.ACTIVE:
        assert time.monotonic() < end
        time.sleep(0.02)
    return job


def _started(pid_file: Path) -> int:
    end = time.monotonic() + WAIT
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < end
        time.sleep(0.02)
    return int(pid_file.read_text())


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def pool():
    pool = jobs.Pool(workers=2, queue=1, memory=1 << 30, preload=())
    yield pool
    pool.close()


def test_a_job_past_its_limit_is_stopped_and_its_process_is_gone(pool, tmp_path):
    pool.submit("slow", hang, (str(tmp_path / "pid"),), limit=0.5)
    job = _settled(pool, "slow")
    assert job.state == "stopped" and "limit of 0.5 s" in job.error
    assert _gone(job.pid)


def test_cancel_kills_a_running_job_and_one_slow_job_blocks_no_other(pool, tmp_path):
    pool.submit("slow", hang, (str(tmp_path / "pid"),), limit=3600)
    pid = _started(tmp_path / "pid")
    pool.submit("quick", quick, (), limit=3600)
    assert _settled(pool, "quick").outcome == "done"
    assert pool.get("slow").state == "running"
    assert pool.cancel("slow")
    assert _settled(pool, "slow").state == "cancelled" and _gone(pid)
    assert not pool.cancel("slow")


def test_a_full_pool_says_busy_and_memory_is_bounded(pool, tmp_path):
    pool.submit("hog", hog, (), limit=3600)
    job = _settled(pool, "hog")
    assert job.state == "failed" and "out of memory" in job.error
    for i in range(3):
        pool.submit(f"slow{i}", hang, (str(tmp_path / f"pid{i}"),), limit=3600)
    with pytest.raises(jobs.Busy, match="busy"):
        pool.submit("one more", quick, (), limit=1)
    assert pool.submit("slow0", quick, (), limit=1).state in jobs.ACTIVE  # the same job


# --- hostile input ---

def _hostile(key: str) -> list[tuple[str, str, dict, int]]:
    """(method, path, keyword arguments of the test client's call, the status it must get):
    50 requests."""
    form = {"content_type": "application/x-www-form-urlencoded"}
    many = "".join(f".visible .func f{i}()\n{{\n\tret;\n}}\n" for i in range(3000))
    zero = "0" * 64
    out = [
        ("post", "/run", {"data": b"lhs=" + b"a" * MAX_BODY, **form}, 413),
        ("post", "/run", {"data": b"lhs=\xff\xfe&rhs=x", **form}, 400),
        ("post", "/run", {"data": b"lhs=%ff%fe&rhs=x", **form}, 400),
        ("post", "/run", {"data": b"\xef\xbb\xbf\x00\x00", "content_type": "application/json"},
         400),
        ("post", "/run", {"data": b"{", "content_type": "application/json"}, 400),
        ("post", "/run", {"data": b"[1, 2]", "content_type": "application/json"}, 400),
        ("post", "/run", {"json": {"lhs": 1, "rhs": 2}}, 400),
        ("post", "/run", {"json": {"lhs": "x", "rhs": "y", "evil": 1}}, 400),
        ("post", "/run", {"data": {"lhs": "", "rhs": "x"}}, 400),
        ("post", "/run", {"data": {"lhs": "a\0b", "rhs": "x"}}, 400),
        ("post", "/run", {"data": {"lhs": "x" * (MAX_SIDE + 1), "rhs": "x"}}, 400),
        ("post", "/run", {"data": "lhs=a&lhs=b&rhs=c", **form}, 400),
        ("post", "/run", {"data": "&".join(f"f{i}=1" for i in range(40)), **form}, 400),
        ("post", "/run", {"data": {"lhs": "x", "rhs": "y"},
                          "content_type": "multipart/form-data"}, 400),
        ("post", "/run", {"data": b"lhs=x&rhs=y", "content_type": "text/plain"}, 400),
        ("get", "/run", {}, 405),
        ("put", "/", {}, 405),
        ("get", "/r/not-a-key", {}, 404),
        ("get", f"/r/{zero}", {}, 404),
        ("get", f"/api/r/{zero}", {}, 404),
        ("get", f"/r/{zero}/a", {}, 404),
        ("get", f"/r/{key}/c", {}, 404),
        ("get", "/r/../../etc/passwd", {}, 404),
        ("post", f"/api/r/{zero}", {}, 405),
        ("post", f"/r/{zero}/cancel", {}, 303),  # nothing to cancel: back to the (404) page
        ("get", "/static/../../x", {}, 404),
    ]
    bad_options = [("timeout", "nan"), ("timeout", "inf"), ("timeout", "-1"),
                   ("timeout", "1e9"), ("timeout", "abc"), ("unroll", "-1"),
                   ("unroll", "1.5"), ("unroll", "x"), ("target", "sm_0"),
                   ("target", "sm_90" * 100), ("nan", "bogus"), ("kind", "x"),
                   ("solver", "cvc9"), ("vset_merge", "z"), ("function", "f" * 300),
                   ("outputs", ",,")]
    out += [("post", "/run", {"data": {**MISCOMPILE, k: v}}, 400) for k, v in bad_options]
    out += [("post", "/run", {"data": {**MISCOMPILE, "function": "f"}}, 400),
            ("post", "/run", {"json": {"lhs": "x", "rhs": "y", "timeout": True}}, 400),
            # accepted, then answered: a clear error, and a verdict on one of 3,000
            ("post", "/run", {"data": {"lhs": many, "rhs": many, "kind": "functions"}}, 303),
            ("post", "/run", {"data": {"lhs": many, "rhs": many, "function": "f2999"}}, 303)]
    # a proof z3 does not end (64-bit division) and a valid request: each runs within its
    # limit; then ("fill": the test fills every worker and queue place) valid requests
    # the pool has no room for: refused as busy
    hard = {"lhs": "div.u64 q, a, b; mul.lo.u64 m, q, b; sub.u64 r, a, m;",
            "rhs": "rem.u64 r, a, b;", "outputs": "r", "timeout": "1"}
    out += [("post", "/run", {"data": hard}, 303)]
    out += [("post", "/run", {"data": {"lhs": f"add.u32 d, a, {i};",
                                       "rhs": f"add.u32 d, {i}, a;"}}, 303 if i < 1 else 503)
            for i in range(3)]
    return out


def _fill(pool: jobs.Pool, folder: Path) -> list[str]:
    """Jobs that run until cancelled, submitted until the pool is full: their keys."""
    keys = []
    while True:
        try:
            pool.submit(f"filler{len(keys)}", hang, (str(folder / f"pid{len(keys)}"),), 3600)
        except jobs.Busy:
            return keys
        keys.append(f"filler{len(keys)}")


def test_50_hostile_requests_get_clear_errors_and_no_traceback(app, caplog, tmp_path):
    client = app.test_client()
    key = submit(client, MISCOMPILE)
    requests = _hostile(key)
    assert len(requests) >= 50
    started, fillers, outcomes = [], [], []  # every request accepted ends: its outcome
    for method, path, kwargs, status in requests:
        if status == 503 and not fillers:  # once the others ended, every place taken
            outcomes = [finished(client, k) for k in [key, *started]][1:]
            fillers = _fill(app.extensions["ptxsmt"]["pool"], tmp_path)
        r = getattr(client, method)(path, **kwargs)
        body = r.data.decode("utf-8", "replace")
        assert r.status_code == status, (path, r.status_code, body[-300:])
        assert "Traceback" not in body and "ptxsmt bug" not in body, (path, body[-300:])
        if r.status_code >= 400:
            assert "error" in body and len(body) < 20_000, (path, body[-300:])
        if path == "/run" and r.status_code == 303:
            started.append(r.headers["Location"].rsplit("/", 1)[1])
    for key in fillers:
        app.extensions["ptxsmt"]["pool"].cancel(key)
    assert [o["state"] for o in outcomes] == ["done"] * len(started)
    many_error, one_of_many, hard, *rest = [o["result"] for o in outcomes]
    assert many_error["verdict"] == "error" and many_error.get("bad_input")
    assert many_error["error"].startswith("a.ptx: the file defines 3000 functions")
    assert one_of_many["verdict"] == "equivalent"
    # they differ only at b = 0 (rem's result is left open there): never "equivalent"; a
    # solver finds that within its second, or the request ends "unknown" at its limit
    assert hard["verdict"] in ("unknown", "different")
    assert [r["verdict"] for r in rest] == ["equivalent"]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]


@pytest.mark.parametrize("text", ["/* open", '.func f() { "open', "// .func f() {}"])
def test_text_that_only_looks_like_functions_is_bad_input_not_a_bug(app, text):
    """Which kind a pasted text is (functions or a snippet) is read through isa/; an
    unterminated comment or string is the reader's error to report, with its place."""
    r = app.test_client().post("/run", data={"lhs": text, "rhs": "mov.b32 d, a;"})
    body = r.data.decode()
    assert r.status_code < 500 and "ptxsmt bug" not in body, body[-300:]


def test_serve_refuses_a_port_in_use_in_one_line(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = CliRunner().invoke(main, ["serve", "--port", str(port),
                                      "--db", str(tmp_path / "l.sqlite")])
    assert r.exit_code == 2 and r.stderr.startswith("error: cannot serve on")
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["serve", "--max-timeout", "nan"])
    assert r.exit_code == 2 and "not a number" in r.stderr


def test_one_command_starts_it_and_ctrl_c_stops_it(tmp_path):
    """What a newcomer does: `ptxsmt serve`, open the page, check a miscompile, Ctrl-C."""
    import signal
    import subprocess
    import sys
    import urllib.request

    server = subprocess.Popen([sys.executable, "-m", "ptxsmt", "serve", "--port", "0",
                               "--db", str(tmp_path / "links.sqlite")],
                              stderr=subprocess.PIPE, text=True)
    try:
        first = server.stderr.readline()
        assert first.startswith("ptxsmt serve: http://127.0.0.1:"), first
        url = first.split()[2]
        assert b"Check" in urllib.request.urlopen(url, timeout=WAIT).read()
        ask = urllib.request.Request(f"{url}run", json.dumps(MISCOMPILE).encode(),
                                     {"Content-Type": "application/json"})
        link = json.loads(urllib.request.urlopen(ask, timeout=WAIT).read())["url"]
        api = link.replace("/r/", "/api/r/")
        end = time.monotonic() + WAIT
        while (now := json.loads(urllib.request.urlopen(api, timeout=WAIT).read()))[
                "state"] in ("queued", "running"):
            assert time.monotonic() < end
            time.sleep(0.05)
        assert now["result"]["verdict"] == "different"
    finally:
        server.send_signal(signal.SIGINT)
        code = server.wait(WAIT)
        rest = server.stderr.read()
    assert code == 130 and rest.rstrip().endswith("interrupted") and "Traceback" not in rest


CE = Path(__file__).parent.parent / "scripts" / "compiler-explorer" / "ptxsmt_ce.py"


def _ce(folder: Path, *args: str):
    import subprocess
    import sys

    env = {**os.environ, "PTXSMT": f"{sys.executable} -m ptxsmt",
           "PYTHONPATH": str(Path(__file__).parent.parent)}
    return subprocess.run([sys.executable, str(CE), *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=WAIT)


def test_the_compiler_explorer_tool_runs_on_the_panes_ptx(tmp_path):
    (tmp_path / "example.ptx").write_text((PTX / "func_sm90_O3.ptx").read_text())
    r = _ce(tmp_path, str(tmp_path / "example.ptx"))  # check, by default
    assert r.returncode == 5 and "0 illegal" in r.stdout  # 5: some lines not judged
    r = _ce(tmp_path, "eval", "--function", "_Z4dseljj", "_Z4dseljj_param_0=1",
            str(tmp_path / "example.ptx"))
    assert r.returncode == 0 and "func_retval0" in r.stdout
    r = _ce(tmp_path, "equiv", "--function", "_Z4dseljj", "--function-b", "_Z4dseljj",
            str(tmp_path / "example.ptx"))
    assert r.returncode == 0 and r.stdout.startswith("equivalent")
    # a CUDA pane: the compiler's PTX output beside the source
    cuda = tmp_path / "cuda"
    cuda.mkdir()
    (cuda / "example.cu").write_text("__global__ void k() {}\n")
    r = _ce(cuda, str(cuda / "example.cu"))
    assert r.returncode == 1 and "no PTX" in r.stderr
    (cuda / "output.s").write_text((PTX / "func_sm90_O3_wrong.ptx").read_text())
    r = _ce(cuda, "equiv", "--function", "_Z5clampPKiPiii", "--function-b", "_Z5clampPKiPiii",
            str(cuda / "example.cu"))
    assert r.returncode == 0 and r.stdout.startswith("equivalent")
    r = _ce(cuda, "equiv", str(cuda / "example.cu"))
    assert r.returncode == 1 and "give --function" in r.stderr


def test_ir_against_ptx_refines_is_stored_and_a_different_is_decided_each_time(app, db):
    client = app.test_client()
    ir = (PTX / "llvm" / "une.ll").read_text()
    good = (PTX / "llvm" / "une_llc14_O2.ptx").read_text()
    bad = good.replace("setp.neu.f32", "setp.ne.f32")  # fcmp une lowered as ordered
    refines = submit(client, {"lhs": ir, "rhs": good, "function": "une"})
    different = submit(client, {"lhs": ir, "rhs": bad, "function": "une"})
    assert finished(client, refines)["result"]["verdict"] == "refines"
    now = finished(client, different)
    cex = now["result"]["counterexample"]
    a, b = (f32(cex["inputs"][k]) for k in ("a", "b"))
    assert math.isnan(a) or math.isnan(b)  # where une and ne part: Python's != is une
    (out,) = now["shown"]["outputs"]
    assert [int(out[s]["hex"], 16) & 1 for s in ("lhs", "rhs")] == [int(a != b), 0]
    assert now["shown"]["reproduce"][0].startswith("ptxsmt eval b.ptx --function une ")
    later = create_app(db, workers=1)
    try:
        c, pool = later.test_client(), later.extensions["ptxsmt"]["pool"]
        assert c.get(f"/api/r/{refines}").get_json()["stored"] and pool.get(refines) is None
        assert finished(c, different)["result"]["verdict"] == "different"
        assert pool.get(different) is not None  # decided again
    finally:
        later.extensions["ptxsmt"]["pool"].close()
