//! Projects on the core's side (issue 62): a project checked before it is kept (a name on one
//! line, instructions no longer than a system prompt, a profile that exists), found by id or
//! name, a conversation made in one or moved between them, its knowledge files added (read,
//! split and indexed off the runtime, with progress) and removed, and what a turn in it is told:
//! its instructions, and its files whole or the passages that match the question.

use serde::{Deserialize, Serialize};

use super::db::Db;
use super::App;
use crate::error::{CoreError, InvalidInput};
use crate::store::{Conversation, NewProjectFile, Project, ProjectFields, ProjectFile, StoreError};
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
    /// Its memory is on: the model may save facts to it and is told those relevant.
    #[serde(default)]
    pub memory: bool,
    /// Its tool switches, put over the profile's on each conversation that starts in it or
    /// moves into it.
    #[serde(default)]
    pub tools: Vec<crate::store::ToolToggle>,
    /// Its folders (absolute paths), given to the servers its turns use as their roots.
    #[serde(default)]
    pub roots: Vec<String>,
}

fn check_name(name: &str) -> Result<String, InvalidInput> {
    super::names::check_name(name, MAX_PROJECT_NAME_CHARS, "project")
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

/// What a turn in a project is told of it: its instructions and its files (whole, or the
/// passages that match the question), and whether it has files to search.
#[derive(Debug, Default)]
pub struct ProjectPrompt {
    pub text: Option<String>,
    pub used: crate::knowledge::KnowledgeUse,
    pub has_files: bool,
}

/// How far adding files to a project has come: `done` of `total`, `file` the one being read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct FilesProgress {
    pub done: u32,
    pub total: u32,
    pub file: String,
}

/// The files added to a project, and why each other one was not (a sentence each).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct AddedFiles {
    pub added: Vec<ProjectFile>,
    pub refused: Vec<String>,
}

/// A file read from disk as a project keeps it: checked (its size before it is read), its
/// text split into passages; why not, in a sentence.
fn read_file(path: &std::path::Path) -> Result<NewProjectFile, String> {
    use sha2::{Digest, Sha256};
    let raw_name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let name = crate::attachments::shown_name(&raw_name);
    let meta = std::fs::metadata(path).map_err(|e| format!("“{name}” cannot be read ({e})."))?;
    if !meta.is_file() {
        return Err(format!("“{name}” is not a file."));
    }
    if meta.len() > crate::knowledge::MAX_FILE_BYTES {
        return Err(format!(
            "“{name}” is {}; a project's file can be at most {}.",
            crate::text::byte_size(meta.len()),
            crate::text::byte_size(crate::knowledge::MAX_FILE_BYTES)
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("“{name}” cannot be read ({e})."))?;
    let (mime, text) = crate::knowledge::text_of(&name, &bytes).map_err(|e| e.message)?;
    Ok(NewProjectFile {
        sha256: hex::encode(Sha256::digest(&bytes)),
        size: bytes.len() as u64,
        mime: mime.to_owned(),
        passages: crate::knowledge::passages(&text),
        name,
    })
}

/// The most folders a project keeps.
pub const MAX_PROJECT_ROOTS: usize = 20;

/// An export of `len` bytes, refused (nothing written) when no import could read it back.
fn check_export_size(len: usize) -> Result<(), InvalidInput> {
    let limit = super::MAX_IMPORT_BYTES;
    if u64::try_from(len).unwrap_or(u64::MAX) > limit {
        return Err(InvalidInput::new(
            "file",
            format!(
                "The export would be {}; an import reads at most {}, so it could not be read \
                 back. Remove some of the project's files or conversations, or move some \
                 conversations out of it, and export it again.",
                crate::text::byte_size(len as u64),
                crate::text::byte_size(limit)
            ),
        ));
    }
    Ok(())
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
        self.db
            .store()?
            .find_project(key.to_owned())
            .await?
            .ok_or_else(|| CoreError::NotFound {
                what: format!("project “{}”", one_line(key, 80)),
            })
    }

    /// A name and fields as kept: checked, tidied, the profile named by its id.
    async fn checked(&self, input: &ProjectInput) -> Result<(String, ProjectFields), CoreError> {
        let name = check_name(&input.name)?;
        let roots = super::roots::checked_folders(
            input.roots.iter().map(|r| r.trim().to_owned()).collect(),
            Vec::new(),
            "roots",
            MAX_PROJECT_ROOTS,
        )
        .await?;
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
                memory: input.memory,
                tools: super::profiles::tidy_tools(input.tools.clone(), "project")?,
                roots,
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

    /// What a turn in `project` is told of it for `question` (`None`: no question to match
    /// passages to), to a model whose window is `window` tokens: its instructions, then its
    /// files whole while they fit their share of the window, else the passages that match.
    ///
    /// # Errors
    /// The database.
    pub async fn prompt_for(
        &self,
        project: &Project,
        question: Option<&str>,
        window: Option<u64>,
    ) -> Result<ProjectPrompt, CoreError> {
        use crate::knowledge;
        let store = self.db.store()?;
        let mut prompt = ProjectPrompt::default();
        let mut parts: Vec<String> = project_prompt(project).into_iter().collect();
        prompt.has_files = store.has_project_files(project.id.clone()).await?;
        if prompt.has_files {
            let share = knowledge::share_chars(window);
            let given = match store
                .project_texts_within(project.id.clone(), share)
                .await?
            {
                Some(files) => Some(knowledge::whole_part(&project.name, &files)),
                None => match question.map(knowledge::query_words) {
                    Some(words) if !words.is_empty() => {
                        let found = store
                            .search_passages(project.id.clone(), words, knowledge::MAX_PASSAGES)
                            .await?;
                        let tool = format!("switchboard__{}", crate::agent::builtin::SEARCH_FILES);
                        knowledge::passages_part(&project.name, &found, share, &tool)
                    }
                    _ => None,
                },
            };
            if let Some((part, used)) = given {
                parts.push(part);
                prompt.used = used;
            }
        }
        prompt.text = (!parts.is_empty()).then(|| parts.join("\n\n"));
        Ok(prompt)
    }

    /// A project's files, by name.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn files(&self, key: &str) -> Result<Vec<ProjectFile>, CoreError> {
        let id = self.get(key).await?.id;
        Ok(self.db.store()?.project_files(id).await?)
    }

    /// Adds files to a project (one of the same name is replaced), each read, checked, split
    /// and indexed off the runtime in turn; `progress` hears of each before it is read, and of
    /// the end. A file that cannot be added is said in [`AddedFiles::refused`]; the others are
    /// added all the same.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn add_files(
        &self,
        key: &str,
        paths: Vec<std::path::PathBuf>,
        progress: &(dyn Fn(FilesProgress) + Send + Sync),
    ) -> Result<AddedFiles, CoreError> {
        let project = self.get(key).await?;
        let store = self.db.store()?;
        let total = u32::try_from(paths.len()).unwrap_or(u32::MAX);
        let mut out = AddedFiles::default();
        let mut named: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (done, path) in (0..).zip(paths) {
            progress(FilesProgress {
                done,
                total,
                file: path
                    .file_name()
                    .map(|n| crate::attachments::shown_name(&n.to_string_lossy()))
                    .unwrap_or_default(),
            });
            let read = tokio::task::spawn_blocking(move || read_file(&path))
                .await
                .map_err(|e| CoreError::Io {
                    what: "a project's file".into(),
                    detail: e.to_string(),
                })?;
            let file = match read {
                Ok(file) => file,
                Err(why) => {
                    out.refused.push(why);
                    continue;
                }
            };
            let name = file.name.clone();
            // Two files of one name (from two folders): the first is kept, the second said.
            if !named.insert(name.clone()) {
                out.refused.push(format!(
                    "“{name}”: another file of that name is among those added; rename one."
                ));
                continue;
            }
            match store
                .add_project_file(project.id.clone(), file, crate::knowledge::MAX_FILES)
                .await
            {
                Ok(added) => out.added.push(added),
                Err(StoreError::Conflict { what }) => out.refused.push(format!("“{name}”: {what}")),
                Err(e) => return Err(e.into()),
            }
        }
        progress(FilesProgress {
            done: total,
            total,
            file: String::new(),
        });
        Ok(out)
    }

    /// Removes a project's file by name.
    ///
    /// # Errors
    /// No such project or file; the database.
    pub async fn remove_file(&self, key: &str, name: &str) -> Result<(), CoreError> {
        let project = self.get(key).await?;
        if self
            .db
            .store()?
            .remove_project_file(project.id, name.to_owned())
            .await?
        {
            Ok(())
        } else {
            Err(CoreError::NotFound {
                what: format!("file “{}” in “{}”", one_line(name, 80), project.name),
            })
        }
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

/// What a project's export file says it is, so that any other JSON is refused by name.
const EXPORT_FORMAT: &str = "switchboard.project";
/// The version of the format this build writes (and the newest it reads).
const EXPORT_VERSION: u32 = 1;

/// A project as exported: its settings (its profile by name), its files' text, and its
/// conversations in the conversation export format.
#[derive(Debug, Serialize, Deserialize)]
pub struct ProjectExport {
    pub format: String,
    pub version: u32,
    pub exported_at: i64,
    pub name: String,
    #[serde(default)]
    pub instructions: String,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub files: Vec<ExportedFile>,
    #[serde(default)]
    pub conversations: Vec<crate::store::ConversationExport>,
    /// Its memory is on.
    #[serde(default)]
    pub memory: bool,
    /// The facts in its memory, newest first.
    #[serde(default)]
    pub memories: Vec<String>,
    /// Its tool switches.
    #[serde(default)]
    pub tools: Vec<crate::store::ToolToggle>,
}

/// A project's file as exported: its name, type and text.
#[derive(Debug, Serialize, Deserialize)]
pub struct ExportedFile {
    pub name: String,
    pub mime: String,
    pub text: String,
}

/// A project kept from an export, and what was changed to keep it here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ImportedProject {
    pub project: Project,
    /// Each change in a sentence (a name taken, a profile this machine does not have, a file
    /// or conversation that could not be kept).
    pub notes: Vec<String>,
}

impl App {
    /// A project whole, as its export file holds it: settings, files, conversations.
    ///
    /// # Errors
    /// No such project; the database.
    pub async fn export_project(&self, key: &str) -> Result<ProjectExport, CoreError> {
        let project = self.projects().get(key).await?;
        let store = self.store()?;
        let profile = match &project.fields.profile_id {
            Some(id) => Some(store.get_profile(id.clone()).await?.name),
            None => None,
        };
        let mimes: std::collections::HashMap<String, String> = store
            .project_files(project.id.clone())
            .await?
            .into_iter()
            .map(|f| (f.name, f.mime))
            .collect();
        let files = store
            .project_texts_within(project.id.clone(), usize::MAX)
            .await?
            .unwrap_or_default()
            .into_iter()
            .map(|(name, text)| ExportedFile {
                mime: mimes
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| "text/plain".into()),
                name,
                text,
            })
            .collect();
        let mut conversations = Vec::new();
        for c in self.conversations().list().await? {
            if c.project_id.as_deref() == Some(project.id.as_str()) {
                conversations.push(self.conversations().export(&c.id).await?);
            }
        }
        let memories = store
            .list_memories(Some(crate::store::MemoryScope::Project(project.id.clone())))
            .await?
            .into_iter()
            .map(|m| m.text)
            .collect();
        Ok(ProjectExport {
            memory: project.fields.memory,
            memories,
            format: EXPORT_FORMAT.into(),
            version: EXPORT_VERSION,
            exported_at: crate::store::now_ms(),
            name: project.name,
            instructions: project.fields.instructions,
            profile,
            files,
            conversations,
            tools: project.fields.tools,
        })
    }

    /// Writes a project's export to `path` as JSON, whole or not at all.
    ///
    /// # Errors
    /// As [`App::export_project`]; the file cannot be written.
    pub async fn write_project(
        &self,
        key: &str,
        path: std::path::PathBuf,
    ) -> Result<(), CoreError> {
        let export = self.export_project(key).await?;
        let text = serde_json::to_string_pretty(&export).map_err(|e| CoreError::Io {
            what: "the project's export".into(),
            detail: e.to_string(),
        })?;
        check_export_size(text.len())?;
        super::home::write_text_file(path, text).await
    }

    /// Reads a project's export at `path` and keeps it as a new project.
    ///
    /// # Errors
    /// As [`App::import_project`]; the file cannot be read or is too large.
    pub async fn import_project_file(
        &self,
        path: std::path::PathBuf,
    ) -> Result<ImportedProject, CoreError> {
        let text = super::home::read_import_file(path).await?;
        self.import_project(&text).await
    }

    /// Keeps a project's export (JSON text) as a new project: a taken name gets " (2)", a
    /// profile this machine does not have is left out, and each file and conversation is kept
    /// as an added or imported one is (one that cannot be is said in the notes).
    ///
    /// # Errors
    /// [`CoreError::Invalid`] (field `file`) for text that is not a project export this build
    /// reads; the database.
    pub async fn import_project(&self, json: &str) -> Result<ImportedProject, CoreError> {
        let bad = |why: String| CoreError::from(InvalidInput::new("file", why));
        let file: ProjectExport = serde_json::from_str(json)
            .map_err(|e| bad(format!("This is not a Switchboard project export: {e}.")))?;
        if file.format != EXPORT_FORMAT {
            return Err(bad(format!(
                "This is not a Switchboard project (its format is “{}”, not “{EXPORT_FORMAT}”).",
                crate::text::one_line(&file.format, 60)
            )));
        }
        if !(1..=EXPORT_VERSION).contains(&file.version) {
            return Err(bad(format!(
                "This project was exported in version {} of the format; this Switchboard reads \
                 versions 1 to {EXPORT_VERSION}.",
                file.version
            )));
        }
        if file.files.len() > crate::knowledge::MAX_FILES {
            return Err(bad(format!(
                "The file holds {} files; a project keeps at most {}.",
                file.files.len(),
                crate::knowledge::MAX_FILES
            )));
        }
        let mut notes = Vec::new();
        let taken = self.projects().list().await?;
        let wanted = check_name(&file.name)?;
        let name = super::names::free_name(&wanted, MAX_PROJECT_NAME_CHARS, |n| {
            taken.iter().any(|p| p.name.eq_ignore_ascii_case(n))
        });
        if name != wanted {
            notes.push(format!(
                "A project named “{wanted}” exists already: this one is “{name}”."
            ));
        }
        let profile = match file.profile.as_deref() {
            Some(profile) => match self.profiles().get(profile).await {
                Ok(found) => Some(found.id),
                Err(CoreError::NotFound { .. }) => {
                    notes.push(format!(
                        "This computer has no profile “{}”: its conversations start from the \
                         default profile.",
                        one_line(profile, 60)
                    ));
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        // A file may only switch tools off: one that switched a server or tool on could turn
        // on, in every conversation of the project, what the person keeps off.
        let (tools, on): (Vec<_>, Vec<_>) = file.tools.into_iter().partition(|t| !t.enabled);
        if !on.is_empty() {
            notes.push(format!(
                "The file switched on {}; an imported project only switches tools off. Switch \
                 them on in the project's dialog if you want them.",
                on.iter()
                    .map(|t| format!("“{}”", t.target(60)))
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if on.len() > 5 { " and more" } else { "" }
            ));
        }
        let project = self
            .projects()
            .create(&ProjectInput {
                name,
                instructions: file.instructions,
                profile,
                memory: file.memory,
                tools,
                // Folders are this computer's paths: an export carries none.
                roots: Vec::new(),
            })
            .await?;
        // Whole or not at all: a failure takes away what was kept of it.
        let mut imported: Vec<String> = Vec::new();
        let kept = self
            .import_project_parts(
                &project,
                file.memories,
                file.files,
                file.conversations,
                &mut imported,
                &mut notes,
            )
            .await;
        if let Err(e) = kept {
            let store = self.store()?;
            for id in imported {
                if let Err(left) = store.delete_conversation(id).await {
                    tracing::warn!(error = %left, "an imported conversation could not be taken away");
                }
            }
            if let Err(left) = store.delete_project(project.id.clone()).await {
                tracing::warn!(error = %left, "a half-imported project could not be taken away");
            }
            return Err(e);
        }
        let project = self.projects().get(&project.id).await?;
        Ok(ImportedProject { project, notes })
    }

    /// The facts, files and conversations of a project's export, kept in `project`; the ids of
    /// the conversations kept go to `imported` as they are (for a failure to take away), and
    /// what could not be kept to `notes`.
    async fn import_project_parts(
        &self,
        project: &Project,
        memories: Vec<String>,
        files: Vec<ExportedFile>,
        conversations: Vec<crate::store::ConversationExport>,
        imported: &mut Vec<String>,
        notes: &mut Vec<String>,
    ) -> Result<(), CoreError> {
        let store = self.store()?;
        // Oldest first, so the newest stays newest.
        for fact in memories.iter().rev() {
            match crate::knowledge::check_fact(fact) {
                Ok(fact) => {
                    store
                        .add_memory(
                            crate::store::MemoryScope::Project(project.id.clone()),
                            fact,
                            None,
                        )
                        .await?;
                }
                Err(e) => notes.push(format!("A remembered fact was not kept: {}", e.message)),
            }
        }
        let mut named: std::collections::HashSet<String> = std::collections::HashSet::new();
        for exported in files {
            let shown = crate::attachments::shown_name(&exported.name);
            if !named.insert(shown.clone()) {
                notes.push(format!(
                    "The file “{shown}” is in the export twice: the first was kept."
                ));
                continue;
            }
            // Read and split off the runtime: a file's text can be large.
            let pdf = exported.mime == "application/pdf";
            let name = shown.clone();
            let kept = tokio::task::spawn_blocking(move || {
                let (_, text) = crate::knowledge::text_of(&name, exported.text.as_bytes())
                    .map_err(|e| e.message)?;
                use sha2::{Digest, Sha256};
                Ok::<_, String>(NewProjectFile {
                    sha256: hex::encode(Sha256::digest(text.as_bytes())),
                    size: text.len() as u64,
                    mime: if pdf { "application/pdf" } else { "text/plain" }.to_owned(),
                    passages: crate::knowledge::passages(&text),
                    name,
                })
            })
            .await
            .map_err(|e| CoreError::Io {
                what: "a project's file".into(),
                detail: e.to_string(),
            })?;
            match kept {
                Ok(new) => {
                    store
                        .add_project_file(project.id.clone(), new, crate::knowledge::MAX_FILES)
                        .await?;
                }
                Err(why) => notes.push(format!("The file “{shown}” was not kept: {why}")),
            }
        }
        for conversation in conversations {
            let title = one_line(&conversation.conversation.title, 80);
            match self.conversations().import_export(conversation).await {
                Ok(made) => {
                    imported.push(made.id.clone());
                    store
                        .move_conversation(made.id, Some(project.id.clone()))
                        .await?;
                }
                Err(CoreError::Invalid(e)) => notes.push(format!(
                    "The conversation “{title}” was not kept: {}",
                    e.message
                )),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

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
    fn an_export_larger_than_an_import_reads_is_refused() {
        assert!(check_export_size(1024).is_ok());
        let limit = usize::try_from(crate::app::MAX_IMPORT_BYTES).unwrap();
        assert!(check_export_size(limit).is_ok());
        let refused = check_export_size(limit + 1).unwrap_err();
        assert_eq!(refused.field, "file");
        assert!(
            refused.message.contains("could not be read back"),
            "{}",
            refused.message
        );
    }

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
