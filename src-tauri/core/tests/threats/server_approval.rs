//! A server's approval shows everything it allows: a remote server's headers (a secret written
//! in mcp.json masked, a keychain reference named), whether it is trusted, and its sign-in
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
fn remote_approval_shows_headers_trust_and_sign_in_with_secrets_masked() {
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
    assert!(
        shown.contains("header Authorization: Bearer •••• (18 characters"),
        "{shown}"
    );
    assert!(!shown.contains("sk-live"), "a secret was shown: {shown}");
    assert!(
        shown.contains("header X-Api-Key: <keychain:mcp/notes/api-key>"),
        "{shown}"
    );
    assert!(shown.contains("header X-Region: eu-west"), "{shown}");
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
