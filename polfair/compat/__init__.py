"""Peers' names and semantics, one module (or package) per peer, each a facade over :mod:`polfair.core`.

* :mod:`polfair.compat.aif360` — IBM aif360 0.6.1's ``ClassificationMetric`` and
  ``BinaryLabelDatasetMetric`` (quirks included) and its second-pass metrics.
* :mod:`polfair.compat.fairlearn` — fairlearn-style metrics as Polars expressions.
* :mod:`polfair.compat.ignite` — pytorch-ignite's multiclass / multilabel fairness metrics.
* :mod:`polfair.compat.sklego` — scikit-lego's scikit-learn scorers.
* :mod:`polfair.compat.yardstick` — R yardstick's groupwise metrics.

A peer module imports the core, never another peer.
"""
