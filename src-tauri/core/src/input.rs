//! [`InvalidInput`]: a value a person typed that cannot be accepted, with the field at fault.
//! A leaf: every layer may use it, and it uses nothing.

/// A value a person entered that cannot be accepted, with the form field at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InvalidInput {
    /// The field name as the UI and the command line know it (`name`, `base_url`, `title`, …).
    pub field: &'static str,
    pub message: String,
}

impl InvalidInput {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}
