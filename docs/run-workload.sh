#!/bin/sh
# The workload of the README's picture (docs/run.png), about 31 s: memory growing to 500 MB in steps while spinning,
# a child holding 150 MB for 10 s beside it, then 300 MB written and fsynced. Sampled with
#   orca sample --out run.jsonl --seconds 1 -- docs/run-workload.sh
exec python3 - "${TMPDIR:-/tmp}/orca-run-workload.$$" <<'EOF'
import os
import subprocess
import sys
import time

MB = 1000 * 1000
held = []
for step in range(10):  # 50 MB more every 1.5 s, spinning in between: 15 s
    held.append(bytearray(50 * MB))
    for page in range(0, 50 * MB, 4096):
        held[-1][page] = 1  # touched, so resident
    end = time.monotonic() + 1.5
    while time.monotonic() < end:
        pass
child = subprocess.Popen([sys.executable, "-c",
                          "import time; b = bytearray(150 * 1000 * 1000); b[::4096] = b'1' * len(b[::4096]); "
                          "time.sleep(10)"])
child.wait()
path = sys.argv[1]
with open(path, "wb") as out:  # 300 MB written and fsynced
    block = os.urandom(MB)
    for _ in range(300):
        out.write(block)
    out.flush()
    os.fsync(out.fileno())
os.remove(path)
del held
time.sleep(2)
EOF
