//! The one error shape the webview sees: `{ kind, message, field }`.

use serde::Serialize;
use switchboard_core::settings::SettingsError;
use switchboard_core::CoreError;

#[derive(Debug, Clone, Serialize)]
pub struct CommandError {
    pub kind: &'static str,
    pub message: String,
    pub field: Option<&'static str>,
}

impl From<CoreError> for CommandError {
    fn from(err: CoreError) -> Self {
        Self {
            kind: err.kind(),
            field: err.field(),
            message: err.to_string(),
        }
    }
}

impl From<SettingsError> for CommandError {
    fn from(err: SettingsError) -> Self {
        CoreError::from(err).into()
    }
}

pub type CommandResult<T> = Result<T, CommandError>;

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::InvalidInput;

    #[test]
    fn an_invalid_field_serialises_as_kind_message_and_field() {
        let err: CommandError = CoreError::from(InvalidInput::new("base_url", "bad URL")).into();
        assert_eq!(
            serde_json::to_value(err).unwrap(),
            serde_json::json!({"kind": "invalid_input", "message": "bad URL", "field": "base_url"})
        );
    }
}
