"""The CLI's batch as bytes: answers that extend their own lines, columns read at once,
and a file answered in parts by forked processes, byte for byte as one.

The outputs are held to the corpus's stored outputs (SMT models), not to the code that
made them; the text answers to the object answers of `run_jsonl`.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ptxsmt.eval.jsonl import (
    answer_block,
    answer_lines,
    json_answers,
    render_jsonl,
    run_jsonl,
)
from ptxsmt.eval.plain import plain_answers

from ptxsmt.eval import jsonl, parts
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


def _text_answers(lines: list[str]) -> tuple[list[str], bool]:
    blocks = list(render_jsonl([x.encode() for x in lines], OPTS, chunk=1000))
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


# ---- the plain lane --------------------------------------------------------------------
# Lines spelled as json.dumps spells them, and the near misses a reader by pattern could
# take wrongly: escapes, a key given twice, inputs of the wrong kind or width, `%` names,
# other separators, keys out of order, trailing blanks, bytes that are not UTF-8.

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


@given(_blocks())
def test_the_plain_lane_answers_as_the_json_reader(lines):
    numbered = list(enumerate(lines, 1))
    by_number, failed = json_answers(numbered, OPTS)
    want = [by_number.get(number) for number, _ in numbered], failed
    assert answer_lines(numbered, OPTS) == want
    assert answer_block(b"".join(line + b"\n" for line in lines), list(range(1, len(lines) + 1)),
                        OPTS) == want  # a worker's share, as one block


def test_the_plain_lane_takes_the_common_lines_and_leaves_the_rest(monkeypatch):
    common = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"a": "0x00000001",
                                                                  "b": "0x00000002"}})
    lines = [common, common.replace("0x00000002", "0x2"), common[:-1] + ', "case": "c"}',
             common.replace('"b"', '"%b"'), common.replace(", ", ","), common + " ",
             common[:-1] + ', "ptx": "setp.gt.u32 p, a, b;"}']
    answers = plain_answers("\n".join(lines), len(lines), OPTS)
    assert answers[:4] == [line[:-1] + ', "outputs": {"p": true}}' for line in lines[:3]] + \
        [None]
    assert answers[4:] == [None] * 3  # not as json.dumps spells it, or a key read twice
    assert answer_lines(list(enumerate(lines, 1)), OPTS)[0][4:6] == \
        [lines[4][:-1] + ', "outputs": {"p": true}}', lines[5][:-2] + ', "outputs": {"p": true}}']
    swapped = json.dumps({"ptx": "setp.lt.u32 p, a, b;", "inputs": {"b": "0x00000001",
                                                                   "a": "0x00000002"}})
    selp = [json.dumps({"ptx": "selp.b32 d, a, b, p;", "inputs": {
        "a": "0x00000001", "b": "0x00000002", "p": p}}) for p in (True, "0x0", False, "0x1")]
    for block in ([common, swapped], selp):  # a text's inputs in two orders; of two kinds
        numbered = list(enumerate((x.encode() for x in block), 1))
        by_number, _ = json_answers(numbered, OPTS)
        assert answer_lines(numbered, OPTS)[0] == [by_number[n] for n, _ in numbered]
    folded = [common.replace(', "inputs"', ',\n"inputs"'), common]  # text lines, one folded
    assert answer_lines(list(enumerate(folded, 1)), OPTS)[0] == \
        [line[:-1] + ', "outputs": {"p": true}}' for line in folded]

    stored = [common[:-1] + ', "outputs": {"p": false}, "case": "c"}',
              common[:-1] + ', "n": -0, "outputs": {"p": false}}']  # JSON writes -0 back as 0
    assert answer_lines(list(enumerate(stored, 1)), OPTS)[0] == \
        [stored[0].replace("false", "true"), stored[1].replace("false", "true").replace("-0", "0")]
    assert plain_answers("\n".join(stored), 2, OPTS)[1] is None

    def unread(*args):
        raise AssertionError("a plain line went to the JSON reader")

    monkeypatch.setattr(jsonl, "json_answers", unread)  # lines of a Windows file are plain
    assert answer_block(f"{common}\r\n{common} \n".encode(), [1, 2], OPTS)[0] == \
        [common[:-1] + ', "outputs": {"p": true}}'] * 2


# ---- parts ------------------------------------------------------------------------------


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
        blocks = list(parts.render_file(f, OPTS, jobs))
    return (b"".join(d for d, _, _ in blocks), sum(n for _, n, _ in blocks),
            any(bad for _, _, bad in blocks))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_file_in_parts_answers_byte_for_byte_as_one(tmp_path, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(parts, "MIN_FORK_LINES", 10)
    monkeypatch.setattr(parts, "WINDOW", 64)  # windows, and a short last one joined on
    assert _render(path, 4) == whole
    assert _render(path, 2) == whole
    assert whole[2] and b'"error": "line 5: invalid JSON' in whole[0]
    assert whole[1] == len(whole[0].splitlines())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_big_file_forks_before_it_is_read_and_a_stream_after(tmp_path, monkeypatch):
    """A line read before the fork would be copied when first touched after it."""
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(parts, "MIN_FORK_LINES", 10)
    monkeypatch.setattr(parts, "MIN_FORK_BYTES", 100)
    events, windows, worker = [], parts._windows, parts._Worker.__init__

    def read(lines):
        events.append("read")
        yield from windows(lines)

    def forked(self, *args):
        events.append("fork")
        worker(self, *args)

    monkeypatch.setattr(parts, "_windows", read)
    monkeypatch.setattr(parts._Worker, "__init__", forked)
    assert _render(path, 2) == whole and events == ["fork", "read"]
    events.clear()
    with open(path, "rb") as f:  # the same lines as a stream: read, then forked
        blocks = list(parts._render(iter(f), None, OPTS, 2))
    assert b"".join(d for d, _, _ in blocks) == whole[0] and events == ["read", "fork"]


def test_lines_are_dealt_by_text_and_a_big_text_in_ranges():
    texts = [f'{{"ptx": "setp.lt.u32 p, a, b{k};", "inputs": {{}}}}\n'.encode() for k in range(400)]
    window = texts * 5
    owners = parts.deal(window, 3)
    for k in range(400):  # every line of a text goes to one process
        assert len({owners[k + 400 * r] for r in range(5)}) == 1
    assert set(owners) == {0, 1, 2}
    one = [texts[0]] * 300  # one instruction, replayed: every process takes a range
    owners = parts.deal(one, 3)
    assert list(owners) == sorted(owners) and 80 <= owners.count(1) < owners.count(0) <= 120


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_share_whose_process_fails_is_answered_here(tmp_path, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(parts, "MIN_FORK_LINES", 10)
    monkeypatch.setattr(parts, "WINDOW", 64)
    me, real = os.getpid(), parts.answer_block

    def broken_in_children(*args, **kwargs):
        if os.getpid() != me:
            raise MemoryError("a child dies")
        return real(*args, **kwargs)

    monkeypatch.setattr(parts, "answer_block", broken_in_children)
    assert _render(path, 3) == whole


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_workers_answer_their_shares_sent_as_blocks(tmp_path, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    monkeypatch.setattr(parts, "MIN_FORK_LINES", 10)
    monkeypatch.setattr(parts, "WINDOW", 64)
    answer, here = parts.answer_block, []

    def answered_here(block, numbers, opts):
        here.append(len(numbers))
        return answer(block, numbers, opts)

    monkeypatch.setattr(parts, "answer_block", answered_here)
    assert _render(path, 2) == whole
    assert 50 < sum(here) < whole[1] - 50  # this process answered its own share only
    window = [b"a\n", b"b\r\n", b"c\n", b"d"]  # the input's last line without a newline
    assert parts.share(window, bytes([0, 1, 0, 1]), 1) == b"b\r\nd\n"
    assert parts.share(window, bytes([0, 1, 0, 1]), 0) == b"a\nc\n"
    assert parts.numbers(bytes([0, 1, 0, 1]), 1, 7) == [8, 10]


def test_stdin_is_dealt_and_small_input_is_answered_here(tmp_path, monkeypatch):
    path = _batch_file(tmp_path)
    whole = _render(path, 1)
    forks = []
    monkeypatch.setattr(parts, "_Worker", lambda *a: forks.append(a))
    assert _render(path, 2) == whole and not forks  # too small to repay a fork
    monkeypatch.undo()
    monkeypatch.setattr(parts, "MIN_FORK_LINES", 10)
    r, w = os.pipe()
    if os.fork() == 0:  # a writer feeding the pipe, as a shell would
        os.close(r)
        with os.fdopen(w, "wb") as pipe_w:
            pipe_w.write(path.read_bytes())
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as pipe_r:
        blocks = list(parts.render_file(pipe_r, OPTS, 2))
    os.wait()
    assert b"".join(d for d, _, _ in blocks) == whole[0]
