"""A hostile MCP server (Python SDK `mcp`) for the sandbox tests: on command it tries to read
or write a file, connect to a TCP port (directly, or through its proxy as a program that
honours HTTPS_PROXY does) or to a Unix socket (a session bus, an agent), send a UDP datagram, signal a process, or do any of
these from a child process, or from a grandchild that left its session by `setsid` and a
double fork. Each tool answers "ok: …" when the attempt worked and "refused: ERRNO …" when the
system refused it, so a test can tell a sandbox's refusal from a bug."""

import json
import os
import socket
import subprocess
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("hostile")


def refused(e: OSError) -> str:
    name = os.strerror(e.errno) if e.errno else str(e)
    return f"refused: {e.errno} {name}"


def attempt(op: str, target: str, extra: str = "") -> str:
    try:
        if op == "read":
            with open(target, encoding="utf-8", errors="replace") as f:
                return "ok: " + f.read(200)
        if op == "list":
            return "ok: " + ",".join(sorted(os.listdir(target)))
        if op == "write":
            with open(target, "w", encoding="utf-8") as f:
                f.write(extra or "written by the hostile server")
            return "ok: written"
        if op == "connect":
            host, port = target.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=5) as s:
                s.sendall(b"hello")
            return "ok: connected"
        if op == "proxy":
            # As a program that honours the proxy settings does: CONNECT through HTTPS_PROXY.
            proxy = os.environ.get("HTTPS_PROXY", "")
            if not proxy.startswith("http://"):
                return "refused: no proxy is set"
            host, port = proxy[len("http://"):].rstrip("/").rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=10) as s:
                s.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
                status = s.recv(4096).decode(errors="replace").split("\r\n", 1)[0]
            if " 200 " in status + " ":
                return "ok: connected"
            return f"refused: {status}"
        if op == "unix":
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(target)
            return "ok: connected"
        if op == "udp":
            host, port = target.rsplit(":", 1)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"hello", (host, int(port)))
            return "ok: sent"
        if op == "signal":
            os.kill(int(target), 0)
            return "ok: signalled"
        return f"unknown operation {op}"
    except OSError as e:
        return refused(e)


@server.tool()
def try_it(op: str, target: str, extra: str = "") -> str:
    """Tries one operation (read, list, write, connect, udp, signal) on a target."""
    return attempt(op, target, extra)


@server.tool()
def write_file(path: str, content: str = "") -> str:
    """Writes a file, failing as a server does when the system refuses (the error it raises
    is what the tool reports)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(content or "written by the hostile server")
    return "written"


@server.tool()
def from_child(op: str, target: str, extra: str = "") -> str:
    """Tries the operation from a child process."""
    done = subprocess.run(
        [sys.executable, __file__, "--once", json.dumps([op, target, extra])],
        capture_output=True,
        text=True,
        timeout=30,
    )
    return done.stdout.strip() or done.stderr.strip()


@server.tool()
def from_escaped(op: str, target: str, extra: str = "") -> str:
    """Tries the operation from a grandchild that left its session (setsid) by a double fork."""
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(read_end)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        answer = attempt(op, target, extra)
        os.write(write_end, answer.encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(first, 0)
    chunks = []
    while True:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    return b"".join(chunks).decode()


def at_start() -> None:
    """Tries what HOSTILE_AT_START lists ([[op, target], …]) before serving, saying each
    refusal on stderr as a program's own error would (a read with its path), so the card shows
    what the sandbox refused before a tool is ever called."""
    for op, target in json.loads(os.environ.get("HOSTILE_AT_START") or "[]"):
        if op == "read":
            try:
                with open(target, encoding="utf-8") as f:
                    f.read(1)
            except OSError as e:
                print(f"PermissionError: {e}", file=sys.stderr, flush=True)
        else:
            print(f"{op} {target}: {attempt(op, target)}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--once":
        print(attempt(*json.loads(sys.argv[2])))
    else:
        at_start()
        server.run()
