"""Run background jobs in a worker process and report their progress to the store.

The app queues a job row and calls :func:`launch`, which starts
``pooljudge job run ID`` as a detached process; the page then only reads the
row.  The CLI can run the same job in the foreground.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from db.engine import Store
from db.jobs import JobInfo, fail_job, finish_job, report_progress, start_job

if TYPE_CHECKING:
    from db.importer import ImportSummary

JobHandler = Callable[[Store, JobInfo, "Reporter"], Any]
"""A job kind's work: returns its result, a dataclass (or a JSON object) that :func:`db.jobs.finish_job` stores."""


class Reporter:
    """Progress callback for a job: writes at most every ``interval`` seconds (and always at stage changes)."""

    def __init__(self, store: Store, job_id: int, *, interval: float = 0.5, echo: Callable[[str], None] | None = None):
        self.store = store
        self.job_id = job_id
        self.interval = interval
        self.echo = echo
        self.stage = ""
        self._last = 0.0

    def __call__(self, done: int, total: int | None = None, message: str | None = None) -> None:
        now = time.monotonic()
        stage_changed = message is not None and message != self.stage
        if not stage_changed and now - self._last < self.interval and (total is None or done < total):
            return
        if message is not None:
            self.stage = message
        self._last = now
        with self.store.write() as session:
            report_progress(session, self.job_id, done, total, message, new_stage=stage_changed)
        if self.echo is not None and stage_changed and message is not None:  # stage_changed implies a message
            self.echo(message)

    def stage_callback(self, message: str) -> Callable[[int, int], None]:
        """A ``progress(done, total)`` callback for one stage of the job, labelled ``message``."""
        self(0, None, message)
        return lambda done, total: self(done, total, message)


def handlers() -> dict[str, JobHandler]:
    from pooljudge import alignment_job
    from pooljudge.pool_job import run_pool_job
    from pooljudge.query_vectors_job import KIND, run_query_vectors_job
    from pooljudge.training import run_train_job

    jobs = {"pool": run_pool_job, "import": run_import_job, "train": run_train_job, KIND: run_query_vectors_job}
    return jobs | {alignment_job.KIND: alignment_job.run_alignment_job}


IMPORT_STAGES = {
    "reading": "Reading and checking the input",
    "checking": "Comparing with the stored collection",
    "writing": "Writing",
}


def run_import_job(store: Store, info: JobInfo, report: Reporter) -> ImportSummary:
    """The app's import: :func:`db.importer.import_path` with the job's params, progress into the job row.

    Params: ``format``, ``path``, ``collection``, ``merge`` (bool), ``qrels_name``, ``allow_unknown_ids`` (bool),
    ``allow_large_grades`` (bool: grades beyond -1000..1000), ``level`` and ``run_name`` (optional).  An upload from the browser also has ``upload``:
    ``{"dir": staging folder, "name": the uploaded file's name}`` (:mod:`pooljudge.uploads`): a zip is
    unpacked safely first, every message names the uploaded file instead of the temp path, and the
    staging folder is removed whatever the outcome (``path`` is then only the name shown).
    """
    p = info.params
    upload = p.get("upload")
    if not upload:
        return _import(store, p, p["path"], report)
    from core.errors import FormatError
    from db.jobs import relabel_import_source
    from pooljudge import uploads

    names: dict[str, str] = {}
    try:
        report(0, None, "Unpacking the upload")
        path, names = uploads.prepare(upload["dir"], upload["name"])
        result = _import(store, p, path, report)
    except FormatError as exc:
        raise FormatError(
            uploads.public_text(exc.path, names), exc.line, uploads.public_text(exc.message, names)
        ) from None
    except (ValueError, LookupError) as exc:
        text = error_text(exc)
        if not names or uploads.public_text(text, names) == text:
            raise
        raise ValueError(uploads.public_text(text, names)) from None
    finally:
        uploads.discard(upload["dir"])
    with store.write() as session:  # the import history shows what was uploaded, not a removed temp folder
        relabel_import_source(session, str(path), f"upload: {upload['name']}")
    return _public_summary(result, lambda text: uploads.public_text(text, names))


def _public_summary(summary: ImportSummary, public: Callable[[str], str]) -> ImportSummary:
    """``summary`` with ``public`` applied to its texts: reader notes and names may quote the upload's temp path."""
    return replace(
        summary,
        collection=public(summary.collection),
        qrels_version=None if summary.qrels_version is None else public(summary.qrels_version),
        runs={public(name): n for name, n in summary.runs.items()},
        notes=[public(note) for note in summary.notes],
    )


def _import(store: Store, p: dict[str, Any], path: Any, report: Reporter) -> ImportSummary:
    from core.limits import allow_large_grades
    from db.importer import import_path

    with allow_large_grades(bool(p.get("allow_large_grades"))):  # the readers are consumed inside import_path
        summary = import_path(
            store,
            p["format"],
            path,
            name=p["collection"],
            mode="merge" if p.get("merge") else "create",
            qrels_name=p.get("qrels_name") or "imported",
            allow_unknown_ids=bool(p.get("allow_unknown_ids")),
            level=p.get("level"),
            run_name=p.get("run_name"),
            progress=lambda stage, done, total: report(done, total, IMPORT_STAGES.get(stage, stage)),
        )
    return summary


def error_text(exc: BaseException) -> str:
    """What a job's page shows for its failure: the message of an expected error, never a traceback.

    Bad input (``file:line: ...`` from the strict readers), conflicts and
    unknown names are ``ValueError``/``LookupError``: their message says it
    all.  Anything else keeps its type, which is a hint that it is a bug.
    """
    if isinstance(exc, (ValueError, LookupError)):
        return str(exc.args[0]) if isinstance(exc, LookupError) and exc.args else str(exc)
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def run_job(store: Store, job_id: int, *, echo: Callable[[str], None] | None = None) -> Any:
    """Run a queued job to completion in this process; its row ends ``done`` or ``failed``.

    Returns the handler's result as it made it (:class:`pooljudge.pool_job.PoolResult`,
    :class:`db.importer.ImportSummary`, :class:`core.training.data.TrainResult`, ...); the row stores its JSON.
    """
    with store.write() as session:
        info = start_job(session, job_id)
    handler = handlers().get(info.kind)
    reporter = Reporter(store, job_id, echo=echo)
    try:
        if handler is None:
            raise ValueError(f"unknown job kind {info.kind!r}")
        result = handler(store, info, reporter)
    except Exception as exc:
        with store.write() as session:
            fail_job(session, job_id, error_text(exc))
        raise
    with store.write() as session:
        finish_job(session, job_id, result)
    return result


JOB_NICENESS = 10
"""How much lower a launched job's CPU priority is than its launcher's: pooling, encoding and training take
minutes of every core they get, and the app's pages, served by the process that launched them, must not wait
behind them for one."""


def launch(store: Store, job_id: int) -> subprocess.Popen:
    """Start ``pooljudge job run`` for ``job_id`` in its own session, detached from the caller, at a lower
    CPU priority (:data:`JOB_NICENESS`)."""
    url = store.engine.url.render_as_string(hide_password=False)
    log_dir = os.environ.get("POOLJUDGE_JOB_LOGS")
    out = open(os.path.join(log_dir, f"job-{job_id}.log"), "ab") if log_dir else subprocess.DEVNULL
    process = subprocess.Popen(
        [sys.executable, "-m", "pooljudge.cli", "--db", url, "--quiet", "job", "run", str(job_id)],
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    # set from here rather than in the child (a preexec_fn is unsafe in the server's threaded process): the
    # interpreter is still starting, and the threads and processes the job starts later inherit the priority
    if hasattr(os, "setpriority"):
        with contextlib.suppress(OSError):  # the job ended already
            os.setpriority(os.PRIO_PROCESS, process.pid, os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS)
    _lower_session_priority(process.pid)
    return process


OWN_AUTOGROUP = "/proc/self/autogroup"
AUTOGROUP_WRITE_TRIES = 5

_AUTOGROUP_LINE = re.compile(r"^/autogroup-\d+ nice (-?\d+)\s*$")


def autogroup_niceness(line: str) -> int | None:
    """The nice value in a ``/proc/PID/autogroup`` line ("/autogroup-N nice K"), None for a line it cannot read.

    The file reads empty for a process in the kernel's root group, the one a process is in until it or a parent
    calls ``setsid`` (a container's processes often never do); the root group's tasks weigh as at nice 0.
    """
    if not line.strip():
        return 0
    match = _AUTOGROUP_LINE.match(line)
    return int(match.group(1)) if match else None


def _lower_session_priority(pid: int) -> None:
    """Nice the CPU group of ``pid``'s session by :data:`JOB_NICENESS` more than the caller's.

    Linux's autogroup scheduling (on by default in most kernels) shares the CPU between sessions first, and a
    nice value counts only inside its session: the job, alone in the session it starts, would get as much CPU
    as the whole server however niced it is.  No library sets a session group's nice value; it is one write to
    ``/proc/PID/autogroup`` (sched(7)).  Elsewhere (no autogroups, not Linux) the process's niceness is all.
    """
    with contextlib.suppress(OSError):
        with open(OWN_AUTOGROUP, encoding="ascii") as own:
            niceness = autogroup_niceness(own.read())
        if niceness is None:  # a line this kernel writes otherwise: the nice value alone counts
            return
        for _ in range(AUTOGROUP_WRITE_TRIES):
            try:
                set_autogroup_nice(pid, min(niceness + JOB_NICENESS, 19))
                return
            except BlockingIOError:  # the kernel takes one such write per 100 ms from a non-root user
                time.sleep(0.1)


def set_autogroup_nice(pid: int, niceness: int) -> None:
    with open(f"/proc/{pid}/autogroup", "w", encoding="ascii") as group:
        group.write(str(niceness))
