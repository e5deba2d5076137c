"""hypothesis's profiles for this suite, loaded by `tests/conftest.py`, and the share of a profile's examples that a
property whose examples are costly draws.

- `dev` (the default): 100 random examples a property, new ones every run.
- `ci` (with `CI` set): 200, derandomized: CI draws the same examples every run, so an unrelated change never fails
  on a rare draw; exploring is `thorough`'s job.
- `thorough` (`ORCA_HYPOTHESIS_PROFILE=thorough`, before a release or after a parser change): many new random
  examples, to shake out rare inputs the fixed CI draws never reach.

None has a deadline per example (the suite runs on a shared 2-core machine), and generating a large example slowly
is not a failure.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_COMMON = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", _COMMON, max_examples=100)
settings.register_profile("ci", _COMMON, max_examples=200, derandomize=True)
settings.register_profile("thorough", _COMMON, max_examples=5000, derandomize=False)


def load_profile() -> None:
    settings.load_profile(os.environ.get("ORCA_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


def costly(share: float) -> settings:
    """Settings for a property whose every example is costly (a list of whole snapshots, a batch of lines): `share`
    of the loaded profile's examples, never fewer than 10, so that `thorough` still draws many more than `ci`."""
    loaded = settings.default
    assert loaded is not None
    return settings(max_examples=max(10, round(loaded.max_examples * share)))
