"""The review page in a real browser: headless Chromium (Debian's `chromium` package) driven by Playwright.

Playwright cannot download its own browser here, so it launches the system one by path. Without that package (or
without the `playwright` Python package) the test skips and says what to install; `.ci/run` installs both.
A screenshot of the page is saved as a test artifact under `test-artifacts/`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from testkit.review import card_state, human_votes, serve
from testkit.seed import printing_ids

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Measured to be needed on the CI machine: running as root without a sandbox, no GPU, and no background traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="needs the `playwright` Python package (dev extra)")
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's `chromium` package (apt-get install -y chromium): /usr/bin/chromium is missing")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def _loaded(page, selector: str) -> bool:
    """The image matched by `selector` finished loading and has pixels."""
    return page.eval_on_selector(selector, "img => img.complete && img.naturalWidth > 0")


def test_a_reviewer_works_the_queue_with_the_keyboard(browser, review_db, corpus):
    confirm, confirm_too, routed = (corpus[0], corpus[2], corpus[3])
    skipped = corpus[1]
    with serve(review_db, token="browser-token", admin_token="browser-admin") as base:
        page = browser.new_page(viewport={"width": 1500, "height": 950})
        page.set_default_timeout(20_000)
        assert page.goto(base + "/next").status == 401  # no token, no queue
        assert page.request.get(f"{base}/card/{confirm.card_id}/scan").status == 401

        page.goto(base + "/")
        page.wait_for_function("document.activeElement && document.activeElement.name === 'reviewer'")
        page.keyboard.type("bea")  # the name field has the focus
        page.fill('input[name="token"]', "browser-token")
        page.fill('input[name="admin_token"]', "browser-admin")
        with page.expect_navigation(url=f"**/card/{confirm.card_id}*"):
            page.keyboard.press("Enter")
        page.wait_for_load_state("networkidle")
        assert _loaded(page, "#scan") and _loaded(page, "#collector-crop") and _loaded(page, "#symbol-crop")
        assert page.locator("#candidates tr.candidate").count() >= 2
        page.wait_for_function("document.getElementById('counts').textContent.includes('4 left for you')")
        assert page.get_attribute('button[data-key="1"]', "value") == confirm.truth_scryfall  # the machine's pick
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-page.png"))

        with page.expect_navigation(url=f"**/card/{skipped.card_id}*"):
            page.keyboard.press("1")  # confirm the machine's pick
        assert f"Card {confirm.card_id}: you said" in page.inner_text("#flash")
        with page.expect_navigation(url=f"**/card/{confirm_too.card_id}*"):
            page.keyboard.press("s")
        with page.expect_navigation(url=f"**/card/{routed.card_id}*"):
            page.keyboard.press("1")
        assert page.locator("#candidates tr.candidate").count() >= 2
        corrected = page.get_attribute('button[data-key="2"]', "value")  # no machine pick: not the page's first guess
        with page.expect_navigation(url="**/next"):
            page.keyboard.press("2")
        assert page.locator("#done").is_visible()
        with page.expect_navigation(url=f"**/card/{skipped.card_id}*"):
            page.keyboard.press("s")  # review the skipped card after all
        with page.expect_navigation(url="**/next"):
            page.keyboard.press("n")
        assert "Nothing left for you" in page.inner_text("#done")
        page.close()

    votes = {v[0]: v[1:] for v in human_votes(review_db)}
    assert votes == {
        confirm.card_id: ("bea", "admin", confirm.truth, False),
        confirm_too.card_id: ("bea", "admin", confirm_too.truth, False),
        routed.card_id: ("bea", "admin", printing_ids(review_db)[corrected], False),
        skipped.card_id: ("bea", "admin", None, True),
    }
    for scan in (confirm, confirm_too):
        assert card_state(review_db, scan.card_id) == ("resolved", scan.truth)  # an admin vote weighs 5
    assert card_state(review_db, routed.card_id) == ("resolved", printing_ids(review_db)[corrected])
    assert card_state(review_db, skipped.card_id) == ("no_match", None)
