"""`python -m orca.sample ARGS` is `orca sample ARGS` (docs/behaviour.md §1.2)."""

import sys

from orca.sample.shell.cli import process_main

process_main(["python -m orca.sample", "sample", *sys.argv[1:]])
