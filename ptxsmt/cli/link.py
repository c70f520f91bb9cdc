"""`equiv --link`: the request kept where `ptxsmt serve` finds it, and its permalink
printed after the verdict (the server proves it afresh when the link is first opened)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import click

from .. import report
from ..isa.errors import PtxError
from ..isa.source import read_text
from .common import fail, given, refuse

DEFAULT_URL = "http://127.0.0.1:8000"
SHOWN = (0, 1, 3)  # the exit codes of a verdict: a link to bad input helps nobody


def link_option(command):
    """Add --link to `equiv`: after a verdict, one line `link: URL` (on stderr with
    --json, whose stdout is one JSON document)."""

    @click.option("--link", is_flag=True,
                  help="Also keep the pair for `ptxsmt serve` and print its permalink "
                       f"($PTXSMT_SERVE_URL, default {DEFAULT_URL}; docs/serve.md).")
    @functools.wraps(command)
    def with_link(*args, link: bool, **kwargs):
        if not link:
            return command(*args, **kwargs)
        refuse(given("batch", "lhs_file", "rhs_file", "certify", "no_sweep"),
               "with --link (give both inputs as arguments)")
        url = permalink(kwargs)
        try:
            return command(*args, **kwargs)
        except SystemExit as e:
            if e.code in SHOWN:
                (report.err if kwargs["as_json"] else report.out)(f"link: {url}")
            raise
    return with_link


def permalink(args: dict) -> str:
    """Store the request `equiv`'s arguments make; its URL."""
    from ..serve.request import BadRequest, parse
    from ..serve.store import Store, default_path

    lhs, rhs = args["lhs"], args["rhs"]
    kind = "ir" if lhs and lhs.endswith(".ll") else \
        "functions" if lhs and lhs.endswith(".ptx") and Path(lhs).is_file() else "snippets"
    fields = {"kind": kind, "timeout": args["timeout"], "nan": args["nan"]}
    if kind != "ir":
        fields.update(target=args["target"], vset_merge=args["vset_merge"],
                      solver=args["solver"], unroll=args["unroll"])
    if kind == "snippets":
        fields.update(lhs=lhs, rhs=rhs, outputs=args["outputs"])
    else:
        try:
            fields.update(lhs=read_text(lhs), rhs=read_text(rhs), function=args["function"],
                          function_b=args["function_b"])
        except (PtxError, TypeError) as e:
            fail(str(e) if isinstance(e, PtxError) else "give two inputs")
    try:
        key = Store(default_path()).add(parse(fields, float("inf")))
    except BadRequest as e:
        fail(f"--link: {e}")
    except OSError as e:
        fail(f"--link: cannot keep the pair in {default_path()}: {e.strerror or e}")
    return f"{os.environ.get('PTXSMT_SERVE_URL', DEFAULT_URL).rstrip('/')}/r/{key}"
