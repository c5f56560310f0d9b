//! What can go wrong talking to a model provider, in the cases a caller decides on: retry
//! later, fix the key, shorten the conversation, or show what arrived before the cut.

use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error("The provider refused the API key: {message}")]
    Unauthorized { message: String },
    #[error("The provider is rate limiting requests{}: {message}", retry_hint(*.retry_after))]
    RateLimited {
        retry_after: Option<Duration>,
        message: String,
    },
    /// The request is over the model's window; `window` and `sent` (tokens) where the
    /// provider names them.
    #[error("The conversation is too long for this model{}: {message}", sizes(*.window, *.sent))]
    ContextTooLong {
        message: String,
        window: Option<u64>,
        sent: Option<u64>,
    },
    /// The request offers more tools than the provider takes (`max`, where it says): not a
    /// long conversation, and not fixed by shortening one.
    #[error("The provider takes {} tools in one request: {message}", max.map_or_else(|| "fewer".to_owned(), |m| format!("at most {m}")))]
    TooManyTools { message: String, max: Option<usize> },
    #[error("The provider is overloaded: {message}")]
    Overloaded { message: String },
    #[error("The provider answered HTTP {status}: {message}")]
    Server { status: u16, message: String },
    #[error("Cannot reach the provider: {0}")]
    Network(String),
    /// The provider's address sent the request on to another origin, which was not followed
    /// (the key would have gone with it). `to` is that origin: scheme, host and port.
    #[error(
        "The provider's address redirected to another one ({to}); Switchboard does not follow \
         it, so your API key was not sent there. Check the provider's base URL"
    )]
    Redirected { to: String },
    /// The stream broke after it had started; `partial_text` is what arrived before.
    #[error("The answer was cut off: {detail}")]
    StreamInterrupted {
        partial_text: String,
        detail: String,
    },
    #[error("The provider sent something Switchboard cannot read: {0}")]
    BadResponse(String),
    #[error("Stopped")]
    Cancelled,
    #[error("No API key is stored for this provider; add one on the Providers page")]
    MissingKey,
    /// The server could not fetch a model: its own words.
    #[error("The server could not fetch the model: {0}")]
    PullFailed(String),
    /// The provider's server has no such operation (a model pulled from a server that cannot
    /// fetch models).
    #[error("{0}")]
    Unsupported(String),
}

/// " (it takes 8192 tokens; this request was 9034)", as much of it as is known.
fn sizes(window: Option<u64>, sent: Option<u64>) -> String {
    match (window, sent) {
        (Some(w), Some(s)) => format!(" (it takes {w} tokens; this request was {s})"),
        (Some(w), None) => format!(" (it takes {w} tokens)"),
        (None, Some(s)) => format!(" (this request was {s} tokens)"),
        (None, None) => String::new(),
    }
}

fn retry_hint(after: Option<Duration>) -> String {
    after.map_or_else(String::new, |d| {
        format!(" (try again in {} s)", d.as_secs_f64().ceil())
    })
}

/// What kind of failure a [`ProviderError`] is, for the window and `--json` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFailure {
    Unauthorized,
    RateLimited,
    ContextTooLong,
    TooManyTools,
    Overloaded,
    Server,
    Network,
    Redirected,
    StreamInterrupted,
    BadResponse,
    Cancelled,
    NoKey,
    Unsupported,
}

impl ProviderError {
    /// What kind of failure it is.
    pub fn kind(&self) -> ProviderFailure {
        match self {
            ProviderError::Unauthorized { .. } => ProviderFailure::Unauthorized,
            ProviderError::RateLimited { .. } => ProviderFailure::RateLimited,
            ProviderError::ContextTooLong { .. } => ProviderFailure::ContextTooLong,
            ProviderError::TooManyTools { .. } => ProviderFailure::TooManyTools,
            ProviderError::Overloaded { .. } => ProviderFailure::Overloaded,
            ProviderError::Server { .. } => ProviderFailure::Server,
            ProviderError::Network(_) => ProviderFailure::Network,
            ProviderError::Redirected { .. } => ProviderFailure::Redirected,
            ProviderError::StreamInterrupted { .. } => ProviderFailure::StreamInterrupted,
            ProviderError::BadResponse(_) => ProviderFailure::BadResponse,
            ProviderError::Cancelled => ProviderFailure::Cancelled,
            ProviderError::MissingKey => ProviderFailure::NoKey,
            ProviderError::Unsupported(_) => ProviderFailure::Unsupported,
            ProviderError::PullFailed(_) => ProviderFailure::Server,
        }
    }

    /// A request that failed before any answer: a redirect to another origin refused, or the
    /// network.
    pub fn from_request(e: &reqwest::Error) -> Self {
        match crate::net::cross_origin_redirect(e) {
            Some(refused) => ProviderError::Redirected {
                to: refused.to.clone(),
            },
            None => ProviderError::Network(crate::net::describe_error(e)),
        }
    }

    /// Worth trying again before any token has arrived.
    pub fn is_retryable(&self) -> bool {
        match self {
            ProviderError::RateLimited { .. }
            | ProviderError::Overloaded { .. }
            | ProviderError::Network(_) => true,
            ProviderError::Server { status, .. } => *status >= 500,
            _ => false,
        }
    }

    /// Reads an error response: its status, body and `Retry-After`.
    pub fn from_status(status: u16, body: &str, retry_after: Option<Duration>) -> Self {
        let message = error_message(body);
        match status {
            401 | 403 => ProviderError::Unauthorized { message },
            429 => ProviderError::RateLimited {
                retry_after,
                message,
            },
            400 | 413 | 422 => {
                if let Some(max) = super::overflow::read_too_many_tools(&message) {
                    ProviderError::TooManyTools { message, max }
                } else if let Some(over) =
                    super::overflow::read_overflow(body, &whole_message(body))
                {
                    ProviderError::ContextTooLong {
                        message,
                        window: over.window,
                        sent: over.sent,
                    }
                } else {
                    ProviderError::Server { status, message }
                }
            }
            503 | 529 => ProviderError::Overloaded { message },
            _ => ProviderError::Server { status, message },
        }
    }
}

/// The human part of an error body: `{"error": {"message": …}}`, `{"error": "…"}`,
/// `{"message": …}`, or the text itself, cut to a readable length.
pub(super) fn error_message(body: &str) -> String {
    let text = crate::text::one_line(&whole_message(body), 300);
    if text.is_empty() {
        "no details given".to_owned()
    } else {
        text
    }
}

/// The human part of an error body, whole: [`error_message`] before it is cut to a readable
/// length (what a refusal says of the window is read from it).
pub(super) fn whole_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            // FastAPI's validation errors (vLLM and others answer 422 with them).
            .or_else(|| v.pointer("/detail/0/msg"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    from_json.unwrap_or_else(|| body.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_become_the_cases_a_person_can_act_on() {
        let e =
            ProviderError::from_status(401, r#"{"error":{"message":"Incorrect API key"}}"#, None);
        assert_eq!(
            e,
            ProviderError::Unauthorized {
                message: "Incorrect API key".into()
            }
        );
        let e = ProviderError::from_status(429, "slow down", Some(Duration::from_secs(3)));
        assert!(e.is_retryable());
        assert!(e.to_string().contains("try again in 3 s"), "{e}");
        let e = ProviderError::from_status(
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#,
            None,
        );
        assert!(
            matches!(
                e,
                ProviderError::ContextTooLong {
                    window: Some(8192),
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("(it takes 8192 tokens)"), "{e}");
        // 2,009 tools where OpenAI takes 128: not a long conversation.
        let e = ProviderError::from_status(
            400,
            r#"{"error":{"message":"Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 2009 instead.","type":"invalid_request_error","param":"tools","code":"array_above_max_length"}}"#,
            None,
        );
        assert_eq!(e.kind(), ProviderFailure::TooManyTools);
        assert!(
            e.to_string()
                .starts_with("The provider takes at most 128 tools in one request"),
            "{e}"
        );
        assert!(ProviderError::from_status(529, r#"{"error":"Overloaded"}"#, None).is_retryable());
        assert!(ProviderError::from_status(502, "", None).is_retryable());
        assert!(!ProviderError::from_status(404, "no such model", None).is_retryable());
    }
}
