"""Rewrite the generated section of docs/engine.md ("The fit's policy") from
:data:`distboost.estimators.policy.RULES` and a default regressor's plans
(``tests/estimators/test_policy.py`` fails while the page is stale).

Run: ``python tools/policy_table.py``
"""

from __future__ import annotations

from pathlib import Path

import distboost as db
from distboost.estimators.policy import policy_markdown

PAGE = Path(__file__).resolve().parents[1] / "docs" / "engine.md"
START, END = "<!-- policy:start -->", "<!-- policy:end -->"


def main() -> None:
    text = PAGE.read_text()
    block = f"{START}\n{policy_markdown(db.DistributionalRegressor())}{END}"
    text = text[:text.index(START)] + block + text[text.index(END) + len(END):]
    PAGE.write_text(text)
    print(f"wrote {PAGE}")


if __name__ == "__main__":
    main()
