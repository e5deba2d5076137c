"""`python -m orca.sample ARGS` is `orca sample ARGS` (SPEC 1.2)."""

import sys

from orca.sample.shell.cli import sample_main

sys.exit(sample_main(["python -m orca.sample", "sample", *sys.argv[1:]]))
