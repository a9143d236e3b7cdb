#!/usr/bin/env python3
"""Signing a strap in from the live board, in headless Chromium at 1920 x 1080.

Runs the built `healthgate demo --participants 6 --new-straps 3` (three simulated straps nobody
wears), waits until the page shows their new-strap tiles (identity, radio, live heart rate, a
"Sign in" button), checks from the element boxes that no two tiles overlap and every text fits its
tile, takes a screenshot (OUTDIR/board-sign-in.png), then signs the first new strap in through the
page's own form (the browser's POST, with its Origin) and checks that its tile goes, a tile of the
new member comes, and `healthgate participant list` names her with the strap.

usage: board_sign_in_test.py HEALTHGATE OUTDIR
Exits 0 when every check passed; prints one line per check.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from board_browser_test import check, poll  # noqa: E402
from board_screen import HEIGHT, WIDTH, inside, overlaps, run_on_screen  # noqa: E402

MEASURE = """
return [...document.querySelectorAll('section.tile')].map((tile) => {
  const box = (node) => { const r = node.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const parts = {};
  for (const name of ['name', 'bpm', 'zone', 'in-zone', 'sign-in', 'badge']) {
    const node = tile.querySelector('.' + name);
    if (!node || getComputedStyle(node).display === 'none' || !node.textContent) continue;
    parts[name] = {box: box(node), fits: node.scrollWidth <= node.clientWidth + 1 || name === 'bpm', text: node.textContent};
  }
  return {id: tile.dataset.tileId, strap: tile.classList.contains('strap'), box: box(tile), parts};
});
"""


def main():
    binary, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    return run_on_screen(binary, "healthgate-sign-in-", ["--participants", "6", "--new-straps", "3"],
                         lambda driver, gateway, base, results: sign_in(driver, gateway, base, outdir, results))


def sign_in(driver, gateway, base, outdir, results):
    driver.get(base)
    straps = poll("three new-strap tiles with a heart rate", 60, lambda: (lambda found: found if len(found) == 3 else None)(
        [t for t in driver.execute_script(MEASURE) if t["strap"] and t["parts"].get("bpm", {}).get("text", "–") != "–"]))
    identities = [t["parts"]["zone"]["text"] for t in straps]
    check(f"the new straps show their identity ({identities})",
          identities == ["02:00:00:00:00:07", "02:00:00:00:00:08", "02:00:00:00:00:09"], results)
    radios = {t["parts"]["in-zone"]["text"] for t in straps}
    check(f"and the radio they came by ({radios})", radios == {"Bluetooth connection"}, results)
    driver.execute_script("document.head.insertAdjacentHTML('beforeend', '<style>* { transition: none !important; }</style>');")
    tiles = driver.execute_script(MEASURE)
    pairs = [(a["id"], b["id"]) for i, a in enumerate(tiles) for b in tiles[i + 1:] if overlaps(a["box"], b["box"])]
    check(f"{len(tiles)} tiles: no two overlap ({pairs[:3]})", len(tiles) >= 15 and not pairs, results)
    off = [t["id"] for t in tiles if not inside(t["box"], [0, 0, WIDTH, HEIGHT])]
    check(f"every tile on the screen (off: {off})", not off, results)
    outside = [(t["id"], name) for t in tiles for name, part in t["parts"].items() if not inside(part["box"], t["box"])]
    clipped = [(t["id"], name, part["text"]) for t in tiles for name, part in t["parts"].items() if not part["fits"]]
    check(f"every text inside its tile and whole (outside: {outside[:3]}, clipped: {clipped[:3]})", not outside and not clipped, results)
    buttons = [(t["id"], t["parts"]["sign-in"]["box"]) for t in tiles if "sign-in" in t["parts"]]
    crowded = [name for name, box in buttons for t in tiles if t["id"] == name
               for part, inner in t["parts"].items() if part not in ("sign-in",) and overlaps(box, inner["box"])]
    check(f"a 'Sign in' button on each new strap, covering nothing ({len(buttons)}, {crowded})",
          len(buttons) == 3 and not crowded, results)
    path = os.path.join(outdir, "board-sign-in.png")
    driver.save_screenshot(path)
    check(f"screenshot {path}", os.path.getsize(path) > 20_000, results)

    # Signing the first new strap in through the page's form: the browser posts it.
    driver.find_element("css selector", 'section.tile[data-tile-id="strap:02:00:00:00:00:07"] .sign-in').click()
    driver.find_element("css selector", "#sign-in-name").send_keys("Mia")
    driver.find_element("css selector", "#sign-in-submit").click()
    poll("the page's sign-in answer", 30, lambda: driver.execute_script("return document.body.dataset.signedIn") == "Mia")
    poll("Mia's tile, and the new strap's gone", 30, lambda: driver.execute_script(
        "return !!document.querySelector('section.tile[data-tile-id=\"participant:Mia\"]') && "
        "!document.querySelector('section.tile[data-tile-id=\"strap:02:00:00:00:00:07\"]')"))
    check("the signed-in strap's tile became Mia's", True, results)
    listed = gateway.command(["participant", "list", "--format", "json"])
    mia = [p for p in json.loads(listed.stdout or "[]") if p["name"] == "Mia"]
    check(f"participant list: Mia wears the strap until the class ends ({mia})",
          mia and mia[0]["devices"] == ["02:00:00:00:00:07"] and mia[0]["untilClassEnd"] == ["02:00:00:00:00:07"]
          and mia[0]["workoutState"] == "running", results)


if __name__ == "__main__":
    sys.exit(main())
