"""A throwaway PostgreSQL cluster for the test session, and fresh databases cloned from a migrated template.

``initdb`` + ``pg_ctl`` in a temporary folder (trust authentication, a free
localhost port and a Unix socket in that folder, durability switched off
because nothing here must survive the session).  ``initdb`` refuses to run as
root, so under root (CI's fresh Debian machine) the cluster runs as the
``postgres`` account that Debian's ``postgresql`` package creates.

``POOLJUDGE_TEST_PG_URL`` (an SQLAlchemy URL of a database on a server where
that role may ``CREATE DATABASE``) replaces the throwaway cluster.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

ENV_URL = "POOLJUDGE_TEST_PG_URL"
RUN_AS = "postgres"  # the account Debian's postgresql package creates


def bin_dir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` that has ``initdb`` and ``pg_ctl`` (Debian keeps them off PATH)."""
    found = [
        Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb") if Path(p).with_name("pg_ctl").exists()
    ]
    if found:
        return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb and shutil.which("pg_ctl") else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PREFIX = "pjpg-"
OWNER = "owner.pid"
SYSTEM_TMP = "POOLJUDGE_TEST_SYSTEM_TMP"  # set by tests/conftest.py when a pytest-xdist worker has a private $TMPDIR


def system_tmp() -> Path:
    """The machine's temporary folder, where the ``postgres`` account can reach a cluster and every later session
    finds the ones a killed session left (a worker's private folder is neither)."""
    return Path(os.environ.get(SYSTEM_TMP) or tempfile.gettempdir())


SHARED_MEMORY = Path("/dev/shm")
MIN_FREE_SHARED_MEMORY = 2 << 30


def cluster_home() -> Path:
    """Where clusters live: the machine's shared-memory file system (``/dev/shm``, a tmpfs) when it has room, else
    :func:`system_tmp`.

    Every test database is a copy of a template, about a thousand files created and later removed.  On ext4,
    allocating inodes after many removals scans the recently deleted ones (the kernel's ``recently_deleted``):
    profiled over a whole ``make test``, that was more than half of the servers' CPU, about 100 CPU-s.
    """
    try:
        stats = os.statvfs(SHARED_MEMORY)
    except OSError:
        return system_tmp()
    if os.access(SHARED_MEMORY, os.W_OK | os.X_OK) and stats.f_bavail * stats.f_frsize >= MIN_FREE_SHARED_MEMORY:
        return SHARED_MEMORY
    return system_tmp()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cluster:
    """A private PostgreSQL server in a temporary folder; :meth:`stop` removes every trace."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self._as_root = os.geteuid() == 0
        self.reap_orphans()
        self.port = _free_port()
        # A short path: a Unix socket path must stay under ~100 bytes.
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=cluster_home()))
        # Which test process owns the cluster: a session killed before its teardown leaves its server
        # running, and the next session stops it (see reap_orphans).
        (self.root / OWNER).write_text(str(os.getpid()))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.started = False

    def _pg_ctl_stop(self, data: Path) -> None:
        # Immediate: nothing needs to be flushed, and the folder is removed next.
        subprocess.run(
            (["runuser", "-u", RUN_AS, "--"] if self._as_root else [])
            + [str(self.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            capture_output=True,
            timeout=60,
        )

    def reap_orphans(self) -> None:
        """Stop and remove the clusters of test sessions that died without their teardown (killed, timed out)."""
        for root in {*cluster_home().glob(f"{PREFIX}*"), *system_tmp().glob(f"{PREFIX}*")}:
            try:
                owner = int((root / OWNER).read_text())
            except (OSError, ValueError):
                continue  # not ours, or still being created
            if not _alive(owner):
                if (root / "data" / "postmaster.pid").exists():
                    self._pg_ctl_stop(root / "data")
                shutil.rmtree(root, ignore_errors=True)

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", RUN_AS, "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)

    def start(self) -> URL:
        if self._as_root:
            try:
                user = pwd.getpwnam(RUN_AS)
            except KeyError:
                raise RuntimeError(
                    f"running as root needs the '{RUN_AS}' account (apt-get install postgresql)"
                ) from None
            os.chown(self.root, user.pw_uid, user.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            )
            options = (
                f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.root} "
                # Throwaway data: no durability, so test databases are created and written fast.
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                # The concurrency tests and two app servers open many connections at once.
                "-c max_connections=300 -c shared_buffers=64MB"
            )
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        except subprocess.CalledProcessError as e:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            self.stop()
            raise RuntimeError(f"could not start PostgreSQL: {e.stderr}\n{log}") from e
        self.started = True
        return URL.create(
            "postgresql+psycopg", username="postgres", host="127.0.0.1", port=self.port, database="postgres"
        )

    def stop(self) -> None:
        if self.started:
            self._pg_ctl_stop(self.data)
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)


class Databases:
    """Fresh databases on one server, each a copy of a template migrated once to the newest schema."""

    def __init__(self, admin_url: URL | str) -> None:
        self.admin_url = make_url(admin_url)
        # CREATE/DROP DATABASE cannot run inside a transaction.
        self.admin = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        self.prefix = f"pj_{uuid.uuid4().hex[:8]}"
        self.template: str | None = None
        self._created: list[str] = []
        self._prefetch = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pg-template-copy")
        self._next: Future[str] | None = None

    def url(self, name: str) -> str:
        return self.admin_url.set(database=name).render_as_string(hide_password=False)

    def _execute(self, sql: str) -> None:
        with self.admin.connect() as conn:
            conn.execute(text(sql))

    def migrated_template(self) -> str:
        """The template's name; created and migrated on first use."""
        if self.template is None:
            from db.engine import Store

            name = f"{self.prefix}_template"
            self._execute(f'CREATE DATABASE "{name}"')
            self._created.append(name)
            Store(self.url(name)).dispose()  # nobody may stay connected to a template while it is copied
            self.template = name
        return self.template

    def _create(self, template: str | None) -> str:
        name = f"{self.prefix}_{uuid.uuid4().hex[:12]}"
        self._created.append(name)
        self._execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def create(self, *, migrated: bool = True) -> str:
        """A new database's URL: a copy of the migrated template, or empty.

        Copying the template takes a few hundred milliseconds on a loaded machine, so the next copy
        is made in the background while the test that got this one runs.
        """
        if not migrated:
            return self._create(None)
        template = self.migrated_template()
        url = self._next.result() if self._next is not None else self._create(template)
        self._next = self._prefetch.submit(self._create, template)
        return url

    def copy(self, url: str) -> str:
        """A new database's URL: a copy of the database at ``url`` (a module's seeded store; nobody may be connected)."""
        return self._create(make_url(url).database)

    def drop(self, url: str) -> None:
        name = make_url(url).database
        # FORCE ends connections a test left open (a worker process, an app server).
        self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self._created:
            self._created.remove(name)

    def close(self) -> None:
        self._prefetch.shutdown(wait=True)
        for name in reversed(self._created):
            try:
                self._execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            except Exception:  # noqa: BLE001 - best effort at teardown; the cluster goes anyway
                pass
        self._created.clear()
        self.admin.dispose()
