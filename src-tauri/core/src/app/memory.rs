//! Memory on the core's side (issue 62): which memory a conversation uses (its project's when
//! that is on; outside projects, the person's own when Settings say so; none otherwise — and
//! then nothing is remembered or told), a fact checked before it is kept, the facts listed,
//! added, edited and deleted, and what a turn is told of them: the relevant ones under a
//! heading, within a share of the window.

use super::db::Db;
use super::App;
use crate::error::CoreError;
pub use crate::knowledge::{check_fact, MAX_FACT_CHARS};
use crate::store::{Memory, MemoryScope, Project};
use crate::text::one_line;

/// The prompt's part for the facts given (`project`: whose memory, none for the person's own),
/// within `room` characters; the facts given.
#[must_use]
pub fn memory_part(
    project: Option<&str>,
    facts: &[Memory],
    room: usize,
) -> Option<(String, Vec<Memory>)> {
    let whose = match project {
        Some(name) => format!("the project “{name}”'s memory"),
        None => "the person's memory".to_owned(),
    };
    let mut part = format!(
        "## What you remember\n\nFacts kept in {whose} from earlier conversations (the person \
         can change or delete them). Use them where they help."
    );
    let mut given = Vec::new();
    for fact in facts {
        let line = format!("\n- {}", one_line(&fact.text, MAX_FACT_CHARS));
        if part.len() + line.len() > room && !given.is_empty() {
            break;
        }
        part.push_str(&line);
        given.push(fact.clone());
    }
    (!given.is_empty()).then_some((part, given))
}

/// The facts kept. Holds only the database; reached as `app.memory()`.
#[derive(Clone)]
pub struct Memories {
    db: Db,
}

impl Memories {
    pub(super) fn new(db: Db) -> Self {
        Self { db }
    }

    /// The facts of one memory (`project`: by id or name; none: the person's own), or of all
    /// (`every`), newest first.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn list(&self, project: Option<&str>, every: bool) -> Result<Vec<Memory>, CoreError> {
        let scope = if every {
            None
        } else {
            Some(self.scope(project).await?)
        };
        Ok(self.db.store()?.list_memories(scope).await?)
    }

    /// Keeps a fact the person wrote in a memory (`project` by id or name; none: their own).
    ///
    /// # Errors
    /// A blank or too long fact; no such project; the database.
    pub async fn add(&self, project: Option<&str>, text: &str) -> Result<Memory, CoreError> {
        let fact = check_fact(text)?;
        let scope = self.scope(project).await?;
        Ok(self.db.store()?.add_memory(scope, fact, None).await?)
    }

    /// # Errors
    /// A blank or too long fact; no such fact; the database.
    pub async fn edit(&self, id: &str, text: &str) -> Result<Memory, CoreError> {
        let fact = check_fact(text)?;
        Ok(self.db.store()?.update_memory(id.to_owned(), fact).await?)
    }

    /// # Errors
    /// No such fact; the database.
    pub async fn delete(&self, id: &str) -> Result<(), CoreError> {
        if self.db.store()?.delete_memory(id.to_owned()).await? {
            Ok(())
        } else {
            Err(CoreError::NotFound {
                what: format!("remembered fact {}", one_line(id, 60)),
            })
        }
    }

    async fn scope(&self, project: Option<&str>) -> Result<MemoryScope, CoreError> {
        Ok(match project {
            Some(key) => {
                MemoryScope::Project(super::Projects::new(self.db.clone()).get(key).await?.id)
            }
            None => MemoryScope::Own,
        })
    }
}

impl App {
    /// Switches the person's own memory (outside projects) on or off.
    ///
    /// # Errors
    /// The settings cannot be written.
    pub async fn set_own_memory(&self, on: bool) -> Result<(), CoreError> {
        let _one_at_a_time = self.settings_writes.lock().await;
        let mut settings = self.settings.load();
        settings.memory = on;
        self.settings.save(&settings)?;
        Ok(())
    }

    /// Switches a project's memory (by id or name) on or off.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn set_project_memory(&self, key: &str, on: bool) -> Result<Project, CoreError> {
        let project = self.projects().get(key).await?;
        let fields = crate::store::ProjectFields {
            memory: on,
            ..project.fields
        };
        Ok(self
            .store()?
            .update_project(project.id, project.name, fields)
            .await?)
    }

    /// The memory a turn in `project` (none: outside projects) uses, if it is on.
    #[must_use]
    pub fn memory_for(&self, project: Option<&Project>) -> Option<MemoryScope> {
        match project {
            Some(p) => p.fields.memory.then(|| MemoryScope::Project(p.id.clone())),
            None => self.settings().memory.then_some(MemoryScope::Own),
        }
    }

    /// What a turn is told of `scope`'s memory for `question`, within `room` characters.
    ///
    /// # Errors
    /// The database.
    pub(super) async fn memory_prompt(
        &self,
        scope: &MemoryScope,
        project: Option<&Project>,
        question: Option<&str>,
        room: usize,
    ) -> Result<Option<(String, Vec<Memory>)>, CoreError> {
        let words = question
            .map(crate::knowledge::query_words)
            .unwrap_or_default();
        let facts = self
            .store()?
            .relevant_memories(scope.clone(), words)
            .await?;
        Ok(memory_part(project.map(|p| p.name.as_str()), &facts, room))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(text: &str) -> Memory {
        Memory {
            id: text.into(),
            project_id: None,
            text: text.into(),
            conversation_id: None,
            conversation_title: None,
            from_conversation: false,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn a_fact_is_one_line_of_at_most_500_characters() {
        assert_eq!(
            check_fact(" The bike\nis blue. ").unwrap(),
            "The bike is blue."
        );
        assert!(check_fact(" \u{200b}").is_err());
        assert!(check_fact(&"x".repeat(MAX_FACT_CHARS + 1)).is_err());
    }

    #[test]
    fn facts_are_given_under_a_heading_within_their_room_and_at_least_one() {
        let facts = [fact("The bike is blue."), fact("The cat is called Tom.")];
        let (part, given) = memory_part(Some("Home"), &facts, 10_000).unwrap();
        assert!(
            part.starts_with("## What you remember\n\nFacts kept in the project “Home”'s memory")
        );
        assert!(part.ends_with("\n- The bike is blue.\n- The cat is called Tom."));
        assert_eq!(given.len(), 2);
        let (_, one) = memory_part(None, &facts, 10).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(memory_part(None, &[], 10_000), None);
    }
}
