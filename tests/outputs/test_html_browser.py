"""The demo's HTML report in a real browser: headless Chromium, no console errors, charts laid out.

Needs a Chromium binary (Debian: ``apt-get install -y chromium``; or set ``POLFAIR_CHROMIUM``); the
tests skip, saying so, where none is found. A probe copy of the page gets two extra scripts (the
report's own file is unchanged): one at the top that records errors and ``console.error`` calls,
one at the end that measures every chart's bounding box, the page's size, and clicks a sortable
column; its JSON is read back with ``--dump-dom``. Screenshots at 1280 px and 390 px (phone width)
are written to the test's temporary folder (set ``POLFAIR_SCREENSHOTS=<dir>`` to keep them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("matplotlib")


def _chromium() -> str | None:
    env = os.environ.get("POLFAIR_CHROMIUM")
    if env:
        return env
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary found (install Debian's 'chromium' package or set POLFAIR_CHROMIUM)",
)

PROBE_HEAD = """<script>
window.__pfErrors = [];
window.addEventListener("error", function (e) { window.__pfErrors.push("error: " + e.message); });
(function () {
  var orig = console.error;
  console.error = function () {
    window.__pfErrors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    orig.apply(console, arguments);
  };
})();
</script>"""

PROBE_TAIL = """<script>
(function () {
  var charts = Array.prototype.map.call(document.querySelectorAll("svg.pf-chart"), function (s) {
    var r = s.getBoundingClientRect(); return {id: s.id, w: r.width, h: r.height}; });
  var table = document.querySelector("table.pf-sortable"), order = null, buttons = 0;
  if (table) {
    buttons = table.querySelectorAll("button.pf-sort").length;
    var th = table.tHead.rows[0].cells[1];              // the "n" column
    var b = th.querySelector("button"); if (b) { b.click(); b.click(); }   // twice: descending
    order = Array.prototype.map.call(table.tBodies[0].rows, function (r) {
      return parseFloat(r.cells[1].getAttribute("data-v")); });
  }
  var out = {charts: charts, errors: window.__pfErrors || [], innerWidth: window.innerWidth,
             scrollWidth: document.documentElement.scrollWidth, scrollHeight: document.documentElement.scrollHeight,
             sortButtons: buttons, sortedN: order};
  var pre = document.createElement("pre"); pre.id = "pf-probe"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
  if (window.parent !== window) { window.parent.postMessage(JSON.stringify(out), "*"); }
})();
</script>"""

#: headless Chromium windows are at least 500 px wide: a phone-width viewport is an iframe of that width
PHONE_WRAPPER = """<!DOCTYPE html><html><head><meta charset="utf-8">
<style>body{margin:0}iframe{border:0;display:block}</style></head>
<body><iframe src="SRC" width="WIDTH" height="HEIGHT" title="phone"></iframe><pre id="pf-probe"></pre>
<script>
window.addEventListener("message", function (e) { document.getElementById("pf-probe").textContent = e.data; });
</script>
</body></html>"""


def _run(args: list[str], profile: Path, timeout: int = 90) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    cmd = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--hide-scrollbars", "--enable-logging=stderr", "--v=0",
        f"--user-data-dir={profile}", *args,
    ]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def _console_errors(stderr: str) -> list[str]:
    # Chromium logs page console messages as 'INFO:CONSOLE(line)] "message", source: ...'
    return [ln for ln in stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or "rror" in ln)]


@pytest.fixture(scope="module")
def demo_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from polfair.cli import main

    folder = Path(os.environ.get("POLFAIR_SCREENSHOTS") or tmp_path_factory.mktemp("browser"))
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / "compas.html"
    assert main(["demo", "--html", str(page)]) == 0
    return page


def _phone(page: Path, width: int, height: int) -> Path:
    """A page showing ``page`` in a ``width`` px wide iframe (a phone's viewport)."""
    wrapper = page.with_name(f"{page.stem}-phone-{width}.html")
    wrapper.write_text(PHONE_WRAPPER.replace("SRC", page.name).replace("WIDTH", str(width))
                       .replace("HEIGHT", str(height)), encoding="utf-8")  # fmt: skip
    return wrapper


def _probe(page: Path, width: int, height: int, tmp: Path) -> tuple[dict[str, Any], str]:
    html = page.read_text(encoding="utf-8")
    probe = tmp / f"probe-{width}.html"
    probe.write_text(html.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_TAIL + "</body>", 1),
                     encoding="utf-8")  # fmt: skip
    target, window = (probe, width) if width >= 500 else (_phone(probe, width, height), 500)
    res = _run([f"--window-size={window},{height}", "--virtual-time-budget=5000", "--dump-dom", target.as_uri()],
               tmp / f"profile-{width}")  # fmt: skip
    m = re.search(r'<pre id="pf-probe">(.*?)</pre>', res.stdout, flags=re.DOTALL)
    assert m, f"no probe output; chromium rc={res.returncode}, stderr tail: {res.stderr[-2000:]}"
    text = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(text), res.stderr


def test_demo_page_renders_without_errors_at_desktop_width(demo_page: Path, tmp_path: Path) -> None:
    html = demo_page.read_text(encoding="utf-8")
    n_charts = html.count('class="pf-chart"')
    assert n_charts >= 24
    assert demo_page.stat().st_size < 2_000_000
    probe, stderr = _probe(demo_page, 1280, 900, tmp_path)
    assert probe["errors"] == [] and _console_errors(stderr) == []
    assert len(probe["charts"]) == n_charts
    for c in probe["charts"]:
        assert c["w"] > 100 and c["h"] > 40, c  # laid out with a real size
    assert probe["scrollWidth"] <= probe["innerWidth"] + 1  # no horizontal page scroll at 1280 px
    assert probe["scrollHeight"] > 3000
    # the inline script ran: sort buttons in every header, and a click sorted by n (descending)
    assert probe["sortButtons"] > 5
    assert probe["sortedN"] == sorted(probe["sortedN"], reverse=True)


def test_demo_page_fits_a_phone_width(demo_page: Path, tmp_path: Path) -> None:
    probe, stderr = _probe(demo_page, 390, 800, tmp_path)
    assert probe["errors"] == [] and _console_errors(stderr) == []
    assert probe["innerWidth"] == 390
    # wide tables and charts scroll inside their own boxes; the page itself does not scroll sideways
    assert probe["scrollWidth"] <= probe["innerWidth"] + 1, probe["scrollWidth"]
    assert all(c["w"] > 100 and c["h"] > 40 for c in probe["charts"])


def _shot(target: Path, shot: Path, width: int, height: int, *extra: str) -> subprocess.CompletedProcess[str]:
    res = _run([*extra, f"--window-size={width},{height}", f"--screenshot={shot}", target.as_uri()],
               shot.with_suffix(".profile"))  # fmt: skip
    assert shot.exists(), res.stderr[-2000:]
    return res


def test_screenshots(demo_page: Path) -> None:
    folder = demo_page.parent
    desktop = _shot(demo_page, folder / "desktop.png", 1280, 2400)
    assert _png_size(folder / "desktop.png") == (1280, 2400)
    phone = _shot(_phone(demo_page, 390, 2400), folder / "phone.png", 500, 2400)
    assert _png_size(folder / "phone.png") == (500, 2400)  # the left 390 px are the phone's viewport
    for res, name in ((desktop, "desktop.png"), (phone, "phone.png")):
        assert (folder / name).stat().st_size > 20_000  # not a blank page
        assert _console_errors(res.stderr) == []


def test_page_without_scripting_looks_the_same(demo_page: Path) -> None:
    """Scripting only adds sort buttons that look like the headings: the rendering is the same."""
    image = pytest.importorskip("PIL.Image")
    chops = pytest.importorskip("PIL.ImageChops")
    folder = demo_page.parent
    _shot(demo_page, folder / "js.png", 1280, 3000)
    # scripting off = a Content-Security-Policy that forbids every script (Chromium's headless
    # screenshot and --dump-dom need scripting enabled at the browser level)
    nojs = folder / "compas-nojs.html"
    nojs.write_text(demo_page.read_text(encoding="utf-8").replace(
        "<head>", "<head><meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">", 1),
        encoding="utf-8")  # fmt: skip
    dom = _run(["--window-size=1280,900", "--dump-dom", nojs.as_uri()], folder / "nojs.profile").stdout
    assert 'class="pf-sort"' not in dom and dom.count('class="pf-sortable"') == 7  # the script did not run
    assert dom.count('class="pf-chart"') == demo_page.read_text(encoding="utf-8").count('class="pf-chart"')
    _shot(nojs, folder / "nojs.png", 1280, 3000)
    a = image.open(folder / "js.png").convert("L")
    b = image.open(folder / "nojs.png").convert("L")
    assert a.size == b.size
    diff = chops.difference(a, b).point(lambda v: 255 if v > 32 else 0).histogram()[255]
    assert b.getextrema()[0] < 100  # dark text is drawn
    assert diff / (a.size[0] * a.size[1]) < 0.01, diff
