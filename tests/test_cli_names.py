"""Names in the CLI: stored names printed escaped, bad names refused before anything is written."""

from __future__ import annotations

from sqlalchemy import insert, update

from db.engine import Store, sqlite_url
from db.models import Collection, QrelsVersion, RunRecord
from pooljudge.cli import main


def test_collections_prints_stored_names_escaped(tmp_path, capsys):
    db = sqlite_url(tmp_path / "s.db")
    store = Store(db)
    with store.write() as s:  # names stored before they were checked
        cid = s.execute(insert(Collection).values(name="evil\n\x1b[31mred\tcol", description="")).inserted_primary_key[0]
        s.execute(insert(RunRecord).values(collection_id=cid, name="run\r\x1b]0;title\x07", source="import", params={}))
        s.execute(insert(QrelsVersion).values(collection_id=cid, name="v\u202e1", source="import"))
    store.dispose()
    capsys.readouterr()
    assert main(["--db", db, "collections"]) == 0
    assert capsys.readouterr().out == (
        "evil\\n\\x1b[31mred\\tcol\t?\t0 passages\t0 queries\truns: run\\r\\x1b]0;title\\x07\tqrels: v\\u202e1\n"
    )
