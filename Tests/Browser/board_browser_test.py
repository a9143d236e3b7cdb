#!/usr/bin/env python3
"""The live board in a real browser: Debian's headless Chromium driven through chromium-driver.

Runs the built `healthgate` as a user would: `healthgate demo --participants 8` with a strap that
goes silent, then checks in the browser that the tiles appear, their values change, the silent
strap's tile is flagged, and the screenshot shows the tiles; that the page reconnects by itself
after the gateway restarts; that the history lists the ended workouts with their charts; and that
a board with a token refuses requests without it. Every wait polls for a state with a deadline.

usage: board_browser_test.py HEALTHGATE SCREENSHOT.png
Exits 0 when every check passed; prints one line per check.
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

PARTICIPANTS = 8
NAMES = ["Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana"]
# The demo's ANT+ class: six straps through a simulated stick, each worn by a participant, after
# the Bluetooth straps' wearers. (Its second strap leaves the room for 8 s every minute.)
ANT_CLASS = ["Quinn", "Rosa", "Sami", "Tom", "Uma", "Vera"]
TILES = PARTICIPANTS + len(ANT_CLASS)
# The demo silences the last participant's strap.
SILENT = NAMES[-1]
DROP_AFTER_SECONDS = 8
# Zone colours of board.css, and the colour of a lost sensor's tile.
ZONE_COLOURS = {(0x5B, 0x64, 0x72), (0x8A, 0x97, 0xA8), (0x2F, 0x80, 0xED), (0x27, 0xAE, 0x60), (0xF2, 0x99, 0x4A),
                (0xEB, 0x57, 0x57)}
LOST_COLOUR = (0x3A, 0x3F, 0x46)


class Failure(Exception):
    pass


def poll(what, deadline_seconds, probe, interval=0.2):
    """Calls probe() until it returns something truthy; fails with `what` at the deadline."""
    deadline = time.monotonic() + deadline_seconds
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except Exception as error:  # the page or the server is not there yet: try again
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise Failure(f"timed out after {deadline_seconds} s waiting for {what} (last: {last!r})")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def read_png(path):
    """Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) into rows of pixels."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure(f"{path} is not a PNG")
    position, chunks, header = 8, [], None
    while position < len(data):
        length, kind = struct.unpack(">I4s", data[position:position + 8])
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise Failure(f"unexpected PNG format depth={depth} colour={colour} interlace={interlace}")
    channels = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up = previous[x]
            corner = previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[x] = (line[x] + predictor) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows


def pixel(png, x, y):
    _, _, channels, rows = png
    return tuple(rows[y][x * channels:x * channels + 3])


def close(colour, expected, tolerance=12):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, expected))


class Gateway:
    """One `healthgate` process with its own directories."""

    def __init__(self, binary, root, arguments):
        self.root = root
        environment = dict(os.environ)
        for name, folder in [("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"), ("XDG_RUNTIME_DIR", "runtime"),
                             ("XDG_CONFIG_HOME", "config")]:
            path = os.path.join(root, folder)
            os.makedirs(path, mode=0o700, exist_ok=True)
            environment[name] = path
        self.environment = environment
        self.binary = binary
        self.log = open(os.path.join(root, f"gateway-{time.monotonic_ns()}.log"), "wb")
        self.process = subprocess.Popen([binary] + arguments, env=environment, stdout=self.log, stderr=self.log)

    def command(self, arguments):
        return subprocess.run([self.binary] + arguments, env=self.environment, capture_output=True, text=True, timeout=60)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)
        self.log.close()
        return self.process.returncode


def check(name, passed, results):
    results.append((name, passed))
    print(("PASS " if passed else "FAIL ") + name, flush=True)


def main():
    binary, screenshot = sys.argv[1], sys.argv[2]
    root = tempfile.mkdtemp(prefix="healthgate-board-")
    port = free_port()
    base = f"http://127.0.0.1:{port}/"
    demo_arguments = ["demo", "--participants", str(PARTICIPANTS), "--drop-sensor-after", str(DROP_AFTER_SECONDS),
                      "--listen", f"127.0.0.1:{port}", "--quiet", "--db", os.path.join(root, "samples.sqlite")]
    results = []
    gateway = Gateway(binary, root, demo_arguments)
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"))
    try:
        poll("the board to answer", 60, lambda: http_status(base + "api/board") == 200)
        driver.get(base)
        tiles = poll(f"{TILES} tiles", 30,
                     lambda: (lambda found: found if len(found) == TILES else None)(
                         driver.find_elements(By.CSS_SELECTOR, "section.tile")))
        names = [tile.find_element(By.CLASS_NAME, "name").text for tile in tiles]
        check(f"{TILES} tiles appear, one per participant, the ANT+ class's too ({', '.join(names)})",
              names == NAMES + ANT_CLASS, results)

        def heart_rates():
            return [tile.get_attribute("data-heart-rate") for tile in driver.find_elements(By.CSS_SELECTOR, "section.tile")]

        first = poll("heart rates on every tile", 30, lambda: (lambda values: values if all(values) else None)(heart_rates()))
        changed = poll("a heart rate to change", 30, lambda: (lambda values: values if values != first else None)(heart_rates()))
        check(f"heart rates change on the page ({first} → {changed})", changed != first, results)

        lost = poll(f"{SILENT}'s tile to flag the lost sensor", DROP_AFTER_SECONDS + 30,
                    lambda: driver.find_element(By.CSS_SELECTOR, f"section.tile[data-tile-id='participant:{SILENT}'][data-sensor='lost']"))
        badge = lost.find_element(By.CLASS_NAME, "badge")
        check("the silent strap's tile is flagged 'SENSOR LOST'", badge.is_displayed() and "LOST" in badge.text, results)
        others = [tile for tile in driver.find_elements(By.CSS_SELECTOR, "section.tile[data-sensor='live']")
                  if tile.get_attribute("data-tile-id") in {f"participant:{name}" for name in NAMES}]
        check("the other Bluetooth straps' tiles stay live", len(others) == PARTICIPANTS - 1, results)

        # The tile's colour changes with a CSS transition: wait until it has settled.
        poll("the lost tile's colour to settle", 10,
             lambda: driver.execute_script("return getComputedStyle(arguments[0]).backgroundColor", lost) == "rgb(58, 63, 70)")
        # A live tile whose heart rate crosses into another zone fades to its new colour; a
        # screenshot taken during that fade shows a colour between two zones. Transitions are
        # switched off for the screenshot, so every tile shows the colour it has now.
        driver.execute_script(
            "const s = document.createElement('style');"
            "s.textContent = '* { transition: none !important; }';"
            "document.head.appendChild(s);")
        time.sleep(0.3)
        driver.save_screenshot(screenshot)
        png = read_png(screenshot)
        width, height = png[0], png[1]
        boxes_ok = True
        for tile in driver.find_elements(By.CSS_SELECTOR, "section.tile"):
            rect = tile.rect
            inside = rect["width"] > 150 and rect["height"] > 100 and rect["x"] + rect["width"] <= width \
                and rect["y"] + rect["height"] <= height
            # A point inside the tile, right of its text and below its badge: the tile's own colour.
            colour = pixel(png, int(rect["x"] + rect["width"] - 10), int(rect["y"] + rect["height"] * 0.6))
            expected = [LOST_COLOUR] if tile.get_attribute("data-sensor") == "lost" else ZONE_COLOURS
            coloured = any(close(colour, e) for e in expected)
            if not (inside and coloured):
                boxes_ok = False
                print(f"  tile {tile.get_attribute('data-tile-id')}: rect {rect}, colour {colour}", flush=True)
        check(f"the screenshot ({width}x{height}, {os.path.getsize(screenshot)} bytes) shows every tile in its colour",
              os.path.getsize(screenshot) > 10_000 and boxes_ok, results)

        ended = gateway.command(["workout", "end", "--all"])
        check("'workout end --all' ends every participant's workout", ended.returncode == 0 and ended.stdout.count("ended") == TILES,
              results)

        before = driver.find_element(By.TAG_NAME, "body").get_attribute("data-updated")
        status = gateway.stop()
        check("the gateway stops cleanly", status == 0, results)
        poll("the page to notice the gateway is gone", 30,
             lambda: driver.find_element(By.TAG_NAME, "body").get_attribute("data-connected") == "false")
        gateway = Gateway(binary, root, demo_arguments)
        poll("the page to reconnect by itself", 60,
             lambda: driver.find_element(By.TAG_NAME, "body").get_attribute("data-connected") == "true")
        after = poll("an update from the new gateway", 30,
                     lambda: (lambda value: value if value and value > before else None)(
                         driver.find_element(By.TAG_NAME, "body").get_attribute("data-updated")))
        check(f"after a gateway restart the page reconnects by itself and updates again ({before} → {after})", True, results)

        driver.get(base + "history")
        rows = poll("the stored workouts", 30,
                    lambda: (lambda found: found if len(found) >= PARTICIPANTS else None)(
                        driver.find_elements(By.CSS_SELECTOR, "#workouts tbody tr")))
        check(f"the history lists the {len(rows)} ended workouts", len(rows) >= PARTICIPANTS, results)
        rows[0].find_element(By.TAG_NAME, "a").click()
        chart = poll("the workout's chart", 30, lambda: driver.find_element(By.CSS_SELECTOR, ".chart svg"))
        check("a workout's page shows its SVG chart", chart.rect["width"] > 200, results)
        gateway.stop()

        # A board with a token: every request needs it.
        token = "board-token-0123456789abcdef"
        token_file = os.path.join(root, "token")
        with open(token_file, "w") as handle:
            handle.write(token + "\n")
        token_port = free_port()
        configuration = os.path.join(root, "token-config.json")
        with open(configuration, "w") as handle:
            json.dump({"controlSocket": os.path.join(root, "token.sock"),
                       "sinks": [{"kind": "sqlite"}], "store": {"path": os.path.join(root, "token.sqlite")},
                       "web": {"listen": f"127.0.0.1:{token_port}", "tokenFile": token_file}}, handle)
        guarded = Gateway(binary, root, ["run", "--config", configuration])
        token_base = f"http://127.0.0.1:{token_port}/"
        poll("the guarded board to listen", 60, lambda: http_status(token_base + "api/board") in (200, 401))
        statuses = (http_status(token_base + "api/board"), http_status(token_base + "events"),
                    http_status(token_base + "api/board?token=wrong-token-0123456789"),
                    http_status(token_base + "api/board?token=" + token),
                    http_status(token_base + "api/board", {"Authorization": "Bearer " + token}))
        check(f"without the token the board answers 401, with it 200 {statuses}", statuses == (401, 401, 401, 200, 200), results)
        guarded.stop()

        # A non-loopback listener without a token is refused before anything listens.
        open_configuration = os.path.join(root, "open-config.json")
        with open(open_configuration, "w") as handle:
            json.dump({"web": {"listen": "0.0.0.0:8080"}}, handle)
        checked = guarded.command(["config", "check", open_configuration])
        check("a non-loopback listener without a token is a configuration error (exit 78, web.listen)",
              checked.returncode == 78 and "web.listen" in checked.stderr, results)
    finally:
        driver.quit()
        gateway.stop()
    failed = sum(1 for _, passed in results if not passed)
    print(f"{len(results) - failed} passed, {failed} failed", flush=True)
    if failed == 0:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"logs kept in {root}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failure as failure:
        print(f"FAIL {failure}", flush=True)
        sys.exit(1)
