"""The throwaway PostgreSQL clusters live on the shared-memory file system when the machine has room there."""

from __future__ import annotations

import os

from tests import pgcluster


def test_clusters_live_in_shared_memory_when_it_has_room(monkeypatch, tmp_path):
    monkeypatch.setattr(pgcluster, "SHARED_MEMORY", tmp_path)
    monkeypatch.setattr(pgcluster, "MIN_FREE_SHARED_MEMORY", 1)
    assert pgcluster.cluster_home() == tmp_path


def test_clusters_fall_back_to_the_system_tmp_without_room_or_shared_memory(monkeypatch, tmp_path):
    monkeypatch.setenv(pgcluster.SYSTEM_TMP, str(tmp_path / "system"))
    monkeypatch.setattr(pgcluster, "SHARED_MEMORY", tmp_path)
    stats = os.statvfs(tmp_path)
    monkeypatch.setattr(pgcluster, "MIN_FREE_SHARED_MEMORY", stats.f_bavail * stats.f_frsize + 1)  # a small tmpfs
    assert pgcluster.cluster_home() == tmp_path / "system"
    monkeypatch.setattr(pgcluster, "SHARED_MEMORY", tmp_path / "missing")
    assert pgcluster.cluster_home() == tmp_path / "system"
