"""pooljudge.ui.warmup: the page scripts' top-level imports, read from the scripts and imported once per process."""

from __future__ import annotations

import sys

import pooljudge.ui.warmup as warmup


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
    thread = warmup.start(tmp_path)
    assert thread is not None and thread.daemon
    thread.join(60)
    assert "xml.sax.saxutils" in sys.modules
    assert warmup.start(tmp_path) is None  # a second call (another rerun, another session) starts nothing
