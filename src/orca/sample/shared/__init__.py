"""What the sampler's shell (`shell/`) and the read side (`readback/`) both need, below both: the one constructor of
boto3 clients (`aws.py`), the one way a file is read (`bounded.py`), the process's own cgroup and its CPU limit
(`own_cgroup.py`), the system's limits and sizes (`sysconf.py`), `s3://` locations (`s3_location.py`), a line's
start found by reading backwards (`backwards.py`), the commands' parser (`parser.py`) and how `orca` is named in a
hint (`hints.py`). It imports neither."""
