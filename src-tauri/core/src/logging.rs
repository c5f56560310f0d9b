//! Logging: `tracing` to stderr and to a daily-rotated file in the app's log folder, with
//! anything that looks like a credential scrubbed from every line before it is written.
//!
//! Keys are never logged on purpose (they are `SecretString`s); the scrubber is the second
//! line of defence against a header or URL that carries one. It masks by shape (a bearer
//! token, `sk-…`), by name (`GITHUB_TOKEN=…`, `API_KEY: …`) and by value: every value the
//! keychain was given or gave back this run is in [`Masks`], and masked wherever it would be
//! printed.

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

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
        // A variable or header whose name ends like a secret's: GITHUB_TOKEN=…, MY_API_KEY: …,
        // X-Auth-Token: … (a keychain reference, `<keychain:…>`, is left as it is).
        r#"(?i)(\b[a-z0-9_.-]*(?:token|secret|passwd|password|[_-]key|apikey|credential|_pat|[_-]auth|cookie)["']?\s*[:=]\s*["']?)[^\s"',;&}<]+"#,
    ]
    .iter()
    .map(|p| Regex::new(p).expect("secret pattern compiles"))
    .collect()
});

/// The secret values known this run, masked wherever a line is written. Values shorter than
/// [`Masks::SHORTEST`] are not kept: masking `1` or `true` everywhere would hide the log, not
/// a secret.
#[derive(Clone, Default)]
pub struct Masks(Arc<RwLock<Vec<String>>>);

impl Masks {
    pub const SHORTEST: usize = 6;

    /// Remembers `value` to be masked from now on.
    pub fn add(&self, value: &str) {
        let value = value.trim();
        if value.chars().count() < Self::SHORTEST {
            return;
        }
        let mut known = self.0.write().unwrap_or_else(PoisonError::into_inner);
        if !known.iter().any(|k| k == value) {
            known.push(value.to_owned());
            // Longest first, so a value holding another is masked whole.
            known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        }
    }

    /// Whether no value is known.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// `text` with every known value replaced by `[redacted]`.
    #[must_use]
    pub fn mask<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let known = self.0.read().unwrap_or_else(PoisonError::into_inner);
        if !known.iter().any(|k| text.contains(k.as_str())) {
            return std::borrow::Cow::Borrowed(text);
        }
        let mut out = text.to_owned();
        for value in known.iter() {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), "[redacted]");
            }
        }
        std::borrow::Cow::Owned(out)
    }

    /// `line` masked by value, then by shape and name ([`redact`]).
    #[must_use]
    pub fn scrub(&self, line: &str) -> String {
        redact(&self.mask(line))
    }
}

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

/// Wraps a writer so each formatted event passes through [`Masks::scrub`].
#[derive(Clone)]
pub struct Redacting<M>(pub M, pub Masks);

pub struct RedactingWriter<W>(W, Masks);

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(self.1.scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Redacting<M> {
    type Writer = RedactingWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter(self.0.make_writer(), self.1.clone())
    }
}

/// The daily log, each of its files the person's alone (0600 on Unix): the appender makes a
/// new file at the turn of the day with the process's default mode, so the first line written
/// on a new day (and the first of the run) makes the folder's log files private.
struct PrivateDaily {
    inner: tracing_appender::rolling::RollingFileAppender,
    #[cfg_attr(not(unix), allow(dead_code))] // only Unix has modes to set
    dir: std::path::PathBuf,
    day: Option<u64>,
}

impl PrivateDaily {
    fn new(inner: tracing_appender::rolling::RollingFileAppender, dir: &Path) -> PrivateDaily {
        let mut log = PrivateDaily {
            inner,
            dir: dir.to_path_buf(),
            day: None,
        };
        log.make_private();
        log
    }

    fn make_private(&mut self) {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let Ok(entries) = std::fs::read_dir(&self.dir) else {
                return;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if !name.to_string_lossy().starts_with("switchboard.") {
                    continue;
                }
                if let Ok(meta) = entry.metadata() {
                    if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
                        let _ = std::fs::set_permissions(
                            entry.path(),
                            std::fs::Permissions::from_mode(0o600),
                        );
                    }
                }
            }
        }
    }
}

impl Write for PrivateDaily {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        let day = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400);
        if self.day != Some(day) {
            self.day = Some(day);
            self.make_private();
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Keep this alive for as long as the process logs; dropping it flushes the file.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
    masks: Masks,
}

impl LogGuard {
    /// The values this log masks: hand them to the secret store
    /// ([`crate::secrets::Masking`]) so each secret it sees is masked.
    #[must_use]
    pub fn masks(&self) -> Masks {
        self.masks.clone()
    }
}

/// Starts logging: to stderr at `stderr_level` and, with `log_dir`, to
/// `switchboard.YYYY-MM-DD.log` there at `file_level`, keeping the last 7 days (rmcp's own
/// messages go to the file only). `RUST_LOG` overrides both levels. Calling it twice is harmless: the second call changes
/// nothing, and the masks it returns are not the log's (a process logs through its first).
pub fn init(log_dir: Option<&Path>, stderr_level: &str, file_level: &str) -> LogGuard {
    let masks = Masks::default();
    let filter =
        |level: &str| EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let stderr_layer = tracing_subscriber::fmt::layer()
        .with_writer(Redacting(io::stderr, masks.clone()))
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
        let (writer, g) = tracing_appender::non_blocking(PrivateDaily::new(appender, dir));
        guard = Some(g);
        Some(
            tracing_subscriber::fmt::layer()
                .with_writer(Redacting(writer, masks.clone()))
                .with_ansi(false)
                .with_filter(filter(file_level)),
        )
    });

    let _ = tracing_subscriber::registry()
        .with(stderr_layer)
        .with(file_layer)
        .try_init();
    LogGuard {
        _file: guard,
        masks,
    }
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
    fn secrets_are_masked_by_their_name_and_by_their_value() {
        for (line, secret) in [
            ("GITHUB_TOKEN=ghp_abcdef123", "ghp_abcdef123"),
            (
                "command=GITHUB_PERSONAL_ACCESS_TOKEN='tok-1234' docker run",
                "tok-1234",
            ),
            ("MY_API_KEY: plain-value-9", "plain-value-9"),
            ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "wJalrXUtnFEMI"),
            ("X-Auth-Token: 0123abcd", "0123abcd"),
            ("DB_PASSWORD=hunter22", "hunter22"),
        ] {
            let out = redact(line);
            assert!(!out.contains(secret), "{line} -> {out}");
        }
        // What is not a secret's value stays: a count of tokens, a keychain reference.
        for kept in [
            "input_tokens=1200 output_tokens=80",
            "API_TOKEN='<keychain:mcp/x/env/API_TOKEN>' uvx t",
        ] {
            assert_eq!(redact(kept), kept);
        }
        let masks = super::Masks::default();
        masks.add("plain-but-known");
        masks.add("abc"); // too short to be masked everywhere
        let out = masks.scrub("server said plain-but-known and abc");
        assert_eq!(out, "server said [redacted] and abc");
    }

    #[test]
    fn ordinary_lines_pass_unchanged() {
        let line = "conversation created id=0190 title=\"Trip plans\"";
        assert_eq!(redact(line), line);
    }
}
