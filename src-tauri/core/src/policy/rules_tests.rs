use super::*;
use serde_json::json;

fn compiled(text: &str) -> Compiled {
    PolicyFile::parse(text)
        .expect("parses")
        .compile(Source::User)
        .expect("compiles")
}

fn outcome(c: &Compiled, server: &str, tool: &str, args: Value) -> Option<Outcome> {
    c.judge(server, tool, Some(&args), None).map(|h| h.outcome)
}

#[test]
fn the_most_specific_rule_wins_and_block_beats_allow_at_equal_specificity() {
    let c = compiled(
        r#"{"rules": [
            {"server": "*", "outcome": "ask"},
            {"server": "fs", "outcome": "allow"},
            {"server": "fs", "tool": "write_file", "outcome": "ask"},
            {"server": "fs", "tool": "write_file", "when": {"path": {"matches": ".*\\.md"}}, "outcome": "allow"},
            {"server": "fs", "tool": "write_file", "when": {"path": {"matches": ".*secret.*"}}, "outcome": "block"}
        ]}"#,
    );
    assert_eq!(outcome(&c, "git", "log", json!({})), Some(Outcome::Ask));
    assert_eq!(
        outcome(&c, "fs", "read_file", json!({})),
        Some(Outcome::Allow)
    );
    assert_eq!(
        outcome(&c, "FS", "read_file", json!({})),
        Some(Outcome::Allow)
    );
    assert_eq!(
        outcome(&c, "fs", "write_file", json!({"path": "/a.txt"})),
        Some(Outcome::Ask)
    );
    assert_eq!(
        outcome(&c, "fs", "write_file", json!({"path": "/a.md"})),
        Some(Outcome::Allow)
    );
    // Both argument rules apply: the same specificity, so block wins.
    assert_eq!(
        outcome(&c, "fs", "write_file", json!({"path": "/secret.md"})),
        Some(Outcome::Block)
    );
    let hit = c
        .judge(
            "fs",
            "write_file",
            Some(&json!({"path": "/secret.md"})),
            None,
        )
        .unwrap();
    assert_eq!(hit.index, 4);
    assert!(
        hit.said
            .starts_with("rule 5 of your policy.json: block fs · write_file when path matches"),
        "{}",
        hit.said
    );
    assert_eq!(outcome(&compiled("{}"), "fs", "x", json!({})), None);
}

#[test]
fn a_path_inside_a_folder_is_judged_after_dot_dot_and_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("notes");
    let outside = dir.path().join("secrets");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("key"), "k").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
    let c = compiled(
        &json!({"rules": [
            {"server": "fs", "when": {"path": {"inside": [root]}}, "outcome": "allow"},
            {"server": "fs", "when": {"path": {"not": {"inside": [root]}}}, "outcome": "block"}
        ]})
        .to_string(),
    );
    let at = |p: PathBuf| outcome(&c, "fs", "read_file", json!({"path": p}));
    assert_eq!(at(root.join("a.md")), Some(Outcome::Allow));
    assert_eq!(at(root.join("new/deeper/file.md")), Some(Outcome::Allow));
    assert_eq!(at(root.join("../secrets/key")), Some(Outcome::Block));
    assert_eq!(at(root.join("new/../../secrets/key")), Some(Outcome::Block));
    #[cfg(unix)]
    {
        assert_eq!(at(root.join("link/key")), Some(Outcome::Block));
        assert_eq!(at(root.join("link/not-yet")), Some(Outcome::Block));
    }
    // A folder named like the root but beside it is not inside it.
    assert_eq!(at(dir.path().join("notes-evil/x")), Some(Outcome::Block));
    // Every path of a list must be inside; one outside is enough to be not inside.
    let both = json!({"paths": [root.join("a"), outside.join("key")]});
    let c2 = compiled(
        &json!({"rules": [
            {"server": "fs", "when": {"paths": {"inside": [root]}}, "outcome": "allow"},
            {"server": "fs", "when": {"paths": {"not": {"inside": [root]}}}, "outcome": "block"}
        ]})
        .to_string(),
    );
    assert_eq!(
        outcome(&c2, "fs", "read_multiple_files", both),
        Some(Outcome::Block)
    );
    // A relative path with no known folder is inside nothing.
    assert_eq!(
        outcome(&c, "fs", "read_file", json!({"path": "a.md"})),
        Some(Outcome::Block)
    );
    // An argument that is missing makes no test hold: the rules do not apply.
    assert_eq!(
        outcome(&c, "fs", "list_allowed_directories", json!({})),
        None
    );
}

#[test]
fn hosts_patterns_ranges_values_and_pointers() {
    let c = compiled(
        r#"{"rules": [
            {"server": "fetch", "when": {"url": {"host": ["example.com", "*.wikipedia.org"]}}, "outcome": "allow"},
            {"server": "fetch", "when": {"url": {"not": {"host": ["example.com", "*.wikipedia.org"]}}}, "outcome": "ask"},
            {"server": "db", "when": {"/options/limit": {"range": {"min": 1, "max": 100}}}, "outcome": "allow"},
            {"server": "db", "when": {"mode": {"one_of": ["read", "explain"]}}, "outcome": "allow"},
            {"server": "db", "when": {"sql": {"matches": "(?i)\\s*drop\\b.*"}}, "outcome": "block"}
        ]}"#,
    );
    let url = |u: &str| outcome(&c, "fetch", "fetch", json!({"url": u}));
    assert_eq!(url("https://example.com/a"), Some(Outcome::Allow));
    assert_eq!(url("https://EXAMPLE.com./a"), Some(Outcome::Allow));
    assert_eq!(url("https://en.wikipedia.org/wiki/X"), Some(Outcome::Allow));
    assert_eq!(url("https://wikipedia.org/"), Some(Outcome::Ask));
    assert_eq!(url("https://example.com.evil.net/"), Some(Outcome::Ask));
    assert_eq!(url("https://evil.net/?example.com"), Some(Outcome::Ask));
    // A host another parser could read otherwise is never allowed by its host: it asks.
    assert_eq!(
        url("https://user@evil.net@example.com/"),
        Some(Outcome::Ask)
    );
    assert_eq!(url("https://example.com\\@evil.net/"), Some(Outcome::Ask));
    assert_eq!(url("https://example.com /"), Some(Outcome::Ask));
    assert_eq!(url("https://example.com@evil.net/"), Some(Outcome::Ask));
    assert_eq!(
        outcome(&c, "db", "q", json!({"options": {"limit": 50}})),
        Some(Outcome::Allow)
    );
    assert_eq!(
        outcome(&c, "db", "q", json!({"options": {"limit": 500}})),
        None
    );
    assert_eq!(
        outcome(&c, "db", "q", json!({"mode": "explain"})),
        Some(Outcome::Allow)
    );
    assert_eq!(outcome(&c, "db", "q", json!({"mode": "write"})), None);
    assert_eq!(
        outcome(&c, "db", "q", json!({"sql": "  DROP table x"})),
        Some(Outcome::Block)
    );
    // The pattern holds for the whole string, not a part of it.
    assert_eq!(
        outcome(&c, "db", "q", json!({"sql": "select 1; drop table x"})),
        None
    );
}

#[test]
fn doubt_never_lets_a_call_run_and_one_item_of_a_list_is_enough_to_block() {
    let c = compiled(
        r#"{"rules": [
            {"server": "fs", "when": {"paths": {"inside": ["/etc"]}}, "outcome": "block"},
            {"server": "fs", "when": {"paths": {"inside": ["/tmp"]}}, "outcome": "allow"},
            {"server": "web", "when": {"url": {"host": ["bücher.de"]}}, "outcome": "block"},
            {"server": "n", "when": {"v": {"one_of": [1]}}, "outcome": "ask"}
        ]}"#,
    );
    let paths = |p: Value| outcome(&c, "fs", "read", json!({ "paths": p }));
    assert_eq!(
        paths(json!(["/tmp/a", "/etc/passwd"])),
        Some(Outcome::Block)
    );
    assert_eq!(paths(json!(["/tmp/a", "/tmp/b"])), Some(Outcome::Allow));
    assert_eq!(
        paths(json!(["/tmp/a", "/srv/b"])),
        None,
        "an allow needs every item"
    );
    // A path that cannot be resolved: the block applies, the allow does not.
    assert_eq!(paths(json!("relative/x")), Some(Outcome::Block));
    // A host pattern is judged in the form hosts are read: an international name's xn-- form.
    assert_eq!(
        outcome(&c, "web", "fetch", json!({"url": "https://BÜCHER.de/x"})),
        Some(Outcome::Block)
    );
    assert_eq!(
        outcome(
            &c,
            "web",
            "fetch",
            json!({"url": "https://xn--bcher-kva.de/"})
        ),
        Some(Outcome::Block)
    );
    assert_eq!(outcome(&c, "n", "t", json!({"v": 1.0})), Some(Outcome::Ask));
}

#[cfg(unix)]
#[test]
fn a_path_whose_links_and_words_disagree_is_doubt() {
    // notes/link/../private/x: by the disk, the link's parent's private; by its words,
    // notes/private. A server that tidies `..` first opens the second.
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    let elsewhere = dir.path().join("elsewhere/deeper");
    std::fs::create_dir_all(notes.join("private")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, notes.join("link")).unwrap();
    let private = notes.join("private");
    let c = compiled(
        &json!({"rules": [
            {"server": "fs", "when": {"path": {"inside": [private]}}, "outcome": "block"},
            {"server": "fs", "when": {"path": {"not": {"inside": [private]}}}, "outcome": "allow"}
        ]})
        .to_string(),
    );
    let tricky = notes.join("link/../private/x");
    assert_eq!(
        outcome(&c, "fs", "read", json!({ "path": tricky })),
        Some(Outcome::Block)
    );
    assert_eq!(
        outcome(&c, "fs", "read", json!({ "path": notes.join("other") })),
        Some(Outcome::Allow)
    );
}

#[test]
fn a_bad_rule_is_refused_with_where_and_why_and_nothing_of_the_file_is_taken() {
    let refused = |text: &str| PolicyFile::parse(text).unwrap_err();
    let e = refused(
        r#"{"rules": [{"server": "fs", "outcome": "allow"}, {"server": "fs", "when": {"sql": {"matches": "("}}, "outcome": "block"}]}"#,
    );
    assert_eq!(e.place, "rules[1].when.sql");
    assert!(e.why.contains("does not compile"), "{e}");
    let e = refused(r#"{"rules": [{"server": "fs", "outcome": "maybe"}]}"#);
    assert!(e.place.starts_with("line 1, column"), "{e}");
    assert!(e.why.contains("unknown variant"), "{e}");
    let e = refused(r#"{"rules": [{"server": "fs", "tol": "x", "outcome": "allow"}]}"#);
    assert!(e.why.contains("unknown field `tol`"), "{e}");
    let e = refused(r#"{"rules": [{"server": "", "outcome": "allow"}]}"#);
    assert_eq!(e.place, "rules[0].server");
    let e = refused(
        r#"{"rules": [{"server": "fs", "when": {"path": {"inside": ["notes"]}}, "outcome": "allow"}]}"#,
    );
    assert!(e.why.contains("not a whole path"), "{e}");
    let e = refused(
        r#"{"rules": [{"server": "f", "when": {"n": {"range": {"min": 5, "max": 1}}}, "outcome": "allow"}]}"#,
    );
    assert!(e.why.contains("above max"), "{e}");
    let e = refused(
        r#"{"rules": [{"server": "f", "when": {"u": {"host": ["https://x.com"]}}, "outcome": "allow"}]}"#,
    );
    assert!(e.why.contains("not a host name"), "{e}");
    let e = refused(r#"{"allowedServers": ["fs"]}"#);
    assert_eq!(e.place, "allowedServers");
    // The managed file may say it.
    let managed: PolicyFile = serde_json::from_str(r#"{"allowedServers": ["fs"]}"#).unwrap();
    let m = managed.compile(Source::Managed).unwrap();
    assert!(m.server_refused("git"));
    assert!(!m.server_refused("FS"));
    assert_eq!(
        m.blocks_outright("git", "log").unwrap().outcome,
        Outcome::Block
    );
}

#[test]
fn an_unconditional_block_keeps_a_tool_out_of_the_offer_but_one_on_arguments_does_not() {
    let c = compiled(
        r#"{"rules": [
            {"server": "fs", "tool": "delete", "outcome": "block"},
            {"server": "git", "outcome": "block"},
            {"server": "git", "tool": "log", "outcome": "allow"},
            {"server": "sh", "when": {"cmd": {"matches": "rm.*"}}, "outcome": "block"}
        ]}"#,
    );
    assert!(c.blocks_outright("fs", "delete").is_some());
    assert!(c.blocks_outright("fs", "read").is_none());
    assert!(c.blocks_outright("git", "push").is_some());
    assert!(c.blocks_outright("git", "log").is_none());
    assert!(c.blocks_outright("sh", "run").is_none());
}

#[test]
fn untrusted_and_reviewed_targets() {
    let c = compiled(
        r#"{"untrusted": [{"server": "fetch"}, {"server": "mail", "tool": "read"}], "review": [{"server": "*", "tool": "search"}]}"#,
    );
    assert!(c.is_untrusted("fetch", "anything"));
    assert!(c.is_untrusted("mail", "read"));
    assert!(!c.is_untrusted("mail", "send"));
    assert!(c.is_reviewed("web", "search"));
    assert!(!c.is_reviewed("web", "fetch"));
}

#[test]
fn a_path_outside_the_servers_roots_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let roots = [root.clone()];
    let inside = json!({"path": root.join("x"), "content": "/etc/passwd"});
    assert_eq!(path_outside_roots(Some(&inside), &roots, None), None);
    let out = json!({"source": root.join("x"), "destination": root.join("../y")});
    let named = path_outside_roots(Some(&out), &roots, None).unwrap();
    assert!(named.ends_with("root/../y"), "{named}");
    assert_eq!(path_outside_roots(Some(&out), &[], None), None);
    let camel = json!({"outputPath": "/tmp/elsewhere"});
    assert!(path_outside_roots(Some(&camel), &roots, None).is_some());
    let not_a_path = json!({"profile": "/tmp/elsewhere"});
    assert_eq!(path_outside_roots(Some(&not_a_path), &roots, None), None);
}

#[test]
fn a_file_is_written_back_as_it_reads() {
    let text = r#"{"rules": [{"server": "fs", "tool": "write_file", "when": {"path": {"not": {"inside": ["~/notes"]}}}, "outcome": "ask", "note": "keep writes in notes"}], "untrusted": [{"server": "fetch"}]}"#;
    let file = PolicyFile::parse(text).unwrap();
    let again = PolicyFile::parse(&file.to_text()).unwrap();
    assert_eq!(file, again);
    assert_eq!(
        describe(&file.rules[0]),
        "ask before fs · write_file when path is not inside ~/notes (“keep writes in notes”)"
    );
}
