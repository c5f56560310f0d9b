//! The hosts a package runner fetches from, for the list a server newly sandboxed is given:
//! npm's registry (and each scope's) as npm's own settings name it — the environment, the
//! person's `~/.npmrc`, the global `npmrc` of the Node install and of the system — else
//! registry.npmjs.org; for uv and pip their index (the environment, `pip.conf`, `uv.toml`),
//! else pypi.org and files.pythonhosted.org. A company mirror is found as npm would find it.

use std::path::{Path, PathBuf};

/// npm's public registry.
const NPM: &str = "registry.npmjs.org";
/// PyPI's index and the host its files come from.
const PYPI: [&str; 2] = ["pypi.org", "files.pythonhosted.org"];

/// The host (with its port when it is not the scheme's own) of a registry's `url`.
fn host_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url.trim().trim_matches(['"', '\''])).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host,
    })
}

/// The values of `key` (when `scoped`, of every `@scope:key` instead) in an ini-like `text`
/// (`key = value`, `#` and `;` comments).
fn values<'t>(text: &'t str, key: &str, scoped: bool) -> Vec<&'t str> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if line.starts_with(['#', ';', '[']) {
                return None;
            }
            let (name, value) = line.split_once('=')?;
            let name = name.trim();
            let matches = if scoped {
                name.starts_with('@') && name.split_once(':').is_some_and(|(_, k)| k == key)
            } else {
                name == key
            };
            matches.then_some(value.trim())
        })
        .collect()
}

/// The npm registries (as hosts) for a Node program at `program`, `home` being the person's
/// home folder and `env` the environment it starts with.
pub fn npm(program: &Path, home: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut files: Vec<PathBuf> = Vec::new();
    files.push(
        env("npm_config_userconfig")
            .or_else(|| env("NPM_CONFIG_USERCONFIG"))
            .map_or_else(|| home.join(".npmrc"), PathBuf::from),
    );
    if let Some(global) = env("npm_config_globalconfig").or_else(|| env("NPM_CONFIG_GLOBALCONFIG"))
    {
        files.push(PathBuf::from(global));
    }
    // The Node install's prefix (…/bin/npx: …), as named and as linked.
    for program in super::named_and_linked(program) {
        if let Some(prefix) = program.parent().and_then(Path::parent) {
            files.push(prefix.join("etc/npmrc"));
        }
    }
    files.extend(["/etc/npmrc", "/usr/etc/npmrc", "/usr/local/etc/npmrc"].map(PathBuf::from));
    npm_from(&files, env)
}

/// The npm registries `files` (npm's settings, first the strongest) and `env` name.
fn npm_from(files: &[PathBuf], env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .collect();
    // The registry is the first file's that sets one (the environment before them all);
    // every scope's registry is wanted as well.
    let main = env("npm_config_registry")
        .or_else(|| env("NPM_CONFIG_REGISTRY"))
        .or_else(|| {
            texts.iter().find_map(|t| {
                values(t, "registry", false)
                    .first()
                    .map(|v| (*v).to_owned())
            })
        })
        .and_then(|url| host_of(&url))
        .unwrap_or_else(|| NPM.to_owned());
    let mut hosts = vec![main];
    for text in &texts {
        hosts.extend(
            values(text, "registry", true)
                .into_iter()
                .filter_map(host_of),
        );
    }
    super::keep_once(&mut hosts);
    hosts
}

/// The Python package indexes (as hosts), `home` being the person's home folder and `env`
/// the environment the runner starts with.
pub fn python(home: &Path, env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let config = env("XDG_CONFIG_HOME").map_or_else(|| home.join(".config"), PathBuf::from);
    let pip = [
        config.join("pip/pip.conf"),
        home.join(".pip/pip.conf"),
        PathBuf::from("/etc/pip.conf"),
        PathBuf::from("/etc/xdg/pip/pip.conf"),
    ];
    let uv = [config.join("uv/uv.toml"), PathBuf::from("/etc/uv/uv.toml")];
    python_from(&pip, &uv, env)
}

/// The indexes `pip` (pip.conf files), `uv` (uv.toml files) and `env` name.
fn python_from(
    pip: &[PathBuf],
    uv: &[PathBuf],
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut urls: Vec<String> = [
        "UV_DEFAULT_INDEX",
        "UV_INDEX_URL",
        "UV_INDEX",
        "UV_EXTRA_INDEX_URL",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
    ]
    .iter()
    .filter_map(|k| env(k))
    .flat_map(|v| v.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
    .collect();
    for file in pip {
        if let Ok(text) = std::fs::read_to_string(file) {
            for key in ["index-url", "extra-index-url"] {
                urls.extend(values(&text, key, false).into_iter().map(str::to_owned));
            }
        }
    }
    for file in uv {
        if let Ok(text) = std::fs::read_to_string(file) {
            for key in ["index-url", "extra-index-url", "url"] {
                urls.extend(values(&text, key, false).into_iter().map(str::to_owned));
            }
        }
    }
    let mut hosts: Vec<String> = urls.iter().filter_map(|u| host_of(u)).collect();
    if hosts.is_empty() {
        hosts = PYPI.map(str::to_owned).to_vec();
    }
    super::keep_once(&mut hosts);
    hosts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_s_registry_is_found_where_npm_finds_it() {
        let dir = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        let user = dir.path().join("npmrc-user");
        let global = dir.path().join("npmrc-global");
        assert_eq!(npm_from(&[user.clone(), global.clone()], &none), vec![NPM]);
        std::fs::write(&global, "registry=https://global.example/\n").unwrap();
        assert_eq!(
            npm_from(&[user.clone(), global.clone()], &none),
            vec!["global.example"]
        );
        std::fs::write(
            &user,
            "# mine\nregistry = \"https://npm.corp.example:8443/repo/\"\n\
             @acme:registry=https://npm.acme.example/\nfund=false\n",
        )
        .unwrap();
        let found = npm_from(&[user.clone(), global.clone()], &none);
        assert_eq!(found, vec!["npm.corp.example:8443", "npm.acme.example"]);
        let env = |k: &str| (k == "npm_config_registry").then(|| "http://10.0.0.5:4873".to_owned());
        assert_eq!(npm_from(&[user, global], &env)[0], "10.0.0.5:4873");
        // The home's own .npmrc is read by the public entry.
        std::fs::write(
            dir.path().join(".npmrc"),
            "registry=https://home.example/\n",
        )
        .unwrap();
        assert_eq!(
            npm(Path::new("/nowhere/bin/npx"), dir.path(), &none)[0],
            "home.example"
        );
    }

    #[test]
    fn python_s_index_comes_from_uv_or_pip_settings_else_pypi() {
        let dir = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        let pip = dir.path().join("pip.conf");
        let uv = dir.path().join("uv.toml");
        assert_eq!(
            python_from(std::slice::from_ref(&pip), std::slice::from_ref(&uv), &none),
            PYPI.to_vec()
        );
        let env =
            |k: &str| (k == "UV_INDEX_URL").then(|| "https://pypi.corp.example/simple".to_owned());
        assert_eq!(
            python_from(std::slice::from_ref(&pip), std::slice::from_ref(&uv), &env),
            vec!["pypi.corp.example"]
        );
        std::fs::write(
            &pip,
            "[global]\nindex-url = https://mirror.example/simple\n",
        )
        .unwrap();
        std::fs::write(&uv, "[[index]]\nurl = \"https://uv.example/simple\"\n").unwrap();
        assert_eq!(
            python_from(&[pip], &[uv], &none),
            vec!["mirror.example", "uv.example"]
        );
    }

    #[test]
    fn a_registry_s_host_keeps_a_port_that_is_not_its_scheme_s() {
        assert_eq!(
            host_of("https://Registry.npmjs.org/").as_deref(),
            Some("registry.npmjs.org")
        );
        assert_eq!(host_of("http://h:4873/x").as_deref(), Some("h:4873"));
        assert_eq!(host_of("https://h:443/").as_deref(), Some("h"));
        assert_eq!(host_of("not a url"), None);
    }
}
