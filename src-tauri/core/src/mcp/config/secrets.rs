//! Secret values out of mcp.json: an `env` or `headers` value whose name looks secret goes to
//! the OS keychain, and the file keeps only a reference to it.

use crate::secrets::{SecretError, SecretStore};

use super::{ConfigValue, ServerEntry};

/// Whether an env or header name usually holds a secret (a token, key, password, cookie or
/// session): its value goes to the keychain when added, and is masked wherever it is shown.
pub fn looks_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    [
        "token",
        "secret",
        "password",
        "passwd",
        "key",
        "credential",
        "_pat",
        "auth",
        "cookie",
        "session",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The keychain account a server's secret value is kept under.
pub fn secret_account(server: &str, place: &str, key: &str) -> String {
    format!("mcp/{server}/{place}/{key}")
}

/// Whether `account` is one of `server`'s own keychain entries (`mcp/<server>/…`), the only
/// ones its entry may name: never a provider's key or another server's secret.
pub fn is_own_account(server: &str, account: &str) -> bool {
    account
        .strip_prefix("mcp/")
        .and_then(|rest| rest.strip_prefix(server))
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Moves every plain `env` / `headers` value whose name looks secret into the keychain and
/// leaves a reference in the entry. Returns the names moved.
///
/// # Errors
/// The keychain refused a value; values already moved stay moved (the entry is not changed).
pub fn move_secrets_to_keychain(
    server: &str,
    entry: &mut ServerEntry,
    secrets: &dyn SecretStore,
) -> Result<Vec<String>, SecretError> {
    let mut moved = Vec::new();
    let mut updated = entry.clone();
    // A plain, non-empty value goes to the keychain and the entry keeps its reference.
    let mut keep = |place: &str, key: &str, value: &mut ConfigValue| -> Result<(), SecretError> {
        let ConfigValue::Plain(plain) = value else {
            return Ok(());
        };
        if plain.is_empty() {
            return Ok(());
        }
        let account = secret_account(server, place, key);
        secrets.set(&account, &secrecy::SecretString::from(plain.clone()))?;
        *value = ConfigValue::Keychain { keychain: account };
        moved.push(format!("{place}.{key}"));
        Ok(())
    };
    for (place, values) in [("env", &mut updated.env), ("headers", &mut updated.headers)] {
        for (key, value) in values.iter_mut().filter(|(key, _)| looks_secret(key)) {
            keep(place, key, value)?;
        }
    }
    // An OAuth client secret is a secret whatever it is called.
    if let Some(value) = updated
        .oauth
        .as_mut()
        .and_then(|o| o.client_secret.as_mut())
    {
        keep("oauth", "clientSecret", value)?;
    }
    *entry = updated;
    Ok(moved)
}
