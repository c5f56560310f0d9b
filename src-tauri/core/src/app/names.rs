//! The names a person gives profiles and projects: checked the same way (one line, not blank,
//! at most so many characters), and a free one chosen when a copy or an import meets a name
//! already taken ("Name (2)", "Name (3)"…, compared in any case, always within the limit).

use crate::input::InvalidInput;
use crate::text::one_line;

/// `name` on one line, refused when blank or longer than `max_chars`; `what` is the thing
/// named ("profile", "project").
pub(super) fn check_name(name: &str, max_chars: usize, what: &str) -> Result<String, InvalidInput> {
    let name = one_line(name, usize::MAX);
    if crate::text::is_blank(&name) {
        return Err(InvalidInput::new("name", format!("Name the {what}.")));
    }
    if name.chars().count() > max_chars {
        return Err(InvalidInput::new(
            "name",
            format!("Keep the name to {max_chars} characters or fewer."),
        ));
    }
    Ok(name)
}

/// `name` itself when `is_taken` says it is free, else the first of "name (2)", "name (3)"…
/// that is, its base shortened so that the whole stays within `max_chars`.
pub(super) fn free_name(name: &str, max_chars: usize, is_taken: impl Fn(&str) -> bool) -> String {
    if !is_taken(name) {
        return name.to_owned();
    }
    (2u32..)
        .map(|n| {
            let suffix = format!(" ({n})");
            let room = max_chars.saturating_sub(suffix.chars().count());
            format!("{}{suffix}", one_line(name, room))
        })
        .find(|candidate| !is_taken(candidate))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_line_not_blank_and_within_its_limit() {
        assert_eq!(
            check_name("  Deep\n research ", 60, "profile").unwrap(),
            "Deep research"
        );
        let blank = check_name(" \u{200b} ", 60, "project").unwrap_err();
        assert_eq!(
            (blank.field, blank.message.as_str()),
            ("name", "Name the project.")
        );
        assert!(check_name(&"x".repeat(61), 60, "profile").is_err());
        assert!(check_name(&"x".repeat(60), 60, "profile").is_ok());
    }

    #[test]
    fn a_taken_name_gets_the_next_free_number_within_the_limit() {
        let taken = ["Coding", "coding (2)"];
        let is_taken = |n: &str| taken.iter().any(|t| t.eq_ignore_ascii_case(n));
        assert_eq!(free_name("Research", 60, is_taken), "Research");
        assert_eq!(free_name("CODING", 60, is_taken), "CODING (3)");
        // A hundredth copy of a name at the limit stays within it.
        let long = "x".repeat(60);
        let copies: Vec<String> = std::iter::once(long.clone())
            .chain((2..100).map(|n| {
                let suffix = format!(" ({n})");
                format!("{}{suffix}", one_line(&long, 60 - suffix.chars().count()))
            }))
            .collect();
        let hundredth = free_name(&long, 60, |n| copies.iter().any(|c| c == n));
        assert!(hundredth.ends_with("… (100)"), "{hundredth}");
        assert_eq!(hundredth.chars().count(), 60);
    }
}
