#!/usr/bin/env python3
"""Load a trace file in speedscope (its release files, run locally in
headless Chromium) and say what it shows, for t511.

    speedscope_check.py SPEEDSCOPE_RELEASE_DIR TRACE.json...

Serves the release directory and the traces from a local http.server (the
page's #profileURL= fetches over http only); for each trace, opens
index.html#profileURL=/N.json in one browser, waits until the profile is
drawn or an error is shown (at most 60 s), then opens the profile list
(the toolbar's title) and prints one JSON line:
    {"ok": true when drawn without an error, "error": the page's error text
     or an alert's, "title": the toolbar's title, "profiles": the names in
     the profile list, "console_errors": [...], "load_ms": ...}
"""
import functools
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from html_drive import Browser  # noqa: E402

STATE_JS = r"""(() => {
  const text = document.body ? document.body.innerText : '';
  if (window.__alerts && window.__alerts.length)
    return {state: 'error', error: 'alert: ' + window.__alerts.join('; ')};
  if (text.includes('Something went wrong'))
    return {state: 'error', error: text.slice(0, 300)};
  if (text.includes('Time Order') && /\(pid \d+/.test(text))
    return {state: 'drawn'};
  return {state: 'loading'};
})()"""

# The toolbar's middle: the profile's name, and "(1/N)" when there are
# several; a click on it opens the list of all profiles.
TITLE_JS = r"""(() => {
  const cands = [...document.querySelectorAll('div, span')].filter(e =>
    e.children.length <= 3 && /\(pid \d+/.test(e.textContent) && e.textContent.length < 300);
  cands.sort((a, b) => a.textContent.length - b.textContent.length);
  const e = cands[0];
  if (!e) return null;
  const r = e.getBoundingClientRect();
  return {text: e.textContent, x: r.x + r.width / 2, y: r.y + r.height / 2};
})()"""

PROFILES_JS = r"""(() => {
  const seen = new Set();
  for (const e of document.querySelectorAll('div, span, li'))
    if (e.children.length === 0 && /\(pid \d+/.test(e.textContent))
      seen.add(e.textContent.trim());
  return [...seen];
})()"""


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=root)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def load(b, port, n):
    """Open trace n in speedscope; what it shows."""
    out = {"ok": False, "error": None, "title": None, "profiles": []}
    # a query of its own: a new document, not a same-page hash change
    url = "http://127.0.0.1:%d/speedscope/index.html?%d#profileURL=/%d.json" % (port, n, n)
    start = time.monotonic()
    b.events = []
    b.send("Page.navigate", {"url": url})
    st = {"state": "loading"}
    while time.monotonic() - start < 60:
        st = b.evaluate(STATE_JS) or st
        if st["state"] != "loading":
            break
        time.sleep(0.1)
    out["load_ms"] = round((time.monotonic() - start) * 1000)
    if st["state"] == "drawn":
        out["ok"] = True
        b.evaluate("new Promise(r => setTimeout(r, 300))")
        if os.environ.get("SPEEDSCOPE_SHOT"):
            import base64
            png = b.send("Page.captureScreenshot", {"format": "png"})["data"]
            with open("%s.%d.png" % (os.environ["SPEEDSCOPE_SHOT"], n), "wb") as f:
                f.write(base64.b64decode(png))
        title = b.evaluate(TITLE_JS)
        if title:
            out["title"] = title["text"]
            for t in ("mouseMoved", "mousePressed", "mouseReleased"):
                b.send("Input.dispatchMouseEvent", {"type": t, "x": title["x"], "y": title["y"],
                                                    "button": "left", "clickCount": 1})
            b.evaluate("new Promise(r => setTimeout(r, 300))")
            out["profiles"] = b.evaluate(PROFILES_JS)
    else:
        out["error"] = st.get("error") or "not drawn in 60 s"
    b.evaluate("new Promise(r => setTimeout(r, 100))")
    out["console_errors"] = b.console_errors()
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    release = os.path.abspath(sys.argv[1])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("speedscope_check.py: chromium not found")
    root = tempfile.mkdtemp(prefix="sc-speedscope.")
    os.symlink(release, os.path.join(root, "speedscope"))
    for n, trace in enumerate(sys.argv[2:]):
        shutil.copyfile(trace, os.path.join(root, "%d.json" % n))
    srv = serve(root)
    b = Browser(chromium)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
        att = b.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                     session=False)
        b.session = att["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            b.send(domain + ".enable")
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        # an alert would block the page: record it instead
        b.send("Page.addScriptToEvaluateOnNewDocument",
               {"source": "window.__alerts = []; window.alert = m => window.__alerts.push(String(m));"})
        for n in range(len(sys.argv) - 2):
            print(json.dumps(load(b, srv.server_address[1], n)), flush=True)
    finally:
        b.close()
        srv.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
