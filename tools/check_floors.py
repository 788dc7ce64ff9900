"""Check that each direct dependency is installed at the floor pyproject.toml declares.

``make test-oldest`` runs this in ``.venv-oldest`` after installing the lowest versions its
resolver allows (uv's ``--resolution lowest-direct``).  A requirement installed above its
floor has an untested floor: another requirement (often a test reference of the dev extra)
needs a newer version, so the declared floor is raised to the version printed.

Usage: ``python tools/check_floors.py EXTRA ...`` from the repository root.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from packaging.requirements import Requirement
from packaging.version import Version

# Installed from the local CPU build (2.13.0), not at its floor: its floor is not tested.
NOT_AT_FLOOR = {"torch"}


def _floor(req: Requirement) -> Version | None:
    lows = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
    return max(lows) if lows else None


def main(extras: list[str]) -> int:
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    texts = list(project["dependencies"])
    for extra in extras:
        texts += project["optional-dependencies"][extra]
    above = []
    print(f"{'requirement':34} {'installed':>12}")
    for text in texts:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            got = Version(version(req.name))
        except PackageNotFoundError:
            print(f"{text:34} {'missing':>12}")
            above.append(f"{req.name} is not installed")
            continue
        low = _floor(req)
        note = ""
        if req.name in NOT_AT_FLOOR:
            note = "  (not at its floor: floor untested)"
        elif low is not None and got != low:
            note = "  <- above the floor"
            above.append(f"{req.name}: declared >= {low}, the oldest installable here is {got}")
        print(f"{text:34} {str(got):>12}{note}")
    if above:
        print("Declared floors that are not the versions tested (raise them in pyproject.toml):")
        print("\n".join(f"  {line}" for line in above))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
