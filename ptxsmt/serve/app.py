"""The web pages: a form for two inputs, and a page per request at /r/KEY (its permalink)
that shows the proof's progress, with a button to cancel it, then the verdict.

A visit to /r/KEY serves what the store holds where it may be served (a "different" only
once a worker has replayed it), and otherwise decides the request in the worker pool.
Every input is bounded (the body, each side, the options); every error is one line on
the page or in the JSON, with a status code; nothing reaches the visitor as a traceback."""

from __future__ import annotations

import json
import shlex
import urllib.parse
from dataclasses import replace
from pathlib import Path

from flask import Flask, abort, jsonify, redirect, render_template, request, url_for
from werkzeug.exceptions import HTTPException
from werkzeug.routing import BaseConverter

from ..isa.errors import quote
from ..smt.solving.budget import wall_cap
from .jobs import ACTIVE, Busy, Job, Pool
from .request import FILES, MAX_SIDE, BadRequest, Request, parse
from .store import Store
from .work import prove

MAX_BODY = 2 * MAX_SIDE + 64 * 1024
MAX_FIELDS = 32
REPLAY_LIMIT = 30.0  # seconds for a worker to replay a stored "different"
MARGIN = 10.0  # seconds past a decision's own stop (pairs.decide_pair) for a worker's start
KEY = "[0-9a-f]{64}"
PASSED = {"equivalent", "bounded", "refines"}
EXAMPLES = {  # the form's examples: (first, second)
    # the classic wrong fold of !(a < b) into a >= b (false where a or b is NaN)
    "setp": ("setp.lt.f32 p, a, b;\nnot.pred p, p;", "setp.ge.f32 p, a, b;"),
    # LLVM 14's miscompile of a 64-bit rotate by a variable amount (docs/function-corpus.md),
    # against LLVM 22's correct code
    "rotl64": tuple((Path(__file__).parent / "examples" / f"rotl64.{v}.ptx").read_text()
                    for v in ("llvm22", "llvm14")),
}


def create_app(db: Path, workers: int = 2, queue: int = 8, memory: int = 2 << 30,
               max_timeout: float = 60.0) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.url_map.converters["regex"] = Regex
    store, pool = Store(db), Pool(workers, queue, memory)
    notes: dict[str, str] = {}  # key -> why a stored verdict was not served
    kept: set[str] = set()  # keys whose finished job's verdict is in the store
    app.extensions["ptxsmt"] = {"store": store, "pool": pool}

    def start(key: str, req: Request, stored: dict | None = None) -> Job:
        # a request stored by `equiv --link` may ask for more time than this server gives
        timeout = min(req.options["timeout"], max_timeout)
        req = replace(req, options={**req.options, "timeout": timeout})
        limit = REPLAY_LIMIT if stored else wall_cap() * timeout + MARGIN
        return pool.submit(key, prove, (req.to_json(), stored), limit)

    def state(key: str) -> tuple[Request, dict]:
        """The request under `key` and where it stands, starting a worker if needed."""
        req, problem = store.request(key)
        if req is None:
            abort(404 if not problem else 409, problem or "no result under this link")
        job = pool.get(key)
        if job is not None and job.state == "done" and "stale" in job.outcome:
            notes[key] = f"the stored verdict was not served: {job.outcome['stale']}"
            store.drop_verdict(key)
            pool.forget(key)
            job = None
        if job is None:
            entry, problem = store.verdict(key, req)
            if problem:
                notes[key] = f"the stored verdict was not served: {problem}"
                store.drop_verdict(key)
            if entry is not None and entry.verdict != "different":
                return req, {"state": "done", "result": entry.result, "shown": None,
                             "stored": True}
            stored = {"result": entry.result, "replay": entry.replay} if entry else None
            kept.discard(key)
            job = start(key, req, stored)
        if job.state in ACTIVE:
            return req, {"state": job.state, "elapsed": round(job.elapsed(), 1),
                         "limit": job.limit}
        if job.state != "done":
            return req, {"state": job.state, "error": job.error}
        if not job.outcome["stored"] and key not in kept:
            store.put_verdict(key, req, job.outcome["result"], job.outcome["replay"])
            kept.add(key)
        return req, {"state": "done", **{k: job.outcome[k] for k in ("result", "shown",
                                                                      "stored")}}

    @app.get("/")
    def index():
        lhs, rhs = EXAMPLES.get(request.args.get("example", ""), ("", ""))
        return render_template("index.html", lhs=lhs, rhs=rhs, max_timeout=max_timeout,
                               max_side=MAX_SIDE)

    @app.post("/run")
    def run():
        as_json = request.mimetype == "application/json"
        try:
            req = parse(_fields(as_json), max_timeout)
        except BadRequest as e:
            return _error(400, str(e), as_json)
        key = store.add(req)
        try:
            state(key)  # starts its worker now
        except Busy as e:
            return _error(503, str(e), as_json)
        if as_json:
            return jsonify(key=key, url=url_for("result", key=key, _external=True))
        return redirect(url_for("result", key=key), 303)

    @app.get(f"/r/<regex('{KEY}'):key>")
    def result(key: str):
        req, now = _state_or_busy(key)
        return render_template("result.html", key=key, req=req, now=now,
                               note=notes.get(key, ""), files=FILES.get(req.kind),
                               command=command(req), passed=PASSED,
                               json=json.dumps(now.get("result"), indent=2))

    @app.get(f"/api/r/<regex('{KEY}'):key>")
    def result_json(key: str):
        req, now = _state_or_busy(key)
        return jsonify(key=key, request=json.loads(req.to_json()), note=notes.get(key, ""),
                       **now)

    @app.get(f"/r/<regex('{KEY}'):key>/<regex('[ab]'):side>")
    def source(key: str, side: str):
        req, problem = store.request(key)
        if req is None:
            abort(404, problem or "no result under this link")
        return req.lhs if side == "a" else req.rhs, {"Content-Type": "text/plain; charset=utf-8"}

    @app.post(f"/r/<regex('{KEY}'):key>/cancel")
    def cancel(key: str):
        pool.cancel(key)
        return redirect(url_for("result", key=key), 303)

    @app.post(f"/r/<regex('{KEY}'):key>/run")
    def again(key: str):
        pool.forget(key)
        kept.discard(key)
        return redirect(url_for("result", key=key), 303)

    def _state_or_busy(key: str):
        try:
            return state(key)
        except Busy as e:
            abort(503, str(e))

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException):
        message = e.description if e.code != 413 else \
            f"the request is larger than this server takes ({MAX_BODY:,} bytes)"
        return _error(e.code or 500, message, request.path.startswith("/api/")
                      or request.mimetype == "application/json")

    @app.errorhandler(Exception)
    def bug(e: Exception):
        app.logger.exception("ptxsmt serve: an unexpected error")  # the log has it, the page not
        return _error(500, f"ptxsmt bug, please report: {type(e).__name__}: {e}",
                      request.path.startswith("/api/"))

    return app


class Regex(BaseConverter):
    """A path part matching a pattern: `<regex('[ab]'):side>`."""

    def __init__(self, url_map, pattern: str):
        super().__init__(url_map)
        self.regex = pattern


def _fields(as_json: bool) -> dict:
    """The body's fields: a JSON object, or a form (application/x-www-form-urlencoded),
    strictly UTF-8; BadRequest naming what is wrong."""
    body = request.get_data(cache=False)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest(f"the request is not UTF-8 text (byte 0x{body[e.start]:02x} at "
                         f"offset {e.start})") from None
    if as_json:
        try:
            fields = json.loads(text)
        except json.JSONDecodeError as e:
            raise BadRequest(f"not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
        if not isinstance(fields, dict):
            raise BadRequest("not a JSON object")
        return fields
    if request.mimetype not in ("application/x-www-form-urlencoded", ""):
        raise BadRequest(f"a form (application/x-www-form-urlencoded) or JSON, not "
                         f"{quote(request.mimetype)}")
    try:
        items = urllib.parse.parse_qsl(text, keep_blank_values=True, errors="strict",
                                       max_num_fields=MAX_FIELDS)
    except UnicodeDecodeError as e:
        raise BadRequest(f"a field is not UTF-8 text ({e.reason})") from None
    except ValueError:
        raise BadRequest(f"more than {MAX_FIELDS} fields") from None
    fields = dict(items)
    if len(fields) != len(items):
        raise BadRequest("a field is given twice")
    return fields


def _error(code: int, message: str, as_json: bool):
    message = message if len(message) <= 400 else message[:250] + " … " + message[-100:]
    if as_json:
        return jsonify(error=message), code
    return render_template("error.html", code=code, message=message), code


def command(req: Request) -> str:
    """The `ptxsmt equiv` command line that decides the same request (the inputs saved
    under the names the page's links give them)."""
    o = req.options
    if req.kind == "snippets":
        args = [" ".join(req.lhs.split()), " ".join(req.rhs.split())]
        if "outputs" in o:
            args += ["--outputs", ",".join(o["outputs"])]
    else:
        args = list(FILES[req.kind])
        args += [f"--function={req.function}"] if req.function else []
        args += [f"--function-b={req.function_b}"] if req.function_b else []
    if req.kind != "ir":
        args += [f"--target={o['target']}", f"--vset-merge={o['vset_merge']}",
                 f"--solver={o['solver']}"]
        args += [f"--unroll={o['unroll']}"] if o.get("unroll") else []
    args += [f"--timeout={o['timeout']:g}", f"--nan={o['nan']}"]
    return "ptxsmt equiv " + " ".join(shlex.quote(a) for a in args)
