"""Reports written batch by batch: the same file contents as the whole report, from the API and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import polfair as pf
from polfair.api import fairness_report_batches
from polfair.cli import main
from polfair.exceptions import PolfairError
from polfair.outputs.stream import write_report_batches
from polfair.outputs.writers import write_report

_RUN = ["run_id", "run_at", "polfair_version", "schema_version", "config_hash"]


@pytest.fixture(scope="module")
def data() -> pl.DataFrame:
    rng = np.random.default_rng(11)
    n = 2000
    return pl.DataFrame({
        "y": rng.binomial(1, 0.3, n), "p": rng.binomial(1, 0.35, n),
        "g": rng.choice(["a", 'q"uote', "c & d", "null"], n), "s": rng.choice(["F", "M"], n), "d": rng.integers(0, 2, n),
    })  # fmt: skip


@pytest.mark.parametrize("ext", [".parquet", ".csv", ".ndjson", ".json"])
def test_batches_write_the_same_file_as_the_whole_report(tmp_path: Path, data: pl.DataFrame, ext: str) -> None:
    kw = dict(y_true="y", y_pred="p", protected=["g", "s"], by="d")
    whole = pf.fairness_report(data, **kw)
    batches = list(fairness_report_batches(data, **kw, batch_rows=97))
    assert len(batches) > 5 and pl.concat(batches).equals(whole)
    a, b = tmp_path / f"whole{ext}", tmp_path / f"batches{ext}"
    write_report(whole, str(a))
    assert write_report_batches(iter(batches), b) == whole.height
    if ext == ".parquet":
        assert pl.read_parquet(b).equals(pl.read_parquet(a))
    elif ext == ".json":
        assert json.loads(b.read_text()) == json.loads(a.read_text())
    else:
        assert b.read_text() == a.read_text()


def test_batches_share_one_run_id_and_keep_the_options_hash(data: pl.DataFrame) -> None:
    kw = dict(y_true="y", y_pred="p", protected="g", run_metadata=True)
    batches = list(fairness_report_batches(data, **kw, batch_rows=50))
    got = pl.concat(batches)
    assert got["run_id"].n_unique() == 1 and got["run_at"].n_unique() == 1
    whole = pf.fairness_report(data, **kw)
    assert got["config_hash"].unique().to_list() == whole["config_hash"].unique().to_list()
    assert got.drop(_RUN).equals(whole.drop(_RUN))


def test_options_that_need_the_whole_report_give_one_batch(data: pl.DataFrame) -> None:
    kw = dict(y_true="y", y_pred="p", protected="g", thresholds={"disparate_impact": [0.8, 1.25]})
    batches = list(fairness_report_batches(data, **kw, batch_rows=10))
    assert len(batches) == 1 and batches[0].equals(pf.fairness_report(data, **kw))


def test_write_report_batches_checks_extension_and_schema(tmp_path: Path) -> None:
    with pytest.raises(PolfairError, match="txt"):
        write_report_batches([pl.DataFrame({"a": [1]})], tmp_path / "x.txt")
    with pytest.raises(PolfairError, match="differ"):
        write_report_batches([pl.DataFrame({"a": [1]}), pl.DataFrame({"b": [1]})], tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()  # atomic: nothing left behind


@pytest.mark.parametrize("ext", [".parquet", ".csv"])
def test_cli_out_writes_the_report_in_batches(tmp_path: Path, data: pl.DataFrame, ext: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # the CLI's --out goes through the request's batches (run_request_batches, counted here) and writes the whole report
    import polfair.api as api

    calls: list[int] = []
    real = api.run_request_batches

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        kwargs["batch_rows"] = 100
        yield from real(*args, **kwargs)

    monkeypatch.setattr(api, "run_request_batches", spy)
    src, out = tmp_path / "in.parquet", tmp_path / f"out{ext}"
    data.write_parquet(src)
    assert main(["report", str(src), "--y-true", "y", "--y-pred", "p", "--protected", "g", "s", "--by", "d",
                 "--out", str(out), "--no-run-metadata"]) == 0  # fmt: skip
    assert calls == [1]
    want = pf.fairness_report(data, y_true="y", y_pred="p", protected=["g", "s"], by="d")
    ref = tmp_path / f"want{ext}"
    write_report(want, str(ref))
    if ext == ".parquet":
        assert pl.read_parquet(out).equals(pl.read_parquet(ref))
    else:
        assert out.read_text() == ref.read_text()


def test_cli_streamed_parquet_keeps_the_request(tmp_path: Path, data: pl.DataFrame) -> None:
    # the streamed file carries the request in its metadata, as write_report's whole-report file does
    from polfair.core.report.run_metadata import request_of
    from polfair.outputs.writers import read_report

    src, out = tmp_path / "in.parquet", tmp_path / "out.parquet"
    data.write_parquet(src)
    assert main(["report", str(src), "--y-true", "y", "--y-pred", "p", "--protected", "g", "--out", str(out)]) == 0
    request = request_of(read_report(str(out)))
    assert request is not None and request["source"] == str(src) and request["y_pred"] == "p"
    assert request["protected"] == ["g"]
