"""`s3://` locations, without I/O: which locations the output accepts and the reader reads (docs/s3.md), and how an
S3 store's error answer reads. How an upload is planned is in `shell/out/s3_parts.py`.
"""

from __future__ import annotations

SCHEME = "s3://"


def parse_location(location: str) -> tuple[str, str] | None:
    """`s3://BUCKET/KEY` as `(bucket, key)`, or None when it is not one the output accepts.

    The key also names the staging file, one directory per segment under the bucket's, so a key whose segments
    would not name a file of their own is refused: an empty segment (`a//b`, a leading or trailing `/`, which would
    share `a/b`'s file or name a directory), a `.` or `..` segment (which would leave the bucket's directory), a NUL
    byte. Each key the output accepts has a staging file no other key has.

    >>> parse_location("s3://logs/p/7/metrics/i-1.jsonl")
    ('logs', 'p/7/metrics/i-1.jsonl')
    >>> [parse_location(text) for text in ("s3://logs/", "s3:///k", "s3://logs/a//b", "s3://logs/a/../b", "/tmp/x")]
    [None, None, None, None, None]
    """
    if not location.startswith(SCHEME) or "\0" in location:
        return None
    bucket, _, key = location[len(SCHEME) :].partition("/")
    if bucket in ("", ".", ".."):
        return None
    if any(segment in ("", ".", "..") for segment in key.split("/")):
        return None
    return bucket, key


def parse_prefix(location: str) -> tuple[str, str] | None:
    """What the reader accepts: `s3://BUCKET/KEY` (one object), `s3://BUCKET/PREFIX/` or `s3://BUCKET` (every object
    under it) as `(bucket, key or prefix)`, or None without a bucket.

    >>> parse_prefix("s3://logs/run/7/"), parse_prefix("s3://logs"), parse_prefix("s3:///k")
    (('logs', 'run/7/'), ('logs', ''), None)
    """
    if not location.startswith(SCHEME):
        return None
    bucket, _, key = location[len(SCHEME) :].partition("/")
    return (bucket, key) if bucket else None


def error_text(code: str, message: str) -> str:
    """An error answer as a person reads it: its code and, when it says more, its message.

    >>> error_text("NoSuchBucket", "The specified bucket does not exist"), error_text("SlowDown", "SlowDown")
    ('NoSuchBucket: The specified bucket does not exist', 'SlowDown')
    """
    return f"{code}: {message}" if message and message != code else code or "an error"
