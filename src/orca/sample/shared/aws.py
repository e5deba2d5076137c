"""The one constructor of AWS clients: the `s3://` output's, the reader's and `orca.control`'s Secrets Manager's.

Each is a boto3 client of a session of its own, so everything a user of the AWS CLI or an SDK expects is boto3's
own doing, read from the environment and the AWS config files as boto3 reads them: the credential chain
(environment, profile, container or instance role, web identity), the region, `AWS_ENDPOINT_URL` and
`AWS_ENDPOINT_URL_<SERVICE>`, the S3 settings (`s3.addressing_style`, `s3.use_accelerate_endpoint`,
`use_fips_endpoint`, `use_dualstack_endpoint`, us-east-1's global or regional endpoint, the ISO partitions' host
names), the CA bundle (`AWS_CA_BUNDLE`, the profile's `ca_bundle`, `REQUESTS_CA_BUNDLE`) and the proxies
(`HTTPS_PROXY`, `NO_PROXY`). What a caller sets is only what it must bound: timeouts, attempts (botocore's
standard retry mode: 5xx answers, throttling and dropped connections are tried again, with jittered backoff), and
the connections a client may hold at once.

boto3 is imported only when a client is made: importing this module costs nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from orca.sample.parse.errors import reason_of
from orca.sample.shared.s3_location import error_text


def quiet() -> None:
    """Without a handler, Python prints library warnings (urllib3's, botocore's) to standard error: a sampler's
    one message per failure is the only thing it should say there. Records still reach an embedder's handlers."""
    import logging

    for name in ("boto3", "botocore", "s3transfer", "urllib3"):
        logging.getLogger(name).addHandler(logging.NullHandler())


def aws_session() -> Any:
    """A new boto3 session: clients made from one share its credentials and its loaded service descriptions."""
    quiet()
    import boto3

    return boto3.session.Session()


def aws_client(
    service: str,
    *,
    connect_seconds: float,
    read_seconds: float,
    attempts: int,
    connections: int = 1,
    endpoint_url: str | None = None,
    session: Any = None,
) -> Any:
    """A boto3 client of `service` (a session of its own unless `session` is given), every setting boto3's but:
    `connect_seconds` to set up a connection and `read_seconds` of silence from the other end before a request
    fails; `attempts` tries of each request in all (botocore's standard retry mode); `connections` kept at once;
    `endpoint_url` where the caller has its own endpoint setting (None: boto3's).

    Raises what boto3 raises for a setting it cannot use (no region for a regional service, an invalid endpoint);
    a missing credential is found at the first request."""
    from botocore.config import Config

    config = Config(
        connect_timeout=connect_seconds,
        read_timeout=read_seconds,
        retries={"mode": "standard", "total_max_attempts": attempts},
        max_pool_connections=connections,
    )
    return (session or aws_session()).client(service, endpoint_url=endpoint_url, config=config)


def error_answer(error: BaseException) -> tuple[int, str, str] | None:
    """The HTTP status, error code and message of the store's error answer `error` (a botocore `ClientError`), or
    None for anything else (no answer at all: a connection that failed, a timeout, no credentials)."""
    exceptions = sys.modules.get("botocore.exceptions")  # not loaded: the error cannot be one of its answers
    if exceptions is None or not isinstance(error, exceptions.ClientError):
        return None
    response: dict[str, Any] = dict(error.response)
    details = response.get("Error", {})
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return int(status or 0), str(details.get("Code", "")), str(details.get("Message", ""))


def reason(error: BaseException) -> str:
    """What went wrong, in a few words: the store's error code and message, else `reason_of`."""
    answer = error_answer(error)
    return reason_of(error) if answer is None else error_text(answer[1], answer[2])
