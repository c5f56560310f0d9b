//! Local servers in a sandbox: what a server's `sandbox` entry in mcp.json says (on or off,
//! its network, the folders it may read or write besides its roots), the plan made from it for
//! one start (every folder readable or writable, in full), that plan in the words the approval
//! and `switchboard mcp sandbox show` use, and — per system — how it is enforced in the child
//! before it runs the server's program ([`linux`]: Landlock, a seccomp filter, and a network
//! namespace of its own for no network; [`seatbelt`]: a Seatbelt profile on macOS; [`appcontainer`]: an
//! AppContainer on Windows). A list of hosts is reached through a [`proxy`] of the server's own,
//! the only port it may connect to; [`hosts`] says what the list opens, [`registries`] which
//! hosts a package runner needs.
//!
//! The plan grants and never denies: the system (everything outside the home folder) can be
//! read and run; in the home folder only what the server's runtime needs (Node's, npm's, uv's,
//! Python's folders), the folders its arguments name, and what the person gave it; it writes
//! only in its roots, the folders given for writing, its runtime's caches and a private folder
//! of its own (its `TMPDIR`, and its working folder when mcp.json gives none).

pub mod appcontainer;
pub mod command;
pub mod hosts;
#[cfg(target_os = "linux")]
pub mod linux;
pub mod proxy;
pub mod registries;
pub mod seatbelt;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// A server's `"sandbox"` in mcp.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct SandboxEntry {
    pub enabled: bool,
    /// What it may reach over the network.
    #[serde(default)]
    #[ts(optional, as = "Option<Network>")]
    pub network: Network,
    /// With `network: hosts`, the hosts (`example.com`, `*.example.com`, either with
    /// `:PORT`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub hosts: Vec<String>,
    /// With `network: hosts`, whether this computer's own ports are open to it as well.
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub loopback: bool,
    /// More folders it may read (`~/` is the home folder).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub allow_read: Vec<String>,
    /// More folders it may read and write, besides its roots.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub allow_write: Vec<String>,
    /// Start it even where this system cannot sandbox it (its card then says so).
    #[serde(default, skip_serializing_if = "is_false")]
    #[ts(optional, as = "Option<bool>")]
    pub allow_unsandboxed: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// What a sandboxed server may reach over the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// Nothing: not the internet, not this computer's own ports.
    #[default]
    None,
    /// Anything, as without a sandbox.
    Any,
    /// The hosts on its list, through a proxy of its own (and this computer's ports when
    /// loopback is on).
    Hosts,
}

/// A sandbox's network as set in one go: none, any, or a list of hosts with loopback on or
/// off.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Reach {
    pub network: Network,
    #[serde(default)]
    pub hosts: Vec<String>,
    #[serde(default)]
    pub loopback: bool,
}

impl Reach {
    /// Parses `none`, `any` or a list of hosts separated by commas (loopback off).
    ///
    /// # Errors
    /// A host that is not one, saying what is accepted.
    pub fn parse(text: &str) -> Result<Reach, String> {
        let network = match text.trim().to_ascii_lowercase().as_str() {
            "none" => Network::None,
            "any" => Network::Any,
            _ => {
                let hosts = text
                    .split(',')
                    .filter(|h| !h.trim().is_empty())
                    .map(hosts::rule)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("the network is “none”, “any” or hosts: {e}"))?;
                if hosts.is_empty() {
                    return Err("the network is “none”, “any” or a list of hosts".to_owned());
                }
                return Ok(Reach {
                    network: Network::Hosts,
                    hosts,
                    loopback: false,
                });
            }
        };
        Ok(Reach {
            network,
            ..Reach::default()
        })
    }

    /// Checks a reach the window sent: each host is one, written the one way.
    ///
    /// # Errors
    /// A host that is not one.
    pub fn checked(mut self) -> Result<Reach, String> {
        self.hosts = self
            .hosts
            .iter()
            .map(|h| hosts::rule(h))
            .collect::<Result<_, _>>()?;
        keep_once(&mut self.hosts);
        if self.network != Network::Hosts {
            self.hosts.clear();
            self.loopback = false;
        }
        Ok(self)
    }
}

/// `list` with each item kept once, where it first stands.
pub(crate) fn keep_once(list: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|item| seen.insert(item.clone()));
}

impl SandboxEntry {
    /// Its network, list and loopback.
    pub fn reach(&self) -> Reach {
        Reach {
            network: self.network,
            hosts: self.hosts.clone(),
            loopback: self.loopback,
        }
    }

    /// Sets its network, list and loopback.
    pub fn set_reach(&mut self, reach: Reach) {
        self.network = reach.network;
        self.hosts = reach.hosts;
        self.loopback = reach.loopback;
    }
}

/// The runtime a command is, by the name of its program: it decides the default network and
/// which folders of the home it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    /// `npx`, `npm`, `node`, `pnpm`, `yarn`, `bunx`, `bun`.
    Node,
    /// `uvx`, `uv`, `python`, `pip`, `pipx`.
    Python,
    /// `docker`, `podman`.
    Container,
    Other,
}

impl Runtime {
    /// The runtime of `program` (a name or a path).
    pub fn of(program: &Path) -> Runtime {
        match program_name(program).as_str() {
            "npx" | "npm" | "node" | "nodejs" | "pnpm" | "pnpx" | "yarn" | "bunx" | "bun" => {
                Runtime::Node
            }
            "docker" | "podman" => Runtime::Container,
            n if n == "uvx"
                || n == "uv"
                || n == "pipx"
                || n.starts_with("python")
                || n.starts_with("pip") =>
            {
                Runtime::Python
            }
            _ => Runtime::Other,
        }
    }

    /// Whether it fetches what it runs from a registry as it starts (`npx -y`, `uvx`, an
    /// image not pulled yet).
    pub fn fetches_packages(self, program: &Path) -> bool {
        matches!(
            program_name(program).as_str(),
            "npx" | "pnpx" | "bunx" | "uvx" | "pipx" | "docker" | "podman"
        ) || (self == Runtime::Container)
    }

    /// The folders of the home it reads (its installs) and writes (its caches), relative to
    /// the home folder.
    fn home_folders(self) -> (&'static [&'static str], &'static [&'static str]) {
        match self {
            Runtime::Node => (
                &[
                    ".nvm",
                    ".volta",
                    ".fnm",
                    ".local/share/fnm",
                    ".local/share/pnpm",
                    ".bun",
                    ".npmrc",
                ],
                &[
                    ".npm",
                    ".cache/node",
                    ".cache/pnpm",
                    ".local/share/pnpm/store",
                    ".bun/install/cache",
                ],
            ),
            Runtime::Python => (
                &[
                    ".pyenv",
                    ".local/bin",
                    ".local/lib",
                    ".local/pipx",
                    ".config/uv",
                    ".pydistutils.cfg",
                    ".config/pip",
                ],
                &[".cache/uv", ".local/share/uv", ".cache/pip"],
            ),
            Runtime::Container => (&[".docker"], &[]),
            Runtime::Other => (&[], &[]),
        }
    }
}

/// A program's name without its folder or its Windows extension, in lower case, whichever
/// system's separators the path was written with (`C:\\node\\npx.cmd` is `npx`).
fn program_name(program: &Path) -> String {
    let text = program.to_string_lossy().to_ascii_lowercase();
    let name = text.rsplit(['/', '\\']).next().unwrap_or_default();
    [".cmd", ".exe", ".bat", ".ps1"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))
        .unwrap_or(name)
        .to_owned()
}

/// The default network of a server newly put in a sandbox: a package runner (`npx`, `uvx`)
/// its registry, as its own settings name it; Docker none, for its program only talks to
/// Docker's service, which pulls and runs the image outside this sandbox; anything else none.
/// `home` is the person's home folder, `env` the environment the server starts with.
pub fn default_reach(program: &Path, home: &Path, env: &dyn Fn(&str) -> Option<String>) -> Reach {
    let runtime = Runtime::of(program);
    let hosts = match runtime {
        _ if !runtime.fetches_packages(program) => Vec::new(),
        Runtime::Node => registries::npm(program, home, env),
        Runtime::Python => registries::python(home, env),
        Runtime::Container | Runtime::Other => Vec::new(),
    };
    if hosts.is_empty() {
        return Reach::default();
    }
    Reach {
        network: Network::Hosts,
        hosts,
        loopback: false,
    }
}

/// [`default_reach`] for a server started with this process's environment.
pub fn default_reach_here(program: &Path) -> Reach {
    let home = dirs::home_dir().unwrap_or_default();
    default_reach(program, &home, &|k| std::env::var(k).ok())
}

/// What the plan of one start is made from.
#[derive(Debug, Clone)]
pub struct PlanInputs<'a> {
    pub home: &'a Path,
    /// The server's roots (read and written).
    pub roots: &'a [PathBuf],
    /// The program as resolved.
    pub program: &'a Path,
    pub args: &'a [String],
    /// The working folder mcp.json gives, if any.
    pub cwd: Option<&'a Path>,
    /// The server's own folder (its `TMPDIR`; its working folder when mcp.json gives none).
    pub private_dir: PathBuf,
}

/// Every folder one start of a sandboxed server may read and write, in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPlan {
    /// Read (and run) only.
    pub read: Vec<PathBuf>,
    /// Read and write.
    pub write: Vec<PathBuf>,
    pub network: Network,
    /// With [`Network::Hosts`], what its proxy lets through.
    pub hosts: Vec<String>,
    pub loopback: bool,
    /// Whether it may open Unix sockets (Docker's program talks to Docker's service by
    /// one); else only socket pairs, so the session bus — and the keychain behind it — and
    /// agents' sockets are out of its reach.
    pub unix_sockets: bool,
    /// It may not leave its process group (`setsid`, `setpgid` refused on Linux), so that
    /// ending the group ends everything it started: a skill's script.
    pub stays_in_group: bool,
    /// Its `TMPDIR`, and its working folder when mcp.json gives none.
    pub private_dir: PathBuf,
    /// The home folder, all of which but `read` and `write` is closed to it.
    pub home: PathBuf,
}

/// `raw` with `~/` made the home folder; `None` for a path that is not absolute then.
pub fn expand(raw: &str, home: &Path) -> Option<PathBuf> {
    let path = match raw.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None if raw == "~" => home.to_path_buf(),
        None => PathBuf::from(raw),
    };
    path.is_absolute().then_some(path)
}

/// The plan for one start of a server whose sandbox is `entry`.
pub fn plan(entry: &SandboxEntry, inputs: &PlanInputs<'_>) -> SandboxPlan {
    let home = inputs.home;
    let runtime = Runtime::of(inputs.program);
    let (reads, writes) = runtime.home_folders();
    let mut read: Vec<PathBuf> = siblings_along(home);
    read.extend(reads.iter().map(|r| home.join(r)));
    read.extend(program_install(inputs.program, home));
    // What its arguments name (a script, a folder to serve), but never the home folder
    // itself or a folder holding it: that is given only as a root or a folder to read.
    read.extend(named_by(inputs.args, home));
    if let Some(cwd) = inputs.cwd {
        read.push(cwd.to_path_buf());
    }
    read.extend(entry.allow_read.iter().filter_map(|r| expand(r, home)));
    let mut write: Vec<PathBuf> = inputs.roots.to_vec();
    write.extend(entry.allow_write.iter().filter_map(|w| expand(w, home)));
    // Its runtime's caches, made if they are not there yet (a folder that does not exist
    // cannot be given, and the runtime would make it outside the sandbox anyway).
    for cache in writes.iter().map(|w| home.join(w)) {
        if home.is_dir() && !cache.exists() {
            let _ = std::fs::create_dir_all(&cache);
        }
        write.push(cache);
    }
    write.push(inputs.private_dir.clone());
    read.sort();
    read.dedup();
    write.sort();
    write.dedup();
    read.retain(|r| !write.contains(r));
    SandboxPlan {
        read,
        write,
        network: entry.network,
        hosts: entry.hosts.clone(),
        loopback: entry.loopback,
        unix_sockets: runtime == Runtime::Container,
        stays_in_group: false,
        private_dir: inputs.private_dir.clone(),
        home: home.to_path_buf(),
    }
}

/// `path` as named, then as its links lead (when they do lead somewhere).
pub(crate) fn named_and_linked(path: &Path) -> impl Iterator<Item = PathBuf> {
    [Some(path.to_path_buf()), std::fs::canonicalize(path).ok()]
        .into_iter()
        .flatten()
}

/// The folders of `program`'s own install a sandbox reads (…/bin/node: its prefix), as named
/// and as linked. A prefix the home shares with everything else (`~/.local` holds other
/// programs' data, Switchboard's database among them) is not given: only the program's folder.
pub fn program_install(program: &Path, home: &Path) -> Vec<PathBuf> {
    let shared = [
        ".local",
        ".config",
        ".cache",
        ".local/share",
        "AppData/Roaming",
        "AppData/Local",
        "AppData/Local/Programs",
    ]
    .map(|d| home.join(d));
    let mut read = Vec::new();
    for program in named_and_linked(program) {
        if let Some(prefix) = program.parent().and_then(Path::parent) {
            if prefix.starts_with(home) && prefix != home && !shared.iter().any(|s| s == prefix) {
                read.push(prefix.to_path_buf());
            } else if let Some(dir) = program.parent() {
                read.push(dir.to_path_buf());
            }
        }
    }
    read
}

/// Everything beside the folders on the way from `/` to each of `closed`: what stays open
/// when those alone are shut ([`siblings_along`] for several). Nothing inside a closed folder
/// is opened, even on the way to another closed one inside it (`~/.config` on the way to
/// Switchboard's settings stays shut with the home). Each closed folder counts as named and
/// as linked (`/home` may be a link to `/var/home`). Unix paths: on Windows, where a sandbox
/// reads the system without grants, it opens nothing.
pub fn open_beside(closed: &[PathBuf]) -> Vec<PathBuf> {
    use std::collections::HashSet;
    if cfg!(windows) {
        return Vec::new();
    }
    let closed: Vec<PathBuf> = closed
        .iter()
        .filter(|c| c.is_absolute())
        .flat_map(|c| named_and_linked(c))
        .collect();
    let on_the_way: HashSet<&Path> = closed.iter().flat_map(|c| c.ancestors()).collect();
    let mut open = Vec::new();
    for dir in &on_the_way {
        if closed.iter().any(|c| dir.starts_with(c)) {
            continue;
        }
        if let Ok(entries) = std::fs::read_dir(dir) {
            open.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| !on_the_way.contains(p.as_path())),
            );
        }
    }
    open.sort();
    open.dedup();
    open
}

/// Everything beside each folder on the way from `/` to `closed`: what stays open when
/// `closed` alone is shut (Landlock grants and never denies).
pub fn siblings_along(closed: &Path) -> Vec<PathBuf> {
    let mut open = Vec::new();
    let mut at = PathBuf::from("/");
    let Ok(rest) = closed.strip_prefix("/") else {
        return open;
    };
    for part in rest.components() {
        let next = at.join(part);
        if let Ok(entries) = std::fs::read_dir(&at) {
            open.extend(entries.flatten().map(|e| e.path()).filter(|p| *p != next));
        }
        at = next;
    }
    open
}

/// `path` as the person reads it: `~/…` inside the home folder.
fn shown(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.display().to_string(),
    }
}

/// The server a sandbox's words are about: its roots, the home folder, and its command (the
/// folders and files its arguments name are readable; Docker's program is said to run its
/// container outside).
#[derive(Debug, Clone, Copy)]
pub struct About<'a> {
    pub roots: &'a [PathBuf],
    pub home: &'a Path,
    pub program: &'a str,
    pub args: &'a [String],
    /// The working folder mcp.json gives it (readable).
    pub cwd: Option<&'a Path>,
}

/// What `args` name that a plan gives to read: each existing path, never the home folder or
/// a folder holding it.
fn named_by(args: &[String], home: &Path) -> Vec<PathBuf> {
    args.iter()
        .filter_map(|a| expand(a, home))
        .filter(|p| p.exists() && !home.starts_with(p))
        .collect()
}

/// A sandbox entry in plain words, for the approval and `mcp sandbox show`: "can read and
/// write: ~/notes; can read: the system, ~/server.py; network: none".
pub fn words(entry: &SandboxEntry, about: &About<'_>) -> String {
    let (roots, home) = (about.roots, about.home);
    if !entry.enabled {
        return "off: it runs with all your rights".to_owned();
    }
    let mut write: Vec<String> = roots.iter().map(|r| shown(r, home)).collect();
    write.extend(
        entry
            .allow_write
            .iter()
            .filter_map(|w| expand(w, home))
            .map(|w| shown(&w, home)),
    );
    // What it was given, then (in the home folder: the system's is said already) its working
    // folder and what its arguments name, each once and not inside another.
    let mut given: Vec<PathBuf> = entry
        .allow_read
        .iter()
        .filter_map(|r| expand(r, home))
        .collect();
    let named = about
        .cwd
        .map(Path::to_path_buf)
        .into_iter()
        .chain(named_by(about.args, home))
        .filter(|p| p.starts_with(home));
    for path in named {
        if !given.iter().any(|g| path.starts_with(g)) {
            given.retain(|g| !g.starts_with(&path));
            given.push(path);
        }
    }
    let mut read = vec!["the system".to_owned()];
    read.extend(given.iter().map(|r| shown(r, home)));
    let write = if write.is_empty() {
        "only its own folder".to_owned()
    } else {
        write.join(", ")
    };
    let network = network_words(entry);
    let mut said = format!(
        "can read and write: {write}; can read: {}; network: {network}",
        read.join(", ")
    );
    if Runtime::of(Path::new(about.program)) == Runtime::Container {
        said.push_str(
            "; its containers run in Docker's own service, outside this sandbox, with the \
             network Docker gives them",
        );
    }
    if entry.allow_unsandboxed {
        said.push_str("; runs unsandboxed where the system cannot sandbox it");
    }
    said
}

/// A sandbox's network in words: "none", "any", "registry.npmjs.org only", "a.com, b.com
/// and this computer".
fn network_words(entry: &SandboxEntry) -> String {
    match (entry.network, entry.hosts.as_slice(), entry.loopback) {
        (Network::None, ..) => "none".to_owned(),
        (Network::Any, ..) => "any".to_owned(),
        (Network::Hosts, [], false) => "none (an empty list of hosts)".to_owned(),
        (Network::Hosts, [], true) => "this computer only".to_owned(),
        (Network::Hosts, hosts, false) => format!("{} only", crate::text::and_list(hosts)),
        (Network::Hosts, hosts, true) => {
            format!("{} and this computer", hosts.join(", "))
        }
    }
}

/// What a server's sandbox comes to in words, whether it has one written or not.
pub fn said(entry: Option<&SandboxEntry>, about: &About<'_>) -> String {
    match entry {
        Some(entry) => words(entry, about),
        None => "none: it runs with all your rights".to_owned(),
    }
}

/// Whether `after` gives a server no more than `before` did: the sandbox turned on, or kept
/// on with no new folder and no wider network. Such a change keeps the server's approval.
pub fn narrows(before: Option<&SandboxEntry>, after: &SandboxEntry) -> bool {
    if !after.enabled {
        return before.is_none_or(|b| !b.enabled) && after.allow_read.is_empty();
    }
    let Some(before) = before.filter(|b| b.enabled) else {
        return !after.allow_unsandboxed;
    };
    let network_ok = match (before.network, after.network) {
        (_, Network::None) | (Network::Any, _) => true,
        (Network::Hosts, Network::Hosts) => {
            after.hosts.iter().all(|h| before.hosts.contains(h))
                && (!after.loopback || before.loopback)
        }
        (Network::None | Network::Hosts, _) => false,
    };
    network_ok
        && after
            .allow_read
            .iter()
            .all(|r| before.allow_read.contains(r))
        && after
            .allow_write
            .iter()
            .all(|w| before.allow_write.contains(w))
        && (!after.allow_unsandboxed || before.allow_unsandboxed)
}

/// `path` as it is on disk (links followed) when it is there, else with `.` and `..` taken
/// out by their words.
fn normal(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `entry` given what its sandbox refused a server (`refused`, one of [`Refusals::seen`]):
/// a path to read (what was read, when it is there, else its folder) or to write (its
/// folder: a file written is often made anew, or beside itself and renamed); a host its proxy
/// refused, with its port, joins its list; a connection around the proxy, or with no network,
/// gives it any. Never the home folder or a folder holding it — a refusal is the server's own
/// words, and a hostile server can say anything — and never a `*.` rule.
///
/// # Errors
/// What it would give is too much, or is not a refusal; in words.
pub fn widened(
    mut entry: SandboxEntry,
    refused: &str,
    home: &Path,
) -> Result<SandboxEntry, String> {
    let unknown = || format!("“{refused}” is not a refusal Switchboard knows.");
    let (what, rest) = refused.split_once(' ').ok_or_else(unknown)?;
    match what {
        "read" | "write" => {
            let path = normal(&expand(rest, home).ok_or_else(unknown)?);
            let whole = what == "read" && path.exists() || path.is_dir();
            let given = match path.parent() {
                Some(dir) if !whole && !home.starts_with(dir) => dir.to_path_buf(),
                _ => path,
            };
            if home.starts_with(&given) {
                return Err(format!(
                    "That would give the server {} (your whole home folder, or more); give it \
                     a folder inside it instead.",
                    given.display()
                ));
            }
            let given = given.display().to_string();
            let list = if what == "read" {
                &mut entry.allow_read
            } else {
                &mut entry.allow_write
            };
            if !list.contains(&given) {
                list.push(given);
            }
        }
        "connect" if entry.network == Network::Hosts && !rest.ends_with(" directly") => {
            let rule = hosts::rule(rest)?;
            if rule.starts_with('*') {
                return Err(unknown());
            }
            if !entry.hosts.contains(&rule) {
                entry.hosts.push(rule);
            }
        }
        "connect" => entry.set_reach(Reach {
            network: Network::Any,
            ..Reach::default()
        }),
        _ => return Err(unknown()),
    }
    Ok(entry)
}

/// The most refusals a server's card keeps (the newest).
const KEPT_REFUSALS: usize = 20;

/// What a sandboxed server was refused, as its own messages say (its stderr, the errors its
/// tools report): "read ~/.ssh/id_ed25519", "connect 1.2.3.4:443". The system tells a process
/// only "permission denied"; a message counts when it names a path the plan does not give
/// (or, with no network, an address), so a refusal of the server's own making is not blamed
/// on the sandbox.
#[derive(Debug)]
pub struct Refusals {
    plan: SandboxPlan,
    seen: std::sync::Mutex<std::collections::VecDeque<String>>,
}

impl Refusals {
    pub fn new(plan: SandboxPlan) -> Refusals {
        Refusals {
            plan,
            seen: std::sync::Mutex::default(),
        }
    }

    /// Reads `text` (a line of stderr, a tool's error) for a refusal, and keeps it.
    pub fn note(&self, text: &str) {
        for line in text.lines() {
            if let Some(refused) = refused_in(line, &self.plan) {
                self.record(refused);
            }
        }
    }

    /// Keeps a refusal known for sure (the proxy's: "connect evil.example:443").
    pub fn record(&self, refused: String) {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !seen.contains(&refused) {
            if seen.len() == KEPT_REFUSALS {
                seen.pop_front();
            }
            seen.push_back(refused);
        }
    }

    /// The refusals seen, oldest first.
    pub fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}

/// The words a refusal of the sandbox in `line` comes to, if it is one: see [`Refusals`].
pub fn refused_in(line: &str, plan: &SandboxPlan) -> Option<String> {
    const DENIED: [&str; 6] = [
        "EACCES",
        "EPERM",
        "ermission denied",
        "peration not permitted",
        "Errno 13",
        "ENETUNREACH",
    ];
    if !DENIED.iter().any(|d| line.contains(d)) {
        return None;
    }
    if plan.network != Network::Any {
        if let Some(address) = address_in(line) {
            if line.contains("connect") || line.contains("ENETUNREACH") {
                // With a list, a connection not made through the proxy is refused whatever
                // the host: the program does not use the proxy settings.
                return Some(if plan.network == Network::Hosts {
                    format!("connect {address} directly")
                } else {
                    format!("connect {address}")
                });
            }
        }
    }
    let path = path_in(line)?;
    let inside = |dirs: &[PathBuf]| dirs.iter().any(|d| path.starts_with(d));
    if inside(&plan.write) {
        return None;
    }
    let lower = line.to_ascii_lowercase();
    let writes = [
        "write", "mkdir", "unlink", "rename", "rmdir", "creat", "copyfile", "symlink",
    ]
    .iter()
    .any(|w| lower.contains(w));
    // Reading was allowed there: what was refused wrote. Outside the home folder only a
    // write is the sandbox's to refuse (a read there is the system's own permissions).
    let what = if writes || inside(&plan.read) {
        "write"
    } else if plan_reads_outside(plan, &path) {
        "read"
    } else {
        return None;
    };
    Some(format!("{what} {}", shown(&path, &plan.home)))
}

/// Whether the plan leaves `path` unreadable: inside the home folder and under none of the
/// folders it gives.
fn plan_reads_outside(plan: &SandboxPlan, path: &Path) -> bool {
    path.starts_with(&plan.home) && !plan.read.iter().any(|d| path.starts_with(d))
}

/// The first absolute path in `line`: quoted (`'…'`, `"…"`) or as a word.
fn path_in(line: &str) -> Option<PathBuf> {
    for quote in ['\'', '"'] {
        let mut parts = line.split(quote);
        parts.next();
        while let Some(inner) = parts.next() {
            if inner.starts_with('/') {
                return Some(PathBuf::from(inner));
            }
            parts.next();
        }
    }
    line.split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ',' | ';' | ')' | '(' | ':' | '`')))
        .find(|w| w.starts_with('/') && w.len() > 1)
        .map(PathBuf::from)
}

/// The first `host:port` of an IP address in `line`.
fn address_in(line: &str) -> Option<String> {
    line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '(' | ')' | ','))
        .find(|w| {
            w.rsplit_once(':').is_some_and(|(host, port)| {
                port.parse::<u16>().is_ok() && host.parse::<std::net::IpAddr>().is_ok()
            })
        })
        .map(str::to_owned)
}

#[cfg(target_os = "linux")]
pub use linux::{own_network_allowed, Handoff, INSIDE_PORT};

/// The hand-over of a proxy's socket from a server's own network (Linux only).
#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub enum Handoff {}

#[cfg(not(target_os = "linux"))]
impl Handoff {
    /// Never made here.
    ///
    /// # Errors
    /// None: there is no such value.
    pub fn receive(self) -> std::io::Result<std::net::TcpListener> {
        match self {}
    }
}

/// The port a server's proxy has inside its own network (Linux only).
#[cfg(not(target_os = "linux"))]
pub const INSIDE_PORT: u16 = 3128;

/// Whether a server can have a network of its own (Linux only).
#[cfg(not(target_os = "linux"))]
pub fn own_network_allowed() -> bool {
    false
}

/// Whether this system can sandbox a server, and if not, why.
///
/// # Errors
/// Why not, in words.
pub fn available() -> Result<(), String> {
    #[cfg(target_os = "linux")]
    {
        match linux::landlock_abi() {
            Some(abi) if abi >= 1 => Ok(()),
            _ => Err(
                "this Linux kernel has no Landlock (it came in 5.13, and must be \
                      switched on)"
                    .to_owned(),
            ),
        }
    }
    #[cfg(target_os = "macos")]
    {
        if seatbelt::available() {
            Ok(())
        } else {
            Err(format!("this Mac has no {}", seatbelt::SANDBOX_EXEC))
        }
    }
    #[cfg(windows)]
    {
        match appcontainer::launcher() {
            Some(_) => Ok(()),
            None => Err(
                "on Windows a sandboxed server is started by Switchboard's own \
                         program, and this is not it"
                    .to_owned(),
            ),
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos", windows)))]
    {
        Err("sandboxed servers run on Linux, macOS and Windows; not on this system".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn open_beside_keeps_shut_what_lies_inside_a_closed_folder() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        for dir in [
            "home/.config/switchboard",
            "home/.config/gh",
            "home/.ssh",
            "data",
            "other",
        ] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let open = open_beside(&[
            home.clone(),
            home.join(".config/switchboard"),
            root.path().join("data"),
        ]);
        assert!(open.contains(&root.path().join("other")), "{open:?}");
        for shut in [
            "home",
            "home/.config",
            "home/.config/gh",
            "home/.ssh",
            "data",
        ] {
            let shut = root.path().join(shut);
            assert!(
                !open.iter().any(|o| o.starts_with(&shut)),
                "{shut:?} in {open:?}"
            );
        }
        // Through a link to the home, too.
        let link = root.path().join("linked-home");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let open = open_beside(std::slice::from_ref(&link));
        assert!(
            !open.iter().any(|o| o.starts_with(&home) || o == &link),
            "{open:?}"
        );
    }

    #[test]
    fn the_runtime_decides_the_default_network_and_the_home_folders() {
        assert_eq!(Runtime::of(Path::new("/usr/bin/npx")), Runtime::Node);
        assert_eq!(Runtime::of(Path::new("uvx")), Runtime::Python);
        assert_eq!(Runtime::of(Path::new("/x/python3.12")), Runtime::Python);
        assert_eq!(Runtime::of(Path::new("C:\\node\\npx.cmd")), Runtime::Node);
        let home = tempfile::tempdir().unwrap();
        let env = |k: &str| {
            (k == "npm_config_registry" || k == "UV_INDEX_URL")
                .then(|| "https://mirror.example/".to_owned())
        };
        let reach = |program: &str| default_reach(Path::new(program), home.path(), &env);
        assert_eq!(
            reach("/usr/bin/npx"),
            Reach {
                network: Network::Hosts,
                hosts: vec!["mirror.example".into()],
                loopback: false
            }
        );
        assert_eq!(reach("uvx").hosts, vec!["mirror.example".to_owned()]);
        assert_eq!(
            reach("/usr/bin/node"),
            Reach::default(),
            "runs what is there"
        );
        assert_eq!(
            reach("/usr/bin/docker"),
            Reach::default(),
            "Docker's service pulls"
        );
    }

    #[test]
    fn the_plan_opens_the_system_and_only_what_the_server_needs_of_the_home() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::write(home.join("server.py"), "").unwrap();
        let roots = vec![home.join("notes")];
        let entry = SandboxEntry {
            enabled: true,
            allow_read: vec!["~/docs".into()],
            ..SandboxEntry::default()
        };
        let plan = plan(
            &entry,
            &PlanInputs {
                home,
                roots: &roots,
                program: Path::new("/usr/bin/python3"),
                args: &[
                    home.join("server.py").display().to_string(),
                    "--flag".into(),
                ],
                cwd: None,
                private_dir: home.join(".local/share/switchboard/sandbox/x"),
            },
        );
        assert!(plan.write.contains(&home.join("notes")));
        assert!(plan.write.contains(&home.join(".cache/uv")));
        assert!(plan.read.contains(&home.join("server.py")));
        assert!(plan.read.contains(&home.join("docs")));
        assert!(plan.read.contains(&PathBuf::from("/usr/bin")));
        assert!(
            !plan
                .read
                .iter()
                .chain(&plan.write)
                .any(|p| home.starts_with(p)),
            "nothing opens the whole home: {plan:?}"
        );
        assert!(!plan.read.iter().any(|p| p.starts_with(home.join(".ssh"))));
        assert_eq!(plan.network, Network::None);

        // A program in ~/.local/bin is given its folder, not ~/.local (other programs' data,
        // Switchboard's database); an argument naming the home is not a grant of it.
        std::fs::create_dir_all(home.join(".local/bin")).unwrap();
        let plan = super::plan(
            &entry,
            &PlanInputs {
                home,
                roots: &roots,
                program: &home.join(".local/bin/uvx"),
                args: &[home.display().to_string(), "/".into()],
                cwd: None,
                private_dir: home.join(".local/share/switchboard/sandbox/x"),
            },
        );
        assert!(plan.read.contains(&home.join(".local/bin")));
        assert!(!plan.read.contains(&home.join(".local")), "{plan:?}");
        assert!(
            !plan
                .read
                .iter()
                .chain(&plan.write)
                .any(|p| home.starts_with(p)),
            "{plan:?}"
        );
    }

    #[test]
    fn the_words_say_what_it_can_read_write_and_reach() {
        let home = Path::new("/home/a");
        let entry = SandboxEntry {
            enabled: true,
            network: Network::Any,
            allow_read: vec!["/opt/data".into()],
            ..SandboxEntry::default()
        };
        let roots = [PathBuf::from("/home/a/notes")];
        let about = |program: &'static str, args: &'static [String]| About {
            roots: &roots,
            home,
            program,
            args,
            cwd: None,
        };
        assert_eq!(
            words(&entry, &about("node", &[])),
            "can read and write: ~/notes; can read: the system, /opt/data; network: any"
        );
        assert_eq!(
            words(&SandboxEntry::default(), &about("node", &[])),
            "off: it runs with all your rights"
        );
        assert!(words(&entry, &about("/usr/bin/docker", &[]))
            .ends_with("its containers run in Docker's own service, outside this sandbox, with the network Docker gives them"));
        // What its arguments name is said: it can be read.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server.py"), "").unwrap();
        let args = [
            dir.path().join("server.py").display().to_string(),
            "--x".into(),
        ];
        let about = About {
            roots: &[],
            home: dir.path(),
            program: "python3",
            args: &args,
            cwd: None,
        };
        assert_eq!(
            words(&entry, &about),
            "can read and write: only its own folder; can read: the system, /opt/data, \
             ~/server.py; network: any"
        );
    }

    #[test]
    fn turning_it_on_or_taking_a_folder_away_narrows_and_anything_else_does_not() {
        let on = SandboxEntry {
            enabled: true,
            allow_write: vec!["~/a".into()],
            network: Network::Any,
            ..SandboxEntry::default()
        };
        assert!(narrows(None, &on));
        let fewer = SandboxEntry {
            allow_write: Vec::new(),
            network: Network::None,
            ..on.clone()
        };
        assert!(narrows(Some(&on), &fewer));
        assert!(
            !narrows(Some(&fewer), &on),
            "a folder and the network added"
        );
        let off = SandboxEntry::default();
        assert!(!narrows(Some(&on), &off), "off widens everything");
        assert!(narrows(None, &off), "off where there was none");
    }

    #[test]
    fn a_refusal_is_the_sandbox_s_only_when_it_names_what_the_plan_does_not_give() {
        let home = Path::new("/home/a");
        let plan = SandboxPlan {
            read: vec![PathBuf::from("/usr"), home.join(".nvm")],
            write: vec![home.join("notes")],
            network: Network::None,
            hosts: Vec::new(),
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: home.join(".local/share/switchboard/sandbox/fs"),
            home: home.to_path_buf(),
        };
        let said = |line: &str| refused_in(line, &plan);
        assert_eq!(
            said("Error: EACCES: permission denied, open '/home/a/.ssh/id_ed25519'").as_deref(),
            Some("read ~/.ssh/id_ed25519")
        );
        assert_eq!(
            said("PermissionError: [Errno 13] Permission denied: '/home/a/.nvm/x'").as_deref(),
            Some("write ~/.nvm/x")
        );
        assert_eq!(
            said("mkdir /srv/out: permission denied").as_deref(),
            Some("write /srv/out")
        );
        assert_eq!(
            said("Error: connect EACCES 140.82.112.3:443").as_deref(),
            Some("connect 140.82.112.3:443")
        );
        assert_eq!(
            said("EACCES: permission denied, open '/home/a/notes/x'"),
            None,
            "given"
        );
        assert_eq!(
            said("open /etc/shadow: permission denied"),
            None,
            "the system's own"
        );
        assert_eq!(said("all good at /home/a/.ssh"), None);
        let refusals = Refusals::new(plan.clone());
        for _ in 0..3 {
            refusals.note("x\nError: EACCES: permission denied, open '/home/a/.ssh/k'\n");
        }
        assert_eq!(refusals.seen(), vec!["read ~/.ssh/k".to_owned()]);
    }

    #[test]
    fn the_network_is_none_any_or_a_list_of_hosts() {
        assert_eq!(Reach::parse(" Any ").unwrap().network, Network::Any);
        let list = Reach::parse("Registry.npmjs.org, *.github.com:443,").unwrap();
        assert_eq!(list.network, Network::Hosts);
        assert_eq!(list.hosts, vec!["registry.npmjs.org", "*.github.com:443"]);
        assert!(Reach::parse("http://x.com")
            .unwrap_err()
            .contains("not a host"));
        assert!(Reach::parse(" , ").is_err());
        let mut entry = SandboxEntry {
            enabled: true,
            ..SandboxEntry::default()
        };
        entry.set_reach(list);
        let about = About {
            roots: &[],
            home: Path::new("/h"),
            program: "npx",
            args: &[],
            cwd: None,
        };
        assert_eq!(
            words(&entry, &about),
            "can read and write: only its own folder; can read: the system; network: \
             registry.npmjs.org and *.github.com:443 only"
        );
        entry.loopback = true;
        assert!(words(&entry, &about)
            .ends_with("network: registry.npmjs.org, *.github.com:443 and this computer"));
        // A shorter list narrows; another host, loopback or any widens.
        let before = entry.clone();
        entry.hosts.pop();
        assert!(narrows(Some(&before), &entry));
        entry.hosts.push("evil.example".into());
        assert!(!narrows(Some(&before), &entry));
        let none = SandboxEntry {
            enabled: true,
            ..SandboxEntry::default()
        };
        assert!(!narrows(Some(&none), &before), "none to a list widens");
        assert!(narrows(Some(&before), &none));
    }

    #[test]
    fn widening_gives_what_was_refused_and_never_the_home_or_a_wildcard() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::write(home.join("notes/a.txt"), "").unwrap();
        let list = SandboxEntry {
            enabled: true,
            network: Network::Hosts,
            hosts: vec!["registry.npmjs.org".into()],
            ..SandboxEntry::default()
        };
        let shown = |p: &str| home.join(p).display().to_string();
        let got = widened(
            list.clone(),
            &format!("read {}", shown("notes/a.txt")),
            &home,
        )
        .unwrap();
        assert_eq!(got.allow_read, vec![shown("notes/a.txt")]);
        let got = widened(
            list.clone(),
            &format!("write {}", shown("notes/new.txt")),
            &home,
        )
        .unwrap();
        assert_eq!(got.allow_write, vec![shown("notes")], "a file's folder");
        // A file right in the home is given alone, never the home.
        let got = widened(list.clone(), &format!("write {}", shown(".bashrc")), &home).unwrap();
        assert_eq!(got.allow_write, vec![shown(".bashrc")]);
        for too_much in [
            format!("write {}", home.display()),
            format!("read {}", home.display()),
            "write ~".to_owned(),
            "read ~/notes/..".to_owned(),
            format!("write {}", home.parent().unwrap().display()),
            "write /".to_owned(),
        ] {
            assert!(
                widened(list.clone(), &too_much, &home).is_err(),
                "{too_much}"
            );
        }
        // A host with its port; never a wildcard; around the proxy: any.
        let got = widened(list.clone(), "connect api.example.com:8443", &home).unwrap();
        assert_eq!(
            got.hosts,
            vec!["registry.npmjs.org", "api.example.com:8443"]
        );
        assert!(widened(list.clone(), "connect *.com:443", &home).is_err());
        let got = widened(list.clone(), "connect 1.2.3.4:443 directly", &home).unwrap();
        assert_eq!((got.network, got.hosts.len()), (Network::Any, 0));
        assert!(widened(list, "delete everything", &home).is_err());
    }

    #[test]
    fn with_a_list_a_connection_around_the_proxy_is_the_sandbox_s_refusal() {
        let plan = SandboxPlan {
            read: Vec::new(),
            write: Vec::new(),
            network: Network::Hosts,
            hosts: vec!["a.example".into()],
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: "/tmp/p".into(),
            home: "/home/a".into(),
        };
        assert_eq!(
            refused_in("Error: connect EACCES 140.82.112.3:443", &plan).as_deref(),
            Some("connect 140.82.112.3:443 directly")
        );
    }
}
