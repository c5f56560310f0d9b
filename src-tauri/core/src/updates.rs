//! Updates of the app itself: where this build looks for them, what the window is told of one,
//! and how a failure is said. Fetching, checking the signature and installing are
//! `tauri-plugin-updater`'s, in the shell; what it trusts is decided here.
//!
//! A build names its update address and the public key its updates are signed with in
//! `plugins.updater` of its Tauri configuration (`scripts/package.sh` puts them there from the
//! release environment). An organisation that serves its own updates, or a test, sets
//! `SWITCHBOARD_UPDATE_URL` and `SWITCHBOARD_UPDATE_PUBKEY` in the app's environment instead.
//! The window can change neither: a page that could choose the key could choose the app.
//! Plain `http` is accepted only for a loopback address; the signature is required either way,
//! and it must name the version the address announces (no old release passed off as new).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The environment variable naming the update address (one, or several separated by spaces).
pub const URL_VAR: &str = "SWITCHBOARD_UPDATE_URL";
/// The environment variable holding the public key updates must be signed with.
pub const PUBKEY_VAR: &str = "SWITCHBOARD_UPDATE_PUBKEY";

/// What the window is told after a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpdateStatus {
    /// This build names no update address: it is updated by whatever installed it.
    NotConfigured {
        current: String,
    },
    UpToDate {
        current: String,
    },
    Available {
        current: String,
        version: String,
        /// When it was published, as the address says.
        date: Option<String>,
        /// What it changes, as the address says (plain text, shown as such).
        notes: Option<String>,
        /// `false` when this copy cannot replace itself (not installed from a package).
        installable: bool,
    },
}

/// How far a download has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct UpdateProgress {
    #[ts(type = "number")]
    pub received: u64,
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

/// Why an update was not checked for or not installed (written in a test host's script as
/// `"bad_signature"` or `{"install": "…"}`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UpdateError {
    #[error("This build names no update address; it is updated by whatever installed it.")]
    NotConfigured,
    #[error(
        "The update address {0} is not usable: it must be https (or http to this computer only)."
    )]
    BadAddress(String),
    #[error("{PUBKEY_VAR} must be set with {URL_VAR}: updates are only taken with a signature to check.")]
    NoKey,
    #[error(
        "The update's signature does not match this app's update key, so nothing was installed."
    )]
    BadSignature,
    #[error("The update address announced {announced}, but the release it points at was signed as {signed}; nothing was installed.")]
    WrongVersion { signed: String, announced: String },
    #[error("Could not reach the update address: {0}")]
    Network(String),
    #[error("The update address gave no usable answer: {0}")]
    BadAnswer(String),
    #[error("Check for updates first: there is no update waiting to be installed.")]
    NothingChecked,
    #[error("This copy of Switchboard was not installed from a package, so it cannot replace itself. Install {0} from a package instead.")]
    NotInstallable(String),
    #[error("The update could not be installed: {0}")]
    Install(String),
}

/// The updater's configuration with the environment's address and key put in, when it names
/// any. `Ok(None)`: nothing to change. `config` is `plugins.updater` as the build has it.
pub fn configured(
    config: Option<&Value>,
    url: Option<&str>,
    pubkey: Option<&str>,
) -> Result<Option<Value>, UpdateError> {
    let url = url.map(str::trim).filter(|u| !u.is_empty());
    let pubkey = pubkey.map(str::trim).filter(|k| !k.is_empty());
    let Some(url) = url else {
        if pubkey.is_some() {
            return Err(UpdateError::BadAddress(format!(
                "(none: {URL_VAR} is not set)"
            )));
        }
        return Ok(None);
    };
    let Some(pubkey) = pubkey else {
        return Err(UpdateError::NoKey);
    };
    let mut endpoints = Vec::new();
    let mut loopback_http = false;
    for one in url.split_whitespace() {
        match address(one)? {
            Transport::Https => {}
            Transport::LoopbackHttp => loopback_http = true,
        }
        endpoints.push(one.to_owned());
    }
    let mut out = config
        .filter(|c| c.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    out["endpoints"] = json!(endpoints);
    out["pubkey"] = json!(pubkey);
    out["dangerousInsecureTransportProtocol"] = json!(loopback_http);
    out["requireSignedVersion"] = json!(true);
    Ok(Some(out))
}

/// Whether a build's configuration names an update address.
pub fn has_address(config: Option<&Value>) -> bool {
    config
        .and_then(|c| c.get("endpoints"))
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty())
}

enum Transport {
    Https,
    LoopbackHttp,
}

fn address(text: &str) -> Result<Transport, UpdateError> {
    let bad = || UpdateError::BadAddress(text.to_owned());
    let url = url::Url::parse(text).map_err(|_| bad())?;
    match url.scheme() {
        "https" if url.host().is_some() => Ok(Transport::Https),
        "http" => match url.host() {
            Some(url::Host::Ipv4(ip)) if ip.is_loopback() => Ok(Transport::LoopbackHttp),
            Some(url::Host::Ipv6(ip)) if ip.is_loopback() => Ok(Transport::LoopbackHttp),
            Some(url::Host::Domain("localhost")) => Ok(Transport::LoopbackHttp),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_an_address_in_the_environment_the_build_decides() {
        let build = json!({"pubkey": "KEY", "endpoints": ["https://updates.example/latest.json"]});
        assert_eq!(configured(Some(&build), None, None), Ok(None));
        assert_eq!(configured(Some(&build), Some("  "), None), Ok(None));
        assert!(has_address(Some(&build)));
        assert!(!has_address(Some(&json!({"pubkey": "", "endpoints": []}))));
        assert!(!has_address(None));
    }

    #[test]
    fn an_address_from_the_environment_needs_its_key_and_requires_the_signed_version() {
        let build = json!({"pubkey": "", "endpoints": [], "windows": {"installMode": "passive"}});
        assert_eq!(
            configured(Some(&build), Some("https://u.example/a.json"), None),
            Err(UpdateError::NoKey)
        );
        assert!(matches!(
            configured(Some(&build), None, Some("KEY")),
            Err(UpdateError::BadAddress(_))
        ));
        let out = configured(
            Some(&build),
            Some("https://u.example/a.json https://mirror.example/a.json"),
            Some(" KEY "),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            out["endpoints"],
            json!(["https://u.example/a.json", "https://mirror.example/a.json"])
        );
        assert_eq!(out["pubkey"], "KEY");
        assert_eq!(out["dangerousInsecureTransportProtocol"], false);
        assert_eq!(out["requireSignedVersion"], true);
        assert_eq!(out["windows"]["installMode"], "passive");
    }

    #[test]
    fn plain_http_only_to_this_computer() {
        for ok in [
            "http://127.0.0.1:9/latest.json",
            "http://[::1]:9/x",
            "http://localhost:9/x",
        ] {
            let out = configured(None, Some(ok), Some("KEY")).unwrap().unwrap();
            assert_eq!(out["dangerousInsecureTransportProtocol"], true, "{ok}");
        }
        for bad in [
            "http://updates.example/latest.json",
            "http://10.0.0.1/x",
            "ftp://127.0.0.1/x",
            "file:///tmp/latest.json",
            "not a url",
        ] {
            assert!(
                matches!(
                    configured(None, Some(bad), Some("KEY")),
                    Err(UpdateError::BadAddress(_))
                ),
                "{bad}"
            );
        }
        // One bad address refuses them all.
        assert!(configured(
            None,
            Some("https://u.example/x http://evil.example/x"),
            Some("K")
        )
        .is_err());
    }
}
