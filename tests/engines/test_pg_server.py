"""The throwaway PostgreSQL of the tests (``pg_server.py``): skips cleanly, stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pg_server
import pytest


def test_no_binaries_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pg_server, "_binaries", lambda: None)
    assert pg_server.start() is None
    assert "pip install pgserver" in pg_server.LAST_ERROR


def test_sigterm_stops_the_server_and_removes_its_directory() -> None:
    pytest.importorskip("pgserver")
    here = str(Path(__file__).parent)
    script = (
        f"import sys, time; sys.path.insert(0, {here!r}); import pg_server; s = pg_server.start(); "
        "print(s.root if s else 'NONE', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        root = proc.stdout.readline().strip()
        if root == "NONE":
            pytest.skip("no PostgreSQL server here")
        assert Path(root, "data", "postmaster.pid").exists()
        pid = int(Path(root, "data", "postmaster.pid").read_text().split()[0])
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not Path(root).exists()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"postgres (pid {pid}) still runs after SIGTERM")
