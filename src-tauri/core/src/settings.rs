//! The user's settings: theme, default provider and model, and the tool-loop limits later
//! issues read. Owns their defaults, ranges and (de)serialisation to the flat key/value file
//! that tauri-plugin-store writes (`<config dir>/settings.json`). It does not own the file's
//! writing in the desktop app — the store plugin does; the command line only reads it.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::input::InvalidInput;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error("Cannot read the settings file {path}: {detail}")]
    Read { path: String, detail: String },
    #[error("Cannot save settings: {0}")]
    Save(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Theme {
    Light,
    Dark,
    #[default]
    System,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Settings {
    pub theme: Theme,
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    pub max_rounds: u32,
    pub tool_timeout_secs: u32,
    pub run_time_limit_secs: u32,
    /// Ask the model for a few words on what each tool call does, for the status line (one
    /// more small request per call, waited for at most [`DESCRIBE_WITHIN`]).
    #[serde(default)]
    pub describe_calls: bool,
    /// The system prompt a new conversation starts with (each conversation keeps its own copy,
    /// edited from its header); empty for none.
    #[serde(default = "default_system_prompt")]
    pub default_system_prompt: String,
    /// The MCP Registry servers are found in (an organisation may run its own).
    #[serde(default = "default_mcp_registry")]
    pub mcp_registry: String,
    /// How long a local server (Ollama) keeps a model loaded after an answer: `5m`, `1h`,
    /// `30s`, a number of seconds, `0` (unload at once) or `-1` (for ever); empty for the
    /// server's own default (Ollama's is five minutes).
    #[serde(default)]
    pub keep_alive: String,
    /// How many days the audit record keeps each tool call (the last day's always).
    #[serde(default = "default_audit_retention_days")]
    pub audit_retention_days: u32,
    /// Closing the window keeps the app running in the tray, so schedules go on; Quit in the
    /// tray's menu ends it.
    #[serde(default)]
    pub keep_running_in_background: bool,
    /// The model may save short facts (the `remember` tool) and is told those relevant to a
    /// question, in conversations outside projects (a project has its own switch). Off: nothing
    /// is remembered, and nothing remembered is told.
    #[serde(default)]
    pub memory: bool,
}

fn default_audit_retention_days() -> u32 {
    365
}

pub const AUDIT_RETENTION_RANGE: std::ops::RangeInclusive<u32> = 1..=36_500;

/// Whether `text` is a `keep_alive` Ollama reads: a whole number of seconds (`-1` for ever),
/// or one followed by `s`, `m` or `h`.
pub fn is_keep_alive(text: &str) -> bool {
    let digits = text.strip_suffix(['s', 'm', 'h']).unwrap_or(text);
    let digits = if digits.len() == text.len() {
        digits.strip_prefix('-').unwrap_or(digits)
    } else {
        digits
    };
    !digits.is_empty() && digits.len() <= 9 && digits.bytes().all(|b| b.is_ascii_digit())
}

fn default_mcp_registry() -> String {
    crate::mcp::registry::OFFICIAL_REGISTRY.to_owned()
}

/// What a new conversation is told unless Settings say otherwise: how to go about tools.
pub const DEFAULT_SYSTEM_PROMPT: &str = "You can use tools when they help with the task.
- Use tools one after another when a task needs several steps.
- If a tool call fails, try another approach before giving up.
- If you cannot complete the task after reasonable attempts, explain what could not be done and why.
- Stop calling tools once you have enough information to answer.";

fn default_system_prompt() -> String {
    DEFAULT_SYSTEM_PROMPT.to_owned()
}

/// The longest system prompt kept (a conversation's or the default), in characters.
pub const MAX_SYSTEM_PROMPT_CHARS: usize = 32_000;

/// A system prompt as kept: trailing spaces and blank lines dropped; too long is refused.
///
/// # Errors
/// Longer than [`MAX_SYSTEM_PROMPT_CHARS`].
pub fn tidy_system_prompt(field: &'static str, text: &str) -> Result<String, InvalidInput> {
    let text = text.trim_end();
    let text = if crate::text::is_blank(text) {
        ""
    } else {
        text
    };
    if text.chars().count() > MAX_SYSTEM_PROMPT_CHARS {
        return Err(InvalidInput::new(
            field,
            format!("A system prompt can be at most {MAX_SYSTEM_PROMPT_CHARS} characters long."),
        ));
    }
    Ok(text.to_owned())
}

/// How long a call's description may take before the status line keeps the tool's name.
pub const DESCRIBE_WITHIN: std::time::Duration = std::time::Duration::from_secs(2);

pub const MAX_ROUNDS_RANGE: std::ops::RangeInclusive<u32> = 1..=100;
pub const TOOL_TIMEOUT_RANGE: std::ops::RangeInclusive<u32> = 1..=3600;
pub const RUN_TIME_LIMIT_RANGE: std::ops::RangeInclusive<u32> = 10..=86_400;

impl Default for Settings {
    fn default() -> Self {
        Self {
            theme: Theme::System,
            default_provider: None,
            default_model: None,
            max_rounds: 10,
            tool_timeout_secs: 60,
            run_time_limit_secs: 600,
            describe_calls: false,
            default_system_prompt: default_system_prompt(),
            mcp_registry: default_mcp_registry(),
            keep_alive: String::new(),
            audit_retention_days: default_audit_retention_days(),
            keep_running_in_background: false,
            memory: false,
        }
    }
}

pub(crate) fn check_range(
    field: &'static str,
    label: &str,
    value: u32,
    range: &std::ops::RangeInclusive<u32>,
) -> Result<(), InvalidInput> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(InvalidInput::new(
            field,
            format!(
                "{label} must be between {} and {}",
                range.start(),
                range.end()
            ),
        ))
    }
}

fn blank_to_none(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

impl Settings {
    /// Checks ranges and tidies text fields.
    ///
    /// # Errors
    /// The first field out of range, named as the UI names it.
    pub fn validated(mut self) -> Result<Self, InvalidInput> {
        check_range(
            "max_rounds",
            "Max rounds",
            self.max_rounds,
            &MAX_ROUNDS_RANGE,
        )?;
        check_range(
            "tool_timeout_secs",
            "Tool timeout (seconds)",
            self.tool_timeout_secs,
            &TOOL_TIMEOUT_RANGE,
        )?;
        check_range(
            "run_time_limit_secs",
            "Run time limit (seconds)",
            self.run_time_limit_secs,
            &RUN_TIME_LIMIT_RANGE,
        )?;
        self.default_provider = blank_to_none(self.default_provider);
        self.default_model = blank_to_none(self.default_model);
        self.default_system_prompt =
            tidy_system_prompt("default_system_prompt", &self.default_system_prompt)?;
        let registry = self.mcp_registry.trim();
        self.mcp_registry = if registry.is_empty() {
            default_mcp_registry()
        } else if crate::mcp::registry::is_address(registry) {
            registry.trim_end_matches('/').to_owned()
        } else {
            return Err(InvalidInput::new(
                "mcp_registry",
                "Enter the registry's http:// or https:// address.",
            ));
        };
        check_range(
            "audit_retention_days",
            "How long the record of calls is kept",
            self.audit_retention_days,
            &AUDIT_RETENTION_RANGE,
        )?;
        self.keep_alive = self.keep_alive.trim().to_owned();
        if !self.keep_alive.is_empty() && !is_keep_alive(&self.keep_alive) {
            return Err(InvalidInput::new(
                "keep_alive",
                "Enter how long as 30s, 5m or 1h, 0 to unload at once, or -1 to keep it loaded; or leave it empty.",
            ));
        }
        Ok(self)
    }

    /// Reads the flat key/value entries the store plugin keeps. Each entry that is missing,
    /// mistyped or out of range falls back to its default (and is logged), so a hand-edited
    /// file never stops the app from starting and never loses the entries that are fine.
    pub fn from_entries(entries: &Map<String, Value>) -> Self {
        let parse = |map: &Map<String, Value>| {
            serde_json::from_value::<Settings>(Value::Object(map.clone()))
                .ok()
                .and_then(|s| s.validated().ok())
        };
        let mut accepted = Settings::default().to_entries();
        for (key, value) in entries {
            if !accepted.contains_key(key) {
                continue;
            }
            let mut candidate = accepted.clone();
            candidate.insert(key.clone(), value.clone());
            if parse(&candidate).is_some() {
                accepted = candidate;
            } else {
                tracing::warn!(setting = %key, "ignoring an invalid setting; using its default");
            }
        }
        parse(&accepted).unwrap_or_default()
    }

    /// The flat key/value entries to write.
    pub fn to_entries(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// Reads `settings.json` as the store plugin wrote it; a missing file means defaults.
    ///
    /// # Errors
    /// The file exists but cannot be read or is not a JSON object.
    pub fn load_file(path: &Path) -> Result<Self, SettingsError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Settings::default()),
            Err(e) => {
                return Err(SettingsError::Read {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                })
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(Settings::from_entries(&map)),
            Ok(_) => Err(SettingsError::Read {
                path: path.display().to_string(),
                detail: "not a JSON object".into(),
            }),
            Err(e) => Err(SettingsError::Read {
                path: path.display().to_string(),
                detail: e.to_string(),
            }),
        }
    }
}

/// Where the settings live: the window's store plugin, the command line's file, a test's
/// memory. The app reads them through this and writes through it (a removed provider clears
/// the default that named it), so every adapter keeps one copy that stays true.
pub trait SettingsSource: Send + Sync {
    /// The settings as they are now (defaults for anything missing or invalid).
    fn load(&self) -> Settings;

    /// Writes `settings` (already validated).
    ///
    /// # Errors
    /// [`SettingsError::Save`] when they cannot be written.
    fn save(&self, settings: &Settings) -> Result<(), SettingsError>;
}

/// `settings.json` read and written directly: what the command line uses. Entries it does not
/// know are kept; the file is replaced whole (written aside, then renamed), never half-written.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    path: std::path::PathBuf,
}

impl SettingsFile {
    pub fn new(path: std::path::PathBuf) -> Self {
        Self { path }
    }
}

impl SettingsSource for SettingsFile {
    fn load(&self) -> Settings {
        Settings::load_file(&self.path).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "settings unreadable; using defaults");
            Settings::default()
        })
    }

    fn save(&self, settings: &Settings) -> Result<(), SettingsError> {
        let save = |e: &dyn std::fmt::Display| SettingsError::Save(e.to_string());
        let mut entries = std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|text| serde_json::from_str::<Map<String, Value>>(&text).ok())
            .unwrap_or_default();
        entries.extend(settings.to_entries());
        let text = serde_json::to_vec_pretty(&entries).map_err(|e| save(&e))?;
        crate::paths::write_whole(&self.path, &text).map_err(|e| save(&e))
    }
}

/// Settings kept in memory only (tests, and a home whose settings cannot be stored).
#[derive(Debug, Default)]
pub struct MemorySettings(std::sync::Mutex<Settings>);

impl MemorySettings {
    pub fn new(settings: Settings) -> Self {
        Self(std::sync::Mutex::new(settings))
    }
}

impl SettingsSource for MemorySettings {
    fn load(&self) -> Settings {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn save(&self, settings: &Settings) -> Result<(), SettingsError> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = settings.clone();
        Ok(())
    }
}

/// A settings file that exists but cannot be parsed would be dropped by the store plugin and
/// overwritten at the next save. Moves it aside instead (`settings.json.unreadable-<ms>`) and
/// returns where it went, so nothing a person wrote is lost.
pub fn set_aside_if_unreadable(path: &Path) -> Option<std::path::PathBuf> {
    match Settings::load_file(path) {
        Ok(_) => None,
        Err(e) => {
            let aside = path.with_extension(format!("json.unreadable-{}", crate::store::now_ms()));
            match std::fs::rename(path, &aside) {
                Ok(()) => {
                    tracing::warn!(error = %e, kept = %aside.display(), "settings file unreadable; using defaults");
                    Some(aside)
                }
                Err(rename) => {
                    tracing::error!(error = %e, %rename, "settings file unreadable and cannot be moved aside");
                    None
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_the_documented_tool_loop_limits() {
        let s = Settings::default();
        assert_eq!(
            (
                s.max_rounds,
                s.tool_timeout_secs,
                s.run_time_limit_secs,
                s.theme
            ),
            (10, 60, 600, Theme::System)
        );
    }

    #[test]
    fn keep_alive_is_a_duration_ollama_reads_or_empty_for_its_own() {
        for good in ["", "5m", "1h", "30s", "300", "0", "-1", " 10m "] {
            let kept = Settings {
                keep_alive: good.to_owned(),
                ..Settings::default()
            }
            .validated();
            assert_eq!(kept.map(|s| s.keep_alive), Ok(good.trim().to_owned()));
        }
        for bad in ["5 minutes", "m", "-5m", "1d", "1e9", "12345678901"] {
            let err = Settings {
                keep_alive: bad.to_owned(),
                ..Settings::default()
            }
            .validated()
            .unwrap_err();
            assert_eq!(err.field, "keep_alive", "{bad}");
        }
    }

    #[test]
    fn an_out_of_range_value_is_refused_naming_the_field() {
        let err = Settings {
            max_rounds: 0,
            ..Settings::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(err.field, "max_rounds");
        let err = Settings {
            tool_timeout_secs: 99_999,
            ..Settings::default()
        }
        .validated()
        .unwrap_err();
        assert_eq!(err.field, "tool_timeout_secs");
    }

    #[test]
    fn entries_round_trip_through_the_flat_store_shape() {
        let s = Settings {
            theme: Theme::Dark,
            default_provider: Some("Local".into()),
            default_model: Some("llama3.2".into()),
            max_rounds: 25,
            tool_timeout_secs: 30,
            run_time_limit_secs: 1200,
            describe_calls: true,
            default_system_prompt: "Answer in French.".into(),
            mcp_registry: "https://registry.example.com/mcp".into(),
            keep_alive: "30m".into(),
            audit_retention_days: 90,
            keep_running_in_background: true,
            memory: true,
        };
        assert_eq!(Settings::from_entries(&s.to_entries()), s);
        assert_eq!(s.to_entries()["theme"], json!("dark"));
    }

    #[test]
    fn the_mcp_registry_is_the_official_one_unless_another_address_is_given() {
        assert_eq!(
            Settings::from_entries(&Map::new()).mcp_registry,
            crate::mcp::registry::OFFICIAL_REGISTRY
        );
        let own = Settings {
            mcp_registry: " https://registry.example.com/ ".into(),
            ..Settings::default()
        };
        assert_eq!(
            own.validated().unwrap().mcp_registry,
            "https://registry.example.com"
        );
        let cleared = Settings {
            mcp_registry: String::new(),
            ..Settings::default()
        };
        assert_eq!(
            cleared.validated().unwrap().mcp_registry,
            crate::mcp::registry::OFFICIAL_REGISTRY
        );
        for bad in ["registry.example.com", "file:///srv/registry"] {
            let err = Settings {
                mcp_registry: bad.into(),
                ..Settings::default()
            }
            .validated()
            .unwrap_err();
            assert_eq!(err.field, "mcp_registry");
        }
    }

    #[test]
    fn the_default_system_prompt_is_the_tool_guidance_and_too_long_is_refused() {
        let defaults = Settings::default();
        assert!(defaults
            .default_system_prompt
            .contains("try another approach"));
        // A file from before the setting existed gets the guidance, not nothing.
        assert_eq!(
            Settings::from_entries(&Map::new()).default_system_prompt,
            DEFAULT_SYSTEM_PROMPT
        );
        // Cleared on purpose, it stays cleared; trailing blank lines go.
        let cleared = Settings {
            default_system_prompt: " \n\u{200b}\n".into(),
            ..Settings::default()
        };
        assert_eq!(cleared.validated().unwrap().default_system_prompt, "");
        let tidy = Settings {
            default_system_prompt: "Be brief.\n\n".into(),
            ..Settings::default()
        };
        assert_eq!(tidy.validated().unwrap().default_system_prompt, "Be brief.");
        let long = Settings {
            default_system_prompt: "x".repeat(MAX_SYSTEM_PROMPT_CHARS + 1),
            ..Settings::default()
        };
        assert_eq!(long.validated().unwrap_err().field, "default_system_prompt");
    }

    #[test]
    fn a_hand_edited_file_with_bad_values_keeps_the_good_ones() {
        let entries = json!({"theme": "dark", "max_rounds": "lots", "tool_timeout_secs": 0,
                             "run_time_limit_secs": 900, "unknown": true});
        let s = Settings::from_entries(entries.as_object().unwrap());
        assert_eq!(s.theme, Theme::Dark);
        assert_eq!(s.max_rounds, 10);
        assert_eq!(s.tool_timeout_secs, 60);
        assert_eq!(s.run_time_limit_secs, 900);
    }

    #[test]
    fn an_unreadable_settings_file_is_moved_aside_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, b"{ \"theme\": \"dark\", oops").unwrap();
        let aside = set_aside_if_unreadable(&path).expect("moved aside");
        assert!(!path.exists());
        assert_eq!(
            std::fs::read(&aside).unwrap(),
            b"{ \"theme\": \"dark\", oops"
        );

        std::fs::write(&path, b"{\"theme\": \"dark\"}").unwrap();
        assert!(set_aside_if_unreadable(&path).is_none());
        assert!(path.exists());
    }

    #[test]
    fn the_settings_file_is_written_whole_and_keeps_entries_it_does_not_know() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, br#"{"theme": "dark", "window": {"width": 900}}"#).unwrap();
        let file = SettingsFile::new(path.clone());
        let mut s = file.load();
        assert_eq!(s.theme, Theme::Dark);
        s.default_provider = Some("Local".into());
        file.save(&s).unwrap();
        assert_eq!(file.load(), s);
        let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(raw["window"], json!({"width": 900}));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "nothing left aside"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "the person's alone, as they were written");
        }
    }

    #[test]
    fn a_missing_settings_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings::load_file(&dir.path().join("settings.json")).unwrap();
        assert_eq!(s, Settings::default());
    }
}
