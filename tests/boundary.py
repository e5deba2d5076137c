"""The checker of the sans-I/O boundary (docs/behaviour.md §7): what in a module's source would mean I/O or reading
the clock. Modules are judged by what is used of them: `io.BytesIO` is memory and `datetime` formats a given time,
but `io.open` reads a file and `datetime.now()` the clock."""

from __future__ import annotations

import ast

IO_MODULES = {
    "os", "boto3", "botocore", "subprocess", "socket", "shutil", "pathlib", "signal", "threading", "select",
    "tempfile", "glob", "resource", "sys", "urllib", "http", "multiprocessing", "asyncio", "mmap", "fcntl",
}
"""Modules that are files, processes, the network, signals or the process's own state, whatever is used of them."""
IO_NAMES = {
    "time": {"time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "process_time",
             "process_time_ns", "thread_time", "thread_time_ns", "sleep", "clock_gettime", "clock_gettime_ns",
             "gmtime", "localtime", "ctime", "asctime", "mktime"},
    "io": {"open", "open_code", "FileIO"},
}
"""Per module, the names that read the clock, sleep or open files; the rest of it is pure."""
CLOCK_METHODS = {"now", "today", "utcnow"}
"""What reads the clock through `datetime`'s classes (`datetime.now()`, `date.today()`)."""
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__", "breakpoint"}
SHELLS = ("orca.sample.shell", "orca.sample.readback.shell")
"""The packages that do the I/O."""


def violations(source: str) -> list[str]:
    tree = ast.parse(source)
    modules = _module_names(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in IO_MODULES]
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if node.level == 0 and root in IO_MODULES:
                found.append(f"from {node.module} import ...")
            elif node.level == 0 and root in IO_NAMES:
                found += [f"from {node.module} import {a.name}" for a in node.names if a.name in IO_NAMES[root]]
            if any(node.module == shell or (node.module or "").startswith(shell + ".") for shell in SHELLS):
                found.append(f"from {node.module} import ... (the shell)")
        elif isinstance(node, ast.Attribute):
            module = modules.get(node.value.id) if isinstance(node.value, ast.Name) else None
            if module is not None and node.attr in IO_NAMES.get(module, ()):
                found.append(f"{module}.{node.attr} at line {node.lineno}")
            elif node.attr in CLOCK_METHODS and "datetime" in modules.values():
                found.append(f".{node.attr}() at line {node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{node.func.id}() at line {node.lineno}")
    return found


def _module_names(tree: ast.AST) -> dict[str, str]:
    """Each name a module is bound to by `import` (`import time as clock`: clock -> time), and `datetime` for a
    module that takes anything from it."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "datetime":
            names["datetime"] = "datetime"
    return names


def imported(source: str) -> set[str]:
    """The modules of this package a module's source imports, anywhere in it (at its top or inside a function)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("orca.")}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("orca."):
            found.add(node.module or "")
    return found


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The circles of a graph (each node's edges to the others), each as the nodes on it; none when it is a tree."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> None:
        if node in path:
            found.append([*path[path.index(node):], node])
            return
        if node in done:
            return
        for target in sorted(edges.get(node, ())):
            walk(target, [*path, node])
        done.add(node)

    for node in sorted(edges):
        walk(node, [])
    return found
