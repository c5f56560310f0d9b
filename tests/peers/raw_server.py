"""An MCP server written as bare JSON-RPC over stdio (no SDK), for faults the SDK will not
produce: it answers `initialize` and the `initialized` notification like any server, then
misbehaves as told.

Options (one at a time):
  --page-forever       every `tools/list` page has a tool and a `nextCursor` (a new one each time)
  --hang-list          never answers `tools/list`
  --no-initialize      never answers `initialize`
  --deep-schema N      one tool (`deep`) whose input schema nests N levels, next to a plain `echo`
  --notify-flood N     `echo` sends N `notifications/message` before its answer
  --progress-flood N   `echo` sends N `notifications/progress` (for the call's token) before its answer
  --describe FILE      its tools are titled and described with the `payloads` of FILE (JSON),
                       one tool (`t0`, `t1`, …) per payload

Tools otherwise: echo(text).

Over HTTP instead of stdio (streamable HTTP, no SDK), with any option above:
  --http               binds 127.0.0.1 port 0 and prints `LISTENING <url>` once it listens; each
                       POSTed request is answered as a server-sent event stream
  --json-response      with --http: answered as one JSON body instead (notifications dropped)
"""

import json
import sys

args = sys.argv[1:]


# What answering one request says, as JSON texts in order (the answer last).
said = []


def send(message):
    said.append(json.dumps(message))


def tool(name):
    return {
        "name": name,
        "description": f"{name} says the text back",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }


def deep_schema(levels):
    # Built as text: a dict nested this deep would not survive json.dumps' recursion.
    inner = '{"type": "string"}'
    return '{"type": "object", "properties": {"v": ' + '{"type": "array", "items": ' * levels + inner + "}" * levels + "}}"


page = 0


def answer(request):
    """The JSON texts that answer `request` (none for a notification or a request left hanging)."""
    global page
    said.clear()
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return []  # a notification
    if method == "initialize":
        if "--no-initialize" in args:
            return []
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "raw-server", "version": "1"},
        }})
    elif method == "tools/list":
        if "--hang-list" in args:
            return []
        if "--page-forever" in args:
            page += 1
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool(f"echo_{page}")], "nextCursor": f"page-{page}"}})
        elif "--describe" in args:
            with open(args[args.index("--describe") + 1], encoding="utf-8") as f:
                payloads = json.load(f)["payloads"]
            tools = [dict(tool(f"t{i}"), title=p, description=p) for i, p in enumerate(payloads)]
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif "--deep-schema" in args:
            levels = int(args[args.index("--deep-schema") + 1])
            said.append('{"jsonrpc": "2.0", "id": %s, "result": {"tools": [%s, {"name": "deep", "description": "nested", "inputSchema": %s}]}}' % (
                json.dumps(rid), json.dumps(tool("echo")), deep_schema(levels)))
        else:
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool("echo")]}})
    elif method == "tools/call":
        token = (request["params"].get("_meta") or {}).get("progressToken")
        if "--progress-flood" in args and token is not None:
            total = int(args[args.index("--progress-flood") + 1])
            for i in range(total):
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i + 1, "total": total}})
        if "--notify-flood" in args:
            for i in range(int(args[args.index("--notify-flood") + 1])):
                send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": f"flood {i}"}})
        text = request["params"].get("arguments", {}).get("text", "")
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})
    return list(said)


def serve_http():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    one_at_a_time = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, status, kind=None, body=b""):
            self.send_response(status)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            with one_at_a_time:
                texts = answer(request)
            if not texts:
                if request.get("id") is None:
                    self.reply(202)
                return  # a request left hanging: the connection stays open
            if "--json-response" in args:
                self.reply(200, "application/json", texts[-1].encode())
            else:
                stream = "".join(f"event: message\ndata: {t}\n\n" for t in texts)
                self.reply(200, "text/event-stream", stream.encode())

        def do_GET(self):
            self.reply(405)

        def do_DELETE(self):
            self.reply(200)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"LISTENING http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if "--http" in args:
    serve_http()
else:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        for text in answer(request):
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
