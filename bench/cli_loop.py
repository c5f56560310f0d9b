#!/usr/bin/env python3
"""The command line's tool loop beside the same loop written on the official SDKs (issue 55).

Three programs, each a process of its own timed from start to exit, against one aimock (zero
delay, `tests/fixtures/aimock/tool-loop.json`) and server-everything over stdio:

- `switchboard chat --max-rounds 20 --json "Bench loop"`: 20 rounds, each a streamed answer
  asking for `everything__echo` and the call, then the closing request with tools forbidden
  (the fixture's model would call tools for ever);
- the same 20 rounds written in Python on the MCP SDK (`mcp`'s `stdio_client` and
  `ClientSession`) and a streamed OpenAI-style request per round (the standard library's
  `http.client`, SSE read line by line): what a person scripting it themselves would write;
- a plain answer on the command line, with server-everything offered and without any server.

For the command line it also reports the time from its `run_finished` event to the process's
exit: what a script waits for after it has its answer (mostly stopping the servers).

The programs take turns, run by run, so a machine that slows down weighs on all alike; each
figure is the median of the runs, with the ratio the median of each run's ratio. Beside them a
probe of machine stalls: a thread that sleeps 1 ms at a time and counts the sleeps that took
over 20 ms while the bench ran.

Run from the repository root, with the peers installed (`scripts/bootstrap.sh test` does):

    tests/peers/.venv/bin/python bench/cli_loop.py --app "$CARGO_TARGET_DIR/release/switchboard"
"""

import argparse
import asyncio
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "tests", "peers")
EVERYTHING = os.path.join(PEERS, "node_modules", ".bin", "mcp-server-everything")
ROUNDS = 20


def start_aimock():
    cli = os.path.join(PEERS, "node_modules", "@copilotkit", "aimock", "dist", "cli.js")
    env = dict(os.environ, LOOPBACK_REPORT_PORT="1", NODE_OPTIONS=f"--require {os.path.join(PEERS, 'loopback.cjs')}")
    mock = subprocess.Popen(
        ["node", cli, "--host", "127.0.0.1", "--port", "0", "--fixtures",
         os.path.join(ROOT, "tests", "fixtures", "aimock", "tool-loop.json"),
         "--log-level", "silent", "--journal-max", "50"],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    marker = "loopback: listening on 127.0.0.1:"
    for line in mock.stderr:
        if marker in line:
            port = int(line.split(marker, 1)[1].strip().split()[0])
            threading.Thread(target=lambda: [None for _ in mock.stderr], daemon=True).start()
            return mock, port
    mock.kill()
    sys.exit("aimock did not start")


def cli(app, home, *args):
    done = subprocess.run([app, *args], env=dict(os.environ, SWITCHBOARD_HOME=home), capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)}: {done.stderr}")


def home_with(app, port, everything):
    home = tempfile.mkdtemp(prefix="cli-loop-")
    cli(app, home, "provider", "add", "Mock", "--kind", "openai_compatible", "--base-url",
        f"http://127.0.0.1:{port}/v1", "--model", "gpt-4o")
    if everything:
        cli(app, home, "mcp", "add", "everything", "--", EVERYTHING, "stdio")
    return home


def run_cli(app, home, prompt):
    """Wall time of one `chat`, and the time from its `run_finished` to its exit."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [app, "chat", "--provider", "Mock", "--approve", "all", "--max-rounds", str(ROUNDS), "--json", prompt],
        env=dict(os.environ, SWITCHBOARD_HOME=home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    finished = None
    calls = 0
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("type") == "tool_finished":
            calls += 1
        if event.get("type") == "run_finished":
            finished = time.perf_counter()
    err = proc.stderr.read()
    code = proc.wait()
    ended = time.perf_counter()
    if code != 0 or finished is None:
        sys.exit(f"chat failed ({code}): {err}")
    return ended - started, ended - finished, calls


SDK_LOOP = r'''
import asyncio, http.client, json, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PORT, EVERYTHING, ROUNDS = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

def stream_chat(messages, tools, choice="auto"):
    conn = http.client.HTTPConnection("127.0.0.1", PORT)
    body = json.dumps({"model": "gpt-4o", "messages": messages, "tools": tools, "tool_choice": choice, "stream": True})
    conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    response = conn.getresponse()
    calls, text = {}, ""
    for raw in response:
        line = raw.decode().strip()
        if not line.startswith("data:") or line == "data: [DONE]":
            continue
        delta = json.loads(line[5:])["choices"][0].get("delta", {})
        text += delta.get("content") or ""
        for call in delta.get("tool_calls") or []:
            kept = calls.setdefault(call["index"], {"id": "", "name": "", "arguments": ""})
            kept["id"] = call.get("id") or kept["id"]
            function = call.get("function", {})
            kept["name"] += function.get("name") or ""
            kept["arguments"] += function.get("arguments") or ""
    conn.close()
    return list(calls.values()), text

async def main():
    params = StdioServerParameters(command=EVERYTHING, args=["stdio"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = (await session.list_tools()).tools
            tools = [{"type": "function", "function": {"name": f"everything__{t.name}",
                      "description": t.description or "", "parameters": getattr(t, "input_schema", None) or getattr(t, "inputSchema")}} for t in listed]
            messages = [{"role": "user", "content": "Bench loop"}]
            made = 0
            # ROUNDS rounds of tool use, then the answer with tools forbidden: what `chat
            # --max-rounds ROUNDS` does with a model that would call tools for ever.
            for _ in range(ROUNDS):
                calls, text = stream_chat(messages, tools)
                messages.append({"role": "assistant", "content": None, "tool_calls": [
                    {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                    for c in calls]})
                for c in calls:
                    result = await session.call_tool(c["name"].split("__", 1)[1], json.loads(c["arguments"] or "{}"))
                    messages.append({"role": "tool", "tool_call_id": c["id"], "content": result.content[0].text})
                    made += 1
            calls, text = stream_chat(messages, tools, "none")
            print(made, text)

asyncio.run(main())
'''


def run_sdk(port):
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", SDK_LOOP, str(port), EVERYTHING, str(ROUNDS)], capture_output=True, text=True)
    ended = time.perf_counter()
    if done.returncode != 0:
        sys.exit(f"the SDK loop failed: {done.stderr}")
    return ended - started, int(done.stdout.split()[0])


class StallProbe:
    """Counts 1 ms sleeps that took over 20 ms: the machine's own stalls while the bench runs."""

    def __init__(self):
        self.stalls = 0
        self.worst = 0.0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            before = time.perf_counter()
            time.sleep(0.001)
            took = time.perf_counter() - before
            if took > 0.020:
                self.stalls += 1
                self.worst = max(self.worst, took)

    def stop(self):
        self.running = False
        self.thread.join()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", required=True)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    mock, port = start_aimock()
    probe = StallProbe()
    rows = {"cli": [], "cli_tail": [], "sdk": [], "ratio": [], "plain_with": [], "plain_with_tail": [], "plain_without": []}
    try:
        with_server = home_with(args.app, port, everything=True)
        without = home_with(args.app, port, everything=False)
        for run in range(args.runs):
            wall, tail, calls = run_cli(args.app, with_server, "Bench loop")
            sdk, sdk_calls = run_sdk(port)
            if calls != ROUNDS or sdk_calls != ROUNDS:
                sys.exit(f"expected {ROUNDS} calls each: the command line made {calls}, the SDK loop {sdk_calls}")
            plain, plain_tail, _ = run_cli(args.app, with_server, "And after the comparison")
            bare, _, _ = run_cli(args.app, without, "And after the comparison")
            rows["cli"].append(wall)
            rows["cli_tail"].append(tail)
            rows["sdk"].append(sdk)
            rows["ratio"].append(wall / sdk)
            rows["plain_with"].append(plain)
            rows["plain_with_tail"].append(plain_tail)
            rows["plain_without"].append(bare)
            print(f"run {run + 1}: chat {wall:.3f} s (exit {tail * 1000:.0f} ms after the answer), "
                  f"SDK loop {sdk:.3f} s, ratio {wall / sdk:.2f}; plain answer {plain:.3f} s with the "
                  f"server (exit {plain_tail * 1000:.0f} ms after), {bare:.3f} s without", flush=True)
    finally:
        probe.stop()
        mock.kill()
        mock.wait()
    med = {k: statistics.median(v) for k, v in rows.items()}
    print()
    print(f"| what ({args.runs} runs, medians) | time |")
    print("|---|---|")
    print(f"| `chat`, {ROUNDS} rounds with server-everything | {med['cli']:.3f} s |")
    print(f"| the same loop on the MCP Python SDK | {med['sdk']:.3f} s |")
    print(f"| ratio, `chat` ÷ SDK loop | {med['ratio']:.2f}× |")
    print(f"| `chat`: its exit after the answer ({ROUNDS} rounds) | {med['cli_tail'] * 1000:.0f} ms |")
    print(f"| a plain answer, server-everything offered | {med['plain_with']:.3f} s (exit {med['plain_with_tail'] * 1000:.0f} ms after the answer) |")
    print(f"| a plain answer, no server | {med['plain_without']:.3f} s |")
    print(f"| machine stalls over 20 ms while it ran | {probe.stalls} (worst {probe.worst * 1000:.0f} ms) |")


if __name__ == "__main__":
    main()
