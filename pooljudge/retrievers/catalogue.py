"""The registered retriever kinds as text, from their declarations: the CLI's help, the Pooling page's help and presets.

Everything here is generated from each kind's ``OPTIONS``
(:class:`pooljudge.retrievers.options.RetrieverOption`) and ``PRESETS``
(:class:`pooljudge.retrievers.options.Preset`), so a kind registered with
:func:`pooljudge.retrievers.register_retriever` shows up with its options' help and defaults.
"""

from __future__ import annotations

from pooljudge.retrievers.options import NAME, RetrieverOption
from pooljudge.retrievers.registry import RETRIEVERS, kind_module


def option_lines(kind: str) -> list[str]:
    """One line per option of ``kind`` (:meth:`RetrieverOption.describe`); a member's options as one line.

    A hybrid's ``bm25_k1``, ``bm25_b``... become ``bm25_*: the bm25 member's k1, b, ...``.
    """
    lines: list[str] = []
    options = kind_module(kind).OPTIONS
    groups: dict[str, list[RetrieverOption]] = {}
    for option in options:
        if option.member:
            groups.setdefault(option.member, []).append(option)
    for option in options:
        if not option.member:
            lines.append(option.describe())
        elif option is groups[option.member][0]:
            names = ", ".join(o.name.removeprefix(option.member + "_") for o in groups[option.member])
            lines.append(f"{option.member}_*: the {option.member} member's {names}")
    return lines


def retrievers_help() -> str:
    """Every registered kind and its options, for a command's ``--help`` (one option a line)."""
    out = [f"retriever kinds (kind or kind:option=value,...); any kind also takes {NAME.describe()}:"]
    for kind in RETRIEVERS:
        out.append(f"  {kind}")
        out.extend(f"    {line}" for line in option_lines(kind))
    return "\n".join(out)


def retrievers_markdown() -> str:
    """Every registered kind and its options as Markdown (the Pooling page's help for a spec)."""
    out = [f"Specs are `kind` or `kind:option=value,...`; any kind also takes `{NAME.name}`: {NAME.help}."]
    for kind in RETRIEVERS:
        out.append(f"\n**{kind}**")
        out.extend(f"- {line}" for line in option_lines(kind))
    return "\n".join(out)


def presets(model: str) -> dict[str, str]:
    """``{label: spec}`` of every registered kind's ``PRESETS``, in registration order.

    ``model`` names the bundled bi-encoder the collection's language gets (it fills ``{model}``
    in a label).
    """
    out: dict[str, str] = {}
    for kind, module in RETRIEVERS.items():
        for preset in getattr(module, "PRESETS", ()):
            out[preset.label.format(model=model)] = kind + (f":{preset.options}" if preset.options else "")
    return out
