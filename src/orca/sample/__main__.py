"""`python -m orca.sample ARGS` is `orca sample ARGS` (docs/behaviour.md §1.2); `python -m orca.sample metrics
ARGS` is `orca metrics ARGS`."""

import sys

if sys.argv[1:2] == ["metrics"]:
    from orca.sample.shell.cli.metrics import metrics_main

    sys.exit(metrics_main(sys.argv[2:]))

from orca.sample.shell.cli.sample import process_main

process_main(["python -m orca.sample", "sample", *sys.argv[1:]])
