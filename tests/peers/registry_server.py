"""A scripted MCP Registry (the official registry's v0.1 API) over the recorded entries of
tests/fixtures/registry/servers.json, for the host's registry tests; never the network.

  GET /v0.1/servers?search=TEXT&cursor=C&limit=N&version=latest
      the entries whose name holds TEXT (any case), `limit` a page (default 30, at most 100),
      `metadata.nextCursor` naming the next page while there is one
  GET /v0.1/servers/{name}/versions/{version}   one entry (`latest` for the newest)

Binds 127.0.0.1 on the port the system gives and prints `registry: listening on
127.0.0.1:PORT` on stderr. A search for `broken` is answered 500, one for `garbled` with text
that is not JSON: a registry failing as registries do.

The icons the recorded entries name are served from here (their recorded addresses would reach
the network): each `icons[].src` is answered as `http://127.0.0.1:PORT/icons/<file name>`, a
small PNG.
"""

import copy
import json
import pathlib
import struct
import sys
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURE = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "registry" / "servers.json"
ENTRIES = json.loads(FIXTURE.read_text(encoding="utf-8"))


def png(width=16, height=16, rgb=(79, 70, 229)):
    """A plain square PNG of one colour."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


ICON = png()


def served(entry, port):
    """The entry with its icons served from here."""
    entry = copy.deepcopy(entry)
    for icon in entry["server"].get("icons", []):
        icon["src"] = f"http://127.0.0.1:{port}/icons/{icon['src'].rsplit('/', 1)[-1]}"
    return entry


class Registry(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body, kind="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/v0.1/servers":
            text = query.get("search", "").lower()
            if text == "broken":
                return self.answer(500, {"title": "Internal Server Error", "status": 500, "detail": "the database is down"})
            if text == "garbled":
                return self.answer(200, b"<html>not json</html>", "text/html")
            found = [e for e in ENTRIES if text in e["server"]["name"].lower()]
            limit = max(1, min(100, int(query.get("limit", "30"))))
            start = int(query.get("cursor", "0") or "0")
            page = [served(e, self.server.server_address[1]) for e in found[start:start + limit]]
            metadata = {"count": len(page)}
            if start + limit < len(found):
                metadata["nextCursor"] = str(start + limit)
            return self.answer(200, {"servers": page, "metadata": metadata})
        prefix = "/v0.1/servers/"
        if url.path.startswith(prefix) and "/versions/" in url.path:
            name, version = url.path[len(prefix):].split("/versions/", 1)
            name, version = unquote(name), unquote(version)
            for entry in ENTRIES:
                server = entry["server"]
                if server["name"] == name and version in ("latest", server["version"]):
                    return self.answer(200, served(entry, self.server.server_address[1]))
            return self.answer(404, {"title": "Not Found", "status": 404, "detail": "Server not found"})
        if url.path.startswith("/icons/"):
            return self.answer(200, ICON, "image/png")
        self.answer(404, {"title": "Not Found", "status": 404})

    def log_message(self, *_):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Registry)
print(f"registry: listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
