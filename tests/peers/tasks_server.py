"""An MCP server whose tools run as tasks (the Tasks extension, `io.modelcontextprotocol/tasks`),
as bare JSON-RPC over stdio (no SDK). A client that declared the extension is answered a
`tools/call` with a task (`resultType: "task"`) and follows it with `tasks/get`; one that did not
gets the tool's result at once, as the extension says.

Tools:
  report(topic)  works for three polls ("step 1 of 3", …), then completes: "report on <topic>"
  confirm(what)  asks the person (an elicitation form inside `input_required`), answered with
                 `tasks/update`, then completes: "<what>: <their answer>"
  forever()      works until cancelled
  slow(topic, seconds)  works for that many seconds of the clock (not polls), then completes:
                 "slow report on <topic>"; what a task that outlives its client looks like
  draft(seconds) works for that many seconds, then asks the client's model to write
                 (`sampling/createMessage` inside `input_required`), which Switchboard never does

Every `tasks/cancel` and `tasks/update` is appended to LOG (the first argument) as a line, so a
test sees what the client sent; so is each task made ("created task-N <tool>").

With `--http` (after LOG) it serves streamable HTTP instead of stdio: it binds 127.0.0.1 port 0,
prints `LISTENING <url>` once it listens, and answers each POSTed request with one JSON body.
Its tasks live as long as it does, whoever asks: a client killed and started again finds them.
"""

import json
import sys
import time
from datetime import datetime, timezone

LOG = sys.argv[1]
HTTP = "--http" in sys.argv[2:]
tasks = {}
declared = False
counter = 0


def note(line):
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(line + "\n")


def now():
    return datetime.now(timezone.utc).isoformat()


def text_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": False}


def task_view(task):
    view = {
        "taskId": task["id"],
        "status": task["status"],
        "createdAt": task["created"],
        "lastUpdatedAt": now(),
        "ttlMs": None,
        "pollIntervalMs": 100,
    }
    if task.get("message"):
        view["statusMessage"] = task["message"]
    return view


def advance(task):
    """What the task is at this poll."""
    if task["status"] in ("completed", "cancelled", "failed"):
        return
    task["polls"] += 1
    name = task["tool"]
    if name == "report":
        if task["polls"] <= 3:
            task["message"] = f"step {task['polls']} of 3"
        else:
            task["status"] = "completed"
            task["message"] = "done"
            task["result"] = text_result(f"report on {task['args'].get('topic', '')}")
    elif name == "confirm":
        if task.get("answer") is None:
            task["status"] = "input_required"
            task["message"] = "waiting for the person"
        else:
            answer = task["answer"]
            content = answer.get("content") or {}
            said = content.get("choice", answer.get("action"))
            task["status"] = "completed"
            task["result"] = text_result(f"{task['args'].get('what', '')}: {said}")
    elif name == "draft":
        if time.monotonic() < task["ends"]:
            task["message"] = "outlining"
        else:
            task["status"] = "input_required"
            task["message"] = "needs the model"
    elif name == "slow":
        left = task["ends"] - time.monotonic()
        if left > 0:
            task["message"] = f"{int(left) + 1} s to go"
        else:
            task["status"] = "completed"
            task["message"] = "done"
            task["result"] = text_result(f"slow report on {task['args'].get('topic', '')}")
    else:
        task["message"] = f"still working ({task['polls']})"


def tool(name, description, properties):
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}}


def answer(request):
    global declared, counter
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        return None
    ok = lambda result: {"jsonrpc": "2.0", "id": rid, "result": result}
    params = request.get("params") or {}
    if method == "initialize":
        extensions = (params.get("capabilities") or {}).get("extensions") or {}
        declared = "io.modelcontextprotocol/tasks" in extensions
        return ok({
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
            "serverInfo": {"name": "tasks-server", "version": "1"},
        })
    if method == "tools/list":
        return ok({"tools": [
            tool("report", "Writes a report on a topic; takes a while", {"topic": {"type": "string"}}),
            tool("confirm", "Asks the person to confirm something, then says what they chose", {"what": {"type": "string"}}),
            tool("forever", "Works until it is cancelled", {}),
            tool("slow", "Writes a report that takes some seconds", {"topic": {"type": "string"}, "seconds": {"type": "number"}}),
            tool("draft", "Outlines for some seconds, then asks the client's model to write (sampling)", {"seconds": {"type": "number"}}),
        ]})
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if not declared:
            return ok(text_result(f"{name} ran at once: the client did not declare tasks"))
        counter += 1
        task = {"id": f"task-{counter}", "tool": name, "args": args, "status": "working", "polls": 0,
                "created": now(), "message": "queued",
                "ends": time.monotonic() + float(args.get("seconds", 0) or 0)}
        tasks[task["id"]] = task
        note(f"created {task['id']} {name}")
        return ok(dict(task_view(task), resultType="task"))
    if method == "tasks/get":
        task = tasks.get(params.get("taskId"))
        if task is None:
            return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "no such task"}}
        advance(task)
        view = dict(task_view(task), resultType="complete")
        if task["status"] == "input_required" and task["tool"] == "draft":
            view["inputRequests"] = {"draft": {"method": "sampling/createMessage", "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Write the draft"}}],
                "maxTokens": 100,
            }}}
        elif task["status"] == "input_required":
            view["inputRequests"] = {"choice": {"method": "elicitation/create", "params": {
                "mode": "form",
                "message": f"Confirm {task['args'].get('what', '')}?",
                "requestedSchema": {"type": "object", "properties": {
                    "choice": {"type": "string", "enum": ["yes", "no"], "description": "Your choice"}}, "required": ["choice"]},
            }}}
        if task["status"] == "completed":
            view["result"] = task["result"]
        return ok(view)
    if method == "tasks/update":
        task = tasks.get(params.get("taskId"))
        note("update " + json.dumps(params.get("inputResponses"), sort_keys=True))
        if task is not None:
            task["answer"] = (params.get("inputResponses") or {}).get("choice") or {}
            task["status"] = "working"
        return ok({"resultType": "complete"})
    if method == "tasks/cancel":
        task = tasks.get(params.get("taskId"))
        note("cancel " + str(params.get("taskId")))
        if task is not None:
            task["status"] = "cancelled"
        return ok({"resultType": "complete"})
    if method == "ping":
        return ok({})
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no method {method}"}}


def serve_http():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    one_at_a_time = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, status, body=b""):
            self.send_response(status)
            if body:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                request = json.loads(body)
            except ValueError:
                self.reply(400)
                return
            with one_at_a_time:
                reply = answer(request)
            if reply is None:
                self.reply(202)
            else:
                self.reply(200, json.dumps(reply).encode())

        def do_GET(self):
            self.reply(405)

        def do_DELETE(self):
            self.reply(200)

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"LISTENING http://127.0.0.1:{server.server_address[1]}/mcp", flush=True)
    server.serve_forever()


if HTTP:
    serve_http()
else:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        reply = answer(request)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
