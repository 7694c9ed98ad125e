"""One local SparkSession for the whole test session (a JVM starts in 20-50 s here: start it once).

``tests/contract`` (the parity suite) and ``tests/engines/test_spark.py`` share it; it stops when
the interpreter exits.
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
    atexit.register(session.stop)
    return session
