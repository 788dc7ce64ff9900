"""No policy threshold typed as a number in the docs: they name the constant (issue 48, item 4).

The thresholds of a default fit (``CV_MAX_ROWS``, ``REFIT_MAX_ROWS``, ``AUTO_ROUNDS`` ... in
``distboost/estimators/policy.py``, ``SINGLE_THREAD_ROWS`` in ``distboost/boosting/threads.py``)
are defined once; the one place the docs print their values is the generated section of
docs/engine.md ("The fit's policy", ``python tools/policy_table.py``). Prose that states the
current policy names the constant (``below `CV_MAX_ROWS` training rows``), so that a changed
value cannot leave a page stating the old one.

Scanned: every docs/*.md page but docs/benchmarks.md (a record of measurements, each with the
defaults of its day), outside generated sections (``<!-- name:start -->`` ... ``<!-- name:end
-->``), fenced code blocks and inline code spans (code and quoted program output, such as an
error message that prints a constant's value, are not prose). Numbers describing a
measurement ("on 5,000 rows, 100 rounds", "1,439 training rows") are not policy and do not
match the phrasings below.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from distboost.estimators.policy import THRESHOLDS

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SKIPPED = {"benchmarks.md"}

_GENERATED = re.compile(r"<!--\s*([\w-]+):start\s*-->.*?<!--\s*\1:end\s*-->", re.S)
_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`]*`")

_N1000 = r"1,?000"
_N10000 = r"10,?000"
# The phrasings of the policy that once typed its thresholds (whitespace may wrap a line).
PATTERNS: tuple[str, ...] = (
    # CV_MAX_ROWS: cross-validation below, a held-out split above
    rf"\b(below|under|fewer\s+than|above|over)\s+{_N1000}\s+(training\s+)?rows\b",
    # CV_MAX_ROWS to REFIT_MAX_ROWS: the refit on all rows
    rf"\b(from|between)\s+{_N1000}\s+(to|and)\s+{_N10000}\b",
    # REFIT_MAX_ROWS, AUTO_COMPARE_ROWS, REPEATED_ROWS_MAX, SINGLE_THREAD_ROWS
    rf"\b(below|under|fewer\s+than|above|over)\s+{_N10000}\s+(training\s+)?rows\b",
    rf"\b(below|above)\s+{_N10000}\s*[);,]",
    # AUTO_ROUNDS_STOPPED / AUTO_ROUNDS: the round cap of n_estimators="auto"
    r"\b3,?000\s+(rounds\s+)?(under|when)\s+early\s+stopping",
    rf"\bon\s+{_N1000}\s+training\s+rows\s+or\s+more\b",
    rf"\b{_N1000}\s+otherwise\b",
    # TUNING_MAX_ROWS, FAMILY_AUTO_MAX_ROWS: the subsamples of tuning and family="auto"
    r"\bat\s+most\s+5,?000\s+(training\s+)?rows\b",
    rf"\bat\s+most\s+{_N1000}\s+(training\s+)?rows\b",
)
_POLICY = [re.compile(p, re.I) for p in PATTERNS]
# A constant followed by its value, as in `CV_MAX_ROWS = 1000`: checked in code spans too.
_NAME_AND_VALUE = re.compile(rf"\b({'|'.join(THRESHOLDS)})\s*=\s*\d")


def _blank(match: re.Match) -> str:
    """The match replaced by spaces, its newlines kept (so line numbers stay)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def violations(docs: Path = DOCS) -> list[str]:
    """``file:line: text`` of every threshold typed as a number in the pages of ``docs``."""
    found = []
    for page in sorted(docs.glob("*.md")):
        if page.name in SKIPPED:
            continue
        raw = page.read_text()
        lines = raw.splitlines()
        with_code = _GENERATED.sub(_blank, raw)
        prose = _CODE_SPAN.sub(_blank, _FENCE.sub(_blank, with_code))
        hits = [(m.start(), m.group(0)) for rx in _POLICY for m in rx.finditer(prose)]
        hits += [(m.start(), m.group(0)) for m in _NAME_AND_VALUE.finditer(with_code)]
        for start, text in sorted(hits):
            line = raw.count("\n", 0, start) + 1
            found.append(f"docs/{page.name}:{line}: {' '.join(text.split())!r} in "
                         f"{lines[line - 1].strip()!r}")
    return found


def test_no_policy_threshold_is_typed_as_a_number_in_the_docs():
    assert len(list(DOCS.glob("*.md"))) > 10  # the pages are there to be read
    found = violations()
    assert not found, ("a policy threshold typed as a number; name the constant instead "
                       "(e.g. below `CV_MAX_ROWS` training rows; the values are in "
                       "docs/engine.md, \"The fit's policy\"):\n" + "\n".join(found))


@pytest.mark.parametrize("text", [
    "Below 1,000 rows the rounds are chosen by cross-validation",
    "5-fold cross-validation below\n1,000 training rows",
    "a refit on all rows from 1,000 to 10,000 rows",
    "Between 1,000 and 10,000 rows the default's virtual ensemble",
    "one thread below 10,000 training rows",
    "all cores above 10,000 rows",
    "fewer than 10,000 training rows repeat another row's features",
    "with a refit on all rows below 10,000)",
    "3000 rounds when early stopping ends a fit on 1,000 training rows or more, 1000 otherwise",
    "3000 under early stopping",
    "each fitted on at most 5,000 training rows",
    "compared on at most 1,000 rows",
])
def test_the_patterns_catch_the_phrasings_they_replaced(text):
    assert any(rx.search(text) for rx in _POLICY), text


@pytest.mark.parametrize("text", [
    "Seconds per round on 5,000 rows, 100 rounds",
    "a training set of 3,000 rows",
    "wine's 1,439 training rows",
    "1,000 new dense and 1,000 new sparse rows",
    "the location of kin8nm and power-plant still improved at 1,000 rounds",
    "early-stopped (patience 50, at most 5,000)",
    "below `CV_MAX_ROWS` training rows; from `CV_MAX_ROWS` to `REFIT_MAX_ROWS`",
])
def test_the_patterns_leave_measurements_and_named_constants_alone(text):
    assert not any(rx.search(text) for rx in _POLICY), text


def test_generated_sections_code_and_quoted_messages_are_not_scanned(tmp_path):
    (tmp_path / "page.md").write_text(
        "Prose.\n<!-- policy:start -->\nbelow 1,000 rows\n<!-- policy:end -->\n"
        "```text\nabove 10,000 rows\n```\n"
        "| case | `ValueError` | `'auto' below 1,000 rows` |\n"
        "Now below 1,000 training rows.\n")
    (tmp_path / "benchmarks.md").write_text("Below 1,000 rows the default fit ...\n")
    found = violations(tmp_path)
    assert len(found) == 1 and found[0].startswith("docs/page.md:9: "), found
    (tmp_path / "page.md").write_text("Below `CV_MAX_ROWS = 1000` training rows\n")
    assert [v.split(": ")[0] for v in violations(tmp_path)] == ["docs/page.md:1"]
