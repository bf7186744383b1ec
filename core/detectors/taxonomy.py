"""The error taxonomy: DuReader-retrieval Table 10 merged with DAPR's NQ-hard categories.

* DuReader-retrieval (Qiu et al., "DuReader-retrieval: A Large-scale Chinese
  Benchmark for Passage Retrieval from Web Search Engine", EMNLP 2022,
  Table 10): *salient phrase mismatch* (entity, numeral, modifier),
  *syntactic mismatch*, *over-sensitivity to term overlap*, *typos*,
  *false negative* and *other*.
* DAPR (Wang, Reimers & Gurevych, "DAPR: A Benchmark on Document-Aware
  Passage Retrieval", 2024), the categories of its NQ-hard analysis of
  errors needing document context: *self-contained* (no context needed),
  *coreference resolution*, *main topic*, *multi-hop reasoning* and
  *acronym*.

:func:`merge_categories` adds a project's own categories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Category:
    """One error category.

    Parameters
    ----------
    id : str
        Stable machine id (``"numeral_mismatch"``), used by :class:`Suggestion`.
    name : str
        Human-readable name.
    group : str
        Where it comes from: ``"dureader_retrieval"``, ``"dapr"`` or a user
        group (``"user"`` by default for :func:`merge_categories`).
    description : str
        What the category means, for annotators.
    parent : str or None
        A parent heading, e.g. ``"salient_phrase_mismatch"`` for the entity,
        numeral and modifier categories of DuReader-retrieval Table 10.
    """

    id: str
    name: str
    group: str
    description: str = ""
    parent: str | None = None

    def __post_init__(self) -> None:
        for name in ("id", "name", "group", "description"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Category.{name} must be a str, got {type(getattr(self, name)).__name__}")
        if not self.id.strip() or not self.name.strip() or not self.group.strip():
            raise ValueError("Category id, name and group must not be empty")
        if self.parent is not None and not isinstance(self.parent, str):
            raise TypeError("Category.parent must be a str or None")


_DR = "dureader_retrieval"
_SALIENT = "salient_phrase_mismatch"

TAXONOMY: tuple[Category, ...] = (
    # DuReader-retrieval (Qiu et al., EMNLP 2022), Table 10.
    Category(
        "entity_mismatch",
        "Salient phrase mismatch: entity",
        _DR,
        "The passage is about a different named entity (person, place, organisation, product) than the query.",
        _SALIENT,
    ),
    Category(
        "numeral_mismatch",
        "Salient phrase mismatch: numeral",
        _DR,
        "A number or year in the query differs from the one in the passage.",
        _SALIENT,
    ),
    Category(
        "modifier_mismatch",
        "Salient phrase mismatch: modifier",
        _DR,
        "A modifier that restricts the query (e.g. 'free', 'for children') is not satisfied by the passage.",
        _SALIENT,
    ),
    Category(
        "syntactic_mismatch",
        "Syntactic mismatch",
        _DR,
        "Query and passage share the key terms but in different roles or order "
        "(e.g. 'from A to B' versus 'from B to A').",
    ),
    Category(
        "term_overlap",
        "Over-sensitivity to term overlap",
        _DR,
        "The passage shares many terms with the query but does not meet its need.",
    ),
    Category("typo", "Typos", _DR, "The query contains a misspelling of a frequent term."),
    Category(
        "false_negative",
        "False negative",
        _DR,
        "A highly ranked passage is unjudged or labelled irrelevant but may be relevant.",
    ),
    Category("other", "Other", _DR, "None of the above."),
    # DAPR (Wang et al., 2024), NQ-hard categories.
    Category("self_contained", "Self-contained", "dapr", "The passage answers the query without any document context."),
    Category(
        "coreference",
        "Coreference resolution",
        "dapr",
        "The passage refers to the query's subject by a pronoun or definite description "
        "whose antecedent is elsewhere in the document.",
    ),
    Category(
        "main_topic",
        "Main topic",
        "dapr",
        "The query names the document's main topic (its title), which the passage does not repeat.",
    ),
    Category(
        "multi_hop", "Multi-hop reasoning", "dapr", "Answering needs facts from several passages of the document."
    ),
    Category(
        "acronym",
        "Acronym",
        "dapr",
        "An acronym and its expansion are used in different places (query, passage, document).",
    ),
)
"""The built-in taxonomy: DuReader-retrieval Table 10 then DAPR's NQ-hard categories."""


def category_ids(categories: Iterable[Category] = TAXONOMY) -> list[str]:
    """The ids of ``categories``, in order."""
    return [c.id for c in categories]


def _as_category(item: Category | Mapping[str, Any], default_group: str) -> Category:
    if isinstance(item, Category):
        return item
    if isinstance(item, Mapping):
        unknown = set(item) - {"id", "name", "group", "description", "parent"}
        if unknown:
            raise ValueError(f"unknown category fields: {', '.join(sorted(unknown))}")
        if "id" not in item:
            raise ValueError(f"a category needs an 'id': {dict(item)!r}")
        return Category(
            id=item["id"],
            name=item.get("name", item["id"]),
            group=item.get("group", default_group),
            description=item.get("description", ""),
            parent=item.get("parent"),
        )
    raise TypeError(f"a category must be a Category or a mapping, got {type(item).__name__}")


def merge_categories(
    user: Iterable[Category | Mapping[str, Any]],
    base: Sequence[Category] = TAXONOMY,
    *,
    replace: bool = False,
    default_group: str = "user",
) -> tuple[Category, ...]:
    """Extend a taxonomy with a project's own categories.

    Parameters
    ----------
    user : iterable of Category or mapping
        The new categories; a mapping needs ``id`` and may give ``name``
        (defaults to the id), ``group`` (defaults to ``default_group``),
        ``description`` and ``parent``.
    base : sequence of Category, optional
        The taxonomy to extend (:data:`TAXONOMY` by default).
    replace : bool, optional
        Let a user category replace the base category with the same id (kept
        at the base's position).  Off by default: a clash raises.
    default_group : str, optional
        Group of mapping categories that give none.

    Returns
    -------
    tuple of Category
        The base categories (some replaced) then the new ones, in the order given.

    Raises
    ------
    ValueError
        When two user categories share an id, or one clashes with a base id
        and ``replace`` is false.
    TypeError
        When an item is neither a :class:`Category` nor a mapping.
    """
    merged = list(base)
    index = {c.id: i for i, c in enumerate(merged)}
    if len(index) != len(merged):
        raise ValueError("the base taxonomy has duplicate ids")
    seen: set[str] = set()
    for item in user:
        cat = _as_category(item, default_group)
        if cat.id in seen:
            raise ValueError(f"duplicate user category id {cat.id!r}")
        seen.add(cat.id)
        if cat.id in index:
            if not replace:
                raise ValueError(f"category id {cat.id!r} is already in the taxonomy (pass replace=True)")
            merged[index[cat.id]] = cat
        else:
            index[cat.id] = len(merged)
            merged.append(cat)
    return tuple(merged)
