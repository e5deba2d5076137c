"""What a person or a script reads of `orca metrics`, held byte for byte to the outputs kept in `golden/` (how they
are made, and how to make them again on purpose, is in `golden.py`)."""

from __future__ import annotations

import pytest

from tests.reader.golden import GOLDEN, outputs


@pytest.fixture(scope="module")
def made() -> dict[str, bytes]:
    return outputs()


def test_every_kept_output_is_made_and_every_one_made_is_kept(made: dict[str, bytes]) -> None:
    assert sorted(made) == sorted(path.name for path in GOLDEN.iterdir())


@pytest.mark.parametrize("name", sorted(path.name for path in GOLDEN.iterdir()))
def test_the_output_is_as_kept(made: dict[str, bytes], name: str) -> None:
    kept = (GOLDEN / name).read_bytes()
    assert made.get(name) == kept, (
        f"{name} differs from the kept output; if the change is meant, run `python -m tests.reader.golden` "
        "and read the difference"
    )
