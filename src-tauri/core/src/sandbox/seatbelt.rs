//! The sandbox on macOS: a Seatbelt profile written from the same [`SandboxPlan`] Linux
//! enforces with Landlock, and the `sandbox-exec` command line that runs a server's program
//! in it (as VS Code and Codex do). The profile denies by default and then allows: reading the
//! system (everything outside the home folder) and, in the home folder, only the folders the
//! plan gives; writing only the plan's folders; the network as the plan says — none, any, or
//! only the server's own proxy on this computer (a list of hosts); signals and process
//! information only within the sandbox. Every path is a parameter (`(param "WRITE_0")`, passed
//! as `-D WRITE_0=…`), so no path is ever spliced into the profile's text; the only numbers in
//! it are the proxy's port. Written and tested as text on every system; run on macOS.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{Network, SandboxPlan};

/// Where macOS keeps `sandbox-exec`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// A profile and the values of its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    /// `(name, path)`, passed as `-D name=path`.
    pub params: Vec<(String, PathBuf)>,
}

/// The services of the system a server's program needs whatever its network: name lookups
/// of users and groups, logging, notifications. The keychain's are not among them.
const BASE_SERVICES: [&str; 6] = [
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.notification_center",
    "com.apple.system.logger",
    "com.apple.logd",
    "com.apple.diagnosticd",
];

/// What a program reaching the internet needs besides its sockets: name resolution, the
/// network's configuration and certificate trust.
const NETWORK_SERVICES: [&str; 6] = [
    "com.apple.dnssd.service",
    "com.apple.mDNSResponder",
    "com.apple.SystemConfiguration.configd",
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.networkd",
    "com.apple.trustd.agent",
];

/// `path` as the kernel sees it (`/var` is `/private/var` on macOS), when it exists.
fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn services(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("(allow mach-lookup (global-name {}))\n", names.join(" "))
}

/// ` (subpath (param "PREFIX_0")) …` for `folders`, each added to `params` under its name.
fn subpaths(
    prefix: &str,
    folders: impl Iterator<Item = PathBuf>,
    params: &mut Vec<(String, PathBuf)>,
) -> String {
    let mut filters = String::new();
    for (i, folder) in folders.enumerate() {
        let name = format!("{prefix}_{i}");
        let _ = write!(filters, " (subpath (param \"{name}\"))");
        params.push((name, folder));
    }
    filters
}

/// The profile for `plan`; `proxy` is the port of its proxy, with a list of hosts.
pub fn profile(plan: &SandboxPlan, proxy: Option<u16>) -> Profile {
    let mut params: Vec<(String, PathBuf)> = vec![("HOME".to_owned(), real(&plan.home))];
    let mut text = String::from(
        "(version 1)\n\
         (deny default)\n\
         ; It runs programs, which stay in this sandbox, and sees and signals only them.\n\
         (allow process-exec)\n\
         (allow process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow process-info* (target same-sandbox))\n\
         (allow sysctl-read)\n\
         (allow user-preference-read)\n\
         (allow ipc-posix-sem)\n\
         (allow ipc-posix-shm)\n\
         (allow pseudo-tty)\n",
    );
    text.push_str(&services(&BASE_SERVICES));
    text.push_str(
        "; Any path may be walked and looked at (as on Linux); what is in a file or a folder \
         is read only where given.\n\
         (allow file-read-metadata)\n\
         ; The system: everything outside the home folder.\n\
         (allow file-read* (require-all (subpath \"/\") (require-not (subpath (param \"HOME\")))))\n\
         (allow file-map-executable (require-all (subpath \"/\") (require-not (subpath (param \"HOME\")))))\n\
         ; Devices every program uses.\n\
         (allow file-read* file-write-data file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\") \
         (literal \"/dev/tty\") (literal \"/dev/ptmx\") (regex #\"^/dev/ttys[0-9]+$\") (subpath \"/dev/fd\"))\n",
    );
    // In the home folder: what the plan gives to read (what it gives outside is the system's).
    let home = real(&plan.home);
    let read = subpaths(
        "READ",
        plan.read
            .iter()
            .map(|f| real(f))
            .filter(|f| f.starts_with(&home) && *f != home),
        &mut params,
    );
    if !read.is_empty() {
        let _ = writeln!(
            text,
            "; Given in the home folder, to read (and load libraries from).\n\
             (allow file-read*{read})\n(allow file-map-executable{read})"
        );
    }
    let write = subpaths("WRITE", plan.write.iter().map(|f| real(f)), &mut params);
    if !write.is_empty() {
        let _ = writeln!(
            text,
            "; Its roots, the folders given to write, its runtime's caches, its own folder.\n\
             (allow file-read*{write})\n(allow file-map-executable{write})\n\
             (allow file-write*{write})"
        );
    }
    match (plan.network, proxy) {
        (Network::Any, _) => {
            // IP only: Unix sockets (agents, Docker's) are below, as on Linux.
            text.push_str(
                "; Any network.\n(allow network-outbound (remote ip \"*:*\"))\n\
                 (allow network-inbound (local ip \"*:*\"))\n(allow network-bind (local ip \"*:*\"))\n\
                 (allow system-socket)\n",
            );
            text.push_str(&services(&NETWORK_SERVICES));
        }
        (Network::Hosts, Some(port)) => {
            let _ = writeln!(
                text,
                "; Its hosts, through its own proxy on this computer: nothing else.\n\
                 (allow network-outbound (remote ip \"localhost:{port}\"))"
            );
        }
        // No network: nothing is allowed, so every socket but a pair is refused.
        (Network::None | Network::Hosts, _) => {
            text.push_str("; No network.\n");
        }
    }
    if plan.unix_sockets {
        text.push_str(
            "; Unix sockets: Docker's program talks to Docker's service by one.\n\
             (allow network-outbound (remote unix-socket))\n",
        );
    }
    Profile { text, params }
}

/// The command line that runs `program` with `args` in the sandbox of `plan`:
/// `sandbox-exec -p PROFILE -D NAME=PATH … -- program args…`.
pub fn command_line(
    plan: &SandboxPlan,
    proxy: Option<u16>,
    program: &Path,
    args: &[String],
) -> (PathBuf, Vec<OsString>) {
    let Profile { text, params } = profile(plan, proxy);
    let mut line: Vec<OsString> = vec!["-p".into(), text.into()];
    for (name, path) in params {
        line.push("-D".into());
        let mut value = OsString::from(format!("{name}="));
        value.push(path.as_os_str());
        line.push(value);
    }
    line.push("--".into());
    line.push(program.as_os_str().to_owned());
    line.extend(args.iter().map(OsString::from));
    (PathBuf::from(SANDBOX_EXEC), line)
}

/// Whether this Mac can sandbox a server: `sandbox-exec` is where macOS keeps it.
pub fn available() -> bool {
    Path::new(SANDBOX_EXEC).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(network: Network) -> SandboxPlan {
        SandboxPlan {
            read: vec![
                PathBuf::from("/usr"),
                PathBuf::from("/Users/a/.nvm"),
                PathBuf::from("/Users/a/server.py"),
            ],
            write: vec![
                PathBuf::from("/Users/a/notes"),
                PathBuf::from("/Users/a/Library/Application Support/Switchboard/sandbox/fs"),
            ],
            network,
            hosts: vec!["registry.npmjs.org".into()],
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: PathBuf::from(
                "/Users/a/Library/Application Support/Switchboard/sandbox/fs",
            ),
            home: PathBuf::from("/Users/a"),
        }
    }

    #[test]
    fn the_profile_denies_by_default_and_gives_what_the_plan_gives_as_parameters() {
        let Profile { text, params } = profile(&plan(Network::None), None);
        assert!(text.starts_with("(version 1)\n(deny default)\n"), "{text}");
        // The home is closed but for what is given; the system outside it is readable.
        assert!(text.contains(
            "(allow file-read* (require-all (subpath \"/\") (require-not (subpath (param \"HOME\")))))"
        ));
        assert_eq!(
            params,
            vec![
                ("HOME".to_owned(), PathBuf::from("/Users/a")),
                ("READ_0".to_owned(), PathBuf::from("/Users/a/.nvm")),
                ("READ_1".to_owned(), PathBuf::from("/Users/a/server.py")),
                ("WRITE_0".to_owned(), PathBuf::from("/Users/a/notes")),
                (
                    "WRITE_1".to_owned(),
                    PathBuf::from("/Users/a/Library/Application Support/Switchboard/sandbox/fs")
                ),
            ],
            "/usr is the system's, given by the rule for outside the home"
        );
        assert!(text.contains(
            "(allow file-read* (subpath (param \"READ_0\")) (subpath (param \"READ_1\")))"
        ));
        assert!(text.contains(
            "(allow file-write* (subpath (param \"WRITE_0\")) (subpath (param \"WRITE_1\")))"
        ));
        // No path is spliced into the text: a folder named with a quote cannot end a string.
        assert!(!text.contains("/Users/a"), "{text}");
        // No network at all, no signals or process information outside, no keychain.
        assert!(!text.contains("(allow network") && !text.contains("system-socket"));
        assert!(text.contains("(allow signal (target same-sandbox))"));
        assert!(!text.contains("SecurityServer") && !text.contains("securityd"));
        assert!(balanced(&text), "{text}");
    }

    /// Whether every parenthesis outside strings and comments is closed.
    fn balanced(text: &str) -> bool {
        let mut depth = 0i32;
        for line in text.lines().filter(|l| !l.starts_with(';')) {
            let mut in_string = false;
            for c in line.chars() {
                match c {
                    '"' => in_string = !in_string,
                    '(' if !in_string => depth += 1,
                    ')' if !in_string => depth -= 1,
                    _ => {}
                }
                if depth < 0 {
                    return false;
                }
            }
            if in_string {
                return false;
            }
        }
        depth == 0
    }

    #[test]
    fn the_network_is_nothing_anything_or_only_its_proxy() {
        let any = profile(&plan(Network::Any), None).text;
        assert!(any.contains("(allow network-outbound (remote ip \"*:*\"))"));
        assert!(!any.contains("unix-socket"), "agents' sockets stay closed");
        assert!(balanced(&any), "{any}");
        let docker = profile(
            &SandboxPlan {
                unix_sockets: true,
                stays_in_group: false,
                ..plan(Network::None)
            },
            None,
        )
        .text;
        assert!(docker.contains("(allow network-outbound (remote unix-socket))"));
        assert!(any.contains("com.apple.mDNSResponder"));
        let hosts = profile(&plan(Network::Hosts), Some(40123)).text;
        assert!(hosts.contains("(allow network-outbound (remote ip \"localhost:40123\"))"));
        assert!(!hosts.contains("remote ip \"*:*\""));
        assert!(!hosts.contains("mDNSResponder"), "its proxy resolves names");
        let no_proxy = profile(&plan(Network::Hosts), None).text;
        assert!(!no_proxy.contains("network-outbound"), "{no_proxy}");
    }

    #[test]
    fn the_command_line_runs_the_program_after_the_profile_and_its_parameters() {
        let (program, line) = command_line(
            &plan(Network::None),
            None,
            Path::new("/usr/local/bin/npx"),
            &["-y".into(), "@scope/server".into()],
        );
        assert_eq!(program, PathBuf::from(SANDBOX_EXEC));
        assert_eq!(line[0], "-p");
        assert_eq!(line[2], "-D");
        assert_eq!(line[3], "HOME=/Users/a");
        let dash = line.iter().position(|a| a == "--").unwrap();
        assert_eq!(
            &line[dash + 1..],
            &["/usr/local/bin/npx", "-y", "@scope/server"].map(OsString::from)
        );
    }

    /// On a Mac, for real: a file in the home folder that was not given cannot be read, one
    /// that was can, and nothing is written outside.
    #[cfg(target_os = "macos")]
    #[test]
    fn on_this_mac_sandbox_exec_holds_a_program_to_its_profile() {
        let home = tempfile::tempdir().unwrap();
        let home = real(home.path());
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/key"), "PRIVATE").unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::write(home.join("notes/a.txt"), "mine").unwrap();
        let plan = SandboxPlan {
            read: Vec::new(),
            write: vec![home.join("notes")],
            network: Network::None,
            hosts: Vec::new(),
            loopback: false,
            unix_sockets: false,
            stays_in_group: false,
            private_dir: home.join("notes"),
            home: home.clone(),
        };
        let run = |program: &str, args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            let (exec, line) = command_line(&plan, None, Path::new(program), &args);
            std::process::Command::new(exec)
                .args(line)
                .output()
                .unwrap()
        };
        let given = run("/bin/cat", &[home.join("notes/a.txt").to_str().unwrap()]);
        assert!(given.status.success(), "{given:?}");
        assert_eq!(given.stdout, b"mine");
        let key = run("/bin/cat", &[home.join(".ssh/key").to_str().unwrap()]);
        assert!(!key.status.success(), "{key:?}");
        let outside = run("/usr/bin/touch", &[home.join("dropped").to_str().unwrap()]);
        assert!(!outside.status.success(), "{outside:?}");
        assert!(!home.join("dropped").exists());
    }
}
