"""The HTML report: one self-contained file with charts (optional extra ``polfair[report]``).

Public names: :func:`to_html` (the page as a string), :func:`write_html` (to a file) and
:class:`HtmlReport` (displays inline in Jupyter); :func:`require_extra` checks the extra is
there. jinja2 and matplotlib are imported only when a page is rendered, so importing this package
works without the extra.
"""

from polfair.outputs.html.render import HtmlReport, require_extra, to_html, write_html

__all__ = ["HtmlReport", "require_extra", "to_html", "write_html"]
