//! Small text rules shared by every place a person types or reads a name: trimming, control
//! characters and length caps counted in characters, never bytes; tools' names as people see them.
//! Imports nothing.

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

#[cfg(test)]
mod tests {
    use super::one_line;

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
