"""Check the built site's API reference (``.ci/run``: after ``mkdocs build --strict -d site``).

``python docs/_ext/check_site.py site``: every name of ``polfair.__all__`` has an entry on one of
the API pages (``site/api/**/index.html``, one page per area), and the entries of the main
functions and the aif360 classes show their parameters (a signature and a Parameters table naming
the first ones), so a docstring or rendering change that loses them fails CI; and no Parameters
list shows one numpydoc entry (``a, b, c``) as rows of its own, each with the first name's type.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import polfair

#: object -> parameters its entry must show
SHOWN = {
    "fairness_report": ["data", "y_true", "y_pred", "protected", "privileged", "ci"],
    "confusion_counts": ["data", "y_true", "y_pred", "protected", "weight", "by"],
    "score_report": ["data", "y_true", "y_score", "protected"],
    "ClassificationMetric": ["data", "y_true", "y_pred", "protected", "privileged_groups"],
    "BinaryLabelDatasetMetric": ["data", "y_true", "protected", "privileged_groups"],
    "selection_rate": ["y_true", "y_pred", "pos_label", "sample_weight"],
    "demographic_parity_difference": ["y_true", "y_pred", "sensitive_features", "method"],
}


def api_pages(site: Path) -> dict[str, str]:
    """Built API page (path relative to ``site``) -> its HTML."""
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in sorted((site / "api").rglob("index.html"))}


_SECTION = re.compile(r'doc-section-title">(?:Other )?Parameters:</span></p>\s*<ul>(.*?)</ul>', re.DOTALL)
_ITEM = re.compile(r'<b><code>([^<]*)</code></b>.*?<div class="doc-md-description">(.*?)</div>', re.DOTALL)


def split_rows(page: str) -> list[str]:
    """Parameters rows that one numpydoc entry (``a, b, c``: one text) was split into: consecutive rows
    with the same text, each typed and defaulted like the first name (the docs extension joins them).
    """
    out = []
    for section in _SECTION.findall(page):
        items = _ITEM.findall(section)
        out += [f"parameters {a!r} and {b!r} are split rows of one entry (one text, the first one's type)"
                for (a, text_a), (b, text_b) in zip(items, items[1:]) if text_a.strip() and text_a == text_b]  # fmt: skip
    return out


def main(site: Path) -> int:
    """Print the problems of the built API pages under ``site``; 1 if there are any."""
    pages = api_pages(site)
    where = {n: path for n in polfair.__all__ for path, page in pages.items() if f'id="polfair.{n}"' in page}
    problems = [f"no entry for polfair.{n} on any API page" for n in polfair.__all__
                if n != "__version__" and n not in where]  # fmt: skip
    for name, params in SHOWN.items():
        if name not in where:
            continue
        page = pages[where[name]]
        start = page.find(f'id="polfair.{name}"')
        after = re.compile(rf'id="polfair\.(?!{name}[".])').search(page, start + 1)  # the next entry
        text = re.sub(r"<[^>]+>", " ", page[start : after.start() if after else None])
        if "Parameters" not in text:
            problems.append(f"polfair.{name}: no Parameters section")
        problems += [f"polfair.{name}: parameter {p} not shown" for p in params if not re.search(rf"\b{p}\b", text)]
    problems += [f"{path}: {row}" for path, page in pages.items() for row in split_rows(page)]
    for p in problems:
        print(f"check_site: {p}", file=sys.stderr)
    print(f"check_site: {site}/api: {len(pages)} pages, {len(polfair.__all__) - 1} entries, {len(SHOWN)} checked for "
          "parameters" + (f", {len(problems)} problems" if problems else ", ok"), file=sys.stderr)  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "site")))
