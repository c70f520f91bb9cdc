"""The sweep benchmark's counting (scripts/sweep_bench.py, `bench.py --sweep`): a sample
spread over every stratum by a fixed seed, a pair solved and PAR-2 in CPU seconds (not
the wall clock another process stretches), the CPU seconds of a run's whole process tree."""

from __future__ import annotations

import sys
from collections import Counter
from itertools import product
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import sweep_bench  # noqa: E402

KINDS = ("int", "float", "half", "div", "bf16")


def _labels() -> list[dict]:
    """A corpus shaped as sweep_corpus.py's: every kind, size, compiler and seed, each
    pair with a planted twin (bf16 on one compiler only, one twin missing)."""
    out = []
    for kind, ops, compiler, seed in product(KINDS, (50, 100, 300, 1000),
                                             ("llc14", "llvm22"), range(4)):
        if kind == "bf16" and compiler == "llc14":
            continue
        name = f"{kind}-{ops}-{compiler}-{seed}"
        for planted in (None, "lt-as-le"):
            if planted and name == "div-50-llvm22-2":
                continue
            out.append({"name": name + ("-planted" if planted else ""), "kind": kind,
                        "ops": ops, "compiler": compiler, "seed": seed, "planted": planted,
                        "expect": "different" if planted else "equivalent"})
    return out


def _stratum(label: dict) -> tuple:
    return label["kind"], label["planted"] is not None, label["ops"], label["compiler"]


def test_a_sample_takes_every_stratum_once_before_any_twice():
    labels = _labels()
    strata = {_stratum(x) for x in labels}
    chosen = sweep_bench.sample(labels, len(strata))
    assert {_stratum(labels[i]) for i in chosen} == strata
    assert sweep_bench.sample(labels, len(strata)) == chosen  # the seed fixes it
    assert sweep_bench.sample(labels, None) == list(range(len(labels)))


def test_a_small_sample_is_balanced_on_each_stratum_by_itself():
    labels = _labels()
    for seed in (44, 7):
        chosen = [labels[i] for i in sweep_bench.sample(labels, 20, seed)]
        assert len(chosen) == 20
        assert Counter(x["kind"] for x in chosen) == {k: 4 for k in KINDS}
        assert Counter(x["planted"] is None for x in chosen) == {True: 10, False: 10}
        assert Counter(x["ops"] for x in chosen) == {50: 5, 100: 5, 300: 5, 1000: 5}
        compilers = Counter(x["compiler"] for x in chosen)  # bf16 has one compiler only
        assert compilers["llvm22"] - compilers["llc14"] in (0, 2), compilers
    assert sweep_bench.sample(labels, 20, 44) != sweep_bench.sample(labels, 20, 7)


def _m(verdict: str, cpu: float, wall: float) -> dict:
    return {"verdict": verdict, "cpu": cpu, "wall": wall}


def test_solved_and_par2_count_cpu_seconds_not_the_wall_clock():
    slow_wall = _m("equivalent", 10.0, 100.0)  # a loaded machine: solved
    slow_cpu = _m("different", 70.0, 30.0)  # past the limit in work: not solved
    undecided = _m("unknown", 5.0, 5.0)
    assert sweep_bench.solved(slow_wall, 60) and not sweep_bench.solved(slow_cpu, 60)
    assert not sweep_bench.solved(undecided, 60)
    runs = [slow_wall, slow_cpu, undecided]
    assert sweep_bench.par2(runs, 60) == (10 + 120 + 120) / 3
    assert sweep_bench.par2(runs, 60, "wall") == (120 + 30 + 120) / 3


def test_a_run_the_load_stopped_at_the_wall_cap_is_counted_as_such():
    """Unsolved with CPU seconds left, at its wall cap: the load decided it."""
    assert sweep_bench.at_wall_cap(_m("unknown", 20.0, 119.0), 60)
    assert not sweep_bench.at_wall_cap(_m("unknown", 60.5, 119.0), 60)  # its CPU spent
    assert not sweep_bench.at_wall_cap(_m("unknown", 2.0, 3.0), 60)  # gave up early
    assert not sweep_bench.at_wall_cap(_m("equivalent", 20.0, 119.0), 60)


def test_a_measurement_with_a_raised_wall_cap_counts_and_kills_by_it(monkeypatch):
    """PTXSMT_WALL_CAP=20 (docs/scale.md): 119 wall seconds of a 60 CPU s limit are no
    longer the cap, 1,100 are; a run is killed past 20 x its limit, not 2 x."""
    monkeypatch.setenv("PTXSMT_WALL_CAP", "20")
    assert not sweep_bench.at_wall_cap(_m("unknown", 20.0, 119.0), 60)
    assert sweep_bench.at_wall_cap(_m("unknown", 20.0, 1100.0), 60)
    kills = []
    monkeypatch.setattr(sweep_bench, "measured",
                        lambda cmd, kill_after: kills.append(kill_after) or
                        {"out": None, "cpu": 0.0, "wall": 0.0})
    sweep_bench.measure("sweep", Path("a.ptx"), Path("b.ptx"), 60)
    assert kills == [20 * 60 + sweep_bench.KILL_AFTER]


def test_the_table_counts_verdicts_against_the_label_apart():
    labels = [{"name": n, "kind": "int", "ops": 50, "expect": e}
              for n, e in (("a", "equivalent"), ("b", "different"), ("c", "different"))]
    runs = {"monolithic z3": [_m("unknown", 60, 60)] * 3,
            "monolithic bitwuzla": [_m("equivalent", 1, 1), _m("different", 1, 1),
                                    _m("unknown", 60, 60)],
            "sweep": [_m("equivalent", 1, 9), _m("equivalent", 2, 9), _m("different", 3, 9)]}
    text = sweep_bench.table(labels, runs, 60)
    assert "| sweep | 3 of 3 | 2.0 | 9.0 | 2 | 1 | 1 | 0 | 0 | 6 / 27 |" in text
    assert "| monolithic z3 | 0 of 3 | 120.0 | 120.0 | 0 | 0 | 0 | 3 | 0 |" in text
    assert "Against the label (sweep): b." in text
    assert "(monolithic bitwuzla) over the sweep's: 20.3x" in text


def test_a_run_counts_the_cpu_seconds_of_the_processes_it_started():
    """The work is in a grandchild that runs until it has used 0.3 CPU seconds (however
    long that takes on the wall clock)."""
    burn = ("import subprocess, sys; subprocess.run([sys.executable, '-c', "
            "'import time\\nwhile time.process_time() < 0.3: pass']); print('equivalent')")
    got = sweep_bench.measured([sys.executable, "-c", burn], 60)
    assert sweep_bench.verdict_of(got["out"]) == "equivalent"
    assert got["cpu"] >= 0.3


def test_the_table_goes_between_the_marks(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text(f"head\n{sweep_bench.MARKS[0]}\nold\n{sweep_bench.MARKS[1]}\ntail\n")
    sweep_bench.write_doc("new", doc)
    assert doc.read_text() == f"head\n{sweep_bench.MARKS[0]}\nnew\n{sweep_bench.MARKS[1]}\ntail\n"
