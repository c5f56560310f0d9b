//! [`Keychain`], the secret store as each service holds it: every call runs off the async
//! runtime (a platform keychain may block, or ask the person), its errors typed.

use std::sync::Arc;

use crate::error::CoreError;
use crate::secrets::{SecretError, SecretStore};

#[derive(Clone)]
pub struct Keychain(Arc<dyn SecretStore>);

impl Keychain {
    pub fn new(store: Arc<dyn SecretStore>) -> Self {
        Self(store)
    }

    /// The store itself, for work that must hold it (a server's launch reads its keys).
    pub fn store(&self) -> &Arc<dyn SecretStore> {
        &self.0
    }

    /// Runs `work` with the store on a blocking thread.
    ///
    /// # Errors
    /// What `work` says, or [`SecretError::Failed`] when its thread was lost.
    pub async fn run<T, F>(&self, work: F) -> Result<T, CoreError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn SecretStore) -> Result<T, SecretError> + Send + 'static,
    {
        let store = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || work(store.as_ref()))
            .await
            .map_err(|e| SecretError::Failed {
                detail: e.to_string(),
            })?
            .map_err(CoreError::from)
    }
}
