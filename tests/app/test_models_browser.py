"""Issue 12, acceptance 4, in the real app: the Models page trains a small model as a background job whose
progress survives a page reload, then lists it with its held-out nDCG@10.

The toy collection goes into the shared server's store (``app_server``, whose jobs save models in a folder of
the test session's own) under a name of this module's own."""

from __future__ import annotations

import random
import re

import pytest
from playwright.sync_api import expect

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection
from db.jobs import list_jobs
from db.trained_models import list_models
from tests.app.browser_helpers import JOB_WAIT_MS, choose, screenshot, sign_in, wait_for_value

pytestmark = pytest.mark.browser

TOPICS = ("bread", "river", "market", "cat", "dog", "fish", "money", "music")
FILLER = ("the", "a", "of", "and", "is", "in", "at", "to", "on", "old", "new", "big", "small", "good", "very")
TEMPLATES = ("what about {kw}", "tell me of the {kw}", "{kw} please", "is a {kw} good")
VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    *sorted({*TOPICS, *FILLER, "what", "about", "tell", "me", "please", "?", "."}),
]
NAME = "toy-ce"
COLLECTION = "models-toy"
EPOCHS = 20  # 120 steps (about 0.3 CPU-s an epoch): moving steps for some seconds, through the reload


def _toy_source() -> CollectionSource:
    """8 topics, 3 passages each; 4 queries per topic, the last of each in dev; a query's topic passages relevant."""
    rng = random.Random(0)
    passages = []
    for topic in TOPICS:
        for j in range(3):
            words = [rng.choice(FILLER) for _ in range(rng.randint(4, 8))]
            words.insert(rng.randint(0, len(words)), topic)
            passages.append(Passage(f"p-{topic}-{j}", " ".join(words) + " ."))
    queries = [
        Query(f"q-{topic}-{i}", t.format(kw=topic), split="dev" if i == 3 else "train")
        for topic in TOPICS
        for i, t in enumerate(TEMPLATES)
    ]
    qrels = [QrelEntry(q.id, f"p-{q.id.split('-')[1]}-{j}", 2 if j == 0 else 1) for q in queries for j in range(3)]
    return CollectionSource(passages=lambda: iter(passages), queries=lambda: iter(queries), qrels=lambda: iter(qrels))


def _tiny_base(folder) -> None:
    """A 2-layer, 32-dim random BERT re-ranker (one logit) with a WordPiece vocabulary of the toy words."""
    from tests.tiny_models import write_tiny_bert

    write_tiny_bert(folder, VOCAB, head=True)


@pytest.fixture(scope="module")
def server(app_server, tmp_path_factory):
    """The shared server, its store holding the toy collection (train and dev queries, a qrels version), and a
    folder with the tiny base model."""
    folder = tmp_path_factory.mktemp("models-page")
    store = app_server["store"]
    with store.write() as s:
        import_collection(s, _toy_source(), name=COLLECTION, format="t", location="m", qrels_name="gold")
    _tiny_base(folder / "tiny-base")
    return {"url": app_server["url"], "store": store, "folder": folder}


def _number(page, label: str, value) -> None:
    box = page.get_by_label(label, exact=True)
    box.fill(str(value))
    box.press("Tab")  # a number input takes its value when it loses focus


def _check_model_row(page, model) -> None:
    """The table row of ``model`` (a canvas grid, also drawn as an accessible table) with its held-out metrics."""
    cells = page.locator('[data-testid="stDataFrame"] td[role="gridcell"]')
    cells.filter(has_text=re.compile(f"^{NAME}$")).first.wait_for(state="attached", timeout=60_000)

    def row_filled() -> bool:  # the grid fills its cells in stages: read the row once every value is in
        row = cells.all_text_contents()
        return len(row) >= 6 and row[:2] == [NAME, "cross-encoder"] and all(c.strip() for c in row[2:6])

    wait_for_value(row_filled, True, what="the trained model's row")
    row = cells.all_text_contents()
    # (the accessible table holds the cells' values, of the columns in view; the canvas draws them as %.4f)
    assert float(row[2]) == pytest.approx(model.best["eval"]["nDCG@10"])
    assert float(row[3]) == pytest.approx(model.best["eval"]["MRR@10"])
    assert float(row[4]) == pytest.approx(model.params["seconds"])
    assert float(row[5]) == pytest.approx(model.params["pairs_per_second"])


def test_train_a_model_in_the_background_through_a_reload(server, page):
    folder, store = server["folder"], server["store"]
    # signed in on the page
    sign_in(page, server["url"], server["store"], "admin", path=f"/models?collection={COLLECTION}")
    page.get_by_text("No trained models yet.").wait_for(timeout=60_000)
    # the default kind comes first; this test trains a re-ranker (the kind reruns the page: the form changes)
    choose(page, page.get_by_role("combobox", name="Kind"), "Cross-encoder re-ranker")
    page.get_by_text("Loss", exact=True).wait_for(timeout=30_000)
    page.get_by_label("Model name").fill(NAME)
    choose(page, page.get_by_role("combobox", name="Base model"), "a local model folder (path below)")
    page.get_by_label("Local model folder").fill(str(folder / "tiny-base"))
    # enough steps (24 training queries, 6 batches an epoch) to watch the progress for some seconds
    _number(page, "Epochs", EPOCHS)
    _number(page, "Batch size", 4)
    _number(page, "Max length (tokens)", 32)
    _number(page, "Hard negatives per query", 3)
    _number(page, "Early-stopping patience (held-out evaluations without a gain)", 1000)
    page.get_by_role("button", name="Start training").click()

    running = re.compile(r"Job \d+ · cross-encoder toy-ce: training \(step \d+/\d+\)")
    moving = re.compile(r"Job \d+ · cross-encoder toy-ce: training \(step [1-9]\d*/\d+\)")
    page.get_by_text(moving).first.wait_for(timeout=JOB_WAIT_MS)  # steps counted while it trains
    screenshot(page, "models-page-progress")
    with store.read() as s:
        [job] = list_jobs(s, kind="train")
    assert job.params["name"] == NAME and job.params["base_model"] == str(folder / "tiny-base")
    assert job.params["config"]["epochs"] == EPOCHS and job.params["eval_split"] == "dev"

    page.reload()  # the job lives in the store: the new session finds it again (the session cookie signs it in)
    page.get_by_role("heading", name="Models").first.wait_for(timeout=60_000)
    finished = re.compile(r"Job \d+ · cross-encoder toy-ce: model toy-ce trained; held-out nDCG@10 \d\.\d{4}")
    page.get_by_text(re.compile(f"{running.pattern}|{finished.pattern}")).first.wait_for(timeout=120_000)
    page.get_by_text(finished).first.wait_for(timeout=JOB_WAIT_MS)

    with store.read() as s:
        [model] = list_models(s, COLLECTION)
    assert (model.name, model.kind, model.job_id) == (NAME, "cross-encoder", job.id)
    _check_model_row(page, model)
    page.get_by_text(f"rerank:model={NAME},first=bm25,depth=100").wait_for(timeout=30_000)
    page.locator(".gtitle", has_text=f"Training loss: {NAME}").wait_for(timeout=30_000)
    page.locator(".gtitle", has_text=f"Held-out metrics: {NAME}").wait_for(timeout=30_000)
    page.get_by_text("No training job running.").wait_for(timeout=30_000)
    expect(page.locator("body")).to_contain_text("Trained models", timeout=30_000)
    expect(page.locator("body")).to_contain_text(model.path, timeout=30_000)
    page.set_viewport_size({"width": 1400, "height": 2000})  # the app scrolls inside: a tall window shows the curves
    screenshot(page, "models-page")
