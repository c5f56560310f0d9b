//! The terminal shows text and never obeys it: everything the command line writes (a model's
//! answer, tool and server names, a server's messages, JSON lines) passes through [`Terminal`],
//! which writes each hidden or display-controlling character ([`crate::text::is_hidden`]: escape
//! sequences, carriage returns, bidi overrides, tag characters, …) as a `\uXXXX` escape. An
//! answer cannot retitle, clear or rewrite the terminal, or hide text in it; inside a JSON
//! string the escape is the same text once parsed, so `--json` output stays exact.

use std::io::{self, Write};

/// A writer that escapes hidden characters on their way to `inner`. Text may arrive split
/// anywhere, even inside a character: an incomplete UTF-8 sequence at the end of one write
/// waits for the next.
pub(crate) struct Terminal<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Terminal<W> {
    pub(crate) fn new(inner: W) -> Self {
        Self {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for Terminal<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let mut start = 0;
        loop {
            match std::str::from_utf8(&self.pending[start..]) {
                Ok(text) => {
                    self.inner
                        .write_all(crate::text::escape_hidden(text).as_bytes())?;
                    start = self.pending.len();
                    break;
                }
                Err(e) => {
                    let valid = start + e.valid_up_to();
                    // from_utf8 said the bytes up to here are valid.
                    let text = std::str::from_utf8(&self.pending[start..valid]).unwrap_or_default();
                    self.inner
                        .write_all(crate::text::escape_hidden(text).as_bytes())?;
                    match e.error_len() {
                        // Bytes that are not UTF-8 at all: shown as the replacement character.
                        Some(bad) => {
                            self.inner.write_all("\u{fffd}".as_bytes())?;
                            start = valid + bad;
                        }
                        // The start of a character whose rest comes with the next write.
                        None => {
                            start = valid;
                            break;
                        }
                    }
                }
            }
        }
        self.pending.drain(..start);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes a line to stderr through a [`Terminal`].
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut err = $crate::cli::terminal::Terminal::new(std::io::stderr().lock());
        let _ = std::io::Write::write_fmt(&mut err, format_args!("{}\n", format_args!($($arg)*)));
    }};
}

/// Writes to stderr through a [`Terminal`] with no newline (a question), and flushes.
macro_rules! ask {
    ($($arg:tt)*) => {{
        let mut err = $crate::cli::terminal::Terminal::new(std::io::stderr().lock());
        let _ = std::io::Write::write_fmt(&mut err, format_args!($($arg)*));
        let _ = std::io::Write::flush(&mut err);
    }};
}

pub(crate) use {ask, say};

#[cfg(test)]
mod tests {
    use super::*;

    fn through(pieces: &[&[u8]]) -> String {
        let mut terminal = Terminal::new(Vec::new());
        for piece in pieces {
            terminal.write_all(piece).unwrap();
        }
        String::from_utf8(terminal.inner).unwrap()
    }

    #[test]
    fn an_answer_cannot_retitle_clear_or_overwrite_the_terminal() {
        let answer = "Done.\u{1b}]0;pwned\u{7}\u{1b}[2J\u{1b}[1A\rhidden\u{202e}txt.exe\n";
        let shown = through(&[answer.as_bytes()]);
        assert!(!shown.chars().any(crate::text::is_hidden), "{shown:?}");
        assert_eq!(
            shown,
            "Done.\\u001b]0;pwned\\u0007\\u001b[2J\\u001b[1A\\u000dhidden\\u202etxt.exe\n"
        );
    }

    #[test]
    fn a_character_split_between_writes_is_written_whole() {
        let text = "日\u{202e}本";
        let bytes = text.as_bytes();
        for cut in 1..bytes.len() {
            assert_eq!(
                through(&[&bytes[..cut], &bytes[cut..]]),
                "日\\u202e本",
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_show_as_replacement_characters() {
        assert_eq!(through(&[b"a\x9bb\xff"]), "a\u{fffd}b\u{fffd}");
    }
}
