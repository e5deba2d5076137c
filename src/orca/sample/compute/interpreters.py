"""The script an interpreter or a shell runs, from its arguments (docs/behaviour.md §3.12 `top`'s `name`).

Each interpreter parses its own options, and some take an argument: `python3 -X dev dev.py` runs `dev.py`, `bash
--rcfile f x.sh` runs `x.sh`, `node --loader a/b app` runs `app`. So each interpreter's options are written down
here as its own documentation gives them (its `--help` and manual page): the options whose argument is the next word
(or the rest of the word, in a cluster of one-letter options such as `-Wignore` or `-euo pipefail`), those that give
the code inline (`-c`, `-e`: no script, the interpreter's own name is the name), the module to run (`python -m`),
the script (`php -f`), and the code read from standard input (`-`, a shell's `-s`). An option written as
`--name=value` carries its value. The first word that is not an option is the script; `--` ends the options.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple


class Options(NamedTuple):
    """One interpreter's options, as its documentation gives them."""

    valued: frozenset[str]
    """Options whose argument follows: one letter (`-X`, as `-X dev` or `-Xdev`) or long (`--rcfile`)."""
    inline: frozenset[str] = frozenset()
    """Options whose argument is the code to run: no script."""
    module: frozenset[str] = frozenset()
    """Options whose argument is a module to run, named as the script is."""
    script: frozenset[str] = frozenset()
    """Options whose argument is the script."""
    stdin: frozenset[str] = frozenset()
    """Options after which the code comes from standard input: no script."""
    attached: frozenset[str] = frozenset()
    """One-letter options with an optional value only in the same word (perl's `-0777`, `-x dir` not): the rest of
    the word is theirs."""


def _set(*options: str) -> frozenset[str]:
    return frozenset(options)


PYTHON = Options(
    # python3 --help: -c cmd, -m mod, -W arg, -X opt, --check-hash-based-pycs always|default|never; `-` stdin.
    valued=_set("-W", "-X", "--check-hash-based-pycs"),
    inline=_set("-c"),
    module=_set("-m"),
)
SHELL = Options(
    # bash(1): -o option, +o option, -O shopt_option, +O, --rcfile file, --init-file file; -c string; -s stdin.
    # dash(1), zsh(1), ksh(1) and mksh(1) share -c, -s and -o.
    valued=_set("-o", "+o", "-O", "+O", "--rcfile", "--init-file"),
    inline=_set("-c"),
    stdin=_set("-s"),
)
NODE = Options(
    # node --help: -e, --eval script; -p, --print script; -r, --require module; --import module; --loader,
    # --experimental-loader module; -C, --conditions condition; --input-type type; --env-file file; --title title.
    valued=_set("-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
                "--input-type", "--env-file", "--title", "--redirect-warnings", "--inspect-port"),
    inline=_set("-e", "--eval", "-p", "--print"),
)
RUBY = Options(
    # ruby --help: -e 'command'; -Idirectory, -rlibrary, -Cdirectory, -Eex[:in], -Fpattern, each also as the next
    # word; -0[octal], -x[directory], -W[level], -T[level] only in the same word.
    valued=_set("-I", "-r", "-C", "-E", "-F", "--encoding", "--external-encoding", "--internal-encoding"),
    inline=_set("-e"),
    attached=_set("-0", "-x", "-W", "-T", "-K", "-l"),
)
PERL = Options(
    # perlrun(1): -e and -E commandline; -Idirectory, -m/-Mmodule; -0[octal], -i[extension], -l[octnum],
    # -x[directory], -C[number], -D[letters], -d[:module] only in the same word.
    valued=_set("-I", "-M", "-m"),
    inline=_set("-e", "-E"),
    attached=_set("-0", "-i", "-l", "-x", "-C", "-D", "-d", "-V"),
)
PHP = Options(
    # php --help: -f file; -r code, -B begin_code, -R code, -E end_code; -F file; -c path, -d foo[=bar], -z file.
    valued=_set("-c", "-d", "-z"),
    inline=_set("-r", "-B", "-R", "-E"),
    script=_set("-f", "-F"),
)
LUA = Options(
    # lua(1): -e stat, -l name (-l mod, -l g=mod); `-` stdin.
    valued=_set("-l"),
    inline=_set("-e"),
)
JULIA = Options(
    # julia --help: -e, --eval expr; -E, --print expr; -L, --load file; -J, --sysimage file; -p, --procs n;
    # -t, --threads n.
    valued=_set("-L", "--load", "-J", "--sysimage", "-p", "--procs", "-t", "--threads"),
    inline=_set("-e", "--eval", "-E", "--print"),
)
RSCRIPT = Options(
    # Rscript --help: -e expr; the other options are --name=value.
    valued=_set(),
    inline=_set("-e"),
)
TCLSH = Options(
    # tclsh(1): tclsh ?-encoding name? ?fileName arg arg ...?
    valued=_set("-encoding"),
)

_FAMILIES: tuple[tuple[re.Pattern[str], Options], ...] = (
    (re.compile(r"(?:python|pypy)[0-9.]*m?"), PYTHON),
    (re.compile(r"(?:ba|da|z|k|mk|c|tc|fi|a|yash|po)?sh"), SHELL),
    (re.compile(r"node(?:js)?[0-9.]*"), NODE),
    (re.compile(r"ruby[0-9.]*"), RUBY),
    (re.compile(r"perl[0-9.]*"), PERL),
    (re.compile(r"php[0-9.]*(?:-cli)?"), PHP),
    (re.compile(r"lua(?:jit)?[0-9.]*"), LUA),
    (re.compile(r"julia[0-9.]*"), JULIA),
    (re.compile(r"Rscript"), RSCRIPT),
    (re.compile(r"tclsh[0-9.]*"), TCLSH),
)


def options_of(comm: str) -> Options | None:
    """The options of the interpreter or shell whose `comm` is `comm`; None for any other program.

    >>> options_of("python3.12") is PYTHON, options_of("bash") is SHELL, options_of("java")
    (True, True, None)
    """
    for pattern, options in _FAMILIES:
        if pattern.fullmatch(comm):
            return options
    return None


def script_of(options: Options, argv: Sequence[str]) -> str | None:
    """The script (or module) an interpreter with `options` runs, from its whole `argv`; None when it runs code given
    inline or from standard input, or names none.

    >>> script_of(PYTHON, ["python3", "-E", "dev.py"]), script_of(PYTHON, ["python3", "-Wignore", "-m", "pytest"])
    ('dev.py', 'pytest')
    >>> script_of(SHELL, ["bash", "--rcfile", "f", "x.sh"]), script_of(SHELL, ["bash", "-euo", "pipefail", "-c", "x"])
    ('x.sh', None)
    >>> script_of(NODE, ["node", "--loader", "a/b", "app"])
    'app'
    """
    words = iter(argv[1:])
    for word in words:
        if word == "-":
            return None
        if word == "--":
            return next(words, None)
        if word.startswith("--") or (len(word) > 2 and word in options.valued):  # a long option, or tclsh's
            name, equals, _ = word.partition("=")
            if name in options.inline:
                return None
            if name in options.module or name in options.script:
                return _value(equals, words, word)
            if name in options.valued and not equals:
                next(words, None)
            continue
        if len(word) > 1 and word[0] in "-+":
            found = _cluster(options, word, words)
            if found == _NOT_A_SCRIPT:
                return None
            if found is not None:
                return found
            continue
        return word
    return None


_NOT_A_SCRIPT = ""
"""What `_cluster` gives for code inline or from standard input (no script); None: options only, read on."""


def _value(equals: str, words: Iterator[str], word: str) -> str | None:
    if equals:
        return word.partition("=")[2]
    return next(words, None)


def _cluster(options: Options, word: str, words: Iterator[str]) -> str | None:
    """One word of one-letter options (`-euo`, `-Xdev`, `-Bc`): the module or script it names, `_NOT_A_SCRIPT` when
    it gives the code inline or from standard input, None when it holds options only (their values taken, from the
    word's rest or the next word)."""
    sign = word[0]
    for place in range(1, len(word)):
        option = sign + word[place]
        rest = word[place + 1 :]
        if option in options.inline or option in options.stdin:
            return _NOT_A_SCRIPT
        if option in options.module or option in options.script:
            return rest or next(words, None)
        if option in options.valued:
            if not rest:
                next(words, None)
            return None
        if option in options.attached:
            return None
    return None
