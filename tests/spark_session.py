"""One local SparkSession per test process (a JVM starts in 20-50 s here: start it once).

``tests/contract`` (the parity suite), ``tests/engines/test_spark.py`` and the docs blocks of pages
that start Spark (``getOrCreate`` returns this session) share it within a pytest worker; it is
stopped at exit (:func:`stop_spark_session`). Spark resolves relative paths from the directory its
JVM started in, so the docs pass absolute paths (``os.path.abspath``). (xdist's ``loadgroup``
would put them on one worker, but it does not group under pytest 9.2: its workers rename
``item._nodeid``, which pytest 9.2 no longer reads.)
"""

from __future__ import annotations

import atexit
import functools
import shutil
from typing import Any


@functools.cache
def spark_session() -> Any:
    """The shared ``local[2]`` SparkSession, or ``None`` without pyspark or a Java runtime."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    if shutil.which("java") is None:  # pragma: no cover - no JVM on the machine
        return None
    session = (
        SparkSession.builder.master("local[2]")
        .appName("polfair-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")  # tiny test frames: one task per stage
        .config("spark.default.parallelism", "1")
        .config("spark.sql.leafNodeDefaultParallelism", "1")
        # tiny frames: interpreting the plans is faster than compiling them (halves the parity suite's job)
        .config("spark.sql.codegen.wholeStage", "false")
        .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("OFF")
    atexit.register(stop_spark_session)
    return session


def stop_spark_session() -> None:
    """Stop the shared session and its JVM (the next :func:`spark_session` starts a new one)."""
    if not spark_session.cache_info().currsize:
        return
    session = spark_session()
    spark_session.cache_clear()
    if session is None:
        return
    from pyspark import SparkContext

    session.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None
