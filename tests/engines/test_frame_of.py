"""One frame adapter (issue 38): ``engines.frame.frame_of`` gives every pass a ``contract.Frame``."""

from __future__ import annotations

import polars as pl
import pytest

from polfair.core.contract import Frame, PolarsFrame
from polfair.engines.frame import frame_of


def test_polars_inputs_get_the_polars_frame(tmp_path) -> None:
    df = pl.DataFrame({"y": [1, 0], "g": ["a", "b"]})
    df.write_parquet(tmp_path / "d.parquet")
    for data in (df, df.lazy(), str(tmp_path / "d.parquet")):
        frame = frame_of(data)
        assert type(frame) is PolarsFrame and isinstance(frame, Frame)
        assert frame.names == ["y", "g"]


def test_a_duckdb_relation_gets_the_foreign_frame_with_the_same_interface() -> None:
    duckdb = pytest.importorskip("duckdb")
    pytest.importorskip("narwhals")
    from polfair.engines.narwhals import ForeignFrame

    rel = duckdb.connect().sql("select 1 as y, 'a' as g union all select 0, 'b'")
    frame = frame_of(rel)
    assert type(frame) is ForeignFrame and isinstance(frame, Frame)
    assert frame.names == ["y", "g"]
    polars = frame_of(pl.DataFrame({"y": [1, 0], "g": ["a", "b"]}))
    for f in (frame, polars):  # the same pass, written once, on either engine
        out = f.aggregate({"g": f.column("g", "protected").expr}, ["g"], lambda ns: [ns.len().alias("n")])
        assert out.sort("g").to_dict(as_series=False) == {"g": ["a", "b"], "n": [1, 1]}
