"""Issue 11, acceptance 3, in the real app: a zipped BEIR folder and a TREC run uploaded through the browser;
a collection archived and restored from the Manage page and from the CLI, its judgments intact."""

from __future__ import annotations

import re
import tempfile
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.labelling import record_judgment
from db.models import Assignment, Judgment
from db.pools import save_pool
from db.queries import import_history, list_collections, stored_qrels, stored_run
from db.resolution import freeze_qrels
from db.users import add_user
from tests.app.browser_helpers import (
    JOB_WAIT_MS,
    PASSWORD,
    choose,
    cli,
    open_page,
    screenshot,
    serve_sqlite,
    signed_in_page,
    wait_for_js,
)

pytestmark = pytest.mark.browser

ANNOTATORS = ("ann1", "ann2", "ann3")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server of its own (the test counts every judgment and import of the store, and archiving must hide
    nothing from the other browser tests), on a store with a collection 'labelled' whose pool 3 annotators
    have labelled."""
    folder = tmp_path_factory.mktemp("upload-archive")
    db = folder / "store.db"
    store = Store(sqlite_url(db))
    source = CollectionSource(
        passages=lambda: iter([Passage(f"d{i}", f"passage {i}") for i in range(4)]),
        queries=lambda: iter([Query("q1", "first query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        add_user(s, "admin", PASSWORD, "admin")
        ids = [add_user(s, name, PASSWORD, "annotator").id for name in ANNOTATORS]
        import_collection(s, source, name="labelled", format="t", location="m")
        save_pool(s, "labelled", "p", {"q1": {f"d{i}": [] for i in range(4)}}, method="depth")
        create_assignments(s, "labelled", "p", annotators=list(ANNOTATORS), seed=3)
    with store.write() as s:
        for uid in ids:
            for aid in s.scalars(select(Assignment.id).where(Assignment.user_id == uid).order_by(Assignment.id)):
                record_judgment(s, uid, aid, 2, elapsed_ms=700)
        freeze_qrels(s, "labelled", "v1")
    with serve_sqlite(db, folder / "streamlit.log") as url:
        yield {"url": url, "db": db, "store": store, "folder": folder}
    store.dispose()


@pytest.fixture(scope="module")
def admin_page(server, browser_contexts):
    """The admin, signed in once for the module's tests (neither needs a fresh session): each goes to its page
    through the sidebar, which switches pages without loading the app again."""
    with signed_in_page(browser_contexts, server["url"], server["store"], "admin") as page:
        yield page


def _judgments(store) -> int:
    with store.read() as s:
        return s.scalar(select(func.count()).select_from(Judgment))


def _collections(store) -> list[str]:
    with store.read() as s:
        return [c.name for c in list_collections(s)]


def _upload(page, path, fmt: str) -> None:
    page.locator('input[type="file"]').set_input_files(str(path))
    # the file travels to the server as soon as it is chosen: wait until the uploader lists it
    page.locator(f'[data-testid="stFileChipName"][title="{path.name}"]').wait_for(timeout=60_000)
    wait_for_js(page, "() => !document.querySelector('[data-testid=\"stFileChipIconSpinner\"]')", timeout=60_000)
    choose(page, page.get_by_role("combobox").first, f"{fmt}:", exact=False)


def test_upload_a_zipped_beir_folder_and_a_trec_run_through_the_browser(server, admin_page):
    page = admin_page
    folder = server["folder"]
    beir = folder / "scifact.zip"
    with zipfile.ZipFile(beir, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "scifact/corpus.jsonl",
            '{"_id": "u1", "text": "uploaded alpha"}\n'
            '{"_id": "u2", "text": "uploaded beta"}\n'
            '{"_id": "u3", "text": "uploaded gamma"}\n',
        )
        zf.writestr("scifact/queries.jsonl", '{"_id": "uq1", "text": "alpha?"}\n')
        zf.writestr("scifact/qrels/test.tsv", "query-id\tcorpus-id\tscore\nuq1\tu1\t1\nuq1\tu2\t0\n")
    run = folder / "bm25.trec"
    run.write_text("uq1 Q0 u1 1 2.5 bm25\nuq1 Q0 u3 2 1.5 bm25\n", encoding="utf-8")

    staging = set(Path(tempfile.gettempdir()).glob("pooljudge-upload-*"))
    open_page(page, "Import")
    _upload(page, beir, "beir")
    page.get_by_label("Collection name").fill("uploaded")
    page.get_by_role("button", name="Import").click()
    # (file names are not matched: md_escape may put word joiners into 'scifact.zip', which looks like a domain)
    done = page.get_by_text("→ uploaded: 3 passages, 1 queries, 2 qrels entries and 0 runs imported")
    done.first.wait_for(timeout=JOB_WAIT_MS)

    _upload(page, run, "trec-run")
    page.get_by_text("Merge into an existing collection").click()
    page.get_by_role("button", name="Import").click()
    page.get_by_text("→ uploaded: 0 passages, 0 queries, 0 qrels entries and 1 runs imported").first.wait_for(
        timeout=120_000
    )
    screenshot(page, "upload-import-done")
    store = server["store"]
    with store.read() as s:
        assert stored_qrels(s, "uploaded") == {"uq1": {"u1": 1, "u2": 0}}
        assert stored_run(s, "uploaded", "bm25") == {"uq1": {"u1": 2.5, "u3": 1.5}}
        assert [h["source"] for h in import_history(s)][:2] == ["upload: bm25.trec", "upload: scifact.zip"]
    # the staging folders are gone once the jobs finished
    assert set(Path(tempfile.gettempdir()).glob("pooljudge-upload-*")) - staging == set()


def test_archive_and_restore_a_collection_from_the_app_and_the_cli(server, admin_page):
    page, store = admin_page, server["store"]
    before = _judgments(store)
    assert before == 12
    with store.read() as s:
        frozen_before = stored_qrels(s, "labelled")
    open_page(page, "Manage")
    choose(page, page.get_by_role("combobox").first, "collection labelled")
    page.get_by_role("button", name="Archive").click()
    page.get_by_text("Archived collection labelled: hidden from every list, nothing deleted.").wait_for(timeout=60_000)
    page.locator('[data-testid="stDataFrame"]').first.wait_for(timeout=30_000)
    assert "labelled" not in _collections(store) and _judgments(store) == before
    screenshot(page, "manage-archived")
    page.get_by_text("Show archived items only").click()
    # the table of archived items says who archived the collection and when
    # (the grid is drawn on a canvas; its cells are also in an accessible table, read here)
    cells = page.locator('[data-testid="stDataFrame"] td[role="gridcell"]')
    # the grid fills its cells in stages: wait for each count, never take it once
    cells.filter(has_text=re.compile(r"^admin$")).first.wait_for(state="attached", timeout=30_000)
    expect(cells.filter(has_text=re.compile(r"^archived$"))).to_have_count(1, timeout=30_000)
    expect(cells.filter(has_text=re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d UTC$"))).to_have_count(1, timeout=30_000)
    screenshot(page, "manage-archived-only")
    choose(page, page.get_by_role("combobox").first, "collection labelled (archived)")
    page.get_by_role("button", name="Restore").click()
    page.get_by_text("Restored collection labelled.").wait_for(timeout=60_000)
    assert "labelled" in _collections(store) and _judgments(store) == before
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Collections overview", exact=True).click()
    page.get_by_role("heading", name="labelled").first.wait_for(timeout=60_000)

    db = server["db"]
    assert cli(db, "archive", "collection", "labelled").startswith("archived collection 'labelled'")
    assert "labelled" not in _collections(store) and _judgments(store) == before
    assert cli(db, "restore", "collection", "labelled") == "restored collection 'labelled'\n"
    assert "labelled" in _collections(store) and _judgments(store) == before
    with store.read() as s:
        assert stored_qrels(s, "labelled") == frozen_before
