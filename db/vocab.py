"""The closed sets of values the store keeps in text columns: roles, purposes, statuses, actions, kinds.

Each set is a :class:`enum.StrEnum`, so a member *is* its string: ``Role.ADMIN == "admin"``, it is stored,
compared and JSON-encoded as the plain value, and rows written before the enums existed read back unchanged.
Product code names the members instead of spelling the strings, so a typo fails at import time and a
search for a value finds every use.

Where a column has a ``CHECK`` constraint, :func:`check_in` writes it from the enum (:mod:`db.models`), and
``tests/db/test_vocab.py`` compares each enum with the constraint the migrations created: adding a member
without a migration that widens the constraint fails that test.

A leaf of ``db``: it imports nothing from the project.
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    """An account's role (``users.role``): what the account may do."""

    ADMIN = "admin"
    REVIEWER = "reviewer"
    ANNOTATOR = "annotator"


class Purpose(StrEnum):
    """Why an assignment exists (``assignments.purpose``)."""

    LABEL = "label"
    """One of the three independent labels of a pooled pair, inside a package."""
    FOURTH = "fourth"
    """The fourth annotator of a pair whose three labels all differ (adjudication)."""
    QC = "qc"
    """A reviewer's label of a pair sampled into a QC round; it never decides the final label."""


class PackageStatus(StrEnum):
    """Where a package is in quality control (``packages.status``)."""

    OPEN = "open"
    SUBMITTED = "submitted"
    IN_QC = "in_qc"
    REVISE = "revise"
    PASSED = "passed"


class QcRoundStatus(StrEnum):
    """A QC round's state (``qc_rounds.status``): still being reviewed, or its decision."""

    REVIEWING = "reviewing"
    PASSED = "passed"
    REVISE = "revise"


class JudgmentAction(StrEnum):
    """What a row of the append-only judgment log records (``judgments.action``)."""

    LABEL = "label"
    UNDO = "undo"
    SKIP = "skip"
    FLAG = "flag"


class FinalLabelMethod(StrEnum):
    """How a final label was reached (``final_labels.method``).

    The first five are :data:`core.resolution.METHODS`; ``imported`` marks labels read from a qrels file.
    """

    UNANIMOUS = "unanimous"
    MAJORITY = "majority"
    ADJUDICATED = "adjudicated"
    EXCLUDED = "excluded"
    OVERRIDDEN = "overridden"
    IMPORTED = "imported"


class ModelKind(StrEnum):
    """What the ``train`` job trains (``trained_models.kind``): a re-ranker, a dense encoder, or both jointly."""

    CROSS_ENCODER = "cross-encoder"
    DUAL_ENCODER = "dual-encoder"
    ROCKETQAV2 = "rocketqav2"


class JobStatus(StrEnum):
    """A background job's state (``jobs.status``)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Visibility(StrEnum):
    """``status`` of collections, runs and qrels versions: an import stages rows while ``importing``.

    Only ``ready`` ones are shown; the import makes its container ``ready`` in one short transaction.
    """

    READY = "ready"
    IMPORTING = "importing"


def check_in(column: str, values: type[StrEnum]) -> str:
    """The SQL of a ``CHECK`` that ``column`` holds one of the enum's values, in the enum's order.

    Parameters
    ----------
    column : str
        The column's name, as written in the table.
    values : type[StrEnum]
        The enum whose values the column may hold.

    Returns
    -------
    str
        ``"<column> IN ('a', 'b', ...)"``.

    Examples
    --------
    >>> check_in("role", Role)
    "role IN ('admin', 'reviewer', 'annotator')"
    """
    # the values are identifiers written here, never user input; quoting is checked all the same
    if any("'" in member.value for member in values):
        raise ValueError(f"{values.__name__} has a value with a quote; it cannot go into a CHECK constraint")
    quoted = ", ".join(f"'{member.value}'" for member in values)
    return f"{column} IN ({quoted})"
