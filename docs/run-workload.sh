#!/bin/sh
# A build-like workload: compile-ish CPU on both cores, memory that grows and is freed, files written and read.
python3 -c "
import time, multiprocessing as mp
def spin(s):
    end = time.time() + s
    while time.time() < end: pass
with mp.Pool(2) as p: p.map(spin, [12, 12])
"
python3 -c "
import time
chunks = []
for i in range(30):
    chunks.append(bytearray(64 << 20)); time.sleep(0.3)
time.sleep(3)
"
dd if=/dev/urandom of=/tmp/reader_real/blob bs=1M count=600 conv=fsync status=none
sleep 2
cat /tmp/reader_real/blob > /dev/null
rm -f /tmp/reader_real/blob
python3 -c "
import time
end = time.time() + 8
while time.time() < end: pass
"
