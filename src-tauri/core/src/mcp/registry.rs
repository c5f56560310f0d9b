//! The MCP Registry (the official one, or an organisation's own, over the registry's v0.1
//! API) as a place to find servers: a search read page by page, and what each server found
//! is — where it comes from (an npm or PyPI package, an OCI image, a remote address) and what
//! it needs from the person to run (environment variables, arguments, headers). Nothing here
//! installs or starts anything.

use std::time::Duration;

use serde::Serialize;

/// The official registry's address, used unless another is given.
pub const OFFICIAL_REGISTRY: &str = "https://registry.modelcontextprotocol.io";

/// How long one request to a registry may take in all.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The most of a registry's answer read (a page of 100 servers is well under 1 MiB).
const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// The most servers asked for in one page (the registry's own cap).
pub const MAX_PAGE: u32 = 100;

/// Why a registry gave no answer to use.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("“{0}” is not a registry address (an http:// or https:// URL)")]
    BadAddress(String),
    #[error("The registry at {registry} could not be reached: {detail}")]
    Unreachable { registry: String, detail: String },
    #[error("The registry at {registry} answered {status}: {detail}")]
    Refused {
        registry: String,
        status: u16,
        detail: String,
    },
    #[error(
        "The registry at {registry} answered with something that is not a server list: {detail}"
    )]
    Malformed { registry: String, detail: String },
}

/// One page of a search.
#[derive(Debug, Clone, Serialize, ts_rs::TS)]
pub struct SearchPage {
    pub servers: Vec<FoundServer>,
    /// What to ask for the next page with; `None` on the last.
    pub next_cursor: Option<String>,
}

/// A server as the registry describes it.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct FoundServer {
    /// Its registry name (`io.github.owner/name`).
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub version: String,
    /// Its source repository's address.
    pub repository: Option<String>,
    pub website: Option<String>,
    /// `active`, `deprecated`, … as the registry says.
    pub status: Option<String>,
    /// The ways to run it, as published: packages first, then remote addresses.
    pub sources: Vec<Source>,
    /// The name it gets here unless the person gives one ([`suggested_name`]): the window
    /// and `switchboard mcp install` both use it.
    pub suggested_name: String,
    /// The icon it names, fetched by [`search`] as a `data:` URL the window shows as it is
    /// (its CSP loads no remote image); `None` when it names none or it could not be had.
    pub icon: Option<String>,
}

/// The name a server from the registry gets here unless the person gives one: its title as a
/// name is written ("GitHub MCP Server" → `github-mcp-server`, "Café Menü" → `cafe-menu`: ASCII
/// letters, digits, `.`, `_` and `-`, at most 40), else the last part of its registry name
/// ([`local_name`]).
#[must_use]
pub fn suggested_name(registry_name: &str, title: Option<&str>) -> String {
    use unicode_normalization::char::is_combining_mark;
    use unicode_normalization::UnicodeNormalization;
    let mut slug = String::new();
    for c in title
        .unwrap_or_default()
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
    {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.chars().take(40).collect();
    let slug = slug.trim_matches(|c| c == '-' || c == '.');
    if slug.is_empty() {
        local_name(registry_name).to_owned()
    } else {
        slug.to_owned()
    }
}

/// The last part of a registry name (`io.github.owner/server-time` → `server-time`).
#[must_use]
pub fn local_name(registry_name: &str) -> &str {
    registry_name
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(registry_name)
}

/// One way to run a server.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct Source {
    pub kind: SourceKind,
    /// The package's name, the image (with its tag) or the remote address.
    pub identifier: String,
    /// The package's version, where the package names one.
    pub version: Option<String>,
    /// `stdio`, `streamable-http` or `sse`.
    pub transport: String,
    /// What the person gives it to run.
    pub needs: Vec<Need>,
    /// Whether Switchboard can install it: a stdio package of npm, PyPI or an OCI image, or a
    /// remote address over streamable HTTP or SSE.
    pub installable: bool,
}

impl Source {
    fn new(
        kind: SourceKind,
        identifier: String,
        version: Option<String>,
        transport: String,
        needs: Vec<Need>,
    ) -> Self {
        let installable = matches!(
            (kind, transport.as_str()),
            (
                SourceKind::Npm | SourceKind::Pypi | SourceKind::Oci,
                "stdio"
            ) | (SourceKind::Remote, "streamable-http" | "sse")
        );
        Self {
            kind,
            identifier,
            version,
            transport,
            needs,
            installable,
        }
    }
}

/// Where a source comes from.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    Npm,
    Pypi,
    Oci,
    Nuget,
    Mcpb,
    /// Reached at an address, nothing installed.
    Remote,
    /// A package kind this version of Switchboard does not know.
    Other,
}

impl SourceKind {
    fn of(registry_type: &str) -> Self {
        match registry_type {
            "npm" => SourceKind::Npm,
            "pypi" => SourceKind::Pypi,
            "oci" => SourceKind::Oci,
            "nuget" => SourceKind::Nuget,
            "mcpb" => SourceKind::Mcpb,
            _ => SourceKind::Other,
        }
    }

    /// Its name as the person reads it.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            SourceKind::Npm => "npm",
            SourceKind::Pypi => "PyPI",
            SourceKind::Oci => "OCI image",
            SourceKind::Nuget => "NuGet",
            SourceKind::Mcpb => "MCP bundle",
            SourceKind::Remote => "remote",
            SourceKind::Other => "other",
        }
    }
}

/// Something a source needs from the person: a value for an environment variable, an
/// argument or a header (or for a `{variable}` inside one of those).
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
pub struct Need {
    pub kind: NeedKind,
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
    /// A key or a token: kept in the OS keychain, never shown.
    pub secret: bool,
    pub default: Option<String>,
    pub choices: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum NeedKind {
    Environment,
    Argument,
    Header,
}

/// Searches `registry` for servers whose name (or, on newer registries, description) holds
/// `query`, newest versions only, `limit` a page (at most [`MAX_PAGE`]), from `cursor`.
///
/// # Errors
/// The address is not one; the registry could not be reached, refused, or answered
/// something else than a server list.
pub async fn search(
    registry: &str,
    query: &str,
    cursor: Option<&str>,
    limit: u32,
    icons: Icons,
) -> Result<SearchPage, RegistryError> {
    let mut url = endpoint(registry, "v0.1/servers")?;
    {
        let mut pairs = url.query_pairs_mut();
        if !query.is_empty() {
            pairs.append_pair("search", query);
        }
        pairs.append_pair("version", "latest");
        pairs.append_pair("limit", &limit.clamp(1, MAX_PAGE).to_string());
        if let Some(cursor) = cursor {
            pairs.append_pair("cursor", cursor);
        }
    }
    let body = get(registry, url.clone()).await?;
    let list: wire::List = serde_json::from_slice(&body).map_err(|e| RegistryError::Malformed {
        registry: registry.to_owned(),
        detail: e.to_string(),
    })?;
    let published: Vec<Published> = list.servers.into_iter().map(Published::from).collect();
    let icons = match icons {
        Icons::Fetched => {
            icons::fetch_all(&url, published.iter().map(|p| p.server.icons.as_slice())).await
        }
        Icons::None => vec![None; published.len()],
    };
    Ok(SearchPage {
        servers: published
            .iter()
            .zip(icons)
            .map(|(published, icon)| FoundServer {
                icon,
                ..published.found()
            })
            .collect(),
        next_cursor: list.metadata.next_cursor.filter(|c| !c.is_empty()),
    })
}

/// Whether a search fetches the servers' icons: the window shows them, the command line does
/// not (and so reaches no other host than the registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icons {
    Fetched,
    None,
}

/// The icons of a page of servers, as `data:` URLs: each server's best one, fetched at once
/// and each given up on quietly (a card then shows its letter) — over `https:` or from the
/// registry's own origin, an image of a known kind, at most [`MAX_ICON_BYTES`], and all of them
/// within [`ICONS_TIMEOUT`] so a slow icon host never holds up a search.
mod icons {
    use std::time::Duration;

    use base64::Engine as _;
    use futures_util::StreamExt as _;

    use super::wire::Icon;

    pub const MAX_ICON_BYTES: usize = 64 * 1024;
    /// How long one icon may take, and (twice that) a whole page's.
    pub const ICONS_TIMEOUT: Duration = Duration::from_secs(3);
    /// The most icons of one page fetched: a registry's answer may hold thousands of entries.
    const MOST: usize = super::MAX_PAGE as usize;
    /// The most icons fetched at once.
    const AT_ONCE: usize = 8;
    const KINDS: [&str; 5] = [
        "image/png",
        "image/jpeg",
        "image/webp",
        "image/gif",
        "image/svg+xml",
    ];

    pub async fn fetch_all<'a>(
        registry: &url::Url,
        icons: impl Iterator<Item = &'a [Icon]>,
    ) -> Vec<Option<String>> {
        let chosen: Vec<Option<&Icon>> = icons.map(best).collect();
        let none = || vec![None; chosen.len()];
        let origin = registry.origin();
        let client = crate::net::client_builder()
            .timeout(ICONS_TIMEOUT)
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                let next = attempt.url();
                let public_https =
                    next.scheme() == "https" && !crate::net::is_local_network_name(next);
                if attempt.previous().len() < 3 && (public_https || next.origin() == origin) {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
            .build();
        let Ok(client) = client else {
            return none();
        };
        // Boxed one by one, not mapped by a closure: a closure over borrowed icons defeats the
        // compiler's proof that the search's future is `Send`.
        let mut fetches: Vec<
            std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send + '_>>,
        > = Vec::with_capacity(chosen.len());
        for (n, icon) in chosen.iter().enumerate() {
            let src = icon
                .filter(|_| n < MOST)
                .and_then(|icon| allowed(registry, &icon.src));
            let client = &client;
            fetches.push(Box::pin(async move {
                match src? {
                    Src::Data(url) => Some(url),
                    Src::Fetch(url) => tokio::time::timeout(ICONS_TIMEOUT, fetch(client, url))
                        .await
                        .ok()
                        .flatten(),
                }
            }));
        }
        let all = futures_util::stream::iter(fetches)
            .buffered(AT_ONCE)
            .collect::<Vec<_>>();
        // Each fetch has its own limit; this one only stops a page that would still go on.
        let most = ICONS_TIMEOUT * u32::try_from(MOST / AT_ONCE + 1).unwrap_or(u32::MAX);
        tokio::time::timeout(most, all)
            .await
            .unwrap_or_else(|_| none())
    }

    /// The icon to show: one of a kind an `<img>` shows, for no theme or the light one first,
    /// then the one nearest 64 px.
    fn best(icons: &[Icon]) -> Option<&Icon> {
        icons
            .iter()
            .filter(|icon| {
                icon.mime_type
                    .as_deref()
                    .is_none_or(|kind| KINDS.contains(&kind))
            })
            .min_by_key(|icon| {
                let theme = u32::from(icon.theme.as_deref().is_some_and(|t| t != "light"));
                let size = icon
                    .sizes
                    .iter()
                    .filter_map(|size| {
                        if size == "any" {
                            return Some(0);
                        }
                        let (w, _) = size.split_once('x')?;
                        w.parse::<i64>().ok().map(|w| (w - 64).unsigned_abs())
                    })
                    .min()
                    .unwrap_or(32);
                (theme, size)
            })
    }

    pub enum Src {
        /// Already a `data:` URL of an image kind, small enough.
        Data(String),
        Fetch(url::Url),
    }

    /// Where an icon may come from: `https:` on a public name (never this computer or a
    /// private network, which a registry entry must not make every client reach), the
    /// registry's own origin (a registry on this computer serves its own), or a
    /// `data:<image kind>;base64,<payload>` URL whose payload decodes to at most
    /// [`MAX_ICON_BYTES`].
    pub fn allowed(registry: &url::Url, src: &str) -> Option<Src> {
        if let Some(rest) = src.strip_prefix("data:") {
            let (kind, payload) = rest.split_once(";base64,")?;
            if !KINDS.contains(&kind) || payload.len() > MAX_ICON_BYTES * 4 / 3 + 4 {
                return None;
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(payload)
                .ok()?;
            return (!bytes.is_empty() && bytes.len() <= MAX_ICON_BYTES)
                .then(|| Src::Data(src.to_owned()));
        }
        let url = url::Url::parse(src).ok()?;
        let public_https = url.scheme() == "https" && !crate::net::is_local_network_name(&url);
        (public_https || url.origin() == registry.origin()).then_some(Src::Fetch(url))
    }

    /// The image at `url` as a `data:` URL, if it is one of [`KINDS`] (as the server labels it)
    /// and at most [`MAX_ICON_BYTES`].
    async fn fetch(client: &reqwest::Client, url: url::Url) -> Option<String> {
        let mut response = client.get(url).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let kind = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)?
            .to_str()
            .ok()?
            .split(';')
            .next()?
            .trim()
            .to_ascii_lowercase();
        if !KINDS.contains(&kind.as_str()) {
            return None;
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            if body.len() + chunk.len() > MAX_ICON_BYTES {
                return None;
            }
            body.extend_from_slice(&chunk);
        }
        let data = base64::engine::general_purpose::STANDARD.encode(&body);
        Some(format!("data:{kind};base64,{data}"))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn an_icon_comes_over_https_from_the_registry_itself_or_as_a_small_image_data_url() {
            let registry = url::Url::parse("http://127.0.0.1:4321/v0.1/servers").unwrap();
            let fetched = |src: &str| matches!(allowed(&registry, src), Some(Src::Fetch(_)));
            assert!(fetched("https://cdn.example.com/icon.png"));
            assert!(fetched("http://127.0.0.1:4321/icons/a.png"));
            assert!(!fetched("http://127.0.0.1:9999/icons/a.png"));
            // Never this computer or a private network but for the registry itself.
            for private in [
                "https://localhost/a.png",
                "https://127.0.0.1:4321/a.png",
                "https://10.0.0.7/a.png",
                "https://192.168.1.2/a.png",
                "https://intranet/a.png",
                "https://printer.local/a.png",
                "https://[::1]/a.png",
            ] {
                assert!(!fetched(private), "{private}");
            }
            assert!(!fetched("http://example.com/icon.png"));
            assert!(!fetched("file:///etc/passwd"));
            assert!(!fetched("javascript:alert(1)"));
            let data = |src: &str| matches!(allowed(&registry, src), Some(Src::Data(_)));
            assert!(data("data:image/png;base64,iVBORw0KGgo="));
            assert!(!data("data:text/html;base64,PHNjcmlwdD4="));
            assert!(!data("data:image/png,raw"));
            assert!(!data("data:image/svg+xml,<svg/>;base64,AAAA"));
            assert!(!data("data:image/png;base64,not base64!"));
            let huge = format!("data:image/png;base64,{}", "A".repeat(MAX_ICON_BYTES * 2));
            assert!(!data(&huge));
        }

        #[test]
        fn the_light_icon_nearest_64_px_is_chosen() {
            let icon = |src: &str, kind: Option<&str>, sizes: &[&str], theme: Option<&str>| Icon {
                src: src.to_owned(),
                mime_type: kind.map(str::to_owned),
                sizes: sizes.iter().map(|s| (*s).to_owned()).collect(),
                theme: theme.map(str::to_owned),
            };
            let icons = [
                icon("dark", Some("image/png"), &["64x64"], Some("dark")),
                icon("big", Some("image/png"), &["512x512"], None),
                icon("tiff", Some("image/tiff"), &["64x64"], None),
                icon(
                    "right",
                    Some("image/png"),
                    &["48x48", "96x96"],
                    Some("light"),
                ),
            ];
            assert_eq!(best(&icons).map(|i| i.src.as_str()), Some("right"));
            assert!(best(&[]).is_none());
        }
    }
}

/// Whether `text` is an address a registry may have (`http:` or `https:`, with a host).
#[must_use]
pub fn is_address(text: &str) -> bool {
    endpoint(text, "v0.1/servers").is_ok()
}

/// `path` under the registry's address (which may have a path of its own).
fn endpoint(registry: &str, path: &str) -> Result<url::Url, RegistryError> {
    let bad = || RegistryError::BadAddress(registry.to_owned());
    let mut base = url::Url::parse(registry).map_err(|_| bad())?;
    if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
        return Err(bad());
    }
    if !base.path().ends_with('/') {
        let with_slash = format!("{}/", base.path());
        base.set_path(&with_slash);
    }
    base.set_query(None);
    base.join(path).map_err(|_| bad())
}

/// The body of a GET of `url`, read up to [`MAX_ANSWER_BYTES`].
async fn get(registry: &str, url: url::Url) -> Result<Vec<u8>, RegistryError> {
    let unreachable = |detail: String| RegistryError::Unreachable {
        registry: registry.to_owned(),
        detail,
    };
    let client = crate::net::client_builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let mut response = client
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| unreachable(crate::net::describe_error(&e)))?;
    let status = response.status();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable(crate::net::describe_error(&e)))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(RegistryError::Malformed {
                registry: registry.to_owned(),
                detail: format!("its answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20),
            });
        }
        body.extend_from_slice(&chunk);
    }
    if !status.is_success() {
        // A registry's error is a problem document (`detail`, `title`), or any text.
        let said: Option<wire::Problem> = serde_json::from_slice(&body).ok();
        let detail = said
            .and_then(|p| p.detail.or(p.title))
            .unwrap_or_else(|| String::from_utf8_lossy(&body).chars().take(200).collect());
        return Err(RegistryError::Refused {
            registry: registry.to_owned(),
            status: status.as_u16(),
            detail,
        });
    }
    Ok(body)
}

/// One version of a server as the registry published it, whole: what [`search`] shows of it
/// and what an install is worked out from.
#[derive(Debug, Clone)]
pub struct Published {
    pub(crate) server: wire::Server,
    status: Option<String>,
}

impl Published {
    /// Reads one entry of the registry (`{"server": …, "_meta": …}`).
    ///
    /// # Errors
    /// It is not one.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let entry: wire::Entry = serde_json::from_str(text)?;
        Ok(Published::from(entry))
    }

    /// What the person is shown of it.
    #[must_use]
    pub fn found(&self) -> FoundServer {
        found_server(&self.server, self.status.clone())
    }
}

impl From<wire::Entry> for Published {
    fn from(entry: wire::Entry) -> Self {
        Published {
            server: entry.server,
            status: entry.meta.official.and_then(|o| o.status),
        }
    }
}

/// The server `name` at `version` (`latest` for the newest) from `registry`.
///
/// # Errors
/// As [`search`]; a server the registry does not have is [`RegistryError::Refused`] with 404.
pub async fn fetch(registry: &str, name: &str, version: &str) -> Result<Published, RegistryError> {
    let mut url = endpoint(registry, "v0.1/servers/")?;
    url.path_segments_mut()
        .map_err(|()| RegistryError::BadAddress(registry.to_owned()))?
        .pop_if_empty()
        .extend([name, "versions", version]);
    let body = get(registry, url).await?;
    let entry: wire::Entry =
        serde_json::from_slice(&body).map_err(|e| RegistryError::Malformed {
            registry: registry.to_owned(),
            detail: e.to_string(),
        })?;
    Ok(Published::from(entry))
}

fn found_server(server: &wire::Server, status: Option<String>) -> FoundServer {
    let packages = server.packages.iter().map(|package| {
        let mut needs = Vec::new();
        for argument in package
            .runtime_arguments
            .iter()
            .chain(&package.package_arguments)
        {
            argument_needs(argument, &mut needs);
        }
        for variable in &package.environment_variables {
            input_needs(variable, NeedKind::Environment, &mut needs);
        }
        for header in &package.transport.headers {
            input_needs(header, NeedKind::Header, &mut needs);
        }
        Source::new(
            SourceKind::of(&package.registry_type),
            package.identifier.clone(),
            package.version.clone(),
            package.transport.kind.clone(),
            needs,
        )
    });
    let remotes = server.remotes.iter().map(|remote| {
        let mut needs = Vec::new();
        for header in &remote.headers {
            input_needs(header, NeedKind::Header, &mut needs);
        }
        for (name, variable) in &remote.variables {
            needs.push(variable.need(NeedKind::Header, name));
        }
        Source::new(
            SourceKind::Remote,
            remote.url.clone(),
            None,
            remote.kind.clone(),
            needs,
        )
    });
    FoundServer {
        name: server.name.clone(),
        title: server.title.clone(),
        description: server.description.clone(),
        version: server.version.clone(),
        repository: server
            .repository
            .as_ref()
            .map(|r| r.url.clone())
            .filter(|u| !u.is_empty()),
        website: server.website_url.clone(),
        status,
        sources: packages.chain(remotes).collect(),
        suggested_name: suggested_name(&server.name, server.title.as_deref()),
        icon: None,
    }
}

/// What an argument needs: nothing when its value is fixed; a value for each `{variable}` in
/// it; else its own value.
fn argument_needs(argument: &wire::Argument, needs: &mut Vec<Need>) {
    let name = argument
        .input
        .name
        .clone()
        .or_else(|| argument.value_hint.clone())
        .unwrap_or_else(|| "argument".to_owned());
    if !argument.input.variables.is_empty() {
        for (variable, input) in &argument.input.variables {
            needs.push(input.need(NeedKind::Argument, variable));
        }
    } else if argument.input.value.is_none() {
        needs.push(argument.input.need(NeedKind::Argument, &name));
    }
}

/// What a named input (an environment variable, a header) needs, as [`argument_needs`].
fn input_needs(input: &wire::Input, kind: NeedKind, needs: &mut Vec<Need>) {
    let name = input.name.clone().unwrap_or_default();
    if !input.variables.is_empty() {
        for (variable, inner) in &input.variables {
            needs.push(inner.need(kind, variable));
        }
    } else if input.value.is_none() {
        needs.push(input.need(kind, &name));
    }
}

/// The registry's JSON, read leniently: what Switchboard does not use is not required.
pub(crate) mod wire {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct List {
        pub servers: Vec<Entry>,
        #[serde(default)]
        pub metadata: Metadata,
    }

    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase")]
    pub struct Metadata {
        pub next_cursor: Option<String>,
    }

    #[derive(Deserialize)]
    pub struct Entry {
        pub server: Server,
        #[serde(rename = "_meta", default)]
        pub meta: EntryMeta,
    }

    #[derive(Deserialize, Default)]
    pub struct EntryMeta {
        #[serde(rename = "io.modelcontextprotocol.registry/official")]
        pub official: Option<Official>,
    }

    #[derive(Deserialize)]
    pub struct Official {
        pub status: Option<String>,
    }

    #[derive(Deserialize, Clone, Debug)]
    #[serde(rename_all = "camelCase")]
    pub struct Server {
        pub name: String,
        #[serde(default)]
        pub title: Option<String>,
        #[serde(default)]
        pub description: String,
        #[serde(default)]
        pub version: String,
        #[serde(default)]
        pub repository: Option<Repository>,
        #[serde(default)]
        pub website_url: Option<String>,
        #[serde(default)]
        pub packages: Vec<Package>,
        #[serde(default)]
        pub remotes: Vec<Remote>,
        #[serde(default)]
        pub icons: Vec<Icon>,
    }

    #[derive(Deserialize, Clone, Debug)]
    #[serde(rename_all = "camelCase")]
    pub struct Icon {
        pub src: String,
        #[serde(default)]
        pub mime_type: Option<String>,
        #[serde(default)]
        pub sizes: Vec<String>,
        #[serde(default)]
        pub theme: Option<String>,
    }

    #[derive(Deserialize, Clone, Debug)]
    pub struct Repository {
        #[serde(default)]
        pub url: String,
    }

    #[derive(Deserialize, Clone, Debug)]
    #[serde(rename_all = "camelCase")]
    pub struct Package {
        pub registry_type: String,
        pub identifier: String,
        #[serde(default)]
        pub version: Option<String>,
        #[serde(default)]
        pub transport: Transport,
        #[serde(default)]
        pub runtime_arguments: Vec<Argument>,
        #[serde(default)]
        pub package_arguments: Vec<Argument>,
        #[serde(default)]
        pub environment_variables: Vec<Input>,
    }

    #[derive(Deserialize, Clone, Debug)]
    pub struct Transport {
        #[serde(rename = "type")]
        pub kind: String,
        #[serde(default)]
        pub headers: Vec<Input>,
    }

    impl Default for Transport {
        fn default() -> Self {
            Transport {
                kind: "stdio".to_owned(),
                headers: Vec::new(),
            }
        }
    }

    #[derive(Deserialize, Clone, Debug)]
    pub struct Remote {
        #[serde(rename = "type")]
        pub kind: String,
        pub url: String,
        #[serde(default)]
        pub headers: Vec<Input>,
        #[serde(default)]
        pub variables: BTreeMap<String, Input>,
    }

    #[derive(Deserialize, Clone, Debug)]
    #[serde(rename_all = "camelCase")]
    pub struct Argument {
        #[serde(flatten)]
        pub input: Input,
        /// `positional` or `named`.
        #[serde(rename = "type", default)]
        pub kind: String,
        #[serde(default)]
        pub value_hint: Option<String>,
        #[serde(default)]
        pub is_repeated: bool,
    }

    /// An input: an argument's, an environment variable's, a header's or a variable's.
    #[derive(Deserialize, Default, Clone, Debug)]
    #[serde(rename_all = "camelCase")]
    pub struct Input {
        #[serde(default)]
        pub name: Option<String>,
        #[serde(default)]
        pub description: Option<String>,
        #[serde(default)]
        pub is_required: bool,
        #[serde(default)]
        pub is_secret: bool,
        #[serde(default)]
        pub default: Option<String>,
        #[serde(default)]
        pub value: Option<String>,
        #[serde(default)]
        pub choices: Vec<String>,
        #[serde(default)]
        pub variables: BTreeMap<String, Input>,
    }

    impl Input {
        pub fn need(&self, kind: super::NeedKind, name: &str) -> super::Need {
            super::Need {
                kind,
                name: name.to_owned(),
                description: self.description.clone(),
                required: self.is_required,
                secret: self.is_secret,
                default: self.default.clone(),
                choices: self.choices.clone(),
            }
        }
    }

    #[derive(Deserialize)]
    pub struct Problem {
        pub title: Option<String>,
        pub detail: Option<String>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_named_here_after_the_last_part_of_its_registry_name() {
        assert_eq!(local_name("io.github.owner/server-time"), "server-time");
        assert_eq!(local_name("plain"), "plain");
        assert_eq!(local_name("trailing/"), "trailing/");
    }

    #[test]
    fn a_server_is_named_here_after_its_title_when_it_has_one() {
        let named = |title: Option<&str>| suggested_name("io.github.owner/server-time", title);
        assert_eq!(named(Some("GitHub MCP Server")), "github-mcp-server");
        assert_eq!(named(Some("  Café Menü — v2.0 ")), "cafe-menu-v2.0");
        assert_eq!(named(Some("../../etc/passwd")), "etc-passwd");
        assert_eq!(named(Some("日本語")), "server-time");
        assert_eq!(named(Some("")), "server-time");
        assert_eq!(named(None), "server-time");
        assert_eq!(named(Some(&"a".repeat(100))).len(), 40);
    }

    #[test]
    fn a_registry_address_may_have_a_path_of_its_own() {
        assert_eq!(
            endpoint("https://registry.example.com", "v0.1/servers")
                .unwrap()
                .as_str(),
            "https://registry.example.com/v0.1/servers"
        );
        assert_eq!(
            endpoint("https://example.com/mcp/registry?x=1", "v0.1/servers")
                .unwrap()
                .as_str(),
            "https://example.com/mcp/registry/v0.1/servers"
        );
        for bad in ["file:///etc", "registry.example.com", "ftp://x.example"] {
            assert!(matches!(
                endpoint(bad, "v0.1/servers"),
                Err(RegistryError::BadAddress(_))
            ));
        }
    }

    #[test]
    fn the_recorded_entries_read_as_their_sources_and_needs() {
        let recorded = include_str!("../../../../tests/fixtures/registry/servers.json");
        let entries: Vec<wire::Entry> = serde_json::from_str(recorded).unwrap();
        let found: Vec<FoundServer> = entries
            .into_iter()
            .map(|entry| Published::from(entry).found())
            .collect();
        let by_name = |name: &str| found.iter().find(|s| s.name == name).unwrap();

        let filesystem = by_name("io.github.modelcontextprotocol/server-filesystem");
        assert_eq!(filesystem.sources[0].kind, SourceKind::Npm);
        assert_eq!(
            filesystem.sources[0].identifier,
            "@modelcontextprotocol/server-filesystem"
        );
        let folder = &filesystem.sources[0].needs[0];
        assert_eq!(
            (folder.kind, folder.name.as_str(), folder.required),
            (NeedKind::Argument, "allowed_directory", true)
        );

        let time = by_name("io.github.modelcontextprotocol/server-time");
        assert_eq!(time.sources[0].kind, SourceKind::Pypi);
        assert_eq!(time.sources[0].needs[0].name, "--local-timezone");
        assert!(!time.sources[0].needs[0].required);

        // The image's fixed arguments need nothing; its token is a secret to give.
        let github = by_name("io.github.github/github-mcp-server");
        assert_eq!(
            github.sources.iter().map(|s| s.kind).collect::<Vec<_>>(),
            [SourceKind::Oci, SourceKind::Remote]
        );
        let token: Vec<_> = github.sources[0]
            .needs
            .iter()
            .map(|n| (n.name.as_str(), n.secret))
            .collect();
        assert_eq!(token, [("token", true)]);

        let remote = by_name("ai.adadvisor/mcp-server");
        assert_eq!(remote.sources.len(), 1);
        let header = &remote.sources[0].needs[0];
        assert_eq!(
            (
                header.kind,
                header.name.as_str(),
                header.required,
                header.secret
            ),
            (NeedKind::Header, "Authorization", true, true)
        );
        assert_eq!(remote.status.as_deref(), Some("active"));
        assert!(remote.repository.is_none());
    }
}
