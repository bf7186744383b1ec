"""The `job` command: background jobs."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `job` command: background jobs."""
    p = sub.add_parser("job", help="background jobs")
    p.add_argument("action", choices=["run", "list"])
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from db.jobs import list_jobs
    from pooljudge.jobs import run_job

    store = open_store(args)
    if args.action == "run":
        if args.id is None:
            raise ValueError("job run needs a job id")
        run_job(store, args.id)
        return 0
    with store.read() as session:
        for job in list_jobs(session, limit=args.limit):
            state = "stale" if job.stale else job.status
            print(f"{job.id}\t{job.kind}\t{state}\t{job.done}/{job.total or '?'}\t{job.message}\t{job.error or ''}")
    return 0
