"""The checker of the sans-I/O boundary (docs/behaviour.md §7): what in a module's source would mean I/O."""

from __future__ import annotations

import ast

# Modules whose import alone means files, processes, clocks, the network or signals.
FORBIDDEN_MODULES = {
    "os", "io", "time", "boto3", "botocore", "subprocess", "socket", "shutil", "pathlib", "signal",
    "threading", "select", "tempfile", "glob", "resource", "sys", "urllib", "http", "datetime",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}


def violations(source: str) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            root = (node.module or "").split(".")[0]
            if node.level == 0 and root in FORBIDDEN_MODULES:
                found.append(f"from {node.module} import ...")
            if node.module == "orca.sample.shell" or (node.module or "").startswith("orca.sample.shell."):
                found.append(f"from {node.module} import ... (the shell)")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            found.append(f"{node.func.id}() at line {node.lineno}")
    return found
