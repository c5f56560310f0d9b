#!/usr/bin/env python3
"""Cold start to first paint, and idle memory, of Switchboard beside an empty Tauri 2 app.

Run inside a virtual display and a private session bus, for example:

    xvfb-run -a -s "-screen 0 1280x900x24" dbus-run-session -- \
        python3 bench/startup.py --app target/release/switchboard \
                                 --baseline target/release/baseline-app --runs 5

Needs xwininfo (x11-utils) and xwd (x11-apps), and installs them with apt-get when they are
missing (a fresh Debian has neither). For each run it starts the program with a fresh
SWITCHBOARD_HOME, records when its window is mapped and when the window first shows more than
one colour (first paint of content), waits 3 s, then sums RSS and PSS over the whole process
tree (the app, WebKitWebProcess, WebKitNetworkProcess) from /proc/*/smaps_rollup.

The two programs take turns, run by run (app, empty app, app, …), so a machine that gets
slower or faster while the bench runs weighs on both alike; the ratio reported is the median
of each pair's ratio. Prints every run, then a Markdown table of medians.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time


def descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(children.get(p, []))
    return found


def tree_memory_kib(pid):
    rss = pss = 0
    names = []
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                text = f.read()
            with open(f"/proc/{p}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            continue
        rss += int(re.search(r"^Rss:\s+(\d+)", text, re.M).group(1))
        pss += int(re.search(r"^Pss:\s+(\d+)", text, re.M).group(1))
    return rss, pss, names


def find_window(title):
    out = subprocess.run(["xwininfo", "-root", "-tree"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r'\s*(0x[0-9a-f]+) "([^"]*)":', line)
        if m and m.group(2) == title:
            info = subprocess.run(["xwininfo", "-id", m.group(1)], capture_output=True, text=True).stdout
            if "IsViewable" in info:
                return m.group(1)
    return None


def has_content(window):
    """True once the window shows more than one colour (something beyond a blank background)."""
    dump = subprocess.run(["xwd", "-id", window, "-silent"], capture_output=True).stdout
    if len(dump) < 4096:
        return False
    header = int.from_bytes(dump[0:4], "big")
    ncolors = int.from_bytes(dump[76:80], "big")
    pixels = dump[header + ncolors * 12 :]
    return len(set(pixels[i : i + 4] for i in range(0, len(pixels), 4 * 97))) > 1


def one_run(binary, title):
    home = tempfile.mkdtemp(prefix="switchboard-bench-")
    env = dict(os.environ, SWITCHBOARD_HOME=home, RUST_LOG="warn")
    start = time.monotonic()
    proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    window = mapped = painted = None
    try:
        while time.monotonic() - start < 60:
            if window is None:
                window = find_window(title)
                if window:
                    mapped = time.monotonic() - start
            elif has_content(window):
                painted = time.monotonic() - start
                break
            time.sleep(0.01)
        time.sleep(3)
        rss, pss, names = tree_memory_kib(proc.pid)
    finally:
        for p in reversed(descendants(proc.pid)):
            try:
                os.kill(p, signal.SIGTERM)
            except OSError:
                pass
        proc.wait(timeout=10)
    return mapped, painted, rss, pss, names


def install_tools():
    """xwininfo and xwd, from Debian's x11-utils and x11-apps, when missing."""
    if shutil.which("xwininfo") and shutil.which("xwd"):
        return
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print("installing x11-utils and x11-apps (xwininfo, xwd)", flush=True)
    subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True)
    subprocess.run(
        sudo + ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq",
                "--no-install-recommends", "x11-utils", "x11-apps"],
        check=True, stdout=subprocess.DEVNULL,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--app", required=True)
    ap.add_argument("--baseline", required=True)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    install_tools()
    programs = (("Switchboard", args.app, "Switchboard"), ("empty Tauri 2 app", args.baseline, "Baseline"))
    runs = {label: [] for label, _, _ in programs}
    for i in range(args.runs):
        for label, binary, title in programs if i % 2 == 0 else reversed(programs):
            r = one_run(binary, title)
            runs[label].append(r)
            print(f"run {i + 1} {label}: mapped {r[0] or -1:.3f} s, painted {r[1] or -1:.3f} s, "
                  f"RSS {r[2] // 1024} MiB, PSS {r[3] // 1024} MiB", flush=True)
    rows = {}
    for label, got in runs.items():
        med = lambda i: statistics.median(r[i] for r in got if r[i] is not None)
        rows[label] = (med(0), med(1), med(2) / 1024, med(3) / 1024, sorted(set(got[-1][4])))
    pairs = list(zip(runs["Switchboard"], runs["empty Tauri 2 app"]))
    ratio = lambda i: statistics.median(a[i] / b[i] for a, b in pairs if a[i] and b[i])
    print()
    print(f"| median of {args.runs}, taking turns | window mapped | first paint | RSS (MiB) | PSS (MiB) | processes |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, r in rows.items():
        print(f"| {label} | {r[0]:.2f} s | {r[1]:.2f} s | {r[2]:.0f} | {r[3]:.0f} | {', '.join(r[4])} |")
    print(f"| ratio (median of the {len(pairs)} pairs) | {ratio(0):.2f}× | {ratio(1):.2f}× | {ratio(2):.2f}× | {ratio(3):.2f}× | |")


if __name__ == "__main__":
    main()
