//! The one-line status a run shows while it works: "Thinking…", "Using Time · Get Current
//! Time…", "Reading results…", "Writing the answer…".

use std::time::Duration;

pub const THINKING: &str = "Thinking…";
pub const WRITING: &str = "Writing the answer…";
pub const READING: &str = "Reading results…";
pub const WAITING_FOR_YOU: &str = "Waiting for your approval…";

/// "Using Server · Tool Name…", or a count when several run at once.
pub fn using(display_names: &[&str]) -> String {
    match display_names {
        [] => READING.to_owned(),
        [one] => format!("Using {one}…"),
        [first, rest @ ..] => format!("Using {first} and {} more…", rest.len()),
    }
}

/// "10 minutes", "90 seconds".
pub fn duration_words(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) {
        let m = secs / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else {
        format!("{secs} second{}", if secs == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_name_the_tool_in_use() {
        assert_eq!(
            using(&["Time · Get Current Time"]),
            "Using Time · Get Current Time…"
        );
        assert_eq!(
            using(&["A · B", "C · D", "E · F"]),
            "Using A · B and 2 more…"
        );
        assert_eq!(duration_words(Duration::from_secs(600)), "10 minutes");
        assert_eq!(duration_words(Duration::from_secs(90)), "90 seconds");
    }
}
