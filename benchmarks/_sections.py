"""A benchmark's own section of a markdown page (``docs/benchmarks.md``): the block between
its two markers is replaced, or appended when the page has none, so that every script
rewrites only its own results."""

from __future__ import annotations

from pathlib import Path


def write_section(path: Path, block: str, start: str, end: str) -> None:
    """Replace the text from ``start`` to ``end`` in ``path`` by ``block`` (which holds both
    markers), or append ``block`` when the page lacks them."""
    doc = path.read_text() if path.exists() else ""
    block = block.rstrip("\n")
    if start in doc and end in doc:
        doc = doc[:doc.index(start)] + block + doc[doc.index(end) + len(end):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc)
