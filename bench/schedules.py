"""What schedules cost on a heavy day, beside a probe of the machine's stalls (the most a 1 ms
sleep overslept meanwhile). A home gets COUNT schedules and ten runs of record each (written
straight into its database, as years of use would leave them); then, median of 7 runs after one
warm-up each:

- `schedule list --json` (the Schedules page reads the same);
- `schedule logs --json --limit 200` (the record of runs);
- `schedule run-due` with nothing due: what the system's scheduler pays every minute;
- once, `schedule run-due` when every schedule was missed and skips missed runs: COUNT runs
  claimed and recorded in one go.

Usage: SWITCHBOARD_BIN=path/to/switchboard python3 bench/schedules.py [COUNT]
"""

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

BIN = os.environ["SWITCHBOARD_BIN"]
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000

home = tempfile.mkdtemp(prefix="schedules-bench-")
env = dict(os.environ, SWITCHBOARD_HOME=home)
subprocess.run([BIN, "schedule", "list"], env=env, capture_output=True, check=True)
now = int(time.time() * 1000)
db = sqlite3.connect(os.path.join(home, "data", "switchboard.db"))
with db:
    for i in range(COUNT):
        sid = str(uuid.uuid4())
        fields = {
            "name": f"schedule {i}",
            "prompt": f"Report number {i}: what changed since yesterday?",
            "rule": {"kind": "every", "minutes": 60},
            "missed": "skip",
            "approval_wait_minutes": 30,
        }
        db.execute(
            "INSERT INTO schedules (id, name, fields, enabled, created_at, next_at) VALUES (?, ?, ?, 1, ?, ?)",
            (sid, fields["name"], json.dumps(fields), now - 86_400_000, now + 3_600_000),
        )
        for r in range(10):
            at = now - (r + 1) * 3_600_000
            db.execute(
                "INSERT INTO schedule_runs (id, schedule_id, due_at, started_at, finished_at, status, late, manual, message) "
                "VALUES (?, ?, ?, ?, ?, 'completed', 0, 0, NULL)",
                (str(uuid.uuid4()), sid, at, at, at + 5_000),
            )
db.close()

stall = [0.0]
done = threading.Event()


def probe():
    while not done.is_set():
        began = time.perf_counter()
        time.sleep(0.001)
        stall[0] = max(stall[0], time.perf_counter() - began - 0.001)


def timed(args, runs=8):
    times = []
    for run in range(runs):
        began = time.perf_counter()
        out = subprocess.run([BIN, *args], env=env, capture_output=True, check=True)
        took = time.perf_counter() - began
        if run > 0 or runs == 1:
            times.append(took)
    return times, out


def say(label, times):
    print(f"{label}: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms")


threading.Thread(target=probe, daemon=True).start()
times, out = timed(["schedule", "list", "--json"])
say(f"schedule list, {len(json.loads(out.stdout))} schedules", times)
times, out = timed(["schedule", "logs", "--json", "--limit", "200"])
say(f"schedule logs, {len(json.loads(out.stdout))} of {COUNT * 10} runs", times)
times, out = timed(["schedule", "run-due", "--json"])
say("schedule run-due, nothing due", times)
db = sqlite3.connect(os.path.join(home, "data", "switchboard.db"))
with db:
    db.execute("UPDATE schedules SET next_at = ?", (now - 3 * 3_600_000 - 60_000,))
db.close()
times, out = timed(["schedule", "run-due", "--json"], runs=1)
ran = json.loads(out.stdout)["ran"]
skipped = sum(1 for o in ran if o["status"] == "skipped")
say(f"schedule run-due, {COUNT} missed ({skipped} recorded skipped)", times)
done.set()
print(f"worst stall {stall[0] * 1000:.1f} ms")
subprocess.run(["rm", "-rf", home])
