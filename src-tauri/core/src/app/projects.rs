//! Projects on the core's side (issue 62): a project checked before it is kept (a name on one
//! line, instructions no longer than a system prompt, a profile that exists), found by id or
//! name, a conversation made in one or moved between them, and the instructions a turn adds
//! to its system prompt.

use serde::Deserialize;

use super::db::Db;
use super::App;
use crate::error::{CoreError, InvalidInput};
use crate::store::{Conversation, Project, ProjectFields, StoreError};
use crate::text::one_line;

/// The longest project name, in characters.
pub const MAX_PROJECT_NAME_CHARS: usize = 60;

/// A project as the window or the command line gives it: the profile by id or name.
#[derive(Debug, Clone, Default, Deserialize, ts_rs::TS)]
pub struct ProjectInput {
    pub name: String,
    #[serde(default)]
    pub instructions: String,
    /// The profile (id or name) its new conversations start from; none: the default profile.
    #[serde(default)]
    pub profile: Option<String>,
}

fn check_name(name: &str) -> Result<String, InvalidInput> {
    let name = one_line(name, usize::MAX);
    if crate::text::is_blank(&name) {
        return Err(InvalidInput::new("name", "Name the project."));
    }
    if name.chars().count() > MAX_PROJECT_NAME_CHARS {
        return Err(InvalidInput::new(
            "name",
            format!("Keep the name to {MAX_PROJECT_NAME_CHARS} characters or fewer."),
        ));
    }
    Ok(name)
}

fn name_taken(e: StoreError) -> CoreError {
    match e {
        StoreError::Conflict { what } => CoreError::Conflict {
            field: "name",
            message: what,
        },
        other => other.into(),
    }
}

/// The part of the system prompt a project adds: its instructions under its name; `None` when
/// it has none.
#[must_use]
pub fn project_prompt(project: &Project) -> Option<String> {
    let text = project.fields.instructions.trim();
    (!text.is_empty()).then(|| format!("## Project “{}”\n\n{text}", project.name))
}

/// The person's projects. Holds only the database; reached as `app.projects()`.
#[derive(Clone)]
pub struct Projects {
    db: Db,
}

impl Projects {
    pub(super) fn new(db: Db) -> Self {
        Self { db }
    }

    /// # Errors
    /// The database.
    pub async fn list(&self) -> Result<Vec<Project>, CoreError> {
        Ok(self.db.store()?.list_projects().await?)
    }

    /// The project with this id, else with this name (any case).
    ///
    /// # Errors
    /// [`CoreError::NotFound`]; the database.
    pub async fn get(&self, key: &str) -> Result<Project, CoreError> {
        let key = key.trim();
        let all = self.list().await?;
        all.iter()
            .find(|p| p.id == key)
            .or_else(|| all.iter().find(|p| p.name.eq_ignore_ascii_case(key)))
            .cloned()
            .ok_or_else(|| CoreError::NotFound {
                what: format!("project “{}”", one_line(key, 80)),
            })
    }

    /// A name and fields as kept: checked, tidied, the profile named by its id.
    async fn checked(&self, input: &ProjectInput) -> Result<(String, ProjectFields), CoreError> {
        let name = check_name(&input.name)?;
        let instructions =
            crate::settings::tidy_system_prompt("instructions", &input.instructions)?;
        let profile_id = match input.profile.as_deref().map(str::trim) {
            Some(key) if !key.is_empty() => {
                Some(super::Profiles::new(self.db.clone()).get(key).await?.id)
            }
            _ => None,
        };
        Ok((
            name,
            ProjectFields {
                instructions,
                profile_id,
            },
        ))
    }

    /// # Errors
    /// A name that is blank, too long or taken; instructions too long; no such profile; the
    /// database.
    pub async fn create(&self, input: &ProjectInput) -> Result<Project, CoreError> {
        let (name, fields) = self.checked(input).await?;
        self.db
            .store()?
            .create_project(name, fields)
            .await
            .map_err(name_taken)
    }

    /// Sets a project's name, instructions and profile.
    ///
    /// # Errors
    /// As [`Projects::create`]; no such project.
    pub async fn update(&self, key: &str, input: &ProjectInput) -> Result<Project, CoreError> {
        let id = self.get(key).await?.id;
        let (name, fields) = self.checked(input).await?;
        self.db
            .store()?
            .update_project(id, name, fields)
            .await
            .map_err(name_taken)
    }

    /// Deletes a project; its conversations stay, in no project. Returns how many there were.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn delete(&self, key: &str) -> Result<u32, CoreError> {
        let id = self.get(key).await?.id;
        Ok(self.db.store()?.delete_project(id).await?)
    }

    /// Moves a conversation into a project (by id or name), or out of any (`None`).
    ///
    /// # Errors
    /// No such conversation or project; the database.
    pub async fn move_conversation(
        &self,
        conversation_id: &str,
        key: Option<&str>,
    ) -> Result<Conversation, CoreError> {
        let project = match key {
            Some(key) => Some(self.get(key).await?.id),
            None => None,
        };
        Ok(self
            .db
            .store()?
            .move_conversation(conversation_id.to_owned(), project)
            .await?)
    }

    /// The project a conversation answers in (a lane: its conversation's).
    ///
    /// # Errors
    /// The database.
    pub async fn of_conversation(
        &self,
        conversation_id: &str,
    ) -> Result<Option<Project>, CoreError> {
        Ok(self
            .db
            .store()?
            .project_of(conversation_id.to_owned())
            .await?)
    }
}

impl App {
    /// A new conversation in a project (by id or name): it starts from the project's profile,
    /// or the default profile when the project names none.
    ///
    /// # Errors
    /// No such project; as [`App::create_conversation`].
    pub async fn create_conversation_in(
        &self,
        title: Option<&str>,
        system_prompt: Option<&str>,
        project: &str,
    ) -> Result<Conversation, CoreError> {
        let project = self.projects().get(project).await?;
        let profile = match &project.fields.profile_id {
            Some(id) => super::ProfileChoice::Named(id.clone()),
            None => super::ProfileChoice::Default,
        };
        let made = self
            .create_conversation(title, system_prompt, &profile)
            .await?;
        Ok(self.store()?.start_in_project(made.id, project.id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_line_and_not_blank() {
        assert_eq!(check_name("  Bridge\n works ").unwrap(), "Bridge works");
        assert_eq!(check_name(" \u{200b} ").unwrap_err().field, "name");
        assert!(check_name(&"x".repeat(MAX_PROJECT_NAME_CHARS + 1)).is_err());
    }

    #[test]
    fn a_project_adds_its_instructions_under_its_name_and_nothing_without_them() {
        let mut project = Project {
            id: "p".into(),
            name: "Bridge".into(),
            fields: ProjectFields::default(),
            created_at: 0,
            updated_at: 0,
            conversations: 0,
        };
        assert_eq!(project_prompt(&project), None);
        project.fields.instructions = " \n".into();
        assert_eq!(project_prompt(&project), None);
        project.fields.instructions = "Steel, not wood.\n".into();
        assert_eq!(
            project_prompt(&project).as_deref(),
            Some("## Project “Bridge”\n\nSteel, not wood.")
        );
    }
}
