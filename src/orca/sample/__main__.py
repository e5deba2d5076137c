"""`python -m orca.sample ARGS` is `orca sample ARGS` (docs/behaviour.md §1.2); `python -m orca.sample metrics
ARGS` is `orca metrics ARGS`, and `python -m orca.sample schema ARGS` `orca schema ARGS`."""

import sys

if sys.argv[1:2] == ["metrics"]:
    from orca.sample.readback.shell.cli.metrics import metrics_main

    sys.exit(metrics_main(sys.argv[2:]))
if sys.argv[1:2] == ["schema"]:
    from orca.sample.shell.cli.schema import schema_main

    sys.exit(schema_main(sys.argv[2:]))

from orca.sample.shell.cli.sample import process_main

process_main(["python -m orca.sample", "sample", *sys.argv[1:]])
