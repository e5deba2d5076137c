"""Shared test settings."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# CI runs on a shared 2-core machine: no deadline per example, and a fixed example budget.
settings.register_profile(
    "ci", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.register_profile("dev", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow])
# Before a release, or after a parser change: ORCA_HYPOTHESIS_PROFILE=thorough shakes out rare inputs that the
# per-run budget may take many CI runs to draw.
settings.register_profile(
    "thorough", deadline=None, max_examples=5000, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.load_profile(os.environ.get("ORCA_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))
