#!/usr/bin/env python3
"""Large conversations for bench/conversation_view.mjs, written straight into an app home's database.

    python3 bench/seed_conversations.py --home DIR

DIR is a SWITCHBOARD_HOME whose database exists already (any command that opens the store
creates it, e.g. `SWITCHBOARD_HOME=DIR switchboard provider add ...`) and that no app is using
(the script takes the app's own lock, data/switchboard.lock, while it writes). It adds four
conversations, rows shaped as the app writes them (src-tauri/core/src/store/messages.rs and
tool_loop.rs; schema in migrations.rs):

- "Ten thousand messages": exactly 10,000 messages. Turns of a user question and an answer of a
  few hundred characters of Markdown (paragraphs, a list with inline code, often a fenced code
  block); every fifth turn the model first calls a tool (an answer with one tool call, the tool
  message with a result of a few KB, a tool_runs row), then answers; every tenth turn's result
  also carries a PNG image (its card shows it). bench/conversation_view.mjs then makes two
  branches near its end through the command line (an answer asked for again, a question
  edited) and shows the first versions again, so the chat opens with two switchers.
- "Two hundred tool cards": a question, one answer making 200 tool calls, their 200 tool
  messages and tool_runs rows, and a closing answer.
- "A short chat": three turns (one with three tool calls) that fill the window: what opening
  any conversation costs, the reference for the two above.
- "Empty": no messages.

The content is the same on every run (a fixed random seed); ids are fresh uuid4s. Prints JSON
naming each conversation's id and title and, for those with messages, `last_words`: the
text that ends their newest answer (what the bench waits for on screen); for the ten thousand,
also `last_answer_id` and `questions` (the ids of its last three questions).
"""

import argparse
import base64
import fcntl
import json
import os
import random
import sqlite3
import sys
import time
import uuid
import zlib

SCHEMA_VERSION = 11  # migrations.rs: the last column this script writes (tool_runs.rich) came in migration 11
MODEL = "gpt-4o"
TOOLS = [  # (server, tool, the name shown on the card)
    ("everything", "echo", "everything · Echo"),
    ("files", "read_file", "files · Read File"),
    ("search", "web_search", "search · Web Search"),
]
WORDS = (
    "the a request handler returns value cache index query table column stream buffer "
    "client server token session config file path error retry timeout worker queue batch "
    "schema migration record field parser render layout frame thread lock channel event "
    "signal process memory page window list item result response header body status"
).split()
IDENTIFIERS = ["open_store", "parse_args", "read_config", "send_batch", "retry_after", "next_page", "flush_queue"]
LAST_WORDS = {
    "ten_thousand": "That is the newest answer of the ten-thousand-message conversation.",
    "tool_cards": "That is the closing answer after two hundred tool calls.",
    "short": "That is the newest answer of the short conversation.",
}


def sentence(rng, low=8, high=18):
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def question(rng, n):
    return f"Question {n}: how does the {rng.choice(WORDS)} {rng.choice(WORDS)} work when {sentence(rng, 4, 9).lower()}"


def answer(rng, n):
    parts = [f"{sentence(rng)} {sentence(rng)}"]
    parts.append(
        "\n".join(f"- `{rng.choice(IDENTIFIERS)}()` {sentence(rng, 4, 9).lower()}" for _ in range(3))
    )
    if rng.random() < 0.6:
        name = rng.choice(IDENTIFIERS)
        parts.append(
            f"```python\ndef {name}(value):\n    result = [v * {n % 97} for v in value]\n"
            f"    return sorted(result)[:{rng.randint(2, 9)}]\n```"
        )
    parts.append(sentence(rng, 6, 14))
    return "\n\n".join(parts)


def png(width, height, rgb):
    """A PNG of one colour, base64: the image a tool's result carries."""
    def chunk(kind, data):
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(data).decode()


IMAGE = png(240, 160, (70, 130, 180))


def tool_result(rng, n):
    """A result of a few KB: a JSON listing, as many tools return."""
    rows = [
        {"line": i, "name": f"{rng.choice(IDENTIFIERS)}_{n}_{i}", "text": sentence(rng, 6, 12)}
        for i in range(rng.randint(25, 45))
    ]
    return json.dumps({"items": rows, "total": len(rows)}, indent=1)


class Writer:
    """Appends rows to one conversation as the store does: seq from 1, times in ms."""

    def __init__(self, db, title, start_ms):
        self.db = db
        self.id = str(uuid.uuid4())
        self.seq = 0
        self.now = start_ms
        db.execute(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (self.id, title, start_ms, start_ms),
        )

    def message(self, role, content, tool_calls=None, tool_call_id=None, name=None, finish_reason=None):
        self.seq += 1
        self.now += 1500
        message_id = str(uuid.uuid4())
        assistant = role == "assistant"
        self.db.execute(
            "INSERT INTO messages (id, conversation_id, seq, role, content, created_at, tool_calls, "
            "tool_call_id, name, finish_reason, status, provider, model, input_tokens, output_tokens, "
            "is_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'complete', ?, ?, ?, ?, 0)",
            (
                message_id, self.id, self.seq, role, content, self.now,
                json.dumps(tool_calls) if tool_calls is not None else None,
                tool_call_id, name, finish_reason,
                "Mock" if assistant else None, MODEL if assistant else None,
                1200 + self.seq if assistant else None, len(content or "") // 4 if assistant else None,
            ),
        )
        return message_id

    def tool_calls(self, rng, count, content=None, image=False):
        """An answer that calls `count` tools, then each call's tool message and tool_runs row
        (with `image`, each result carries IMAGE after its text)."""
        calls = []
        for _ in range(count):
            server, tool, shown = rng.choice(TOOLS)
            arguments = json.dumps({"query": sentence(rng, 3, 6), "limit": rng.randint(5, 50)})
            calls.append(({"id": f"call_{uuid.uuid4().hex[:24]}", "name": f"{server}__{tool}", "arguments": arguments}, server, tool, shown))
        answer_id = self.message("assistant", content, tool_calls=[c for c, *_ in calls], finish_reason="tool_calls")
        for call, server, tool, shown in calls:
            result = tool_result(rng, self.seq)
            parts = [{"type": "text", "text": result}]
            if image:
                parts.append({"type": "image", "data": IMAGE, "mimeType": "image/png"})
            started = self.now + 10
            finished = started + rng.randint(20, 900)
            self.db.execute(
                "INSERT INTO tool_runs (id, conversation_id, message_id, call_id, server, tool, arguments, "
                "decision, decision_scope, started_at, finished_at, is_error, result, display_name, rich) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 'allowed', 'once', ?, ?, 0, ?, ?, ?)",
                (
                    str(uuid.uuid4()), self.id, answer_id, call["id"], server, tool, call["arguments"],
                    started, finished, json.dumps({"content": parts, "isError": False}), shown, int(image),
                ),
            )
            self.message("tool", result, tool_call_id=call["id"], name=call["name"])

    def finish(self):
        self.db.execute("UPDATE conversations SET updated_at = ? WHERE id = ?", (self.now, self.id))


def ten_thousand(db, rng, start_ms):
    w = Writer(db, "Ten thousand messages", start_ms)
    total, turn, questions, last = 10_000, 0, [], None
    while w.seq < total:
        left = total - w.seq
        turn += 1
        questions.append(w.message("user", question(rng, turn)))
        # A turn with a call takes four messages; the last turn is a plain one whatever the count.
        if turn % 5 == 0 and left > 4:
            w.tool_calls(rng, 1, image=turn % 10 == 0)
        text = answer(rng, turn)
        last = w.message("assistant", f"{text}\n\n{LAST_WORDS['ten_thousand']}" if w.seq + 1 == total else text, finish_reason="stop")
    w.finish()
    return {"id": w.id, "title": "Ten thousand messages", "last_words": LAST_WORDS["ten_thousand"],
            "last_answer_id": last, "questions": questions[-3:]}


def tool_cards(db, rng, start_ms):
    w = Writer(db, "Two hundred tool cards", start_ms)
    w.message("user", "Look up each of the two hundred entries in the index, one call each.")
    w.tool_calls(rng, 200, content="I will look them up one by one.")
    w.message("assistant", f"{answer(rng, 1)}\n\n{LAST_WORDS['tool_cards']}", finish_reason="stop")
    w.finish()
    return {"id": w.id, "title": "Two hundred tool cards", "last_words": LAST_WORDS["tool_cards"]}


def short(db, rng, start_ms):
    w = Writer(db, "A short chat", start_ms)
    for turn in range(1, 4):
        w.message("user", question(rng, turn))
        if turn == 2:
            w.tool_calls(rng, 3, content="I will look these up first.")
        text = answer(rng, turn)
        w.message("assistant", f"{text}\n\n{LAST_WORDS['short']}" if turn == 3 else text, finish_reason="stop")
    w.finish()
    return {"id": w.id, "title": "A short chat", "last_words": LAST_WORDS["short"]}


def empty(db, start_ms):
    w = Writer(db, "Empty", start_ms)
    return {"id": w.id, "title": "Empty"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="the SWITCHBOARD_HOME to add the conversations to")
    home = parser.parse_args().home
    db_path = os.path.join(home, "data", "switchboard.db")
    if not os.path.exists(db_path):
        sys.exit(f"{db_path} does not exist: run a command that opens the store first (e.g. provider add)")
    with open(os.path.join(home, "data", "switchboard.lock"), "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            sys.exit(f"an app is running on {home}: stop it first")
        db = sqlite3.connect(db_path)
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version < SCHEMA_VERSION:
            sys.exit(f"{db_path} has schema version {version}; this script writes version {SCHEMA_VERSION}")
        rng = random.Random(20261123)
        start = int(time.time() * 1000) - 30 * 86_400_000
        with db:
            seeded = {
                "ten_thousand": ten_thousand(db, rng, start),
                "tool_cards": tool_cards(db, rng, start + 1_000),
                "short": short(db, rng, start + 2_000),
                "empty": empty(db, start + 3_000),
            }
        db.close()
    print(json.dumps(seeded))


if __name__ == "__main__":
    main()
