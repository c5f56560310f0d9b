#!/usr/bin/env python3
"""Hostile text for the rendering corpus test, written straight into an app home's database
(the same rows the app writes; see bench/seed_conversations.py, whose writer this uses).

    python3 tests/e2e/seed_hostile.py --home DIR --payloads FILE

FILE is JSON with a `payloads` list (DOMPurify's own XSS fixtures). Adds one conversation,
"Hostile corpus", whose question, tool calls (their names as cards show them, their results)
and answer (Markdown) carry every payload, and one conversation titled with each payload.
Prints the corpus conversation's id.
"""

import argparse
import json
import os
import sqlite3
import sys
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from seed_conversations import Writer  # noqa: E402

CHUNK = 20  # payloads per tool call


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True)
    parser.add_argument("--payloads", required=True)
    options = parser.parse_args()
    with open(options.payloads, encoding="utf-8") as f:
        payloads = json.load(f)["payloads"]
    db = sqlite3.connect(os.path.join(options.home, "data", "switchboard.db"))
    start = int(time.time() * 1000) - 86_400_000
    with db:
        for i, payload in enumerate(payloads):
            Writer(db, payload, start + i)
        w = Writer(db, "Hostile corpus", start + len(payloads) + 1)
        w.message("user", "\n\n".join(payloads))
        chunks = [payloads[i : i + CHUNK] for i in range(0, len(payloads), CHUNK)]
        calls = [
            {"id": f"call_{n}", "name": "hostile__t0", "arguments": json.dumps({"text": chunk[0]})}
            for n, chunk in enumerate(chunks)
        ]
        answer = w.message("assistant", payloads[0], tool_calls=calls, finish_reason="tool_calls")
        for call, chunk in zip(calls, chunks):
            result = "\n".join(chunk)
            db.execute(
                "INSERT INTO tool_runs (id, conversation_id, message_id, call_id, server, tool, arguments, "
                "decision, decision_scope, started_at, finished_at, is_error, result, display_name) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'allowed', 'once', ?, ?, 0, ?, ?)",
                (
                    str(uuid.uuid4()), w.id, answer, call["id"], chunk[0], chunk[-1], call["arguments"],
                    w.now, w.now + 5,
                    json.dumps({"content": [{"type": "text", "text": result}], "isError": False}),
                    chunk[1] if len(chunk) > 1 else chunk[0],
                ),
            )
            w.message("tool", result, tool_call_id=call["id"], name=call["name"])
        w.message("assistant", "\n\n".join(payloads) + "\n\nEnd of the hostile corpus.", finish_reason="stop")
        w.finish()
    db.close()
    print(w.id)


if __name__ == "__main__":
    main()
