//! OAuth 2.1 for remote MCP servers (the MCP authorization spec), on rmcp's `auth` module:
//! signing in (protected-resource and authorization-server discovery, then a pre-registered
//! client, a client ID metadata document, or dynamic client registration; the authorization
//! code flow with PKCE S256 and RFC 8707 `resource`), and the tokens that come of it, kept in
//! the OS keychain — never in mcp.json, a log or the webview.
//!
//! Who visits the authorization page is an [`Authorizer`]: the person's browser with a
//! loopback redirect ([`LoopbackBrowser`]) in the app and the command line, or a test's
//! headless one. Connecting with the tokens is [`super::remote`]'s job; it reports a server that
//! wants a sign-in as [`McpError::SignInRequired`], with the server's challenge.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession, CredentialStore, OAuthClientConfig,
    StoredCredentials,
};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::server::McpError;
use crate::secrets::SecretStore;

/// How long the person has to finish signing in in the browser.
pub const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The name Switchboard registers itself under with an authorization server.
const CLIENT_NAME: &str = "Switchboard";
/// The largest request head the loopback redirect reads.
const MAX_REDIRECT_HEAD: usize = 16 * 1024;

/// A server's own OAuth settings from mcp.json (`"oauth": {…}`), all optional: without them
/// Switchboard registers itself (a client ID metadata document where both sides have one,
/// else dynamic client registration) and asks for the scopes the server names.
#[derive(Clone, Default)]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret (read from the keychain), for a confidential client.
    pub client_secret: Option<SecretString>,
    /// An https URL of a client ID metadata document that describes Switchboard.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for instead of those the server names.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The keychain account a server's tokens are kept under.
pub fn token_account(server: &str) -> String {
    format!("mcp/{server}/oauth")
}

/// What the keychain holds for one server: the tokens rmcp saves, and what Switchboard needs
/// to use them again without asking the network first (the authorization server's metadata),
/// tied to the address they were given for.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TokenRecord {
    url: String,
    #[serde(default)]
    credentials: Option<StoredCredentials>,
    #[serde(default)]
    metadata: Option<AuthorizationMetadata>,
}

/// A server's OAuth tokens in the OS keychain (rmcp's [`CredentialStore`]). Tokens given for
/// another address (the entry's `url` was edited) are not used.
#[derive(Clone)]
pub struct KeychainTokens {
    secrets: Arc<dyn SecretStore>,
    account: String,
    url: String,
}

impl std::fmt::Debug for KeychainTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeychainTokens")
            .field("account", &self.account)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl KeychainTokens {
    pub fn new(secrets: Arc<dyn SecretStore>, server: &str, url: &str) -> KeychainTokens {
        KeychainTokens {
            secrets,
            account: token_account(server),
            url: url.to_owned(),
        }
    }

    async fn read(&self) -> Result<Option<TokenRecord>, AuthError> {
        let (secrets, account) = (Arc::clone(&self.secrets), self.account.clone());
        let text = tokio::task::spawn_blocking(move || secrets.get(&account))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        Ok(text
            .and_then(|t| serde_json::from_str::<TokenRecord>(t.expose_secret()).ok())
            .filter(|record| record.url == self.url))
    }

    async fn write(&self, record: Option<TokenRecord>) -> Result<(), AuthError> {
        let (secrets, account) = (Arc::clone(&self.secrets), self.account.clone());
        tokio::task::spawn_blocking(move || match record {
            Some(record) => {
                let text = serde_json::to_string(&record).map_err(|e| e.to_string())?;
                secrets
                    .set(&account, &SecretString::from(text))
                    .map_err(|e| e.to_string())
            }
            None => secrets.delete(&account).map_err(|e| e.to_string()),
        })
        .await
        .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
        .map_err(AuthError::CredentialStoreError)
    }

    async fn update(&self, change: impl FnOnce(&mut TokenRecord)) -> Result<(), AuthError> {
        let mut record = self.read().await?.unwrap_or_else(|| TokenRecord {
            url: self.url.clone(),
            credentials: None,
            metadata: None,
        });
        change(&mut record);
        self.write(Some(record)).await
    }

    /// Forgets the tokens (sign out).
    ///
    /// # Errors
    /// The keychain cannot be asked.
    pub async fn forget(&self) -> Result<(), AuthError> {
        self.write(None).await
    }
}

#[async_trait::async_trait]
impl CredentialStore for KeychainTokens {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read().await?.and_then(|r| r.credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.update(|record| record.credentials = Some(credentials))
            .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.update(|record| record.credentials = None).await
    }
}

/// Everything needed to use or get a remote server's tokens.
#[derive(Debug, Clone)]
pub struct RemoteAuth {
    pub settings: OAuthSettings,
    pub tokens: KeychainTokens,
}

/// Who visits the authorization page.
#[async_trait::async_trait]
pub trait Authorizer: Send + Sync {
    /// Gets ready to be sent back to: returns the visit, which knows its redirect URI.
    ///
    /// # Errors
    /// Why the redirect cannot be received (no loopback port).
    async fn prepare(&self) -> Result<Box<dyn AuthorizationVisit>, String>;
}

/// One visit to an authorization page.
#[async_trait::async_trait]
pub trait AuthorizationVisit: Send {
    /// Where the authorization server sends the browser back.
    fn redirect_uri(&self) -> String;
    /// Visits `authorization_url` and returns the full URL it was sent back to (with `code`,
    /// `state` and maybe `iss`).
    ///
    /// # Errors
    /// The person did not finish in time, or the page could not be opened.
    async fn visit(self: Box<Self>, authorization_url: &str) -> Result<String, String>;
}

/// Opens a page for the person (their browser, or a test's stand-in).
pub type Opener = Arc<dyn Fn(&str) -> std::io::Result<()> + Send + Sync>;

/// The person's own browser, sent back to a one-time listener on 127.0.0.1 (RFC 8252's
/// loopback redirect for native apps). `announce` is told the address first, so a person
/// whose browser does not open can paste it.
pub struct LoopbackBrowser {
    announce: Arc<dyn Fn(&str) + Send + Sync>,
    open: Opener,
    timeout: Duration,
    ask: Option<AskFirst>,
}

/// Asked with the sign-in page's address before it opens; `true` opens it.
pub type AskFirst = Arc<
    dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send>>
        + Send
        + Sync,
>;

impl LoopbackBrowser {
    pub fn new(announce: impl Fn(&str) + Send + Sync + 'static) -> LoopbackBrowser {
        LoopbackBrowser {
            announce: Arc::new(announce),
            open: Arc::new(open_in_browser),
            timeout: SIGN_IN_TIMEOUT,
            ask: None,
        }
    }

    /// The page opens only once `ask` says yes to its address (a sign-in the webview asked
    /// for: the person sees where the browser goes first).
    #[must_use]
    pub fn asking_first(mut self, ask: AskFirst) -> LoopbackBrowser {
        self.ask = Some(ask);
        self
    }

    /// Pages are opened by `open` instead of the browser.
    #[must_use]
    pub fn with_opener(mut self, open: Opener) -> LoopbackBrowser {
        self.open = open;
        self
    }

    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> LoopbackBrowser {
        self.timeout = timeout;
        self
    }
}

#[async_trait::async_trait]
impl Authorizer for LoopbackBrowser {
    async fn prepare(&self) -> Result<Box<dyn AuthorizationVisit>, String> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the sign-in's answer: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        Ok(Box::new(LoopbackVisit {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            announce: Arc::clone(&self.announce),
            open: Arc::clone(&self.open),
            timeout: self.timeout,
            ask: self.ask.clone(),
        }))
    }
}

struct LoopbackVisit {
    listener: tokio::net::TcpListener,
    redirect_uri: String,
    announce: Arc<dyn Fn(&str) + Send + Sync>,
    open: Opener,
    timeout: Duration,
    ask: Option<AskFirst>,
}

#[async_trait::async_trait]
impl AuthorizationVisit for LoopbackVisit {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    async fn visit(self: Box<Self>, authorization_url: &str) -> Result<String, String> {
        openable(authorization_url)?;
        if let Some(ask) = &self.ask {
            if !ask(authorization_url.to_owned()).await {
                return Err("the sign-in was cancelled: its page was not opened".into());
            }
        }
        (self.announce)(authorization_url);
        if let Err(e) = (self.open)(authorization_url) {
            tracing::warn!(error = %e, "cannot open the browser for an MCP sign-in");
        }
        tokio::time::timeout(self.timeout, wait_for_redirect(&self.listener))
            .await
            .map_err(|_| {
                format!(
                    "the sign-in was not finished within {} s",
                    self.timeout.as_secs()
                )
            })?
    }
}

/// Whether a sign-in page named by a server (its metadata's authorization endpoint) may be
/// opened: see [`super::pages::secure_or_loopback`].
///
/// # Errors
/// Why the address is refused, for a person.
pub fn openable(url: &str) -> Result<(), String> {
    super::pages::secure_or_loopback(url).map_err(|why| {
        format!(
            "the server's sign-in page “{}” {why}; Switchboard does not open it",
            crate::text::one_line(url, 120)
        )
    })
}

/// Opens `url` in the person's browser: `$BROWSER` when set (as xdg-open and most command
/// line programs honour it), else the system's opener.
///
/// # Errors
/// Neither could be started.
pub fn open_in_browser(url: &str) -> std::io::Result<()> {
    match std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        Some(browser) => std::process::Command::new(browser)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .spawn()
            .map(|_| ()),
        None => open::that_detached(url),
    }
}

/// Answers requests on the loopback listener until one comes to `/callback` with a `code` or
/// an `error`; returns its full URL.
async fn wait_for_redirect(listener: &tokio::net::TcpListener) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let Some(target) = read_request_target(&mut stream).await else {
            continue;
        };
        let url = match url::Url::parse(&format!("http://127.0.0.1:{port}"))
            .and_then(|base| base.join(&target))
        {
            Ok(url) if url.path() == "/callback" => url,
            _ => {
                respond(&mut stream, "404 Not Found", "Not here.").await;
                continue;
            }
        };
        let query = |key: &str| {
            url.query_pairs()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.into_owned())
        };
        if let Some(error) = query("error") {
            let why = query("error_description").unwrap_or_default();
            respond(
                &mut stream,
                "200 OK",
                "Sign-in refused. You can close this tab.",
            )
            .await;
            return Err(format!("the authorization server said {error} {why}")
                .trim_end()
                .to_owned());
        }
        if query("code").is_some() {
            respond(
                &mut stream,
                "200 OK",
                "Signed in. You can close this tab and go back to Switchboard.",
            )
            .await;
            return Ok(url.to_string());
        }
        respond(
            &mut stream,
            "400 Bad Request",
            "No authorization code here.",
        )
        .await;
    }
}

/// The target of a `GET` request, read with httparse from at most [`MAX_REDIRECT_HEAD`] bytes.
async fn read_request_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    let read = async {
        loop {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            head.extend_from_slice(&chunk[..n]);
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut request = httparse::Request::new(&mut headers);
            match request.parse(&head) {
                Ok(httparse::Status::Complete(_)) => {
                    return (request.method == Some("GET"))
                        .then(|| request.path.map(str::to_owned))
                        .flatten();
                }
                Ok(httparse::Status::Partial) if head.len() < MAX_REDIRECT_HEAD => {}
                _ => return None,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()
        .flatten()
}

async fn respond(stream: &mut tokio::net::TcpStream, status: &str, text: &str) {
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>Switchboard</title>\
         <p style=\"font:16px system-ui;margin:3em\">{text}</p>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn failed(server: &str, detail: impl std::fmt::Display) -> McpError {
    McpError::SignInFailed {
        server: server.to_owned(),
        detail: detail.to_string(),
    }
}

/// Signs in to the remote server `server` at `url`: discovers its authorization server (from
/// `challenge`, the `WWW-Authenticate` header of its 401 or 403, when there is one), registers
/// or uses the configured client, has `authorizer` visit the authorization page, exchanges the
/// code and keeps the tokens in the keychain. Scopes: the configured ones, else those granted
/// before, with those the challenge names added; else those the server's metadata lists, else
/// none.
///
/// # Errors
/// [`McpError::SignInFailed`] saying which step failed.
pub async fn sign_in(
    server: &str,
    url: &str,
    auth: &RemoteAuth,
    challenge: Option<&str>,
    authorizer: &dyn Authorizer,
) -> Result<(), McpError> {
    crate::net::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(server, e))?;
    manager.set_credential_store(auth.tokens.clone());
    let visit = authorizer.prepare().await.map_err(|e| failed(server, e))?;
    let mut request = AuthorizationRequest::new(visit.redirect_uri())
        .with_client_name(CLIENT_NAME)
        .with_initial_scope_selection();
    if let Some(challenge) = challenge {
        request = request.with_challenge(challenge);
    }
    let wanted = challenge.and_then(challenged_scopes);
    // The configured scopes, else (asked for more: a step-up) what was granted before, so
    // the new token does not lose what the old one had (SEP-2350); with what the server asks
    // for now added to either.
    let mut scopes = if !auth.settings.scopes.is_empty() {
        auth.settings.scopes.clone()
    } else if wanted.is_some() {
        auth.tokens
            .read()
            .await
            .ok()
            .flatten()
            .and_then(|record| record.credentials)
            .map(|credentials| credentials.granted_scopes)
            .unwrap_or_default()
            .into_iter()
            // A token response's empty `scope` is read as one empty scope: none.
            .filter(|scope| !scope.trim().is_empty())
            .collect()
    } else {
        Vec::new()
    };
    for scope in wanted.into_iter().flatten() {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    if !scopes.is_empty() {
        request = request.with_scopes(scopes);
    }
    if let Some(id) = &auth.settings.client_id {
        request = request.with_preregistered_client(id);
        if let Some(secret) = &auth.settings.client_secret {
            request = request.with_client_secret(secret.expose_secret());
        }
    }
    if let Some(document) = &auth.settings.client_metadata_url {
        request = request.with_client_metadata_url(document);
    }
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| failed(server, describe(&e)))?;
    let metadata = resolution.metadata.clone();
    manager.set_metadata(resolution.metadata);
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| failed(server, describe(&e)))?;
    let back = visit
        .visit(session.get_authorization_url())
        .await
        .map_err(|e| failed(server, e))?;
    let answer = AuthorizationCallback::from_redirect_url(&back)
        .map_err(|e| failed(server, describe(&e)))?;
    session
        .handle_callback_with_issuer(&answer.code, &answer.csrf_token, answer.issuer.as_deref())
        .await
        .map_err(|e| failed(server, describe(&e)))?;
    auth.tokens
        .update(|record| record.metadata = Some(metadata))
        .await
        .map_err(|e| failed(server, describe(&e)))?;
    tracing::info!(server, "signed in to a remote MCP server");
    Ok(())
}

/// The scopes a `WWW-Authenticate` challenge names (`scope="a b"`), if it names any.
fn challenged_scopes(challenge: &str) -> Option<Vec<String>> {
    let (_, value) = challenge_params(challenge)
        .into_iter()
        .find(|(name, _)| name == "scope")?;
    let scopes: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
    (!scopes.is_empty()).then_some(scopes)
}

/// The parameters of a `WWW-Authenticate` challenge (`Bearer a="x", b=y`, RFC 9110 §11.6.1):
/// names lower-cased, quoted values unquoted and unescaped. What is inside a quoted value is
/// never read as a parameter (`error_description="use scope=x"` names no scope).
fn challenge_params(challenge: &str) -> Vec<(String, String)> {
    let is_end = |c: char| c == '=' || c == ',' || c.is_whitespace();
    let mut rest = challenge.trim_start();
    // The scheme: a first token not followed by `=`.
    let first = rest.find(is_end).unwrap_or(rest.len());
    if !rest[first..].trim_start().starts_with('=') {
        rest = &rest[first..];
    }
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        if rest.is_empty() {
            return params;
        }
        let end = rest.find(is_end).unwrap_or(rest.len());
        let name = rest[..end].to_ascii_lowercase();
        rest = rest[end..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            continue; // a bare token (a second scheme, say): no value to take
        };
        rest = after.trim_start();
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next().map(|(_, c)| c)),
                    '"' => {
                        end = at + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            rest = &quoted[end..];
            value
        } else {
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let value = rest[..end].to_owned();
            rest = &rest[end..];
            value
        };
        params.push((name, value));
    }
}

/// A manager with the kept tokens, for [`rmcp::transport::auth::AuthClient`]; `None` when
/// none are kept (the server is reached without, and says so if it wants them).
///
/// # Errors
/// The keychain cannot be asked, or the authorization server cannot be found again.
pub async fn signed_in_manager(
    server: &str,
    url: &str,
    auth: &RemoteAuth,
) -> Result<Option<AuthorizationManager>, McpError> {
    let record = auth
        .tokens
        .read()
        .await
        .map_err(|e| failed(server, describe(&e)))?;
    let Some(record) = record.filter(|r| {
        r.credentials
            .as_ref()
            .is_some_and(|c| c.token_response.is_some())
    }) else {
        return Ok(None);
    };
    crate::net::install_crypto_provider();
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| failed(server, e))?;
    manager.set_credential_store(auth.tokens.clone());
    if let Some(metadata) = record.metadata {
        manager.set_metadata(metadata);
    }
    let ready = manager
        .initialize_from_store()
        .await
        .map_err(|e| failed(server, describe(&e)))?;
    if !ready {
        return Ok(None);
    }
    // Loading forgets a confidential client's secret; a configured one is set again so a
    // refresh can authenticate.
    if let (Some(id), Some(secret)) = (&auth.settings.client_id, &auth.settings.client_secret) {
        let config = OAuthClientConfig::new(id, url).with_client_secret(secret.expose_secret());
        manager
            .configure_client(config)
            .map_err(|e| failed(server, describe(&e)))?;
    }
    Ok(Some(manager))
}

/// An rmcp auth error for a person.
fn describe(e: &AuthError) -> String {
    match e {
        AuthError::HttpError(http) => crate::net::describe_error(http),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secrets::MemoryStore;

    fn tokens(url: &str) -> (Arc<MemoryStore>, KeychainTokens) {
        let store = Arc::new(MemoryStore::new());
        let tokens = KeychainTokens::new(store.clone(), "docs", url);
        (store, tokens)
    }

    #[test]
    fn a_challenge_names_its_scopes_quoted_or_not() {
        let scopes = |c: &str| challenged_scopes(c);
        assert_eq!(
            scopes(
                r#"Bearer resource_metadata="x", scope="mcp:read mcp:write", error="insufficient_scope""#
            ),
            Some(vec!["mcp:read".to_owned(), "mcp:write".to_owned()])
        );
        assert_eq!(
            scopes(r#"Bearer scope=read:data, error="x""#),
            Some(vec!["read:data".to_owned()])
        );
        // `error_scope=` or `myscope=` is not `scope=`; no scope is no scopes.
        assert_eq!(scopes(r#"Bearer myscope="a""#), None);
        // Nor is a `scope=` inside another parameter's quoted value; quotes may be escaped.
        assert_eq!(
            scopes(r#"Bearer error_description="ask for scope=admin", error="insufficient_scope""#),
            None
        );
        assert_eq!(
            scopes(r#"Bearer error_description="a \"quoted\" scope=x", scope="files:write""#),
            Some(vec!["files:write".to_owned()])
        );
        assert_eq!(
            scopes(r#"Bearer realm="x",scope = "a b""#),
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        assert_eq!(scopes(r#"Bearer scope="""#), None);
        assert_eq!(scopes("Bearer"), None);
    }

    #[tokio::test]
    async fn tokens_live_in_the_keychain_and_belong_to_one_address() {
        let (store, kept) = tokens("https://example.com/mcp");
        assert!(kept.load().await.unwrap().is_none());
        kept.save(StoredCredentials::new(
            "client-1".into(),
            None,
            vec![],
            Some(1),
        ))
        .await
        .unwrap();
        let loaded = kept.load().await.unwrap().expect("saved");
        assert_eq!(loaded.client_id, "client-1");
        assert!(store.get(&token_account("docs")).unwrap().is_some());
        let moved = KeychainTokens::new(store.clone(), "docs", "https://other.example/mcp");
        assert!(
            moved.load().await.unwrap().is_none(),
            "tokens given for one address are not sent to another"
        );
        kept.forget().await.unwrap();
        assert!(store.get(&token_account("docs")).unwrap().is_none());
    }

    /// A stand-in for a browser at an authorization server that grants at once: it follows
    /// the page's `redirect_uri` with a code and the page's `state`, or with `error`.
    fn granting_browser(answer: &'static str) -> LoopbackBrowser {
        LoopbackBrowser::new(|_| {}).with_opener(Arc::new(move |page: &str| {
            let page = url::Url::parse(page).unwrap();
            let get = |k: &str| {
                page.query_pairs()
                    .find(|(q, _)| q == k)
                    .unwrap()
                    .1
                    .into_owned()
            };
            let (redirect, state) = (get("redirect_uri"), get("state"));
            tokio::spawn(async move {
                let http = crate::net::client_builder().build().unwrap();
                let stray = http
                    .get(redirect.replace("/callback", "/favicon.ico"))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(stray.status(), 404);
                let page = http
                    .get(format!("{redirect}?{answer}&state={state}"))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(page.status(), 200);
            });
            Ok(())
        }))
    }

    async fn visit(browser: &LoopbackBrowser) -> Result<String, String> {
        let visit = browser.prepare().await.unwrap();
        let redirect = visit.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let page = url::Url::parse_with_params(
            "https://as.example/authorize",
            [("redirect_uri", redirect.as_str()), ("state", "xyz")],
        )
        .unwrap();
        visit.visit(page.as_str()).await
    }

    #[tokio::test]
    async fn the_loopback_redirect_returns_the_callback_and_answers_the_browser() {
        let back = visit(&granting_browser("code=abc&iss=https%3A%2F%2Fas.example"))
            .await
            .unwrap();
        assert!(
            back.contains("code=abc") && back.contains("state=xyz"),
            "{back}"
        );
    }

    #[tokio::test]
    async fn a_refused_sign_in_says_what_the_authorization_server_said() {
        let err = visit(&granting_browser(
            "error=access_denied&error_description=no+thanks",
        ))
        .await
        .unwrap_err();
        assert_eq!(err, "the authorization server said access_denied no thanks");
    }

    #[tokio::test]
    async fn a_sign_in_nobody_finishes_ends_at_its_time_limit() {
        let browser = LoopbackBrowser::new(|_| {})
            .with_opener(Arc::new(|_: &str| Ok(())))
            .with_timeout(Duration::from_millis(200));
        let err = visit(&browser).await.unwrap_err();
        assert!(err.contains("not finished"), "{err}");
    }
}
