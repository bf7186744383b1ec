"""db.access: the account check every write makes, as a leaf of db (issue 23: no import circle through it)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import db.access
import db.assignments
import db.labelling
import db.package_qc
import db.resolution
from db.access import (
    ADMIN_ROLES,
    ANY_LABEL_ROLE,
    REVIEW_ROLES,
    Forbidden,
    SignedOut,
    StaleSubmission,
    labelling_account,
    require_account,
)
from db.users import add_user, set_active, set_role

ROOT = Path(__file__).resolve().parents[2]


def _first_party_imports(path: Path) -> set[str]:
    """Every ``db``/``pooljudge``/``views`` module a file imports, at module level or inside functions."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.split(".")[0] in ("db", "pooljudge", "views")}


def test_access_is_a_leaf_of_db():
    # db.vocab (the enums of roles and statuses) imports nothing from the project
    assert _first_party_imports(ROOT / "db" / "access.py") == {"db.models", "db.vocab"}
    assert _first_party_imports(ROOT / "db" / "vocab.py") == set()


def test_the_annotation_workflow_defines_no_account_check_of_its_own():
    # one definition: the errors raised by the workflow are the ones callers catch from db.access
    workflow = [db.assignments, db.labelling, db.resolution, db.package_qc]
    for module in workflow:
        tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
        assert defined & {"Forbidden", "SignedOut", "StaleSubmission", "require_account", "labelling_account"} == set()
        assert not hasattr(module, "_labelling_account")


@pytest.mark.parametrize(
    ("module", "private"),
    [("db/rework.py", "_labelling_account"), ("db/rework.py", "_standing"), ("db/qc_rounds.py", "_own_log")],
)
def test_no_private_name_of_the_annotation_workflow_is_imported(module, private):
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    taken = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    assert private not in taken


def test_the_refusals_are_forbidden():
    assert issubclass(SignedOut, Forbidden) and issubclass(StaleSubmission, Forbidden)
    assert issubclass(Forbidden, PermissionError)
    assert ANY_LABEL_ROLE == ("admin", "annotator", "reviewer")


def test_require_account_reads_the_account_in_the_write(store):
    with store.write() as s:
        admin = add_user(s, "boss", "pw-boss-123", "admin")
        ann = add_user(s, "ann", "pw-ann-1234", "annotator")
    with store.write() as s:
        assert require_account(s, admin.id, ADMIN_ROLES).username == "boss"
        assert labelling_account(s, ann.id).username == "ann"
        with pytest.raises(SignedOut, match="this annotator account may not override labels; nothing was stored"):
            require_account(s, ann.id, REVIEW_ROLES, action="override labels")
        with pytest.raises(SignedOut, match="signed out"):
            require_account(s, None, ADMIN_ROLES)
        with pytest.raises(SignedOut, match="signed out"):
            require_account(s, 10_000, ADMIN_ROLES)
    with store.write() as s:
        set_active(s, "ann", False)
        set_role(s, "boss", "reviewer")
    with store.write() as s:
        with pytest.raises(SignedOut, match="disabled or removed"):
            labelling_account(s, ann.id)
        with pytest.raises(SignedOut, match="this reviewer account may not do this"):
            require_account(s, admin.id, ADMIN_ROLES)
        assert require_account(s, admin.id, REVIEW_ROLES).role == "reviewer"


@pytest.mark.slow
def test_callers_import_the_check_from_access():
    # the errors are caught by pages and the CLI: one class each, whichever module raised it
    assert db.access.Forbidden.__module__ == "db.access"
    for path in [*(ROOT / "db").glob("*.py"), *(ROOT / "views").glob("*.py"), *(ROOT / "pooljudge").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in {
                "db.assignments",
                "db.labelling",
                "db.resolution",
                "db.package_qc",
            }:
                names = {a.name for a in node.names}
                assert not names & {"Forbidden", "SignedOut", "StaleSubmission", "require_account"}, path.name
