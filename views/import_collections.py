"""Import a collection, qrels or runs, uploaded or from a path on the server, as a background job with progress."""

import pandas as pd
import streamlit as st

from core.errors import FormatError
from core.formats import FORMATS
from db.importer import ImportSummary, check_regular_input
from db.jobs import create_job, list_jobs
from db.queries import import_history
from db.vocab import JobStatus, Role
from pooljudge.jobs import launch
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import get_store, md_escape
from pooljudge.uploads import UPLOAD_MAX_MB, ZIP_MAX_BYTES, ZIP_MAX_FILES, discard, stage_upload

require_role(Role.ADMIN)
st.title("Import")
st.caption(
    "Reads an uploaded file (a folder as a .zip) or a file or folder on the machine running pooljudge, in a "
    "background job that goes on if you leave "
    "or reload this page. The whole input is checked first: on any error nothing is imported. The new "
    "collection appears only once it is complete, and annotators keep labelling meanwhile."
)

store = get_store()
with st.form("import", enter_to_submit=False):  # Enter in a box would start the import job: only the button does
    upload = st.file_uploader(
        f"Upload a file (plain or .gz) or a folder as a .zip (at most {UPLOAD_MAX_MB} MB)",
        max_upload_size=UPLOAD_MAX_MB,
        help=f"A zip may unpack to at most {ZIP_MAX_BYTES // 1024**3} GiB in {ZIP_MAX_FILES:,} files; absolute "
        "paths, '..' and links in it are refused. The upload is removed once imported.",
    )
    path = st.text_input("Path (file or folder, plain or .gz)", placeholder="/data/my-collection")
    fmt = st.selectbox("Format", sorted(FORMATS), format_func=lambda name: f"{name}: {FORMATS[name].help}")
    name = st.text_input("Collection name")
    merge = st.checkbox("Merge into an existing collection (add what is new, refuse conflicts)")
    qrels_name = st.text_input("Qrels version name", value="imported")
    run_name = st.text_input("Run name (a single-run file; default: the file name without extension)")
    level = st.selectbox(
        "Relevance level of a new collection",
        [None, 1, 2, 3],
        format_func=lambda v: (
            "from the qrels: 1 if their grades are 0/1, else 2" if v is None else f"grade >= {v} is relevant"
        ),
        help="Binary measures (MAP, MRR, P, R) count grade >= level as relevant. An existing collection keeps its level.",
    )
    allow_unknown = st.checkbox(
        "Accept qrels and run entries naming queries or passages the collection lacks",
        help="Refused by default: a typo in an id would silently score 0. TREC qrels may judge documents outside "
        "the corpus: accept them here, the summary counts them.",
    )
    allow_large = st.checkbox(
        "Accept qrels grades beyond -1000..1000",
        help="Refused by default: such a grade is usually a score or an id in the grade column, and evaluating "
        "it makes trec_eval allocate 8 bytes per grade level.",
    )
    submitted = st.form_submit_button("Import", type="primary")


def _start_import(shown_path: str, **extra) -> int:
    """Queue and launch the import job of the form's choices; its id.

    ``shown_path`` is the server path, or the uploaded file's name (``extra``: where the upload is staged).
    """
    params = {
        "format": fmt,
        "path": shown_path,
        "collection": name.strip(),
        "merge": merge,
        "qrels_name": qrels_name.strip() or "imported",
        "allow_unknown_ids": allow_unknown,
        "allow_large_grades": allow_large,
        "level": level,
        "run_name": run_name.strip() or None,
        **extra,
    }
    with store.write() as session:
        job_id = create_job(session, "import", params)
    launch(store, job_id)
    return job_id


if submitted:
    if not name.strip() or (upload is None) == (not path.strip()):
        st.error("Give a collection name, and either a file to upload or a path on the server (not both).")
    elif upload is not None:
        if upload.size > UPLOAD_MAX_MB * 1024 * 1024:  # Streamlit checks too; this page's limit is its own
            st.error(f"{md_escape(upload.name)} is larger than {UPLOAD_MAX_MB} MB; nothing was imported.")
        else:
            # a private temp folder the job unpacks, reads and removes (pooljudge.uploads)
            staged = stage_upload(upload.name, upload.getvalue())
            try:
                job_id = _start_import(upload.name, upload={"dir": str(staged), "name": upload.name})
            except BaseException:
                discard(staged)
                raise
            st.toast(f"Import job {job_id} started")
    else:
        try:
            check_regular_input(path.strip())  # a FIFO would block the job forever: refuse it here, at once
        except FormatError as exc:
            st.error(f"Nothing was imported. {md_escape(str(exc))}", icon=":material/error:")
        else:
            st.toast(f"Import job {_start_import(path.strip())} started")


def _summary(result: ImportSummary) -> str:
    text = (
        f"{result.passages_added:,} passages, {result.queries_added:,} queries, "
        f"{result.qrels_added:,} qrels entries and {len(result.runs)} runs imported"
    )
    if result.relevance_level is not None:  # a result stored without it says nothing of it
        text += f"; relevance level {result.relevance_level}"
    unknown = [
        f"{n:,} unknown {kind} id{'s' * (n != 1)}"
        for kind, n in (("query", result.unknown_query_ids), ("passage", result.unknown_passage_ids))
        if n
    ]
    if unknown:
        text += f"; kept {' and '.join(unknown)}"
    return text


def _recent_jobs() -> tuple[list, set[int]]:
    with store.read() as session:
        jobs = list_jobs(session, kind="import", limit=5)
    return jobs, {j.id for j in jobs if j.status in (JobStatus.QUEUED, JobStatus.RUNNING) and not j.stale}


def import_jobs() -> None:
    """The recent import jobs, read from the store: a reload finds a running import again."""
    require_role(Role.ADMIN)  # every fragment run: a disabled or demoted account stops here
    jobs, active = _recent_jobs()
    watched = st.session_state.setdefault("import_jobs_running", set())
    st.session_state["import_jobs_running"] = active
    if watched - active:  # an import this page watched has ended: refresh the history below too
        st.rerun(scope="app")
    for job in jobs:
        label = (
            f"Job {job.id} · {md_escape(job.params.get('format', '?'))} "
            f"{md_escape(job.params.get('path', '?'))} → {md_escape(job.params.get('collection', '?'))}"
        )
        if job.status in (JobStatus.QUEUED, JobStatus.RUNNING) and not job.stale:
            count = f"{job.done:,}/{job.total:,}" if job.total else f"{job.done:,} records"
            st.progress(job.fraction or 0.0, text=f"{label}: {md_escape(job.message or job.status)} ({count})")
        elif job.stale:
            st.warning(
                f"{label}: the worker stopped reporting (last: {md_escape(job.message)}); "
                "nothing of it is visible, and its leftovers are removed automatically"
            )
        elif job.status == JobStatus.FAILED:
            st.error(f"{label} failed. Nothing was imported. {md_escape(job.error or '')}", icon=":material/error:")
        elif job.status == JobStatus.DONE and job.result and (summary := job.result_as(ImportSummary)):
            st.success(f"{label}: {_summary(summary)}.")
            for note in summary.notes:  # reader notes quote the input: escaped
                st.info(f"Note: {md_escape(note)}", icon=":material/info:")
    if not jobs:
        st.caption("No import jobs yet.")


st.subheader("Import jobs")
# Refreshed every second only while an import runs: an idle page stays still (a periodic rerun would
# also close the format list under the user's pointer).
st.fragment(import_jobs, run_every=1.0 if _recent_jobs()[1] else None)()

st.subheader("Import history")
with store.read() as session:
    history = import_history(session)
if history:
    st.dataframe(pd.DataFrame(history), hide_index=True, width="stretch")
else:
    st.caption("No imports yet.")
