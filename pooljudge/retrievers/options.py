"""Retriever options as data: each kind declares its :class:`RetrieverOption` tuple, and everything reads it.

A kind's ``OPTIONS`` says, per option, its type, default, allowed values and help (as ir_measures
declares each measure parameter): spec parsing converts and refuses values from it
(:func:`convert`), the CLI's ``--help`` and the Pooling page list it
(:mod:`pooljudge.retrievers.catalogue`), and the kind's ``build`` takes its defaults from it
(:func:`defaults`); its ``PRESETS`` (:class:`Preset`) are the page's ready-made specs.  The helpers below are the checks several kinds share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.context import CONTEXT_MODES

_TYPES = (str, int, float, bool)
_TRUE, _FALSE = ("true", "1", "yes"), ("false", "0", "no")


@dataclass(frozen=True)
class RetrieverOption:
    """One option a retriever spec may set (``bm25:k1=1.2``): what it is, as data.

    Parameters
    ----------
    name : str
        As a spec writes it (``k1``, ``dense_model``).
    type : {str, int, float, bool}
        What the text converts to (a bool is written true/false, 1/0 or yes/no).
    default : object, optional
        The value when the spec leaves it out; ``None``: decided elsewhere, as ``help`` says
        (the model folder's own setting, the collection language's model).
    help : str
        One line for the CLI's ``--help`` and the Pooling page.
    choices : tuple of str, optional
        The allowed values; anything else is refused when the spec is parsed.
    member : str
        For an option a kind takes over from another (a hybrid's ``bm25_k1``), that kind's
        name: the listings show such options as one ``bm25_*`` line.
    """

    name: str
    type: type
    default: Any = None
    help: str = ""
    choices: tuple[str, ...] | None = None
    member: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"a retriever option's name must be a word, got {self.name!r}")
        if self.type not in _TYPES:
            raise TypeError(f"option {self.name!r}: type must be str, int, float or bool, got {self.type!r}")
        if self.choices is not None and (self.type is not str or self.default not in (None, *self.choices)):
            raise ValueError(f"option {self.name!r}: choices need type str and a default among them")

    def convert(self, kind: str, value: str) -> Any:
        """``value`` (the spec's text) as :attr:`type`; ``ValueError`` naming the option and what it allows."""
        if self.type is bool:
            if value.lower() not in _TRUE + _FALSE:
                raise ValueError(f"option {self.name!r} must be true or false, got {value!r}")
            return value.lower() in _TRUE
        try:
            converted = self.type(value)
        except ValueError:
            raise ValueError(f"option {self.name!r} must be {self.type.__name__}, got {value!r}") from None
        if self.choices is not None and converted not in self.choices:
            raise ValueError(
                f"option {self.name!r} of a {kind} retriever must be one of {', '.join(self.choices)}, got {value!r}"
            )
        return converted

    def describe(self) -> str:
        """``k1 (float, default 1.5): term-frequency saturation``, one line for a listing."""
        kind = "|".join(self.choices) if self.choices else self.type.__name__
        default = "" if self.default is None else f", default {option_text(self.default)}"
        return f"{self.name} ({kind}{default}): {self.help}"


@dataclass(frozen=True)
class Preset:
    """A ready-made spec of a kind the Pooling page offers: its label and its options as a spec writes them.

    ``{model}`` in the label stands for the bundled bi-encoder the collection's language gets
    (:func:`pooljudge.encoders.default_model_name`).
    """

    label: str
    options: str = ""


NAME = RetrieverOption("name", str, help="the run's name (default: the spec as written)")
"""Every kind's option (a kind need not declare it)."""
CONTEXT = RetrieverOption(
    "context",
    str,
    "title",
    "document context prepended to each passage text before indexing",
    choices=tuple(CONTEXT_MODES),
)
"""The passage texts a retriever indexes (:meth:`pooljudge.corpus.Corpus.texts_for`)."""


def option_table(options: Iterable[RetrieverOption]) -> dict[str, RetrieverOption]:
    """``{name: option}`` of a kind's declaration, with :data:`NAME`."""
    return {NAME.name: NAME} | {o.name: o for o in options}


def convert(kind: str, key: str, value: str, options: Iterable[RetrieverOption]) -> Any:
    """A spec option's text converted by the kind's declaration (``ValueError`` naming the options)."""
    table = option_table(options)
    if key not in table:
        raise ValueError(f"unknown option {key!r} for a {kind} retriever; options: {', '.join(sorted(table))}")
    return table[key].convert(kind, value)


def defaults(options: Iterable[RetrieverOption]) -> dict[str, Any]:
    """``{name: default}`` of the options that have one (a kind's ``build`` reads its defaults here)."""
    return {o.name: o.default for o in options if o.default is not None}


def members(
    options: Sequence[RetrieverOption], prefix: str, *, only: Iterable[str] = (), drop: Iterable[str] = ()
) -> tuple[RetrieverOption, ...]:
    """Another kind's options as a member's (``k1`` -> ``bm25_k1``), all of them or ``only`` those, less ``drop``.

    Returns a tuple of :class:`RetrieverOption` whose :attr:`~RetrieverOption.member` is
    ``prefix`` without its ``_``.
    """
    wanted, dropped = set(only), set(drop)
    return tuple(
        replace(o, name=prefix + o.name, member=prefix.rstrip("_"))
        for o in options
        if (not wanted or o.name in wanted) and o.name not in dropped
    )


def option_text(value: Any) -> str:
    """An option's value as a spec writes it (a bool as true/false, as :func:`convert` reads it)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def check_positive(options: Mapping[str, Any], *keys: str) -> None:
    """Refuse an integer option among ``keys`` below 1."""
    for key in keys:
        if key in options and options[key] < 1:
            raise ValueError(f"option {key!r} must be a positive integer, got {options[key]!r}")


def check_alpha(options: Mapping[str, Any], text: str, fusion: str) -> None:
    """Refuse an ``alpha`` without ``fusion=convex`` or outside [0, 1]."""
    if "alpha" in options:
        if fusion != "convex":
            raise ValueError(f"option 'alpha' in {text!r} needs fusion=convex")
        if not 0.0 <= options["alpha"] <= 1.0:
            raise ValueError(f"option 'alpha' must be in [0, 1], got {options['alpha']!r}")


def prefixed(options: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The options that start with ``prefix`` (a member's ``bm25_k1``), without it (``k1``)."""
    return {k[len(prefix) :]: v for k, v in options.items() if k.startswith(prefix)}
