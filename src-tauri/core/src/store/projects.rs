//! Projects (issue 62): a name, instructions added to the system prompt of each of its
//! conversations, the profile a conversation made in it starts from, and its conversations. A
//! conversation is in one project or none; a lane of a comparison answers in its
//! conversation's project. Names are unique in any case (the column's collation).

use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use super::{conversations, new_id, now_ms, Conversation, Store, StoreError};

/// What a project holds besides its name, as the person set it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ProjectFields {
    /// Added to the system prompt of each of its conversations, after the profile's.
    #[serde(default)]
    pub instructions: String,
    /// The profile a conversation made in the project starts from (none: the default's).
    #[serde(default)]
    pub profile_id: Option<String>,
    /// The model may save facts to the project's memory and is told those relevant.
    #[serde(default)]
    pub memory: bool,
    /// Switches for servers (`tool` null) and tools, put over the profile's on each
    /// conversation that starts in the project or moves into it; a server not named stays as
    /// the conversation has it.
    #[serde(default)]
    pub tools: Vec<super::ToolToggle>,
    /// Its folders (absolute paths): while a turn in the project runs, the servers it uses are
    /// given them as their roots in place of their own, and a path argument outside them asks.
    #[serde(default)]
    pub roots: Vec<String>,
}

/// A project, with how many conversations are in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Project {
    pub id: String,
    pub name: String,
    #[serde(flatten)]
    #[ts(flatten)]
    pub fields: ProjectFields,
    #[ts(type = "number")]
    pub created_at: i64,
    #[ts(type = "number")]
    pub updated_at: i64,
    /// Its conversations (a comparison's lanes not counted).
    pub conversations: u32,
}

const SELECT: &str =
    "SELECT p.id, p.name, p.instructions, p.profile_id, p.created_at, p.updated_at, \
     (SELECT COUNT(*) FROM conversations c WHERE c.project_id = p.id AND c.lane_of IS NULL), \
     p.memory, p.tools, p.roots FROM projects p";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Project> {
    Ok(Project {
        id: row.get(0)?,
        name: row.get(1)?,
        fields: ProjectFields {
            instructions: row.get(2)?,
            profile_id: row.get(3)?,
            memory: row.get(7)?,
            tools: json_column(row, 8)?,
            roots: json_column(row, 9)?,
        },
        created_at: row.get(4)?,
        updated_at: row.get(5)?,
        conversations: row.get(6)?,
    })
}

/// A column that holds a list as JSON.
fn json_column<T: serde::de::DeserializeOwned>(row: &Row<'_>, at: usize) -> rusqlite::Result<T> {
    let json: String = row.get(at)?;
    serde_json::from_str(&json).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(at, rusqlite::types::Type::Text, e.into())
    })
}

fn to_json<T: Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Task(e.to_string()))
}

/// Puts the switches of the project `conversation_id` is in (if any) over the ones it and its
/// lanes have: a server's switch sets all its tools, a tool's only that tool.
pub(super) fn apply_switches(
    tx: &rusqlite::Transaction<'_>,
    conversation_id: &str,
) -> Result<(), StoreError> {
    let project: Option<String> = tx.query_row(
        "SELECT project_id FROM conversations WHERE id = ?1",
        [conversation_id],
        |row| row.get(0),
    )?;
    let Some(project) = project else {
        return Ok(());
    };
    let tools = get(tx, &project)?.fields.tools;
    let mut whole_server = tx.prepare_cached(
        "DELETE FROM conversation_tools WHERE tool <> '' AND server = ?2 AND conversation_id IN \
         (SELECT id FROM conversations WHERE id = ?1 OR lane_of = ?1)",
    )?;
    let mut set = tx.prepare_cached(
        "INSERT INTO conversation_tools (conversation_id, server, tool, enabled) \
         SELECT id, ?2, ?3, ?4 FROM conversations WHERE id = ?1 OR lane_of = ?1 \
         ON CONFLICT (conversation_id, server, tool) DO UPDATE SET enabled = excluded.enabled",
    )?;
    // Servers first, so that a tool's switch after its server's stands.
    let mut ordered: Vec<&super::ToolToggle> = tools.iter().collect();
    ordered.sort_by_key(|t| t.tool.is_some());
    for toggle in ordered {
        let tool = toggle.tool.as_deref().unwrap_or_default();
        if tool.is_empty() {
            whole_server.execute(params![conversation_id, toggle.server])?;
        }
        set.execute(params![
            conversation_id,
            toggle.server,
            tool,
            toggle.enabled
        ])?;
    }
    Ok(())
}

fn not_found(what: &str) -> StoreError {
    StoreError::NotFound {
        what: format!("project {what}"),
    }
}

fn taken(name: &str) -> StoreError {
    StoreError::Conflict {
        what: format!("A project named “{name}” exists already."),
    }
}

fn get(conn: &Connection, id: &str) -> Result<Project, StoreError> {
    conn.query_row(&format!("{SELECT} WHERE p.id = ?1"), [id], from_row)
        .optional()?
        .ok_or_else(|| not_found(id))
}

fn name_taken(conn: &Connection, name: &str, except: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM projects WHERE name = ?1 AND id <> ?2)",
        params![name, except],
        |row| row.get(0),
    )
}

/// A profile named by a project is one that exists.
fn check_profile(conn: &Connection, fields: &ProjectFields) -> Result<(), StoreError> {
    let Some(id) = &fields.profile_id else {
        return Ok(());
    };
    let exists: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM profiles WHERE id = ?1)",
        [id],
        |row| row.get(0),
    )?;
    if exists {
        Ok(())
    } else {
        Err(StoreError::NotFound {
            what: format!("profile {id}"),
        })
    }
}

impl Store {
    /// Every project, by name.
    ///
    /// # Errors
    /// A failed query.
    pub async fn list_projects(&self) -> Result<Vec<Project>, StoreError> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(&format!("{SELECT} ORDER BY p.name"))?;
            let rows = stmt.query_map([], from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn get_project(&self, id: String) -> Result<Project, StoreError> {
        self.call(move |conn| get(conn, &id)).await
    }

    /// The project with the id `key`, else the one named `key` (in any case, as names are
    /// kept unique).
    ///
    /// # Errors
    /// A failed query.
    pub async fn find_project(&self, key: String) -> Result<Option<Project>, StoreError> {
        self.call(move |conn| {
            Ok(conn
                .prepare_cached(&format!(
                    "{SELECT} WHERE p.id = ?1 OR p.name = ?1 ORDER BY p.id = ?1 DESC LIMIT 1"
                ))?
                .query_row([key], from_row)
                .optional()?)
        })
        .await
    }

    /// Keeps a new project named `name` (checked and tidied by the caller).
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the name is taken; [`StoreError::NotFound`] for a profile
    /// that is not there; a failed query.
    pub async fn create_project(
        &self,
        name: String,
        fields: ProjectFields,
    ) -> Result<Project, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            if name_taken(&tx, &name, "")? {
                return Err(taken(&name));
            }
            check_profile(&tx, &fields)?;
            let (id, now) = (new_id(), now_ms());
            tx.execute(
                "INSERT INTO projects (id, name, instructions, profile_id, memory, tools, roots, \
                 created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
                params![
                    id,
                    name,
                    fields.instructions,
                    fields.profile_id,
                    fields.memory,
                    to_json(&fields.tools)?,
                    to_json(&fields.roots)?,
                    now
                ],
            )?;
            let made = get(&tx, &id)?;
            tx.commit()?;
            Ok(made)
        })
        .await
    }

    /// Renames a project and sets what it holds; its conversations are told its new
    /// instructions from their next message.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] (the project, its profile); [`StoreError::Conflict`] when the
    /// name is another's; a failed query.
    pub async fn update_project(
        &self,
        id: String,
        name: String,
        fields: ProjectFields,
    ) -> Result<Project, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            get(&tx, &id)?;
            if name_taken(&tx, &name, &id)? {
                return Err(taken(&name));
            }
            check_profile(&tx, &fields)?;
            tx.execute(
                "UPDATE projects SET name = ?2, instructions = ?3, profile_id = ?4, memory = ?5, \
                 tools = ?6, roots = ?7, updated_at = ?8 WHERE id = ?1",
                params![
                    id,
                    name,
                    fields.instructions,
                    fields.profile_id,
                    fields.memory,
                    to_json(&fields.tools)?,
                    to_json(&fields.roots)?,
                    now_ms()
                ],
            )?;
            let updated = get(&tx, &id)?;
            tx.commit()?;
            Ok(updated)
        })
        .await
    }

    /// Deletes a project; its conversations stay, in no project. Returns how many there were.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; a failed query.
    pub async fn delete_project(&self, id: String) -> Result<u32, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let had = get(&tx, &id)?.conversations;
            tx.execute("DELETE FROM projects WHERE id = ?1", [&id])?;
            tx.commit()?;
            Ok(had)
        })
        .await
    }

    /// Moves a conversation (and its comparison's lanes) into `project_id`, or out of any
    /// project (`None`). Its place in the list (when it was last used) stays as it is.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] (the conversation, the project); a failed query.
    pub async fn move_conversation(
        &self,
        conversation_id: String,
        project_id: Option<String>,
    ) -> Result<Conversation, StoreError> {
        self.put_in_project(conversation_id, project_id, true).await
    }

    /// Puts a conversation just made into a project: left unused, it is discarded as any other.
    ///
    /// # Errors
    /// As [`Store::move_conversation`].
    pub async fn start_in_project(
        &self,
        conversation_id: String,
        project_id: String,
    ) -> Result<Conversation, StoreError> {
        self.put_in_project(conversation_id, Some(project_id), false)
            .await
    }

    /// Moves a conversation (and its lanes) into a project or out of any; `keep`: the person
    /// moved it, so it is kept even unused.
    async fn put_in_project(
        &self,
        conversation_id: String,
        project_id: Option<String>,
        keep: bool,
    ) -> Result<Conversation, StoreError> {
        self.call(move |conn| {
            let tx = conn.transaction()?;
            // A lane of a comparison answers in its conversation's project: it is never moved
            // on its own.
            if conversations::get(&tx, &conversation_id)?.lane_of.is_some() {
                return Err(StoreError::NotFound {
                    what: format!("conversation {conversation_id}"),
                });
            }
            if let Some(project) = &project_id {
                get(&tx, project)?;
            }
            tx.execute(
                "UPDATE conversations SET project_id = ?2, kept = kept OR ?3 \
                 WHERE id = ?1 OR lane_of = ?1",
                params![conversation_id, project_id, keep],
            )?;
            apply_switches(&tx, &conversation_id)?;
            let moved = conversations::get(&tx, &conversation_id)?;
            tx.commit()?;
            Ok(moved)
        })
        .await
    }

    /// The project a conversation answers in: its own, or for a lane of a comparison, its
    /// conversation's.
    ///
    /// # Errors
    /// A failed query.
    pub async fn project_of(&self, conversation_id: String) -> Result<Option<Project>, StoreError> {
        self.call(move |conn| {
            let id: Option<String> = conn
                .query_row(
                    "SELECT COALESCE((SELECT o.project_id FROM conversations o WHERE o.id = c.lane_of), \
                     c.project_id) FROM conversations c WHERE c.id = ?1",
                    [&conversation_id],
                    |row| row.get(0),
                )
                .optional()?
                .flatten();
            id.map(|id| get(conn, &id)).transpose()
        })
        .await
    }
}
