"""Indirect bias (issue 14).

Rank candidate features as proxies of a protected attribute the model does not use (Watson
OpenScale's "indirect bias"), and report fairness for the proxy-defined groups, from one pass over
the data. Imports only :mod:`polfair.core`.
"""

from polfair.proxies.scan import (
    proxy_counts,
    proxy_report,
    proxy_report_from_counts,
    proxy_scan,
    proxy_scan_from_counts,
)

__all__ = ["proxy_counts", "proxy_report", "proxy_report_from_counts", "proxy_scan", "proxy_scan_from_counts"]
