"""`ptxsmt serve` in a real browser: headless Chromium (the Debian package) pastes a real
miscompile into the form, runs it, reads the counterexample table and follows the
permalink. The `browser` tier: skipped where Chromium is not installed, deselected with
`-m "not browser"`. PTXSMT_SCREENSHOT=docs/serve.png also saves the page of LLVM 14's
rotate miscompile as the docs show it."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from chromium import EXE, Chromium
from test_serve import MISCOMPILE, hang
from werkzeug.serving import make_server

from ptxsmt.serve.app import EXAMPLES, create_app
from ptxsmt.serve.request import parse

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(EXE is None, reason="chromium is not installed")]


@pytest.fixture
def server(tmp_path):
    app = create_app(tmp_path / "links.sqlite", workers=2)
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield app, f"http://127.0.0.1:{httpd.server_port}"
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
    server = server[1]
    lhs, rhs = EXAMPLES["setp"]
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
    link = browser.evaluate("document.getElementById('permalink').href")
    assert link.startswith(f"{server}/r/")
    browser.open("about:blank")
    browser.open(link)  # what someone the link was sent to sees
    assert browser.wait_for("document.getElementById('verdict')?.textContent") == "different"
    assert browser.evaluate(TABLE % "outputs") == [p]


def test_the_rotate_miscompile_example_and_a_screenshot(server, browser):
    """LLVM 14's 64-bit rotate: the amount's low 6 bits are not masked (PTX's shifts clamp
    at 64, so an amount of 64 or more gives 0 where a rotate gives the value back)."""
    browser.open(f"{server[1]}/")
    browser.evaluate("document.getElementById('rotl64').click()")
    browser.wait_for("document.getElementById('lhs')?.value.includes('rotl64_var')")
    browser.evaluate("document.getElementById('run').click()")
    assert browser.wait_for("document.getElementById('verdict')?.textContent") == "different"
    inputs = {row[0]: int(row[2], 16) for row in browser.evaluate(TABLE % "inputs")}
    value, amount = inputs["rotl64_var_param_0"], inputs["rotl64_var_param_1"] & 0xFFFFFFFF
    k = amount % 64  # plain Python: the rotate both sides should compute
    rotated = ((value << k) | (value >> (64 - k))) & (1 << 64) - 1 if k else value
    (ret,) = browser.evaluate(TABLE % "outputs")
    assert int(ret[2].split()[0], 16) == rotated != int(ret[3].split()[0], 16)
    shot = browser.screenshot()
    assert shot[:8] == b"\x89PNG\r\n\x1a\n"
    if target := os.environ.get("PTXSMT_SCREENSHOT"):
        Path(target).write_bytes(shot)


def test_a_long_proof_shows_progress_and_can_be_cancelled(server, browser, tmp_path):
    """A worker that runs until cancelled stands for a long proof (how long a real one
    takes depends on the machine)."""
    app, url = server
    key = app.extensions["ptxsmt"]["store"].add(parse(MISCOMPILE, 60))
    app.extensions["ptxsmt"]["pool"].submit(key, hang, (str(tmp_path / "pid"),), 3600)
    browser.open(f"{url}/r/{key}")
    assert "Proving" in browser.wait_for("document.getElementById('progress')?.innerText")
    browser.evaluate("document.getElementById('cancel').click()")
    assert browser.wait_for("document.getElementById('error')?.innerText").startswith(
        "cancelled")
