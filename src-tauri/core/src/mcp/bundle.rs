//! MCP Bundles (`.mcpb`, Claude Desktop's extension format: a zip holding `manifest.json`,
//! the server and what it needs): a bundle read and checked before anything is unpacked —
//! a manifest of a known version, every path inside the bundle, no links, no entry larger or
//! more compressed than a server needs (zip bombs), the entry point there — what the consent
//! screen shows of it, the mcp.json entry that runs it once unpacked (its `${…}` variables
//! and the person's `user_config` values put in, sensitive ones set apart for the keychain),
//! and the unpacking itself, which counts every byte it writes. Nothing here adds or starts
//! a server: the entry goes through the same approval as any new server.

use std::collections::BTreeMap;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::config::{looks_secret, outside, ConfigValue, ServerEntry};
use super::install::InstallPlan;
use crate::archive::{inside, Archive, ArchiveError, Limits};

/// The manifest versions this Switchboard reads (`dxt_version` "0.1" is the same format under
/// its old name).
pub const MANIFEST_VERSIONS: &[&str] = &["0.1", "0.2", "0.3", "0.4"];
/// The file in an unpacked bundle's folder that says which server it belongs to: only that
/// server's removal removes the folder.
pub const OWNER_FILE: &str = ".switchboard-server";
/// The most files a bundle may hold.
const MAX_FILES: usize = 20_000;
/// The largest file a bundle may unpack to.
const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;
/// The most a whole bundle may unpack to.
const MAX_TOTAL_BYTES: u64 = 1024 * 1024 * 1024;
/// What a bundle may hold, as [`crate::archive`] checks it.
const LIMITS: Limits = Limits {
    max_files: MAX_FILES,
    max_file_bytes: MAX_FILE_BYTES,
    max_total_bytes: MAX_TOTAL_BYTES,
};
/// The largest manifest read.
const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// Whether `path` names an MCP bundle by its extension (`.mcpb`, or `.dxt` as the format was
/// first called), as a file dropped on the window or given to `mcp install` is told apart.
#[must_use]
pub fn is_bundle_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("mcpb") || e.eq_ignore_ascii_case("dxt"))
}

/// Why a bundle cannot be installed.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("Cannot read the bundle {path}: {detail}")]
    Io { path: String, detail: String },
    #[error("This is not an MCP bundle (a .mcpb is a zip file): {0}")]
    NotZip(String),
    #[error("The bundle has no manifest.json")]
    NoManifest,
    #[error("The bundle's “{0}” is encrypted or compressed in a way Switchboard does not read (it reads stored and deflated files)")]
    Unreadable(String),
    #[error("The bundle's manifest.json cannot be read: {0}")]
    Manifest(String),
    #[error("The bundle's manifest is of version “{0}”, which this Switchboard does not know (it reads {known}); update Switchboard or ask for a bundle of a known version", known = MANIFEST_VERSIONS.join(", "))]
    UnknownVersion(String),
    #[error(
        "The bundle holds “{0}”, a path that leads outside the bundle or is a link; it is refused"
    )]
    UnsafePath(String),
    #[error("The bundle holds more than {MAX_FILES} files; it is refused")]
    TooManyFiles,
    #[error("The bundle's “{path}” would unpack to {bytes} bytes, more than a server needs (at most {MAX_FILE_BYTES} a file, {MAX_TOTAL_BYTES} in all); it is refused")]
    TooLarge { path: String, bytes: u64 },
    #[error(
        "The bundle's “{path}” grows {ratio} times when unpacked, as zip bombs do; it is refused"
    )]
    Bomb { path: String, ratio: u64 },
    #[error("The bundle's entry point “{0}” is not in the bundle")]
    NoEntryPoint(String),
    #[error("The bundle is for {platforms}, not this computer ({this})")]
    Platform { platforms: String, this: String },
    #[error("The bundle's server type “{0}” is not one Switchboard can run (node, python, binary or uv)")]
    ServerType(String),
    #[error("The bundle needs a value for {}", .0.join(", "))]
    Missing(Vec<String>),
    #[error("The bundle's “{key}” must be {what}")]
    BadValue { key: String, what: String },
    /// What it would run is not taken from a bundle ([`super::config::outside`]).
    #[error("The bundle is refused: {0}")]
    Refused(String),
    #[error("The bundle puts the sensitive value “{0}” on its command line, where Switchboard does not write secrets; it is refused")]
    SecretOnCommandLine(String),
}

impl From<ArchiveError> for BundleError {
    fn from(e: ArchiveError) -> Self {
        match e {
            ArchiveError::Io { path, detail } => Self::Io { path, detail },
            ArchiveError::NotZip(detail) => Self::NotZip(detail),
            ArchiveError::Unreadable(name) => Self::Unreadable(name),
            ArchiveError::UnsafePath(name) => Self::UnsafePath(name),
            ArchiveError::TooManyFiles(_) => Self::TooManyFiles,
            ArchiveError::TooLarge { path, bytes } => Self::TooLarge { path, bytes },
            ArchiveError::Bomb { path, ratio } => Self::Bomb { path, ratio },
        }
    }
}

/// What the consent screen shows of a bundle before anything is unpacked. Every text is the
/// bundle author's: hostile, shown as text.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct BundleInfo {
    pub name: String,
    pub display_name: Option<String>,
    pub version: String,
    pub description: String,
    pub author: String,
    pub author_url: Option<String>,
    pub repository: Option<String>,
    pub homepage: Option<String>,
    /// `node`, `python`, `binary` or `uv`.
    pub server_type: String,
    /// The command line it runs, the bundle's folder written `<bundle>`.
    pub command_line: String,
    pub tools: Vec<BundleTool>,
    /// It says it makes more tools than those listed once it runs.
    pub tools_generated: bool,
    pub prompts: Vec<String>,
    /// What it asks the person for.
    pub user_config: Vec<BundleOption>,
    pub files: usize,
    /// What it unpacks to, in bytes.
    pub unpacked_bytes: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct BundleTool {
    pub name: String,
    pub description: Option<String>,
}

/// One value the bundle asks for (`user_config`).
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct BundleOption {
    pub key: String,
    pub title: String,
    pub description: Option<String>,
    /// `string`, `number`, `boolean`, `directory` or `file`.
    pub kind: String,
    pub required: bool,
    /// A key or a token: kept in the OS keychain, never shown.
    pub sensitive: bool,
    /// Several values (folders, files).
    pub multiple: bool,
    /// Its default, `${HOME}` and the like put in.
    pub default: Vec<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    manifest_version: Option<String>,
    dxt_version: Option<String>,
    name: String,
    display_name: Option<String>,
    version: String,
    #[serde(default)]
    description: String,
    author: Author,
    repository: Option<Repository>,
    homepage: Option<String>,
    server: Server,
    #[serde(default)]
    tools: Vec<Tool>,
    #[serde(default)]
    tools_generated: bool,
    #[serde(default)]
    prompts: Vec<Prompt>,
    #[serde(default)]
    user_config: BTreeMap<String, UserOption>,
    compatibility: Option<Compatibility>,
}

#[derive(Debug, Deserialize)]
struct Author {
    name: String,
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Repository {
    url: String,
}

#[derive(Debug, Deserialize)]
struct Server {
    #[serde(rename = "type")]
    kind: String,
    entry_point: String,
    mcp_config: Option<McpConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
struct McpConfig {
    command: Option<String>,
    #[serde(default)]
    args: Option<Vec<String>>,
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    platform_overrides: BTreeMap<String, McpConfig>,
}

#[derive(Debug, Deserialize)]
struct Tool {
    name: String,
    description: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Prompt {
    name: String,
}

#[derive(Debug, Deserialize)]
struct UserOption {
    #[serde(rename = "type")]
    kind: String,
    title: Option<String>,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    default: Option<Value>,
    #[serde(default)]
    multiple: bool,
    #[serde(default)]
    sensitive: bool,
    min: Option<f64>,
    max: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Compatibility {
    platforms: Option<Vec<String>>,
}

/// This computer as the manifest names platforms.
fn this_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

/// A bundle read and checked, not unpacked.
#[derive(Debug)]
pub struct Bundle {
    /// A private copy of the file, read and checked: what is unpacked is what was shown.
    archive: Archive,
    manifest: Manifest,
    info: BundleInfo,
}

impl Bundle {
    /// Reads the bundle at `path`: its table of contents and manifest, with every check made
    /// before anything is unpacked.
    ///
    /// # Errors
    /// Not a zip; a path outside the bundle or a link; too many files, too large, too
    /// compressed; no manifest, or one of an unknown version or not for this computer; no
    /// entry point.
    pub fn open(path: &Path) -> Result<Self, BundleError> {
        let archive = Archive::open(path, LIMITS)?;
        let mut zip = archive.zip()?;
        let (files, unpacked_bytes) = (archive.files, archive.unpacked_bytes);
        let manifest = read_manifest(&mut zip)?;
        let version = manifest
            .manifest_version
            .clone()
            .or_else(|| manifest.dxt_version.clone())
            .unwrap_or_default();
        if !MANIFEST_VERSIONS.contains(&version.as_str()) {
            return Err(BundleError::UnknownVersion(version));
        }
        if let Some(platforms) = manifest
            .compatibility
            .as_ref()
            .and_then(|c| c.platforms.as_ref())
        {
            if !platforms.iter().any(|p| p == this_platform()) {
                return Err(BundleError::Platform {
                    platforms: platforms.join(", "),
                    this: this_platform().to_owned(),
                });
            }
        }
        let entry_point = inside(&manifest.server.entry_point)
            .ok_or_else(|| BundleError::UnsafePath(manifest.server.entry_point.clone()))?;
        if zip.index_for_path(&entry_point).is_none() {
            return Err(BundleError::NoEntryPoint(
                manifest.server.entry_point.clone(),
            ));
        }
        let info = describe(&manifest, files, unpacked_bytes)?;
        Ok(Self {
            archive,
            manifest,
            info,
        })
    }

    #[must_use]
    pub fn info(&self) -> &BundleInfo {
        &self.info
    }

    /// The entry that runs this bundle once unpacked into `dir`, with `values` (by
    /// `user_config` key; several for a `multiple` one).
    ///
    /// # Errors
    /// A required value not given; a value of the wrong kind; a sensitive value that would
    /// land on the command line.
    pub fn plan(
        &self,
        dir: &Path,
        values: &BTreeMap<String, Vec<String>>,
    ) -> Result<InstallPlan, BundleError> {
        let mut given = BTreeMap::new();
        let mut missing = Vec::new();
        for option in &self.info.user_config {
            let value = match values.get(&option.key) {
                Some(v) if v.iter().any(|s| !s.is_empty()) => v.clone(),
                // A default may name the bundle's folder, known only now.
                _ => option
                    .default
                    .iter()
                    .map(|d| substitute(d, dir, &BTreeMap::new()))
                    .collect(),
            };
            if value.is_empty() {
                if option.required {
                    missing.push(option.key.clone());
                }
                continue;
            }
            check_value(option, &value)?;
            given.insert(option.key.as_str(), (option, value));
        }
        if !missing.is_empty() {
            return Err(BundleError::Missing(missing));
        }
        let run = run_config(&self.manifest, dir);
        let fill = |text: &str| substitute(text, dir, &given);
        let mut entry = ServerEntry {
            cwd: Some(dir.display().to_string()),
            ..ServerEntry::default()
        };
        let command = run.command.unwrap_or_default();
        if let Some(key) = uses_sensitive(&command, &given) {
            return Err(BundleError::SecretOnCommandLine(key));
        }
        let command = fill(&command);
        let program_inside = command.contains('/') || command.contains('\\');
        let command = if program_inside && Path::new(&command).is_relative() {
            dir.join(&command).display().to_string()
        } else {
            command
        };
        let mut args = Vec::new();
        for arg in run.args.unwrap_or_default() {
            if let Some(key) = uses_sensitive(&arg, &given) {
                return Err(BundleError::SecretOnCommandLine(key));
            }
            // A lone `${user_config.KEY}` of several values is one argument each.
            // One not given is no argument at all.
            match whole_option(&arg).map(|key| given.get(key)) {
                Some(Some((_, value))) => args.extend(value.iter().cloned()),
                Some(None) => {}
                None => args.push(fill(&arg)),
            }
        }
        let mut secrets = Vec::new();
        for (key, value) in run.env.unwrap_or_default() {
            // Only what the person typed is a secret; the manifest's own values are shown.
            let typed = value.contains("${user_config.");
            if uses_sensitive(&value, &given).is_some() || typed && looks_secret(&key) {
                secrets.push(("env", key.clone()));
            }
            let value = fill(&value);
            // A bundle may point its runtime's module path at its own folder (`PYTHONPATH` to
            // its `lib`), and nowhere else; no other loader variable at all.
            let module_path = matches!(
                key.to_ascii_uppercase().as_str(),
                "PYTHONPATH" | "NODE_PATH" | "PERL5LIB" | "RUBYLIB" | "CLASSPATH" | "GEM_PATH"
            );
            if !(module_path && only_inside(&value, dir)) {
                outside::check_environment([&key], "this bundle")
                    .map_err(|e| BundleError::Refused(e.message))?;
            }
            entry.env.insert(key, ConfigValue::Plain(value));
        }
        outside::check_command(&command, &args, "this bundle")
            .map_err(|e| BundleError::Refused(e.message))?;
        entry.command = Some(command.clone());
        entry.args = args;
        Ok(InstallPlan {
            entry,
            secrets,
            runtime: (!program_inside).then_some(command),
        })
    }

    /// Unpacks the bundle into `dir` (which must not exist yet): into a folder beside it
    /// first, renamed into place once whole. Writes no more than each file's declared size.
    ///
    /// # Errors
    /// `dir` exists; the file system; a file larger than it said.
    pub fn unpack(&self, dir: &Path) -> Result<(), BundleError> {
        Ok(self.archive.unpack(dir)?)
    }
}

fn read_manifest<R: Read + Seek>(zip: &mut zip::ZipArchive<R>) -> Result<Manifest, BundleError> {
    let file = zip.by_name("manifest.json").map_err(|e| match e {
        zip::result::ZipError::FileNotFound => BundleError::NoManifest,
        other => BundleError::Manifest(other.to_string()),
    })?;
    let mut text = String::new();
    file.take(MAX_MANIFEST_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| BundleError::Manifest(e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| BundleError::Manifest(e.to_string()))
}

/// How the bundle runs on this computer: its `mcp_config` with this platform's overrides,
/// or what its server type runs by default.
fn run_config(manifest: &Manifest, dir: &Path) -> McpConfig {
    let server = &manifest.server;
    let entry = dir.join(&server.entry_point).display().to_string();
    let default = match server.kind.as_str() {
        "node" => ("node".to_owned(), vec![entry]),
        "python" if cfg!(windows) => ("python".to_owned(), vec![entry]),
        "python" => ("python3".to_owned(), vec![entry]),
        "uv" => (
            "uv".to_owned(),
            vec![
                "run".to_owned(),
                "--directory".to_owned(),
                dir.display().to_string(),
                server.entry_point.clone(),
            ],
        ),
        _ => (entry, Vec::new()),
    };
    let mut run = server.mcp_config.clone().unwrap_or_default();
    if let Some(over) = run.platform_overrides.remove(this_platform()) {
        if over.command.is_some() {
            run.command = over.command;
        }
        if over.args.is_some() {
            run.args = over.args;
        }
        if let Some(env) = over.env {
            run.env.get_or_insert_with(BTreeMap::new).extend(env);
        }
    }
    if run.command.is_none() {
        run.command = Some(default.0);
        if run.args.is_none() {
            run.args = Some(default.1);
        }
    }
    run
}

fn describe(
    manifest: &Manifest,
    files: usize,
    unpacked_bytes: u64,
) -> Result<BundleInfo, BundleError> {
    let kind = manifest.server.kind.as_str();
    if !matches!(kind, "node" | "python" | "binary" | "uv") {
        return Err(BundleError::ServerType(kind.to_owned()));
    }
    let shown = Path::new("<bundle>");
    let run = run_config(manifest, shown);
    let mut line = Vec::new();
    for (key, value) in run.env.iter().flatten() {
        line.push(format!("{key}={value}"));
    }
    line.push(run.command.unwrap_or_default());
    line.extend(run.args.unwrap_or_default());
    // The bundle's folder is not known yet; the person's values are shown as the slots they fill.
    let line: Vec<String> = line
        .iter()
        .map(|part| part.replace("${__dirname}", "<bundle>"))
        .collect();
    let user_config = manifest
        .user_config
        .iter()
        .map(|(key, option)| BundleOption {
            key: key.clone(),
            title: option.title.clone().unwrap_or_else(|| key.clone()),
            description: option.description.clone(),
            kind: option.kind.clone(),
            required: option.required,
            sensitive: option.sensitive,
            multiple: option.multiple,
            default: defaults(option.default.as_ref()),
            min: option.min,
            max: option.max,
        })
        .collect();
    Ok(BundleInfo {
        name: manifest.name.clone(),
        display_name: manifest.display_name.clone(),
        version: manifest.version.clone(),
        description: manifest.description.clone(),
        author: manifest.author.name.clone(),
        author_url: manifest.author.url.clone(),
        repository: manifest.repository.as_ref().map(|r| r.url.clone()),
        homepage: manifest.homepage.clone(),
        server_type: kind.to_owned(),
        command_line: line.join(" "),
        tools: manifest
            .tools
            .iter()
            .map(|t| BundleTool {
                name: t.name.clone(),
                description: t.description.clone(),
            })
            .collect(),
        tools_generated: manifest.tools_generated,
        prompts: manifest.prompts.iter().map(|p| p.name.clone()).collect(),
        user_config,
        files,
        unpacked_bytes,
    })
}

/// A `user_config` default as text values, `${HOME}` and the like put in.
fn defaults(value: Option<&Value>) -> Vec<String> {
    let one = |v: &Value| match v {
        // `${__dirname}` stays until the folder is known ([`Bundle::plan`]).
        Value::String(s) => Some(substitute(s, Path::new("${__dirname}"), &BTreeMap::new())),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    match value {
        Some(Value::Array(items)) => items.iter().filter_map(one).collect(),
        Some(v) => one(v).into_iter().collect(),
        None => Vec::new(),
    }
}

fn check_value(option: &BundleOption, value: &[String]) -> Result<(), BundleError> {
    let bad = |what: &str| BundleError::BadValue {
        key: option.key.clone(),
        what: what.to_owned(),
    };
    if value.len() > 1 && !option.multiple {
        return Err(bad("one value"));
    }
    for v in value {
        match option.kind.as_str() {
            "number" => {
                let n: f64 = v.trim().parse().map_err(|_| bad("a number"))?;
                if option.min.is_some_and(|min| n < min) || option.max.is_some_and(|max| n > max) {
                    return Err(bad(&format!(
                        "a number from {} to {}",
                        option.min.map_or("any".to_owned(), |m| m.to_string()),
                        option.max.map_or("any".to_owned(), |m| m.to_string())
                    )));
                }
            }
            "boolean" if v != "true" && v != "false" => return Err(bad("true or false")),
            "directory" | "file" if !Path::new(v).is_absolute() => {
                return Err(bad("an absolute path"))
            }
            _ => {}
        }
    }
    Ok(())
}

type Given<'a> = BTreeMap<&'a str, (&'a BundleOption, Vec<String>)>;

/// The key of `text` when it is exactly `${user_config.KEY}`.
fn whole_option(text: &str) -> Option<&str> {
    text.strip_prefix("${user_config.")?.strip_suffix('}')
}

/// Whether every path in a path list `value` is inside `dir` (the bundle's own folder).
fn only_inside(value: &str, dir: &Path) -> bool {
    let separator = if cfg!(windows) { ';' } else { ':' };
    !value.is_empty()
        && value.split(separator).all(|part| {
            let path = Path::new(part);
            path.is_absolute()
                && path
                    .components()
                    .all(|c| !matches!(c, std::path::Component::ParentDir))
                && path.starts_with(dir)
        })
}

/// The first sensitive option `text` puts in, if any.
fn uses_sensitive(text: &str, given: &Given<'_>) -> Option<String> {
    given
        .iter()
        .find(|(key, (option, _))| {
            option.sensitive && text.contains(&format!("${{user_config.{key}}}"))
        })
        .map(|(key, _)| (*key).to_owned())
}

/// `text` with the manifest's variables put in: `${__dirname}` (the bundle's folder),
/// `${HOME}`, `${DESKTOP}`, `${DOCUMENTS}`, `${DOWNLOADS}`, `${pathSeparator}` / `${/}` and
/// `${user_config.KEY}` (several values joined by commas). Unknown ones stay as written.
fn substitute(text: &str, dir: &Path, given: &Given<'_>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = &after[..end];
        let folder = |f: Option<PathBuf>| f.map(|p| p.display().to_string());
        let value = match name {
            "__dirname" => Some(dir.display().to_string()),
            "HOME" => folder(dirs::home_dir()),
            "DESKTOP" => folder(dirs::desktop_dir()),
            "DOCUMENTS" => folder(dirs::document_dir()),
            "DOWNLOADS" => folder(dirs::download_dir()),
            "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
            _ => name
                .strip_prefix("user_config.")
                .map(|key| given.get(key).map(|(_, v)| v.join(",")).unwrap_or_default()),
        };
        match value {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_put_in_and_unknown_ones_left() {
        let option = BundleOption {
            key: "dirs".into(),
            title: "Dirs".into(),
            description: None,
            kind: "directory".into(),
            required: true,
            sensitive: false,
            multiple: true,
            default: Vec::new(),
            min: None,
            max: None,
        };
        let mut given: Given<'_> = BTreeMap::new();
        given.insert("dirs", (&option, vec!["/a".into(), "/b".into()]));
        let dir = Path::new("/opt/b");
        assert_eq!(
            substitute("${__dirname}/server/x.js", dir, &given),
            "/opt/b/server/x.js"
        );
        assert_eq!(
            substitute("--dirs=${user_config.dirs}", dir, &given),
            "--dirs=/a,/b"
        );
        assert_eq!(substitute("${user_config.none}", dir, &given), "");
        assert_eq!(substitute("${WHAT} ${", dir, &given), "${WHAT} ${");
        assert_eq!(whole_option("${user_config.dirs}"), Some("dirs"));
    }
}
