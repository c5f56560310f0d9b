//! A server's approval shows everything it allows: a remote server's headers (a value written
//! in mcp.json whole, a keychain reference named), whether it is trusted, and its sign-in
//! settings; and nothing in an entry can hide past the dialog's edge (newlines, bidi controls
//! and other invisible characters in arguments are shown as escapes).

use switchboard_core::mcp::config::McpFile;
use switchboard_core::policy::confirm::ServerApprovalRequest;

fn request(mcp_json: &str, server: &str) -> ServerApprovalRequest {
    let file = McpFile::parse(mcp_json, "mcp.json").unwrap();
    let (_, spec) = file
        .specs()
        .into_iter()
        .find(|(name, _)| name == server)
        .unwrap();
    ServerApprovalRequest::of(server, &spec.unwrap())
}

#[test]
fn remote_approval_shows_headers_whole_trust_and_sign_in() {
    let shown = request(
        r#"{"mcpServers": {"notes": {
            "url": "https://notes.example/mcp",
            "headers": {
                "Authorization": "Bearer sk-live-0123456789",
                "X-Api-Key": {"keychain": "mcp/notes/api-key"},
                "X-Region": "eu-west"
            },
            "trust": "trusted",
            "oauth": {"clientId": "switchboard", "scopes": ["notes:read", "notes:write"]}
        }}}"#,
        "notes",
    )
    .command_line;
    assert!(shown.contains("https://notes.example/mcp"), "{shown}");
    // Written in mcp.json, not typed into Switchboard (which keeps what is typed in the
    // keychain): shown whole, like every value that decides what runs.
    assert!(
        shown.contains("header Authorization: Bearer sk-live-0123456789"),
        "{shown}"
    );
    assert!(
        shown.contains("header X-Api-Key: <keychain:mcp/notes/api-key>"),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|line| line == "  header X-Region: eu-west"),
        "a header on a line of its own: {shown}"
    );
    assert!(shown.contains("trusted: the tools it marks read-only run without asking"));
    assert!(
        shown.contains("sign-in: client id switchboard, scopes notes:read notes:write"),
        "{shown}"
    );
}

#[test]
fn server_approval_shows_hidden_characters_in_arguments() {
    let shown = request(
        r#"{"mcpServers": {"files": {
            "command": "npx",
            "args": ["server-filesystem", "/home/me/docs\u202e/txt.exe", "line\nbreak"]
        }}}"#,
        "files",
    )
    .command_line;
    assert!(!shown.contains('\u{202e}'), "{shown:?}");
    assert!(
        shown.contains("\\u202E") || shown.contains("\\u202e"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 1, "one line: {shown:?}");
}

#[test]
fn server_name_with_invisible_characters_is_refused() {
    // "files" with a right-to-left override: shown as another name in the approval and list.
    let file = McpFile::parse(
        r#"{"mcpServers": {
            "se\u202Eelif": {"command": "evil"},
            "files\u200B": {"command": "evil"},
            "files": {"command": "mcp-server-filesystem"}
        }}"#,
        "mcp.json",
    )
    .unwrap();
    let specs = file.specs();
    for (name, spec) in &specs {
        if name == "files" {
            assert!(spec.is_ok(), "{spec:?}");
            continue;
        }
        let err = spec.as_ref().map(|_| ()).unwrap_err().to_string();
        assert!(
            err.contains("a name cannot contain invisible characters (U+"),
            "{name:?}: {err}"
        );
        assert!(
            err.contains("\\u"),
            "the refusal shows the name escaped: {err}"
        );
    }
    assert_eq!(specs.len(), 3);
}
