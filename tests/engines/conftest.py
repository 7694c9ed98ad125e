"""Fixtures of the engine tests: one throwaway PostgreSQL server per session (``pg_server.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A running PostgreSQL 16 server (:class:`pg_server.Server`), shared by the session; skips the
    test where none can start (no ``pgserver`` wheel, no ``ibis``/``psycopg``)."""
    pytest.importorskip("ibis")
    pytest.importorskip("psycopg")
    pytest.importorskip("sqlglot")
    import pg_server

    server = pg_server.start()
    if server is None:
        pytest.skip(f"no PostgreSQL server: {pg_server.LAST_ERROR}")
    try:
        yield server
    finally:
        server.stop()
