#!/bin/sh
# The workload of the README's picture (docs/run.png), about 30 s: memory growing to 500 MB in steps while spinning,
# then a child script (holder.py) holding 150 MB for 10 s, then 300 MB written and fsynced by dd: three processes
# the run's top processes tell apart. Sampled with
#   orca sample --out run.jsonl --seconds 1 -- sh docs/run-workload.sh
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
path = sys.argv[1]
os.mkdir(path + ".d")
holder = path + ".d/holder.py"
with open(holder, "w") as script:  # a script of its own, so it is named apart from this python3
    script.write("import time\nb = bytearray(150 * 1000 * 1000)\nb[::4096] = b'1' * len(b[::4096])\ntime.sleep(10)\n")
subprocess.run([sys.executable, holder], check=True)
os.remove(holder)
os.rmdir(path + ".d")
# 300 MB written and fsynced
subprocess.run(["dd", "if=/dev/urandom", f"of={path}", "bs=1000000", "count=300", "conv=fsync", "status=none"],
               check=True)
os.remove(path)
del held
time.sleep(2)
EOF
