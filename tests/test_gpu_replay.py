"""scripts/gpu_replay.py: the generated CUDA program for models/golden.jsonl has one
kernel per distinct PTX text and compiles with nvcc; its host side runs without a GPU
(PTXSMT_REPLAY_FAKE), which checks the report and the results file, not silicon."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ptxsmt.ptxasdiff import ptxas_version

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "models" / "golden.jsonl"
_spec = importlib.util.spec_from_file_location("gpu_replay", ROOT / "scripts" / "gpu_replay.py")
gpu_replay = importlib.util.module_from_spec(_spec)
sys.modules["gpu_replay"] = gpu_replay
_spec.loader.exec_module(gpu_replay)

nvcc = pytest.mark.skipif(shutil.which("nvcc") is None,
                          reason="nvcc (CUDA toolkit) not found: cannot compile the replay program")


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("replay") / "replay.cu"
    assert gpu_replay.main([str(GOLDEN), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def program(generated) -> Path:
    """The golden program compiled once per session (about 5 s)."""
    exe = generated.with_suffix("")
    run = subprocess.run(["nvcc", "-arch=sm_90", "-o", str(exe), str(generated)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return exe


def test_one_kernel_per_distinct_ptx(generated):
    source = generated.read_text()
    texts = {json.loads(line)["ptx"] for line in GOLDEN.read_text().splitlines() if line}
    kernels = re.findall(r"__global__ void (k\d+)\(", source)
    assert len(kernels) == len(set(kernels)) == len(texts) == 49
    assert "asm volatile" in source and "int main(" in source
    assert source.count('"{\\n\\t"') == len(texts)  # every asm block is its own scope
    # guard, sink, !c, vset mask/selectors survive the renaming
    for stmt in ("@!r_g setp.lt.f32 r_p, r_a, r_b;", "setp.lt.f32 _|r_q, r_a, r_b;",
                 "set.eq.and.f32.f64 r_d, r_a, r_b, !r_c;",
                 "vset2.u32.u32.ne r_d, r_a.h01, r_b.h10, r_c;",
                 "vset4.u32.u32.eq.add r_d.b31, r_a, r_b, r_c;"):
        assert stmt in source


def test_guard_loads_the_prior_value(generated):
    source = generated.read_text()
    block = source[source.index("// kernel 18: @g setp"):source.index("// kernel 19:")]
    assert "setp.ne.u32 r_p," in block and "setp.ne.u32 r_g," in block


@pytest.mark.parametrize("ptx, statements", [
    ("setp.lt.f32 p|q, a, b;", ["setp.lt.f32 r_p|r_q, r_a, r_b;"]),
    ("@!%g selp.b32 %d, 0x7f, %b, !%c;", ["@!r_g selp.b32 r_d, 0x7f, r_b, !r_c;"]),
    ("setp.lt.f32 p, a, 0f3F800000; // f\n@p mov.b32 d, {lo, hi};",
     ["setp.lt.f32 r_p, r_a, 0f3F800000;", "@r_p mov.b32 r_d, {r_lo, r_hi};"]),
    ("vset4.u32.u32.eq.add d.b31, a.b7654, b, c;",
     ["vset4.u32.u32.eq.add r_d.b31, r_a.b7654, r_b, r_c;"]),
    ("setp.eq.f64 _|f64, f32, b64;", ["setp.eq.f64 _|r_f64, r_f32, r_b64;"]),
    ("@ ! g setp.ftz.lt.f32 p | q, a,b;", ["@!r_g setp.lt.ftz.f32 r_p|r_q, r_a, r_b;"]),
])
def test_rename(ptx, statements):
    from ptxsmt import Program
    assert gpu_replay.rename(ptx, Program.parse(ptx).types) == statements


def test_unexpressible_vectors_are_left_out(tmp_path):
    lines = [
        {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1.0", "b": "2.0"}, "outputs": {"p": True}},
        {"ptx": "setp.lt.f33 p, a, b;", "inputs": {}, "outputs": {"p": True}},
        {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "1.0", "b": "2.0"}, "outputs": {"z": True}},
        {"ptx": "setp.lt.f32 p, a, b;", "inputs": {"a": "0x123456789"}, "outputs": {"p": True}},
        {"ptx": "set.lt.bf16.f32 d, a, b;", "inputs": {"a": "1.0", "b": "2.0"}},
    ]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    kernels, skipped, sm = gpu_replay.plan([str(path)], arch=80)
    assert [len(k.vectors) for k in kernels] == [1] and sm == 80
    assert [s.line for s in skipped] == [2, 3, 4, 5, 6]
    assert "needs sm_90" in skipped[3].why
    kernels, skipped, sm = gpu_replay.plan([str(path)])
    assert sm == 90 and sum(len(k.vectors) for k in kernels) == 2
    assert gpu_replay.plan([str(path)], limit=1)[0][0].vectors[0].line == 1


def test_options_travel_with_the_vectors(tmp_path):
    base = {"ptx": "vset2.u32.u32.lt d.h0, a, b, c;",
            "inputs": {"a": "0x0", "b": "0x00010001", "c": "0x0"}}
    lines = [{**base, "options": {"vset_merge": "b"}, "outputs": {"d": "0x00010001"}},
             {**base, "options": {"target": "sm_13"}, "outputs": {"d": "0x00000001"}},
             {**base, "options": {"vset_merge": "x"}}]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    kernels, skipped, _ = gpu_replay.plan([str(path)])
    (vec,) = kernels[0].vectors
    assert vec.obj["options"] == {"vset_merge": "b"}  # replayed, and kept in the results
    assert [s.line for s in skipped] == [2, 3]
    assert "sm_13" in skipped[0].why and "bad options" in skipped[1].why


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")
def test_ptxas_accepts_every_planned_kernel(tmp_path):
    """ptxsmt's catalogue matches ptxas, so nothing it plans is refused by the assembler;
    a text ptxsmt refuses (mov.f16: ptxas has no such form) is left out at planning."""
    path = tmp_path / "v.jsonl"
    path.write_text(json.dumps({"ptx": "mov.b32 d, a;", "inputs": {"a": "0x1"}}) + "\n" +
                    json.dumps({"ptx": "mov.f16 d, a;", "inputs": {"a": "0x1"}}) + "\n")
    kernels, skipped, sm = gpu_replay.plan([str(path)])
    assert [s.line for s in skipped] == [2]
    assert not gpu_replay.ptxas_rejects(kernels, sm)
    golden, _, sm = gpu_replay.plan([str(GOLDEN)])
    assert not gpu_replay.ptxas_rejects(golden, sm)


@pytest.mark.skipif(shutil.which("ptxas") is None
                    or "V13.0." not in ptxas_version(shutil.which("ptxas")),
                    reason="documents ptxas 13.0 (docs/ptxas-diff.md)")
def test_a_kernel_ptxas_crashes_on_is_left_out(tmp_path):
    """ptxas 13.0 segfaults on a guarded setp with a sink (docs/ptxas-diff.md, finding 2)
    and names no line: the module is halved until the kernel is alone."""
    crash = "@g setp.lt.u32 _|q, a, b;"
    texts = ["setp.lt.f32 p, a, b;", crash, "selp.b32 d, a, b, c;", "set.lt.u32.f32 d, a, b;"]
    path = tmp_path / "v.jsonl"
    path.write_text("".join(json.dumps({"ptx": t, "inputs": {}}) + "\n" for t in texts))
    kernels, _, sm = gpu_replay.plan([str(path)])
    refused = gpu_replay.ptxas_rejects(kernels, sm)
    assert list(refused) == [crash] and "crashed" in refused[crash]


@nvcc
def test_program_compiles_and_reports(program, tmp_path):
    results = tmp_path / "results.jsonl"
    env = {**os.environ, "PTXSMT_REPLAY_FAKE": "echo"}
    run = subprocess.run([str(program), str(results)], capture_output=True, text=True,
                         env=env, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "51 passed, 0 failed" in run.stdout
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k not in ("hw_outputs", "gpu")} for r in rows] == golden
    assert all(r["hw_outputs"] == r["outputs"] and r["gpu"] for r in rows)

    env["PTXSMT_REPLAY_FAKE"] = "flip"
    run = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 1
    assert 'MISMATCH line 1: ptx "setp.lt.f32 p|q, a, b;"' in run.stdout
    assert 'expected {"p": false, "q": true} got {"p": true, "q": true}' in run.stdout
    assert "50 passed, 1 failed" in run.stdout
