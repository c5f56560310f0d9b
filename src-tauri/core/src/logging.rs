//! Logging: `tracing` to stderr and to a daily-rotated file in the app's log folder, with
//! anything that looks like a credential scrubbed from every line before it is written.
//!
//! Keys are never logged on purpose (they are `SecretString`s); the scrubber is the second
//! line of defence against a header or URL that carries one.

use std::io::{self, Write};
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

/// Patterns of secrets, each replaced by its first group and `[redacted]`.
static SECRET_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // Authorization: Bearer …, x-api-key: …, api_key=…, "x-goog-api-key": "…"
        r#"(?i)((?:authorization|proxy-authorization|x-api-key|x-goog-api-key|api[_-]?key|access[_-]?token|secret|password)["']?\s*[:=]\s*["']?(?:bearer\s+|basic\s+)?)[^\s"',;&}]+"#,
        // Bare bearer tokens.
        r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}",
        // Well-known key shapes: OpenAI / Anthropic / OpenRouter (sk-…), Google (AIza…).
        r"(sk-)[A-Za-z0-9_-]{8,}",
        r"(AIza)[0-9A-Za-z_-]{20,}",
        // user:password@ inside URLs.
        r"(://[^/\s:@]+:)[^@\s/]+@",
    ]
    .iter()
    .map(|p| Regex::new(p).expect("secret pattern compiles"))
    .collect()
});

/// Replaces every credential-looking part of `line` with `[redacted]`.
pub fn redact(line: &str) -> String {
    let mut out = line.to_owned();
    for pattern in SECRET_PATTERNS.iter() {
        if pattern.is_match(&out) {
            out = pattern.replace_all(&out, "${1}[redacted]").into_owned();
        }
    }
    out
}

/// Wraps a writer so each formatted event passes through [`redact`].
#[derive(Clone)]
pub struct Redacting<M>(pub M);

pub struct RedactingWriter<W>(W);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer())
    }
}

/// Keep this alive for as long as the process logs; dropping it flushes the file.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Starts logging: to stderr at `stderr_level` and, with `log_dir`, to
/// `switchboard.YYYY-MM-DD.log` there at `file_level`, keeping the last 7 days (rmcp's own
/// messages go to the file only). `RUST_LOG` overrides both levels. Calling it twice is harmless (the second call changes nothing).
pub fn init(log_dir: Option<&Path>, stderr_level: &str, file_level: &str) -> LogGuard {
    let filter =
        |level: &str| EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_writer(Redacting(io::stderr))
        // No colours: escape codes between a field's name and its value would hide it from
        // the scrubber.
        .with_ansi(false)
        .with_target(false)
        // rmcp reports at error level what we turn into our own message (a transport that
        // failed before the fallback to another one worked); the terminal gets ours only,
        // the file keeps both.
        .with_filter(filter(&format!("{stderr_level},rmcp=off")));

    let mut guard = None;
    let file_layer = log_dir.and_then(|dir| {
        let appender = tracing_appender::rolling::Builder::new()
            .rotation(tracing_appender::rolling::Rotation::DAILY)
            .filename_prefix("switchboard")
            .filename_suffix("log")
            .max_log_files(7)
            .build(dir)
            .map_err(|e| eprintln!("switchboard: cannot write logs to {}: {e}", dir.display()))
            .ok()?;
        let (writer, g) = tracing_appender::non_blocking(appender);
        guard = Some(g);
        Some(
            tracing_subscriber::fmt::layer()
                .with_writer(Redacting(writer))
                .with_ansi(false)
                .with_filter(filter(file_level)),
        )
    });

    let _ = tracing_subscriber::registry()
        .with(stderr_layer)
        .with(file_layer)
        .try_init();
    LogGuard { _file: guard }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn authorization_headers_and_key_shapes_are_scrubbed() {
        let cases = [
            ("authorization: Bearer abc.def-123456", "abc.def-123456"),
            ("\"x-api-key\": \"sk-ant-api03-XYZXYZXYZ\"", "XYZXYZXYZ"),
            (
                "calling with key sk-proj-0123456789abcdef",
                "0123456789abcdef",
            ),
            (
                "url=https://x.test/v1?key=AIzaSyA-1234567890abcdefghij",
                "1234567890abcdefghij",
            ),
            ("api_key=hunter2hunter2", "hunter2hunter2"),
            ("https://bob:pa55word@example.com/v1", "pa55word"),
        ];
        for (line, secret) in cases {
            let out = redact(line);
            assert!(!out.contains(secret), "{line} -> {out}");
            assert!(out.contains("[redacted]"), "{line} -> {out}");
        }
    }

    #[test]
    fn ordinary_lines_pass_unchanged() {
        let line = "conversation created id=0190 title=\"Trip plans\"";
        assert_eq!(redact(line), line);
    }
}
