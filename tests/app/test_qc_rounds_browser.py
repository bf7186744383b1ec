"""Acceptance 3 (issue 20): QC round 2 reviews only new items plus the label the annotator kept, by a new reviewer.

Round 1 samples five of ann1's ten items and finds all five wrong; on the rework screen ann1 relabels four and
keeps one, then resubmits.  The admin starts round 2 on the Admin page with the form's defaults (seed 0, every
reviewer): it samples the five items round 1 did not, plus the kept one, which goes only to rev3 (rev1 and rev2
reviewed it in round 1); rev3's Annotate page shows it with ann1's label and note, and rev3's label alone
decides it.  Setup that is not the point (labels, reviews, closing round 1) goes through the library.
"""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from core.qc import round_seed, sample_for_qc
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.labelling import next_item, record_judgment
from db.models import Assignment, Package, PassageRecord, QcItem, QcRound, User
from db.package_qc import close_qc_round, start_qc_round
from tests.app.browser_helpers import add_accounts, import_pooled, screenshot, serve_sqlite, sign_in, wait_idle

pytestmark = pytest.mark.browser

DOCS = [f"d{i}" for i in range(10)]
PASSAGES = {d: f"Passage number {i} about the tower, marker {d}x." for i, d in enumerate(DOCS)}
TRUTH = {d: (3 if i % 2 else 0) for i, d in enumerate(DOCS)}
WRONG = 1  # differs from every true grade


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # a server of its own: the Admin page's QC form offers every finished package of the store by default
    folder = tmp_path_factory.mktemp("qc_rounds")
    db = folder / "pooljudge.db"
    store = Store(sqlite_url(db))
    accounts = {"admin": "admin", "rev1": "reviewer", "rev2": "reviewer", "rev3": "reviewer", "ann1": "annotator"}
    with store.write() as s:
        import_pooled(s, {d: ("q1", t) for d, t in PASSAGES.items()}, {"q1": "how tall is the tower"})
        ids = add_accounts(s, accounts)
        create_assignments(s, "tower", "p", annotators=["ann1"], per_pair=1, seed=3, package_size=10)
    with serve_sqlite(db, folder / "streamlit.log") as url:
        yield {"url": url, "store": store, "ids": ids}
    store.dispose()


def _doc(s, assignment_id: int) -> str:
    return s.get_one(PassageRecord, s.get_one(Assignment, assignment_id).passage_id).ext_id


def _review(store, user_id: int, grades: dict[str, int]) -> list[str]:
    served: list[str] = []
    while True:
        with store.read() as s:
            item = next_item(s, user_id)
            if item is None:
                return served
            doc = _doc(s, item.assignment_id)
        served.append(doc)
        with store.write() as s:
            record_judgment(s, user_id, item.assignment_id, grades[doc])


def _failed_round_one(store, ids) -> tuple[int, dict[str, int], list[str]]:
    """ann1 labels the five items round 1 will sample wrong, the rest right; rev1 and rev2 review; round 1 fails."""
    with store.read() as s:
        package = s.scalar(select(Package.id).where(Package.user_id == ids["ann1"]))
        rows = s.execute(
            select(Assignment.id, PassageRecord.ext_id, Assignment.query_id, Assignment.passage_id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(Assignment.package_id == package)
        ).all()
    own = {doc: aid for aid, doc, _q, _p in rows}
    keys = {(str(q), str(p)): doc for _aid, doc, q, p in rows}
    sampled = sorted(keys[k] for k in sample_for_qc(list(keys), size=5, seed=round_seed(0, "ann1-p001", 1)))
    for doc, aid in own.items():
        with store.write() as s:
            record_judgment(s, ids["ann1"], aid, WRONG if doc in sampled else TRUTH[doc])
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=5)
    for rev in ("rev1", "rev2"):
        assert sorted(_review(store, ids[rev], TRUTH)) == sampled
    with store.write() as s:
        assert close_qc_round(s, round1)["decision"] == "revise"
    return package, own, sampled


def _rework(ann, own: dict[str, int], sampled: list[str], kept: str) -> None:
    """On the rework screen: relabel four items with the truth, keep ``kept``, resubmit."""
    ann.get_by_text("Rework: package ann1-p001").wait_for(timeout=60_000)
    ann.get_by_text("0 of 5 disputed items answered").wait_for(timeout=60_000)
    ann.get_by_text("plus each label you kept", exact=False).wait_for(timeout=60_000)
    for n, doc in enumerate(sampled, start=1):
        wait_idle(ann, 60_000, fresh=True)
        box = ann.locator(f".st-key-rework-item-{own[doc]}")
        if doc == kept:
            box.get_by_role("button", name="Keep my label").click()
        else:
            box.get_by_role("button", name=re.compile(rf"^{TRUTH[doc]} · ")).click()
        ann.get_by_text(f"{n} of 5 disputed items answered").wait_for(timeout=60_000)
    wait_idle(ann, 60_000, fresh=True)
    ann.get_by_role("button", name="Resubmit package ann1-p001").click()
    ann.get_by_text("Package ann1-p001 resubmitted for quality control.").wait_for(timeout=60_000)


def _round_two(store, package: int) -> tuple[int, set[str], dict[str, list[str]]]:
    """Round 2's id, its sampled docs and who reviews each."""
    with store.read() as s:
        qc_round = s.scalar(select(QcRound).where(QcRound.package_id == package, QcRound.round_no == 2))
        docs = set(
            s.scalars(
                select(PassageRecord.ext_id)
                .join(QcItem, QcItem.passage_id == PassageRecord.id)
                .where(QcItem.qc_round_id == qc_round.id)
            )
        )
        reviewers: dict[str, list[str]] = {}
        for doc, user in s.execute(
            select(PassageRecord.ext_id, User.username)
            .join(Assignment, Assignment.passage_id == PassageRecord.id)
            .join(User, User.id == Assignment.user_id)
            .where(Assignment.package == "qc-ann1-p001-r2")
            .order_by(User.username)
        ):
            reviewers.setdefault(doc, []).append(user)
        return qc_round.id, docs, reviewers


def test_round_two_reviews_new_items_and_the_kept_label_by_a_new_reviewer(server, new_page):
    store, ids = server["store"], server["ids"]
    package, own, sampled = _failed_round_one(store, ids)
    kept = sampled[0]

    ann = new_page()
    sign_in(ann, server["url"], server["store"], "ann1")
    _rework(ann, own, sampled, kept)

    # round 2 from the Admin page's form, defaults untouched (seed 0, every reviewer)
    admin = new_page()
    # straight to the Admin page: the Home page never runs
    sign_in(admin, server["url"], server["store"], "admin", path="/admin")
    admin.get_by_role("heading", name="Admin").first.wait_for(timeout=60_000)
    admin.get_by_role("tab", name="Quality control").click()
    admin.get_by_role("button", name="Start QC round").click()
    admin.get_by_text("6 items, none reviewed in an earlier round", exact=False).wait_for(timeout=60_000)
    _round2, docs, reviewers = _round_two(store, package)
    fresh = sorted(set(DOCS) - set(sampled))
    assert docs == set(fresh) | {kept}
    assert reviewers[kept] == ["rev3"]  # rev1 and rev2 reviewed it in round 1
    assert all(reviewers[d] == ["rev1", "rev2", "rev3"] for d in fresh)

    # rev3 sees the kept item first, with ann1's label and note
    rev3 = ann  # the browser ann1 is done with (sign_in replaces its cookies: a session of its own), its cache warm
    sign_in(rev3, server["url"], server["store"], "rev3", path="/annotate")
    rev3.get_by_role("heading", name="Annotate").first.wait_for(timeout=60_000)
    rev3.get_by_text(
        "The annotator kept label 1 after the last review. Their note: kept after QC round 1.", exact=False
    ).wait_for(timeout=60_000)
    rev3.get_by_text(PASSAGES[kept]).wait_for(timeout=60_000)
    screenshot(rev3, "qc_round2_kept_item")

    # rev3 agrees with the kept label; rev1's and rev2's round-1 labels on it (the truth) no longer count
    assert sorted(_review(store, ids["rev1"], TRUTH)) == fresh
    assert sorted(_review(store, ids["rev2"], TRUTH)) == fresh
    assert sorted(_review(store, ids["rev3"], {**TRUTH, kept: WRONG})) == sorted([*fresh, kept])
    # another tab and back: the Quality control tab is drawn again from the store (only the open tab runs)
    admin.get_by_role("tab", name="Users").click()
    admin.get_by_role("button", name="Add user").wait_for(timeout=60_000)  # the Users tab ran
    admin.get_by_role("tab", name="Quality control").click()
    admin.get_by_role("button", name="Close round and decide").wait_for(timeout=60_000)
    wait_idle(admin, 60_000, fresh=True)
    admin.get_by_role("button", name="Close round and decide").click()
    admin.get_by_text("accuracy 1.000 on 6 pairs, decision pass", exact=False).wait_for(timeout=60_000)
    with store.read() as s:
        assert s.get_one(Package, package).status == "passed"
