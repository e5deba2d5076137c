"""Where the S3 output and the reader send their requests (docs/s3.md): AWS's endpoint and addressing
settings, certificate bundles and proxies, honoured as boto3 honours them.

The requests go through the proxy of proxy.py as an HTTPS proxy: it answers TLS for AWS's host names with a
certificate of the test's own authority (trusted only through the CA bundle settings) and passes each request on
to the moto server, so the test sees the host and path each request was sent to. The expected host names are those
of AWS's documentation of S3's endpoints; each is also checked against a plain boto3 client given the same settings.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orca.sample.readback.shell.sources import read_samples
from tests.moto_server import MotoServer
from tests.reader.hand_worked import RUN
from tests.s3.proxy import Authority, FaultProxy, Seen
from tests.s3.staged import Location, append, lines, messages_about

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")


@pytest.fixture
def through_proxy(
    s3_env: dict[str, str], proxy: FaultProxy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """AWS's own endpoints (no endpoint setting), reached through the proxy; the CA bundle settings are left to
    the test. The AWS config file, returned, is empty."""
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    for name in (*PROXY_VARIABLES, "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    config = tmp_path / "aws-config"
    config.write_text("[default]\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    return config


def first(proxy: FaultProxy, method: str) -> Seen:
    return next(request for request in proxy.seen if request.method == method)


# Host names from AWS's documentation of S3 endpoints ("Amazon S3 endpoints and quotas", "Virtual hosting of
# buckets", "Configuring fast, secure file transfers using Amazon S3 Transfer Acceleration", FIPS and dual-stack
# endpoints, and the ISO partitions' endpoints).
ENDPOINTS = [
    ("us-east-1, the global endpoint", "", {"AWS_DEFAULT_REGION": "us-east-1"}, "{b}.s3.amazonaws.com", "/{k}"),
    (
        "us-east-1, regional",
        "",
        {"AWS_DEFAULT_REGION": "us-east-1", "AWS_S3_US_EAST_1_REGIONAL_ENDPOINT": "regional"},
        "{b}.s3.us-east-1.amazonaws.com",
        "/{k}",
    ),
    ("another region", "", {"AWS_DEFAULT_REGION": "eu-west-1"}, "{b}.s3.eu-west-1.amazonaws.com", "/{k}"),
    (
        "s3.addressing_style = path",
        "s3 =\n  addressing_style = path\n",
        {"AWS_DEFAULT_REGION": "eu-west-1"},
        "s3.eu-west-1.amazonaws.com",
        "/{b}/{k}",
    ),
    (
        "s3.addressing_style = virtual",
        "s3 =\n  addressing_style = virtual\n",
        {"AWS_DEFAULT_REGION": "eu-west-1"},
        "{b}.s3.eu-west-1.amazonaws.com",
        "/{k}",
    ),
    (
        "s3.use_accelerate_endpoint",
        "s3 =\n  use_accelerate_endpoint = true\n",
        {"AWS_DEFAULT_REGION": "eu-west-1"},
        "{b}.s3-accelerate.amazonaws.com",
        "/{k}",
    ),
    (
        "use_fips_endpoint",
        "use_fips_endpoint = true\n",
        {"AWS_DEFAULT_REGION": "us-east-1"},
        "{b}.s3-fips.us-east-1.amazonaws.com",
        "/{k}",
    ),
    (
        "AWS_USE_FIPS_ENDPOINT with AWS_USE_DUALSTACK_ENDPOINT",
        "",
        {"AWS_DEFAULT_REGION": "us-east-1", "AWS_USE_FIPS_ENDPOINT": "true", "AWS_USE_DUALSTACK_ENDPOINT": "true"},
        "{b}.s3-fips.dualstack.us-east-1.amazonaws.com",
        "/{k}",
    ),
    (
        "use_dualstack_endpoint",
        "use_dualstack_endpoint = true\n",
        {"AWS_DEFAULT_REGION": "eu-west-1"},
        "{b}.s3.dualstack.eu-west-1.amazonaws.com",
        "/{k}",
    ),
    ("an ISO partition", "", {"AWS_DEFAULT_REGION": "us-iso-east-1"}, "{b}.s3.us-iso-east-1.c2s.ic.gov", "/{k}"),
    (
        "the ISO-B partition",
        "",
        {"AWS_DEFAULT_REGION": "us-isob-east-1"},
        "{b}.s3.us-isob-east-1.sc2s.sgov.gov",
        "/{k}",
    ),
    ("the China partition", "", {"AWS_DEFAULT_REGION": "cn-north-1"}, "{b}.s3.cn-north-1.amazonaws.com.cn", "/{k}"),
]


@pytest.mark.parametrize(("config", "environment", "host", "path"), [case[1:] for case in ENDPOINTS],
                         ids=[case[0] for case in ENDPOINTS])
def test_the_output_sends_its_requests_where_boto3_does(
    through_proxy: Path,
    proxy: FaultProxy,
    authority: Authority,
    s3_server: MotoServer,
    bucket: str,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    config: str,
    environment: dict[str, str],
    host: str,
    path: str,
) -> None:
    through_proxy.write_text("[default]\n" + config)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_CA_BUNDLE", str(authority.bundle))
    at = Location(s3_server, bucket, "p/7/metrics/i-1.jsonl")
    append(at.stage, lines(3))
    at.uploader().upload_if_changed()
    assert messages_about(capfd.readouterr().err, at.location) == []
    assert at.level()
    sent = first(proxy, "PUT")
    expected = (host.format(b=bucket), path.format(b=bucket, k=at.key))
    assert (sent.host, sent.path) == expected
    # A plain boto3 client given the same settings sends its request to the same place.
    import boto3

    proxy.forget()
    boto3.session.Session().client("s3").put_object(Bucket=bucket, Key=at.key, Body=b"x")
    assert (first(proxy, "PUT").host, first(proxy, "PUT").path) == expected


@pytest.mark.parametrize("setting", ["s3 =\n  addressing_style = path\n", "use_fips_endpoint = true\n"])
def test_the_reader_sends_its_requests_where_boto3_does(
    through_proxy: Path, proxy: FaultProxy, authority: Authority, s3_server: MotoServer, bucket: str,
    monkeypatch: pytest.MonkeyPatch, setting: str,
) -> None:
    through_proxy.write_text("[default]\n" + setting)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CA_BUNDLE", str(authority.bundle))
    s3_server.client().put_object(Bucket=bucket, Key="run/worker-a.jsonl", Body=RUN.encode())
    assert len(list(read_samples(f"s3://{bucket}/run/worker-a.jsonl"))) == 5
    assert len(list(read_samples(f"s3://{bucket}/run/"))) == 5
    expected_host = "s3.amazonaws.com" if "path" in setting else f"{bucket}.s3-fips.us-east-1.amazonaws.com"
    hosts = {request.host for request in proxy.seen}
    assert hosts == {expected_host}, hosts
    get = first(proxy, "GET")
    assert get.path.endswith("run/worker-a.jsonl")
    assert get.path.startswith(f"/{bucket}/") == ("path" in setting)


@pytest.mark.parametrize("variable", ["REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"])
def test_a_private_certificate_authority_is_trusted_through_either_bundle_variable(
    through_proxy: Path, proxy: FaultProxy, authority: Authority, s3_server: MotoServer, bucket: str,
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], variable: str,
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv(variable, str(authority.bundle))
    at = Location(s3_server, bucket)
    append(at.stage, lines(2))
    at.uploader().upload_if_changed()
    assert messages_about(capfd.readouterr().err, at.location) == []
    assert at.level()
    assert first(proxy, "PUT").host == f"{bucket}.s3.amazonaws.com"


def test_without_the_bundle_the_proxys_certificate_is_refused(
    through_proxy: Path, proxy: FaultProxy, s3_server: MotoServer, bucket: str, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    # What makes the two above mean something: the test's authority is trusted only through the setting.
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    at = Location(s3_server, bucket)
    append(at.stage, lines(2))
    at.uploader().upload_if_changed()
    messages = messages_about(capfd.readouterr().err, at.location)
    assert len(messages) == 1 and "certificate" in messages[0].lower(), messages
    assert at.object() is None
    assert proxy.seen == []


def test_the_proxy_variables_are_honoured(
    s3_env: dict[str, str], proxy: FaultProxy, s3_server: MotoServer, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An http:// endpoint through HTTP_PROXY: the proxy sees the endpoint's own host, as a forward proxy does.
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://orca-store.invalid:9000")
    at = Location(s3_server, bucket)
    append(at.stage, lines(2))
    at.uploader().upload_if_changed()
    assert at.level()
    assert {request.host for request in proxy.seen} == {"orca-store.invalid"}


def test_a_bucket_in_another_region_is_asked_again_there(
    through_proxy: Path, proxy: FaultProxy, authority: Authority, s3_server: MotoServer, bucket: str,
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str],
) -> None:
    # AWS answers a request to the wrong region's endpoint with the bucket's own region: boto3 asks there, signed
    # for it.
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CA_BUNDLE", str(authority.bundle))
    proxy.answer(lambda request: request.method == "PUT", 301, "PermanentRedirect",
                 headers={"x-amz-bucket-region": "eu-west-1"})
    at = Location(s3_server, bucket)
    append(at.stage, lines(2))
    at.uploader().upload_if_changed()
    assert messages_about(capfd.readouterr().err, at.location) == []
    assert at.level()
    puts = [request for request in proxy.seen if request.method == "PUT"]
    assert [request.host for request in puts] == [f"{bucket}.s3.amazonaws.com", f"{bucket}.s3.eu-west-1.amazonaws.com"]
    assert "/eu-west-1/s3/aws4_request" in puts[1].headers["authorization"]
