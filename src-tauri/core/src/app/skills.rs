//! Skills on the app's side (issue 61): the person's skills folder and the skills the running
//! servers serve (the MCP Skills extension), each with its switch for every conversation — a
//! server's skill is off until the person switches it on, and that approval holds only for the
//! files it had then; adding (from a folder or a `.zip`), removing, exporting, a skill in full
//! with the conversations that used it, a conversation's switch for a skill, and the skills a
//! conversation's run may load. The file system is read off the async runtime.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Serialize;

use super::App;
use crate::error::CoreError;
use crate::mcp::skills as served;
use crate::skills::{Library, RunSkills, Served, Skill, SWITCHES};
use crate::store::{SkillSwitch, SkillUse, ToolToggle};

/// How long a server's skills are waited for when the skills are listed (a turn's start, the
/// Skills page): past it the server's skills are left out that time.
const SKILLS_LISTED_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);

/// A skill in full, as its page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct SkillDetail {
    pub skill: Skill,
    /// Its instructions (what follows the front matter), as the model is given them.
    pub instructions: String,
    /// The conversations whose model loaded it, newest first.
    pub used_in: Vec<SkillUse>,
    /// One of the person's skills with scripts: the digest of its files as read here, which
    /// allowing its scripts sends back ([`App::set_skill_scripts`]).
    pub files_digest: Option<String>,
    /// Its scripts as read here (each up to [`SHOWN_SCRIPT_BYTES`]), shown before they are
    /// allowed.
    pub scripts: Vec<ShownScript>,
}

/// The most of one script the Skills page shows before its scripts are allowed.
pub const SHOWN_SCRIPT_BYTES: usize = 16 * 1024;

/// A script as the person reads it before allowing it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ShownScript {
    pub path: String,
    /// Its text (not UTF-8: said so), up to [`SHOWN_SCRIPT_BYTES`].
    pub text: String,
    /// More of it is not shown.
    pub cut: bool,
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

    /// Every skill in the skills folder, then every skill the running servers serve, each with
    /// its switch for every conversation.
    ///
    /// # Errors
    /// The database.
    pub async fn skills(&self) -> Result<Vec<Skill>, CoreError> {
        Ok(self.skills_and_entries().await?.0)
    }

    /// [`App::skills`], with the entry each server's skill was listed with, by name.
    async fn skills_and_entries(&self) -> Result<(Vec<Skill>, HashMap<String, Served>), CoreError> {
        let library = self.skill_library();
        let switches = self.store()?.skill_switches().await?;
        let allowed: HashMap<String, String> = switches
            .iter()
            .filter_map(|(name, s)| Some((name.clone(), s.scripts.clone()?)))
            .collect();
        let digests = self.skill_digests.clone();
        let mut skills = blocking(move || {
            let mut skills = library.list();
            for skill in &mut skills {
                // Read only for a skill whose scripts were allowed, and again only once its
                // files changed.
                let now = || library.cached_digest_of(skill, &digests).ok();
                skill.scripts = scripts_allowed(skill, allowed.get(&skill.name), now);
            }
            Ok(skills)
        })
        .await?;
        for skill in &mut skills {
            skill.enabled =
                skill.problem.is_none() && switches.get(&skill.name).is_none_or(|s| s.enabled);
        }
        let mut entries = HashMap::new();
        for (server, listed) in self.served_entries().await {
            for (entry, name) in listed.iter().zip(served::names(&server, &listed)) {
                let approved = switches
                    .get(&name)
                    .filter(|s| s.enabled)
                    .and_then(|s| s.approved.as_deref());
                skills.push(served::shown(&server, name.clone(), entry, approved));
                entries.insert(
                    name,
                    Served {
                        server: server.clone(),
                        entry: entry.clone(),
                    },
                );
            }
        }
        Ok((skills, entries))
    }

    /// The skills of each running server that serves them (a server that fails to list them
    /// is left out, and the log says why).
    async fn served_entries(&self) -> Vec<(String, std::sync::Arc<Vec<rmcp::model::Skill>>)> {
        let servers: Vec<_> = self
            .host()
            .running_tools()
            .into_iter()
            .filter_map(|(name, _)| {
                self.host()
                    .server(&name)
                    .filter(|s| s.offers_skills())
                    .map(|s| (name, s))
            })
            .collect();
        // Listed at once; a server slow to list is left out of this turn (its listing goes on
        // filling the cache), so a hung server cannot hold every turn's start.
        let listing = servers.iter().map(|(_, s)| {
            let server = std::sync::Arc::clone(s);
            let listing = tokio::spawn(async move { server.skills().await });
            tokio::time::timeout(SKILLS_LISTED_WITHIN, listing)
        });
        let listed = futures_util::future::join_all(listing).await;
        servers
            .into_iter()
            .zip(listed)
            .filter_map(|((name, _), listed)| match listed {
                Ok(Ok(Ok(listed))) => Some((name, listed)),
                Ok(Ok(Err(e))) => {
                    tracing::warn!(server = %name, error = %e, "its skills could not be listed");
                    None
                }
                Ok(Err(e)) => {
                    tracing::warn!(server = %name, error = %e, "its skills' listing failed");
                    None
                }
                Err(_) => {
                    tracing::warn!(server = %name, "its skills were not listed within 5 s");
                    None
                }
            })
            .collect()
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
        from_folder(name)?;
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
        from_folder(name)?;
        let library = self.skill_library();
        let owned = name.to_owned();
        blocking(move || library.export(&owned, &out)).await
    }

    /// A skill in full: what it is, its instructions, and the conversations that used it.
    ///
    /// # Errors
    /// No such skill, or one that cannot be read.
    pub async fn skill_detail(&self, name: &str) -> Result<SkillDetail, CoreError> {
        let store = self.store()?;
        let mut files_digest = None;
        let mut scripts = Vec::new();
        let (skill, instructions) = if name.contains('/') {
            // A server's skill: its instructions as its server serves them now, checked
            // against what it listed, so the person reads them before switching it on.
            let (skills, entries) = self.skills_and_entries().await?;
            let skill = skills
                .into_iter()
                .find(|s| s.name == name)
                .ok_or_else(|| crate::skills::SkillError::NotFound(name.to_owned()))?;
            let instructions = match entries.get(name) {
                Some(served) => self.served_instructions(served).await,
                None => String::new(),
            };
            (skill, instructions)
        } else {
            let library = self.skill_library();
            let owned = name.to_owned();
            let switch = store.skill_switches().await?.remove(name);
            let allowed = switch.as_ref().and_then(|s| s.scripts.clone());
            let (mut skill, parsed, digest, shown) = blocking(move || {
                let (mut skill, parsed) = library.get(&owned)?;
                if !skill.has_scripts {
                    skill.scripts = scripts_allowed(&skill, allowed.as_ref(), || None);
                    return Ok((skill, parsed, None, Vec::new()));
                }
                let (dir, digest) = library.digest_of(&skill)?;
                skill.scripts = scripts_allowed(&skill, allowed.as_ref(), || Some(digest.clone()));
                let shown = skill
                    .files
                    .iter()
                    .filter(|f| f.script)
                    .map(|f| shown_script(&dir, &f.path))
                    .collect();
                Ok((skill, parsed, Some(digest), shown))
            })
            .await?;
            skill.enabled = switch.is_none_or(|s| s.enabled);
            files_digest = digest;
            scripts = shown;
            (skill, parsed.body)
        };
        let used_in = store
            .skill_uses(
                crate::agent::builtin::SERVER.to_owned(),
                crate::agent::builtin::LOAD_SKILL.to_owned(),
                name.to_owned(),
            )
            .await?;
        Ok(SkillDetail {
            skill,
            instructions,
            used_in,
            files_digest,
            scripts,
        })
    }

    /// Switches a skill on or off: for one conversation, or (`None`) for every conversation.
    /// Switching a server's skill on for every conversation approves it as it is listed now;
    /// `as_shown` (its [`Skill::approval`] as the person was shown it) must still match.
    ///
    /// # Errors
    /// No such skill or conversation; a server's skill changed since it was shown.
    pub async fn set_skill_enabled(
        &self,
        name: &str,
        enabled: bool,
        conversation_id: Option<&str>,
        as_shown: Option<&str>,
    ) -> Result<(), CoreError> {
        let (known, entries) = self.skills_and_entries().await?;
        let Some(skill) = known.iter().find(|s| s.name == name) else {
            return Err(crate::skills::SkillError::NotFound(name.to_owned()).into());
        };
        if let Some(problem) = skill.problem.as_ref().filter(|_| enabled) {
            return Err(crate::skills::SkillError::Invalid(problem.clone()).into());
        }
        let store = self.store()?;
        match conversation_id {
            None => {
                // Switching a server's skill on approves the files it has now, and only those.
                let approved = entries
                    .get(name)
                    .and_then(|s| served::content_hash(&s.entry))
                    .filter(|_| enabled);
                if let (Some(now), Some(shown)) = (&approved, as_shown) {
                    if now != shown {
                        return Err(crate::skills::SkillError::Invalid(format!(
                            "“{name}” changed on its server since it was shown: look at it \
                             again before switching it on"
                        ))
                        .into());
                    }
                }
                let switch = SkillSwitch {
                    enabled,
                    approved,
                    scripts: None,
                };
                store.set_skill_switch(name.to_owned(), switch).await?;
            }
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

    /// A server's skill's instructions as its server serves them now, checked against what it
    /// listed; why they cannot be shown otherwise, in brackets.
    async fn served_instructions(&self, served: &Served) -> String {
        let Some(server) = self.host().server(&served.server) else {
            return format!(
                "(“{}” is not running: its instructions cannot be read now.)",
                served.server
            );
        };
        match server
            .read_resource(&served.entry.uri, SKILLS_LISTED_WITHIN)
            .await
        {
            Ok(read) => match served::instructions_of(
                &served.entry,
                &serde_json::to_value(&read).unwrap_or_default(),
            ) {
                Ok(parsed) => parsed.body,
                Err(why) => format!("(Its instructions cannot be shown: {why}.)"),
            },
            Err(e) => format!("(Its instructions could not be read from its server: {e}.)"),
        }
    }

    /// Lets the model ask to run one of the person's skills' scripts (each run is a call that
    /// asks, in a sandbox), or no longer. Allowing binds to the skill's files as they are now,
    /// which must be what the person was shown (`as_shown`, [`SkillDetail::files_digest`],
    /// when given): a skill changed since is not run until allowed again.
    ///
    /// # Errors
    /// No such skill, a server's skill, one with no scripts; the file system.
    pub async fn set_skill_scripts(
        &self,
        name: &str,
        allowed: bool,
        as_shown: Option<&str>,
    ) -> Result<(), CoreError> {
        from_folder(name)?;
        let store = self.store()?;
        if !allowed {
            // No longer: nothing to read (the skill may be gone or broken by now).
            store.set_skill_scripts(name.to_owned(), None).await?;
            return Ok(());
        }
        let library = self.skill_library();
        let owned = name.to_owned();
        let (skill, digest) = blocking(move || {
            let (skill, _) = library.get(&owned)?;
            let (_, digest) = library.digest_of(&skill)?;
            Ok((skill, digest))
        })
        .await?;
        if !skill.has_scripts {
            return Err(crate::skills::SkillError::Invalid(format!(
                "“{name}” has no scripts to run"
            ))
            .into());
        }
        if as_shown.is_some_and(|shown| shown != digest) {
            return Err(crate::skills::SkillError::Invalid(format!(
                "“{name}” changed since it was shown: look at its scripts again before \
                 allowing them"
            ))
            .into());
        }
        store
            .set_skill_scripts(name.to_owned(), Some(digest))
            .await?;
        tracing::info!(skill = %name, allowed, "a skill's scripts");
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
        let store = self.store()?;
        // No such conversation is an error, not a list of switches that are all on.
        store.get_conversation(conversation_id.to_owned()).await?;
        let skills = self.skills().await?;
        let toggles = store.tool_toggles(conversation_id.to_owned()).await?;
        Ok(skills
            .into_iter()
            .map(|skill| {
                let switched_off_here = switched_off(&toggles, &skill.name);
                ConversationSkill {
                    on: skill.enabled && !switched_off_here,
                    switched_off_here,
                    skill,
                }
            })
            .collect())
    }

    /// The skills a conversation's run may load (on, and usable), with the entries its
    /// servers' skills were approved as.
    pub(super) async fn run_skills(&self, conversation_id: &str) -> Result<RunSkills, CoreError> {
        let (skills, mut entries) = self.skills_and_entries().await?;
        let toggles = self
            .store()?
            .tool_toggles(conversation_id.to_owned())
            .await?;
        let skills: Vec<Skill> = skills
            .into_iter()
            .filter(|s| s.enabled && !switched_off(&toggles, &s.name))
            .collect();
        entries.retain(|name, _| skills.iter().any(|s| &s.name == name));
        Ok(RunSkills {
            library: Some(self.skill_library()),
            skills,
            served: entries,
            scripts: crate::skills::ScriptPlaces {
                runs_dir: self.paths().data_dir.join("skill-runs"),
                closed: vec![
                    self.paths().data_dir.clone(),
                    self.paths().config_dir.clone(),
                    self.paths().log_dir.clone(),
                ],
                home: dirs::home_dir().unwrap_or_default(),
                search_path: self.server_search_path().await,
            },
        })
    }
}

/// The script `path` of the skill at `dir`, as the person reads it (blocks on the disk).
fn shown_script(dir: &std::path::Path, path: &str) -> ShownScript {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(dir.join(path)).and_then(|f| {
        f.take(SHOWN_SCRIPT_BYTES as u64 + 1)
            .read_to_end(&mut bytes)
    });
    let cut = bytes.len() > SHOWN_SCRIPT_BYTES;
    bytes.truncate(SHOWN_SCRIPT_BYTES);
    let text = match (read, String::from_utf8(bytes)) {
        (Err(e), _) => format!("(it cannot be read: {e})"),
        (Ok(_), Ok(text)) => text,
        (Ok(_), Err(e)) => {
            // Cut in the middle of a character, or not text at all.
            let valid = e.utf8_error().valid_up_to();
            if cut && valid + 4 > SHOWN_SCRIPT_BYTES {
                String::from_utf8_lossy(&e.into_bytes()[..valid]).into_owned()
            } else {
                "(not text: a program in another form)".to_owned()
            }
        }
    };
    ShownScript {
        path: path.to_owned(),
        text,
        cut,
    }
}

/// Whether the model may ask to run `skill`'s scripts, given the digest they were `allowed`
/// as and the digest of its files `now` (asked only when they were allowed; `None`: they
/// cannot be read).
fn scripts_allowed(
    skill: &Skill,
    allowed: Option<&String>,
    now: impl FnOnce() -> Option<String>,
) -> crate::skills::scripts::ScriptsAllowed {
    use crate::skills::scripts::ScriptsAllowed;
    match allowed {
        _ if !skill.has_scripts || skill.problem.is_some() => ScriptsAllowed::None,
        None => ScriptsAllowed::Off,
        Some(allowed) => match now() {
            Some(now) if &now == allowed => ScriptsAllowed::On,
            _ => ScriptsAllowed::Changed,
        },
    }
}

/// Whether a conversation's switches turn the skill `name` off (its own, or all skills').
fn switched_off(toggles: &[ToolToggle], name: &str) -> bool {
    !crate::policy::switched_on(toggles, SWITCHES, name)
}

/// Refuses a server's skill where only the person's own can be acted on.
fn from_folder(name: &str) -> Result<(), CoreError> {
    if name.contains('/') {
        let server = name.split('/').next().unwrap_or_default();
        return Err(crate::skills::SkillError::Invalid(format!(
            "“{name}” is served by the server “{server}”: switch it off here, or remove the server"
        ))
        .into());
    }
    Ok(())
}
