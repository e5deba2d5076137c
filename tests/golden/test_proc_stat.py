"""/proc/stat: a real capture from this machine and hand-written variants (docs/behaviour.md §3.3, §6; proc(5)).

The capture (Linux 6.18.44-fc-v857, x86_64, 2 cores) was taken with `cat /proc/stat > file`. Every expected value
below was typed from the capture by a person, counting fields as proc(5) names them: user nice system idle iowait
irq softirq steal guest guest_nice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.parse.proc_stat import CpuTimes, ProcStat, parse, parse_proc_stat

CAPTURES = Path(__file__).parent / "captures"
MACHINE = "linux-6.18.44-fc-v857.x86_64-2cores"
CAPTURE = (CAPTURES / f"proc_stat.{MACHINE}.txt").read_bytes().decode()

# cpu  8454 0 2234 63192 139 0 27 11 0 0
# cpu0 550 0 627 35808 10 0 4 3 0 0
# cpu1 7904 0 1607 27383 129 0 22 8 0 0
# processes 5630
CAPTURED = ProcStat(
    total=CpuTimes(user=8454, nice=0, system=2234, idle=63192, iowait=139, irq=0, softirq=27, steal=11),
    cores=(
        (0, CpuTimes(user=550, nice=0, system=627, idle=35808, iowait=10, irq=0, softirq=4, steal=3)),
        (1, CpuTimes(user=7904, nice=0, system=1607, idle=27383, iowait=129, irq=0, softirq=22, steal=8)),
    ),
    forks=5630,
)


def test_the_capture_gives_the_aggregate_and_both_cores() -> None:
    assert parse(CAPTURE).unwrap() == CAPTURED


def test_the_adapter_on_the_capture() -> None:
    assert parse_proc_stat(CAPTURE) == [
        [8454, 0, 2234, 63192, 139, 0, 27, 11],
        [550, 0, 627, 35808, 10, 0, 4, 3],
        [7904, 0, 1607, 27383, 129, 0, 22, 8],
    ]


def test_the_capture_has_as_many_core_lines_as_this_machine_has_cores() -> None:
    # docs/behaviour.md §3.2: `cores` is the number of cpuN lines; this machine has 2.
    assert len(parse(CAPTURE).unwrap().cores) == 2


def test_a_kernel_before_iowait_prints_four_counters_and_the_rest_are_zero() -> None:
    # proc(5): iowait since 2.5.41, irq and softirq since 2.6.0, steal since 2.6.11 (docs/behaviour.md §6: missing
    # fields are 0).
    assert parse_proc_stat("cpu  100 2 30 900\ncpu0 100 2 30 900\n") == [[100, 2, 30, 900, 0, 0, 0, 0]] * 2
    assert parse_proc_stat("cpu  100 2 30 900 7 1 3\n") == [[100, 2, 30, 900, 7, 1, 3, 0]]


def test_guest_and_guest_nice_are_not_read() -> None:
    # proc(5): guest time is already counted in user (docs/behaviour.md §3.3).
    assert parse_proc_stat("cpu  1 2 3 4 5 6 7 8 9 10\n") == [[1, 2, 3, 4, 5, 6, 7, 8]]


def test_an_offline_core_leaves_a_gap_in_the_numbering() -> None:
    text = "cpu  2 0 0 2\ncpu0 1 0 0 1\ncpu2 1 0 0 1\n"
    assert [number for number, _ in parse(text).unwrap().cores] == [0, 2]


def test_other_cpu_like_lines_are_ignored() -> None:
    text = "cpufreq 1 2 3 4\ncpu  1 2 3 4\ncpux 5 6 7 8\ncpu-1 5 6 7 8\nintr 1 2 3 4\n"
    assert parse(text).unwrap() == ProcStat(total=CpuTimes(1, 2, 3, 4, 0, 0, 0, 0), cores=())


def test_u64_max_is_a_counter_and_one_more_is_not() -> None:
    assert parse_proc_stat("cpu  18446744073709551615 0 0 0\n") == [[18446744073709551615, 0, 0, 0, 0, 0, 0, 0]]
    assert parse_proc_stat("cpu  18446744073709551616 0 0 0\n") == []


@pytest.mark.parametrize("counter", ["-5", "+5", "1_000", "1e3", "٣", "0x10", "5.0"])
def test_a_core_line_with_a_counter_the_kernel_cannot_print_is_skipped(counter: str) -> None:
    # On purpose: skipped, not zeroed, so no counter is ever negative or invented.
    text = f"cpu  10 0 10 80\ncpu0 {counter} 0 5 40\ncpu1 5 0 5 40\n"
    assert parse(text).unwrap().cores == ((1, CpuTimes(5, 0, 5, 40, 0, 0, 0, 0)),)


def test_an_aggregate_line_with_a_negative_counter_is_a_failure() -> None:
    assert parse("cpu  10 -5 10 80\ncpu0 5 0 5 40\n").failure().reason == "no aggregate `cpu` line"
    assert parse_proc_stat("cpu  10 -5 10 80\ncpu0 5 0 5 40\n") == []


@pytest.mark.parametrize(
    ("tail", "forks"),
    [
        pytest.param("processes 17\nprocs_running 1\n", 17, id="the-kernel's-line"),
        pytest.param("processes 17", None, id="cut-before-its-newline: the count may be cut short"),
        pytest.param("", None, id="no-such-line"),
        pytest.param("processes -1\n", None, id="not-a-count"),
        pytest.param("processes 18446744073709551616\n", None, id="beyond-an-unsigned-long"),
        pytest.param("procs_processes 17\n", None, id="another-key-ending-alike"),
    ],
)
def test_the_fork_count_is_the_processes_line(tail: str, forks: int | None) -> None:
    # proc(5): `processes` is the number of forks since boot, printed after `intr`, `ctxt` and `btime`.
    text = f"cpu  1 2 3 4\ncpu0 1 2 3 4\nintr 1 2 3\nctxt 9\nbtime 5\n{tail}"
    assert parse(text).unwrap().forks == forks


def test_a_file_cut_mid_line_keeps_the_whole_lines_before_the_cut() -> None:
    cut = CAPTURE[: CAPTURE.index("cpu1 7904 0 16") + len("cpu1 7904 0 16")]
    assert cut.endswith("cpu1 7904 0 16")
    # The cut line has three counters: fewer than any kernel prints, so it is skipped.
    assert parse(cut).unwrap() == ProcStat(total=CAPTURED.total, cores=CAPTURED.cores[:1])


@pytest.mark.parametrize("text", ["", "\n", "   \n\n", "intr 1 2 3\nctxt 5\n", "cpu", "cpu  1 2\n"])
def test_no_usable_aggregate_line_is_a_failure(text: str) -> None:
    assert parse(text).failure().source == "/proc/stat"
    assert parse_proc_stat(text) == []


@pytest.mark.parametrize(
    "garbage",
    ["\x00\x01\x02cpu\xff", "cpu\u2028 1 2 3 4", "\ufffd" * 50, "cpu cpu cpu cpu cpu\n", "9" * 10000],
)
def test_garbage_is_a_failure_not_an_exception(garbage: str) -> None:
    assert parse_proc_stat(garbage) == []
