//! Profiles as kept: a name, a system prompt, a model, the loop's limits and a tool set; which
//! one is the default; and a profile put on a conversation (its prompt, model and switches
//! copied in one transaction). The app checks a profile before it gets here.

use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use serde::{Deserialize, Serialize};

use super::tool_loop::toggle_from_row;
use super::{conversations, new_id, now_ms, Conversation, Store, StoreError, ToolToggle};

/// A profile: what a conversation that follows it is told, asks and may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Profile {
    pub id: String,
    pub name: String,
    #[serde(flatten)]
    #[ts(flatten)]
    pub fields: ProfileFields,
    /// New conversations start from it.
    pub is_default: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

/// What the person sets in a profile (and what its JSON export holds).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct ProfileFields {
    pub system_prompt: String,
    /// The provider (by name) and model; none for Settings' default model.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// The loop's limits; none for Settings' value.
    pub max_rounds: Option<u32>,
    pub tool_timeout_secs: Option<u32>,
    pub run_time_limit_secs: Option<u32>,
    /// Switches for servers (`tool` null) and tools; anything not listed is on.
    pub tools: Vec<ToolToggle>,
}

const COLUMNS: &str = "id, name, system_prompt, provider, model, max_rounds, tool_timeout_secs, \
    run_time_limit_secs, is_default, created_at, updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Profile> {
    Ok(Profile {
        id: row.get(0)?,
        name: row.get(1)?,
        fields: ProfileFields {
            system_prompt: row.get(2)?,
            provider: row.get(3)?,
            model: row.get(4)?,
            max_rounds: row.get(5)?,
            tool_timeout_secs: row.get(6)?,
            run_time_limit_secs: row.get(7)?,
            tools: Vec::new(),
        },
        is_default: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
    })
}

fn not_found(what: &str) -> StoreError {
    StoreError::NotFound {
        what: format!("profile {what}"),
    }
}

fn with_tools(conn: &Connection, mut profile: Profile) -> Result<Profile, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT server, tool, enabled FROM profile_tools WHERE profile_id = ?1 \
         ORDER BY server, tool",
    )?;
    profile.fields.tools = stmt
        .query_map([&profile.id], toggle_from_row)?
        .collect::<Result<_, _>>()?;
    Ok(profile)
}

fn get(conn: &Connection, id: &str) -> Result<Profile, StoreError> {
    let found = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM profiles WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?
        .ok_or_else(|| not_found(id))?;
    with_tools(conn, found)
}

/// Whether `name` is taken by a profile other than `except` (names are unique, any case).
fn name_taken(conn: &Connection, name: &str, except: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM profiles WHERE name = ?1 COLLATE NOCASE AND id <> ?2)",
        params![name, except],
        |row| row.get(0),
    )
}

fn write_fields(tx: &Transaction<'_>, id: &str, fields: &ProfileFields) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE profiles SET system_prompt = ?2, provider = ?3, model = ?4, max_rounds = ?5, \
         tool_timeout_secs = ?6, run_time_limit_secs = ?7 WHERE id = ?1",
        params![
            id,
            fields.system_prompt,
            fields.provider,
            fields.model,
            fields.max_rounds,
            fields.tool_timeout_secs,
            fields.run_time_limit_secs
        ],
    )?;
    tx.execute("DELETE FROM profile_tools WHERE profile_id = ?1", [id])?;
    let mut insert = tx.prepare_cached(
        "INSERT INTO profile_tools (profile_id, server, tool, enabled) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT (profile_id, server, tool) DO UPDATE SET enabled = excluded.enabled",
    )?;
    for toggle in &fields.tools {
        insert.execute(params![
            id,
            toggle.server,
            toggle.tool.as_deref().unwrap_or_default(),
            toggle.enabled
        ])?;
    }
    Ok(())
}

/// The error for a name another profile has.
fn taken(name: &str) -> StoreError {
    StoreError::Conflict {
        what: format!("A profile named “{name}” exists already."),
    }
}

/// Puts `profile` on the conversation `conversation_id`: it follows the profile from now on,
/// told the profile's system prompt, asking its model (when it names one) with its switches.
pub(super) fn apply(
    tx: &Transaction<'_>,
    conversation_id: &str,
    profile: &Profile,
) -> Result<(), StoreError> {
    conversations::get(tx, conversation_id)?;
    let fields = &profile.fields;
    tx.execute(
        "UPDATE conversations SET profile_id = ?2, system_prompt = ?3, \
         provider = COALESCE(?4, provider), model = CASE WHEN ?4 IS NULL THEN model ELSE ?5 END \
         WHERE id = ?1",
        params![
            conversation_id,
            profile.id,
            fields.system_prompt,
            fields.provider,
            fields.model
        ],
    )?;
    // The switches every new conversation starts with, and the profile's over them: a server
    // it does not name stays as Settings' defaults have it.
    tx.execute(
        "DELETE FROM conversation_tools WHERE conversation_id = ?1",
        [conversation_id],
    )?;
    tx.execute(
        "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
         SELECT ?1, server, tool, enabled FROM default_tools",
        [conversation_id],
    )?;
    // A server's switch in the profile sets all its tools: the defaults' tool switches go.
    tx.execute(
        "DELETE FROM conversation_tools WHERE conversation_id = ?1 AND tool <> '' AND server IN \
         (SELECT server FROM profile_tools WHERE profile_id = ?2 AND tool = '')",
        params![conversation_id, profile.id],
    )?;
    tx.execute(
        "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
         SELECT ?1, server, tool, enabled FROM profile_tools WHERE profile_id = ?2 \
         ON CONFLICT (conversation_id, server, tool) DO UPDATE SET enabled = excluded.enabled",
        params![conversation_id, profile.id],
    )?;
    // And its project's over them.
    super::projects::apply_switches(tx, conversation_id)?;
    Ok(())
}

impl Store {
    /// Every profile, by name.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        self.call(|conn| {
            let found: Vec<Profile> = {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM profiles ORDER BY name COLLATE NOCASE"
                ))?;
                let rows = stmt.query_map([], from_row)?;
                rows.collect::<Result<_, _>>()?
            };
            found.into_iter().map(|p| with_tools(conn, p)).collect()
        })
        .await
    }

    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn get_profile(&self, id: String) -> Result<Profile, StoreError> {
        self.call(move |conn| get(conn, &id)).await
    }

    /// The profile new conversations start from, if one is.
    ///
    /// # Errors
    /// A failed query.
    pub async fn default_profile(&self) -> Result<Option<Profile>, StoreError> {
        self.call(|conn| {
            let id: Option<String> = conn
                .query_row("SELECT id FROM profiles WHERE is_default = 1", [], |row| {
                    row.get(0)
                })
                .optional()?;
            id.map(|id| get(conn, &id)).transpose()
        })
        .await
    }

    /// Keeps a new profile named `name` (checked and tidied by the caller).
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the name is taken; a failed query.
    pub async fn create_profile(
        &self,
        name: String,
        fields: ProfileFields,
    ) -> Result<Profile, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            if name_taken(&tx, &name, "")? {
                return Err(taken(&name));
            }
            let (id, now) = (new_id(), now_ms());
            tx.execute(
                "INSERT INTO profiles (id, name, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                params![id, name, now],
            )?;
            write_fields(&tx, &id, &fields)?;
            let made = get(&tx, &id)?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }

    /// Renames a profile and sets what it holds. The conversations that follow it keep the
    /// prompt, model and switches it gave them (put on again, they take the new ones); its
    /// limits count in them from their next message.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::Conflict`] when the name is another's.
    pub async fn update_profile(
        &self,
        id: String,
        name: String,
        fields: ProfileFields,
    ) -> Result<Profile, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            get(&tx, &id)?;
            if name_taken(&tx, &name, &id)? {
                return Err(taken(&name));
            }
            tx.execute(
                "UPDATE profiles SET name = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, name, now_ms()],
            )?;
            write_fields(&tx, &id, &fields)?;
            let updated = get(&tx, &id)?;
            tx.commit()?;
            Ok(updated)
        })
        .await
    }

    /// Deletes a profile; the conversations that followed it keep what it gave them.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn delete_profile(&self, id: String) -> Result<(), StoreError> {
        self.call(move |conn| {
            let changed = conn.execute("DELETE FROM profiles WHERE id = ?1", [&id])?;
            if changed == 0 {
                return Err(not_found(&id));
            }
            Ok(())
        })
        .await
    }

    /// Makes `id` the profile new conversations start from; `None`: none is.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn set_default_profile(&self, id: Option<String>) -> Result<(), StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            tx.execute(
                "UPDATE profiles SET is_default = 0 WHERE is_default = 1",
                [],
            )?;
            if let Some(id) = id {
                let changed =
                    tx.execute("UPDATE profiles SET is_default = 1 WHERE id = ?1", [&id])?;
                if changed == 0 {
                    return Err(not_found(&id));
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// Puts a profile on a conversation (see [`apply`]); `None` leaves the conversation with
    /// what it has, following no profile.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] (conversation or profile); a failed query.
    pub async fn set_conversation_profile(
        &self,
        conversation_id: String,
        profile_id: Option<String>,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            match profile_id {
                Some(id) => apply(&tx, &conversation_id, &get(&tx, &id)?)?,
                None => {
                    conversations::get(&tx, &conversation_id)?;
                    tx.execute(
                        "UPDATE conversations SET profile_id = NULL WHERE id = ?1",
                        [&conversation_id],
                    )?;
                }
            }
            let updated = conversations::get(&tx, &conversation_id)?;
            tx.commit()?;
            Ok(updated)
        })
        .await
    }

    /// A new conversation that follows the profile `profile_id` from its first message;
    /// `named` as [`Store::create_conversation_with`].
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn create_conversation_from_profile(
        &self,
        title: String,
        profile_id: String,
        named: bool,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let profile = get(&tx, &profile_id)?;
            let id = conversations::insert(&tx, &title, None, None, None, "", named)?;
            apply(&tx, &id, &profile)?;
            let made = conversations::get(&tx, &id)?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }
}
