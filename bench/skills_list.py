"""How long `switchboard skills list --json` takes with 2,000 skills in the skills folder (each a
SKILL.md of about 1 KB and three more files), beside a probe of the machine's stalls (the most a
1 ms sleep overslept meanwhile). Median of 7 runs after one warm-up.

Usage: SWITCHBOARD_BIN=path/to/switchboard python3 bench/skills_list.py [COUNT]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.environ["SWITCHBOARD_BIN"]
COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000

home = tempfile.mkdtemp(prefix="skills-bench-")
skills = os.path.join(home, "config", "skills")
for i in range(COUNT):
    folder = os.path.join(skills, f"skill-{i}")
    os.makedirs(os.path.join(folder, "reference"))
    os.makedirs(os.path.join(folder, "scripts"))
    with open(os.path.join(folder, "SKILL.md"), "w") as f:
        f.write(f"---\nname: skill-{i}\ndescription: Does task number {i} the team's way, step by step.\nlicense: MIT\n---\n")
        f.write("Follow these steps carefully.\n" * 30)
    for path in ("reference/GUIDE.md", "reference/FORMS.md", "scripts/run.sh"):
        with open(os.path.join(folder, path), "w") as f:
            f.write("x" * 500)

stall = [0.0]
done = threading.Event()


def probe():
    while not done.is_set():
        began = time.perf_counter()
        time.sleep(0.001)
        stall[0] = max(stall[0], time.perf_counter() - began - 0.001)


threading.Thread(target=probe, daemon=True).start()
env = dict(os.environ, SWITCHBOARD_HOME=home)
times = []
for run in range(8):
    began = time.perf_counter()
    out = subprocess.run([BIN, "skills", "list", "--json"], env=env, capture_output=True, check=True)
    took = time.perf_counter() - began
    if run > 0:
        times.append(took)
done.set()
listed = out.stdout.count(b'"name"')
print(f"{COUNT} skills ({listed} listed): median {statistics.median(times) * 1000:.0f} ms, "
      f"min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms; worst stall {stall[0] * 1000:.1f} ms")
subprocess.run(["rm", "-rf", home])
