//! Local servers in a sandbox: what a server's `sandbox` entry in mcp.json says (on or off,
//! its network, the folders it may read or write besides its roots), the plan made from it for
//! one start (every folder readable or writable, in full), that plan in the words the approval
//! and `switchboard mcp sandbox show` use, and — per system — how it is enforced in the child
//! before it runs the server's program ([`linux`]: Landlock, and a network namespace of its
//! own for no network).
//!
//! The plan grants and never denies: the system (everything outside the home folder) can be
//! read and run; in the home folder only what the server's runtime needs (Node's, npm's, uv's,
//! Python's folders), the folders its arguments name, and what the person gave it; it writes
//! only in its roots, the folders given for writing, its runtime's caches and a private folder
//! of its own (its `TMPDIR`, and its working folder when mcp.json gives none).

#[cfg(target_os = "linux")]
pub mod linux;

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
}

impl Network {
    /// Parses `none` or `any`.
    ///
    /// # Errors
    /// Anything else, saying what is accepted.
    pub fn parse(text: &str) -> Result<Network, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Network::None),
            "any" => Ok(Network::Any),
            other => Err(format!(
                "the network is “none” or “any”, not “{other}” (a list of hosts is not \
                 enforced yet)"
            )),
        }
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

/// The default network of a server newly put in a sandbox: a package runner needs its
/// registry (and, with no list of hosts enforced yet, gets any); anything else gets none.
pub fn default_network(program: &Path) -> Network {
    if Runtime::of(program).fetches_packages(program) {
        Network::Any
    } else {
        Network::None
    }
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
    // The program's own install (…/bin/node: its prefix), as named and as linked.
    for program in [
        Some(inputs.program.to_path_buf()),
        std::fs::canonicalize(inputs.program).ok(),
    ]
    .into_iter()
    .flatten()
    {
        // A prefix the home shares with everything else (~/.local holds other programs'
        // data, Switchboard's database among them) is not given: only the program's folder.
        let shared = [".local", ".config", ".cache", ".local/share"].map(|d| home.join(d));
        if let Some(prefix) = program.parent().and_then(Path::parent) {
            if prefix.starts_with(home) && prefix != home && !shared.iter().any(|s| s == prefix) {
                read.push(prefix.to_path_buf());
            } else if let Some(dir) = program.parent() {
                read.push(dir.to_path_buf());
            }
        }
    }
    // What its arguments name (a script, a folder to serve), but never the home folder
    // itself or a folder holding it: that is given only as a root or a folder to read.
    read.extend(
        inputs
            .args
            .iter()
            .filter_map(|a| expand(a, home))
            .filter(|p| p.exists() && !home.starts_with(p)),
    );
    if let Some(cwd) = inputs.cwd {
        read.push(cwd.to_path_buf());
    }
    read.extend(entry.allow_read.iter().filter_map(|r| expand(r, home)));
    let mut write: Vec<PathBuf> = inputs.roots.to_vec();
    write.extend(entry.allow_write.iter().filter_map(|w| expand(w, home)));
    write.extend(writes.iter().map(|w| home.join(w)));
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
        private_dir: inputs.private_dir.clone(),
        home: home.to_path_buf(),
    }
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

/// A sandbox entry in plain words, for the approval and `mcp sandbox show`: "can read and
/// write: ~/notes; can read: the system; network: none".
pub fn words(entry: &SandboxEntry, roots: &[PathBuf], home: &Path) -> String {
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
    let mut read = vec!["the system".to_owned()];
    read.extend(
        entry
            .allow_read
            .iter()
            .filter_map(|r| expand(r, home))
            .map(|r| shown(&r, home)),
    );
    let write = if write.is_empty() {
        "only its own folder".to_owned()
    } else {
        write.join(", ")
    };
    let network = match entry.network {
        Network::None => "none",
        Network::Any => "any",
    };
    let mut said = format!(
        "can read and write: {write}; can read: {}; network: {network}",
        read.join(", ")
    );
    if entry.allow_unsandboxed {
        said.push_str("; runs unsandboxed where the system cannot sandbox it");
    }
    said
}

/// What a server's sandbox comes to in words, whether it has one written or not.
pub fn said(entry: Option<&SandboxEntry>, roots: &[PathBuf], home: &Path) -> String {
    match entry {
        Some(entry) => words(entry, roots, home),
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
    let network_ok = after.network == before.network || after.network == Network::None;
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
    if plan.network == Network::None {
        if let Some(address) = address_in(line) {
            if line.contains("connect") || line.contains("ENETUNREACH") {
                return Some(format!("connect {address}"));
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
    #[cfg(not(target_os = "linux"))]
    {
        Err(
            "sandboxed servers run on Linux so far; on this system it is not enforced yet"
                .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_decides_the_default_network_and_the_home_folders() {
        assert_eq!(Runtime::of(Path::new("/usr/bin/npx")), Runtime::Node);
        assert_eq!(Runtime::of(Path::new("uvx")), Runtime::Python);
        assert_eq!(Runtime::of(Path::new("/x/python3.12")), Runtime::Python);
        assert_eq!(Runtime::of(Path::new("C:\\node\\npx.cmd")), Runtime::Node);
        assert_eq!(default_network(Path::new("/usr/bin/npx")), Network::Any);
        assert_eq!(default_network(Path::new("/usr/bin/node")), Network::None);
        assert_eq!(default_network(Path::new("/usr/bin/docker")), Network::Any);
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
        assert_eq!(
            words(&entry, &[PathBuf::from("/home/a/notes")], home),
            "can read and write: ~/notes; can read: the system, /opt/data; network: any"
        );
        assert_eq!(
            words(&SandboxEntry::default(), &[], home),
            "off: it runs with all your rights"
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
    fn the_network_is_none_or_any() {
        assert_eq!(Network::parse(" Any "), Ok(Network::Any));
        assert!(Network::parse("registry.npmjs.org")
            .unwrap_err()
            .contains("not enforced yet"));
    }
}
