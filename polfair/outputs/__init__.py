"""What a person or an ETL job reads: the terminal summary (:mod:`polfair.outputs.summary`), file
writers (:mod:`polfair.outputs.writers`) and the self-contained HTML report (:mod:`polfair.outputs.html`).

Outputs take a finished report (a ``pl.DataFrame``); they import the core, never the engines or
the monitor, and never read the data again.
"""
