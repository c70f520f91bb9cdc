"""Exhaustive sweeps: one block checked against numpy's float16 compare."""

from __future__ import annotations

import numpy as np
from click.testing import CliRunner

from ptxsmt.cli import main
from ptxsmt.eval.sweep import BLOCKS, _block
from ptxsmt.sem.options import Options


def test_block_counts_match_numpy():
    index = 130  # a = 0x8200..0x82ff: negative subnormals and normals
    _, _, trues = _block(("setp.lt.f16 p, a, b;", Options(), index))
    span = 65536 // BLOCKS
    b = np.arange(65536, dtype=np.uint16).view(np.float16)
    a = np.arange(index * span, (index + 1) * span, dtype=np.uint16).view(np.float16)
    expected = sum(int((x < b).sum()) for x in a)
    assert trues["p"] == expected


def test_sweep_rejects_wide_operands():
    r = CliRunner().invoke(main, ["sweep", "setp.lt.f32"])
    assert r.exit_code == 2 and "16-bit" in r.output
