"""scripts/gpu_function_replay.py without a GPU: the wrapper kernels assemble with ptxas, the
host program compiles, and the fake step (ptxsmt's own values as the "silicon") runs the
report: no disagreement, then exactly the one a flipped bit makes. The values ptxsmt
predicts for a rotate are checked against plain Python."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPUS = "tests/corpus/functions"
_spec = importlib.util.spec_from_file_location("gpu_function_replay",
                                               ROOT / "scripts" / "gpu_function_replay.py")
replay = importlib.util.module_from_spec(_spec)
sys.modules["gpu_function_replay"] = replay
_spec.loader.exec_module(replay)

PAIRS = [  # an equivalent pair, a known LLVM 14 miscompile, and a kernel (left out)
    {"id": "clamp", "a": f"{CORPUS}/scalar.llvm14-O0-sm80.ptx",
     "b": f"{CORPUS}/scalar.llvm14-O2-sm80.ptx", "function": "clamp32", "expect": "equivalent"},
    {"id": "rotl", "a": f"{CORPUS}/scalar.llvm14-O2-sm80.ptx",
     "b": f"{CORPUS}/scalar.llvm22-O2-sm80.ptx", "function": "rotl64_var",
     "expect": "different"},
]
COUNTEREXAMPLE = {"id": "rotl", "verdict": "different", "counterexample": {"inputs": {
    "rotl64_var_param_0": "0x1", "rotl64_var_param_1": "0x123456789"}}}


@pytest.fixture(scope="module")
def generated(tmp_path_factory, request) -> Path:
    tmp = tmp_path_factory.mktemp("fr")
    (tmp / "pairs.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PAIRS))
    (tmp / "results.jsonl").write_text(json.dumps(COUNTEREXAMPLE) + "\n")
    out = tmp / "run"
    argv = ["generate", str(out), "--manifest", str(tmp / "pairs.jsonl"),
            "--results", str(tmp / "results.jsonl"), "--vectors", "24"]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        assert replay.main(argv) == 0  # ptxas, where present, accepted every module
    return out


def rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "expected.jsonl").read_text().splitlines()]


def test_the_counterexample_is_replayed_and_ptxsmt_agrees_with_python(generated):
    calls = [r for r in rows(generated) if r["function"] == "rotl64_var"]
    assert {"rotl64_var_param_0": "0x1", "rotl64_var_param_1": "0x123456789"} in \
        [r["inputs"] for r in calls]
    for r in calls:
        if "llvm22" not in r["file"]:
            continue  # LLVM 14's rotate is the miscompile: only LLVM 22's is a rotate
        x, k = (int(v, 16) for v in r["inputs"].values())
        k %= 64
        assert int(r["ptxsmt"], 16) == ((x << k) | (x >> (64 - k))) & (2**64 - 1)


def test_fake_silicon_agrees_and_a_flipped_bit_is_reported(generated, capsys):
    assert replay.main(["fake", str(generated)]) == 0
    assert replay.main(["check", str(generated), "--out", str(generated / "hw.jsonl")]) == 0
    assert "0 disagree with ptxsmt, 0 contradict" in capsys.readouterr().out
    assert len((generated / "hw.jsonl").read_text().splitlines()) == len(rows(generated))
    assert replay.main(["fake", str(generated), "--flip"]) == 0
    assert replay.main(["check", str(generated)]) == 1
    out = capsys.readouterr().out
    assert out.count("silicon vs ptxsmt: clamp32") == 1
    assert out.count("pair contradicted: clamp") == 1  # the equivalent pair, not the rotate


def test_the_wrapper_passes_each_parameter_at_its_width():
    fn = replay.replayable(f"{ROOT}/{CORPUS}/scalar.llvm14-O2-sm80.ptx", "smin64")
    text = replay.wrapper(fn.fn, "k")
    assert "ld.global.b64 %a64_0, [%rd0+0];" in text
    assert "ld.global.b64 %a64_1, [%rd0+8];" in text
    assert "call.uni (ret), smin64, (arg0, arg1);" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (CUDA toolkit) not found")
def test_the_host_program_compiles(tmp_path):
    run = subprocess.run(["nvcc", "-O2", "-o", str(tmp_path / "replay"),
                          str(ROOT / "scripts" / "templates" / "function_replay.cu")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_two_nans_of_one_format_do_not_contradict_an_equivalent_pair():
    assert replay.both_nan("0x7fc00000", "0xffffffff", 32)
    assert replay.both_nan("0x7e00", "0x7fff", 16) and replay.both_nan("0x7fc1", "0xff81", 16)
    assert not replay.both_nan("0x7f800000", "0x7fc00000", 32)  # inf is no NaN
    assert not replay.both_nan("0x7fc00000", "0x00000000", 32)
