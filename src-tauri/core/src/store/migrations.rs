//! The schema, as an ordered list of migrations tracked in SQLite's `user_version`.
//! Append new migrations; never edit one that has shipped.

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

const MIGRATIONS: &[&str] = &[
    // 1: the ground every later feature builds on.
    r#"
CREATE TABLE conversations (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    provider      TEXT,
    model         TEXT,
    auto_approve  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_by_recency ON conversations(updated_at DESC, id DESC);

CREATE TABLE messages (
    id             TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    seq            INTEGER NOT NULL,
    role           TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system', 'tool')),
    content        TEXT,
    created_at     INTEGER NOT NULL,
    tool_calls     TEXT CHECK (tool_calls IS NULL OR json_valid(tool_calls)),
    tool_call_id   TEXT,
    name           TEXT,
    finish_reason  TEXT,
    status         TEXT NOT NULL DEFAULT 'complete'
                   CHECK (status IN ('streaming', 'complete', 'interrupted', 'error')),
    provider       TEXT,
    model          TEXT,
    input_tokens   INTEGER,
    output_tokens  INTEGER,
    reasoning      TEXT,
    error          TEXT,
    UNIQUE (conversation_id, seq)
);

CREATE TABLE tool_runs (
    id               TEXT PRIMARY KEY,
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    message_id       TEXT REFERENCES messages(id) ON DELETE CASCADE,
    call_id          TEXT NOT NULL,
    server           TEXT NOT NULL,
    tool             TEXT NOT NULL,
    arguments        TEXT NOT NULL,
    decision         TEXT CHECK (decision IN ('allowed', 'denied')),
    decision_scope   TEXT CHECK (decision_scope IN ('once', 'conversation', 'always', 'trusted', 'auto_approve', 'policy')),
    deny_reason      TEXT,
    started_at       INTEGER,
    finished_at      INTEGER,
    is_error         INTEGER NOT NULL DEFAULT 0,
    result           TEXT
);
CREATE INDEX tool_runs_by_conversation ON tool_runs(conversation_id, started_at);
CREATE INDEX tool_runs_by_call ON tool_runs(call_id);

CREATE TABLE conversation_tools (
    conversation_id  TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    server           TEXT NOT NULL,
    tool             TEXT NOT NULL DEFAULT '',
    enabled          INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, server, tool)
);

CREATE TABLE providers (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE COLLATE NOCASE,
    kind           TEXT NOT NULL,
    base_url       TEXT NOT NULL,
    default_model  TEXT,
    created_at     INTEGER NOT NULL
);
"#,
    // 2: MCP servers the person approved to start, tied to what they run (issue 4). Kept here,
    // not in mcp.json, so an edited file cannot approve itself.
    r#"
CREATE TABLE mcp_approvals (
    server       TEXT PRIMARY KEY COLLATE NOCASE,
    fingerprint  TEXT NOT NULL,
    approved_at  INTEGER NOT NULL
);
"#,
    // 3: each MCP tool as it was when first seen (or last accepted): a tool whose description
    // or schema changes later is held back until the person reviews the change (issue 4).
    r#"
CREATE TABLE mcp_tool_pins (
    server        TEXT NOT NULL COLLATE NOCASE,
    tool          TEXT NOT NULL,
    hash          TEXT NOT NULL,
    description   TEXT NOT NULL,
    input_schema  TEXT NOT NULL CHECK (json_valid(input_schema)),
    pinned_at     INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
);
"#,
    // 4: the tool loop (issue 5). A tool message says whether it is an error result; standing
    // approvals of a tool, for one conversation (`conversation_id`) or for all (`''`), which a
    // deleted conversation takes with it; a conversation in auto-approve already has its column.
    r#"
ALTER TABLE messages ADD COLUMN is_error INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_runs ADD COLUMN display_name TEXT;

CREATE TABLE tool_approvals (
    server           TEXT NOT NULL COLLATE NOCASE,
    tool             TEXT NOT NULL,
    conversation_id  TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    PRIMARY KEY (server, tool, conversation_id)
);
CREATE TRIGGER tool_approvals_follow_conversations AFTER DELETE ON conversations
BEGIN
    DELETE FROM tool_approvals WHERE conversation_id = old.id;
END;
"#,
    // 5: the tool switches a new conversation starts with (issue 5), in the shape of
    // `conversation_tools`: a server's switch (`tool` = '') or one tool's; anything not listed
    // is on.
    r#"
CREATE TABLE default_tools (
    server   TEXT NOT NULL,
    tool     TEXT NOT NULL DEFAULT '',
    enabled  INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
);
"#,
    // 6: a call the person ran again from a failed call's Retry names the call it retried (its
    // answer and call id), and a call keeps the model's few words on what it did when Settings
    // asked for them (issue 5).
    r#"
ALTER TABLE tool_runs ADD COLUMN retry_of TEXT;
ALTER TABLE tool_runs ADD COLUMN description TEXT;
ALTER TABLE tool_runs ADD COLUMN retry_of_message TEXT;
"#,
    // 7: a tool's title is part of what is pinned (issue 15): people read it in the approval
    // dialog, so a server may not rename a tool unseen. Pins made before have none.
    r#"
ALTER TABLE mcp_tool_pins ADD COLUMN title TEXT;
"#,
    // 8: the process writing an answer that is still streaming (issue 15; see `writers`), so
    // that any process opening the home can tell one cut off by a crash from one under way.
    r#"
ALTER TABLE messages ADD COLUMN writer TEXT;
"#,
    // 9: each conversation's system prompt (issue 16), copied from Settings' default when it is
    // made and edited from its header; conversations made before have none.
    r#"
ALTER TABLE conversations ADD COLUMN system_prompt TEXT NOT NULL DEFAULT '';
"#,
    // 10: full-text search over what people read (issue 16): the text of questions, answers and
    // tool results, indexed from `messages` itself (external content: nothing stored twice) and
    // kept in step by triggers. Keyed on the messages' rowid, which nothing here renumbers (the
    // app never runs VACUUM; `INSERT INTO message_search(message_search) VALUES('rebuild')`
    // re-indexes if anything ever does). Words match without their accents ("cafe" finds "café").
    r#"
CREATE VIRTUAL TABLE message_search USING fts5(
    content,
    content = 'messages',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO message_search(rowid, content)
    SELECT rowid, content FROM messages WHERE content IS NOT NULL AND role <> 'system';
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
    WHEN new.content IS NOT NULL AND new.role <> 'system'
BEGIN
    INSERT INTO message_search(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER message_search_delete AFTER DELETE ON messages
    WHEN old.content IS NOT NULL AND old.role <> 'system'
BEGIN
    INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
-- One trigger, in this order: SQLite runs a table's triggers newest first, and the old text
-- must leave the index before the new one comes in.
CREATE TRIGGER message_search_update AFTER UPDATE OF content ON messages
BEGIN
    INSERT INTO message_search(message_search, rowid, content)
        SELECT 'delete', old.rowid, old.content WHERE old.content IS NOT NULL AND old.role <> 'system';
    INSERT INTO message_search(rowid, content)
        SELECT new.rowid, new.content WHERE new.content IS NOT NULL AND new.role <> 'system';
END;
"#,
    // 11: whether a call's result has more than text for a person to see (issue 16): images,
    // audio, resources, links or structured content, which its card then shows. Set when the
    // call is recorded; worked out here for the calls recorded before.
    r#"
ALTER TABLE tool_runs ADD COLUMN rich INTEGER NOT NULL DEFAULT 0;
UPDATE tool_runs SET rich = 1 WHERE json_valid(result) AND (
    coalesce(json_type(result, '$.structuredContent'), 'null') <> 'null'
    OR EXISTS (SELECT 1 FROM json_each(result, '$.content')
               WHERE coalesce(json_extract(value, '$.type'), '') <> 'text')
);
"#,
    // 12: branches (issue 16): a question edited and sent again, or an answer asked for again,
    // starts a new branch and keeps the old one whole (see `branches`). A row a branch; the
    // row without a snapshot is the branch shown, whose messages are in `messages`.
    r#"
CREATE TABLE message_branches (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    after_seq       INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    snapshot        TEXT,
    PRIMARY KEY (conversation_id, after_seq, position)
);
"#,
    // 13: what recovery after a crash looks for (answers left streaming, calls left running)
    // is found through these, not by reading every message: every process that opens the
    // home runs it, and a home of 100 000 messages took ~0.4 s to scan.
    r#"
CREATE INDEX messages_streaming ON messages(writer) WHERE status = 'streaming';
CREATE INDEX tool_runs_unfinished ON tool_runs(message_id)
    WHERE finished_at IS NULL AND started_at IS NOT NULL;
"#,
    // 14: files attached to a message (issue 17): a JSON list of their records; the bytes are
    // files named by their SHA-256 under the data folder's `attachments/`.
    r#"
ALTER TABLE messages ADD COLUMN attachments TEXT
    CHECK (attachments IS NULL OR json_valid(attachments));

-- What the person said of one model of a provider: whether it takes images (NULL: they did
-- not say, and the model's family decides).
CREATE TABLE provider_models (
    provider_id   TEXT NOT NULL REFERENCES providers(id) ON DELETE CASCADE,
    model         TEXT NOT NULL,
    takes_images  INTEGER,
    PRIMARY KEY (provider_id, model)
);
"#,
    // 15: what a provider's model list says of a model's images (OpenRouter says), used when
    // the person has not said.
    r#"
ALTER TABLE provider_models ADD COLUMN listed_images INTEGER;
"#,
    // 16: what models cost (issue 18). Prices are JSON `Price`s (pico-dollars per token): the
    // person's word, and what the provider's list says; an answer's cost in pico-dollars; and
    // every request a model answered, kept after its conversation is gone (the Usage page).
    r#"
ALTER TABLE provider_models ADD COLUMN price TEXT;
ALTER TABLE provider_models ADD COLUMN listed_price TEXT;
ALTER TABLE messages ADD COLUMN cost_pico INTEGER;
CREATE TABLE usage (
    id               INTEGER PRIMARY KEY,
    at               INTEGER NOT NULL,
    conversation_id  TEXT,
    message_id       TEXT,
    provider         TEXT NOT NULL,
    model            TEXT NOT NULL,
    purpose          TEXT NOT NULL,
    input_tokens     INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    cost_pico        INTEGER
);
CREATE INDEX usage_at ON usage (at);
CREATE INDEX usage_conversation ON usage (conversation_id);
"#,
    // 17: profiles (issue 18): a name, a system prompt, a model, the loop's limits (NULL: the
    // Settings value) and a tool set (switches as a conversation's: anything not listed is on);
    // at most one is the default a new conversation starts from. A conversation names the
    // profile it follows, if any; deleting the profile leaves the conversation as it is. And
    // the input tokens a request read from the provider's cache; and lanes of comparisons.
    r#"
CREATE TABLE profiles (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL,
    system_prompt        TEXT NOT NULL DEFAULT '',
    provider             TEXT,
    model                TEXT,
    max_rounds           INTEGER,
    tool_timeout_secs    INTEGER,
    run_time_limit_secs  INTEGER,
    is_default           INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    updated_at           INTEGER NOT NULL
);
CREATE UNIQUE INDEX profiles_by_name ON profiles (name COLLATE NOCASE);
CREATE UNIQUE INDEX profiles_one_default ON profiles (is_default) WHERE is_default = 1;
CREATE TABLE profile_tools (
    profile_id  TEXT NOT NULL REFERENCES profiles(id) ON DELETE CASCADE,
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL DEFAULT '',
    enabled     INTEGER NOT NULL,
    PRIMARY KEY (profile_id, server, tool)
);
ALTER TABLE conversations ADD COLUMN profile_id TEXT REFERENCES profiles(id) ON DELETE SET NULL;
-- Of a request's input tokens, those the provider read from its prompt cache (priced apart).
ALTER TABLE usage ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
-- A lane: a hidden copy of a conversation in which one model of a comparison answers, folded
-- back into the conversation as a branch when the comparison ends.
ALTER TABLE conversations ADD COLUMN lane_of TEXT REFERENCES conversations(id) ON DELETE CASCADE;
-- The process (see store::writers) whose comparison a lane is: only a lane whose process is
-- gone is folded by another.
ALTER TABLE conversations ADD COLUMN lane_writer TEXT;
CREATE INDEX conversations_lanes ON conversations (lane_of) WHERE lane_of IS NOT NULL;
-- At a comparison, the model that wrote each branch ("Provider · model").
ALTER TABLE message_branches ADD COLUMN model TEXT;
"#,
    // 18: what a conversation's composer holds until it is sent (see `drafts`), so a message
    // half written outlives the window: a row only while there is something.
    r#"
CREATE TABLE drafts (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
    draft           TEXT NOT NULL CHECK (json_valid(draft)),
    updated_at      INTEGER NOT NULL
);
"#,
    // 19: search finds words in the branches not shown too (an answer asked for again, the
    // question before an edit). Their messages live in snapshots (see `branches`), so they are
    // indexed apart: `branch_search` holds them (with what a hit shows), and triggers only mark
    // a conversation whose kept branches changed; the next search re-reads its snapshots
    // (`search::refresh_branch_index`) before it looks. Every way a snapshot changes is caught,
    // and none pays for indexing at the moment it branches.
    r#"
CREATE VIRTUAL TABLE branch_search USING fts5(
    content,
    conversation_id UNINDEXED,
    message_id UNINDEXED,
    role UNINDEXED,
    created_at UNINDEXED,
    seq UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TABLE branch_search_stale (conversation_id TEXT PRIMARY KEY) WITHOUT ROWID;
INSERT OR IGNORE INTO branch_search_stale
    SELECT DISTINCT conversation_id FROM message_branches WHERE snapshot IS NOT NULL;
CREATE TRIGGER branch_search_kept AFTER INSERT ON message_branches WHEN new.snapshot IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO branch_search_stale VALUES (new.conversation_id);
END;
CREATE TRIGGER branch_search_changed AFTER UPDATE OF snapshot ON message_branches
BEGIN
    INSERT OR IGNORE INTO branch_search_stale VALUES (new.conversation_id);
END;
CREATE TRIGGER branch_search_gone AFTER DELETE ON message_branches WHEN old.snapshot IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO branch_search_stale VALUES (old.conversation_id);
END;
"#,
    // 20: an answer is indexed for search once it stops streaming, not at each checkpoint. The
    // loop writes a growing answer's whole text every 50 ms, and each write took the old text
    // out of the index and put the new one in: for a long answer, tens of kilobytes tokenised
    // twice, twenty times a second, and index segments to merge (a burst of 46 ms of CPU, a
    // frame the window missed, in the stream benchmark: BENCHMARKS.md). Search finds an answer
    // when it is complete, stopped, failed or interrupted (recovery after a crash marks it so).
    // The answers streaming now leave the index first, as the new triggers would have kept it.
    r#"
DROP TRIGGER message_search_insert;
DROP TRIGGER message_search_delete;
DROP TRIGGER message_search_update;
INSERT INTO message_search(message_search, rowid, content)
    SELECT 'delete', rowid, content FROM messages
    WHERE status = 'streaming' AND content IS NOT NULL AND role <> 'system';
CREATE TRIGGER message_search_insert AFTER INSERT ON messages
    WHEN new.content IS NOT NULL AND new.role <> 'system' AND new.status <> 'streaming'
BEGIN
    INSERT INTO message_search(rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER message_search_delete AFTER DELETE ON messages
    WHEN old.content IS NOT NULL AND old.role <> 'system' AND old.status <> 'streaming'
BEGIN
    INSERT INTO message_search(message_search, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
-- One trigger, in this order: SQLite runs a table's triggers newest first, and the old text
-- must leave the index before the new one comes in. A checkpoint of a streaming answer
-- (streaming before and after) does nothing here.
CREATE TRIGGER message_search_update AFTER UPDATE OF content, status ON messages
    WHEN old.status <> 'streaming' OR new.status <> 'streaming'
BEGIN
    INSERT INTO message_search(message_search, rowid, content)
        SELECT 'delete', old.rowid, old.content
        WHERE old.content IS NOT NULL AND old.role <> 'system' AND old.status <> 'streaming';
    INSERT INTO message_search(rowid, content)
        SELECT new.rowid, new.content
        WHERE new.content IS NOT NULL AND new.role <> 'system' AND new.status <> 'streaming';
END;
"#,
    // 21: a tool's pin keeps its annotations (`readOnlyHint`, `destructiveHint`, …), so that a
    // change to them alone is shown, not just held back (issue 54). NULL: pinned before.
    r#"
ALTER TABLE mcp_tool_pins ADD COLUMN annotations TEXT
    CHECK (annotations IS NULL OR json_valid(annotations));
"#,
    // 22: a call the model did not ask for — an MCP App's, from its tool card — is recorded
    // with the conversation's calls, saying who asked (issue 54). NULL: the model asked.
    r#"
ALTER TABLE tool_runs ADD COLUMN asked_by TEXT;
"#,
    // 23: each model's window in tokens (issue 55), by whose word: the person's, one learned
    // from the provider's refusal of a request over it, and the provider's model list's.
    r#"
ALTER TABLE provider_models ADD COLUMN window_person INTEGER CHECK (window_person IS NULL OR window_person > 0);
ALTER TABLE provider_models ADD COLUMN window_learned INTEGER CHECK (window_learned IS NULL OR window_learned > 0);
ALTER TABLE provider_models ADD COLUMN window_listed INTEGER CHECK (window_listed IS NULL OR window_listed > 0);
"#,
    // 24: summaries of a conversation's earlier messages (issue 55), made when its history no
    // longer fits the model's window: the messages stay; the model reads the newest summary
    // whose last message is still in the conversation, then the messages after it. And what
    // the conversation's model was last given, in tokens (its header says it).
    r#"
CREATE TABLE summaries (
    id                  TEXT PRIMARY KEY,
    conversation_id     TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    through_message_id  TEXT NOT NULL,
    text                TEXT NOT NULL,
    summarised          INTEGER NOT NULL,
    left_out            INTEGER NOT NULL DEFAULT 0,
    provider            TEXT,
    model               TEXT,
    created_at          INTEGER NOT NULL
);
CREATE INDEX summaries_by_conversation ON summaries(conversation_id, created_at);
ALTER TABLE conversations ADD COLUMN context_use TEXT CHECK (context_use IS NULL OR json_valid(context_use));
"#,
    // 25: which tools an answer's request offered, when the model was given a choice of the
    // conversation's tools and a search for the rest (issue 55): each round's record of it.
    // No row: every tool switched on was offered. Kept by message id without a reference to
    // the row: a branch set aside and shown again puts its messages back with the same ids
    // (a record of a message gone is never read: it is read joined to its message). And the
    // blocks of the provider's own search; and a model that refused that search.
    r#"
CREATE TABLE tool_offers (
    message_id      TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    offered         TEXT NOT NULL CHECK (json_valid(offered)),
    of_tools        INTEGER NOT NULL,
    why             TEXT NOT NULL
);
CREATE INDEX tool_offers_by_conversation ON tool_offers(conversation_id);
-- The blocks of an answer its provider ran itself (Anthropic's tool search and its result),
-- given back with the answer in later requests: the tools they found stay loaded.
ALTER TABLE messages ADD COLUMN server_blocks TEXT
    CHECK (server_blocks IS NULL OR json_valid(server_blocks));
ALTER TABLE provider_models ADD COLUMN refused_tool_search INTEGER;
"#,
    r#"
-- Whether a conversation is kept when it is left with nothing in it: 0 for one just made
-- (New), 1 once the person named it or wrote its system prompt; a conversation with a message
-- or a draft is kept whatever this says. Those made before are kept.
ALTER TABLE conversations ADD COLUMN kept INTEGER NOT NULL DEFAULT 1;
"#,
    r#"
-- How a model is given tools (issue 58): the person's word, and what Switchboard learned (a
-- local server's list of what the model can do, or a refusal of native tools).
ALTER TABLE provider_models ADD COLUMN tools_person TEXT
    CHECK (tools_person IS NULL OR tools_person IN ('native', 'prompted', 'off'));
ALTER TABLE provider_models ADD COLUMN tools_learned TEXT
    CHECK (tools_learned IS NULL OR tools_learned IN ('native', 'prompted', 'off'));
"#,
    // 28: policies and the record of every call (issue 59). What decided each call, in words,
    // kept with it; and the audit record: one row per call from any path (the model, a retry,
    // an MCP App, the command line), with no reference to its conversation, so deleting the
    // conversation keeps it. Rows are never changed, and none younger than a day is deleted:
    // only the retention setting's pruning of old rows deletes.
    r#"
ALTER TABLE tool_runs ADD COLUMN decided_by TEXT;
CREATE TABLE audit (
    seq                 INTEGER PRIMARY KEY AUTOINCREMENT,
    at                  INTEGER NOT NULL,
    origin              TEXT NOT NULL CHECK (origin IN ('model', 'retry', 'app', 'cli')),
    conversation_id     TEXT,
    conversation_title  TEXT,
    server              TEXT NOT NULL,
    tool                TEXT NOT NULL,
    arguments           TEXT NOT NULL,
    decision            TEXT NOT NULL CHECK (decision IN ('allowed', 'denied', 'not_run')),
    decided_by          TEXT NOT NULL,
    duration_ms         INTEGER,
    is_error            INTEGER NOT NULL DEFAULT 0,
    result_sha256       TEXT,
    result_bytes        INTEGER
);
CREATE INDEX audit_by_time ON audit(at);
CREATE INDEX audit_by_server ON audit(server, at);
CREATE TRIGGER audit_never_changed BEFORE UPDATE ON audit
BEGIN
    SELECT RAISE(ABORT, 'the audit record is append-only');
END;
CREATE TRIGGER audit_kept_a_day BEFORE DELETE ON audit
    WHEN old.at > CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 86400000
BEGIN
    SELECT RAISE(ABORT, 'the audit record keeps every call of the last day');
END;
"#,
    // 29: an entry is never written over (INSERT OR REPLACE of a taken `seq` would delete it
    // without the delete trigger).
    r#"
CREATE TRIGGER audit_never_replaced BEFORE INSERT ON audit
    WHEN new.seq IS NOT NULL AND EXISTS (SELECT 1 FROM audit WHERE seq = new.seq)
BEGIN
    SELECT RAISE(ABORT, 'the audit record is append-only');
END;
"#,
    // 30: skills (issue 61). A skill's switch for every conversation: one of the person's
    // skills with no row is on; a server's skill is on only with a row that is on and
    // `approved`, the hash of its files' URIs and digests when the person switched it on. Per
    // conversation and per profile, a skill's switch is a tool switch under the server name
    // "switchboard/skills".
    r#"
CREATE TABLE skill_switches (
    name      TEXT PRIMARY KEY,
    enabled   INTEGER NOT NULL,
    approved  TEXT
) WITHOUT ROWID;
-- The conversations that used a skill are found by Switchboard's own load_skill calls.
CREATE INDEX tool_runs_by_tool ON tool_runs(server, tool);
"#,
    // 31: scheduled runs (issue 61). A schedule's `fields` is what the person wrote, as JSON;
    // `next_at` is moved on in the transaction that claims a run, and a due time is unique per
    // schedule, so no two processes run one time twice. `writer` is the process running it
    // (see `writers`): a run left `running` by one that is gone reads as interrupted.
    r#"
CREATE TABLE schedules (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL COLLATE NOCASE UNIQUE,
    fields      TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1,
    created_at  INTEGER NOT NULL,
    next_at     INTEGER
);
CREATE TABLE schedule_runs (
    id               TEXT PRIMARY KEY,
    schedule_id      TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    due_at           INTEGER NOT NULL,
    started_at       INTEGER NOT NULL,
    finished_at      INTEGER,
    status           TEXT NOT NULL,
    late             INTEGER NOT NULL DEFAULT 0,
    manual           INTEGER NOT NULL DEFAULT 0,
    conversation_id  TEXT REFERENCES conversations(id) ON DELETE SET NULL,
    message          TEXT,
    writer           TEXT,
    UNIQUE (schedule_id, due_at)
);
CREATE INDEX schedule_runs_by_start ON schedule_runs(started_at DESC);
CREATE INDEX schedule_runs_by_conversation ON schedule_runs(conversation_id);
CREATE INDEX schedule_runs_live ON schedule_runs(status) WHERE status IN ('running', 'waiting');
"#,
    // 32: long tasks (issue 61). A call a server answered with a task keeps the task's id and
    // where it stands: `running` while its run follows it, `background` while it is followed
    // outside any run (the person went on without it, or Switchboard stopped while it ran and
    // follows it again), and how it ended (an ended state is never written over). The partial
    // index finds those to follow.
    r#"
ALTER TABLE tool_runs ADD COLUMN task_id TEXT;
ALTER TABLE tool_runs ADD COLUMN task_state TEXT CHECK (task_state IS NULL OR task_state IN
    ('running', 'background', 'completed', 'failed', 'cancelled', 'lost'));
CREATE INDEX tool_runs_tasks_to_follow ON tool_runs(task_state)
    WHERE task_state = 'background';
"#,
    // 33: a skill's scripts (issue 61). The digest of one of the person's skills' files
    // when the person let the model ask to run its scripts; a skill changed since is not run.
    // And the late results of tasks by conversation, which come with their call's page.
    r#"
ALTER TABLE skill_switches ADD COLUMN scripts TEXT;
CREATE INDEX messages_late_results ON messages(conversation_id, seq)
    WHERE name = 'task_result';
"#,
    // 34: projects (issue 62). A project's instructions are added to the system prompt of each
    // of its conversations (after the profile's); its profile is the one a conversation made in
    // it starts from. A conversation is in one project or none; deleting a project leaves its
    // conversations in none, and deleting its profile leaves it with none.
    r#"
CREATE TABLE projects (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL COLLATE NOCASE UNIQUE,
    instructions  TEXT NOT NULL DEFAULT '',
    profile_id    TEXT REFERENCES profiles(id) ON DELETE SET NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
ALTER TABLE conversations ADD COLUMN project_id TEXT REFERENCES projects(id) ON DELETE SET NULL;
CREATE INDEX conversations_by_project ON conversations(project_id) WHERE project_id IS NOT NULL;
"#,
    // 35: a project's knowledge files (issue 62): each file's text kept as its passages, in
    // order (joined, they are the text again), indexed for search as `message_search` is
    // (external content, kept in step by triggers), with the count of passages each word is in. A file's name is unique in its project:
    // adding one of the same name replaces it.
    r#"
CREATE TABLE project_files (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    mime        TEXT NOT NULL,
    size        INTEGER NOT NULL,
    chars       INTEGER NOT NULL,
    passages    INTEGER NOT NULL,
    added_at    INTEGER NOT NULL,
    UNIQUE (project_id, name)
);
CREATE TABLE project_passages (
    id       INTEGER PRIMARY KEY,
    file_id  TEXT NOT NULL REFERENCES project_files(id) ON DELETE CASCADE,
    number   INTEGER NOT NULL,
    text     TEXT NOT NULL
);
CREATE INDEX project_passages_by_file ON project_passages(file_id, number);
CREATE VIRTUAL TABLE passage_search USING fts5(
    text,
    content = 'project_passages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
-- How many passages hold each word: a question's words in most passages say little of which
-- to give, and would have every passage ranked.
CREATE VIRTUAL TABLE passage_words USING fts5vocab(passage_search, 'row');
CREATE TRIGGER passage_search_insert AFTER INSERT ON project_passages
BEGIN
    INSERT INTO passage_search(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER passage_search_delete AFTER DELETE ON project_passages
BEGIN
    INSERT INTO passage_search(passage_search, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER passage_search_update AFTER UPDATE OF text ON project_passages
BEGIN
    INSERT INTO passage_search(passage_search, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO passage_search(rowid, text) VALUES (new.id, new.text);
END;
"#,
    // 36: memory (issue 62). Short facts the model saved (or the person wrote), each in a
    // project's memory or, with no project, the person's own; the conversation it came from
    // while that is kept. Searched by word as passages are. A project's memory is off until
    // switched on (the person's own is a setting).
    r#"
CREATE TABLE memories (
    id               TEXT PRIMARY KEY,
    project_id       TEXT REFERENCES projects(id) ON DELETE CASCADE,
    text             TEXT NOT NULL,
    conversation_id  TEXT REFERENCES conversations(id) ON DELETE SET NULL,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
);
CREATE INDEX memories_by_project ON memories(project_id, updated_at);
CREATE VIRTUAL TABLE memory_search USING fts5(
    text,
    content = 'memories',
    content_rowid = 'rowid',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_search_insert AFTER INSERT ON memories
BEGIN
    INSERT INTO memory_search(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER memory_search_delete AFTER DELETE ON memories
BEGIN
    INSERT INTO memory_search(memory_search, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER memory_search_update AFTER UPDATE OF text ON memories
BEGIN
    INSERT INTO memory_search(memory_search, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO memory_search(rowid, text) VALUES (new.rowid, new.text);
END;
ALTER TABLE projects ADD COLUMN memory INTEGER NOT NULL DEFAULT 0;
"#,
    // 37: whether a fact came from a conversation (the model kept it) or the person wrote it,
    // which `conversation_id` cannot say once that conversation is deleted; a project's tool
    // switches and folders; what an answer was given of its project's files and memory.
    r#"
ALTER TABLE memories ADD COLUMN from_conversation INTEGER NOT NULL DEFAULT 0
    CHECK (from_conversation IN (0, 1));
UPDATE memories SET from_conversation = 1 WHERE conversation_id IS NOT NULL;
-- A project's own tool switches (issue 62), put over its profile's on each conversation that
-- starts in it or moves into it: a list of {server, tool, enabled}, `tool` null for a server.
ALTER TABLE projects ADD COLUMN tools TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tools));
-- Its folders: while a turn in it runs, the servers it uses are given them as their roots, and
-- a path argument outside them asks.
ALTER TABLE projects ADD COLUMN roots TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(roots));
-- What of its project's files and its memory an answer's request was given, when any.
ALTER TABLE messages ADD COLUMN given TEXT CHECK (given IS NULL OR json_valid(given));
"#,
    // 38: a count that moves with every change of a schedule or a run, whichever process made
    // it: how a window hears, at a glance, of what the command line did (issue 61).
    r#"
CREATE TABLE change_counts (
    what  TEXT PRIMARY KEY,
    n     INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO change_counts (what) VALUES ('schedules');
CREATE TRIGGER schedules_count_insert AFTER INSERT ON schedules BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER schedules_count_update AFTER UPDATE ON schedules BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER schedules_count_delete AFTER DELETE ON schedules BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER schedule_runs_count_insert AFTER INSERT ON schedule_runs BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER schedule_runs_count_update AFTER UPDATE ON schedule_runs BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER schedule_runs_count_delete AFTER DELETE ON schedule_runs BEGIN
    INSERT INTO change_counts (what, n) VALUES ('schedules', 1)
        ON CONFLICT (what) DO UPDATE SET n = n + 1;
END;
"#,
];

fn migrations() -> Migrations<'static> {
    Migrations::new(MIGRATIONS.iter().map(|sql| M::up(sql)).collect())
}

/// The schema version this build writes.
pub fn latest_version() -> u32 {
    u32::try_from(MIGRATIONS.len()).unwrap_or(u32::MAX)
}

pub fn migrate(conn: &mut Connection) -> Result<(), rusqlite_migration::Error> {
    migrations().to_latest(conn)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    #[test]
    fn the_migrations_are_valid() {
        assert!(super::migrations().validate().is_ok());
    }

    /// The rowids `words` finds in the search index.
    fn found(conn: &Connection, words: &str) -> Vec<i64> {
        let mut statement = conn
            .prepare(
                "SELECT rowid FROM message_search WHERE message_search MATCH ?1 ORDER BY rowid",
            )
            .unwrap();
        let rows = statement.query_map([words], |row| row.get(0)).unwrap();
        rows.collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn an_answer_streaming_when_search_stopped_indexing_checkpoints_is_indexed_once_when_it_ends() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::migrations().to_version(&mut conn, 19).unwrap();
        conn.execute_batch(
            "INSERT INTO conversations (id, title, created_at, updated_at) VALUES ('c', 'Trip', 0, 0);
             INSERT INTO messages (id, conversation_id, seq, role, content, created_at, status)
                 VALUES ('q', 'c', 1, 'user', 'weather in Lisbon', 0, 'complete'),
                        ('a', 'c', 2, 'assistant', 'looking at the forecast', 0, 'streaming');",
        )
        .unwrap();
        assert_eq!(
            found(&conn, "forecast").len(),
            1,
            "indexed as it streamed, before"
        );
        super::migrate(&mut conn).unwrap();
        assert!(found(&conn, "forecast").is_empty());
        assert_eq!(found(&conn, "lisbon").len(), 1);

        // Checkpoints of a streaming answer leave the index alone; its end puts it in, once.
        conn.execute(
            "UPDATE messages SET content = 'looking at the forecast now' WHERE id = 'a'",
            [],
        )
        .unwrap();
        assert!(found(&conn, "forecast").is_empty());
        conn.execute(
            "UPDATE messages SET content = 'sunny, says the forecast', status = 'complete' WHERE id = 'a'",
            [],
        )
        .unwrap();
        assert_eq!(found(&conn, "forecast").len(), 1);
        assert!(found(&conn, "looking").is_empty());
        // A later change to the finished answer moves its words; the index matches the table.
        conn.execute(
            "UPDATE messages SET content = 'rain, says the forecast' WHERE id = 'a'",
            [],
        )
        .unwrap();
        assert!(found(&conn, "sunny").is_empty());
        assert_eq!(found(&conn, "rain").len(), 1);
        conn.execute(
            "INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 1)",
            [],
        )
        .unwrap();
        // An answer cut off by a crash is indexed when recovery marks it interrupted; one
        // deleted while it streams leaves nothing behind.
        conn.execute_batch(
            "INSERT INTO messages (id, conversation_id, seq, role, content, created_at, status)
                 VALUES ('b', 'c', 3, 'assistant', 'halfway through a thought', 0, 'streaming'),
                        ('d', 'c', 4, 'assistant', 'never finished', 0, 'streaming');
             UPDATE messages SET status = 'interrupted' WHERE id = 'b';
             DELETE FROM messages WHERE id = 'd';",
        )
        .unwrap();
        assert_eq!(found(&conn, "halfway").len(), 1);
        assert!(found(&conn, "finished").is_empty());
        conn.execute(
            "INSERT INTO message_search(message_search, rank) VALUES('integrity-check', 1)",
            [],
        )
        .unwrap();
    }
}
