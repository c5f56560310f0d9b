//! Small text rules shared by every place a person types or reads a name: trimming, control
//! characters and length caps counted in characters, never bytes; tools' names as people see them.
//! Imports nothing of the app; which characters hide is Unicode's word, through the regex
//! crate's property tables.

/// Trims, turns every run of whitespace or control characters into one space, and keeps at most
/// `max_chars` characters (a trailing "…" marks a cut).
pub fn one_line(input: &str, max_chars: usize) -> String {
    let mut out = String::with_capacity(input.len().min(max_chars.saturating_mul(4)));
    let mut pending_space = false;
    let mut count = 0usize;
    let mut cut = false;
    for ch in input.chars() {
        if ch.is_whitespace() || ch.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        let needed = if pending_space { 2 } else { 1 };
        if count + needed > max_chars {
            cut = true;
            break;
        }
        if pending_space {
            out.push(' ');
            count += 1;
            pending_space = false;
        }
        out.push(ch);
        count += 1;
    }
    if cut && max_chars > 0 {
        // Make room for the ellipsis without splitting a character.
        while out.chars().count() + 1 > max_chars {
            out.pop();
        }
        let trimmed_len = out.trim_end().len();
        out.truncate(trimmed_len);
        out.push('…');
    }
    out
}

/// The characters that hide text or act on a display instead of showing as themselves, by
/// Unicode's own properties (the regex crate's tables, kept with each Unicode release) rather
/// than a list of ours: every default-ignorable code point (zero-width characters, variation
/// selectors, Hangul fillers, tag characters, …), every format character (bidi marks,
/// embeddings, overrides and isolates, the soft hyphen, the byte-order mark, …), every control
/// character but newline and tab, and the line and paragraph separators.
static HIDDEN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"[[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Bidi_Control}]--[\n\t]]",
    )
    .expect("the hidden characters' class compiles")
});

/// Whether `c` hides text or acts on a display instead of showing as itself ([`HIDDEN`]):
/// what approvals, lists and the terminal show as an escape instead of passing on.
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control() && c != '\n' && c != '\t';
    }
    let mut buf = [0u8; 4];
    HIDDEN.is_match(c.encode_utf8(&mut buf))
}

/// `text` without Unicode tag characters (U+E0000–E007F): invisible to a person, read by a
/// model as instructions ("ASCII smuggling"). What a tool's description becomes before a
/// model is offered it.
pub fn without_tags(text: &str) -> std::borrow::Cow<'_, str> {
    let tag = |c: char| ('\u{e0000}'..='\u{e007f}').contains(&c);
    if text.chars().any(tag) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !tag(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether `text` shows nothing: only spaces and [hidden](is_hidden) characters.
pub fn is_blank(text: &str) -> bool {
    text.chars().all(|c| c.is_whitespace() || is_hidden(c))
}

/// The first [hidden](is_hidden) character of `text`, written as `U+202E`, for a message that
/// refuses a name holding one.
pub fn first_hidden(text: &str) -> Option<String> {
    HIDDEN
        .find(text)
        .and_then(|m| m.as_str().chars().next())
        .map(|c| format!("U+{:04X}", u32::from(c)))
}

/// `text` with each [hidden](is_hidden) character written as JSON writes an escape (`\u001b`,
/// a surrogate pair beyond U+FFFF), so it shows instead of acting. Inside a JSON string that is
/// the same text once parsed, so one rule serves a terminal's words and its JSON lines.
pub fn escape_hidden(text: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    if !HIDDEN.is_match(text) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `value` with the tag characters taken out of every string in it, keys too
/// ([`without_tags`]): a tool's schema as a model reads it.
#[must_use]
pub fn without_tags_json(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(without_tags(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(without_tags_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (without_tags(k).into_owned(), without_tags_json(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `lines` as one text for a dialog or consent screen, a line each: within a line, a newline or
/// tab is written `\n` / `\t` (it would break the line) and every [hidden](is_hidden)
/// character as an escape.
pub fn escaped_lines<S: AsRef<str>>(lines: &[S]) -> String {
    lines
        .iter()
        .map(|line| {
            let line = line.as_ref().replace('\n', "\\n").replace('\t', "\\t");
            escape_hidden(&line).into_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// "read_file" → "Read File"; "get-sum" → "Get Sum".
pub fn title_case(name: &str) -> String {
    name.split(['_', '-', ' ', '.'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// How a person sees a tool: "Server · Its Title", its name title-cased when it has no title.
pub fn tool_display_name(server: &str, tool: &str, title: Option<&str>) -> String {
    match title {
        Some(title) => format!("{server} · {title}"),
        None => format!("{server} · {}", title_case(tool)),
    }
}

/// A number of bytes for a person: "512 bytes", "14 KB", "3.2 MB".
pub fn byte_size(bytes: u64) -> String {
    if bytes >= 1024 * 1024 {
        format!("{:.1} MB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Names joined as a sentence lists them: "a", "a and b", "a, b and c".
#[must_use]
pub fn and_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A fence longer than any run of backticks in `text`, so nothing in it can close it.
#[must_use]
pub fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::{escape_hidden, first_hidden, is_hidden, one_line, without_tags};

    #[test]
    fn what_hides_is_unicodes_word_by_property() {
        // One of each family the issue names, and some the old hand list missed.
        for (c, what) in [
            ('\u{200b}', "zero-width space (default-ignorable)"),
            ('\u{2060}', "word joiner"),
            ('\u{202e}', "bidi override"),
            ('\u{2067}', "bidi isolate"),
            ('\u{061c}', "Arabic letter mark"),
            ('\u{e0041}', "tag character"),
            ('\u{e007f}', "cancel tag"),
            ('\u{fe0f}', "variation selector"),
            ('\u{e0100}', "variation selector supplement"),
            ('\u{115f}', "Hangul choseong filler"),
            ('\u{3164}', "Hangul filler"),
            ('\u{ffa0}', "halfwidth Hangul filler"),
            ('\u{034f}', "combining grapheme joiner"),
            ('\u{17b4}', "Khmer vowel inherent"),
            ('\u{180e}', "Mongolian vowel separator"),
            ('\u{fff9}', "interlinear annotation anchor (format)"),
            ('\u{1d173}', "musical symbol begin beam (format)"),
            ('\u{2028}', "line separator"),
            ('\u{85}', "next line (C1 control)"),
            ('\u{7f}', "delete"),
            ('\u{1b}', "escape"),
        ] {
            assert!(is_hidden(c), "{what} U+{:04X}", u32::from(c));
        }
        for shown in ['a', 'é', '日', ' ', '\n', '\t', '\u{a0}', '😀', 'ж'] {
            assert!(!is_hidden(shown), "U+{:04X}", u32::from(shown));
        }
        assert_eq!(first_hidden("read\u{3164}file").as_deref(), Some("U+3164"));
    }

    #[test]
    fn tag_characters_leave_what_a_model_reads() {
        let smuggled =
            "Reads a file.\u{e0001}\u{e0049}\u{e0067}\u{e006e}\u{e006f}\u{e0072}\u{e0065}";
        assert_eq!(without_tags(smuggled), "Reads a file.");
        assert!(matches!(
            without_tags("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn hidden_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escape_hidden("plain\ttext\nlines é 日本"),
            "plain\ttext\nlines é 日本"
        );
        assert_eq!(
            escape_hidden("\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{9b}"),
            "\\u001b]0;pwned\\u0007\\u001b[2J\\u000d\\u009b"
        );
        assert_eq!(
            escape_hidden("a\u{202e}b\u{2066}c\u{ad}d"),
            "a\\u202eb\\u2066c\\u00add"
        );
        // A tag character (beyond U+FFFF) as JSON writes it: a surrogate pair.
        assert_eq!(escape_hidden("x\u{e0041}"), "x\\udb40\\udc41");
        let json = format!("\"{}\"", escape_hidden("\u{202e}\u{e0041}\u{fe0f}"));
        assert_eq!(
            serde_json::from_str::<String>(&json).unwrap(),
            "\u{202e}\u{e0041}\u{fe0f}",
            "an escaped JSON string parses back to the same text"
        );
    }

    #[test]
    fn whitespace_and_control_characters_collapse_to_single_spaces() {
        assert_eq!(one_line("  a\n\tb \u{7}  c  ", 50), "a b c");
    }

    #[test]
    fn a_long_value_is_cut_to_the_cap_with_an_ellipsis() {
        let long = "x".repeat(100_000);
        let out = one_line(&long, 200);
        assert_eq!(out.chars().count(), 200);
        assert!(out.ends_with('…'));
    }

    #[test]
    fn multibyte_characters_are_counted_as_characters() {
        let out = one_line(&"ж".repeat(300), 10);
        assert_eq!(out.chars().count(), 10);
        assert_eq!(out, format!("{}…", "ж".repeat(9)));
    }

    #[test]
    fn a_value_at_the_cap_is_kept_whole() {
        assert_eq!(one_line("abcde", 5), "abcde");
    }
}
