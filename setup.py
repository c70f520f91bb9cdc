"""Build hook: ship the identity library (proofs/) and the vectors (models/) in the wheel.

Both folders stay at the top of the repository, where people edit them; the wheel
carries copies under ptxsmt/_data/, which `ptxsmt.resources` finds after a plain
`pip install .`. Everything else is declared in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


class BuildWithData(build_py):
    def run(self):
        super().run()
        for name in ("proofs", "models"):
            shutil.copytree(ROOT / name, Path(self.build_lib) / "ptxsmt" / "_data" / name,
                            dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithData})
