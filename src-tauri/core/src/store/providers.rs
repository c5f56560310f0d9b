//! Provider rows: name, kind, base URL and default model. Never a key: keys live only in the
//! OS keychain (see [`crate::secrets`]).

use rusqlite::{params, OptionalExtension, Row};

use super::{new_id, now_ms, Store, StoreError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderRow {
    pub id: String,
    pub name: String,
    pub kind: String,
    pub base_url: String,
    pub default_model: Option<String>,
    pub created_at: i64,
}

const COLUMNS: &str = "id, name, kind, base_url, default_model, created_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<ProviderRow> {
    Ok(ProviderRow {
        id: row.get(0)?,
        name: row.get(1)?,
        kind: row.get(2)?,
        base_url: row.get(3)?,
        default_model: row.get(4)?,
        created_at: row.get(5)?,
    })
}

impl Store {
    /// Inserts a provider; `Ok(None)` when the name (case-insensitive) is taken.
    ///
    /// # Errors
    /// A failed query.
    pub async fn insert_provider(
        &self,
        name: String,
        kind: String,
        base_url: String,
        default_model: Option<String>,
    ) -> Result<Option<ProviderRow>, StoreError> {
        self.call(move |conn| {
            let row = ProviderRow {
                id: new_id(),
                name,
                kind,
                base_url,
                default_model,
                created_at: now_ms(),
            };
            let inserted = conn.execute(
                "INSERT INTO providers (id, name, kind, base_url, default_model, created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(name) DO NOTHING",
                params![
                    row.id,
                    row.name,
                    row.kind,
                    row.base_url,
                    row.default_model,
                    row.created_at
                ],
            )?;
            Ok((inserted == 1).then_some(row))
        })
        .await
    }

    /// # Errors
    /// A failed query.
    pub async fn list_providers(&self) -> Result<Vec<ProviderRow>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM providers ORDER BY name COLLATE NOCASE"
            ))?;
            let rows = stmt.query_map([], from_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    /// Looks a provider up by name, ignoring case.
    ///
    /// # Errors
    /// A failed query.
    pub async fn find_provider(&self, name: String) -> Result<Option<ProviderRow>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    &format!("SELECT {COLUMNS} FROM providers WHERE name = ?1"),
                    [&name],
                    from_row,
                )
                .optional()?)
        })
        .await
    }

    /// # Errors
    /// [`StoreError::NotFound`] when there is no such provider.
    pub async fn update_provider(
        &self,
        id: String,
        base_url: String,
        default_model: Option<String>,
    ) -> Result<ProviderRow, StoreError> {
        self.call(move |conn| {
            let changed = conn.execute(
                "UPDATE providers SET base_url = ?2, default_model = ?3 WHERE id = ?1",
                params![id, base_url, default_model],
            )?;
            if changed == 0 {
                return Err(StoreError::NotFound {
                    what: format!("provider {id}"),
                });
            }
            Ok(conn.query_row(
                &format!("SELECT {COLUMNS} FROM providers WHERE id = ?1"),
                [&id],
                from_row,
            )?)
        })
        .await
    }

    /// Deletes a provider row; `false` when there was none.
    ///
    /// # Errors
    /// A failed query.
    pub async fn delete_provider(&self, id: String) -> Result<bool, StoreError> {
        self.call(move |conn| Ok(conn.execute("DELETE FROM providers WHERE id = ?1", [&id])? == 1))
            .await
    }

    /// Whether the person said `model` of this provider takes images (`None`: they did not
    /// say; the model's family decides).
    ///
    /// # Errors
    /// A failed query.
    pub async fn takes_images(
        &self,
        provider_id: String,
        model: String,
    ) -> Result<Option<bool>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT COALESCE(takes_images, listed_images) FROM provider_models \
                     WHERE provider_id = ?1 AND model = ?2",
                    [&provider_id, &model],
                    |row| row.get::<_, Option<bool>>(0),
                )
                .optional()?
                .flatten())
        })
        .await
    }

    /// Records what a provider's model list says of its models' images (the person's own word,
    /// [`Store::set_takes_images`], still wins).
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_listed_images(
        &self,
        provider_id: String,
        listed: Vec<(String, bool)>,
    ) -> Result<(), StoreError> {
        if listed.is_empty() {
            return Ok(());
        }
        self.call(move |conn| {
            let tx = conn.transaction()?;
            for (model, takes) in &listed {
                tx.execute(
                    "INSERT INTO provider_models (provider_id, model, listed_images) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (provider_id, model) DO UPDATE SET listed_images = excluded.listed_images",
                    params![provider_id, model, takes],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Sets how `model` of provider `provider_id` is given tools (`native`, `prompted` or
    /// `off`: the app's `ToolMode`), by the person (`learned` false) or as Switchboard learned
    /// it; `None` forgets that word.
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_tool_mode(
        &self,
        provider_id: String,
        model: String,
        learned: bool,
        mode: Option<&'static str>,
    ) -> Result<(), StoreError> {
        let column = if learned {
            "tools_learned"
        } else {
            "tools_person"
        };
        self.call(move |conn| {
            conn.execute(
                &format!(
                    "INSERT INTO provider_models (provider_id, model, {column}) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (provider_id, model) DO UPDATE SET {column} = excluded.{column}"
                ),
                params![provider_id, model, mode],
            )?;
            Ok(())
        })
        .await
    }

    /// Records what was learned of how each of `models` (model, mode) of provider
    /// `provider_id` is given tools (its server's word on what it can do), in one transaction.
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_learned_tool_modes(
        &self,
        provider_id: String,
        models: Vec<(String, &'static str)>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            {
                let mut upsert = tx.prepare(
                    "INSERT INTO provider_models (provider_id, model, tools_learned) \
                     VALUES (?1, ?2, ?3) \
                     ON CONFLICT (provider_id, model) DO UPDATE SET tools_learned = excluded.tools_learned",
                )?;
                for (model, mode) in &models {
                    upsert.execute(params![provider_id, model, mode])?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Records that `model` of the provider named `provider` refused tools in its API: it is
    /// given them by prompt from now on (unless the person said otherwise).
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_native_tools_refused(
        &self,
        provider: String,
        model: String,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO provider_models (provider_id, model, tools_learned) \
                 SELECT id, ?2, 'prompted' FROM providers WHERE name = ?1 \
                 ON CONFLICT (provider_id, model) DO UPDATE SET tools_learned = 'prompted'",
                params![provider, model],
            )?;
            Ok(())
        })
        .await
    }

    /// How `model` of provider `provider_id` is given tools: the person's word, then what was
    /// learned (each `None` when nothing was said).
    ///
    /// # Errors
    /// A failed query.
    pub async fn tool_mode(
        &self,
        provider_id: String,
        model: String,
    ) -> Result<(Option<String>, Option<String>), StoreError> {
        self.call(move |conn| {
            let found = conn
                .query_row(
                    "SELECT tools_person, tools_learned FROM provider_models \
                     WHERE provider_id = ?1 AND model = ?2",
                    params![provider_id, model],
                    |row| {
                        Ok((
                            row.get::<_, Option<String>>(0)?,
                            row.get::<_, Option<String>>(1)?,
                        ))
                    },
                )
                .optional()?;
            Ok(found.unwrap_or_default())
        })
        .await
    }

    /// Records the person's word on whether `model` takes images (`None` forgets it).
    ///
    /// # Errors
    /// A failed query.
    pub async fn set_takes_images(
        &self,
        provider_id: String,
        model: String,
        takes: Option<bool>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO provider_models (provider_id, model, takes_images) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (provider_id, model) DO UPDATE SET takes_images = excluded.takes_images",
                params![provider_id, model, takes],
            )?;
            Ok(())
        })
        .await
    }
}
