"""A fleet read on a Dask cluster (docs/metrics.md, "On a cluster"): its client is a `concurrent.futures` executor
(`Client.get_executor`), used as the local one is (`many.py`). `distributed` (the `cluster` extra) is imported only
when a scheduler is named; before any task the scheduler must answer, have a worker and run this orca-sample's version
on every worker, or the read is one `ClusterError`."""

from __future__ import annotations

import contextlib
import importlib.util
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from orca.sample.parse.errors import reason_of

if TYPE_CHECKING:
    from concurrent.futures import Executor

ENVIRONMENT = "DASK_SCHEDULER_ADDRESS"
CONFIG_KEY = "scheduler-address"
CONNECT_SECONDS = 10.0
"""How long the scheduler has to answer: a read that cannot start says so well within half a minute."""
WORKERS_SECONDS = 10.0
"""How long a scheduler without workers is waited for one."""
DISTRIBUTION = "orca-sample"


class ClusterError(Exception):
    """The cluster cannot read the fleet: the message names the scheduler or the workers, and why."""


@dataclass(frozen=True, slots=True)
class Cluster:
    """A connected cluster, checked: its executor, how many tasks it runs at once, and its dashboard."""

    executor: Executor
    threads: int
    """Its workers' threads, added up: the tasks it runs at once."""
    dashboard: str | None


def scheduler_named(flag: str | None, environment: dict[str, str] | None = None,
                    configured: bool = True) -> tuple[str, str] | None:
    """The scheduler's address, and what named it: `--scheduler` (an empty one: none), else `DASK_SCHEDULER_ADDRESS`
    (empty: none), else, when `configured`, Dask's configuration where dask is installed (only then imported, which
    takes a tenth of a second); None when nothing does.

    >>> scheduler_named("tcp://scheduler:8786", {}), scheduler_named("", {"DASK_SCHEDULER_ADDRESS": "tcp://a:1"})
    (('tcp://scheduler:8786', '--scheduler'), None)
    >>> scheduler_named(None, {"DASK_SCHEDULER_ADDRESS": "tcp://a:1"})
    ('tcp://a:1', 'DASK_SCHEDULER_ADDRESS')
    """
    environment = dict(os.environ) if environment is None else environment
    if flag is not None:
        return (flag, "--scheduler") if flag else None
    if ENVIRONMENT in environment:
        return (environment[ENVIRONMENT], ENVIRONMENT) if environment[ENVIRONMENT] else None
    if not configured or importlib.util.find_spec("dask") is None:
        return None
    import dask.config

    address = dask.config.get(CONFIG_KEY, None)
    return (str(address), f"Dask's configuration ({CONFIG_KEY})") if address else None


def cluster_installed() -> bool:
    """Whether `distributed` can be imported here (the `cluster` extra)."""
    return importlib.util.find_spec("distributed") is not None


@contextlib.contextmanager
def connected(address: str) -> Iterator[Cluster]:
    """The cluster of the scheduler at `address`, once it answers, has a worker, and its workers run this
    orca-sample's version; closed when the block ends (its tasks cancelled). Raises `ClusterError` otherwise."""
    import warnings

    import distributed

    _quiet()  # after the import, which sets Dask's own levels
    _reachable(address)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Dask's own table of versions: the workers' orca-sample is checked below
            make: Any = distributed.Client  # untyped
            client: Any = make(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except Exception as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {reason_of(error)}") from None
    try:
        threads = _threads(client, address)
        _same_version(client, _version_here())
        yield Cluster(client.get_executor(), threads, _dashboard(client))
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=CONNECT_SECONDS)


def _reachable(address: str) -> None:
    """The scheduler asked who it is, within `CONNECT_SECONDS`, before a client is made: Dask's client waits without
    end for an address that takes the connection and says nothing, and one it could not start is closed at exit
    with a traceback. A TCP address that refuses is said at once (Dask would try again until its timeout)."""
    import asyncio
    import socket

    from distributed.comm.addressing import get_address_host_port, parse_address

    try:
        scheme, _ = parse_address(address)
        host, port = get_address_host_port(address) if scheme in ("tcp", "tls") else ("", 0)
    except ValueError as error:
        raise ClusterError(f"{address}: not the address of a Dask scheduler ({error})") from None
    try:
        if host:
            socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
        answer = asyncio.run(asyncio.wait_for(_identity(address), CONNECT_SECONDS))
    except TimeoutError:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: no answer within "
                           f"{CONNECT_SECONDS:g} s") from None
    except Exception as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {reason_of(error)}") from None
    if not isinstance(answer, dict) or answer.get("type") != "Scheduler":
        what = answer.get("type") if isinstance(answer, dict) else None
        raise ClusterError(f"{address}: not a Dask scheduler{f' (a {what})' if what else ''}")


async def _identity(address: str) -> object:
    """What the server at `address` says it is (Dask's `identity`)."""
    import distributed.comm.core
    import distributed.security

    connect: Any = distributed.comm.core.connect  # untyped, as the rest of Dask's API
    security: Any = distributed.security.Security
    comm = await connect(address, timeout=CONNECT_SECONDS, **security().get_connection_args("client"))
    try:
        await comm.write({"op": "identity"})
        answer: object = await comm.read()
        return answer
    finally:
        await comm.close()


def _threads(client: Any, address: str) -> int:
    """The threads of the cluster's workers, once it has one."""
    try:
        client.wait_for_workers(1, timeout=WORKERS_SECONDS)
    except Exception:
        raise ClusterError(f"the Dask scheduler at {address} has no worker (waited {WORKERS_SECONDS:g} s)") from None
    threads: dict[str, int] = client.nthreads()
    return max(1, sum(threads.values()))


def _version_here() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout's src/ that was never installed
        return "none"


def _same_version(client: Any, version: str) -> None:
    """Every worker's orca-sample is `version`, or one message names what each has, before any task runs."""
    from importlib.metadata import version as installed

    from toolz import groupby

    found: dict[str, object] = client.run(installed, DISTRIBUTION, on_error="return")
    has = {worker: value if isinstance(value, str) else "none" for worker, value in found.items()}
    other = sorted(worker for worker, what in has.items() if what != version)
    if not other:
        return
    by_version = sorted(groupby(has.__getitem__, other).items())
    said = "; ".join(f"{what} on {', '.join(workers)}" for what, workers in by_version)
    raise ClusterError(f"the Dask workers must run orca-sample {version}, as here: {len(other)} of {len(has)} do "
                       f"not: {said}")


def _dashboard(client: Any) -> str | None:
    try:
        link = client.dashboard_link
    except Exception:  # a scheduler without a dashboard
        return None
    return str(link) if link else None


def _quiet() -> None:
    """Dask logs its connections and retries at INFO and WARNING on standard error; what matters is said once, by
    `orca metrics`."""
    import logging

    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
