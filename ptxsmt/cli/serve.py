"""`ptxsmt serve`: the web pages of ptxsmt.serve on this machine."""

from __future__ import annotations

import socket
import sqlite3

import click

from .. import report
from ..isa.errors import quote
from . import interrupts
from .common import CONTEXT, Finite, Size, fail, interrupted

DEFAULT_PORT = 8000


@click.command("serve", context_settings=CONTEXT)
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (0.0.0.0: every interface; put a proxy with TLS "
                   "in front first).")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True)
@click.option("--db", type=click.Path(dir_okay=False), metavar="FILE",
              help="SQLite file of the permalinks [default: $PTXSMT_SERVE_DB, else "
                   "~/.local/share/ptxsmt/links.sqlite].")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Proofs run at once, each in a process of its own.")
@click.option("--queue", type=click.IntRange(0, 1000), default=8, show_default=True,
              help="Requests that may wait for a worker; past them, 503 'busy'.")
@click.option("--max-timeout", type=Finite(0, 3600, min_open=True), default=60.0,
              show_default=True, help="The longest solver timeout a visitor may ask for (s).")
@click.option("--memory", type=Size(), default="2G", show_default=True,
              help="Address space a worker process may take.")
def serve(host, port, db, workers, queue, max_timeout, memory) -> None:
    """Serve ptxsmt's verdicts as web pages: paste two PTX snippets or functions, or
    IR and PTX, and get the verdict, the counterexample as a table, the `ptxsmt eval`
    lines that replay it, and a permalink (/r/KEY) that shows it again (docs/serve.md).

    \b
    Examples:
      ptxsmt serve
      ptxsmt serve --port 8080 --db links.sqlite --workers 4
    """
    from werkzeug.serving import make_server

    from ..serve.app import create_app
    from ..serve.store import default_path

    try:  # bound here: werkzeug would print its own message and exit 1
        listening = socket.create_server(
            (host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except (OSError, OverflowError) as e:
        fail(f"cannot serve on {quote(f'{host}:{port}')}: {getattr(e, 'strerror', None) or e}")
    try:
        app = create_app(db or default_path(), workers, queue, memory, max_timeout)
    except (OSError, sqlite3.Error) as e:
        fail(f"cannot use {quote(str(db or default_path()))}: {getattr(e, 'strerror', None) or e}")
    server = make_server(host, port, app, threaded=True, fd=listening.fileno())
    report.err(f"ptxsmt serve: http://{host}:{listening.getsockname()[1]}/ (Ctrl-C stops it)")
    interrupts.stop_on_terminate()
    try:
        server.serve_forever()  # werkzeug's returns on Ctrl-C (or SIGTERM), the only way out
    finally:
        app.extensions["ptxsmt"]["pool"].close()  # each worker's proof is stopped
    interrupted()
