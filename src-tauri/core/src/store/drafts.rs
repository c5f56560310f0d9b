//! The `drafts` table: what the composer of a conversation holds until it is sent, one row
//! per conversation while there is something, kept as the app's JSON (the store does not
//! read it, but for the files it names: see `sweep_attachments`). A row goes with its
//! conversation.

use rusqlite::{params, OptionalExtension};

use super::{conversations, now_ms, Store, StoreError};

impl Store {
    /// Keeps `draft` (JSON) as what conversation `conversation_id`'s composer holds; `None`
    /// forgets it.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] when there is no such conversation; a failed query.
    pub async fn save_draft(
        &self,
        conversation_id: String,
        draft: Option<String>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conversations::get(conn, &conversation_id)?;
            match draft {
                Some(draft) => conn.execute(
                    "INSERT INTO drafts (conversation_id, draft, updated_at) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (conversation_id) DO UPDATE SET draft = ?2, updated_at = ?3",
                    params![conversation_id, draft, now_ms()],
                )?,
                None => conn.execute(
                    "DELETE FROM drafts WHERE conversation_id = ?1",
                    [&conversation_id],
                )?,
            };
            Ok(())
        })
        .await
    }

    /// What conversation `conversation_id`'s composer held (JSON), if anything.
    ///
    /// # Errors
    /// A failed query.
    pub async fn draft(&self, conversation_id: String) -> Result<Option<String>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .query_row(
                    "SELECT draft FROM drafts WHERE conversation_id = ?1",
                    [&conversation_id],
                    |row| row.get(0),
                )
                .optional()?)
        })
        .await
    }
}
