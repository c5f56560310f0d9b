//! What went wrong with an MCP server, as a person reads it: [`McpError`], an rmcp error's
//! chain turned into words (a network failure says what failed and where, never a URL's path
//! or query), a sign-in a remote server asks for, and the last words a local server wrote on
//! stderr (kept by [`super::process::StderrRing`]).

use std::time::Duration;

use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// How much of it goes into an error message.
pub const STDERR_TAIL_CHARS: usize = 2000;

/// What went wrong with a server, with its stderr tail where it helps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    #[error("Cannot start “{server}”: {detail}")]
    Spawn { server: String, detail: String },
    #[error("“{server}” did not start: {detail}{}", tail_text(.stderr_tail))]
    Startup {
        server: String,
        detail: String,
        stderr_tail: String,
    },
    #[error("“{server}” did not answer `initialize` within {} s{}", .after.as_secs(), tail_text(.stderr_tail))]
    StartupTimeout {
        server: String,
        after: Duration,
        stderr_tail: String,
    },
    #[error("“{server}” failed: {detail}{}", tail_text(.stderr_tail))]
    Request {
        server: String,
        detail: String,
        stderr_tail: String,
    },
    #[error("“{server}” did not answer within {} s", .after.as_secs_f64())]
    Timeout { server: String, after: Duration },
    #[error("The call to “{server}” was stopped")]
    Cancelled { server: String },
    /// The server answered 401, or 403 for a scope the tokens lack: a person must sign in
    /// (again). `challenge` is its `WWW-Authenticate` header, which says where and for what.
    #[error("{}", sign_in_text(.server, *.more_scope))]
    SignInRequired {
        server: String,
        challenge: String,
        more_scope: bool,
    },
    #[error("Signing in to “{server}” failed: {detail}")]
    SignInFailed { server: String, detail: String },
    /// Its tool list went past what a client keeps reading (pages, tools, bytes or time): a
    /// server paging without end is stopped there.
    #[error("“{server}” {detail}")]
    ListTooLong { server: String, detail: String },
}

fn sign_in_text(server: &str, more_scope: bool) -> String {
    if more_scope {
        format!("“{server}” needs more permission than you gave it: sign in to it again")
    } else {
        format!("“{server}” asks you to sign in")
    }
}

/// The `WWW-Authenticate` challenge of a 401 or a 403 somewhere in `e`'s chain, and whether it
/// asks for more scope (403) rather than any sign-in.
pub(crate) fn auth_challenge(e: &(dyn std::error::Error + 'static)) -> Option<(String, bool)> {
    let http = causes(e).find_map(|err| err.downcast_ref::<StreamableHttpError<reqwest::Error>>());
    match http? {
        StreamableHttpError::AuthRequired(a) => Some((a.www_authenticate_header.clone(), false)),
        StreamableHttpError::InsufficientScope(a) => {
            Some((a.www_authenticate_header.clone(), true))
        }
        _ => None,
    }
}

/// `e` and what caused it, down to the lowest cause, through the rmcp errors that do not
/// name their cause as `source`.
fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| {
        match err.downcast_ref::<rmcp::service::ClientInitializeError>() {
            // rmcp does not mark this one as the source.
            Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) => {
                Some(error as &(dyn std::error::Error + 'static))
            }
            _ => match err.downcast_ref::<ServiceError>() {
                Some(ServiceError::TransportSend(error)) => Some(error),
                _ => err.source(),
            },
        }
    })
}

/// The most of an MCP error's `data` said after its message.
const ERROR_DATA_CHARS: usize = 300;

/// Whether `data` adds nothing to `message`: no data, or every value in it is in the message
/// already (`{"uri": …}` after "Unknown resource: …").
fn said_already(data: &serde_json::Value, message: &str) -> bool {
    use serde_json::Value;
    match data {
        Value::Null => true,
        Value::Bool(_) | Value::Number(_) => message.contains(&data.to_string()),
        Value::String(text) => message.contains(text.as_str()),
        Value::Array(items) => items.iter().all(|v| said_already(v, message)),
        Value::Object(fields) => fields.values().all(|v| said_already(v, message)),
    }
}

/// An rmcp error for a person. A network failure underneath says what failed and where
/// (host and port, never the path or query, which may hold a session id); an error the server
/// answered is its own message; anything else keeps its text, without the transport's Rust type
/// name.
pub(crate) fn readable(e: &(dyn std::error::Error + 'static)) -> String {
    for err in causes(e) {
        // The server's own words, without rmcp's "Mcp error: -32602: " before them, and what
        // it added (a field at fault, an address to open), on one line and cut short.
        if let Some(ServiceError::McpError(error)) = err.downcast_ref::<ServiceError>() {
            if !crate::text::is_blank(&error.message) {
                return match &error.data {
                    Some(data) if !said_already(data, &error.message) => format!(
                        "{} ({})",
                        error.message,
                        crate::text::one_line(&data.to_string(), ERROR_DATA_CHARS)
                    ),
                    _ => error.message.to_string(),
                };
            }
        }
        if let Some(http) = err.downcast_ref::<reqwest::Error>() {
            return crate::net::describe_error(http);
        }
        if let Some(StreamableHttpError::Client(http)) =
            err.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return crate::net::describe_error(http);
        }
    }
    without_type_names(&e.to_string())
}

/// rmcp's "Transport [some::Rust<Type>] error: " prefixes, taken out.
fn without_type_names(text: &str) -> String {
    const END: &str = "] error: ";
    let (mut kept, mut rest) = (String::new(), text);
    while let Some(start) = rest.find("Transport [") {
        let Some(end) = rest[start..].find(END) else {
            break;
        };
        kept.push_str(&rest[..start]);
        rest = &rest[start + end + END.len()..];
    }
    kept.push_str(rest);
    kept
}

fn tail_text(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("\n--- Last output from the server ---\n{}", tail.trim_end())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn transport_type_names_are_taken_out() {
        assert_eq!(
            super::without_type_names(
                "Send message error Transport [rmcp::W<a::B<c::D>>] error: Client error: boom, when x"
            ),
            "Send message error Client error: boom, when x"
        );
        assert_eq!(super::without_type_names("Transport [x"), "Transport [x");
    }

    #[test]
    fn a_servers_error_is_its_own_message() {
        let answered = rmcp::service::ServiceError::McpError(rmcp::ErrorData::invalid_params(
            "Unknown resource: docs://reports/gone.md",
            None,
        ));
        assert_eq!(
            super::readable(&answered),
            "Unknown resource: docs://reports/gone.md"
        );
        let with_data = rmcp::service::ServiceError::McpError(rmcp::ErrorData::invalid_params(
            "Invalid arguments",
            Some(serde_json::json!({"field": "city", "why": "required"})),
        ));
        assert_eq!(
            super::readable(&with_data),
            r#"Invalid arguments ({"field":"city","why":"required"})"#
        );
        let blank = rmcp::service::ServiceError::McpError(rmcp::ErrorData::invalid_params(
            " ",
            Some(serde_json::json!("all of it is here")),
        ));
        assert!(super::readable(&blank).contains("all of it is here"));
        let repeated = rmcp::service::ServiceError::McpError(rmcp::ErrorData::resource_not_found(
            "Unknown resource: docs://q3.md",
            Some(serde_json::json!({"uri": "docs://q3.md"})),
        ));
        assert_eq!(super::readable(&repeated), "Unknown resource: docs://q3.md");
    }
}
