"""scripts/check_results.py: which verdicts are against which labels, listed most serious
first, and bad input in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))

import check_results  # noqa: E402

ROWS = [  # (name, planted, masked) -> the label it rests on
    ("equal", None, None),
    ("masked-planted", "zero-sign", True),
    ("kept-planted", "nan-min", False),
    ("unaudited-planted", "nan-min-dropped", None),
]


def _row(name, planted, masked):
    row = {"name": name, "kind": "fsel", "planted": planted,
           "expect": "equivalent" if masked or not planted else "different"}
    if planted:
        row |= {"masked": masked, "audit": f"audit of {name}"}
    return row


def _check(tmp_path, verdicts: dict[int, str] | str):
    """check_results.py on ROWS and `verdicts` (by line, or the results file's text)."""
    manifest, results = tmp_path / "manifest.jsonl", tmp_path / "results.jsonl"
    manifest.write_text("".join(json.dumps(_row(*r)) + "\n" for r in ROWS))
    results.write_text(verdicts if isinstance(verdicts, str) else "".join(
        json.dumps({"line": k, "verdict": v}) + "\n" for k, v in verdicts.items()))
    return subprocess.run([sys.executable, str(SCRIPTS / "check_results.py"), str(manifest),
                           str(results)], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("row,verdict,against", [
    (ROWS[0], "equivalent", None), (ROWS[0], "different", "pair as compiled"),
    (ROWS[1], "equivalent", None), (ROWS[1], "different", "ptxas masked"),
    (ROWS[2], "different", None), (ROWS[2], "equivalent", "soundness bug"),
    (ROWS[3], "different", None), (ROWS[3], "equivalent", "no ptxas audited"),
    (ROWS[2], "unknown", None), (ROWS[1], "unknown", None), (ROWS[2], "bounded", "soundness"),
])
def test_each_verdict_against_its_label_and_only_those_is_listed(row, verdict, against):
    found = check_results.against([_row(*row)], [{"verdict": verdict}])
    if against is None:
        assert found == []
    else:
        assert against in found[0] and found[1].split()[0] == row[0]


def test_the_soundness_findings_come_first_and_the_exit_status_says_so(tmp_path):
    done = _check(tmp_path, {1: "different", 2: "different", 3: "equivalent", 4: "unknown"})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == "4 pairs, 4 with a result; 3 against the label: each a ptxsmt bug " \
                       "until looked at"
    heads = [line for line in lines if line.endswith("(1):")]
    assert ["soundness" in heads[0], "as compiled" in heads[1], "masked" in heads[2]] == \
        [True] * 3
    assert "  kept-planted  nan-min  audit of kept-planted" in lines
    assert "| fsel | planted, kept | 1 | 1 | 0 | 0 | 0 | 0 | 1 |" in lines
    assert "| zero-sign | 1 | 1 | 0 | 0 | 0 | 0/1/0 | 0/0/0 |" in lines


def test_verdicts_as_labelled_exit_zero_and_a_partial_results_file_is_read(tmp_path):
    done = _check(tmp_path, {1: "equivalent", 3: "different"})
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("4 pairs, 2 with a result; 0 against the label\n")
    assert "| fsel | planted, masked | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in done.stdout


@pytest.mark.parametrize("results,says", [
    ('{"line": 9, "verdict": "equivalent"}\n', "results.jsonl, line 1: line 9 is not a line"),
    ('{"line": 1}\nnot json\n', "results.jsonl, line 2: not JSON"),
    ("[1]\n", "results.jsonl, line 1: not a JSON object"),
])
def test_bad_input_is_one_line(tmp_path, results, says):
    done = _check(tmp_path, results)
    assert done.returncode == 2 and says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------- --masked records
ORACLE_ROW = {"name": "kept-planted", "expect": "different", "verdict": "equivalent",
              "vectors": 10000, "skipped": 3, "separating": None, "activated": 120,
              "wrong": False}  # scripts/oracle_check.py's row, as it prints it


def _record(**change):
    record = {"name": "kept-planted", "why": "its operand is never a NaN",
              "oracle_run": "scripts/oracle_check.py M R --only kept-planted at abc1234",
              "oracle": ORACLE_ROW}
    return {k: v for k, v in (record | change).items() if v is not None}


def _check_masked(tmp_path, verdicts: dict[int, str], *records: dict):
    (tmp_path / "masked.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    done = _check(tmp_path, verdicts)
    return subprocess.run([*done.args, "--masked", str(tmp_path / "masked.jsonl")],
                          capture_output=True, text=True, check=False)


def test_a_record_of_an_oracle_run_relabels_a_plant_masked_by_values(tmp_path):
    done = _check_masked(tmp_path, {2: "equivalent", 3: "equivalent"}, _record(),
                         _record(name="of-another-corpus"))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("4 pairs, 2 with a result; 0 against the label; 1 plant "
                                  "relabelled masked by values")
    assert "| fsel | planted, masked by values | 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in done.stdout
    assert "| nan-min | 1 | 0 | 1 | 0 | 0 | 1/0/0 | 0/0/0 |" in done.stdout
    done = _check_masked(tmp_path, {3: "different"}, _record())  # a replayed difference
    assert done.returncode == 1 and "recorded as masked by values" in done.stdout


@pytest.mark.parametrize("change,says", [
    ({"oracle": None}, "holds no scripts/oracle_check.py row"),
    ({"oracle": ORACLE_ROW | {"name": "masked-planted"}}, "holds no scripts/oracle_check.py"),
    ({"oracle": ORACLE_ROW | {"verdict": "unknown"}}, "verdict 'unknown', not `equivalent`"),
    ({"oracle": ORACLE_ROW | {"separating": {"inputs": {}}}}, "separates the sides"),
    ({"oracle": ORACLE_ROW | {"wrong": True}}, "separates the sides, is wrong"),
    ({"oracle": ORACLE_ROW | {"error": "OracleError: x"}}, "is an error"),
    ({"oracle": ORACLE_ROW | {"vectors": 5002}}, "ran 4999 vectors, under 5000"),
    ({"why": " "}, 'says nothing of why ("why")'),
    ({"oracle_run": None}, "cites no oracle run"),
    ({"name": "equal", "oracle": ORACLE_ROW | {"name": "equal"}}, "no plant labelled different"),
    ({"name": "masked-planted", "oracle": ORACLE_ROW | {"name": "masked-planted"}},
     "no plant labelled different"),
])
def test_a_verdict_alone_never_relabels(tmp_path, change, says):
    done = _check_masked(tmp_path, {3: "equivalent"}, _record(), _record(**change))
    assert done.returncode == 2 and "masked.jsonl, line 2: " in done.stderr
    assert says in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_the_records_kept_in_scripts_hold():
    """scripts/masked_plants.jsonl: each record relabels its plant (a label as generated)."""
    path = SCRIPTS / "masked_plants.jsonl"
    records = check_results.read_jsonl(path)
    rows = [{"name": r["name"], "kind": "k", "planted": "p", "expect": "different"}
            for r in records]
    assert check_results.masked_by_values(rows, records, path) == len(records) >= 3
    assert {check_results.label(row) for row in rows} == {check_results.BY_VALUES}
