"""A worker's metrics file name (docs/behaviour.md §6)."""

from __future__ import annotations

import string

_KEPT = frozenset(string.ascii_letters + string.digits + ".-_")


def machine_name(name: str) -> str:
    """`worker-` and `name`, every character but ASCII letters, digits, `.`, `-` and `_` made `_`
    (docs/behaviour.md §6).

    One `_` per character (code point), so the result is safe as one path component: no `/`, no NUL.

    >>> machine_name("ip-10-0-1-5.ec2.internal")
    'worker-ip-10-0-1-5.ec2.internal'
    >>> machine_name("a b/c:é")
    'worker-a_b_c__'
    """
    return "worker-" + "".join(character if character in _KEPT else "_" for character in name)
