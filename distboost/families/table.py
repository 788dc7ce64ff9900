"""The table of registered families, generated from the registry (docs/families.md shows it).

Each row is read off the family itself: its torch class, parameters and default links, support,
whether its CRPS and Fisher information are closed forms, and the independent implementation
its tests compare against (``Family.reference``).  Where a family's own words say more than the
generated cell (a constraint, a quadrature), ``Family.doc_notes`` replaces that cell.  The
documentation build fills the table of ``docs/families.md`` from :func:`table_markdown`
(``docs/hooks.py``), so a new family file appears there without editing the page.
"""

from __future__ import annotations

import pandas as pd

from .base import Family
from .registry import available, get

__all__ = ["COLUMNS", "family_row", "names_sentence", "table", "table_markdown"]

#: Columns of the table; the keys of ``Family.doc_notes`` are their short names.
COLUMNS = {
    "name": "name",
    "torch class": "torch_class",
    "parameters (default links)": "parameters",
    "support of y": "support",
    "CRPS": "crps",
    "Fisher information": "fisher",
    "independent reference": "reference",
}


def _class_name(cls) -> str:
    module = cls.__module__
    if module.startswith("torch.distributions"):
        return cls.__name__
    return f"{module}.{cls.__name__}"


def _has_closed_fisher(family: Family) -> bool:
    kind = type(family)
    return (kind.fisher_natural is not Family.fisher_natural
            or kind.fisher_information is not Family.fisher_information)


def family_row(name: str) -> dict[str, str]:
    """One row of the table: column title -> cell (markdown), for the registered ``name``."""
    family = get(name)
    notes = dict(getattr(family, "doc_notes", {}) or {})
    cells = {"name": f"`{name}`", "torch_class": f"`{_class_name(family.torch_class)}`"}
    try:
        links = family.links
        cells["parameters"] = ", ".join(f"{p} ({links[p].name})" for p in family.param_names)
    except ValueError:  # parametrised by its data (e.g. the number of classes)
        cells["parameters"] = ""
    try:
        cells["support"] = str(family.support)
    except ValueError:
        cells["support"] = ""
    cells["crps"] = "closed form" if family.closed_form_crps else "numerical"
    cells["fisher"] = "closed form" if _has_closed_fisher(family) else "none (autograd only)"
    cells["reference"] = family.reference
    cells.update(notes)
    return {title: cells[key] for title, key in COLUMNS.items()}


def table(names=None) -> pd.DataFrame:
    """The registered families (or ``names``), one row each, in registration-name order.

    Returns
    -------
    DataFrame of shape (n_families, 7)
        Columns ``name``, ``torch class``, ``parameters (default links)``, ``support of y``,
        ``CRPS``, ``Fisher information``, ``independent reference``.
    """
    names = available() if names is None else list(names)
    return pd.DataFrame([family_row(n) for n in names], columns=list(COLUMNS))


def table_markdown(names=None) -> str:
    """:func:`table` as a markdown table (the one docs/families.md shows)."""
    frame = table(names)
    lines = ["| " + " | ".join(frame.columns) + " |",
             "|" + "---|" * len(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


def names_sentence(width: int = 96) -> str:
    """The registered names as README.md lists them: "Families (N): `a`, `b`, ...", wrapped
    at ``width`` columns (a test keeps README.md's list equal to this)."""
    names = available()
    words = [f"`{n}`," for n in names[:-1]] + [f"`{names[-1]}`."]
    lines, line = [], f"Families ({len(names)}, `db.families.available()`):"
    for word in words:
        if len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line += " " + word
    return "\n".join([*lines, line])
