"""Where pooljudge keeps derived artefacts on disk (indexes, embeddings, unpacked models).

``$POOLJUDGE_CACHE`` if set, else ``~/.cache/pooljudge``.  Every artefact is
keyed by the content it was derived from (see :func:`content_key`), so a stale
entry is never reused and a repeated run computes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def cache_dir(*parts: str) -> Path:
    """The cache folder (or a sub-folder of it), created on demand."""
    root = Path(os.environ.get("POOLJUDGE_CACHE") or Path.home() / ".cache" / "pooljudge").expanduser()
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def content_key(texts: Iterable[str], *, params: dict[str, Any] | None = None, digest_size: int = 16) -> str:
    """A hex digest of a sequence of texts (order matters) and a JSON-serialisable parameter dict."""
    h = hashlib.blake2b(digest_size=digest_size)
    h.update(json.dumps(params or {}, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    for text in texts:
        encoded = text.encode("utf-8")
        h.update(len(encoded).to_bytes(8, "little"))
        h.update(encoded)
    return h.hexdigest()
