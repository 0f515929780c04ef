"""The labelling page in a real headless Chromium (Debian's chromium, driven by Playwright).

Labels items by click and by key, reloads, and checks the resume point, the progress and the labels
file; checks that a hostile description is shown as text and never runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from validators.review.server import ReviewServer

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="Debian chromium not installed (/usr/bin/chromium): "
        "run scripts/setup.sh --browser or apt-get install chromium",
    ),
]


def test_label_by_click_and_key_then_resume(server: ReviewServer, review_out: Path, hostile: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    labels_file = review_out / "review" / "labels.jsonl"
    ids = [i["item_id"] for i in server.state.items]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            assert page.text_content("#progress-text").startswith("0 of 6 labelled")
            assert page.get_attribute("body", "data-item-id") == ids[0]

            page.click("#btn-match")  # item 1 by click
            page.wait_for_selector(f"body[data-item-id='{ids[1]}']")
            # item 2 carries the hostile description: shown verbatim as text, no element created, nothing run
            assert page.text_content("#tool-description") == hostile
            assert (
                page.query_selector("#tool-description img, #tool-description script, #tool-description b")
                is None
            )
            assert page.evaluate("window.__pwned") is None
            page.keyboard.press("n")  # item 2 by key
            page.wait_for_selector(f"body[data-item-id='{ids[2]}']")
            page.keyboard.press("3")  # item 3: unsure
            page.wait_for_selector(f"body[data-item-id='{ids[3]}']")
            assert page.text_content("#progress-text").startswith("3 of 6 labelled")

            # every label is on disk already, in the order given
            lines = [json.loads(x) for x in labels_file.read_text().splitlines()]
            assert [(x["item_id"], x["label"]) for x in lines] == [
                (ids[0], "match"),
                (ids[1], "no_match"),
                (ids[2], "unsure"),
            ]

            # reload: resume at the first unlabelled item, labels restored
            page.reload()
            page.wait_for_selector("body[data-ready='1']")
            assert page.get_attribute("body", "data-item-id") == ids[3]
            assert page.text_content("#progress-text").startswith("3 of 6 labelled")
            page.keyboard.press("ArrowLeft")
            assert page.text_content("#current-label") == "unsure"
            page.keyboard.press("m")  # relabel item 3: appended, last label wins
            page.wait_for_selector(f"body[data-item-id='{ids[3]}']")
            page.close()

            # a new browser session (the first one closed) still resumes at item 4
            page = browser.new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            assert page.get_attribute("body", "data-item-id") == ids[3]
        finally:
            browser.close()
    lines = [json.loads(x) for x in labels_file.read_text().splitlines()]
    assert len(lines) == 4 and (lines[-1]["item_id"], lines[-1]["label"]) == (ids[2], "match")


def test_save_is_confirmed_on_its_item_and_a_double_press_is_shown(
    server: ReviewServer, review_out: Path
) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    labels_file = review_out / "review" / "labels.jsonl"
    items = server.state.items
    ids = [i["item_id"] for i in items]
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready='1']")
            assert page.is_visible("#rule") and "multi-step" in page.text_content("#rule")
            assert page.text_content("#tool-id") == items[0]["tool_id"]
            args = items[0]["context"]["arguments"]
            assert len(page.query_selector_all("#arguments li")) >= len(args)
            # two key presses in one tick: the second arrives while the first is saving
            page.evaluate(
                "for (const k of ['n', 'm']) document.dispatchEvent(new KeyboardEvent('keydown', {key: k}))"
            )
            page.wait_for_selector(f"body[data-item-id='{ids[1]}']")
            assert page.get_attribute("body", "data-last-saved") == ids[0]
            # the ignored press was said out loud, not dropped silently
            assert "key ignored" in page.evaluate("window.__statusLog.join(' | ')")
            last = page.text_content("#last-saved")
            assert last.startswith("Saved item 1 as no match:") and items[0]["tool_name"] in last
            assert page.text_content("#current-label") == "none"  # the next item, still unlabelled
            lines = [json.loads(x) for x in labels_file.read_text().splitlines()]
            assert [(x["item_id"], x["label"]) for x in lines] == [(ids[0], "no_match")]  # 'm' not applied
        finally:
            browser.close()
