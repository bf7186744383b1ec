"""The pooling methods a pooling job can name, and how a job's parameters reach each one.

Adding a method is one function (``pool(runs, size, *, queries, **options) -> Pool``) and one
line: ``register_pooling_method(PoolingMethod("mine", my_pool))``; the pooling job, the CLI's
``--method`` and the Pooling page read :data:`POOLING_METHODS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.fusion import RunsArg
from core.pooling.methods import depth_pool, rbp_pool, rrf_pool, take_pool
from core.pooling.types import Pool

DEFAULT_DEPTH = 50
"""Depth pooling's depth when a job names none (the CLI's ``--depth``, the Pooling page, the job's parameters)."""


@dataclass(frozen=True)
class PoolingMethod:
    """A pooling method by name: its function and the job parameters it reads.

    Attributes
    ----------
    name : str
        What a job's ``method`` (the CLI's ``--method``) says.
    pool : callable
        ``pool(runs, n, *, queries=..., **options) -> Pool``.
    budget : {"depth", "size"}
        The job parameter giving ``n``: ``"depth"`` (every run's top ``depth``), or ``"size"``
        (a budget per query; a job without ``size`` uses its ``depth``).
    options : mapping
        Further job parameters: ``{job_key: (keyword, type, default)}``, e.g. RBP's
        ``{"rbp_p": ("p", float, 0.8)}``.
    """

    name: str
    pool: Callable[..., Pool]
    budget: str = "size"
    options: Mapping[str, tuple[str, type, Any]] = field(default_factory=dict)

    def __call__(
        self,
        runs: RunsArg,
        *,
        depth: int = DEFAULT_DEPTH,
        size: int | None = None,
        options: Mapping[str, Any] | None = None,
        queries: Sequence[str] | None = None,
    ) -> Pool:
        """Pool ``runs`` with a job's ``depth``, ``size`` and further ``options`` (``{job_key: value}``).

        ``n`` is ``depth`` for a method whose budget is the depth, else ``size`` (``depth`` when None);
        each of this method's :attr:`options` takes its value from ``options``, or its default.
        """
        n = depth if self.budget == "depth" or size is None else size
        given = options or {}
        kwargs = {
            keyword: typ(given[key] if given.get(key) is not None else default)
            for key, (keyword, typ, default) in self.options.items()
        }
        return self.pool(runs, n, queries=queries, **kwargs)


POOLING_METHODS: dict[str, PoolingMethod] = {}
"""Every pooling method a job may name, in the order the CLI and the page offer them."""


def register_pooling_method(method: PoolingMethod) -> PoolingMethod:
    """Add ``method`` to :data:`POOLING_METHODS` (a name already taken is refused)."""
    if method.name in POOLING_METHODS:
        raise ValueError(f"a pooling method named {method.name!r} is already registered")
    POOLING_METHODS[method.name] = method
    return method


def pooling_method(name: str) -> PoolingMethod:
    """The registered method ``name``; ``ValueError`` naming the known ones."""
    if name not in POOLING_METHODS:
        known = list(POOLING_METHODS)
        raise ValueError(f"unknown pooling method {name!r}; expected {', '.join(known[:-1])} or {known[-1]}")
    return POOLING_METHODS[name]


register_pooling_method(PoolingMethod("depth", depth_pool, budget="depth"))
register_pooling_method(PoolingMethod("take", take_pool))
register_pooling_method(PoolingMethod("rrf", rrf_pool))
register_pooling_method(PoolingMethod("rbp", rbp_pool, options={"rbp_p": ("p", float, 0.8)}))
