"""/proc/<pid>/io (Documentation/filesystems/proc.rst, "IO statistics fields"): a process's disk I/O counters.

The kernel writes seven `key: value` lines (fs/proc/base.c `do_io_accounting`): `rchar`, `wchar`, `syscr`, `syscw`,
`read_bytes`, `write_bytes`, `cancelled_write_bytes`. Only `read_bytes` and `write_bytes` are read here: the bytes the
process caused to be fetched from storage, and to be sent to it (counted when it dirties a page of the page cache,
so a write counts when it is made, before it reaches the disk). `rchar` and `wchar` count every `read` and `write`,
page cache and pipes included. The file of a thread-group leader holds the whole process (its threads, the ended
ones included) and the children it waited for, as `cutime` does for CPU. The file is readable only by the process's
owner (or a tracer): another user's gives EACCES, and a kernel without CONFIG_TASK_IO_ACCOUNTING has none.
"""

from __future__ import annotations

from orca.sample.parse.numbers import all_u64

_READ_KEY, _WRITE_KEY = b"read_bytes:", b"write_bytes:"
_READ_AT = 8
"""Where `read_bytes:` is among the whitespace-split fields of the kernel's text (its value next, then
`write_bytes:` and its value)."""


def read_write_bytes(data: bytes) -> tuple[int, int] | None:
    """(read_bytes, write_bytes) from the raw bytes of /proc/<pid>/io; None when either is missing or not an unsigned
    decimal. Fields are found in the kernel's order first, by their keys otherwise.

    >>> read_write_bytes(b"rchar: 9\\nwchar: 9\\nsyscr: 1\\nsyscw: 1\\nread_bytes: 4096\\nwrite_bytes: 8192\\n"
    ...                  b"cancelled_write_bytes: 0\\n")
    (4096, 8192)
    >>> read_write_bytes(b"write_bytes: 1\\nread_bytes: 2\\n"), read_write_bytes(b"read_bytes: -1\\nwrite_bytes: 1\\n")
    ((2, 1), None)
    """
    fields = data.split()
    if len(fields) > _READ_AT + 3 and fields[_READ_AT] == _READ_KEY and fields[_READ_AT + 2] == _WRITE_KEY:
        counts = (fields[_READ_AT + 1], fields[_READ_AT + 3])
    else:
        by_key = dict(zip(fields[::2], fields[1::2], strict=False))
        read, written = by_key.get(_READ_KEY), by_key.get(_WRITE_KEY)
        if read is None or written is None:
            return None
        counts = (read, written)
    if not all_u64(counts):
        return None
    return int(counts[0]), int(counts[1])
