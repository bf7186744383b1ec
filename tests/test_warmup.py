"""pooljudge.ui.warmup: the page scripts' top-level imports, read from the scripts and imported once per process."""

from __future__ import annotations

import inspect
import sys
import threading
import time

import pytest

import pooljudge.ui.warmup as warmup
from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.pools import save_pool
from db.users import add_user


def test_the_imports_are_read_from_the_scripts(tmp_path):
    (tmp_path / "a.py").write_text(
        "import json\nimport os.path as p\nfrom collections import abc\nfrom . import sibling\n"
        "def page():\n    import tomllib\n"
    )
    (tmp_path / "b.py").write_text("import json, email.mime\nfrom core.scale import GRADES\n")
    assert warmup.page_imports(tmp_path) == ["json", "os.path", "collections", "email.mime", "core.scale"]


def test_the_real_pages_import_what_they_draw_with():
    names = warmup.page_imports()
    assert {"pandas", "streamlit", "core.analysis", "pooljudge.ui.auth", "pooljudge.ui.background"} <= set(names)
    assert not any(name.startswith("views") for name in names)


def test_a_failed_import_is_reported_and_the_others_still_load(monkeypatch):
    monkeypatch.delitem(sys.modules, "xml.dom.minidom", raising=False)
    failed = warmup.warm_up(["no_such_module_for_warmup", "xml.dom.minidom"])
    assert list(failed) == ["no_such_module_for_warmup"]
    assert failed["no_such_module_for_warmup"].startswith("ModuleNotFoundError: ")
    assert "xml.dom.minidom" in sys.modules


def test_the_thread_starts_once_per_process(tmp_path, monkeypatch):
    (tmp_path / "page.py").write_text("import xml.sax.saxutils\n")
    monkeypatch.delitem(sys.modules, "xml.sax.saxutils", raising=False)
    monkeypatch.setattr(warmup, "_started", None)
    segmenter = []
    monkeypatch.setattr(warmup, "warm_segmenter", lambda: segmenter.append(sys.modules.get("xml.sax.saxutils")))
    thread = warmup.start(tmp_path)
    assert thread is not None and thread.daemon
    thread.join(60)
    assert "xml.sax.saxutils" in sys.modules
    assert segmenter == [sys.modules["xml.sax.saxutils"]]  # after the imports
    assert warmup.start(tmp_path) is None  # a second call (another rerun, another session) starts nothing


@pytest.mark.parametrize("value", ["off", "OFF", "0", "no", "false"])
def test_pooljudge_warmup_off_starts_no_thread(tmp_path, monkeypatch, value):
    """A server that serves a few pages (a kiosk for annotators, a test's server) skips importing every page's
    modules (about 5 CPU-s at each start): its pages import what they need on their first visit."""
    (tmp_path / "page.py").write_text("import xml.sax.handler\n")
    monkeypatch.delitem(sys.modules, "xml.sax.handler", raising=False)
    monkeypatch.setattr(warmup, "_started", None)
    monkeypatch.setattr(warmup, "warm_segmenter", lambda: None)  # not the app's store
    monkeypatch.setenv("POOLJUDGE_WARMUP", value)
    before = {t.name for t in threading.enumerate()}
    assert warmup.start(tmp_path) is None
    assert "pooljudge-warmup" not in {t.name for t in threading.enumerate()} - before
    assert "xml.sax.handler" not in sys.modules
    monkeypatch.setenv("POOLJUDGE_WARMUP", "on")  # anything else: the warm-up runs
    thread = warmup.start(tmp_path)
    assert thread is not None
    thread.join(60)
    assert "xml.sax.handler" in sys.modules


@pytest.fixture
def probe_module(tmp_path, monkeypatch):
    """The name of a module not imported yet, on the path (``VALUE = 1``)."""
    (tmp_path / "warm_probe_module.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "warm_probe_module", raising=False)
    return "warm_probe_module"


def test_the_warm_up_waits_while_a_page_is_drawn(probe_module, page_run):
    """An import holds the interpreter's lock: the warm-up takes the next module only when no page run is going on."""
    warming = threading.Thread(target=warmup.warm_up, args=([probe_module],), kwargs={"patience_s": 60})
    warming.start()
    time.sleep(0.5)
    assert probe_module not in sys.modules  # waiting for the page run
    page_run.set()
    warming.join(60)
    assert not warming.is_alive() and sys.modules[probe_module].VALUE == 1


def test_the_warm_up_stops_waiting_after_its_patience(probe_module, page_run):
    """A server that draws pages without a pause (a refresher every second) still gets its imports done."""
    started = time.monotonic()
    assert warmup.warm_up([probe_module], patience_s=0.3) == {}
    assert time.monotonic() - started >= 0.3 and sys.modules[probe_module].VALUE == 1


def test_streamlit_still_names_its_page_run_thread_so():
    from streamlit.runtime.scriptrunner import script_runner

    assert f'name="{warmup.SCRIPT_THREAD}"' in inspect.getsource(script_runner.ScriptRunner.start)


def _collection(store, name: str, language: str, assign: bool) -> None:
    source = CollectionSource(
        passages=lambda: iter([Passage("d1", "a passage", language=language)]),
        queries=lambda: iter([Query("q1", "a query", language=language)]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name=name, format="t", location="m")
        if assign:
            save_pool(s, name, "p", {"q1": {"d1": []}}, method="depth")
            create_assignments(s, name, "p", annotators=["ann"], per_pair=1, seed=1)


@pytest.fixture
def highlighted(monkeypatch):
    """The texts the warm-up highlights (the real highlighter would load jieba's dictionary)."""
    calls: list[tuple] = []
    monkeypatch.setattr("pooljudge.ui.highlight.highlighted_html", lambda *args: calls.append(args))
    return calls


def test_jieba_is_loaded_when_annotators_may_get_text_that_is_not_english(store, highlighted):
    with store.write() as s:
        add_user(s, "ann", "correct horse", "annotator")
    _collection(store, "zh-unassigned", "zh", assign=False)
    assert warmup.warm_segmenter(store.url) is False  # nothing assigned: nothing to highlight
    assert highlighted == []
    _collection(store, "en", "en", assign=True)
    # the check reads the store's languages, not each assignment's: a Chinese collection counts once anything is
    # assigned
    assert warmup.warm_segmenter(store.url) is True
    assert highlighted == [("埃菲尔铁塔有多高", "埃菲尔铁塔高330米", "zh")]


def test_an_english_store_loads_no_jieba(store, highlighted):
    with store.write() as s:
        add_user(s, "ann", "correct horse", "annotator")
    _collection(store, "en", "en", assign=True)
    assert warmup.warm_segmenter(store.url) is False
    assert highlighted == []


def test_a_store_that_cannot_be_read_yet_is_left_to_the_page(tmp_path, highlighted):
    assert warmup.warm_segmenter(f"sqlite:///{tmp_path / 'new.db'}") is False  # no tables: the app migrates it
    assert highlighted == []


def test_the_highlighter_s_patterns_are_built_after_the_imports(tmp_path, monkeypatch):
    """The word patterns of every highlight (a table of Unicode's combining marks, then the regular expressions:
    0.2 s of CPU) were built on the first page that marked a query term: the first Ranked list switch's server run
    spent 0.2 of its 0.49 s on them."""
    import core.text

    core.text._patterns.cache_clear()
    core.text._combining_class.cache_clear()
    (tmp_path / "page.py").write_text("import json\n")
    monkeypatch.setattr(warmup, "_started", None)
    monkeypatch.setattr(warmup, "warm_segmenter", lambda: None)
    thread = warmup.start(tmp_path)
    assert thread is not None
    thread.join(60)
    assert core.text._patterns.cache_info().currsize == 1


def test_the_warmed_heap_is_frozen_out_of_the_collector_last(tmp_path, monkeypatch):
    """The imports leave about 300,000 objects that live as long as the server; every full collection walked them
    all, holding the interpreter's lock 370-400 ms (seen in the page-budget benchmark's server, each time a page
    run waited as long).  Frozen, the collector leaves them out."""
    import gc

    (tmp_path / "page.py").write_text("import xml.sax.saxutils\n")
    monkeypatch.setattr(warmup, "_started", None)
    order: list[str] = []
    monkeypatch.setattr(warmup, "warm_segmenter", lambda: order.append(f"segmenter, {gc.get_freeze_count()} frozen"))
    gc.unfreeze()
    try:
        warmup.start(tmp_path).join(60)
        assert order == ["segmenter, 0 frozen"] and gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()
