"""MkDocs hooks (``hooks:`` in mkdocs.yml): pages generated from the code when the docs build.

``<!-- family-table -->`` on a page becomes the table of registered families,
:func:`distboost.families.table.table_markdown`, so the families page lists every family
that is registered, a new family file included, without editing the page.
"""

from __future__ import annotations

MARKER = "<!-- family-table -->"


def on_page_markdown(markdown: str, **kwargs) -> str:
    if MARKER not in markdown:
        return markdown
    from distboost.families import table_markdown

    return markdown.replace(MARKER, table_markdown())
