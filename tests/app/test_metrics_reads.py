"""The Metrics page reads the live final labels once per page run (issue 20: the page's run and its live
leaderboard fragment read them twice, 20,000 pairs each on the page-budget store); a refresh of the fragment
reads them afresh."""

from __future__ import annotations

import pytest

import db.resolution as resolution
from tests.app.apptest import open_as_admin
from tests.app.test_metrics_page import PAGE, _fresh_data_cache, seeded, seeded_file  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def test_one_page_run_reads_the_live_labels_once(seeded, monkeypatch):
    at = open_as_admin(seeded, PAGE)
    at.selectbox[1].select("live final labels").run()
    assert not at.exception and at.toggle(key="leaderboard_refresh").value is True  # the live board is drawn
    reads: list[str] = []
    real = resolution.live_qrels

    def counted(session, collection):
        reads.append(collection)
        return real(session, collection)

    monkeypatch.setattr(resolution, "live_qrels", counted)
    at.run()
    assert not at.exception
    assert reads == ["tiny *collection*"]
