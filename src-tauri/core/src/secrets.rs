//! Secrets (provider API keys, later secret MCP env values): the [`SecretStore`] trait, the OS
//! keychain behind it ([`KeyringStore`]: Secret Service on Linux, Keychain on macOS, Credential
//! Manager on Windows) and [`MemoryStore`] for tests.
//!
//! A secret is written and read here and nowhere else: never to SQLite, settings, logs, stdout
//! or the webview. When no keychain is reachable the caller gets [`SecretError::Unavailable`]
//! and nothing is kept anywhere else.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use secrecy::{ExposeSecret, SecretString};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    #[error("No OS keychain is reachable ({detail})")]
    Unavailable { detail: String },
    #[error("The OS keychain refused access ({detail}); unlock it and try again")]
    AccessDenied { detail: String },
    #[error("The OS keychain failed: {detail}")]
    Failed { detail: String },
}

/// Blocking access to a place that keeps secrets. Callers on the async runtime use
/// `spawn_blocking`.
pub trait SecretStore: Send + Sync {
    /// A human name for the backend, shown in the UI.
    fn backend(&self) -> String;
    /// # Errors
    /// The keychain is unreachable, locked or failed.
    fn set(&self, account: &str, secret: &SecretString) -> Result<(), SecretError>;
    /// # Errors
    /// The keychain is unreachable, locked or failed.
    fn get(&self, account: &str) -> Result<Option<SecretString>, SecretError>;
    /// Deletes a secret; deleting one that is not there is not an error.
    ///
    /// # Errors
    /// The keychain is unreachable, locked or failed.
    fn delete(&self, account: &str) -> Result<(), SecretError>;
    /// Checks that the store can be used at all.
    ///
    /// # Errors
    /// Why it cannot.
    fn probe(&self) -> Result<(), SecretError>;
    /// `text` with what looks like a credential hidden, and every value this store was given
    /// or gave back, where it knows them: for text that leaves Switchboard other than through
    /// the log (a desktop notification). Never blocks.
    fn scrub(&self, text: &str) -> String {
        crate::logging::redact(text)
    }
}

/// A secret store that tells the log of every value it stores or reads, so that the value is
/// masked in every line written from then on ([`crate::logging::Masks`]).
pub struct Masking<S> {
    inner: S,
    masks: crate::logging::Masks,
}

impl<S: SecretStore> Masking<S> {
    pub fn new(inner: S, masks: crate::logging::Masks) -> Self {
        Self { inner, masks }
    }
}

impl<S: SecretStore + ?Sized> SecretStore for std::sync::Arc<S> {
    fn backend(&self) -> String {
        (**self).backend()
    }

    fn set(&self, account: &str, secret: &SecretString) -> Result<(), SecretError> {
        (**self).set(account, secret)
    }

    fn get(&self, account: &str) -> Result<Option<SecretString>, SecretError> {
        (**self).get(account)
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        (**self).delete(account)
    }

    fn probe(&self) -> Result<(), SecretError> {
        (**self).probe()
    }

    fn scrub(&self, text: &str) -> String {
        (**self).scrub(text)
    }
}

impl<S: SecretStore> SecretStore for Masking<S> {
    fn backend(&self) -> String {
        self.inner.backend()
    }

    fn set(&self, account: &str, secret: &SecretString) -> Result<(), SecretError> {
        self.masks.add(secret.expose_secret());
        self.inner.set(account, secret)
    }

    fn get(&self, account: &str) -> Result<Option<SecretString>, SecretError> {
        let got = self.inner.get(account)?;
        if let Some(secret) = &got {
            self.masks.add(secret.expose_secret());
        }
        Ok(got)
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.inner.delete(account)
    }

    fn probe(&self) -> Result<(), SecretError> {
        self.inner.probe()
    }

    fn scrub(&self, text: &str) -> String {
        self.masks.scrub(text)
    }
}

/// The account name a provider's key is kept under.
pub fn provider_account(provider_name: &str) -> String {
    format!("provider/{provider_name}")
}

/// The OS keychain via the `keyring` crate. Every entry lives under one service name, which
/// [`crate::AppPaths::keychain_service`] namespaces per home.
pub struct KeyringStore {
    service: String,
}

impl KeyringStore {
    pub fn new(service: impl Into<String>) -> Self {
        Self {
            service: service.into(),
        }
    }

    fn entry(&self, account: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(&self.service, account).map_err(map_keyring)
    }
}

fn map_keyring(err: keyring::Error) -> SecretError {
    match err {
        keyring::Error::NoStorageAccess(e) => SecretError::AccessDenied {
            detail: e.to_string(),
        },
        keyring::Error::PlatformFailure(e) => SecretError::Unavailable {
            detail: e.to_string(),
        },
        other => SecretError::Failed {
            detail: other.to_string(),
        },
    }
}

impl SecretStore for KeyringStore {
    fn backend(&self) -> String {
        if cfg!(target_os = "macos") {
            "macOS Keychain".into()
        } else if cfg!(windows) {
            "Windows Credential Manager".into()
        } else {
            "Secret Service (GNOME Keyring, KWallet, KeePassXC)".into()
        }
    }

    fn set(&self, account: &str, secret: &SecretString) -> Result<(), SecretError> {
        self.entry(account)?
            .set_password(secret.expose_secret())
            .map_err(map_keyring)
    }

    fn get(&self, account: &str) -> Result<Option<SecretString>, SecretError> {
        match self.entry(account)?.get_password() {
            Ok(secret) => Ok(Some(SecretString::from(secret))),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_keyring(e)),
        }
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        match self.entry(account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(map_keyring(e)),
        }
    }

    fn probe(&self) -> Result<(), SecretError> {
        self.get("probe/availability").map(|_| ())
    }
}

/// Secrets kept in this process's memory only: for tests, never for a person's keys.
#[derive(Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<String, SecretString>>,
    unavailable: Option<String>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that behaves like a machine with no keychain at all.
    pub fn unreachable(detail: impl Into<String>) -> Self {
        Self {
            entries: Mutex::default(),
            unavailable: Some(detail.into()),
        }
    }

    /// Whether some account's value holds `value` (a test's look at what was kept).
    pub fn holds_value(&self, value: &str) -> bool {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .any(|v| v.expose_secret().contains(value))
    }

    fn check(&self) -> Result<(), SecretError> {
        match &self.unavailable {
            Some(detail) => Err(SecretError::Unavailable {
                detail: detail.clone(),
            }),
            None => Ok(()),
        }
    }
}

impl SecretStore for MemoryStore {
    fn backend(&self) -> String {
        "in-memory (tests only)".into()
    }

    fn set(&self, account: &str, secret: &SecretString) -> Result<(), SecretError> {
        self.check()?;
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(account.to_owned(), secret.clone());
        Ok(())
    }

    fn get(&self, account: &str) -> Result<Option<SecretString>, SecretError> {
        self.check()?;
        Ok(self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(account)
            .cloned())
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.check()?;
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(account);
        Ok(())
    }

    fn probe(&self) -> Result<(), SecretError> {
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memory_store_keeps_replaces_and_deletes_a_secret() {
        let store = MemoryStore::new();
        let account = provider_account("OpenAI");
        assert!(store.get(&account).unwrap().is_none());
        store.set(&account, &SecretString::from("sk-one")).unwrap();
        store.set(&account, &SecretString::from("sk-two")).unwrap();
        assert_eq!(
            store.get(&account).unwrap().unwrap().expose_secret(),
            "sk-two"
        );
        store.delete(&account).unwrap();
        store.delete(&account).unwrap();
        assert!(store.get(&account).unwrap().is_none());
    }

    #[test]
    fn scrubbing_hides_the_values_a_masking_store_saw_and_key_shapes() {
        let store = std::sync::Arc::new(Masking::new(
            MemoryStore::new(),
            crate::logging::Masks::default(),
        ));
        store
            .set(
                "mcp:weather:TOKEN",
                &SecretString::from("plain-words-9f3k2"),
            )
            .unwrap();
        let shared: std::sync::Arc<dyn SecretStore> = store;
        let said = shared.scrub("Failed: token plain-words-9f3k2 refused; sk-abcdefgh12345 too");
        assert!(!said.contains("plain-words-9f3k2"), "{said}");
        assert!(!said.contains("abcdefgh12345"), "{said}");
        assert!(said.starts_with("Failed: token [redacted]"), "{said}");
        // A store that knows no values still hides a key by its shape.
        assert_eq!(
            MemoryStore::new().scrub("key sk-abcdefgh12345"),
            "key sk-[redacted]"
        );
    }

    #[test]
    fn a_secret_never_shows_in_debug_output() {
        let secret = SecretString::from("sk-live-very-secret");
        assert!(!format!("{secret:?}").contains("very-secret"));
    }

    /// `keyring` 3 silently falls back to an in-memory mock when no platform backend is
    /// compiled in; that must never ship. On Linux the entry must be a Secret Service one.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_keychain_backend_on_linux_is_secret_service_not_the_mock() {
        let entry = keyring::Entry::new("switchboard-test", "probe").unwrap();
        assert!(entry
            .get_credential()
            .downcast_ref::<keyring::secret_service::SsCredential>()
            .is_some());
    }

    /// Runs against the real keychain only when `SWITCHBOARD_TEST_KEYCHAIN=1` — set by
    /// tests/e2e/session.sh inside its private D-Bus with a throwaway gnome-keyring, never a
    /// person's own keyring — and fails there if the keychain cannot be reached.
    #[test]
    fn the_os_keychain_round_trips_a_key() {
        if std::env::var_os("SWITCHBOARD_TEST_KEYCHAIN").is_none() {
            eprintln!("skipped: set SWITCHBOARD_TEST_KEYCHAIN=1 (tests/e2e/session.sh does) to use a real keychain");
            return;
        }
        let store = KeyringStore::new(format!("switchboard-test-{}", std::process::id()));
        store.probe().expect("the test keychain is reachable");
        let account = provider_account("Round Trip");
        store
            .set(&account, &SecretString::from("sk-roundtrip-123"))
            .unwrap();
        assert_eq!(
            store.get(&account).unwrap().unwrap().expose_secret(),
            "sk-roundtrip-123"
        );
        store.delete(&account).unwrap();
        assert!(store.get(&account).unwrap().is_none());
    }
}
