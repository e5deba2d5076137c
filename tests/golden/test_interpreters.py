"""The script an interpreter runs (docs/behaviour.md §3.12 `top`'s `name`), over command lines written as each
interpreter's own documentation gives its usage: the expected script is what that documentation says runs.

- Python, "Command line and environment": `python [-bBdEhiIOPqRsSuvVWx?] [-c command | -m module-name | script | - ]
  [args]`; `-W arg`, `-X option` take an argument, also in the same word (`-Wdefault`).
- bash(1): `bash [options] [command_string | file]`; `--rcfile file`, `--init-file file`, `-o option`, `-O
  shopt_option` take an argument; `-c` reads commands from the first argument, `-s` from standard input; `--` ends
  the options.
- Node.js, "Command-line API": `node [options] [V8 options] [script.js | -e "script" | -] [--] [arguments]`; `-r,
  --require module`, `--import=module`, `--loader`/`--experimental-loader module`.
- ruby(1): `-e command`, `-r library`, `-I directory`; perlrun(1): `-e`, `-E` commandline, `-Mmodule`, `-0[octal]`;
  php(1): `-f file`, `-r code`, `-d foo[=bar]`; lua(1): `-l name`, `-e stat`; julia: `-t, --threads n`;
  tclsh(1): `tclsh ?-encoding name? ?fileName arg ...?`.
"""

from __future__ import annotations

import pytest

from orca.sample.compute.top import process_name


@pytest.mark.parametrize(
    ("comm", "argv", "name"),
    [
        ("python3", ["python3", "-E", "x.py"], "x.py"),
        ("python3", ["python3", "-I", "-X", "importtime", "/srv/app/x.py", "-c"], "x.py"),
        ("python3", ["python3", "-Wdefault", "-Xdev", "x.py"], "x.py"),
        ("python3", ["python3", "-W", "error", "-m", "http.server", "8000"], "http.server"),
        ("python3", ["python3", "-mpytest", "-q"], "pytest"),
        ("python3", ["python3", "-Bc", "import x"], "python3"),
        ("python3", ["python3", "--check-hash-based-pycs", "always", "x.py"], "x.py"),
        ("python3", ["python3", "-", "x.py"], "python3"),
        ("bash", ["bash", "--rcfile", "f", "x.sh"], "x.sh"),
        ("bash", ["bash", "--init-file", "f", "--norc", "x.sh"], "x.sh"),
        ("bash", ["bash", "-o", "pipefail", "-e", "ci/build.sh"], "build.sh"),
        ("bash", ["bash", "-euo", "pipefail", "ci/build.sh"], "build.sh"),
        ("bash", ["bash", "-O", "extglob", "x.sh"], "x.sh"),
        ("bash", ["bash", "-ec", "make all"], "bash"),
        ("bash", ["bash", "-s", "x.sh"], "bash"),
        ("bash", ["bash", "--", "x.sh"], "x.sh"),
        ("sh", ["sh", "-c", "exec x.sh", "name"], "sh"),
        ("node", ["node", "--loader", "a/b", "app"], "app"),
        ("node", ["node", "--experimental-loader", "ts-node/esm", "src/app.ts"], "app.ts"),
        ("node", ["node", "-r", "dotenv/config", "server.js"], "server.js"),
        ("node", ["node", "--import=tsx", "server.ts"], "server.ts"),
        ("node", ["node", "--max-old-space-size=4096", "server.js"], "server.js"),
        ("node", ["node", "-e", "console.log(1)"], "node"),
        ("ruby", ["ruby", "-r", "json", "-I", "lib", "bin/tool.rb"], "tool.rb"),
        ("ruby", ["ruby", "-e", "puts 1"], "ruby"),
        ("perl", ["perl", "-Mstrict", "-0777", "x.pl"], "x.pl"),
        ("perl", ["perl", "-E", "say 1"], "perl"),
        ("php", ["php", "-d", "memory_limit=1G", "-f", "artisan", "migrate"], "artisan"),
        ("php", ["php", "-r", "echo 1;"], "php"),
        ("lua", ["lua", "-l", "socket", "x.lua"], "x.lua"),
        ("julia", ["julia", "-t", "4", "x.jl"], "x.jl"),
        ("tclsh", ["tclsh", "-encoding", "utf-8", "x.tcl"], "x.tcl"),
    ],
)
def test_the_script_each_interpreters_documentation_says_runs(comm: str, argv: list[str], name: str) -> None:
    assert process_name(comm, argv) == name
