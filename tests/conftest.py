"""Hypothesis profiles: `ci` (the default) keeps the suite within minutes;
`PTXSMT_PROFILE=thorough python -m pytest` draws many more examples for a local run.

Tests state their budget relative to the profile (`settings.default.max_examples`),
so one switch scales every random test."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from tier import PROFILE

PROFILES = {"ci": 100, "thorough": 5000}  # examples per random test

for _name, _examples in PROFILES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])

if PROFILE not in PROFILES:
    raise pytest.UsageError(f"PTXSMT_PROFILE={PROFILE!r}: choose one of {', '.join(PROFILES)}")
settings.load_profile(PROFILE)

MAX_WORKERS = 4  # some tests start solver or worker processes of their own


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto` (pyproject.toml): a worker per core, at most MAX_WORKERS."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))

# Compiled programs go to a cache of this run's own, never the user's (~/.cache/ptxsmt),
# and start cold: every test sees the code generator, and tests/test_cache.py the cache.
if "PTXSMT_CACHE_DIR" not in os.environ:
    os.environ["PTXSMT_CACHE_DIR"] = tempfile.mkdtemp(prefix="ptxsmt-test-cache-")
    atexit.register(shutil.rmtree, os.environ["PTXSMT_CACHE_DIR"], ignore_errors=True)

# Python's bytecode likewise: where the environment turns it off (PYTHONDONTWRITEBYTECODE),
# every worker and every command a test starts would compile each module again; this
# run's bytecode goes to a directory of its own (never into the tree), which they share.
# Where it is on, the usual __pycache__ serves the next run too (pytest's rewritten tests
# among it): collecting then compiles nothing.
if sys.dont_write_bytecode and "PYTHONPYCACHEPREFIX" not in os.environ:
    os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix = \
        tempfile.mkdtemp(prefix="ptxsmt-test-bytecode-")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    atexit.register(shutil.rmtree, os.environ["PYTHONPYCACHEPREFIX"], ignore_errors=True)


@pytest.fixture(autouse=True)
def _cache_switch_per_test(monkeypatch):
    """`--no-cache` through CliRunner turns the cache off for the whole process
    (`batch.cache.enable`, as a command line does for its one run): each test starts with
    it as the environment set it, so that one test's `--no-cache` does not switch off the
    verdict cache a later test in the same worker relies on."""
    from ptxsmt.batch import cache

    monkeypatch.setattr(cache, "_ENABLED", cache._ENABLED)
