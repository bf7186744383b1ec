"""The enums of db.vocab, the CHECK constraints db.models writes from them, and what the migrations created."""

from __future__ import annotations

import re
from enum import StrEnum
from pathlib import Path

import pytest
from sqlalchemy import CheckConstraint, text

from core.resolution import METHODS
from db import models, vocab
from db.engine import Store, sqlite_url

# (table, constraint name, column, enum): every CHECK of the schema that limits a column to a closed set
CHECKED = [
    ("users", "ck_users_role", "role", vocab.Role),
    ("packages", "ck_packages_status", "status", vocab.PackageStatus),
    ("qc_rounds", "ck_qc_rounds_status", "status", vocab.QcRoundStatus),
    ("judgments", "ck_judgments_action", "action", vocab.JudgmentAction),
    ("final_labels", "ck_final_labels_method", "method", vocab.FinalLabelMethod),
    ("trained_models", "ck_trained_models_kind", "kind", vocab.ModelKind),
    ("jobs", "ck_jobs_status", "status", vocab.JobStatus),
]


def allowed_values(sql: str, column: str) -> list[str]:
    """The quoted values of ``<column> IN (...)`` in ``sql``, in order; refuses SQL without one."""
    found = re.search(rf"\b{column}\s+IN\s*\(([^)]*)\)", sql)
    if found is None:
        raise AssertionError(f"no '{column} IN (...)' in {sql!r}")
    return re.findall(r"'([^']*)'", found.group(1))


def model_check(table: str, name: str) -> CheckConstraint:
    constraints = [
        c for c in models.Base.metadata.tables[table].constraints if isinstance(c, CheckConstraint) and c.name == name
    ]
    assert len(constraints) == 1, f"{table} has {len(constraints)} CHECK constraints named {name}"
    return constraints[0]


@pytest.fixture(scope="module")
def migrated_tables(tmp_path_factory) -> dict[str, str]:
    """``{table: CREATE TABLE sql}`` of a SQLite store migrated to the head revision."""
    store = Store(sqlite_url(tmp_path_factory.mktemp("vocab") / "s.db"))
    try:
        with store.engine.connect() as conn:
            rows = conn.execute(text("select name, sql from sqlite_master where type = 'table'")).all()
    finally:
        store.dispose()
    return {name: sql for name, sql in rows}


def test_enum_members_equal_their_stored_strings():
    assert vocab.Role.ADMIN == "admin" and f"{vocab.Role.ADMIN}" == "admin"
    assert [str(m) for m in vocab.Purpose] == ["label", "fourth", "qc"]
    assert [str(m) for m in vocab.PackageStatus] == ["open", "submitted", "in_qc", "revise", "passed"]
    assert [str(m) for m in vocab.JobStatus] == ["queued", "running", "done", "failed", "cancelled"]
    assert [str(m) for m in vocab.Visibility] == ["ready", "importing"]


@pytest.mark.parametrize(("table", "name", "column", "enum"), CHECKED, ids=[c[1] for c in CHECKED])
def test_model_constraint_is_generated_from_the_enum(table, name, column, enum):
    constraint = model_check(table, name)
    assert str(constraint.sqltext) == vocab.check_in(column, enum)
    assert allowed_values(str(constraint.sqltext), column) == [m.value for m in enum]


@pytest.mark.parametrize(("table", "name", "column", "enum"), CHECKED, ids=[c[1] for c in CHECKED])
def test_migrated_schema_allows_exactly_the_enum_values(migrated_tables, table, name, column, enum):
    sql = migrated_tables[table]
    assert name in sql
    assert sorted(allowed_values(sql, column)) == sorted(m.value for m in enum)


def test_every_check_of_the_models_is_covered():
    named = {
        (table.name, c.name)
        for table in models.Base.metadata.tables.values()
        for c in table.constraints
        if isinstance(c, CheckConstraint) and " IN (" in str(c.sqltext)
    }
    assert named == {(t, n) for t, n, _c, _e in CHECKED}


def test_a_member_without_a_migration_is_told_apart(migrated_tables):
    widened = StrEnum("Role", {"ADMIN": "admin", "REVIEWER": "reviewer", "ANNOTATOR": "annotator", "GUEST": "guest"})
    assert sorted(allowed_values(migrated_tables["users"], "role")) != sorted(m.value for m in widened)
    assert allowed_values(vocab.check_in("role", widened), "role") == ["admin", "reviewer", "annotator", "guest"]


def test_a_quote_cannot_reach_a_constraint():
    bad = StrEnum("Bad", {"X": "it's"})
    with pytest.raises(ValueError, match="Bad has a value with a quote"):
        vocab.check_in("x", bad)


def test_the_store_enum_extends_the_resolution_methods():
    assert [m.value for m in vocab.FinalLabelMethod][: len(METHODS)] == list(METHODS)
    assert {m.value for m in vocab.FinalLabelMethod} - set(METHODS) == {"imported"}


def test_models_spell_no_value_list_of_their_own():
    source = Path(models.__file__).read_text(encoding="utf-8")
    assert re.findall(r"IN \('", source) == []


def test_model_tuples_come_from_the_enums():
    assert all(isinstance(role, vocab.Role) for role in models.ROLES)
    assert models.ROLES == tuple(vocab.Role)
    assert models.JOB_STATES == tuple(vocab.JobStatus)
    assert models.PACKAGE_STATES == tuple(vocab.PackageStatus)
    assert models.MODEL_KINDS == tuple(vocab.ModelKind)
    assert models.FINAL_LABEL_METHODS == tuple(vocab.FinalLabelMethod)
    assert models.VISIBILITY == tuple(vocab.Visibility)
