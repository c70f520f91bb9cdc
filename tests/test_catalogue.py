"""The variant catalogue: pinned counts, and agreement with ptxas 13.0.

The counts per header are those ptxas 13.0 accepted in the survey recorded in
docs/ptxas-legality.md (§10); the live test asks the installed ptxas again.
"""

from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest

from ptxsmt.check import check_line
from ptxsmt.isa.errors import PtxError
from ptxsmt.isa.targets import parse_target, parse_version
from ptxsmt.isa.variants import MODELLED_FAMILIES, catalogue

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def test_pinned_counts_per_family():
    counts = {}
    for v in catalogue():
        counts[v.family] = counts.get(v.family, 0) + 1
    assert counts == {"set": 1152, "setp": 384, "selp": 11, "slct": 33, "half-set": 2112,
                      "half-setp": 336, "vset2": 48, "vset4": 48, "glue": 94,
                      "arith": 151, "float-arith": 241, "convert": 555, "bits": 23}


def lines_accepted(target: str, version: str) -> dict[str, int]:
    """Instruction lines legal under a header, counted as the ptxas survey counted them:
    setp once per destination form (p, and p|q where allowed)."""
    tgt, ver = parse_target(target), parse_version(version)
    out = dict.fromkeys(("setp", "set", "selp", "slct", "vset"), 0)
    for v, req in catalogue().requirements.items():
        if v.family in MODELLED_FAMILIES or ver < req.ptx or tgt.sm < req.sm:
            continue
        key = "vset" if v.syntax.lane_prefix else v.opcode
        out[key] += 2 if v.syntax.pair_dest and v.compared_type.predicate_pair else 1
    return out


@pytest.mark.parametrize("target,version,expected", [
    ("sm_10", "1.0", (656, 984, 11, 22, 0)),
    ("sm_20", "2.0", (768, 1152, 11, 33, 0)),
    ("sm_30", "3.0", (768, 1152, 11, 33, 96)),
    ("sm_75", "6.4", (1104, 1760, 11, 33, 96)),
    ("sm_53", "6.5", (1104, 2432, 11, 33, 96)),
    ("sm_89", "7.8", (1104, 2432, 11, 33, 96)),
    ("sm_90", "7.8", (1272, 3264, 11, 33, 96)),
    ("sm_120", "9.0", (1272, 3264, 11, 33, 96)),
])
def test_counts_match_the_ptxas_survey(target, version, expected):
    assert tuple(lines_accepted(target, version).values()) == expected


@pytest.mark.parametrize("target,version,legal", [
    ("sm_90", "7.7", False), ("sm_90", "7.8", True), ("sm_100", "8.5", False),
    ("sm_120", "8.7", True), ("sm_80", "6.5", False), ("sm_75", "6.3", True),
    ("sm_90", "9.1", False), ("sm_35", "3.1", True), ("sm_35", "3.0", False),
])
def test_header_rules(target, version, legal):
    err = check_line("setp.lt.f32 p, a, b;", parse_target(target), parse_version(version))
    assert (err is None) == legal


@pytest.mark.parametrize("target", ["sm_91", "sm_0", "sm_9999", "sm_90b", "90.0", ""])
def test_unknown_targets_are_refused(target):
    with pytest.raises(PtxError, match="target"):
        parse_target(target)


def _same_register_types(cand) -> bool:
    fields = cand.fields
    return not ({"c_reg", "reg", "d_reg", "ab_reg"} & set(fields)) and \
        fields.get("c") != "%b32_7"


ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not found")


@ptxas
@pytest.mark.parametrize("header", ["sm_90@9.0", "sm_80@7.0", "sm_75@6.3", "sm_53@6.4",
                                    "sm_120@8.7", "sm_20@2.0"])
def test_check_agrees_with_ptxas(header):
    sys.path.insert(0, str(SCRIPTS))
    import ptxas_probe
    import ptxas_survey

    target, version = header.split("@")
    gens = (ptxas_survey.gen_setp, ptxas_survey.gen_set, ptxas_survey.gen_setp_operands,
            ptxas_survey.gen_set_operands, ptxas_survey.gen_selp, ptxas_survey.gen_slct,
            ptxas_survey.gen_vset, ptxas_survey.gen_vset_sel, ptxas_survey.gen_order)
    # Register declarations are not part of an instruction line, so leave out candidates
    # that only vary the declared type of a register (all operand names here say their type).
    cands = [c.line for gen in gens for c in gen() if _same_register_types(c)]
    sample = random.Random(header).sample(cands, 1500)
    verdicts = ptxas_probe.probe(sample, target, version)
    wrong = [(line, err, check_line(line, parse_target(target), parse_version(version)))
             for line, err in zip(sample, verdicts)
             if (err is None) != (check_line(line, parse_target(target),
                                             parse_version(version)) is None)]
    assert not wrong, wrong[:5]


def _ptxas_accepts(body: str, target: str, version: str, tmp_path) -> bool:
    import subprocess

    src = tmp_path / "k.ptx"
    src.write_text(f".version {version}\n.target {target}\n.address_size 64\n"
                   f".visible .entry k(.param .u64 p) {{\n.reg .b64 r;\nld.param.u64 r, [p];\n"
                   f"{body}\nret;\n}}\n")
    arch = target if int(target[3:].rstrip("af")) >= 75 else "sm_75"
    done = subprocess.run(["ptxas", "-arch", arch, str(src), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    return done.returncode == 0


@ptxas
@pytest.mark.parametrize("variant", ["cvt.f32.f16", "cvt.f64.f32", "cvt.f32.bf16"])
@pytest.mark.parametrize("target,version", [("sm_20", "2.3"), ("sm_75", "7.1"),
                                            ("sm_80", "7.0"), ("sm_80", "7.1"), ("sm_90", "7.8")])
def test_cvt_legality_agrees_with_ptxas(variant, target, version, tmp_path):
    """The widening cvt glue: `check` says legal exactly where ptxas assembles it."""
    dst, src = variant.split(".")[1:]
    reg = "b16" if src in ("f16", "bf16") else src
    body = (f".reg .{reg} a;\n.reg .{dst} d;\nld.global.{reg} a, [r];\n{variant} d, a;\n"
            f"st.global.{dst} [r], d;")
    ours = check_line(f"{variant} d, a;", parse_target(target), parse_version(version))
    assert (ours is None) == _ptxas_accepts(body, target, version, tmp_path), ours


def test_one_opcodes_requirement_is_the_whole_catalogues():
    """`requirement` builds only its opcode's forms (start-up); it must say what the
    catalogue says, variant for variant, and None for what the catalogue lacks."""
    from dataclasses import replace

    from ptxsmt.isa.variants import requirement

    whole = catalogue()
    assert all(requirement(v) == whole.requirement(v) for v in whole)
    outside = [replace(v, ftz=True) for v in whole if not v.ftz]
    outside = [v for v in outside if v not in whole]
    assert outside and all(requirement(v) is None for v in outside)
