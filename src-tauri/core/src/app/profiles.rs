//! Profiles on the core's side (issue 18): a profile checked before it is kept (its name, its
//! prompt's length, a provider that exists, limits in range), found by id or name, copied,
//! made the default, written to and read from a JSON file, put on a conversation, and the
//! limits a conversation's runs take from the profile it follows.

use serde::{Deserialize, Serialize};

use super::db::Db;
use super::new_title;
use crate::error::{CoreError, InvalidInput};
use crate::settings::{
    check_range, tidy_system_prompt, Settings, MAX_ROUNDS_RANGE, RUN_TIME_LIMIT_RANGE,
    TOOL_TIMEOUT_RANGE,
};
use crate::store::{Conversation, Profile, ProfileFields, StoreError, ToolToggle};
use crate::text::one_line;

/// The longest profile name, in characters.
pub const MAX_PROFILE_NAME_CHARS: usize = 60;
/// The most tool switches a profile keeps.
pub const MAX_PROFILE_SWITCHES: usize = 1_000;
/// The longest server or tool name a switch may name, in characters.
const MAX_SWITCH_NAME_CHARS: usize = 200;
/// The largest profile file read: a long system prompt and many switches fit well within.
pub const MAX_PROFILE_FILE_BYTES: usize = 1024 * 1024;

/// What a profile's JSON file says it is, so that any other JSON is refused by name.
const FILE_KIND: &str = "switchboard.profile";

/// A profile as written to a file: no id, no dates, not the default.
#[derive(Debug, Serialize, Deserialize)]
struct ProfileFile {
    kind: String,
    version: u32,
    name: String,
    #[serde(flatten)]
    fields: ProfileFields,
}

/// A profile read from a file, and what was changed to keep it here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ImportedProfile {
    pub profile: Profile,
    /// Each change in a sentence (a name taken, a provider this machine does not have).
    pub notes: Vec<String>,
}

/// Which profile a new conversation starts from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", content = "id", rename_all = "snake_case")]
pub enum ProfileChoice {
    /// The default profile, if there is one; else Settings' system prompt and tool switches.
    #[default]
    Default,
    /// No profile, whatever the default: Settings' system prompt and tool switches.
    None,
    /// This profile (by id or name).
    Named(String),
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

/// `name` with " (2)", " (3)"… until no profile in `taken` has it (any case).
fn free_name(name: &str, taken: &[Profile]) -> String {
    super::names::free_name(name, MAX_PROFILE_NAME_CHARS, |n| {
        taken.iter().any(|p| p.name.eq_ignore_ascii_case(n))
    })
}

fn check_name(name: &str) -> Result<String, InvalidInput> {
    super::names::check_name(name, MAX_PROFILE_NAME_CHARS, "profile")
}

fn check_limit(
    field: &'static str,
    label: &str,
    value: Option<u32>,
    range: &std::ops::RangeInclusive<u32>,
) -> Result<(), InvalidInput> {
    value.map_or(Ok(()), |v| check_range(field, label, v, range))
}

/// Switches with a server named, tidied (one line each, no control characters), the last
/// word on each switch kept; `what` keeps them ("profile", "project").
pub(super) fn tidy_tools(
    tools: Vec<ToolToggle>,
    what: &str,
) -> Result<Vec<ToolToggle>, InvalidInput> {
    if tools.len() > MAX_PROFILE_SWITCHES {
        return Err(InvalidInput::new(
            "tools",
            format!("A {what} keeps at most {MAX_PROFILE_SWITCHES} tool switches."),
        ));
    }
    let name = |text: &str| -> Result<String, InvalidInput> {
        let text = one_line(text, usize::MAX);
        if text.chars().count() > MAX_SWITCH_NAME_CHARS {
            return Err(InvalidInput::new(
                "tools",
                format!(
                    "A server or tool name is at most {MAX_SWITCH_NAME_CHARS} characters long."
                ),
            ));
        }
        Ok(text)
    };
    let mut kept: Vec<ToolToggle> = Vec::with_capacity(tools.len());
    let mut at: std::collections::HashMap<(String, Option<String>), usize> =
        std::collections::HashMap::new();
    for toggle in tools {
        let server = name(&toggle.server)?;
        if server.is_empty() {
            return Err(InvalidInput::new("tools", "A tool switch names no server."));
        }
        let tool = match toggle.tool {
            Some(t) => Some(name(&t)?).filter(|t| !t.is_empty()),
            None => None,
        };
        let key = (server.to_lowercase(), tool.clone());
        let switch = ToolToggle {
            server,
            tool,
            enabled: toggle.enabled,
        };
        match at.get(&key) {
            Some(&i) => kept[i] = switch,
            None => {
                at.insert(key, kept.len());
                kept.push(switch);
            }
        }
    }
    Ok(kept)
}

/// The person's profiles: a model, tools, a system prompt and limits, kept to start
/// conversations with. Holds only the database; reached as `app.profiles()`.
#[derive(Clone)]
pub struct Profiles {
    db: Db,
}

impl Profiles {
    pub(super) fn new(db: Db) -> Self {
        Self { db }
    }

    /// # Errors
    /// The database.
    pub async fn list(&self) -> Result<Vec<Profile>, CoreError> {
        Ok(self.db.store()?.list_profiles().await?)
    }

    /// The profile with this id, else with this name (any case).
    ///
    /// # Errors
    /// [`CoreError::NotFound`]; the database.
    pub async fn get(&self, key: &str) -> Result<Profile, CoreError> {
        let key = key.trim();
        let all = self.list().await?;
        let by_id = all.iter().position(|p| p.id == key);
        by_id
            .or_else(|| all.iter().position(|p| p.name.eq_ignore_ascii_case(key)))
            .map(|i| all[i].clone())
            .ok_or_else(|| CoreError::NotFound {
                what: format!("profile “{}”", one_line(key, 80)),
            })
    }

    /// A name and fields as kept: checked, tidied, the provider named as it is spelled here.
    async fn checked(
        &self,
        name: &str,
        mut fields: ProfileFields,
    ) -> Result<(String, ProfileFields), CoreError> {
        let name = check_name(name)?;
        fields.system_prompt = tidy_system_prompt("system_prompt", &fields.system_prompt)?;
        fields.provider = match fields.provider.as_deref().map(str::trim) {
            Some(p) if !p.is_empty() => Some(self.db.provider_row(p).await?.name),
            _ => None,
        };
        fields.model = crate::provider_config::validate_model(fields.model.as_deref())
            .map_err(|e| InvalidInput::new("model", e.message))?;
        if fields.model.is_some() && fields.provider.is_none() {
            return Err(InvalidInput::new("provider", "Choose the model's provider too.").into());
        }
        check_limit(
            "max_rounds",
            "Max rounds",
            fields.max_rounds,
            &MAX_ROUNDS_RANGE,
        )?;
        check_limit(
            "tool_timeout_secs",
            "Tool timeout (seconds)",
            fields.tool_timeout_secs,
            &TOOL_TIMEOUT_RANGE,
        )?;
        check_limit(
            "run_time_limit_secs",
            "Run time limit (seconds)",
            fields.run_time_limit_secs,
            &RUN_TIME_LIMIT_RANGE,
        )?;
        fields.tools = tidy_tools(fields.tools, "profile")?;
        Ok((name, fields))
    }

    /// # Errors
    /// A field that is not valid; a name taken ([`CoreError::Conflict`]); the database.
    pub async fn create(&self, name: &str, fields: ProfileFields) -> Result<Profile, CoreError> {
        let (name, fields) = self.checked(name, fields).await?;
        self.db
            .store()?
            .create_profile(name, fields)
            .await
            .map_err(name_taken)
    }

    /// # Errors
    /// As [`Profiles::create`]; no such profile.
    pub async fn update(
        &self,
        key: &str,
        name: &str,
        fields: ProfileFields,
    ) -> Result<Profile, CoreError> {
        let id = self.get(key).await?.id;
        let (name, fields) = self.checked(name, fields).await?;
        self.db
            .store()?
            .update_profile(id, name, fields)
            .await
            .map_err(name_taken)
    }

    /// A copy of a profile named "… (copy)" (or "… (copy) (2)"…), not the default.
    ///
    /// # Errors
    /// No such profile; the database.
    pub async fn duplicate(&self, key: &str) -> Result<Profile, CoreError> {
        let original = self.get(key).await?;
        let all = self.list().await?;
        let name = free_name(
            &format!(
                "{} (copy)",
                one_line(&original.name, MAX_PROFILE_NAME_CHARS - 7)
            ),
            &all,
        );
        self.db
            .store()?
            .create_profile(name, original.fields)
            .await
            .map_err(name_taken)
    }

    /// Deletes a profile; conversations that followed it keep what it gave them.
    ///
    /// # Errors
    /// No such profile; the database.
    pub async fn delete(&self, key: &str) -> Result<(), CoreError> {
        let id = self.get(key).await?.id;
        Ok(self.db.store()?.delete_profile(id).await?)
    }

    /// Makes a profile the one new conversations start from; `None`: none is.
    ///
    /// # Errors
    /// No such profile; the database.
    pub async fn set_default(&self, key: Option<&str>) -> Result<(), CoreError> {
        let id = match key {
            Some(key) => Some(self.get(key).await?.id),
            None => None,
        };
        Ok(self.db.store()?.set_default_profile(id).await?)
    }

    /// The profile as the JSON a file holds (no id, no dates, not marked default).
    ///
    /// # Errors
    /// No such profile; the database.
    pub async fn export(&self, key: &str) -> Result<String, CoreError> {
        let profile = self.get(key).await?;
        let file = ProfileFile {
            kind: FILE_KIND.to_owned(),
            version: 1,
            name: profile.name,
            fields: profile.fields,
        };
        serde_json::to_string_pretty(&file)
            .map(|text| text + "\n")
            .map_err(|e| InvalidInput::new("profile", e.to_string()).into())
    }

    /// Writes a profile's JSON to `path`.
    ///
    /// # Errors
    /// No such profile; the file cannot be written.
    pub async fn write(&self, key: &str, path: std::path::PathBuf) -> Result<(), CoreError> {
        super::write_text_file(path, self.export(key).await?).await
    }

    /// Keeps the profile the JSON file at `path` holds (see [`Profiles::import`]).
    ///
    /// # Errors
    /// The file cannot be read or is too large; as [`Profiles::import`].
    pub async fn import_file(
        &self,
        path: std::path::PathBuf,
    ) -> Result<ImportedProfile, CoreError> {
        self.import(&super::read_import_file(path).await?).await
    }

    /// Keeps the profile a file holds, under a name of its own (" (2)" when taken). A provider
    /// this machine does not have is left out (with its model), and said so.
    ///
    /// # Errors
    /// Not a Switchboard profile's JSON; a field that is not valid; the database.
    pub async fn import(&self, json: &str) -> Result<ImportedProfile, CoreError> {
        let not_a_profile = |why: String| -> CoreError {
            InvalidInput::new(
                "file",
                format!("This is not a Switchboard profile file: {why}"),
            )
            .into()
        };
        if json.len() > MAX_PROFILE_FILE_BYTES {
            return Err(not_a_profile(format!(
                "it is {} KB, and a profile file is at most {} KB",
                json.len() / 1024,
                MAX_PROFILE_FILE_BYTES / 1024
            )));
        }
        let file: ProfileFile =
            serde_json::from_str(json).map_err(|e| not_a_profile(e.to_string()))?;
        if file.kind != FILE_KIND {
            return Err(not_a_profile(format!(
                "its kind is “{}”",
                one_line(&file.kind, 60)
            )));
        }
        if file.version != 1 {
            return Err(not_a_profile(format!(
                "it is version {}, and this Switchboard reads version 1",
                file.version
            )));
        }
        let mut notes = Vec::new();
        let mut fields = file.fields;
        if let Some(provider) = fields.provider.clone().filter(|p| !p.trim().is_empty()) {
            if self
                .db
                .store()?
                .find_provider(provider.trim().to_owned())
                .await?
                .is_none()
            {
                notes.push(format!(
                    "There is no provider “{}” here, so the profile uses Settings' default model.",
                    one_line(&provider, 80)
                ));
                fields.provider = None;
                fields.model = None;
            }
        }
        let name = check_name(&file.name)?;
        let free = free_name(&name, &self.list().await?);
        if free != name {
            notes.push(format!(
                "A profile named “{name}” exists; this one is “{free}”."
            ));
        }
        let profile = self.create(&free, fields).await?;
        Ok(ImportedProfile { profile, notes })
    }

    /// Puts a profile on a conversation: its prompt, its model (when it names one) and its
    /// tool switches replace the conversation's, from the next message; `None` keeps what the
    /// conversation has and follows no profile.
    ///
    /// # Errors
    /// No such conversation or profile; the database.
    pub async fn set_conversation_profile(
        &self,
        conversation_id: &str,
        key: Option<&str>,
    ) -> Result<Conversation, CoreError> {
        let id = match key {
            Some(key) => Some(self.get(key).await?.id),
            None => None,
        };
        Ok(self
            .db
            .store()?
            .set_conversation_profile(conversation_id.to_owned(), id)
            .await?)
    }

    /// A new conversation that follows a profile (by id or name).
    ///
    /// # Errors
    /// No such profile; the database.
    pub async fn create_conversation(
        &self,
        title: Option<&str>,
        key: &str,
    ) -> Result<Conversation, CoreError> {
        let id = self.get(key).await?.id;
        let named = title.is_some_and(|t| !crate::text::is_blank(t));
        let title = new_title(title.unwrap_or_default());
        Ok(self
            .db
            .store()?
            .create_conversation_from_profile(title, id, named)
            .await?)
    }

    /// Settings with the limits of the profile `conversation` follows in place of Settings'
    /// own (each limit the profile leaves unset stays Settings').
    ///
    /// # Errors
    /// The database.
    pub(super) async fn settings_for(
        &self,
        conversation: &Conversation,
        settings: &Settings,
    ) -> Result<Settings, CoreError> {
        let mut settings = settings.clone();
        let Some(id) = &conversation.profile_id else {
            return Ok(settings);
        };
        let profile = match self.db.store()?.get_profile(id.clone()).await {
            Ok(profile) => profile,
            Err(StoreError::NotFound { .. }) => return Ok(settings),
            Err(e) => return Err(e.into()),
        };
        let f = profile.fields;
        settings.max_rounds = f.max_rounds.unwrap_or(settings.max_rounds);
        settings.tool_timeout_secs = f.tool_timeout_secs.unwrap_or(settings.tool_timeout_secs);
        settings.run_time_limit_secs = f
            .run_time_limit_secs
            .unwrap_or(settings.run_time_limit_secs);
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Profile {
        Profile {
            id: name.to_owned(),
            name: name.to_owned(),
            fields: ProfileFields::default(),
            is_default: false,
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn a_taken_name_gets_the_next_free_number() {
        let taken = [named("Coding"), named("coding (2)")];
        assert_eq!(free_name("Research", &taken), "Research");
        assert_eq!(free_name("CODING", &taken), "CODING (3)");
    }

    #[test]
    fn the_last_word_on_a_switch_is_kept_and_a_blank_server_refused() {
        let t = |server: &str, tool: Option<&str>, enabled| ToolToggle {
            server: server.to_owned(),
            tool: tool.map(str::to_owned),
            enabled,
        };
        let kept = tidy_tools(
            vec![
                t(" git ", None, true),
                t("git", Some(" "), false),
                t("fs", Some("write_file"), false),
            ],
            "profile",
        )
        .unwrap();
        assert_eq!(
            kept,
            vec![t("git", None, false), t("fs", Some("write_file"), false)]
        );
        assert_eq!(
            tidy_tools(vec![t("  ", None, true)], "profile")
                .unwrap_err()
                .field,
            "tools"
        );
        let many = vec![t("s", None, true); MAX_PROFILE_SWITCHES + 1];
        assert_eq!(tidy_tools(many, "profile").unwrap_err().field, "tools");
        let long = "x".repeat(MAX_SWITCH_NAME_CHARS + 1);
        assert!(tidy_tools(vec![t(&long, None, true)], "profile").is_err());
        assert_eq!(
            tidy_tools(vec![t("a\u{1b}[31mb", None, true)], "profile").unwrap()[0].server,
            "a [31mb",
            "no control character reaches a terminal"
        );
    }

    #[test]
    fn a_name_is_one_line_and_not_blank() {
        assert_eq!(check_name("  Deep\n research ").unwrap(), "Deep research");
        assert_eq!(check_name(" \u{200b} ").unwrap_err().field, "name");
        assert!(check_name(&"x".repeat(61)).is_err());
    }

    #[test]
    fn a_choice_reads_as_the_window_sends_it() {
        let read = |json: &str| serde_json::from_str::<ProfileChoice>(json).unwrap();
        assert_eq!(read(r#"{"kind":"default"}"#), ProfileChoice::Default);
        assert_eq!(read(r#"{"kind":"none"}"#), ProfileChoice::None);
        assert_eq!(
            read(r#"{"kind":"named","id":"p1"}"#),
            ProfileChoice::Named("p1".into())
        );
    }
}
