"""The documentation held to what it describes: every relative link and anchor resolves, the README's help texts are
what the commands print, the line's field tables name exactly the declared fields, the Python API pages name every
exported name, and the Dependencies table says truthfully where src uses each package."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from returns.result import Success

import orca.sample
from orca.sample.compute.encode import encode_line
from orca.sample.line_format import Sample
from orca.sample.readback.sample_line import parse

CHECKOUT = Path(__file__).resolve().parents[1]
README = CHECKOUT / "README.md"
DOCS = CHECKOUT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md")), CHECKOUT / "bench" / "README.md"]
SRC = CHECKOUT / "src" / "orca"

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(text: str) -> str:
    """The text outside fenced code blocks and inline code: where a link is a link."""
    return re.sub(r"`[^`\n]*`", "", FENCE.sub("", text))


def anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation but `-` and `_` dropped, spaces made `-`, and a
    repeated heading numbered."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", text), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(page: Path) -> Iterator[tuple[str, Path, str]]:
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not this repository's
            continue
        path, _, anchor = target.partition("#")
        yield target, (page.parent / path).resolve() if path else page, anchor


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(CHECKOUT)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target, path, anchor in relative_links(page):
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(path.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {path.name}")
    assert broken == []


def test_the_link_check_sees_a_broken_link_and_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A `--json` page\n\n[ok](#a---json-page) [gone](#nowhere) [file](missing.md) `[not](a link)`\n")
    found = [(target, anchor in anchors(path.read_text()) if path.exists() else None)
             for target, path, anchor in relative_links(page)]
    assert found == [("#a---json-page", True), ("#nowhere", False), ("missing.md", None)]


# --- the help texts in the README -------------------------------------------------------------------------------------

HELP_BLOCK = re.compile(r"<!-- help: (orca[^>]*?) -->\n```\n(.*?)```", re.DOTALL)


def test_the_readme_holds_each_commands_help() -> None:
    assert [command for command, _ in HELP_BLOCK.findall(README.read_text())] == [
        "orca --help", "orca sample --help", "orca metrics --help"]


@pytest.mark.parametrize(("command", "shown"), HELP_BLOCK.findall(README.read_text()), ids=lambda x: x[:20])
def test_the_readmes_help_is_what_the_command_prints(command: str, shown: str) -> None:
    """Printed at 100 columns, as the README says; on a change, paste the command's output into the README."""
    console = "import sys; from orca.sample.shell.cli.main import console_main; console_main()"
    # With this checkout's `orca` on PATH, as after the Quick start: the help names it `orca`.
    on_path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run([sys.executable, "-c", console, *command.split()[1:]], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "100", "PATH": on_path})
    assert (done.returncode, done.stderr) == (0, "")
    assert shown == done.stdout


# --- the line's fields ------------------------------------------------------------------------------------------------


def declared_fields(kind: msgspec.inspect.Type, prefix: str = "") -> Iterator[tuple[str, bool]]:
    """Each key path of a record (`cpu.user`, `disk[].path`, `run.exit.code`) and whether it is a leaf."""
    if isinstance(kind, msgspec.inspect.UnionType):
        (kind,) = [one for one in kind.types if not isinstance(one, msgspec.inspect.NoneType)]
    if isinstance(kind, msgspec.inspect.VarTupleType) and isinstance(kind.item_type, msgspec.inspect.StructType):
        yield from declared_fields(kind.item_type, prefix.removesuffix(".") + "[].")
        return
    if isinstance(kind, msgspec.inspect.StructType):
        if prefix:
            yield prefix.removesuffix("."), False
        for field in kind.fields:
            yield from declared_fields(field.type, prefix + field.encode_name + ".")
        return
    yield prefix.removesuffix("."), True


def field_tables(text: str) -> set[str]:
    """The names in the first column of the page's `| field |` tables."""
    names = set()
    for table in re.findall(r"^\| field \|.*?(?=^$)", text + "\n\n", re.MULTILINE | re.DOTALL):
        for row in table.splitlines()[2:]:
            names |= set(re.findall(r"`([a-z_\[\].]+)`", row.split("|")[1]))
    return names


def test_the_line_pages_tables_name_every_declared_field_and_no_other() -> None:
    declared = dict(declared_fields(msgspec.inspect.type_info(Sample)))
    documented = field_tables((DOCS / "line.md").read_text())
    assert {path for path, leaf in declared.items() if leaf} - documented == set()
    assert documented - set(declared) == set()


class _Extra(msgspec.Struct, frozen=True):
    total: int
    shiny: int


class _Line(msgspec.Struct, frozen=True):
    mem: _Extra | None


def test_the_field_check_sees_a_field_left_out() -> None:
    declared = {path for path, leaf in declared_fields(msgspec.inspect.type_info(_Line)) if leaf}
    assert declared - field_tables("| field | meaning |\n| --- | --- |\n| `mem.total` | bytes |\n\n") == {"mem.shiny"}


def test_the_line_pages_example_is_a_line_the_sampler_writes() -> None:
    """The example, joined onto one line, reads back as a sample and is written again byte for byte."""
    text = (DOCS / "line.md").read_text()
    example = text[text.index("```\n{") + 4:]
    line = "".join(part.strip() for part in example[:example.index("```")].splitlines())
    sample = parse(line)
    assert isinstance(sample, Success)
    assert encode_line(sample.unwrap()) == line.encode()


# --- the Python API ---------------------------------------------------------------------------------------------------


def named_in_tables(text: str) -> set[str]:
    """The identifiers a page's `| name |` tables name: the names in their first column, and the records their rows
    describe (`mem` (`Mem`))."""
    names = set()
    for table in re.findall(r"^\| name \|.*?(?=^$)", text + "\n\n", re.MULTILINE | re.DOTALL):
        for row in table.splitlines()[2:]:
            names |= set(re.findall(r"`([A-Za-z_]\w*)", row))
    return names


def test_every_exported_name_is_in_an_api_table() -> None:
    documented = named_in_tables((DOCS / "api.md").read_text()) | named_in_tables((DOCS / "metrics.md").read_text())
    assert set(orca.sample.__all__) - documented == set()


# --- the Dependencies table -------------------------------------------------------------------------------------------


def imported_names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The top-level packages a module imports, and every dotted name it reaches through them (`toolz.pipe` for
    `from toolz import pipe`, `msgspec.json.Decoder` for `msgspec.json.Decoder(...)` after `import msgspec`)."""
    packages, names, aliases = set(), set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                packages.add(alias.name.split(".")[0])
                names.add(alias.name)
                top = alias.name.split(".")[0]
                aliases[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            packages.add(node.module.split(".")[0])
            names.add(node.module)
            for alias in node.names:
                names.add(f"{node.module}.{alias.name}")
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts: list[str] = []
            value: ast.expr = node
            while isinstance(value, ast.Attribute):
                parts.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in aliases:
                dotted = aliases[value.id]
                for part in parts:
                    dotted += "." + part
                    names.add(dotted)
    return packages, names


def third_party(package: str) -> bool:
    return package not in sys.stdlib_module_names and package not in ("orca", "__future__")


def src_imports() -> dict[str, tuple[set[str], set[str]]]:
    """Each module of src, by its path under src/orca/, and what `imported_names` finds in it."""
    return {str(path.relative_to(SRC)): imported_names(ast.parse(path.read_text()))
            for path in sorted(SRC.rglob("*.py"))}


def dependencies_rows() -> list[tuple[list[str], list[str], set[str]]]:
    """Each row of architecture.md's Dependencies table naming src paths: its packages, the paths named, the dotted
    names cited."""
    text = (DOCS / "architecture.md").read_text()
    table = text[text.index("| package | where it is used | why |"):] + "\n\n"
    rows = []
    for row in table[:table.index("\n\n")].splitlines()[2:]:
        package_cell, where = row.split("|")[1:3]
        packages = re.findall(r"`([a-z0-9_]+)`", package_cell)
        cited = set(re.findall(r"`([a-z0-9_]+(?:\.[A-Za-z0-9_]+)+)`", where))
        paths = sorted(set(re.findall(r"`((?:sample|control)/[\w/]*(?:/|\.py))`", where)))
        rows.append((packages, paths, {name for name in cited if name.split(".")[0] in packages}))
    return rows


def test_the_dependencies_table_says_where_each_package_is_used() -> None:
    modules = src_imports()
    rows = [row for row in dependencies_rows() if row[1]]
    named = {package for packages, _, _ in rows for package in packages}
    assert {package for found, _ in modules.values() for package in found if third_party(package)} - named == set()
    for packages, paths, _ in rows:
        users = {module for module, (found, _) in modules.items() if set(packages) & found}
        # every module that imports the package lies under a path the row names, and each path named holds one
        assert {module for module in users if not any(module.startswith(path) for path in paths)} == set(), packages
        assert [path for path in paths if not any(module.startswith(path) for module in users)] == [], packages


def test_the_dependencies_table_cites_only_names_src_uses() -> None:
    used = {name for _, names in src_imports().values() for name in names}
    cited = {name for _, _, names in dependencies_rows() for name in names}
    assert cited
    assert cited - used == set()


def test_the_import_scan_follows_aliases_and_attributes() -> None:
    tree = ast.parse("import msgspec.inspect as declared\nfrom toolz import pipe\nimport boto3\n"
                     "declared.StructType\nboto3.session.Session()\n")
    packages, names = imported_names(tree)
    assert packages == {"msgspec", "toolz", "boto3"}
    assert {"msgspec.inspect.StructType", "toolz.pipe", "boto3.session.Session"} <= names
    assert "toolz.unique" not in names


# --- what the code cites ----------------------------------------------------------------------------------------------

CITING = sorted(path for top in ("src", "tests", "bench") for path in (CHECKOUT / top).rglob("*.py"))


def test_every_page_the_code_cites_exists() -> None:
    cited = {(str(path.relative_to(CHECKOUT)), page) for path in CITING
             for page in re.findall(r"\b((?:docs|bench)/[\w-]+\.md)\b", path.read_text())}
    assert cited
    assert {(path, page) for path, page in cited if not (CHECKOUT / page).exists()} == set()


def test_no_code_cites_a_readme_section() -> None:
    """The README is a front page; the reference it held is in docs/ by topic, which code cites instead."""
    citing = [str(path.relative_to(CHECKOUT)) for path in CITING
              if re.search(r"README(?:'s)?,? \"", path.read_text()) and path != Path(__file__)]
    assert citing == []
