"""Work a review queue with the keyboard alone in headless Chromium, as a person would, and say how it went.

Checks the review page's promise that a reviewer can clear a queue by keyboard: it signs in by typing (name, Tab,
token, Enter), then presses one key per card until the page says nothing is left. With the demo's `manifest.json`
it presses the key of the printing the scan truly shows (`n` when it is not among the numbered candidates), as an
attentive reviewer would; without it, it presses `1` (the machine's pick). Needs `playwright` and Debian's
`chromium`. Run several at once with different names to see reviewers share a queue.

    python tools/review_keyboard_run.py http://127.0.0.1:8765 alice --manifest DEMO/manifest.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("reviewer")
    parser.add_argument("--token", default="")
    parser.add_argument("--manifest", help="demo manifest.json: vote for each scan's true printing")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    truth = {}
    if args.manifest:
        with open(args.manifest) as handle:
            truth = {identifier: entry["scryfall_id"] for identifier, entry in json.load(handle).items()}

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        page.set_default_timeout(30_000)
        page.goto(args.base.rstrip("/") + "/")
        page.wait_for_function("document.activeElement && document.activeElement.name === 'reviewer'")
        page.keyboard.type(args.reviewer)
        if args.token:
            page.keyboard.press("Tab")
            page.keyboard.type(args.token)
        page.keyboard.press("Enter")
        page.wait_for_selector("#scan, #done")
        keys: Counter[str] = Counter()
        slowest, started = 0.0, time.perf_counter()
        while not page.locator("#done").count():
            identifier = page.inner_text(".sub code")
            key = "1" if page.locator('[data-key="1"]').count() else "n"
            if truth:
                wanted = page.locator(f'button[name="choice"][value="{truth.get(identifier, "")}"]')
                key = (wanted.get_attribute("data-key") if wanted.count() else "n") or "s"
            pressed = time.perf_counter()
            with page.expect_navigation():
                page.keyboard.press(key)
            page.wait_for_selector("#scan, #done, #error")
            if page.locator("#error").count():
                raise SystemExit(f"{args.reviewer}: refused on {identifier}: {page.inner_text('#error')}")
            page.wait_for_function("document.querySelector('#done') || document.querySelector('#scan').complete")
            slowest = max(slowest, time.perf_counter() - pressed)
            keys[key] += 1
        elapsed = time.perf_counter() - started
        cards = sum(keys.values())
        print(f"{args.reviewer}: {cards} cards in {elapsed:.1f}s ({elapsed / max(cards, 1):.2f}s per card, slowest "
              f"next-card load {slowest:.2f}s); keys pressed: {dict(sorted(keys.items()))}")
        print(" ".join(page.inner_text("#done").split()))
        browser.close()


if __name__ == "__main__":
    main()
