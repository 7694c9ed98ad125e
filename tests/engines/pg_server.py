"""A throwaway PostgreSQL server for the tests, from the ``pgserver`` wheel's binaries.

The wheel ships PostgreSQL 16 (``pgserver/pginstall``); its own start function, run as root, changes
permissions under the home directory, so only its binaries are used: they are copied (keeping the
wheel's layout, so the libraries are found) into a temporary directory, a cluster is created there
with ``initdb --no-sync`` and started with ``pg_ctl`` listening on a Unix socket in that directory
only (no TCP port). PostgreSQL refuses to run as root: as root the server runs as ``nobody``
(through ``runuser``). The server is stopped and the directory removed on :meth:`Server.stop`, at
interpreter exit and on SIGTERM.

:func:`start` returns ``None`` (with the reason in :data:`LAST_ERROR`) where a server cannot start
(no wheel, no ``runuser``), so that a test can skip cleanly.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Why the last :func:`start` gave ``None``.
LAST_ERROR = ""
USER = "polfair"
DATABASE = "postgres"


@dataclass
class Server:
    """A running server: its socket directory (the host for libpq), its user, and how to stop it."""

    root: Path
    host: str
    port: int
    run_as: list[str]

    def dsn(self) -> str:
        return f"host={self.host} port={self.port} user={USER} dbname={DATABASE}"

    def ibis(self) -> Any:
        """An Ibis connection (``ibis.postgres.connect``) to the server's ``postgres`` database."""
        import ibis

        return ibis.postgres.connect(host=self.host, port=self.port, user=USER, database=DATABASE)

    def psycopg(self) -> Any:
        """A psycopg connection in autocommit mode."""
        import psycopg

        return psycopg.connect(self.dsn(), autocommit=True)

    def stop(self) -> None:
        data = self.root / "data"
        if data.exists():
            subprocess.run([*self.run_as, str(self.root / "pgserver/pginstall/bin/pg_ctl"), "-D", str(data), "-m", "immediate",
                            "-w", "stop"], capture_output=True, timeout=60, check=False)  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)


def _binaries() -> Path | None:
    try:
        import pgserver
    except ImportError:
        return None
    path = Path(pgserver.__file__).parent / "pginstall"
    return path if (path / "bin" / "postgres").exists() else None


def start() -> Server | None:
    """Start a server (a few seconds); ``None`` when it cannot (see :data:`LAST_ERROR`)."""
    global LAST_ERROR
    source = _binaries()
    if source is None:
        LAST_ERROR = "the pgserver wheel (PostgreSQL binaries) is not installed: pip install pgserver"
        return None
    run_as: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses root: run it as nobody
        runuser = shutil.which("runuser")
        if runuser is None:
            LAST_ERROR = "running as root and no runuser to start PostgreSQL as an unprivileged user"
            return None
        run_as = [runuser, "-u", "nobody", "--"]
    root = Path(tempfile.mkdtemp(prefix="polfair-pg-"))
    os.chmod(root, 0o755)
    server = Server(root, str(root / "sock"), 5432, run_as)
    try:
        # the wheel's layout: pgserver/pginstall/bin finds its libraries in ../../../pgserver.libs (RPATH)
        shutil.copytree(source, root / "pgserver" / "pginstall", symlinks=True)
        libs = source.parent.parent / "pgserver.libs"
        if libs.is_dir():
            shutil.copytree(libs, root / "pgserver.libs", symlinks=True)
        (root / "sock").mkdir()
        (root / "data").mkdir()
        if run_as:
            for p in (root / "sock", root / "data"):
                os.chown(p, 65534, 65534)
        env = {**os.environ, "LC_ALL": "C", "TZ": "UTC"}
        bin_ = root / "pgserver" / "pginstall" / "bin"
        subprocess.run([*run_as, str(bin_ / "initdb"), "-D", str(root / "data"), "-U", USER, "--no-sync", "-A",
                        "trust", "-E", "UTF8", "--locale=C"], check=True, capture_output=True, env=env,
                       timeout=120)  # fmt: skip
        opts = (f"-k {root / 'sock'} -c listen_addresses='' -p {server.port} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c TimeZone=UTC")  # fmt: skip
        subprocess.run([*run_as, str(bin_ / "pg_ctl"), "-D", str(root / "data"), "-o", opts, "-l",
                        str(root / "sock" / "log"), "-w", "-t", "60", "start"], check=True, capture_output=True,
                       env=env, timeout=90)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", b"") or b""
        LAST_ERROR = f"PostgreSQL did not start: {exc} {err.decode(errors='replace')[-500:]}"
        server.stop()
        return None
    atexit.register(server.stop)
    previous = signal.getsignal(signal.SIGTERM)

    def on_term(signum: int, frame: Any) -> None:
        server.stop()
        if callable(previous):
            previous(signum, frame)
        raise SystemExit(128 + signum)

    with contextlib.suppress(ValueError):  # not the main thread: atexit still stops it
        signal.signal(signal.SIGTERM, on_term)
    return server
