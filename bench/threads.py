#!/usr/bin/env python3
"""Which threads ran, and which waited for a CPU, while the page missed frames.

Started by bench/conversation_view.mjs (--threads) beside a streamed answer. Every INTERVAL
seconds it reads /proc/PID/task/TID/schedstat (nanoseconds on a CPU, nanoseconds runnable but
waiting for one) of every thread of every process that is not the kernel's (itself included, so
its own cost is seen), and keeps the change since the
last reading of each thread that changed. On SIGTERM it writes them as JSON lines to stdout:
{"t": epoch ms of the reading, "s": [[pid, tid, comm of the process, comm of the thread, ran ns,
waited ns], ...]}. Owns nothing else; reads /proc only.
"""

import json
import os
import signal
import sys
import time

INTERVAL = 0.02
RESCAN_EVERY = 0.5  # seconds between looks for new processes and threads


def comm(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def threads():
    """(pid, tid, process comm, thread comm, schedstat path) of every thread of every process but the kernel's."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        name = comm(f"/proc/{pid}/comm")
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                kernels = f.read(1) == b""  # a kernel thread has no command line
        except OSError:
            continue
        if name is None or kernels:
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            found.append((int(pid), int(tid), name, comm(f"/proc/{pid}/task/{tid}/comm") or "?", f"/proc/{pid}/task/{tid}/schedstat"))
    return found


def main():
    readings = []
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    # Each schedstat file is opened once and read again in place (pread at 0 makes the kernel
    # write it afresh), so a reading costs a read a thread, not an open and a close too.
    opened = {}
    last = {}
    rescanned = -RESCAN_EVERY
    while not stopping:
        now = time.monotonic()
        if now - rescanned >= RESCAN_EVERY:
            seen = set()
            for pid, tid, pname, tname, path in threads():
                seen.add(tid)
                if tid not in opened:
                    try:
                        opened[tid] = (pid, pname, tname, os.open(path, os.O_RDONLY))
                    except OSError:
                        pass
            for tid in [t for t in opened if t not in seen]:
                os.close(opened.pop(tid)[3])
            rescanned = now
        changed = []
        for tid, (pid, pname, tname, fd) in opened.items():
            try:
                ran, waited, _ = (int(x) for x in os.pread(fd, 100, 0).split())
            except (OSError, ValueError):
                continue
            before = last.get(tid)
            last[tid] = (ran, waited)
            if before is not None and (ran, waited) != before:
                changed.append([pid, tid, pname, tname, ran - before[0], waited - before[1]])
        if changed:
            readings.append({"t": round(time.time() * 1000, 1), "s": changed})
        time.sleep(INTERVAL)
    out = sys.stdout
    for r in readings:
        out.write(json.dumps(r, separators=(",", ":")) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
