"""The same lines from two checkouts: this one's `Sampler` and another's, on the same fixture machine, each line's
kernel files changed the same way between lines, with clocks that both see alike. Prints how many lines (and
messages on standard error) differ, and the first differences.

    .venv/bin/python -m bench.same_lines --against DIR [--lines 2000] [--seed 1] [--without KEY]

For a change that must keep every line's bytes (a restructuring): the fixture machine's capture
(tests/golden/fixtures/machine) is changed step by step as a machine's files change, and as they break: counters
that rise, go back or reach 20 digits; a core, a disk or an interface that comes or goes; a pressure file that
appears or vanishes, a kernel without PSI; files missing, cut short, or holding garbage. Each checkout runs in a
process of its own, with its own `src/` first on the path and `time.monotonic_ns`, `time.time` and `os.times`
replaced by clocks that step the same for both.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MACHINE = HERE.parent / "tests" / "golden" / "fixtures" / "machine" / "linux-6.18.44-fc-v857-x86_64-2cores"
PRESSURE = "some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={}\n"

DRIVER = r"""
import os, shutil, sys, time
root, count = sys.argv[1], int(sys.argv[2])
live = os.path.join(root, "live")
clock = {"ns": 1_000_000_000_000, "wall": 1796000000.0, "cpu": 0.0}
time.monotonic_ns = lambda: clock["ns"]
time.time = lambda: clock["wall"]
os.times = lambda: os.times_result((clock["cpu"], 0.0, 0.0, 0.0, 0.0))

def step(k):
    shutil.rmtree(live, ignore_errors=True)
    shutil.copytree(os.path.join(root, f"step{k}"), live, symlinks=True)
    clock["ns"] += 5_000_000_000 + (k * 7919) % 3_000_000
    clock["wall"] += 5.0 + (k % 13) / 1000
    clock["cpu"] += 0.0013

from orca.sample.shell.sampler import Sampler
step(0)
with Sampler(0, "", ["/proc", "/sys"], proc=os.path.join(live, "proc"), sys=os.path.join(live, "sys")) as sampler:
    for k in range(1, count):
        step(k)
        sys.stdout.write(sampler.line() + "\n")
        sys.stdout.flush()
        sys.stderr.write(f"-- after line {k}\n")
"""


def _counters(line: str, rng: random.Random, start: int) -> str:
    """A `cpu` line's counters risen (now and then one gone back, or one of 20 digits)."""
    label, *numbers = line.split()
    out = []
    for i, number in enumerate(numbers):
        value = int(number)
        roll = rng.random()
        if roll < 0.01:
            value = max(0, value - rng.randrange(1, 1000))
        elif roll < 0.012:
            value = rng.choice([2**64 - 1, 10**19 + 7, 2**63])
        elif i < 8:
            value += rng.randrange(0, 500) + start
        out.append(str(value))
    return " ".join([label, *out])


def _stat(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    cpu = [line for line in lines if line.startswith("cpu")]
    rest = [line for line in lines if not line.startswith("cpu")]
    changed = [_counters(line, rng, 0) for line in cpu]
    roll = rng.random()
    if roll < 0.03 and len(changed) > 2:
        changed.pop()  # a core went offline
    elif roll < 0.05:
        changed.append(changed[-1].replace(changed[-1].split()[0], f"cpu{len(changed) - 1}", 1))  # came online
    elif roll < 0.06:
        changed.insert(1, "cpu0 1 2 -3 4")  # a line that does not parse
    forks = rng.randrange(1000, 1010)
    rest = [f"processes {forks}" if line.startswith("processes") else line for line in rest]
    return "\n".join([*changed, *rest]) + "\n"


def _meminfo(text: str, rng: random.Random) -> str:
    lines = []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        words = value.split()
        if len(words) == 2 and words[0].isdigit():
            number = max(0, int(words[0]) + rng.randrange(-5000, 5000))
            if key == "MemAvailable" and rng.random() < 0.03:
                continue  # a kernel before 3.14
            lines.append(f"{key}:{' ' * rng.choice([0, 1, 8])}{number} kB")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def _diskstats(text: str, rng: random.Random, extra: bool) -> str:
    lines = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 14:
            fields[5] = str(int(fields[5]) + rng.randrange(0, 200))
            fields[9] = str(int(fields[9]) + rng.randrange(0, 400))
            if rng.random() < 0.01:
                fields[9] = "123456789012345678901"
        lines.append(" ".join(fields))
    if extra:
        lines.append(f" 254 16 vdb 0 0 {rng.randrange(0, 10**6)} 0 0 0 {rng.randrange(0, 10**6)} 0 0 0 0 0 0 0 0 0 0")
    return "\n".join(lines) + "\n"


def _net_dev(text: str, rng: random.Random, extra: bool) -> str:
    lines = []
    for line in text.splitlines():
        name, colon, rest = line.rpartition(":")
        fields = rest.split()
        if colon and len(fields) >= 16:
            fields = [str(int(f) + rng.randrange(0, 10**5)) if i in (0, 8) else f for i, f in enumerate(fields)]
            if rng.random() < 0.01:
                fields[0] = "0"  # an interface reset
            lines.append(f"{name}: {' '.join(fields)}")
        else:
            lines.append(line)
    if extra:
        lines.append(f"  veth9: {rng.randrange(10**6)} 0 0 0 0 0 0 0 {rng.randrange(10**6)} 0 0 0 0 0 0 0")
    return "\n".join(lines) + "\n"


def _broken(text: str, rng: random.Random) -> str | None:
    """Now and then a file missing (None), cut short, or holding garbage."""
    roll = rng.random()
    if roll < 0.01:
        return None
    if roll < 0.02:
        return text[: rng.randrange(0, max(1, len(text)))]
    if roll < 0.025:
        return "garbage \x00 éè\n"
    return text


def scenario(root: Path, count: int, seed: int) -> None:
    """`count` steps of the fixture machine under `root/step<k>`."""
    rng = random.Random(seed)
    capture = MACHINE / "capture" / "proc"
    texts = {name: (capture / name).read_text() for name in ("stat", "meminfo", "diskstats", "net/dev")}
    totals = {"cpu": 1000, "memory": 0, "io": 50}
    present = dict.fromkeys(totals, True)
    extra_disk = extra_interface = False
    for k in range(count):
        step = root / f"step{k}"
        shutil.copytree(MACHINE / "sys", step / "sys", symlinks=True)
        if extra_disk:
            os.symlink("../devices/pci0000:00/0000:00:06.0/virtio4/block/vdb", step / "sys" / "block" / "vdb")
        proc = step / "proc"
        (proc / "net").mkdir(parents=True)
        (proc / "pressure").mkdir()
        if rng.random() < 0.03:
            extra_disk = not extra_disk
        if rng.random() < 0.03:
            extra_interface = not extra_interface
        texts["stat"] = _stat(texts["stat"], rng)
        texts["meminfo"] = _meminfo(texts["meminfo"], rng)
        texts["diskstats"] = _diskstats(texts["diskstats"], rng, False)
        texts["net/dev"] = _net_dev(texts["net/dev"], rng, False)
        written = {
            "stat": texts["stat"],
            "meminfo": texts["meminfo"],
            "diskstats": texts["diskstats"] if not extra_disk else _diskstats(texts["diskstats"], rng, True),
            "net/dev": texts["net/dev"] if not extra_interface else _net_dev(texts["net/dev"], rng, True),
        }
        for name, text in written.items():
            broken = _broken(text, rng)
            if broken is not None:
                (proc / name).write_text(broken)
        no_psi = rng.random() < 0.02
        for resource in totals:
            if rng.random() < 0.03:
                present[resource] = not present[resource]
            totals[resource] += rng.randrange(0, 300_000) if rng.random() > 0.01 else -5
            if present[resource] and not no_psi:
                text = PRESSURE.format(max(0, totals[resource]), totals[resource] // 2)
                broken = _broken(text, rng)
                if broken is not None:
                    (proc / "pressure" / resource).write_text(broken)


def lines_of(checkout: Path, root: Path, count: int) -> tuple[list[str], list[str]]:
    env = dict(os.environ, PYTHONPATH=str(checkout / "src"))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), str(count)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return done.stdout.splitlines(), done.stderr.splitlines()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, required=True, help="the other checkout's root")
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--without", action="append", default=[], metavar="KEY",
                        help="a key this checkout adds last to each line (a number): taken off before comparing")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        scenario(root, args.lines + 1, args.seed)
        this_lines, this_said = lines_of(HERE.parent, root, args.lines + 1)
        other_lines, other_said = lines_of(args.against.resolve(), root, args.lines + 1)
    for key in args.without:  # a new key is written last, so the lines before it must be the other's bytes
        added = re.compile(',"' + re.escape(key) + r'":[-0-9.e]+}$')
        this_lines = [added.sub("}", line) for line in this_lines]
    differ = [(k, a, b) for k, (a, b) in enumerate(zip(this_lines, other_lines, strict=True), 1) if a != b]
    said_differ = [(a, b) for a, b in zip(this_said, other_said, strict=False) if a != b]
    print(f"{len(this_lines)} lines, {len(differ)} differ; {len(this_said)} and {len(other_said)} lines on standard "
          f"error, {len(said_differ)} differ")
    messages = [said for said in this_said if not said.startswith("-- after line")]
    print(f"messages told: {len(messages)}; nulls: {sum(line.count('null') for line in this_lines)}")
    for k, a, b in differ[:3]:
        print(f"line {k}:\n  this:  {a}\n  other: {b}")
    for a, b in said_differ[:3]:
        print(f"standard error:\n  this:  {a}\n  other: {b}")
    return 1 if differ or said_differ or len(this_said) != len(other_said) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
