//! A key does not cross the internet in clear: a provider's base URL may be plain `http:` only
//! to this computer or a private network address.

use switchboard_core::provider_config::{validate_base_url, ProviderKind};

#[test]
fn provider_key_is_not_sent_over_plain_http_to_a_public_address() {
    for public in [
        "http://api.openai.com/v1",
        "http://203.0.113.7:8080/v1",
        "http://[2001:db8::1]/v1",
        "http://models.example",
    ] {
        let refused = validate_base_url(ProviderKind::Openai, Some(public)).unwrap_err();
        assert_eq!(refused.field, "base_url", "{public}");
        assert!(
            refused.message.contains("unencrypted"),
            "{}",
            refused.message
        );
    }
    for local in [
        "http://127.0.0.1:11434",
        "http://localhost:1234/v1",
        "http://192.168.1.20:11434",
        "https://api.openai.com/v1",
    ] {
        assert!(
            validate_base_url(ProviderKind::Openai, Some(local)).is_ok(),
            "{local}"
        );
    }
}

#[test]
fn a_remote_mcp_server_is_not_reached_over_plain_http_on_a_public_address() {
    use switchboard_core::mcp::config::ServerEntry;
    for public in [
        "http://mcp.example.com/mcp",
        "http://203.0.113.7:8080/mcp",
        "http://[2001:db8::1]/mcp",
    ] {
        let entry = ServerEntry {
            url: Some(public.to_owned()),
            ..ServerEntry::default()
        };
        let err = entry.resolve("remote").unwrap_err().to_string();
        assert!(err.contains("plain http://"), "{public}: {err}");
    }
    for fine in [
        "http://127.0.0.1:3000/mcp",
        "http://localhost:3000/mcp",
        "http://10.0.0.5/mcp",
        "http://nas.local:8080/mcp",
        "http://mcp:3000/mcp",
        "https://mcp.example.com/mcp",
    ] {
        let entry = ServerEntry {
            url: Some(fine.to_owned()),
            ..ServerEntry::default()
        };
        assert!(entry.resolve("remote").is_ok(), "{fine}");
    }
}
