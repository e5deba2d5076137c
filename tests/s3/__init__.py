"""Tests of `--out s3://` against a real S3-compatible server (moto) on loopback."""
