"""ptxsmt on compiler pairs: never a wrong verdict where the answer is certain.

tests/corpus/functions/ holds PTX that llc-14, the LLVM inside llvmlite and nvcc wrote for the
same source compiled two ways (scripts/make_function_corpus.py), plus mutants: a build with one
instruction changed on purpose. The expectation comes from how the pair was made, not from
ptxsmt: two compiles of UB-free source are equivalent unless the manifest records a documented
compiler behaviour that differs; a mutant always differs. So

  - "different" only where the manifest says "different" (else a false alarm),
  - "equivalent" never where it says "different" (else unsound),
  - "unknown" and a refusal (an "error" with its reason) are allowed, and counted by
    scripts/function_corpus.py, which also triages every verdict (docs/function-corpus.md),
  - a module ptxas rejects (manifest "refused") must be refused,
  - anything else (a traceback, an error ptxsmt calls its own bug) is a crash.

The pairs are decided by one `ptxsmt equiv --batch` (a child process a pair, as a
compiler's CI runs them), each line checked by its own test. The default run takes SUBSET
(one pair of each kind); PTXSMT_PROFILE=thorough takes every pair.
Pairs ptxsmt answers wrongly today are xfail with their class, strict: each is a
deterministic false "different" (no timeout in it), so a fix in function/ turns it into an
XPASS that fails until its line leaves KNOWN_WRONG. A verdict that depends on the solver's
time is "unknown" or right, both allowed, so none needs a non-strict xfail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tier import THOROUGH, sample

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "corpus" / "functions" / "manifest.jsonl"
PAIRS = {p["id"]: p for p in map(json.loads, MANIFEST.read_text().splitlines())}

# Wrong verdicts of today's ptxsmt on this corpus, by class (docs/function-corpus.md).
KNOWN_WRONG: dict[str, str] = {}

# one or a few pairs of each source and class; the mutants all (they guard against "equivalent")
SUBSET = [
    "scalar:smax32:llvm14-O0-sm80~llvm14-O2-sm80",
    "scalar:load_sext8:llvm14-O2-sm80~llvm22-O2-sm80",
    "scalar:cond_store:llvm22-O0-sm80~llvm22-O2-sm80",
    "scalar:rotl64_var:llvm22-O0-sm80~llvm22-O2-sm80",
    "scalar:fptosi_sat:llvm14-O0-sm80~llvm14-O2-sm80",
    "kernels:k_clamp:nvcc-G-sm80~nvcc-O3-sm80",
    "kernels:k_hlt:nvcc-G-sm80~nvcc-O3-sm80",
    "kernels:k_switch:nvcc-G-sm80~nvcc-O3-sm80",
    "scalar:rotl64_var:llvm14-O2-sm80~llvm22-O2-sm80",
    "kernels:k_fmul_add:nvcc-G-sm80~nvcc-O3-sm80",
    "mutant:switch_dense:llvm22-O0-sm80~mutant",
    "mutant:fcmp_une:llvm14-O2-sm80~mutant",
    "mutant:cond_store:llvm14-O2-sm80~mutant",
    "mutant:rotl32_var:llvm22-O2-sm80~mutant",
    "mutant:fminnum:llvm14-O2-sm80~mutant",
    "mutant:hcmp_olt:llvm22-O2-sm80~mutant",
    "mutant:store_sum:llvm14-O2-sm80~mutant",
    "mutant:load_sext8:llvm22-O2-sm80~mutant",
    "mutant:smax32:llvm14-O2-sm80~mutant",
    "mutant:load_add:llvm14-O2-sm80~mutant",
    "mutant:udiv_var:llvm14-O0-sm80~mutant",
    "mutant:k_max:nvcc-O3-sm80~mutant",
    "mutant:k_shift:nvcc-O3-sm80~mutant",
    "kernels:k_rotl:nvcc-G-sm80~nvcc-O3-sm80",
    "kernels:k_shared:nvcc-G-sm80~nvcc-O3-sm80",
    "scalar:switch_compute:llvm14-O2-sm80~llvm22-O2-sm80",
    "scalar:switch_dense:llvm14-O2-sm80~llvm22-O2-sm80",
    "scalar:mul8:llvm14-O2-sm80~llvm22-O2-sm80",
    "kernels:k_inline:nvcc-G-sm80~nvcc-O3-sm80",
    "kernels:k_hmax:nvcc-G-sm80~nvcc-O3-sm80",  # a caller's local frame and its callee's
    "extra:agg_param:llvm14-O0-sm80~llvm14-O2-sm80",
    "extra:pair_ret:llvm14-O2-sm80~llvm22-O2-sm80",
    "extra:h2add:llvm22-O0-sm80~llvm22-O2-sm80",
    "extra:indirect_call:llvm14-O0-sm80~llvm14-O2-sm80",
    "extra:local_array:llvm14-O0-sm80~llvm14-O2-sm80",
    "mutant:agg_param:llvm14-O2-sm80~mutant",
    "mutant:pair_ret:llvm14-O2-sm80~mutant",
    "mutant:local_array:llvm14-O2-sm80~mutant",
    "mutant:shared_store:llvm22-O0-sm80~mutant",
    "nvvm:add_rm:llvm22-O0-sm80~llvm22-O2-sm80",
    "nvvm:i2f_rz:llvm14-O0-sm80~llvm14-O2-sm80",
    "nvvm:i2d_rz:llvm14-O0-sm80~llvm14-O2-sm80",
    "nvvm:cttz64:llvm14-O0-sm80~llvm14-O2-sm80",
    "more:switch_table8:llvm22-O2-sm80~llvm22-O2-sm53",
    "more:m_const_lookup:nvcc-G-sm80~nvcc-O3-sm80",
    "more:m_atomics:nvcc-G-sm80~nvcc-O3-sm80",
    "more:atomic_cas:llvm14-O0-sm80~llvm14-O2-sm80",
    "scalar:hadd:llvm14-O2-sm80~llvm22-O2-sm80",
    "scalar:sel_i8:llvm22-O0-sm80~llvm22-O2-sm80",
    "more:loop_n:llvm22-O0-sm80~llvm22-O2-sm80",
    "reject1:cond_store:llvm14-O2-sm80~reject1",
    "reject2:cond_store:llvm14-O2-sm80~reject2",
    "reject3:cond_store:llvm14-O2-sm80~reject3",
]


def _cases():
    for pid in _tier():
        marks = ([pytest.mark.xfail(reason=KNOWN_WRONG[pid], strict=True)]
                 if pid in KNOWN_WRONG else [])
        yield pytest.param(pid, id=pid, marks=marks)


def _tier() -> list[str]:
    return list(PAIRS) if THOROUGH else SUBSET


def equiv(pair: dict, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "ptxsmt", "equiv", pair["a"], pair["b"],
           "--function", pair["function"], "--json", "--timeout", "20", *extra]
    if "function_b" in pair:
        cmd += ["--function-b", pair["function_b"]]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> dict[str, dict]:
    """Each pair of the tier's result line, by pair id, from one `equiv --batch`."""
    ids = _tier()
    lines = [{"a": str(ROOT / PAIRS[i]["a"]), "b": str(ROOT / PAIRS[i]["b"]),
              "function": PAIRS[i]["function"], "options": {"timeout": 20},
              **{k: PAIRS[i][k] for k in ("function_b",) if k in PAIRS[i]}} for i in ids]
    path = tmp_path_factory.mktemp("corpus") / "pairs.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    run = subprocess.run([sys.executable, "-m", "ptxsmt", "equiv", "--batch", str(path),
                          "--jobs", "2", "--no-cache"], capture_output=True, text=True, cwd=ROOT)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["line"] for r in results] == list(range(1, len(ids) + 1)), run.stdout[-2000:]
    return dict(zip(ids, results))


@pytest.mark.parametrize("pid", list(_cases()))
def test_no_wrong_verdict(decided, pid):
    pair, result = PAIRS[pid], decided[pid]
    verdict = result["verdict"]
    assert not result.get("bug"), result
    if pair["expect"] == "refused":  # ptxas rejects the module: so must ptxsmt
        assert verdict == "error", f"answered a module ptxas rejects: {str(result)[:500]}"
    if verdict == "error":  # refused: allowed, with its reason
        assert result["error"], result
        return
    assert verdict in ("equivalent", "different", "unknown"), result
    if verdict == "different":
        assert pair["expect"] == "different", f"false alarm: {str(result)[:1500]}"
    if verdict == "equivalent":
        assert pair["expect"] != "different", f"unsound: {pair['why']}"


def test_every_merge_by_rule_is_certified(decided):
    """Each "equivalent" of the tier that rests on merges by rule (the verdict's
    "justified") is asked again with --certify: a solver re-proves each merge, and none
    is refuted (one undecided in its share of the time is allowed). The thorough tier
    certifies every such pair; the default run a sample of three."""
    ruled = [pid for pid, r in decided.items()
             if r["verdict"] == "equivalent" and r.get("justified")]
    for pid in sample(ruled, 3, seed="certify"):
        run = equiv(PAIRS[pid], "--certify")
        out = json.loads(run.stdout)
        assert out["verdict"] == "equivalent", (pid, out)
        assert out["certified"]["refuted"] == [], (pid, out)


def test_manifest_is_well_formed():
    """Every pair names two files that exist and hold its function, and says why."""
    for pid, p in PAIRS.items():
        assert p["expect"] in ("equivalent", "different", "refused-ok", "refused"), pid
        assert p["why"] and p["source"], pid
        for side, name in (("a", p["function"]), ("b", p.get("function_b", p["function"]))):
            text = (ROOT / p[side]).read_text()
            assert f" {name}(" in text, (pid, side)
    assert set(KNOWN_WRONG) <= set(PAIRS) and set(SUBSET) <= set(PAIRS)


def test_the_ir_oracle_confirms_llvm14s_rotate_miscompile():
    """The LLVM 14 pair differs because LLVM 14 is wrong, as the IR itself says when llvmlite's
    JIT runs it natively on ptxsmt's counterexample (the runner's triage, an oracle apart from
    ptxsmt's terms): a rotate is modulo 64, so rotl(1, 0xffffffff) is bit 63, not 0."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import function_corpus as runner

    oracle = runner.IrOracle(runner.SRC / "scalar.ll")
    assert oracle("rotl64_var", [1, 0xFFFFFFFF]) == 1 << 63
    assert oracle("rotl64_var", [1, 64]) == 1
    pair = PAIRS["scalar:rotl64_var:llvm14-O2-sm80~llvm22-O2-sm80"]
    run = equiv(pair)
    assert run.returncode == 1, run.stderr
    kind, evidence = runner.triage_different(pair, json.loads(run.stdout), {"scalar": oracle})
    assert kind == "expected"
    assert "scalar.llvm14-O2-sm80.ptx is wrong" in evidence, evidence
