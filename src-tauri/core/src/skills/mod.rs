//! Agent Skills (issue 61): a folder with a `SKILL.md` — YAML front matter with a `name` and a
//! `description`, then instructions — and any files the instructions name. This module owns the
//! format as Switchboard reads it (the front matter, the name's rules, the limits of the MCP
//! Skills extension: 512 files, 16 MiB), what a skill is as the window and the command line see
//! it ([`Skill`]), and what the model is given of the skills a conversation may use: their
//! names and descriptions only, in the description of Switchboard's own `load_skill` tool
//! ([`catalogue`]); the instructions and files come when the model loads one.
//!
//! A skill is data. Nothing in one runs by itself: front-matter fields that would run something
//! or widen what the model may do (`hooks`, `allowed-tools`, …) are read, named to the person
//! as ignored, and never acted on; a skill's scripts are files the model can read, and run
//! only as asking calls where the person allowed them for that skill ([`scripts`]). The
//! person's own skills live in [`Library`].

mod library;
pub mod scripts;

use serde::Serialize;
use serde_json::{Map, Value};

pub use library::{DigestCache, Library};

/// The file every skill has at its root.
pub const SKILL_FILE: &str = "SKILL.md";
/// The most files one skill may have (the MCP Skills extension's limit).
pub const MAX_FILES: usize = 512;
/// The most one skill's files may hold in all (the MCP Skills extension's limit).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;
/// The longest name (the Agent Skills format).
pub const MAX_NAME_CHARS: usize = 64;
/// The longest description (the Agent Skills format).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The "server" a conversation's or a profile's switch for a skill is kept under (its "tool" is
/// the skill's name): a name no configured server can have, as it holds a "/".
pub const SWITCHES: &str = "switchboard/skills";

/// Front-matter fields that would make something run or give the model more than the
/// conversation allows. Switchboard never acts on them; a skill that has them says so.
const NEVER_ACTED_ON: &[&str] = &[
    "allowed-tools",
    "allowed_tools",
    "hooks",
    "scripts",
    "script",
    "command",
    "commands",
    "run",
    "setup",
    "install",
    "postinstall",
    "preinstall",
    "env",
];

/// Why a skill cannot be read, kept or found.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("{0}")]
    Invalid(String),
    #[error("There is no skill named “{0}”")]
    NotFound(String),
    #[error("A skill named “{0}” is already there; remove it first to replace it")]
    Exists(String),
    #[error("Cannot read or write {path}: {detail}")]
    Io { path: String, detail: String },
    #[error("The skill's zip is refused. {0}")]
    Archive(#[from] crate::archive::ArchiveError),
}

pub(crate) fn io_error(path: &std::path::Path) -> impl Fn(std::io::Error) -> SkillError + '_ {
    move |e| SkillError::Io {
        path: path.display().to_string(),
        detail: e.to_string(),
    }
}

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkillOrigin {
    /// The person's skills folder.
    Folder { path: String },
    /// An MCP server that serves it (the Skills extension): the server's name in mcp.json and
    /// the URI of the skill's `SKILL.md` there.
    Server { server: String, uri: String },
}

/// One file of a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SkillFile {
    /// Its path inside the skill, with `/` between its parts.
    pub path: String,
    #[ts(type = "number")]
    pub bytes: u64,
    /// It is a program ([`is_script`]).
    pub script: bool,
}

impl SkillFile {
    #[must_use]
    pub fn new(path: String, bytes: u64) -> Self {
        let script = is_script(&path);
        Self {
            path,
            bytes,
            script,
        }
    }
}

/// A skill as the window and the command line see it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Skill {
    /// Its name (for a folder that is not a valid skill, the folder's name).
    pub name: String,
    pub description: String,
    pub origin: SkillOrigin,
    /// Every file, `SKILL.md` first.
    pub files: Vec<SkillFile>,
    #[ts(type = "number")]
    pub bytes: u64,
    /// Conversations may use it (unless one, or its profile, switches it off).
    pub enabled: bool,
    /// The front matter's other fields (license, metadata, compatibility…), as written: shown,
    /// not acted on.
    #[ts(type = "Record<string, unknown>")]
    pub fields: Map<String, Value>,
    /// Fields of its front matter Switchboard never acts on (`hooks`, `allowed-tools`, …).
    pub ignored: Vec<String>,
    /// It has files that are programs (scripts): the model can read them, and run them only
    /// where the person allowed it ([`scripts`]).
    pub has_scripts: bool,
    /// Whether the model may ask to run its scripts.
    pub scripts: scripts::ScriptsAllowed,
    /// A server's skill the person switched on whose files changed since: off until they
    /// switch it on again (their approval was bound to the files it had).
    pub changed: bool,
    /// A server's skill: what switching it on approves (the hash of its URI, front matter and
    /// files' digests as listed), sent back with the switch so that what is approved is what
    /// was shown. `None` for the person's own skills.
    pub approval: Option<String>,
    /// Why the folder is not a skill Switchboard can use; `None` for a good one.
    pub problem: Option<String>,
}

/// The skills one run may load (switched on for its conversation), the folder the person's
/// are read from, and the entries the servers' skills were listed with, by name.
#[derive(Debug, Clone, Default)]
pub struct RunSkills {
    pub library: Option<Library>,
    pub skills: Vec<Skill>,
    pub served: std::collections::HashMap<String, Served>,
    /// Where the scripts the person allowed run.
    pub scripts: ScriptPlaces,
}

/// Where a run's skill scripts run: each call in a working folder of its own under
/// `runs_dir`, with the home folder and `closed` shut but for the interpreter's install, and
/// the interpreter found on `search_path`.
#[derive(Debug, Clone, Default)]
pub struct ScriptPlaces {
    pub runs_dir: std::path::PathBuf,
    /// Switchboard's own folders (data, settings, logs).
    pub closed: Vec<std::path::PathBuf>,
    pub home: std::path::PathBuf,
    pub search_path: std::ffi::OsString,
}

/// A server's skill as a run holds it: the server and the entry its files are checked against.
#[derive(Debug, Clone)]
pub struct Served {
    pub server: String,
    pub entry: rmcp::model::Skill,
}

/// A `SKILL.md` read: its front matter and its instructions.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub name: String,
    pub description: String,
    /// The front matter's other fields.
    pub fields: Map<String, Value>,
    /// What follows the front matter.
    pub body: String,
}

impl Parsed {
    /// The fields of its front matter Switchboard never acts on.
    #[must_use]
    pub fn ignored(&self) -> Vec<String> {
        self.fields
            .keys()
            .filter(|k| NEVER_ACTED_ON.contains(&k.to_ascii_lowercase().as_str()))
            .cloned()
            .collect()
    }
}

/// Reads a `SKILL.md`: it must begin with front matter between `---` lines, a YAML mapping with
/// a valid `name` and a `description`.
///
/// # Errors
/// No front matter, YAML that does not read or is not a mapping, a bad name or description.
pub fn parse(text: &str) -> Result<Parsed, SkillError> {
    let invalid = |why: &str| SkillError::Invalid(format!("Its {SKILL_FILE} {why}"));
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err(invalid(
            "does not begin with front matter (a “---” line, then name and description)",
        ));
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines.by_ref() {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(invalid(
            "has front matter that never ends (no closing “---”)",
        ));
    }
    let body: String = lines.collect();
    let value: Value = serde_norway::from_str(&yaml)
        .map_err(|e| invalid(&format!("has front matter that is not YAML: {e}")))?;
    let Value::Object(mut fields) = value else {
        return Err(invalid("has front matter that is not a list of fields"));
    };
    let mut text_field = |key: &str| match fields.remove(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_owned()),
        _ => Err(invalid(&format!(
            "has no “{key}” (a text) in its front matter"
        ))),
    };
    let name = text_field("name")?;
    let description = text_field("description")?;
    check_name(&name).map_err(|why| invalid(&why))?;
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(invalid(&format!(
            "has a description longer than {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok(Parsed {
        name,
        description,
        fields,
        body: body.trim_start_matches(['\r', '\n']).to_owned(),
    })
}

/// A skill's name as the Agent Skills format has it: 1–64 lowercase letters, digits and
/// hyphens, no hyphen first, last or twice in a row. It names the skill's folder, so nothing
/// else may pass.
///
/// # Errors
/// What is wrong with it, in a sentence.
pub fn check_name(name: &str) -> Result<(), String> {
    let count = name.chars().count();
    if count == 0 || count > MAX_NAME_CHARS {
        return Err(format!(
            "has a name of {count} characters (1 to {MAX_NAME_CHARS})"
        ));
    }
    let fits = name
        .chars()
        .all(|c| c == '-' || (c.is_alphanumeric() && !c.is_uppercase()));
    if !fits || name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Err(format!(
            "has the name “{}”: a name is lowercase letters, digits and single hyphens",
            crate::text::one_line(name, 80)
        ));
    }
    Ok(())
}

/// Whether a skill's file is a program: in a `scripts` folder, or named as one.
#[must_use]
pub fn is_script(path: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "sh", "bash", "zsh", "fish", "py", "js", "mjs", "cjs", "ts", "rb", "pl", "php", "ps1",
        "bat", "cmd", "exe", "com", "lua", "r", "jar",
    ];
    path.split('/').any(|part| part == "scripts")
        || path
            .rsplit_once('.')
            .is_some_and(|(_, ext)| EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The most of the model's request the skills' list may take, in characters: the rest of the
/// skills are named without their descriptions, and past that only counted.
pub const CATALOGUE_CHARS: usize = 12_000;
/// The least room the list is given, however small the model's window.
const CATALOGUE_MIN_CHARS: usize = 2_000;

/// The room for the skills' list with a model of `window` tokens (when known): 5 % of the
/// window (a token is about four characters), within [2,000, [`CATALOGUE_CHARS`]].
#[must_use]
pub fn catalogue_room(window: Option<u64>) -> usize {
    window.map_or(CATALOGUE_CHARS, |w| {
        usize::try_from(w.saturating_mul(4) / 20)
            .unwrap_or(usize::MAX)
            .clamp(CATALOGUE_MIN_CHARS, CATALOGUE_CHARS)
    })
}
/// The most of one description the list gives.
const DESCRIPTION_IN_LIST: usize = 300;

/// The description of `load_skill` for `skills` (usable ones): what the tool does, then each
/// skill's name and description while they fit in `room` characters, then names alone, then
/// how many more there are.
#[must_use]
pub fn catalogue(skills: &[&Skill], room: usize) -> String {
    let mut text = String::from(
        "Loads a skill: instructions (and files) for a kind of task, written by the person or \
         for them. When a task matches a skill's description, load the skill first and follow \
         its instructions. Give the skill's name to get its instructions and the list of its \
         files; give a file's path too to read that file. A skill is guidance, not a \
         permission: its scripts are files to read, and any tool it names is asked for as \
         usual.\n\nSkills:\n",
    );
    // Room kept for the lines that end the list ("Also …", "N more …").
    let room = room.saturating_sub(250);
    let mut named_only = Vec::new();
    let mut left_out = 0usize;
    for skill in skills {
        let description = crate::text::one_line(&skill.description, DESCRIPTION_IN_LIST);
        let line = match &skill.origin {
            SkillOrigin::Folder { .. } => format!("- {}: {description}\n", skill.name),
            SkillOrigin::Server { server, .. } => format!(
                "- {} (from the server “{server}”): {description}\n",
                skill.name
            ),
        };
        if named_only.is_empty() && text.len() + line.len() <= room {
            text.push_str(&line);
        } else if text.len()
            + named_only.iter().map(|n: &&str| n.len() + 2).sum::<usize>()
            + skill.name.len()
            < room
        {
            named_only.push(&skill.name);
        } else {
            left_out += 1;
        }
    }
    if !named_only.is_empty() {
        text.push_str(&format!(
            "Also (load one to read what it is for): {}\n",
            named_only.join(", ")
        ));
    }
    if left_out > 0 {
        text.push_str(&format!(
            "{left_out} more skills are not listed: there is no room for them. The person can \
             switch some off for this conversation.\n"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skills_digest_is_read_again_only_once_its_files_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("run.sh"), "echo hi\n").unwrap();
        let files = vec![SkillFile {
            path: "run.sh".into(),
            bytes: 8,
            script: true,
        }];
        let cache = DigestCache::default();
        let reads = std::cell::Cell::new(0);
        let digest = || {
            cache.digest(dir.path(), &files, || {
                reads.set(reads.get() + 1);
                scripts::digest(dir.path(), &files)
            })
        };
        let first = digest().unwrap();
        assert_eq!(digest().unwrap(), first);
        assert_eq!(reads.get(), 1, "unchanged: not read again");
        std::fs::write(dir.path().join("run.sh"), "echo changed\n").unwrap();
        let changed = digest().unwrap();
        assert_eq!(reads.get(), 2);
        assert_ne!(changed, first);
    }

    #[test]
    fn front_matter_gives_name_description_and_the_rest() {
        let parsed = parse(
            "---\nname: pdf-forms\ndescription: >\n  Fill PDF forms\n  from data.\nlicense: MIT\n\
             hooks:\n  pre: rm -rf ~\nallowed-tools: Bash\n---\n\n# PDF forms\nStep one.\n",
        )
        .unwrap();
        assert_eq!(parsed.name, "pdf-forms");
        assert_eq!(parsed.description, "Fill PDF forms from data.");
        assert_eq!(parsed.fields["license"], "MIT");
        assert_eq!(parsed.body, "# PDF forms\nStep one.\n");
        assert_eq!(parsed.ignored(), vec!["allowed-tools", "hooks"]);
        let crlf = parse("\u{feff}---\r\nname: a\r\ndescription: b\r\n---\r\nbody").unwrap();
        assert_eq!((crlf.name.as_str(), crlf.body.as_str()), ("a", "body"));
    }

    #[test]
    fn a_skill_md_without_what_it_needs_is_refused_with_why() {
        for (text, why) in [
            ("# no front matter", "does not begin with front matter"),
            ("---\nname: a\n", "never ends"),
            ("---\n- a\n- b\n---\n", "not a list of fields"),
            ("---\nname: [\n---\n", "not YAML"),
            ("---\ndescription: d\n---\n", "no “name”"),
            ("---\nname: a\n---\n", "no “description”"),
            (
                "---\nname: ../etc\ndescription: d\n---\n",
                "lowercase letters",
            ),
            ("---\nname: Big\ndescription: d\n---\n", "lowercase letters"),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains(why), "{text:?}: {error}");
        }
        let long = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1025));
        assert!(parse(&long).is_err());
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "pdf-forms", "v2", "données"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a b",
            "a/b",
            "..",
            "a.b",
            &"a".repeat(65),
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    fn skill(name: &str, description: &str) -> Skill {
        Skill {
            name: name.to_owned(),
            description: description.to_owned(),
            origin: SkillOrigin::Folder {
                path: String::new(),
            },
            files: Vec::new(),
            bytes: 0,
            enabled: true,
            fields: Map::new(),
            ignored: Vec::new(),
            has_scripts: false,
            scripts: scripts::ScriptsAllowed::None,
            changed: false,
            approval: None,
            problem: None,
        }
    }

    #[test]
    fn the_list_gives_descriptions_while_they_fit_then_names_then_a_count() {
        let few = [skill("pdf-forms", "Fill PDF forms.")];
        let text = catalogue(&few.iter().collect::<Vec<_>>(), CATALOGUE_CHARS);
        assert!(text.ends_with("- pdf-forms: Fill PDF forms.\n"), "{text}");
        let many: Vec<Skill> = (0..2_000)
            .map(|i| skill(&format!("skill-{i}"), &"does a thing ".repeat(20)))
            .collect();
        let text = catalogue(&many.iter().collect::<Vec<_>>(), CATALOGUE_CHARS);
        assert!(text.len() <= CATALOGUE_CHARS + 200, "{}", text.len());
        let small = catalogue(
            &many.iter().collect::<Vec<_>>(),
            catalogue_room(Some(8_192)),
        );
        assert!(small.len() <= 2_000 + 200, "an 8k window: {}", small.len());
        assert!(small.contains("more skills are not listed"));
        assert!(text.contains("- skill-0: does a thing"));
        assert!(text.contains("Also (load one to read what it is for): skill-"));
        assert!(text.contains("more skills are not listed"));
    }

    #[test]
    fn scripts_are_told_apart() {
        assert!(is_script("scripts/fill.txt"));
        assert!(is_script("tools/run.PY"));
        assert!(!is_script("reference/FORMS.md"));
    }
}
