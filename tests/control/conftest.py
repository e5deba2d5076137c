"""The fixtures of orca.control's tests of real processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.control.processes import Runs


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    started = Runs(tmp_path)
    yield started
    started.end()
