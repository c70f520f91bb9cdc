"""Installed like any package: the data ptxsmt ships is found through the package."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ptxsmt import resources
from ptxsmt.cli import main
from ptxsmt.isa.errors import PtxError

CHECKOUT = Path(__file__).resolve().parent.parent


def test_a_checkout_reads_the_top_level_folders():
    assert resources.library_dir() == CHECKOUT / "proofs"
    assert CHECKOUT / "models" / "golden.jsonl" in resources.model_files()


def test_a_wheel_reads_its_packaged_copy(tmp_path, monkeypatch):
    package = tmp_path / "site-packages" / "ptxsmt"
    (package / "_data" / "proofs").mkdir(parents=True)
    (package / "_data" / "models").mkdir()
    (package / "_data" / "models" / "x.jsonl").write_text("")
    monkeypatch.setattr(resources, "_PACKAGE", package)
    assert resources.library_dir() == package / "_data" / "proofs"
    assert resources.model_files() == [package / "_data" / "models" / "x.jsonl"]


def test_missing_data_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(resources, "_PACKAGE", tmp_path / "ptxsmt")
    with pytest.raises(PtxError, match="no proofs/ folder"):
        resources.library_dir()


def test_prove_runs_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no proofs/ here: the shipped library is used
    r = CliRunner().invoke(main, ["prove", "identities", "-k", "unsigned-aliases"])
    assert r.exit_code == 0 and "24 of 24 instances" in r.output


def test_library_option_points_elsewhere(tmp_path):
    (tmp_path / "one.toml").write_text(
        '[[identity]]\nname = "lo-is-lt"\nlhs = "setp.lo.u32 p, a, b;"\n'
        'rhs = "setp.lt.u32 p, a, b;"\nexpect = "holds"\n')
    r = CliRunner().invoke(main, ["prove", "identities", "--library", str(tmp_path)])
    assert r.exit_code == 0 and "1 of 1 instances" in r.output
