"""SQLAlchemy 2.0 ORM models of the pooljudge store.

Two families of tables:

* artefacts imported or produced as files (qrels versions, runs) keep query
  and document ids as the *strings* of their source, because a run or a qrels
  file may name documents whose text the store does not have (T2Ranking,
  LeCaRD);
* annotation work (pools, assignments, judgments, final labels) points at
  passages and queries by integer foreign key, because a human can only judge
  text the store holds.

Judgments are append-only: the migrations install triggers that reject
UPDATE, DELETE and REPLACE on ``judgments``, and its foreign keys RESTRICT the
deletion of the users, assignments, queries and passages it points at
(accounts are disabled, never deleted).

Collections, runs and qrels versions carry a ``status``: an import stages its
rows while the container is ``importing`` (invisible to every reader) and
makes it ``ready`` in one short final transaction.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from db.vocab import (
    FinalLabelMethod,
    JobStatus,
    JudgmentAction,
    ModelKind,
    PackageStatus,
    Purpose,
    QcRoundStatus,
    Role,
    Visibility,
    check_in,
)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


FINAL_LABEL_METHODS = tuple(FinalLabelMethod)
ROLES = tuple(Role)
JOB_STATES = tuple(JobStatus)
VISIBILITY = tuple(Visibility)
"""``status`` of collections, runs and qrels versions: only ``ready`` ones are shown."""


def _status_column() -> Mapped[str]:
    return mapped_column(String(16), default=Visibility.READY, server_default=Visibility.READY.value)


def _archived_at() -> Mapped[datetime | None]:
    # archiving hides, never deletes (migration 0007); NULL = shown
    return mapped_column(DateTime(timezone=True))


def _archived_by() -> Mapped[str | None]:
    # the username as text: the record outlives whatever happens to the account
    return mapped_column(String(100))


class Collection(Base):
    __tablename__ = "collections"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    language: Mapped[str | None] = mapped_column(String(16))
    description: Mapped[str] = mapped_column(Text, default="")
    # binary measures count grade >= relevance_level as relevant (migration 0006)
    relevance_level: Mapped[int] = mapped_column(Integer, default=2, server_default="2")
    # the annotation guide per scale; NULL = the built-in T2Ranking guide (migration 0007)
    guidelines: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    archived_at: Mapped[datetime | None] = _archived_at()
    archived_by: Mapped[str | None] = _archived_by()
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    status: Mapped[str] = _status_column()
    # refreshed by the import that stages this container; a stale one is a crashed import's leftover
    staged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    passages: Mapped[list[PassageRecord]] = relationship(
        back_populates="collection", cascade="all, delete-orphan", passive_deletes=True
    )
    queries: Mapped[list[QueryRecord]] = relationship(
        back_populates="collection", cascade="all, delete-orphan", passive_deletes=True
    )
    imports: Mapped[list[ImportRecord]] = relationship(cascade="all, delete-orphan", passive_deletes=True)


class ImportRecord(Base):
    """One import into a collection: what was read, from where, how much."""

    __tablename__ = "imports"

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    format: Mapped[str] = mapped_column(String(40))
    source: Mapped[str] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String(16))
    counts: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PassageRecord(Base):
    __tablename__ = "passages"
    __table_args__ = (
        UniqueConstraint("collection_id", "ext_id", name="uq_passages_collection_ext_id"),
        Index("ix_passages_document", "collection_id", "doc_id", "position"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    ext_id: Mapped[str] = mapped_column(String(512))
    doc_id: Mapped[str | None] = mapped_column(String(512))
    position: Mapped[int | None] = mapped_column(Integer)
    title: Mapped[str] = mapped_column(Text, default="")
    text: Mapped[str] = mapped_column(Text)
    language: Mapped[str | None] = mapped_column(String(16))

    collection: Mapped[Collection] = relationship(back_populates="passages")


class QueryRecord(Base):
    __tablename__ = "queries"
    __table_args__ = (
        UniqueConstraint("collection_id", "ext_id", name="uq_queries_collection_ext_id"),
        Index("ix_queries_split", "collection_id", "split"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    ext_id: Mapped[str] = mapped_column(String(512))
    text: Mapped[str] = mapped_column(Text)
    split: Mapped[str] = mapped_column(String(32), default="test")
    type: Mapped[str | None] = mapped_column(String(64))
    domain: Mapped[str | None] = mapped_column(String(64))
    language: Mapped[str | None] = mapped_column(String(16))
    translation: Mapped[str | None] = mapped_column(Text)
    answers: Mapped[list[Any] | None] = mapped_column(JSON)

    collection: Mapped[Collection] = relationship(back_populates="queries")


class RunRecord(Base):
    __tablename__ = "runs"
    __table_args__ = (UniqueConstraint("collection_id", "name", name="uq_runs_collection_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(40), default="import")
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    status: Mapped[str] = _status_column()
    staged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    archived_at: Mapped[datetime | None] = _archived_at()
    archived_by: Mapped[str | None] = _archived_by()


class RunEntryRecord(Base):
    """One retrieved document; the rank is derived from (score desc, docid desc), never stored."""

    __tablename__ = "run_entries"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    query_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    score: Mapped[float] = mapped_column(Float)


class QrelsVersion(Base):
    """A named snapshot of graded labels: imported qrels or frozen final labels."""

    __tablename__ = "qrels_versions"
    __table_args__ = (UniqueConstraint("collection_id", "name", name="uq_qrels_versions_collection_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(40), default="import")
    note: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    status: Mapped[str] = _status_column()
    staged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    archived_at: Mapped[datetime | None] = _archived_at()
    archived_by: Mapped[str | None] = _archived_by()


class QrelsEntry(Base):
    __tablename__ = "qrels_entries"

    version_id: Mapped[int] = mapped_column(ForeignKey("qrels_versions.id", ondelete="CASCADE"), primary_key=True)
    query_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    doc_id: Mapped[str] = mapped_column(String(512), primary_key=True)
    grade: Mapped[int] = mapped_column(Integer)


class Pool(Base):
    __tablename__ = "pools"
    __table_args__ = (UniqueConstraint("collection_id", "name", name="uq_pools_collection_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    method: Mapped[str] = mapped_column(String(40), default="depth")
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    archived_at: Mapped[datetime | None] = _archived_at()
    archived_by: Mapped[str | None] = _archived_by()


class PoolAdjudicator(Base):
    """An account an admin chose to adjudicate a pool's three-way splits (migration 0007)."""

    __tablename__ = "pool_adjudicators"

    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True)


class PoolEntry(Base):
    __tablename__ = "pool_entries"
    __table_args__ = (
        UniqueConstraint("pool_id", "query_id", "passage_id", name="uq_pool_entries_pair"),
        Index("ix_pool_entries_selected", "pool_id", "selected"),  # the pool list's selected counts
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_id: Mapped[int] = mapped_column(ForeignKey("pools.id", ondelete="CASCADE"), index=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), index=True)
    selected: Mapped[bool] = mapped_column(Boolean, default=True)
    selection_score: Mapped[float | None] = mapped_column(Float)
    selection_rank: Mapped[int | None] = mapped_column(Integer)
    # A near-duplicate removed before annotation points at the pool entry kept in its place.
    duplicate_of: Mapped[int | None] = mapped_column(ForeignKey("pool_entries.id", ondelete="SET NULL"))


class PoolProvenance(Base):
    """Which run contributed a pooled pair, at which rank (never shown to annotators)."""

    __tablename__ = "pool_provenance"

    pool_entry_id: Mapped[int] = mapped_column(ForeignKey("pool_entries.id", ondelete="CASCADE"), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float | None] = mapped_column(Float)


class PreLabel(Base):
    """A machine-suggested label (distant supervision), kept apart from human judgments."""

    __tablename__ = "pre_labels"
    __table_args__ = (UniqueConstraint("query_id", "passage_id", "source", name="uq_pre_labels_pair_source"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), index=True)
    source: Mapped[str] = mapped_column(String(40))
    score: Mapped[float] = mapped_column(Float)
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class User(Base):
    __tablename__ = "users"
    __table_args__ = (
        CheckConstraint(check_in("role", Role), name="ck_users_role"),
        Index("uq_users_username_lower", text("lower(username)"), unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    username: Mapped[str] = mapped_column(String(100), unique=True)
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Assignment(Base):
    """One (query, passage) pair given to one annotator, in a package, at a shuffled position."""

    __tablename__ = "assignments"
    __table_args__ = (
        UniqueConstraint("user_id", "query_id", "passage_id", name="uq_assignments_user_pair"),
        Index("ix_assignments_user_package", "user_id", "package", "order_index"),
        Index("ix_assignments_purpose", "purpose"),  # the QC marker reads the few QC assignments
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    pool_entry_id: Mapped[int | None] = mapped_column(ForeignKey("pool_entries.id", ondelete="SET NULL"))
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    package: Mapped[str] = mapped_column(String(100), default="")  # the package's name, for display and export
    package_id: Mapped[int | None] = mapped_column(ForeignKey("packages.id", ondelete="SET NULL"))
    order_index: Mapped[int] = mapped_column(Integer, default=0)
    seed: Mapped[int | None] = mapped_column(Integer)
    purpose: Mapped[str] = mapped_column(String(16), default=Purpose.LABEL)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


PACKAGE_STATES = tuple(PackageStatus)


class Package(Base):
    """About a thousand assignments of one annotator, the unit of quality control (DuReader-retrieval A.3)."""

    __tablename__ = "packages"
    __table_args__ = (CheckConstraint(check_in("status", PackageStatus), name="ck_packages_status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    pool_id: Mapped[int | None] = mapped_column(ForeignKey("pools.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(16), default=PackageStatus.OPEN)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class QcRound(Base):
    """One round of reviewing a sample of a package; every round is kept."""

    __tablename__ = "qc_rounds"
    __table_args__ = (
        UniqueConstraint("package_id", "round_no", name="uq_qc_rounds_package_round"),
        CheckConstraint(check_in("status", QcRoundStatus), name="ck_qc_rounds_status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    package_id: Mapped[int] = mapped_column(ForeignKey("packages.id", ondelete="CASCADE"))
    round_no: Mapped[int] = mapped_column(Integer)
    seed: Mapped[int] = mapped_column(Integer)
    sample_size: Mapped[int] = mapped_column(Integer)
    threshold: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16), default=QcRoundStatus.REVIEWING)
    accuracy: Mapped[float | None] = mapped_column(Float)
    n_checked: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class QcItem(Base):
    """A pair sampled into a QC round; reviewers judge it through their own assignments."""

    __tablename__ = "qc_items"

    qc_round_id: Mapped[int] = mapped_column(ForeignKey("qc_rounds.id", ondelete="CASCADE"), primary_key=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"), primary_key=True)
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True, index=True)


class LabelOverride(Base):
    """A reviewer's override of a final label, with its reason (append-only history)."""

    __tablename__ = "label_overrides"
    __table_args__ = (Index("ix_label_overrides_pair", "query_id", "passage_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    grade: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AuthSession(Base):
    """A signed-in browser: the cookie holds a random token, the store only its SHA-256.

    Logging out revokes one session; disabling an account revokes all of them.
    """

    __tablename__ = "auth_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    client: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class LoginThrottle(Base):
    """Failed logins per key (``user:<name>`` or ``client:<address>``) and until when the key is locked out."""

    __tablename__ = "login_throttle"

    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    locked_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_failure_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Judgment(Base):
    """An annotator's label, appended and never changed (relabels and undos are new rows)."""

    __tablename__ = "judgments"
    __table_args__ = (
        Index("ix_judgments_pair", "query_id", "passage_id"),
        Index("ix_judgments_action", "action", "assignment_id", "user_id"),  # the flags alone, grouped
        CheckConstraint(check_in("action", JudgmentAction), name="ck_judgments_action"),
        UniqueConstraint("assignment_id", "submission_token", name="uq_judgments_submission"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    assignment_id: Mapped[int | None] = mapped_column(
        ForeignKey("assignments.id", ondelete="RESTRICT", name="fk_judgments_assignment_id"), index=True
    )
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="RESTRICT", name="fk_judgments_query_id"))
    passage_id: Mapped[int] = mapped_column(
        ForeignKey("passages.id", ondelete="RESTRICT", name="fk_judgments_passage_id"), index=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="RESTRICT", name="fk_judgments_user_id"), index=True
    )
    action: Mapped[str] = mapped_column(String(8), default=JudgmentAction.LABEL)
    grade: Mapped[int | None] = mapped_column(Integer)
    note: Mapped[str] = mapped_column(Text, default="")
    elapsed_ms: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # The token of the rendered item the submission came from: the same (assignment, token) stores once.
    submission_token: Mapped[str | None] = mapped_column(String(64))


class FinalLabel(Base):
    """The resolved label of a pair and how it was reached."""

    __tablename__ = "final_labels"
    __table_args__ = (
        UniqueConstraint("query_id", "passage_id", name="uq_final_labels_pair"),
        CheckConstraint(check_in("method", FinalLabelMethod), name="ck_final_labels_method"),
        Index("ix_final_labels_decided", "collection_id", "decided_at"),  # the qrels marker reads this index alone
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    query_id: Mapped[int] = mapped_column(ForeignKey("queries.id", ondelete="CASCADE"))
    passage_id: Mapped[int] = mapped_column(ForeignKey("passages.id", ondelete="CASCADE"), index=True)
    grade: Mapped[int | None] = mapped_column(Integer)
    method: Mapped[str] = mapped_column(String(16))
    n_labels: Mapped[int] = mapped_column(Integer, default=0)
    reason: Mapped[str] = mapped_column(Text, default="")
    decided_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    decided_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ErrorTag(Base):
    """An error-analysis tag on a (query, document) pair, suggested by a detector or set by an analyst."""

    __tablename__ = "error_tags"
    __table_args__ = (Index("ix_error_tags_pair", "collection_id", "query_id", "doc_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    query_id: Mapped[str] = mapped_column(String(512))
    doc_id: Mapped[str] = mapped_column(String(512))
    run_id: Mapped[int | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    category: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), default="confirmed")
    source: Mapped[str] = mapped_column(String(16), default="analyst")
    evidence: Mapped[dict[str, Any]] = mapped_column(default=dict)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ErrorCategory(Base):
    """An error category a project defines for its collection, beside the built-in taxonomy (migration 0009)."""

    __tablename__ = "error_categories"
    # the UNIQUE's index (collection_id first) also serves the per-collection listing
    __table_args__ = (UniqueConstraint("collection_id", "key", name="uq_error_categories_collection_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))  # what ErrorTag.category holds
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    # the username as text, like TrainedModel.created_by: the category outlives the account
    created_by: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LexiconName(Base):
    """A name of a collection's lexicon, with its kind, for the entity-mismatch detector (migration 0011)."""

    __tablename__ = "lexicon_names"
    # the UNIQUE's index (collection_id first) also serves the per-collection listing
    __table_args__ = (UniqueConstraint("collection_id", "name_key", name="uq_lexicon_names_collection_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    name_key: Mapped[str] = mapped_column(String(200))  # casefolded: names match case-insensitively
    kind: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


MODEL_KINDS = tuple(ModelKind)
"""What the ``train`` job trains (migration 0008): a re-ranker, a dense encoder, or both jointly (RocketQAv2)."""


class TrainedModel(Base):
    """A model trained on a collection's labels: where its Hugging Face folder is and how it was trained."""

    __tablename__ = "trained_models"
    __table_args__ = (
        UniqueConstraint("collection_id", "name", name="uq_trained_models_collection_name"),
        CheckConstraint(check_in("kind", ModelKind), name="ck_trained_models_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    collection_id: Mapped[int] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(32))
    path: Mapped[str] = mapped_column(Text)
    base_model: Mapped[str | None] = mapped_column(Text)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    history: Mapped[list[Any]] = mapped_column(default=list)
    best: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # the username as text, like archived_by: the record outlives the account
    created_by: Mapped[str | None] = mapped_column(String(100))
    # no foreign key: pruning job rows must never touch a model
    job_id: Mapped[int | None] = mapped_column(Integer)
    archived_at: Mapped[datetime | None] = _archived_at()
    archived_by: Mapped[str | None] = _archived_by()


class Job(Base):
    """A long-running operation (indexing, encoding, pooling) run outside page reruns."""

    __tablename__ = "jobs"
    __table_args__ = (CheckConstraint(check_in("status", JobStatus), name="ck_jobs_status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    kind: Mapped[str] = mapped_column(String(40))
    collection_id: Mapped[int | None] = mapped_column(ForeignKey("collections.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.QUEUED)
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int | None] = mapped_column(Integer)
    message: Mapped[str] = mapped_column(Text, default="")
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
