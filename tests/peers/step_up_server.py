"""A streamable HTTP MCP server (Python SDK `mcp`) that asks for more permission on purpose, for
the host's step-up tests: `read()` answers; `write()` is refused with HTTP 403 and
`WWW-Authenticate: Bearer error="insufficient_scope", scope="files:read files:write"`, as a
server does when the token lacks a scope a tool needs. Binds 127.0.0.1 on the port the
system gives and prints `step-up: listening on 127.0.0.1:PORT` on stderr.
"""

import json
import socket
import sys

import uvicorn

from mcp.server.mcpserver import MCPServer

server = MCPServer("step-up")


@server.tool()
def read() -> str:
    """Reads something anyone may read."""
    return "read: fine"


@server.tool()
def write(text: str) -> str:
    """Writes something (needs the files:write scope, which nobody has here)."""
    return f"wrote {text}"


def refusing(app):
    """The app, but a `tools/call` of `write` is answered 403 insufficient_scope."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await app(scope, receive, send)
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            request = json.loads(body)
        except ValueError:
            request = {}
        if request.get("method") == "tools/call" and request.get("params", {}).get("name") == "write":
            port = scope["server"][1]
            challenge = (
                'Bearer error="insufficient_scope", scope="files:read files:write", '
                f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource"'
            )
            await send(
                {
                    "type": "http.response.start",
                    "status": 403,
                    "headers": [(b"www-authenticate", challenge.encode()), (b"content-type", b"text/plain")],
                }
            )
            return await send({"type": "http.response.body", "body": b"more scope needed"})
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return wrapped


sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sys.stderr.write(f"step-up: listening on 127.0.0.1:{sock.getsockname()[1]}\n")
sys.stderr.flush()
config = uvicorn.Config(refusing(server.streamable_http_app(json_response=True)), log_level="warning")
uvicorn.Server(config).run(sockets=[sock])
