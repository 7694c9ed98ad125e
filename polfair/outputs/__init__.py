"""What a person or an ETL job reads: the terminal summary, file writers and the HTML report.

:mod:`polfair.outputs.summary` prints the terminal summary, :mod:`polfair.outputs.writers` writes
report files (atomic, appends) and :mod:`polfair.outputs.html` builds the self-contained HTML report.

Outputs take a finished report (a ``pl.DataFrame``); they import the core, never the engines or
the monitor, and never read the data again.
"""
