"""The two raw floors of a one-shot tree reading, the least Python that gets the same figures from the same files.

- walk: down the `/proc/<pid>/task/<tid>/children` files from the root, then each member's stat and statm;
- scan: one pass over every `/proc/<pid>/stat` (parent and CPU ticks), the tree found from the parents, then each
  member's statm (stat's own rss field is a different count from statm's resident pages, which the figures are).

The walk reads only the tree's files, the scan every process's one file: which is cheaper depends on how much of
the host the tree is, so `tree_rss` and `tree_usage` are measured against the better of the two.
"""

from __future__ import annotations

import os

PAGE = os.sysconf("SC_PAGE_SIZE")
TICKS = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb", buffering=0) as f:
            return f.read()
    except OSError:
        return None


def walk_members(root: int) -> list[int]:
    members, stack = [], [root]
    while stack:
        pid = stack.pop()
        members.append(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            data = _read(f"/proc/{pid}/task/{tid}/children")
            if data:
                stack.extend(map(int, data.split()))
    return members


def walk_rss(root: int) -> int:
    pages = 0
    for pid in walk_members(root):
        data = _read(f"/proc/{pid}/statm")
        if data:
            pages += int(data.split()[1])
    return pages * PAGE


def walk_usage(root: int) -> tuple[int, float]:
    pages = ticks = 0
    for pid in walk_members(root):
        stat = _read(f"/proc/{pid}/stat")
        statm = _read(f"/proc/{pid}/statm")
        if stat and statm:
            fields = stat[stat.rfind(b")") + 2 :].split()
            ticks += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
            pages += int(statm.split()[1])
    return pages * PAGE, ticks / TICKS


def scan_usage(root: int) -> tuple[int, float]:
    """(resident bytes, CPU seconds) of `root`'s tree from one pass over every /proc/<pid>/stat."""
    children: dict[int, list[int]] = {}
    own: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if not stat:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        pid = int(name)
        children.setdefault(int(fields[1]), []).append(pid)
        own[pid] = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    pages = ticks = 0
    stack = [root] if root in own else []
    while stack:
        pid = stack.pop()
        statm = _read(f"/proc/{pid}/statm")
        if statm:
            ticks += own[pid]
            pages += int(statm.split()[1])
        stack.extend(children.get(pid, ()))
    return pages * PAGE, ticks / TICKS


def scan_rss(root: int) -> int:
    return scan_usage(root)[0]
