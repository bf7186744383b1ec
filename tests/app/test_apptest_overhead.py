"""AppTest runs pay only for what a served app pays per request: the installed components are discovered once per
process and an unchanged page script is compiled once, as one Streamlit server does (tests/app/apptest_runtime.py)."""

from __future__ import annotations

import importlib.metadata
import os
import threading

import pytest
from streamlit.runtime.scriptrunner import script_cache
from streamlit.testing.v1 import AppTest, local_script_runner

ANNOTATE_QUEUE = "pooljudge.annotate_queue"  # the component pyproject.toml declares


@pytest.fixture
def distribution_scans(monkeypatch) -> list[int]:
    """Calls of ``importlib.metadata.distributions`` (Streamlit's component discovery reads every installed one)."""
    calls: list[int] = []
    real = importlib.metadata.distributions

    def counted(**kwargs):
        calls.append(1)
        return real(**kwargs)

    monkeypatch.setattr(importlib.metadata, "distributions", counted)
    return calls


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """The names of the scripts Streamlit's script cache compiles (the builtin ``compile``, shadowed in its module)."""
    names: list[str] = []

    def counted(source, filename, *args, **kwargs):
        names.append(os.path.basename(filename))
        return compile(source, filename, *args, **kwargs)

    monkeypatch.setattr(script_cache, "compile", counted, raising=False)
    return names


def test_components_are_discovered_once_per_process_and_each_app_test_registers_them(distribution_scans):
    first = AppTest.from_string("import streamlit as st\nst.write('one')").run()
    second = AppTest.from_string("import streamlit as st\nst.write('two')").run()
    assert [m.value for m in first.markdown] == ["one"] and [m.value for m in second.markdown] == ["two"]
    assert len(distribution_scans) <= 1  # 2 when every AppTest scanned all installed distributions
    for at in (first, second):
        manager = at._bidi_component_manager
        assert manager is not None
        definition = manager.get(ANNOTATE_QUEUE)
        assert definition is not None and definition.name == ANNOTATE_QUEUE


def test_an_unchanged_page_is_compiled_once(tmp_path, compiles):
    script = tmp_path / "unchanged_page.py"
    script.write_text("import streamlit as st\nst.write('unchanged')\n", encoding="utf-8")
    at = AppTest.from_file(str(script)).run()
    at.run()
    again = AppTest.from_file(str(script)).run()
    assert [m.value for m in at.markdown] == ["unchanged"] and [m.value for m in again.markdown] == ["unchanged"]
    assert compiles.count("unchanged_page.py") == 1  # 3 when every run compiled it


def test_a_changed_page_is_compiled_again(tmp_path, compiles):
    script = tmp_path / "changed_page.py"
    script.write_text("import streamlit as st\nst.write('before')\n", encoding="utf-8")
    at = AppTest.from_file(str(script)).run()
    assert [m.value for m in at.markdown] == ["before"]
    script.write_text("import streamlit as st\nst.write('after the edit')\n", encoding="utf-8")
    os.utime(script, ns=(script.stat().st_atime_ns, script.stat().st_mtime_ns + 1_000_000))
    assert [m.value for m in at.run().markdown] == ["after the edit"]
    assert [m.value for m in AppTest.from_file(str(script)).run().markdown] == ["after the edit"]
    assert compiles.count("changed_page.py") == 2


def test_a_run_is_awaited_without_polling(monkeypatch):
    """The test's thread sleeps until the script thread ends (a 1 ms polling loop took the GIL from the page)."""
    sleeps: list[float] = []
    real = local_script_runner.time.sleep

    def counted(seconds: float) -> None:
        if threading.current_thread() is threading.main_thread():
            sleeps.append(seconds)
        real(seconds)

    monkeypatch.setattr(local_script_runner.time, "sleep", counted)
    busy = "import time\nimport streamlit as st\nend = time.perf_counter() + 0.3\nwhile time.perf_counter() < end:\n    pass\nst.write('done')\n"
    at = AppTest.from_string(busy, default_timeout=30).run()
    assert [m.value for m in at.markdown] == ["done"]
    assert sleeps == []  # hundreds of 1 ms sleeps while the page ran


@pytest.mark.slow
def test_a_run_past_its_timeout_is_stopped_with_streamlits_error():
    slow = "import time\nfor _ in range(100):\n    time.sleep(0.05)\n"
    with pytest.raises(RuntimeError, match=r"AppTest script run timed out after 0.5\(s\)"):
        AppTest.from_string(slow, default_timeout=0.5).run()
