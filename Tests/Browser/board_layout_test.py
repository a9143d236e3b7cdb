#!/usr/bin/env python3
"""The live board's layout for a class, in headless Chromium at 1920 x 1080.

Runs the built `healthgate demo --participants 8` with a strap that goes silent, takes its real
tiles from /api/board (live ones and the lost one), stops the page's event stream, and gives the
page's own render() whole boards of 10, 20 and 30 tiles made from them (the demo simulates at most
16 straps). For each: a screenshot (OUTDIR/board-N.png), and checks from the element boxes that
every tile is on the screen, no two tiles overlap, each tile's text lies inside its tile and fits
(no clipped heart rate, figures or name), the heart rate is large enough to read across a room,
the tiles keep the order given through a change, and a lost strap's tile shows a dash, not a number.

usage: board_layout_test.py HEALTHGATE OUTDIR
Exits 0 when every check passed; prints one line per check.
"""
import copy
import json
import os
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board_browser_test import Failure, check, poll  # noqa: E402
from board_screen import HEIGHT, WIDTH, inside, overlaps, run_on_screen  # noqa: E402

# Names as a class has them, some long: a tile must show them whole at 30 tiles.
NAMES = ["Ana", "Benedikt", "Cleo", "Daniela", "Eva", "Finn", "Gustavo", "Hana", "Ivo", "Jana-Marie", "Kai", "Leonora",
         "Max", "Nia", "Ole", "Pia", "Quentin", "Rosa", "Sven", "Tamara", "Umut", "Vera", "Wilhelm", "Xenia", "Yusuf",
         "Zoe", "Aurelio", "Birgit", "Cornelius", "Dagmar"]
# Heart rate in CSS pixels at 30 tiles: about 4.5 cm on a 1080p screen of 1.2 m width, readable from 10 m.
MINIMUM_HEART_RATE_PIXELS = 60

MEASURE = """
const screen = {width: innerWidth, height: innerHeight};
return {screen, tiles: [...document.querySelectorAll('section.tile')].map((tile) => {
  const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const parts = {};
  for (const name of ['name', 'hr', 'bpm', 'figures', 'badge']) {
    const node = tile.querySelector('.' + name);
    if (!node || getComputedStyle(node).display === 'none') continue;
    parts[name] = {box: box(node), fits: node.scrollWidth <= node.clientWidth + 1 || name === 'bpm',
                   fontSize: parseFloat(getComputedStyle(node).fontSize), text: node.textContent};
  }
  return {id: tile.dataset.tileId, sensor: tile.dataset.sensor, box: box(tile), parts};
})};
"""


def board_of(count, real):
    """A whole board of `count` tiles made from the demo's real tiles; the last one is lost."""
    live = [tile for tile in real["tiles"] if tile["sensor"] == "live"]
    lost = [tile for tile in real["tiles"] if tile["sensor"] == "lost"]
    if not live or not lost:
        raise Failure(f"the demo's board needs live and lost tiles: {[t['sensor'] for t in real['tiles']]}")
    tiles = []
    for index in range(count):
        tile = copy.deepcopy(lost[0] if index == count - 1 else live[index % len(live)])
        tile["id"] = f"participant:{NAMES[index]}"
        tile["name"] = NAMES[index]
        tiles.append(tile)
    return {"full": True, "generatedAt": real["generatedAt"], "tiles": tiles, "order": [t["id"] for t in tiles],
            "removed": [], "droppedReadings": 0}


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    return run_on_screen(binary, "healthgate-layout-", ["--participants", "8", "--drop-sensor-after", "3"],
                         lambda driver, gateway, base, results: layouts(driver, base, outdir, results))


def layouts(driver, base, outdir, results):
    def real_board():
        with urllib.request.urlopen(base + "api/board", timeout=5) as response:
            board = json.load(response)
        sensors = {tile["sensor"] for tile in board["tiles"]}
        return board if "lost" in sensors and "live" in sensors and all(
            t["heartRate"] is not None for t in board["tiles"] if t["sensor"] == "live") else None

    real = poll("live tiles and a lost one on the demo's board", 60, real_board)
    driver.get(base)
    poll("the page's first event", 30, lambda: driver.find_elements("css selector", "section.tile"))
    # From here on the page shows only what this test renders.
    driver.execute_script("events.close(); document.head.insertAdjacentHTML('beforeend', "
                          "'<style>* { transition: none !important; }</style>');")
    for count in (10, 20, 30):
        board = board_of(count, real)
        driver.execute_script("render(arguments[0]);", board)
        measured = driver.execute_script(MEASURE)
        screen, tiles = measured["screen"], measured["tiles"]
        path = os.path.join(outdir, f"board-{count}.png")
        driver.save_screenshot(path)
        check(f"{count} tiles: a {screen['width']}x{screen['height']} screen, screenshot {path}",
              len(tiles) == count and screen == {"width": WIDTH, "height": HEIGHT} and os.path.getsize(path) > 20_000, results)
        off = [t["id"] for t in tiles if not inside(t["box"], [0, 0, WIDTH, HEIGHT])]
        check(f"{count} tiles: every tile on the screen (off: {off})", not off, results)
        pairs = [(a["id"], b["id"]) for i, a in enumerate(tiles) for b in tiles[i + 1:] if overlaps(a["box"], b["box"])]
        check(f"{count} tiles: no two tiles overlap ({pairs[:3]})", not pairs, results)
        outside = [(t["id"], name) for t in tiles for name, part in t["parts"].items() if not inside(part["box"], t["box"])]
        clipped = [(t["id"], name, part["text"]) for t in tiles for name, part in t["parts"].items() if not part["fits"]]
        check(f"{count} tiles: every text inside its tile and whole (outside: {outside[:3]}, clipped: {clipped[:3]})",
              not outside and not clipped, results)
        badge_clear = [t["id"] for t in tiles if "badge" in t["parts"] and overlaps(t["parts"]["badge"]["box"], t["parts"]["name"]["box"])]
        check(f"{count} tiles: the lost badge covers no name ({badge_clear})", not badge_clear, results)
        smallest = min(t["parts"]["bpm"]["fontSize"] for t in tiles)
        check(f"{count} tiles: heart rates at least {MINIMUM_HEART_RATE_PIXELS} px high (smallest {smallest:.0f} px)",
              smallest >= MINIMUM_HEART_RATE_PIXELS, results)
        lost = [t for t in tiles if t["sensor"] == "lost"]
        check(f"{count} tiles: the lost strap's tile shows '–', not a number ({[t['parts']['bpm']['text'] for t in lost]})",
              len(lost) == 1 and lost[0]["parts"]["bpm"]["text"] == "–", results)
        order = [t["id"] for t in tiles]
        # A change of one tile's heart rate keeps every tile in its place.
        changed = copy.deepcopy(board["tiles"][0])
        changed["heartRate"] = (changed["heartRate"] or 100) + 7
        driver.execute_script("render(arguments[0]);", {"full": False, "generatedAt": board["generatedAt"], "tiles": [changed],
                                                          "removed": [], "droppedReadings": 0})
        after = driver.execute_script(MEASURE)["tiles"]
        check(f"{count} tiles: the order is the board's and stays through a change",
              order == board["order"] and [t["id"] for t in after] == order
              and [t["box"] for t in after] == [t["box"] for t in tiles], results)


if __name__ == "__main__":
    sys.exit(main())
