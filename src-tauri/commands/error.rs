//! The one error shape the webview sees: `{ kind, message, field }` — the core's
//! [`IpcError`], so its TypeScript declaration is generated with the rest.

pub use switchboard_core::IpcError as CommandError;

pub type CommandResult<T> = Result<T, CommandError>;

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_core::{CoreError, InvalidInput};

    #[test]
    fn an_invalid_field_serialises_as_kind_message_and_field() {
        let err: CommandError = CoreError::from(InvalidInput::new("base_url", "bad URL")).into();
        assert_eq!(
            serde_json::to_value(err).unwrap(),
            serde_json::json!({"kind": "invalid_input", "message": "bad URL", "field": "base_url"})
        );
    }
}
