"""How much memory is left, and a refusal for work that would take too much of it.

trec_eval (and so pytrec_eval) allocates 8 bytes per grade level up to the
largest grade of the qrels (``te_form_res_rels``): a grade of 2,000,000,000
costs about 15 GiB per evaluation.  :func:`check_grade_levels_fit` refuses such
an evaluation before pytrec_eval is called, instead of letting it swap or be
killed.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["available_memory", "check_grade_levels_fit", "trec_eval_grade_bytes"]

_MEMINFO = Path("/proc/meminfo")
_CGROUP_FILES = (Path("/sys/fs/cgroup/memory.max"), Path("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
_CGROUP_USAGE = (Path("/sys/fs/cgroup/memory.current"), Path("/sys/fs/cgroup/memory/memory.usage_in_bytes"))


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def _meminfo_available() -> int | None:
    try:
        lines = _MEMINFO.read_text(encoding="ascii").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for line in lines:
        name, _, value = line.partition(":")
        if name == "MemAvailable" and value.split()[0].isdigit():
            return int(value.split()[0]) * 1024  # the kernel reports kB
    return None


def available_memory() -> int | None:
    """Bytes this process could still allocate without swapping, or None when the system does not say.

    Linux's ``MemAvailable`` (free memory plus what the page cache can give
    back), lowered to what a cgroup (container) limit leaves; elsewhere the
    free physical pages (``sysconf``).
    """
    found = _meminfo_available()
    if found is None:
        try:
            found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    for limit_file, usage_file in zip(_CGROUP_FILES, _CGROUP_USAGE, strict=True):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None:
            found = min(found, max(limit - usage, 0))
    return found


def trec_eval_grade_bytes(top_grade: int) -> int:
    """The bytes trec_eval allocates for the grade levels ``0..top_grade`` (a C ``long`` count each)."""
    return 8 * (max(top_grade, 0) + 1)


def check_grade_levels_fit(top_grade: int) -> None:
    """Refuse an evaluation whose grade levels would take more than half of the memory left.

    Half, not all: the rest belongs to the app, the store and the other users
    of a shared machine.

    Parameters
    ----------
    top_grade : int
        The largest grade of the qrels.

    Raises
    ------
    ValueError
        Naming the grade, the allocation and the memory available.  Nothing is
        refused when the available memory is unknown.
    """
    need = trec_eval_grade_bytes(top_grade)
    available = available_memory()
    if available is None or need <= available // 2:
        return
    gib = 2**30
    raise ValueError(
        f"the largest grade is {top_grade}: trec_eval would allocate about {need / gib:.1f} GiB for it "
        f"(8 bytes per grade level), more than half of the {available / gib:.1f} GiB of memory available; "
        "refusing to evaluate (map the grades onto a small scale first)"
    )
