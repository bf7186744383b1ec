"""Atomic writes: a reader sees the old content or the new, never half of either.

Two helpers, because files and folders differ:

* :func:`atomic_write` replaces a *file*: the content goes to a temporary file
  in the same directory (so the rename never crosses file systems), is
  flushed and fsynced, then ``os.replace`` puts it in place in one step.  The
  last writer wins.  On any error the old file is left as it was and the
  temporary file is removed.
* :func:`atomic_folder` publishes a *folder* built in a staging folder beside
  it.  A folder cannot replace a non-empty folder in one step, so the first
  writer wins: a process that loses the race discards its copy and uses the
  winner's (the cache entries published this way are keyed by their content,
  so both copies are equal).

Both make the new entry readable as a normal file would be (``mkstemp`` and
``mkdtemp`` create private ones) so a shared cache stays shared.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_folder", "atomic_write", "atomic_write_bytes"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable; not every platform can open a directory, which is harmless."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: str | os.PathLike[str], write: Callable[[IO[bytes]], Any]) -> Path:
    """Write a file atomically: ``write(fh)`` fills a temporary file that then replaces ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The file to create or replace; its directory must exist.
    write : callable
        Called once with the temporary file open for binary writing.  A
        writer that only takes a path (``faiss.write_index``) may write to
        ``fh.name``: the fsync that follows covers whatever reached the file.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    Exception
        Whatever ``write`` (or the file system) raised; ``path`` is then
        unchanged and no temporary file is left behind.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        with open(tmp, "wb") as fh:  # opened by name, so fh.name is the path
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)
    return target


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """:func:`atomic_write` of ``data``."""
    return atomic_write(path, lambda fh: fh.write(data))


def _fsync_tree(folder: Path) -> None:
    for root, _dirs, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def atomic_folder(path: str | os.PathLike[str], build: Callable[[Path], Any]) -> bool:
    """Publish a folder atomically: ``build(staging)`` fills a folder beside ``path`` that is then renamed.

    Parameters
    ----------
    path : str or os.PathLike
        The folder to create; its parent must exist.
    build : callable
        Called once with the empty staging folder (a ``Path``).

    Returns
    -------
    bool
        ``True`` when this call published the folder, ``False`` when
        another process published ``path`` first (this copy is discarded).

    Raises
    ------
    Exception
        Whatever ``build`` raised, or the rename's ``OSError`` when ``path``
        still does not exist after it; the staging folder is removed and
        ``path`` is left as it was.
    """
    target = Path(path)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", suffix=".tmp", dir=target.parent))
    try:
        build(staging)
        _fsync_tree(staging)
        os.chmod(staging, 0o777 & ~_umask())
        try:
            os.rename(staging, target)
        except OSError:
            if not target.is_dir():  # not a lost race: a real failure
                raise
            return False
        _fsync_dir(target.parent)
        return True
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
