//! Skills on the app's side (issue 61): the person's skills folder with each skill's switch
//! for every conversation, adding (from a folder or a `.zip`), removing, exporting, a skill in
//! full with the conversations that used it, a conversation's switch for a skill, and the
//! skills a conversation's run may load. The file system is read off the async runtime.

use std::path::PathBuf;

use serde::Serialize;

use super::App;
use crate::error::CoreError;
use crate::skills::{Library, Skill, SWITCHES};
use crate::store::{SkillUse, ToolToggle};

/// A skill in full, as its page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct SkillDetail {
    pub skill: Skill,
    /// Its instructions (what follows the front matter), as the model is given them.
    pub instructions: String,
    /// The conversations whose model loaded it, newest first.
    pub used_in: Vec<SkillUse>,
}

/// A skill and whether a conversation may use it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ConversationSkill {
    pub skill: Skill,
    /// On in this conversation: on for every conversation, and not switched off here.
    pub on: bool,
    /// Switched off in this conversation (or by the profile it follows).
    pub switched_off_here: bool,
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, crate::skills::SkillError> + Send + 'static,
) -> Result<T, CoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CoreError::Io {
            what: "the skills folder".to_owned(),
            detail: e.to_string(),
        })?
        .map_err(CoreError::from)
}

impl App {
    /// The person's skills folder.
    #[must_use]
    pub fn skill_library(&self) -> Library {
        Library::new(self.paths().skills_dir())
    }

    /// Every skill in the skills folder, with its switch for every conversation.
    ///
    /// # Errors
    /// The database.
    pub async fn skills(&self) -> Result<Vec<Skill>, CoreError> {
        let library = self.skill_library();
        let mut skills = blocking(move || Ok(library.list())).await?;
        let switches = self.store()?.skill_switches().await?;
        for skill in &mut skills {
            skill.enabled = skill.problem.is_none() && switches.get(&skill.name) != Some(&false);
        }
        Ok(skills)
    }

    /// Keeps the skill at `source` (a folder or a `.zip`); it is on for every conversation.
    ///
    /// # Errors
    /// Not a skill, one refused by the checks, or one of that name already there.
    pub async fn add_skill(&self, source: PathBuf) -> Result<Skill, CoreError> {
        let library = self.skill_library();
        let skill = blocking(move || library.add(&source)).await?;
        self.store()?
            .forget_skill_switch(skill.name.clone())
            .await?;
        tracing::info!(skill = %skill.name, files = skill.files.len(), "skill added");
        Ok(skill)
    }

    /// Removes a skill's folder and its switch.
    ///
    /// # Errors
    /// No such skill; the file system.
    pub async fn remove_skill(&self, name: &str) -> Result<(), CoreError> {
        let library = self.skill_library();
        let owned = name.to_owned();
        blocking(move || library.remove(&owned)).await?;
        self.store()?.forget_skill_switch(name.to_owned()).await?;
        Ok(())
    }

    /// Writes a skill to `out` as a `.zip`.
    ///
    /// # Errors
    /// No such skill; the file system.
    pub async fn export_skill(&self, name: &str, out: PathBuf) -> Result<(), CoreError> {
        let library = self.skill_library();
        let owned = name.to_owned();
        blocking(move || library.export(&owned, &out)).await
    }

    /// A skill in full: what it is, its instructions, and the conversations that used it.
    ///
    /// # Errors
    /// No such skill, or one that cannot be read.
    pub async fn skill_detail(&self, name: &str) -> Result<SkillDetail, CoreError> {
        let library = self.skill_library();
        let owned = name.to_owned();
        let (mut skill, parsed) = blocking(move || library.get(&owned)).await?;
        let store = self.store()?;
        skill.enabled = store.skill_switches().await?.get(name) != Some(&false);
        let used_in = store
            .skill_uses(
                crate::agent::builtin::SERVER.to_owned(),
                crate::agent::builtin::LOAD_SKILL.to_owned(),
                name.to_owned(),
            )
            .await?;
        Ok(SkillDetail {
            skill,
            instructions: parsed.body,
            used_in,
        })
    }

    /// Switches a skill on or off: for one conversation, or (`None`) for every conversation.
    ///
    /// # Errors
    /// No such skill or conversation.
    pub async fn set_skill_enabled(
        &self,
        name: &str,
        enabled: bool,
        conversation_id: Option<&str>,
    ) -> Result<(), CoreError> {
        let known = self.skills().await?;
        let Some(skill) = known.iter().find(|s| s.name == name) else {
            return Err(crate::skills::SkillError::NotFound(name.to_owned()).into());
        };
        if let Some(problem) = skill.problem.as_ref().filter(|_| enabled) {
            return Err(crate::skills::SkillError::Invalid(problem.clone()).into());
        }
        let store = self.store()?;
        match conversation_id {
            None => store.set_skill_switch(name.to_owned(), enabled).await?,
            Some(id) => {
                let toggle = ToolToggle {
                    server: SWITCHES.to_owned(),
                    tool: Some(name.to_owned()),
                    enabled,
                };
                store.set_tool_toggle(id.to_owned(), toggle).await?;
            }
        }
        Ok(())
    }

    /// Every skill with whether the conversation may use it.
    ///
    /// # Errors
    /// The database.
    pub async fn conversation_skills(
        &self,
        conversation_id: &str,
    ) -> Result<Vec<ConversationSkill>, CoreError> {
        let skills = self.skills().await?;
        let toggles = self
            .store()?
            .tool_toggles(conversation_id.to_owned())
            .await?;
        let off_here = |name: &str| {
            let switch = |tool: Option<&str>| {
                toggles
                    .iter()
                    .find(|t| t.server == SWITCHES && t.tool.as_deref() == tool)
                    .map(|t| t.enabled)
            };
            switch(Some(name)).or_else(|| switch(None)) == Some(false)
        };
        Ok(skills
            .into_iter()
            .map(|skill| {
                let switched_off_here = off_here(&skill.name);
                ConversationSkill {
                    on: skill.enabled && !switched_off_here,
                    switched_off_here,
                    skill,
                }
            })
            .collect())
    }

    /// The skills a conversation's run may load: on, and usable.
    pub(super) async fn run_skills(&self, conversation_id: &str) -> Result<Vec<Skill>, CoreError> {
        Ok(self
            .conversation_skills(conversation_id)
            .await?
            .into_iter()
            .filter(|s| s.on)
            .map(|s| s.skill)
            .collect())
    }
}
