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
  --many N             lists N tools: N - 1 generated ones (`create_invoice_0`, …, each saying the
                       text back) and `get_forecast`, which answers "Sunny in <text>"
  --offset K           with --many: the generated tools are numbered from K (`create_invoice_K`, …)
  --result-bytes N     `echo` answers with N characters ("x"s after the text), for results
                       larger than a transport's default cap
  --odd-names          lists `echo` twice (the second described otherwise), and a tool whose
                       name holds a zero-width space (`read\u200bfile`)

Tools otherwise: echo(text).

Over HTTP instead of stdio (streamable HTTP, no SDK), with any option above:
  --http               binds 127.0.0.1 port 0 and prints `LISTENING <url>` once it listens; each
                       POSTed request is answered as a server-sent event stream
  --json-response      with --http: answered as one JSON body instead (notifications dropped)
  --oauth PAGE         with --http: /mcp wants an OAuth token (401 with a challenge naming its
                       metadata); the authorization server on the same port registers any
                       client, names PAGE as its sign-in page (`-` for its own `/authorize`,
                       which sends the browser straight back with a code) and trades that code
                       for the token
  --step-up            with --oauth: a second tool `write`, which a token signed in without the
                       scope `files:write` is refused with 403 insufficient_scope (a step-up);
                       the authorization server grants what `/authorize` was asked for
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
        elif "--many" in args:
            n = int(args[args.index("--many") + 1])
            offset = int(args[args.index("--offset") + 1]) if "--offset" in args else 0
            verbs = ["create", "list", "delete", "update", "get", "archive", "export", "sync"]
            nouns = ["invoice", "ticket", "user", "order", "file", "report", "alert", "build"]
            tools = []
            for i in range(offset, offset + n - 1):
                verb, noun = verbs[i % 8], nouns[(i // 8) % 8]
                tools.append(dict(tool(f"{verb}_{noun}_{i}"), description=f"{verb.capitalize()}s a {noun} in system {i}"))
            tools.append(dict(tool("get_forecast"), description="Forecasts the weather in a city for the next days"))
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": tools}})
        elif "--odd-names" in args:
            second = dict(tool("echo"), description="a second echo, described otherwise")
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool("echo"), second, tool("read\u200bfile")]}})
        elif "--step-up" in args:
            write = dict(tool("write"), description="write keeps the text (needs files:write)")
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool("echo"), write]}})
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
        if request["params"].get("name") == "write":
            text = f"wrote {text}"
        if request["params"].get("name") == "get_forecast":
            text = f"Sunny in {text}"
        if "--result-bytes" in args:
            size = int(args[args.index("--result-bytes") + 1])
            text = (text + "x" * size)[:size]
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

        def origin(self):
            return f"http://127.0.0.1:{self.server.server_address[1]}"

        def reply_json(self, status, value, headers=()):
            self.send_response(status)
            for name, text in headers:
                self.send_header(name, text)
            body = json.dumps(value).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def signed_out(self):
            """With --oauth, answers a request that lacks a token with 401 and says so."""
            if OAUTH is None or self.scopes() is not None:
                return False
            challenge = f'Bearer resource_metadata="{self.origin()}/.well-known/oauth-protected-resource"'
            self.reply_json(401, {"error": "invalid_token"}, [("WWW-Authenticate", challenge)])
            return True

        def scopes(self):
            """The scopes of the request's token; None without a token this server gave."""
            given = self.headers.get("Authorization", "").removeprefix("Bearer ")
            return GRANTED.get(given)

        def short_of_scope(self, request):
            """With --step-up, answers a `write` call whose token lacks files:write with 403."""
            if "--step-up" not in args or request.get("method") != "tools/call":
                return False
            if request["params"].get("name") != "write" or "files:write" in self.scopes():
                return False
            challenge = (
                'Bearer error="insufficient_scope", scope="files:read files:write", '
                f'resource_metadata="{self.origin()}/.well-known/oauth-protected-resource", '
                'error_description="writing needs files:write"'
            )
            self.reply_json(403, {"error": "insufficient_scope"}, [("WWW-Authenticate", challenge)])
            return True

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if OAUTH is not None and self.path == "/register":
                client = json.loads(body)
                self.reply_json(201, {**client, "client_id": "raw-client"})
                return
            if OAUTH is not None and self.path == "/token":
                from urllib.parse import parse_qs

                form = parse_qs(body.decode())
                code = form.get("code", form.get("refresh_token", [""]))[0]
                scopes = CODES.get(code, "").split()
                token = f"raw-token-{len(GRANTED) + 1}"
                GRANTED[token] = scopes
                CODES[f"refresh-{token}"] = " ".join(scopes)
                self.reply_json(200, {
                    "access_token": token, "token_type": "Bearer", "expires_in": 3600,
                    "refresh_token": f"refresh-{token}", "scope": " ".join(scopes),
                })
                return
            if self.signed_out():
                return
            request = json.loads(body)
            if self.short_of_scope(request):
                return
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
            from urllib.parse import parse_qs, urlencode, urlsplit

            here = self.origin()
            if OAUTH is not None and self.path.startswith("/.well-known/oauth-protected-resource"):
                self.reply_json(200, {"resource": f"{here}/mcp", "authorization_servers": [here]})
            elif OAUTH is not None and self.path.startswith("/.well-known/oauth-authorization-server"):
                page = f"{here}/authorize" if OAUTH == "-" else OAUTH
                self.reply_json(200, {
                    "issuer": here,
                    "authorization_endpoint": page,
                    "token_endpoint": f"{here}/token",
                    "registration_endpoint": f"{here}/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"],
                })
            elif OAUTH is not None and self.path.startswith("/authorize"):
                query = parse_qs(urlsplit(self.path).query)
                code = f"raw-code-{len(CODES) + 1}"
                CODES[code] = query.get("scope", [""])[0]
                back = query["redirect_uri"][0] + "?" + urlencode({"code": code, "state": query["state"][0]})
                self.send_response(302)
                self.send_header("Location", back)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif not self.signed_out():
                self.reply(405)

        def do_DELETE(self):
            self.reply(200)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"LISTENING http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


OAUTH = args[args.index("--oauth") + 1] if "--oauth" in args else None
# What the authorization server gave: each code's scopes (asked for at /authorize), each
# token's scopes.
CODES = {}
GRANTED = {}

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
