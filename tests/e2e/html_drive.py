#!/usr/bin/env python3
"""Drive a page in headless Chromium over the DevTools protocol (no
websocket: --remote-debugging-pipe, JSON messages ended by NUL on fds 3/4),
for the HTML report's end-to-end test.

    html_drive.py PAGE.html STEP...

Opens PAGE in a 1280x900 window, waits until <body data-state> leaves
"loading" (at most 60 s), then runs the steps in order, printing one JSON
line per step:
    eval:EXPR     the value of the JavaScript expression (promises awaited)
    click:EXPR    EXPR gives {x, y}; a real left click there (mouse events)
    press:CSS     scroll the element CSS selects into view and click its middle
    type:TEXT     insert TEXT into the focused element, as typing does
    move:EXPR     EXPR gives {x, y}; the mouse moves there (no button)
    wheel:EXPR    EXPR gives {x, y, dy[, dx]}; a mouse wheel turn there
    drag:EXPR     EXPR gives {x, y, x2, y2}; left button pressed at (x, y),
                  moved in 5 steps to (x2, y2), released there
    key:KEY       a key pressed and released on the focused element
                  (KEY a DOM key name: "ArrowLeft", "+", "0")
    wait:EXPR     poll until EXPR is truthy (at most 20 s)
    shot:FILE     PNG screenshot of the window
    size:WxH      resize the window
    open:PAGE     the console errors line of the page open, then PAGE is
                  opened in its place (one browser for several pages)
A page's first line is {"load_ms": wall time from navigation to ready,
"state": ..., "page": its file name}; its last {"console_errors": [...]}:
exceptions, console.error/assert and browser log errors seen while it was
open.
"""
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time


class Browser:
    def __init__(self, chromium):
        r1, w1 = os.pipe()   # commands: we write w1, chromium reads fd 3
        r2, w2 = os.pipe()   # replies: chromium writes fd 4, we read r2
        # Park the child's ends above the stdio range so dup2 onto 3/4 works.
        cr = fcntl.fcntl(r1, fcntl.F_DUPFD_CLOEXEC, 10)
        cw = fcntl.fcntl(w2, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(r1)
        os.close(w2)

        def child_fds():
            os.dup2(cr, 3)
            os.dup2(cw, 4)

        self.profile = tempfile.mkdtemp(prefix="sc-chromium.")
        args = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--disable-extensions",
                "--mute-audio", "--hide-scrollbars", "--window-size=1280,900",
                "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
                "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     close_fds=False, preexec_fn=child_fds)
        os.close(cr)
        os.close(cw)
        self.wfd, self.rfd = w1, r2
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self.rfd], [], [], left)
            if ready:
                chunk = os.read(self.rfd, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.wfd, data):]
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def evaluate(self, expr, timeout=60):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError("evaluating %r: %s" % (expr, d.get("exception", {}).get("description", d.get("text"))))
        return r.get("result", {}).get("value")

    def console_errors(self):
        errors = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errors.append(d.get("exception", {}).get("description") or d.get("text"))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errors.append(p["entry"].get("text"))
        return errors

    def close(self):
        try:
            self.send("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def open_page(b, page):
    """Navigate to page, wait until it is no longer loading, print the load line."""
    start = time.monotonic()
    b.send("Page.navigate", {"url": "file://" + page})
    state = None
    while time.monotonic() - start < 60:
        state = b.evaluate("document.body ? document.body.dataset.state || '' : ''")
        if state and state != "loading":
            break
        time.sleep(0.02)
    print(json.dumps({"load_ms": round((time.monotonic() - start) * 1000), "state": state,
                      "page": os.path.basename(page)}), flush=True)


def end_page(b):
    """The console errors of the page open (pending events, late exceptions,
    given time to arrive), forgotten after."""
    b.evaluate("new Promise(r => setTimeout(r, 100))")
    out = {"console_errors": b.console_errors()}
    b.events = []
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    page = os.path.abspath(sys.argv[1])
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("html_drive.py: chromium not found")
    b = Browser(chromium)
    try:
        target = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
        att = b.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}, session=False)
        b.session = att["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            b.send(domain + ".enable")
        b.send("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        open_page(b, page)
        for step in sys.argv[2:]:
            kind, _, arg = step.partition(":")
            if kind == "open":
                print(json.dumps(end_page(b)), flush=True)
                open_page(b, os.path.abspath(arg))
                continue
            if kind == "eval":
                out = b.evaluate(arg)
            elif kind in ("click", "press"):
                if kind == "press":
                    arg = ("(e => { if (!e) return null; e.scrollIntoView({block: 'center'});"
                           " const r = e.getBoundingClientRect();"
                           " return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })"
                           "(document.querySelector(%s))" % json.dumps(arg))
                at = b.evaluate(arg)
                if not at:
                    out = {"clicked": False}
                else:
                    for t in ("mouseMoved", "mousePressed", "mouseReleased"):
                        b.send("Input.dispatchMouseEvent", {"type": t, "x": at["x"], "y": at["y"],
                                                            "button": "left", "clickCount": 1})
                    out = {"clicked": True, "x": at["x"], "y": at["y"]}
            elif kind in ("move", "wheel", "drag"):
                at = b.evaluate(arg)
                if not at:
                    out = {kind: False}
                elif kind == "move":
                    b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": at["x"], "y": at["y"]})
                    out = {kind: True, "x": at["x"], "y": at["y"]}
                elif kind == "wheel":
                    b.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": at["x"], "y": at["y"],
                                                        "deltaX": at.get("dx", 0), "deltaY": at.get("dy", 0)})
                    out = {kind: True, "x": at["x"], "y": at["y"]}
                else:
                    b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": at["x"], "y": at["y"]})
                    b.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": at["x"], "y": at["y"],
                                                        "button": "left", "buttons": 1, "clickCount": 1})
                    for k in range(1, 6):
                        x = at["x"] + (at["x2"] - at["x"]) * k / 5
                        y = at["y"] + (at["y2"] - at["y"]) * k / 5
                        b.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y,
                                                            "button": "left", "buttons": 1})
                    b.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": at["x2"], "y": at["y2"],
                                                        "button": "left", "buttons": 0, "clickCount": 1})
                    out = {kind: True}
            elif kind == "key":
                for t in ("keyDown", "keyUp"):
                    b.send("Input.dispatchKeyEvent", {"type": t, "key": arg,
                                                      "text": arg if len(arg) == 1 and t == "keyDown" else ""})
                out = {"key": arg}
            elif kind == "type":
                b.send("Input.insertText", {"text": arg})
                out = {"typed": arg}
            elif kind == "wait":
                t0 = time.monotonic()
                out = b.evaluate(arg)
                while not out and time.monotonic() - t0 < 20:
                    time.sleep(0.05)
                    out = b.evaluate(arg)
            elif kind == "size":
                w, h = (int(v) for v in arg.split("x"))
                b.send("Emulation.setDeviceMetricsOverride",
                       {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})
                out = {"size": [w, h]}
            elif kind == "shot":
                import base64
                png = b.send("Page.captureScreenshot", {"format": "png"})["data"]
                with open(arg, "wb") as f:
                    f.write(base64.b64decode(png))
                out = {"shot": arg}
            else:
                sys.exit("html_drive.py: unknown step %r" % step)
            print(json.dumps(out), flush=True)
        print(json.dumps(end_page(b)), flush=True)
    finally:
        b.close()


if __name__ == "__main__":
    main()
