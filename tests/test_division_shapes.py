"""scripts/division_shapes.py: each multiply-high of tests/ptx/division/mix32 is read back
at -O0 and -O2, and one with its magic number one off (mul.hi.s32 by 1431655767 for
`srem 3`: plain Python finds the quotient by 3 wrong at x = 2^31 - 1) is no remainder:
only its sign bit, `hi >> 31`, is read (x's sign, x udiv 2^31)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import division_shapes  # noqa: E402

MIX = Path(__file__).parent / "ptx" / "division"


def _run(folder: Path, capsys) -> str:
    (folder / "manifest.jsonl").write_text(json.dumps(
        {"name": "mix32", "kind": "div", "planted": None}) + "\n")
    assert division_shapes.main([str(folder / "manifest.jsonl"), "--level", "O2"]) == 0
    return capsys.readouterr().out


def test_every_shape_of_mix32_is_read(tmp_path, capsys):
    (tmp_path / "mix32.O2.ptx").write_text((MIX / "mix32.O2.ptx").read_text())
    out = _run(tmp_path, capsys)
    assert "NOT READ" not in out and "'srem32 3': 1" in out


def test_a_magic_number_one_off_is_read_as_no_remainder(tmp_path, capsys):
    def quotient(x: int, magic: int) -> int:  # llc's sdiv by 3: mul.hi.s32, sign fix-up
        high = x * magic >> 32
        return high + (high < 0)

    x = 2**31 - 1
    assert quotient(x, 1431655766) == x // 3 != quotient(x, 1431655767)
    text = (MIX / "mix32.O2.ptx").read_text()
    assert text.count("1431655766") == 1
    (tmp_path / "mix32.O2.ptx").write_text(text.replace("1431655766", "1431655767"))
    out = _run(tmp_path, capsys)
    assert "srem32 3" not in out and "'udiv32 2147483648': 1" in out
