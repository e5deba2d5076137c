"""The golden outputs of the read side: what a person or a script reads of `orca metrics` (a run's summary as text
and `--json`, a fleet's table, `--each` and `--json`, a file of two runs) and the words of a run's chart (its
title, panels, legends, ticks, what is flat, the notes), over fixed inputs made of real lines: the captures of
`tests/fleet/captures/` (a fleet laid out by `tests/fleet/fleets.py`) and the run worked out by hand in
`tests/reader/hand_worked.py`. Each output is a file in `golden/`; `test_golden.py` holds them byte for byte.

They were captured from the code, so they prove that an output did not change, not that it is right (the other
tests say what is right). To change an output on purpose, regenerate them from the repository's root and read the
difference before committing it:

    .venv/bin/python -m tests.reader.golden
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orca.sample.readback.chart.panels import chart
from tests.fleet.fleets import CAPTURES, KINDS, mixed, write_fleet
from tests.reader.folding import checked, every_run, series_of
from tests.reader.hand_worked import RUN

GOLDEN = Path(__file__).with_name("golden")


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    """The file it is kept in, under `golden/`."""
    args: tuple[str, ...]
    """`orca metrics`'s arguments, relative to the directory the inputs are written in."""


def _inputs(directory: Path) -> None:
    """The inputs, written under `directory`: each capture as `<kind>.jsonl`, the hand-worked run as `run.jsonl`,
    two captures one after the other as `two.jsonl`, and a fleet of nine as `fleet/worker-NNN.jsonl`."""
    for kind in KINDS:
        (path,) = CAPTURES.glob(f"{kind}.*.jsonl")
        (directory / f"{kind}.jsonl").write_bytes(path.read_bytes())
    (directory / "run.jsonl").write_text(RUN)
    (directory / "two.jsonl").write_bytes((directory / "idle.jsonl").read_bytes()
                                          + (directory / "oom.jsonl").read_bytes())
    write_fleet(directory / "fleet", mixed(9))


def _cases() -> list[Case]:
    cases = []
    for source in ("run", *KINDS):
        cases.append(Case(f"summary.{source}.txt", (f"{source}.jsonl",)))
        cases.append(Case(f"summary.{source}.json", ("--json", f"{source}.jsonl")))
    cases += [
        Case("summary.two-runs.txt", ("two.jsonl",)),
        Case("summary.two-runs.json", ("--json", "two.jsonl")),
        Case("fleet.txt", ("fleet",)),
        Case("fleet.sort-cpu.txt", ("--sort", "cpu", "fleet")),
        Case("fleet.each.txt", ("--each", "fleet")),
        Case("fleet.json", ("--json", "fleet")),
    ]
    return cases


CASES = _cases()


def _orca_metrics(directory: Path, args: tuple[str, ...]) -> bytes:
    """What `orca metrics ARGS` writes, run as a user runs it in `directory`: standard output, then standard error
    (after a line of its own) if it said anything, and the exit status if not 0."""
    env = {**os.environ, "TZ": "UTC"}
    env.pop("COLUMNS", None)
    done = subprocess.run([sys.executable, "-m", "orca.sample", "metrics", *args], cwd=directory, env=env,
                          capture_output=True, timeout=120, check=False)
    out = done.stdout
    if done.stderr:
        out += b"--- standard error\n" + done.stderr
    if done.returncode:
        out += f"--- exit status {done.returncode}\n".encode()
    return out


def chart_words(text: str, name: str) -> str:
    """The words of the chart of `text`'s runs, from a source called `name` (at most six drawn, as `--plot` draws
    them): its title, each panel's label and legends, the ticks, what is flat and the notes."""
    runs = list(every_run([checked(text)], drawn=6))
    drawing = chart(series_of(runs, name))
    out = [f"title: {drawing.title}"]
    for panel in drawing.panels:
        legends = ", ".join(dict.fromkeys(curve.legend for curve in panel.curves))
        out.append(f"panel {panel.name}: {panel.label!r}  legends: {legends}")
    out.append(f"ticks ({drawing.ticks.unit}): {' '.join(drawing.ticks.labels)}")
    out += [f"flat: {flat}" for flat in drawing.flat]
    out += [f"note: {note}" for note in drawing.notes]
    out += [f"run: {label}" for label in drawing.runs]
    return "\n".join(out) + "\n"


CHARTED = {"run": "run.jsonl", **{kind: f"{kind}.jsonl" for kind in KINDS}, "two-runs": "two.jsonl"}
"""The sources whose chart's words are kept, by the name of the output."""


def outputs() -> dict[str, bytes]:
    """Every golden output of the code as it is, by file name."""
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        _inputs(directory)
        found = {case.name: _orca_metrics(directory, case.args) for case in CASES}
        found |= {f"chart.{name}.txt": chart_words((directory / file).read_text(), file).encode()
                  for name, file in CHARTED.items()}
    return found


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    found = outputs()
    for stale in {path.name for path in GOLDEN.iterdir()} - set(found):
        (GOLDEN / stale).unlink()
    for name, made in found.items():
        (GOLDEN / name).write_bytes(made)
    print(f"{len(found)} golden outputs written to {GOLDEN}")


if __name__ == "__main__":
    main()
