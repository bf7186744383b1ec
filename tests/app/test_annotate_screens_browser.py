"""Acceptance (issue 11, item 5): screenshots of the Annotate page, graded and binary, at 1280x800, and what they show.

- every grade button has the same type (no primary colour pulling towards one grade) and its full name
  visible, not cut (``1 · On topic, does not meet the need`` was cut off);
- the sidebar shows the guide of the item's scale and collection: a binary pool shows the binary guide,
  a graded pool the collection's own graded guide (an admin's text, escaped);
- navigation by keyboard: P goes back to one's own earlier item, a grade there appends a relabel, F flags
  an item, which is not served again.

The shared server, with a collection and two annotators of this module; the judgments table is asserted
row by row.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from db.guidelines import set_guidelines
from db.models import Judgment, PassageRecord, User
from tests.app.browser_helpers import (
    ALPHA_PASSAGES,
    add_users,
    cli,
    markers_of,
    press_grade,
    screenshot,
    shown_doc,
    sign_in,
    signed_in_page,
    wait_for_value,
    wait_idle,
    write_beir,
)

pytestmark = pytest.mark.browser

PASSAGES = {d: ALPHA_PASSAGES[d] for d in ("d1", "d2", "d3", "d4", "d5")}
MARKERS = markers_of(PASSAGES)
QUERIES = {"q1": "how tall is the eiffel tower", "q2": "what to see in paris"}
GRADED_NAMES = ["0 · No match", "1 · On topic, does not meet the need", "2 · Partly satisfies", "3 · Precisely answers"]
BINARY_NAMES = ["0 · Not relevant", "1 · Relevant"]
CUSTOM_EXAMPLE = "Custom example: <b>not bold</b> and *not italic*"
# each grade button: its label, whether the label's text is cut (wider than its box), its kind and its box
BUTTONS = """() => [...document.querySelectorAll('[data-testid="stMain"] button')]
    .filter((b) => /^\\d · /.test(b.innerText.trim()) && b.checkVisibility() && b.getBoundingClientRect().width > 0)
    .map((b) => {
        const text = b.querySelector('[data-testid="stMarkdownContainer"] p') || b;
        const box = b.getBoundingClientRect();
        return {label: text.innerText.trim(), cut: text.scrollWidth > text.clientWidth + 1 || b.scrollWidth > b.clientWidth + 1,
                kind: b.getAttribute('data-testid') || b.className, left: box.left, right: box.right, bottom: box.bottom,
                width: box.width};
    })"""
SETTLED = """(markers) => {
    const main = document.querySelector('[data-testid="stMain"]');
    return main && !document.querySelector('[data-stale="true"]')
        && markers.filter((m) => main.innerText.includes(m)).length === 1
        && [...main.querySelectorAll('button')].some((b) => b.innerText.trim().startsWith('0 · '));
}"""


GRADED_ANN, BINARY_ANN = "screens-ann1", "screens-ann2"  # this module's own: no other module labels as them
RUNS = {"g": [("q1", "d1"), ("q1", "d2"), ("q1", "d3")], "b": [("q2", "d4"), ("q2", "d5")]}


def _collection_guide(store) -> None:
    """The collection's own graded guide, set by the admin: the app's level names, a rule per grade."""
    with store.write() as s:
        admin = s.scalar(select(User.id).where(User.username == "admin"))
        graded = [
            {
                "grade": g,
                "name": n.split(" · ")[1],
                "definition": f"Collection rule for grade {g}.",
                "examples": [CUSTOM_EXAMPLE] if g == 3 else [],
            }
            for g, n in enumerate(GRADED_NAMES)
        ]
        set_guidelines(s, admin, "screens", {"graded": graded})


@pytest.fixture(scope="module")
def server(app_server, tmp_path_factory):
    """In the shared server's store: GRADED_ANN labels pool ``g`` (q1: d1, d2, d3) on the graded scale, BINARY_ANN
    pool ``b`` (q2: d4, d5) on the binary one; the collection "screens" has its own graded guide."""
    folder = tmp_path_factory.mktemp("screens")
    db = app_server["db"]
    add_users(db, {GRADED_ANN: "annotator", BINARY_ANN: "annotator"})
    cli(db, "import", "-f", "beir", str(write_beir(folder / "data", PASSAGES, QUERIES, RUNS)), "-c", "screens")
    for name, annotator, scale in (("g", GRADED_ANN, []), ("b", BINARY_ANN, ["--binary"])):
        cli(db, "pool", "-c", "screens", "--name", name, "--run", name, "--depth", "3")
        assign = ["--pool", name, "--annotators", annotator, "--per-pair", "1", "--seed", "1", *scale]
        cli(db, "assign", "-c", "screens", *assign)
    _collection_guide(app_server["store"])
    return app_server


@pytest.fixture
def small_page(new_page):
    """A page of its own at 1280x800, the size the acceptance screenshots are taken at."""
    return new_page(1280, 800)


@pytest.fixture(scope="module")
def graded_page(server, browser_contexts):
    """A page at 1280x800 with GRADED_ANN signed in once for the module's tests: the graded screen's checks
    label nothing, so the keyboard test starts on the same first item a fresh sign-in shows."""
    with signed_in_page(browser_contexts, server["url"], server["store"], GRADED_ANN, width=1280, height=800) as page:
        yield page


def _rows(store, username: str) -> list[tuple]:
    with store.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                select(PassageRecord.ext_id, Judgment.action, Judgment.grade)
                .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
                .join(User, User.id == Judgment.user_id)
                .where(User.username == username)
                .order_by(Judgment.id)
            )
        ]


def _shown(page) -> str:
    return shown_doc(page, MARKERS, settled=SETTLED)


def _button_problems(page, names: list[str]) -> list[str]:
    """What is wrong with the grade buttons on screen: ``[]`` when all is right."""
    buttons = page.evaluate(BUTTONS)
    problems = []
    if [b["label"] for b in buttons] != names:  # every label complete, in grade order
        problems.append(f"labels {[b['label'] for b in buttons]}")
    if any(b["cut"] for b in buttons):  # and none wider than its button
        problems.append(f"cut {[b['label'] for b in buttons if b['cut']]}")
    if {b["kind"] for b in buttons} != {"pj-button"}:  # all the same type (the queue's own buttons)
        problems.append(f"kinds {sorted({b['kind'] for b in buttons})}")
    widths = [round(b["width"]) for b in buttons]
    if widths and max(widths) - min(widths) >= 2:  # and the same size
        problems.append(f"widths {widths}")
    if not all(0 <= b["left"] and b["right"] <= 1280 and b["bottom"] <= 800 for b in buttons):  # in the screenshot
        problems.append("outside 1280x800")
    return problems


def _check_buttons(page, names: list[str]) -> None:
    # the buttons are laid out in stages on a loaded machine (one was 262 px wide and another 101 px when
    # measured once): wait for the screen to be right, and fail naming what is still wrong
    wait_for_value(lambda: _button_problems(page, names), [], what="the grade buttons")


def test_graded_screen_shows_four_equal_full_labels_and_the_collections_graded_guide(graded_page):
    page = graded_page
    assert _shown(page) in ("d1", "d2", "d3")
    _check_buttons(page, GRADED_NAMES)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("screens · graded scale, 0-3").wait_for(timeout=30_000)
    for g, name in enumerate(GRADED_NAMES):
        expect(sidebar).to_contain_text(name, timeout=30_000)
        expect(sidebar).to_contain_text(f"Collection rule for grade {g}.", timeout=30_000)
    expect(sidebar).to_contain_text(CUSTOM_EXAMPLE, timeout=30_000)  # the admin's text literally: no bold, no italics
    wait_idle(page, 60_000, fresh=True)  # the guide is complete: what it lacks now, it lacks
    expect(sidebar.locator("b")).to_have_count(0, timeout=30_000)
    expect(sidebar).not_to_contain_text("Not relevant", timeout=30_000)
    path = screenshot(page, "annotate_graded", full_page=False)  # the 1280x800 an annotator sees
    assert path.stat().st_size > 10_000


def test_binary_screen_shows_the_binary_guide(server, small_page):
    page = small_page
    sign_in(page, server["url"], server["store"], BINARY_ANN)
    assert _shown(page) in ("d4", "d5")
    _check_buttons(page, BINARY_NAMES)
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("screens · binary scale").wait_for(timeout=30_000)
    for shown in ("0 · Not relevant", "1 · Relevant", "levels 2 and 3", "N not relevant, Y relevant"):
        expect(sidebar).to_contain_text(shown, timeout=30_000)
    wait_idle(page, 60_000, fresh=True)  # the guide is complete: what it lacks now, it lacks
    for other in ("Precisely answers", "Collection rule"):  # not the 0-3 guide
        expect(sidebar).not_to_contain_text(other, timeout=30_000)
    path = screenshot(page, "annotate_binary", full_page=False)
    assert path.stat().st_size > 10_000


def _press(page, key: str, gone: str) -> None:
    press_grade(page, key, MARKERS[gone])


def test_previous_relabels_by_keyboard_and_f_flags(server, graded_page):
    store = server["store"]
    page = graded_page
    first = _shown(page)
    _press(page, "2", first)
    second = _shown(page)
    assert _rows(store, GRADED_ANN) == [(first, "label", 2)]
    page.get_by_text("All your work: 1 of 3 labelled · 2 left").wait_for(timeout=30_000)

    _press(page, "p", second)  # back to the first item
    assert _shown(page) == first
    page.get_by_text("An earlier item (your label 2 · Partly satisfies)").wait_for(timeout=30_000)
    screenshot(page, "annotate_previous")
    _press(page, "3", first)  # a relabel: appended, and on to the new item
    assert _shown(page) == second
    assert _rows(store, GRADED_ANN) == [(first, "label", 2), (first, "label", 3)]

    _press(page, "f", second)  # flagged: not served again
    third = _shown(page)
    assert third not in (first, second)
    assert _rows(store, GRADED_ANN) == [(first, "label", 2), (first, "label", 3), (second, "flag", None)]
    _press(page, "0", third)
    page.get_by_text("Nothing left to label").wait_for(timeout=30_000)
    page.get_by_text("All your work: 2 of 3 labelled · 0 left · 1 flagged, with the reviewers").wait_for(timeout=30_000)
    assert _rows(store, GRADED_ANN)[-1] == (third, "label", 0)
