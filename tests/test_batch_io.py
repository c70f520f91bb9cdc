"""The CLI's batch as bytes: answers that extend their own lines, the common line read
as the general reader reads it, every line answered in its place, and a file answered
by a process pool byte for byte as by one process.

The outputs are held to the corpus's stored outputs (SMT models), not to the code that
made them; the text answers to the object answers of `run_jsonl`.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ptxsmt.batch import lines as reader
from ptxsmt.batch import programs, run
from ptxsmt.batch.run import render, run_jsonl
from ptxsmt.isa import source
from ptxsmt.isa.errors import quote
from ptxsmt.isa.syntax import format_instruction, rename_registers
from ptxsmt.program import Program
from ptxsmt.sem.options import Options

MODELS = Path(__file__).resolve().parent.parent / "models"
OPTS = Options()


def _renamed(obj: dict, k: int) -> dict:
    """The line with its registers named as a compiler numbers them (the k-th naming)."""
    program = Program.parse(obj["ptx"])
    names = {r: f"r{16 * k + i}" for i, r in enumerate(program.spelling)}
    percent = {r: "%" + n for r, n in names.items()}
    text = " ".join(format_instruction(rename_registers(ins, percent))
                    for ins in program.instructions)
    return {**obj, "ptx": text,
            **{key: {names[r.lstrip("%")]: v for r, v in obj[key].items()}
               for key in ("inputs", "outputs")}}


@pytest.fixture(scope="module")
def corpus() -> list[dict]:
    """Corpus lines, each text under 12 register namings: shapes of 100+ rows, so the
    columns are read in one pass, and single texts, read value by value."""
    rng = random.Random(5)
    lines = []
    for path in sorted(MODELS.glob("*.jsonl")):
        objs = [json.loads(x) for x in path.read_text().splitlines()]
        lines += [_renamed(obj, k) for obj in rng.sample(objs, min(40, len(objs)))
                  for k in range(12)]
        lines += rng.sample(objs, min(20, len(objs)))
    return lines


def answer_lines(lines: list[bytes]) -> tuple[list[bytes], bool]:
    """Each line's answer (without its newline), and whether any is an error."""
    blocks = list(render(lines, OPTS))
    return b"".join(data for data, _, _ in blocks).split(b"\n")[:-1], any(f for _, _, f in blocks)


def _text_answers(lines: list[str]) -> tuple[list[str], bool]:
    blocks = list(render([x.encode() for x in lines], OPTS))
    text = b"".join(data for data, _, _ in blocks).decode()
    assert sum(n for _, n, _ in blocks) == len(text.splitlines())
    return text.splitlines(), any(bad for _, _, bad in blocks)


def test_text_answers_are_the_stored_outputs_and_the_objects(corpus):
    lines = [json.dumps({k: v for k, v in obj.items() if k != "outputs"}) for obj in corpus]
    answers, failed = _text_answers(lines)
    assert not failed
    objects = [obj for obj, _ in run_jsonl(lines, OPTS)]
    for obj, line, answer, got in zip(corpus, lines, answers, objects):
        assert answer == f'{line[:-1]}, "outputs": {json.dumps(got["outputs"])}}}'
        assert {k.lstrip("%"): v for k, v in got["outputs"].items()} == \
            {k.lstrip("%"): v for k, v in obj["outputs"].items()}, line


def test_an_answer_keeps_its_lines_spelling():
    compact = '{"ptx":"setp.lt.u32 p, a, b;","inputs":{"a":"0x00000001","b":"0x00000002"}}'
    accented = '{"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}, "case": "é"}'
    answers, failed = _text_answers([compact, accented])
    assert not failed
    assert answers == [compact[:-1] + ', "outputs": {"p": true}}',
                       accented[:-1] + ', "outputs": {"p": true}}']


def test_stored_outputs_are_replaced_in_place():
    line = json.dumps({"ptx": "selp.b32 %d, a, b, p;", "outputs": {"%d": "0x0"},
                       "inputs": {"a": "0x00000007", "b": "0x00000001", "p": True}})
    (answer,), _ = _text_answers([line])
    assert list(json.loads(answer)) == ["ptx", "outputs", "inputs"]
    assert json.loads(answer)["outputs"] == {"%d": "0x00000007"}


def test_upper_case_and_short_hex_read_like_exact_hex():
    rows = [("setp.lt.u32 p, a, b;", {"a": "0x0000000A", "b": "0x0000000b"}, True),
            ("setp.lt.u32 p, c, d;", {"c": "0xb", "d": "0xA"}, False),  # short: one by one
            ("setp.lt.u32 q, x, y;", {"x": "0xffffffff", "y": "0x00000000"}, False)]
    lines = [json.dumps({"ptx": text, "inputs": inputs}) for text, inputs, _ in rows
             for _ in range(40)]  # one shape, 120 rows
    answers, failed = _text_answers(lines)
    assert not failed
    assert [next(iter(json.loads(x)["outputs"].values())) for x in answers] == \
        [want for *_, want in rows for _ in range(40)]


# ---- the common line and the general reader ----------------------------------------------
# Lines spelled as json.dumps spells them, and the near misses a reader of the common line
# could take wrongly: escapes, a key given twice, inputs of the wrong kind or width, `%`
# names, other separators, keys out of order, trailing blanks, bytes that are not UTF-8.

_TEXTS = ["setp.lt.u32 p, a, b;", "setp.lt.u32 p, a, 7;", "selp.b32 d, a, b, p;",
          "setp.lt.f32 p|q, a, b;", "@p setp.eq.s16 q, a, b;", "bogus x;", "",
          "setp.lt.u32 p, a, b;\\n", "setp.lt.u32 p, a, \\u0062;"]
_NAMES = ["a", "b", "p", "q", "d", "%a", "x"]
_VALUES = ['"0x00000001"', '"0x1"', '"0xFFFFFFFF"', '"0x1ffffffff"', '"0x8000"', "true", "false",
           "1", '"1"', '"0x"', '"0xg1"', '"0x\\u0031"', "null", '"0x0000000000000003"']
_OTHERS = [("case", '"x = y"'), ("case", '"\\u00e9"'), ("case", '"a\\"b"'), ("n", "12"),
           ("n", "012"), ("n", "1.5"), ("n", "-0"), ("n", "-7"), ("ok", "true"), ("ok", "null"),
           ("v", "{}"), ("ptx", '"setp.ne.u32 p, a, b;"'), ("inputs", "{}"), ("outputs", "{}"),
           ("outputs", '{"p": false, "%q": "0x1"}'), ("outputs", '{"p": {"x": 1}}'),
           ("outputs", '{"p": 1.5}'), ("options", '{"ftz": true}'), ("file", '"k.ptx"')]


@st.composite
def _lines(draw) -> str:
    sep = draw(st.sampled_from([", ", ",", " , "]))
    colon = draw(st.sampled_from([": ", ":"]))
    inputs = draw(st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_VALUES)),
                           max_size=4))
    members = [("ptx", f'"{draw(st.sampled_from(_TEXTS))}"'),
               ("inputs", "{" + sep.join(f'"{n}"{colon}{v}' for n, v in inputs) + "}")]
    if draw(st.booleans()):
        members.reverse()
    members += draw(st.lists(st.sampled_from(_OTHERS), max_size=2))
    line = "{" + sep.join(f'"{k}"{colon}{v}' for k, v in members) + "}"
    return line + draw(st.sampled_from(["", "", " ", "\r", "\t "]))


_PLAIN_TEXTS = {"setp.lt.u32 p, a, b;": "ab", "selp.b32 d, a, b, p;": "abp",
                "setp.lt.u32 p, a, 7;": "a", "@p setp.eq.s16 q, a, b;": "pqab"}
_PLAIN_VALUES = ["0x00000009", "0x00000010", "0x0009", "0x10", "0x1ffffffff", "0x1", "0x0"]


@st.composite
def _plain_lines(draw, text: str) -> str:
    """Lines as json.dumps writes them, a text's inputs in any order, one missing or
    one too many, hex for a predicate, a Boolean for a word."""
    names = _PLAIN_TEXTS[text]
    names = draw(st.permutations(names + draw(st.sampled_from(["", "", "", "x"]))))
    names = names[:len(names) - draw(st.sampled_from([0, 0, 0, 1]))]
    line = {"ptx": text, "inputs": {
        n: draw(st.booleans() if n in "pq" and draw(st.integers(0, 5)) else
                st.sampled_from(_PLAIN_VALUES + [True])) for n in names}}
    for key, value in draw(st.lists(st.sampled_from(  # stored outputs, replaced in place
            [("outputs", {"p": True}), ("outputs", {"%d": "0x0"}), ("case", "c"), ("n", -3)]),
            max_size=2, unique_by=lambda kv: kv[0])):
        line[key] = value
    return json.dumps(line)


@st.composite
def _blocks(draw) -> list[bytes]:
    """Lines, most of them plain and repeated (a text's lines are read as columns)."""
    texts = draw(st.lists(st.sampled_from(sorted(_PLAIN_TEXTS)), min_size=1, max_size=2))
    plain = draw(st.lists(st.sampled_from(texts).flatmap(_plain_lines), min_size=1, max_size=6))
    lines = draw(st.lists(st.one_of(_lines(), st.sampled_from(plain)), min_size=1, max_size=40))
    encoded = [line.encode() for line in lines]
    if draw(st.booleans()):
        encoded[draw(st.integers(0, len(encoded) - 1))] += b"\xff"
    return encoded


def _general(lines: list[bytes], monkeypatch) -> tuple[list[bytes], bool]:
    """The answers with every line read the general way (no common-line reader)."""
    with monkeypatch.context() as m:
        m.setattr(reader, "_common", _refuse)
        return answer_lines(lines)


def _refuse(text):
    raise reader.msgspec.DecodeError("read the general way")


@given(_blocks())
def test_the_common_line_is_answered_as_the_general_reader_answers_it(lines):
    import _pytest.monkeypatch

    with _pytest.monkeypatch.MonkeyPatch.context() as monkeypatch:
        want = _general(lines, monkeypatch)
    assert answer_lines(lines) == want
    assert len(want[0]) == len(lines)  # one answer a line, blank ones too
    for number, (line, got) in enumerate(zip(lines, want[0]), 1):
        obj = json.loads(got)
        if "error" in obj:
            assert obj["error"].startswith(f"line {number}: ")
        else:  # the line itself, with its outputs
            assert {k: v for k, v in obj.items() if k != "outputs"} == \
                {k: v for k, v in json.loads(line).items() if k != "outputs"}


def test_the_common_line_and_its_near_misses(monkeypatch):
    common = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x00000001",
                                                                  "b": "0x00000002"}})
    lines = [common, common.replace("0x00000002", "0x2"), common[:-1] + ', "case": "c"}',
             common.replace('"b"', '"%b"'), common.replace(", ", ","), common + " ",
             common[:-1] + ', "ptx": "setp.gt.u32 p, a, b;"}', common + "\r"]
    answers, failed = answer_lines([x.encode() for x in lines])
    assert not failed
    assert [a.decode() for a in answers[:6]] == \
        [line.rstrip()[:-1] + ', "outputs": {"p": true}}' for line in lines[:6]]
    assert answers[6].endswith(b'"outputs": {"p": false}}')  # the last "ptx" is read
    assert answers[7] == answers[0]
    stored = [common[:-1] + ', "outputs": {"p": false}, "case": "c"}',
              common[:-1] + ', "n": -0, "outputs": {"p": false}}']  # JSON writes -0 back as 0
    assert [json.loads(a) for a in answer_lines([x.encode() for x in stored])[0]] \
        == [json.loads(x.replace("false", "true")) for x in stored]
    swapped = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"b": "0x00000001",
                                                                   "a": "0x00000002"}})
    selp = [json.dumps({"ptx": "selp.b32 d, a, b, p;", "inputs": {
        "a": "0x00000001", "b": "0x00000002", "p": p}}) for p in (True, "0x0", False, "0x1")]
    for block in ([common, swapped], selp):  # a text's inputs in two orders; of two kinds
        encoded = [x.encode() for x in block]
        assert answer_lines(encoded) == \
            _general(encoded, monkeypatch)


def test_one_bad_line_among_chunks_of_common_ones_is_answered_in_its_place():
    """Common lines are read a chunk at a time; a chunk with a line that is not common is
    read line by line: every answer is still its own line's, numbered across chunks."""
    good = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    lines = [good.encode()] * (2 * reader._CHUNK + 5)
    bad, wrong = reader._CHUNK + 7, 2 * reader._CHUNK + 2  # not common; common, bad PTX
    lines[bad] = b'{"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": 1.5}}'
    lines[wrong] = b'{"ptx": "setp.lt.u32 p, a;", "inputs": {}}'
    answers, failed = answer_lines(lines)
    out = [json.loads(a) for a in answers]
    assert failed and len(out) == len(lines)
    assert out[bad]["error"] == f'line {bad + 1}: input "a" must be a string, an integer ' \
        "or a boolean"
    assert out[wrong]["error"].startswith(f"line {wrong + 1}: ")
    assert all(o.get("outputs") == {"p": True} for k, o in enumerate(out) if k not in (bad, wrong))


def test_an_input_named_twice_is_its_lines_error():
    """`%a` is `a`: given both ways, the line is refused, whichever way it is read (the
    common line, or one with options, read whole)."""
    inputs = {"a": "0x00000001", "%a": "0x00000002", "b": "0x00000003"}
    lines = [json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": inputs}),
             json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": inputs, "options": {}})]
    answers = answer_lines([x.encode() for x in lines])[0]
    assert [json.loads(a)["error"] for a in answers] == \
        [f'line {k}: input "%a" is given twice' for k in (1, 2)]


NAN_FLIP = Path(__file__).resolve().parent / "ptx" / "nan" / "arith_a.ptx"
PRODUCT_NAN = "open[mul.rn.f32 NaN of 0x000000007f800000]"  # the NaN of inf * 0


def test_open_values_are_taken_as_eval_takes_them_a_bad_one_costing_its_line():
    """A counterexample's reproduce line gives open values (`open[NAME of ARGUMENT]`);
    a batch line takes them as `ptxsmt eval` does: the value given is the NaN the product
    makes, a snippet's or a function's. One the inputs never reach, or too wide, is its
    own line's error in eval's words, the fast path's snippets (add.s32) included."""
    mul, add = "mul.rn.f32 d, a, b;", "add.s32 d, a, b;"
    zero_nan = {"a": "0x7f800000", "b": "0x00000000"}
    unreached = "open[mul.rn.f32 NaN of 0x0]"
    lines = [
        {"ptx": mul, "inputs": {**zero_nan, PRODUCT_NAN: "0x7fc00005"}},
        {"file": str(NAN_FLIP), "function": "nan_flip",
         "inputs": {"a": "0", "b": "0x7fc00000",
                    "open[mul.rn.f32 NaN of 0x000000007fc00000]": "0x7fc00001"}},
        {"ptx": add, "inputs": {"a": "0x00000001", "b": "0x00000002", unreached: "0x1"}},
        {"ptx": mul, "inputs": {"a": "0x3f800000", "b": "0x40000000", unreached: "0x1"}},
        {"ptx": mul, "inputs": {**zero_nan, PRODUCT_NAN: "0x1ff800000"}},
        {"ptx": add, "inputs": {"a": "0x00000001", "b": "0x00000002"}},
    ]
    out = [json.loads(a) for a in answer_lines([json.dumps(x).encode() for x in lines])[0]]
    assert [o.get("outputs") for o in out] == [
        {"d": "0x7fc00005"}, {"r": "0x7fc00001"}, None, None, None, {"d": "0x00000003"}]
    assert [o.get("error") for o in out[2:5]] == [
        "line 3: the snippet reaches no open value mul.rn.f32 NaN of 0x0 with these inputs",
        "line 4: the snippet reaches no open value mul.rn.f32 NaN of 0x0 with these inputs",
        f"line 5: input {quote(PRODUCT_NAN)}: 0x1ff800000 does not fit the 32 bits the open "
        "value has"]


def test_every_line_is_answered_in_its_place_blank_ones_too():
    """Answer k is the answer to line k (a blank line dropped would shift every later
    answer): a blank line is an error on its own line."""
    good = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    lines = ["\ufeff", good, "", "   ", "\t\r", good]  # the first: a byte-order mark alone
    answers = answer_lines([x.encode() for x in lines])[0]
    out = [json.loads(a) for a in answers]
    assert out[1]["outputs"] == out[5]["outputs"] == {"p": True}
    for k in (0, 2, 3, 4):
        assert out[k] == {"error": f"line {k + 1}: an empty line: " + reader._LINE_SHAPE}
    objects = list(run_jsonl(lines, OPTS))
    assert [error is None for _, error in objects] == [False, True, False, False, False, True]


def test_a_file_line_past_the_input_limit_is_its_own_error(tmp_path):
    """`{"file": "/dev/zero"}` is read within the input limit: its line's error, and every
    other line answered."""
    good = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    big = tmp_path / "big.ptx"
    big.write_text("// " + "x" * 5000)
    lines = [good, json.dumps({"file": "/dev/zero", "function": "f"}),
             json.dumps({"file": str(big)}), good]
    source.set_limit(4096)
    try:
        answers, failed = answer_lines([x.encode() for x in lines])
    finally:
        source.set_limit(None)
    out = [json.loads(a) for a in answers]
    assert failed and out[0]["outputs"] == out[3]["outputs"] == {"p": True}
    for k in (1, 2):
        assert out[k]["error"].startswith(f"line {k + 1}: ")
        assert "larger than the input limit of 4096 bytes" in out[k]["error"], out[k]


# ---- the process pool ---------------------------------------------------------------------


def _batch_file(tmp_path: Path) -> Path:
    """A file with what dealing lines to processes must not disturb: a BOM, blank and CRLF
    lines, bad lines (their numbers are in their errors) among good ones of several
    texts, and no newline at the end."""
    good = [json.dumps({"ptx": f"setp.{('lt', 'ge', 'ne')[i % 3]}.u32 p, a, b;",
                        "inputs": {"a": f"0x{i:08x}", "b": "0x00000010"}}) for i in range(32)]
    lines = []
    for i, line in enumerate(good * 6):
        lines.append(line)
        if i % 17 == 3:
            lines.append("{oops")
        if i % 23 == 5:
            lines.append("")
        if i % 29 == 7:
            lines.append(line + "\r")
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    return path


def _render(path: Path, jobs: int) -> tuple[bytes, int, bool]:
    with open(path, "rb") as f:
        blocks = list(render(f, OPTS, jobs))
    return (b"".join(d for d, _, _ in blocks), sum(n for _, n, _ in blocks),
            any(bad for _, _, bad in blocks))


@pytest.fixture
def small_windows(monkeypatch):
    monkeypatch.setattr(run, "MIN_POOL_TEXTS", 0)  # every window compiled by the pool
    monkeypatch.setattr(run, "WINDOW", 64)  # windows, and a short last one
    monkeypatch.setattr(run, "SHARED_LINES", 16)  # the workers' shares come back unanswered


@pytest.fixture
def warm_shares(monkeypatch):
    """Windows answered in shares: every share is taken as warm, however many of its
    texts the cache lacks."""
    monkeypatch.setattr(run, "MIN_POOL_TEXTS", 10**6)
    monkeypatch.setattr(run, "WINDOW", 64)
    monkeypatch.setattr(run, "SHARED_LINES", 16)


def test_a_file_answered_by_a_pool_is_byte_for_byte_as_by_one_process(tmp_path,
                                                                     small_windows):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    assert _render(path, 4) == whole
    assert _render(path, 2) == whole
    assert whole[2] and b'"error": "line 5: invalid JSON' in whole[0]
    assert whole[1] == len(whole[0].splitlines()) == len(path.read_bytes().splitlines())
    assert whole[0].startswith(b'{"ptx": "setp.lt.u32')  # the BOM is not part of the line


def _dies_in_a_worker(texts, opts):
    if os.getpid() != _PARENT:
        os._exit(3)  # the worker dies: its pool is broken
    return _REAL_COMPILE(texts, opts)


_PARENT, _REAL_COMPILE = os.getpid(), programs.compile_records


def test_texts_whose_worker_dies_are_compiled_here(tmp_path, small_windows, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(programs, "compile_records", _dies_in_a_worker)
    assert _render(path, 3) == whole


def _answers_in_a_worker(first, raws, opts):
    """answer_warm_share, leaving the number of the process that answered where the test
    can read it."""
    block = _REAL_SHARE(first, raws, opts)
    with open(os.environ["PTXSMT_TEST_PIDS"], "a") as pids:
        pids.write(f"{os.getpid()}\n" if block else "")
    return block


def _share_dies_in_a_worker(first, raws, opts):
    if os.getpid() != _PARENT:
        os._exit(3)
    return _REAL_SHARE(first, raws, opts)


_REAL_SHARE = run.answer_warm_share


def test_a_window_answered_in_shares_is_byte_for_byte_as_by_one_process(
        tmp_path, warm_shares, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    pids = tmp_path / "pids"
    monkeypatch.setenv("PTXSMT_TEST_PIDS", str(pids))
    monkeypatch.setattr(run, "answer_warm_share", _answers_in_a_worker)
    assert _render(path, 2) == whole
    assert _render(path, 3) == whole
    workers = set(pids.read_text().split())
    assert workers and str(os.getpid()) not in workers  # the shares were answered there


def test_a_share_whose_worker_dies_is_answered_here(tmp_path, warm_shares, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(run, "answer_warm_share", _share_dies_in_a_worker)
    assert _render(path, 2) == whole
    assert _render(path, 3) == whole


def test_a_stream_is_answered_as_the_file_and_small_input_here(tmp_path, small_windows,
                                                                monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    r, w = os.pipe()
    if os.fork() == 0:  # a writer feeding the pipe, as a shell would
        os.close(r)
        with os.fdopen(w, "wb") as pipe_w:
            pipe_w.write(path.read_bytes())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe_r:
        blocks = list(render(pipe_r, OPTS, 2))
    os.wait()
    assert b"".join(d for d, _, _ in blocks) == whole[0]
    monkeypatch.setattr(run, "MIN_POOL_TEXTS", 10**6)
    monkeypatch.setattr(run, "SHARED_LINES", 10**6)
    monkeypatch.setattr(run._Workers, "submit", lambda *a: pytest.fail("a pool"))
    assert _render(path, 2) == whole  # too small to repay starting workers


def test_a_column_read_at_once_takes_only_exact_hex():
    """Values of exact-width length that are not `0x` and width/4 hex digits are read one
    by one, as the slow path reads them (or refused with its words): among them a column
    whose digits, `0x` taken out, would still make whole words."""
    from ptxsmt import evaluate

    text = "setp.lt.u32 p, a, b;"
    for column in (["0x0x123456", "1234567890"], ["0X12345678", "0x00000010"],
                   ["0x1234 678", "0x00000010"], ["0x-1234567", "0x00000010"]):
        lines = [json.dumps({"ptx": text, "inputs": {"a": a, "b": "0x00000011"}}).encode()
                 for a in column]
        answers = [json.loads(x) for x in answer_lines(lines)[0]]
        for number, (a, got) in enumerate(zip(column, answers), 1):
            try:
                p = evaluate(text, {"a": a, "b": "0x00000011"}).outputs["p"]
                want = {"outputs": {"p": p}}
            except Exception as e:
                want = {"error": f"line {number}: {e}"}
            assert {k: got.get(k) for k in want} == want, a


# ---- bounded lines, a reader that goes away ---------------------------------------------------

class _Trickle(io.RawIOBase):
    """A stream that hands out its bytes a few at a time, as a slow pipe does."""

    def __init__(self, data: bytes, step: int):
        self.data, self.step = data, step

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        piece, self.data = self.data[:min(len(buffer), self.step)], \
            self.data[min(len(buffer), self.step):]
        buffer[:len(piece)] = piece
        return len(piece)


@pytest.mark.parametrize("step", [7, 1000, 1 << 22])
def test_a_line_past_the_input_limit_is_its_own_error(step):
    """A line longer than the input limit (and at most twice that) is answered by an error
    in its place (its bytes not kept), whether it ends in one read or across many; the
    lines around it as ever."""
    good = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    long = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x" + "0" * 200}})
    data = "\n".join([good, long, good, "x" * 299, long[:150], good + "\r", long]).encode()
    source.set_limit(150)
    try:
        blocks = list(render(io.BufferedReader(_Trickle(data, step)), OPTS))
    finally:
        source.set_limit(None)
    out = [json.loads(x) for x in b"".join(d for d, _, _ in blocks).splitlines()]
    assert len(out) == 7 and any(bad for _, _, bad in blocks)
    for k in (1, 3, 6):
        assert out[k] == {"error": f"line {k + 1}: a line longer than the input limit of "
                                   "150 bytes (--max-input or PTXSMT_MAX_INPUT=BYTES to raise it)"}
    assert out[0]["outputs"] == out[2]["outputs"] == out[5]["outputs"] == {"p": True}
    assert out[4]["error"].startswith("line 5: invalid JSON")  # 150 bytes: read as ever


def test_an_endless_line_ends_the_batch():
    """`--batch /dev/zero` has no line end: past twice the input limit, the input ends with
    that line, an error (it used to grow without bound)."""
    r = subprocess.run([sys.executable, "-m", "ptxsmt", "eval", "--batch", "/dev/zero",
                        "--max-input", "100000"], capture_output=True, timeout=120)
    assert r.returncode == 1 and r.stderr == b""
    assert json.loads(r.stdout)["error"] == "line 1: a line longer than the input limit of " \
        "100000 bytes (--max-input or PTXSMT_MAX_INPUT=BYTES to raise it)"


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_reader_that_goes_away_ends_the_batch_with_141(tmp_path, unbuffered):
    """`ptxsmt eval --batch big.jsonl | head -1`: exit 141 (128 + SIGPIPE), nothing on
    stderr, as every command; also where stdout is unbuffered (`python -u`), whose writes
    may take part of an answer block."""
    line = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    path = tmp_path / "big.jsonl"
    path.write_text((line + "\n") * 20000)  # answers of 2 MB: more than a pipe holds
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered, "PTXSMT_NO_CACHE": "1"}
    p = subprocess.Popen([sys.executable, "-m", "ptxsmt", "eval", "--batch", str(path),
                          "--jobs", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    assert json.loads(p.stdout.readline())["outputs"] == {"p": True}
    p.stdout.close()
    assert p.wait(timeout=120) == 141
    assert p.stderr.read() == b""


def _alive(pid: int) -> bool:
    """A process that has not ended (a zombie has; its reaper is not this test)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


@pytest.mark.skipif(not Path(f"/proc/self/task/{os.getpid()}/children").exists(),
                    reason="reads a process's children from /proc (Linux)")
def test_a_batchs_workers_end_with_it(tmp_path):
    """`ptxsmt eval --batch big.jsonl --jobs 2 | head -1` ends at once with 141 and leaves
    no worker behind (one was left blocked on the pool's queue, an orphan). No pipe of this
    test reaches a worker, so a worker left behind fails the test instead of hanging it."""
    line = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x1", "b": "0x2"}})
    path = tmp_path / "big.jsonl"
    path.write_text((line + "\n") * (2 * run.SHARED_LINES))  # a window worth sharing
    p = subprocess.Popen([sys.executable, "-m", "ptxsmt", "eval", "--batch", str(path),
                          "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env={**os.environ, "PTXSMT_NO_CACHE": "1"})
    children, workers = Path(f"/proc/{p.pid}/task/{p.pid}/children"), []
    try:
        assert json.loads(p.stdout.readline())["outputs"] == {"p": True}
        workers = [int(w) for w in children.read_text().split()]
        p.stdout.close()
        assert p.wait(timeout=120) == 141
        assert workers  # not vacuous: the batch had started its worker
        for _ in range(600):  # a worker killed with its parent ends at once
            if not any(map(_alive, workers)):
                break
            time.sleep(0.1)
        assert not any(map(_alive, workers))
    finally:
        p.kill()
        for w in workers:
            if _alive(w):
                os.kill(w, 9)
