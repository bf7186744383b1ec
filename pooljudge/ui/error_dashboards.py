"""Display helpers for the error-analysis page: category lists, evidence text, per-category metric tables.

Display code (names for the UI, HTML), so it lives in the UI layer; nothing
here touches Streamlit or the database itself: the page (``views/errors.py``)
reads tags and runs from the store and hands plain dicts to these functions.

* :func:`ordered_categories` lists the built-in taxonomy group by group
  (DuReader-retrieval, then DAPR) followed by a project's own categories, the
  order of the page's category picker;
* :func:`user_categories` finds a project's own categories among stored tags
  (those defined before they were stored, :mod:`db.error_categories`, exist only there);
* :func:`evidence_summary` turns a tag's stored evidence into one line of text
  (each detector's typed evidence, :mod:`core.detectors`, writes its own);
* :func:`evidence_spans` and :func:`marked_html` show where in the passage a
  detector looked, as HTML escaped by :mod:`pooljudge.ui.highlight`;
* :func:`category_metric_rows` and :func:`category_metric_table` compute a
  measure's mean per error category and run (DAPR, Figure 3) from per-query
  values, through :func:`core.analysis.metrics_by_category`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from core.analysis import UNTAGGED, metrics_by_category
from core.detectors import TAXONOMY, Category, Evidence, category_ids, read_evidence
from core.detectors.base import listing, shorten
from core.detectors.registry import detector_of
from core.validators import is_integer
from pooljudge.ui.highlight import escape_text

__all__ = [
    "GROUP_NAMES",
    "UNTAGGED_NAME",
    "USER_GROUP",
    "category_metric_rows",
    "category_metric_table",
    "category_name",
    "evidence_detector",
    "evidence_spans",
    "evidence_summary",
    "marked_html",
    "ordered_categories",
    "shorten",
    "user_categories",
]

USER_GROUP = "user"
GROUP_NAMES = {"dureader_retrieval": "DuReader-retrieval", "dapr": "DAPR", USER_GROUP: "Your categories"}
"""Display names of the taxonomy groups."""
UNTAGGED_NAME = "Untagged (no confirmed tag)"
"""Display name of :data:`core.analysis.UNTAGGED`."""


# --------------------------------------------------------------------------- categories


def ordered_categories(user: Mapping[str, str] | None = None, base: Sequence[Category] = TAXONOMY) -> list[Category]:
    """The categories of ``base`` grouped by group (groups in order of first appearance), then ``user``.

    Parameters
    ----------
    user : mapping, optional
        ``{id: name}`` of a project's own categories, in the order to show
        them; ids already in ``base`` are left out (the base category wins).
    base : sequence of Category, optional
        The built-in taxonomy.

    Returns
    -------
    list of Category
        The user categories have group :data:`USER_GROUP`.
    """
    groups: dict[str, list[Category]] = {}
    for c in base:
        groups.setdefault(c.group, []).append(c)
    out = [c for members in groups.values() for c in members]
    known = {c.id for c in out}
    for cid, name in (user or {}).items():
        if cid in known:
            continue
        known.add(cid)
        out.append(Category(cid, (name.strip() or cid) if isinstance(name, str) else cid, USER_GROUP))
    return out


def user_categories(tags: Iterable[Mapping[str, Any]], known: Iterable[str] | None = None) -> list[str]:
    """The distinct categories of ``tags`` that are not in ``known`` (default: the taxonomy ids), sorted."""
    base = set(category_ids() if known is None else known)
    return sorted({t["category"] for t in tags} - base)


def user_category_names(tags: Iterable[Mapping[str, Any]], known: Iterable[str] | None = None) -> dict[str, str]:
    """``{id: display name}`` of the user categories of ``tags`` (see :func:`user_categories`), sorted by id.

    The name is the newest ``evidence["category_name"]`` among the category's
    tags (``tags`` oldest first, as :func:`db.error_analysis.list_tags`
    returns them), or the id when no tag recorded one.
    """
    tags = list(tags)
    names = {c: c for c in user_categories(tags, known)}
    for t in tags:
        given = (t.get("evidence") or {}).get("category_name")
        if t["category"] in names and isinstance(given, str) and given.strip():
            names[t["category"]] = given.strip()
    return names


def category_name(category: str, names: Mapping[str, str] | None = None) -> str:
    """A category's display name: ``names[category]``, the taxonomy name, :data:`UNTAGGED_NAME` or the id."""
    if names and category in names:
        return names[category]
    if category == UNTAGGED:
        return UNTAGGED_NAME
    for c in TAXONOMY:
        if c.id == category:
            return c.name
    return category


# --------------------------------------------------------------------------- evidence


def _detector_summary(category: str, ev: Mapping[str, Any], detector: str | None = None) -> str:
    # the detector's evidence class knows its shape (core.detectors); other categories list their keys
    typed = read_evidence(category, ev, detector)
    return typed.summary() if isinstance(typed, Evidence) else "; ".join(f"{k}: {listing(v)}" for k, v in ev.items())


def evidence_detector(evidence: Mapping[str, Any] | None, category: str | None = None) -> str:
    """The name of the detector that made a stored suggestion ("" for an analyst's tag).

    A suggestion stores its detector (``"detector"``,
    :meth:`core.detectors.Suggestion.to_dict`); one stored before it did is
    the category's rule detector, the only one there was then.
    """
    if not evidence or not isinstance(evidence.get("evidence"), Mapping):
        return ""
    stored = evidence.get("detector")
    if isinstance(stored, str) and stored.strip():
        return stored
    found = detector_of(category or str(evidence.get("category", "")))
    return found.name if found is not None else ""


def evidence_summary(evidence: Mapping[str, Any] | None, category: str | None = None) -> str:
    """One line of text saying what a tag's evidence holds.

    Parameters
    ----------
    evidence : mapping or None
        A stored tag's evidence: a detector suggestion
        (``{"category", "evidence", "spans"}``, :meth:`core.detectors.Suggestion.to_dict`)
        or an analyst tag's ``{"note": ...}``.
    category : str, optional
        The tag's category (taken from the evidence when missing).

    Returns
    -------
    str
        Plain text (the caller escapes it); "" when there is nothing to say.
    """
    if not evidence:
        return ""
    parts = []
    inner = evidence.get("evidence")
    if isinstance(inner, Mapping):
        detector = evidence.get("detector")
        detector = detector if isinstance(detector, str) else None
        parts.append(_detector_summary(category or str(evidence.get("category", "")), inner, detector))
    note = evidence.get("note")
    if isinstance(note, str) and note.strip():
        parts.append(f"note: {note.strip()}")
    return "; ".join(p for p in parts if p)


def evidence_spans(evidence: Mapping[str, Any] | None, length: int) -> list[tuple[int, int]]:
    """A suggestion's passage spans as sorted, non-overlapping ``(start, end)`` pairs within ``[0, length]``.

    Spans that are malformed or out of range are dropped; overlapping ones are merged.
    """
    raw = (evidence or {}).get("spans") or []
    spans = []
    for s in raw:
        if (
            isinstance(s, (list, tuple))
            and len(s) == 2
            and all(is_integer(x) for x in s)
            and 0 <= s[0] < s[1] <= length
        ):
            spans.append((s[0], s[1]))
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def marked_html(text: str, spans: Sequence[tuple[int, int]], *, window: int | None = None, style: str = "") -> str:
    """``text`` as escaped HTML with ``spans`` wrapped in ``<mark>``, for ``st.html`` (no Markdown).

    Every character of ``text`` is HTML-escaped by
    :func:`pooljudge.ui.highlight.escape_text`, so untrusted text renders
    literally; line breaks become ``<br>``.  With ``window``, only the text within ``window`` characters of
    a span is kept, gaps shown as " … ".  ``spans`` must be sorted and
    non-overlapping (:func:`evidence_spans`).  ``style``, when given, is a
    trusted inline CSS style for the ``<mark>`` elements (escaped as an
    attribute value).
    """
    mark = f'<mark style="{html.escape(style)}">' if style else "<mark>"
    if window is not None and spans:
        keep: list[tuple[int, int]] = []
        for start, end in spans:
            lo, hi = max(0, start - window), min(len(text), end + window)
            if keep and lo <= keep[-1][1]:
                keep[-1] = (keep[-1][0], max(hi, keep[-1][1]))
            else:
                keep.append((lo, hi))
    else:
        keep = [(0, len(text))]
    pieces = []
    for lo, hi in keep:
        parts, last = [], lo
        for start, end in spans:
            if start >= lo and end <= hi:
                parts.append(escape_text(text[last:start]))
                parts.append(f"{mark}{escape_text(text[start:end])}</mark>")
                last = end
        parts.append(escape_text(text[last:hi]))
        pieces.append("".join(parts))
    return ("… " if keep[0][0] > 0 else "") + " … ".join(pieces) + (" …" if keep[-1][1] < len(text) else "")


# --------------------------------------------------------------------------- metric per category


def category_metric_rows(
    per_run: Mapping[str, Mapping[str, float]], categories: Mapping[str, Iterable[str]]
) -> list[dict[str, Any]]:
    """A measure's mean per (run, error category), as long rows (DAPR, Figure 3).

    Parameters
    ----------
    per_run : mapping
        ``{run: {qid: value}}``, e.g. ``evaluate(qrels, run, [m])[m]`` for
        every run (an ``"all"`` key is ignored).
    categories : mapping
        ``{qid: set of categories}`` (:func:`db.error_analysis.query_categories`).

    Returns
    -------
    list of dict
        ``{"run", "category", "mean", "n"}`` in run order, categories per run
        as :func:`core.analysis.metrics_by_category` orders them (sorted,
        :data:`core.analysis.UNTAGGED` last).  A query carrying several
        categories counts in each.
    """
    rows = []
    for run, values in per_run.items():
        for category, cm in metrics_by_category(values, categories).items():
            rows.append({"run": run, "category": category, "mean": cm.mean, "n": cm.n})
    return rows


def category_metric_table(
    rows: Sequence[Mapping[str, Any]], names: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The rows of :func:`category_metric_rows` as one row per category, one column per run.

    Returns
    -------
    list of dict
        ``{"category": id, "name": display name, "queries": n, run: mean, ...}``
        in the categories' first-seen order with :data:`~core.analysis.UNTAGGED`
        last; a run lacking a category gets NaN.  ``queries`` is the number
        of evaluated queries in the category, the same for every run when the
        runs were evaluated on the same qrels (every judged query scored);
        when the runs disagree it is the largest, and ``"n {run}"`` columns
        give each run's count.
    """
    runs = list(dict.fromkeys(r["run"] for r in rows))
    cats = list(dict.fromkeys(r["category"] for r in rows if r["category"] != UNTAGGED))
    if any(r["category"] == UNTAGGED for r in rows):
        cats.append(UNTAGGED)
    cell = {(r["run"], r["category"]): r for r in rows}
    differ = any(
        len({cell[(run, c)]["n"] for run in runs if (run, c) in cell}) > 1 or any((run, c) not in cell for run in runs)
        for c in cats
    )
    table = []
    for c in cats:
        ns = {run: cell[(run, c)]["n"] for run in runs if (run, c) in cell}
        row: dict[str, Any] = {"category": c, "name": category_name(c, names), "queries": max(ns.values())}
        for run in runs:
            row[run] = cell[(run, c)]["mean"] if (run, c) in cell else math.nan
        if differ:
            for run in runs:
                row[f"n {run}"] = ns.get(run, 0)
        table.append(row)
    return table
