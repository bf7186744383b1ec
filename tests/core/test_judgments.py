"""Replaying the append-only judgment log."""

import pytest

from core.judgments import Event, current_labels, labels_of


def test_relabel_undo_and_other_annotators():
    log = [
        Event("p", "ann", "label", 1),
        Event("p", "bob", "label", 3),
        Event("p", "ann", "label", 2),  # relabel
        Event("p", "ann", "flag"),
        Event("q", "ann", "label", 0),
        Event("p", "ann", "undo"),  # back to 1
        Event("q", "ann", "undo"),  # q withdrawn
        Event("q", "ann", "skip"),
    ]
    labels = current_labels(log)
    assert labels == {"p": {"ann": 1, "bob": 3}}
    assert labels_of(labels, "p") == [1, 3] and labels_of(labels, "q") == []


def test_undo_without_label_is_harmless_and_bad_events_are_errors():
    assert current_labels([Event("p", "ann", "undo")]) == {}
    with pytest.raises(ValueError, match="needs a grade"):
        current_labels([Event("p", "ann", "label")])
    with pytest.raises(ValueError, match="unknown judgment action"):
        current_labels([Event("p", "ann", "erase", 1)])
