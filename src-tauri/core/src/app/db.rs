//! [`Db`], the database as each service holds it: the store, or why it could not be opened
//! (every storage operation then reports that), cheap to clone. The lookups several services
//! share (a provider by name) live here, so a service needs the database and nothing of
//! another service.

use crate::error::{CoreError, DatabaseUnavailable};
use crate::store::{ProviderRow, Store};
use crate::text::one_line;

#[derive(Clone)]
pub struct Db(Result<Store, DatabaseUnavailable>);

impl Db {
    pub fn new(opened: Result<Store, DatabaseUnavailable>) -> Self {
        Self(opened)
    }

    /// The database, or why it is unavailable.
    ///
    /// # Errors
    /// [`CoreError::DatabaseUnavailable`].
    pub fn store(&self) -> Result<&Store, CoreError> {
        self.0.as_ref().map_err(|e| CoreError::from(e.clone()))
    }

    /// Why the database could not be opened, if it could not.
    pub fn error(&self) -> Option<&DatabaseUnavailable> {
        self.0.as_ref().err()
    }

    /// The provider called `name` (trimmed).
    ///
    /// # Errors
    /// [`CoreError::NotFound`]; the database.
    pub async fn provider_row(&self, name: &str) -> Result<ProviderRow, CoreError> {
        self.store()?
            .find_provider(name.trim().to_owned())
            .await?
            .ok_or_else(|| CoreError::NotFound {
                what: format!("provider “{}”", one_line(name, 80)),
            })
    }
}
