"""What long tasks cost on a heavy day, beside a probe of the machine's stalls (the most a 1 ms
sleep overslept meanwhile). A home gets 200 conversations of 100 recorded calls each (20,000
calls, written straight into its database, as long use would leave them), COUNT of which ran
as tasks left to be followed outside their runs (their process is gone); then, median of 7 runs
after one warm-up each:

- `tasks list --json --limit 200`;
- `tasks follow --json` when their server is configured but down (nothing listens at its
  address): the follower's pass over COUNT open tasks (each said to wait for its server), what
  every start and every look pays, its failed start included.

Usage: SWITCHBOARD_BIN=path/to/switchboard python3 bench/tasks.py [COUNT]
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
CONVERSATIONS, CALLS = 200, 100

home = tempfile.mkdtemp(prefix="tasks-bench-")
env = dict(os.environ, SWITCHBOARD_HOME=home)
subprocess.run([BIN, "tasks", "list"], env=env, capture_output=True, check=True)
# Port 9 (discard) on the loopback: refused at once.
subprocess.run([BIN, "mcp", "add", "tasks", "--url", "http://127.0.0.1:9/mcp"], env=env, capture_output=True, check=True)
now = int(time.time() * 1000)
db = sqlite3.connect(os.path.join(home, "data", "switchboard.db"))
open_every = max(1, CONVERSATIONS * CALLS // COUNT)
with db:
    n = 0
    for c in range(CONVERSATIONS):
        cid = str(uuid.uuid4())
        db.execute("INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                   (cid, f"conversation {c}", now, now))
        mid = str(uuid.uuid4())
        db.execute("INSERT INTO messages (id, conversation_id, seq, role, content, created_at, status) "
                   "VALUES (?, ?, 1, 'assistant', '', ?, 'complete')", (mid, cid, now))
        for k in range(CALLS):
            task = n % open_every == 0
            db.execute(
                "INSERT INTO tool_runs (id, conversation_id, message_id, call_id, server, tool, arguments, "
                "decision, started_at, finished_at, is_error, result, task_id, task_state) "
                "VALUES (?, ?, ?, ?, 'tasks', 'slow', '{}', 'allowed', ?, ?, 0, 'went on', ?, ?)",
                (str(uuid.uuid4()), cid, mid, f"call_{k}", now - n, now - n + 5,
                 f"task-{n}" if task else None, "background" if task else None))
            n += 1
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
        if run > 0:
            times.append(took)
    return times, out


def say(label, times):
    print(f"{label}: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms")


threading.Thread(target=probe, daemon=True).start()
times, out = timed(["tasks", "list", "--json", "--limit", "200"])
say(f"tasks list, {len(json.loads(out.stdout))} of {CONVERSATIONS * CALLS} calls", times)
times, out = timed(["tasks", "follow", "--json", "--wait-for-servers", "0"])
followed = json.loads(out.stdout)
waiting = sum(1 for t in followed if t["state"] == "background")
say(f"tasks follow, {len(followed)} open tasks ({waiting} waiting for their server)", times)
done.set()
print(f"worst stall {stall[0] * 1000:.1f} ms")
subprocess.run(["rm", "-rf", home])
