"""The name helpers (docs/behaviour.md §4.1, §6): `PREFIX` and `machine_name`. Expected values written by hand."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from orca.sample.compute.names import machine_name
from orca.sample.line_format import PREFIX


def test_prefix_is_the_documented_one() -> None:
    """docs/behaviour.md §4.1, §6: every stdout line starts `orca-sample ` (with its space)."""
    assert PREFIX == "orca-sample "


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ip-10-0-1-5", "worker-ip-10-0-1-5"),
        ("ip-10-0-1-5.ec2.internal", "worker-ip-10-0-1-5.ec2.internal"),
        ("Build_Box-7", "worker-Build_Box-7"),
        ("", "worker-"),
        ("a b", "worker-a_b"),
        ("../etc/passwd", "worker-.._etc_passwd"),
        ("host:8080", "worker-host_8080"),
        ("tab\there\nnl", "worker-tab_here_nl"),
        ("nul\x00", "worker-nul_"),
        ("café", "worker-caf_"),
        ("日本", "worker-__"),
        ("ａｂ", "worker-__"),  # fullwidth letters are not ASCII letters
        ("١٢", "worker-__"),  # nor are Arabic-Indic digits
    ],
)
def test_machine_name(name: str, expected: str) -> None:
    assert machine_name(name) == expected


KEPT = set(string.ascii_letters + string.digits + ".-_")


@given(st.text())
def test_machine_name_is_one_safe_path_component(name: str) -> None:
    """Whatever the name: `worker-` + one kept character or `_` per character, so no `/` or NUL reaches a path."""
    result = machine_name(name)
    assert result.startswith("worker-")
    assert len(result) == len("worker-") + len(name)
    assert set(result) <= KEPT
    assert all(
        kept == (original if original in KEPT else "_") for kept, original in zip(result[7:], name, strict=True)
    )
