"""`ptxsmt serve` in a real browser: headless Chromium (the Debian package) pastes a real
miscompile into the form, runs it, reads the counterexample table and follows the
permalink. The `browser` tier: skipped where Chromium is not installed, deselected with
`-m "not browser"`. PTXSMT_SCREENSHOT=docs/serve.png also saves the page as the docs show it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from chromium import EXE, Chromium
from werkzeug.serving import make_server

from ptxsmt.serve.app import EXAMPLES, create_app

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(EXE is None, reason="chromium is not installed")]


@pytest.fixture
def server(tmp_path):
    app = create_app(tmp_path / "links.sqlite", workers=2)
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    app.extensions["ptxsmt"]["pool"].close()


@pytest.fixture
def browser():
    chromium = Chromium()
    yield chromium
    chromium.close()


TABLE = """[...document.querySelectorAll('#%s tr')].slice(1)
           .map(tr => [...tr.cells].map(td => td.innerText.trim()))"""


def test_paste_run_read_the_table_and_follow_the_permalink(server, browser):
    lhs, rhs = EXAMPLES["snippets"]
    browser.open(f"{server}/")
    browser.evaluate(f"""document.getElementById('lhs').value = {json.dumps(lhs)};
                         document.getElementById('rhs').value = {json.dumps(rhs)};
                         document.getElementById('run').click()""")
    assert browser.wait_for("document.getElementById('verdict')?.textContent") == "different"
    inputs = {row[0]: row for row in browser.evaluate(TABLE % "inputs")}
    assert "NaN" in (inputs["a"][4], inputs["b"][4])
    (p,) = browser.evaluate(TABLE % "outputs")
    assert p[0].startswith("p") and {p[2], p[3]} == {"true", "false"}
    assert browser.evaluate("document.querySelectorAll('#outputs .bits span.x').length") == 2
    replay = browser.evaluate("document.getElementById('reproduce').innerText")
    assert replay.count("ptxsmt eval") == 2
    if target := os.environ.get("PTXSMT_SCREENSHOT"):
        Path(target).write_bytes(browser.screenshot())
    link = browser.evaluate("document.getElementById('permalink').href")
    assert link.startswith(f"{server}/r/")
    browser.open("about:blank")
    browser.open(link)  # what someone the link was sent to sees
    assert browser.wait_for("document.getElementById('verdict')?.textContent") == "different"
    assert browser.evaluate(TABLE % "outputs") == [p]
    assert browser.screenshot()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_long_proof_shows_progress_and_can_be_cancelled(server, browser):
    browser.open(f"{server}/")
    browser.evaluate("""document.getElementById('lhs').value =
                          'div.u64 q, a, b; mul.lo.u64 m, q, b; sub.u64 r, a, m;';
                        document.getElementById('rhs').value = 'rem.u64 r, a, b;';
                        document.querySelector('input[name=timeout]').value = '60';
                        document.getElementById('run').click()""")
    assert "Proving" in browser.wait_for("document.getElementById('progress')?.innerText")
    browser.evaluate("document.getElementById('cancel').click()")
    assert browser.wait_for("document.getElementById('error')?.innerText").startswith(
        "cancelled")
