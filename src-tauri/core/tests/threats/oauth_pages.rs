//! A server cannot start a browser at an address of its choosing: the sign-in page its
//! metadata names is opened only when it is `https:` (or `http:` on this computer's loopback);
//! `file:`, `search-ms:`, `ms-…:` and other schemes, or plain http across a network, are refused
//! and nothing is opened.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_core::mcp::oauth::{Authorizer, LoopbackBrowser};

fn recording() -> (LoopbackBrowser, Arc<Mutex<Vec<String>>>) {
    let opened = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&opened);
    let browser = LoopbackBrowser::new(|_| {})
        .with_opener(Arc::new(move |page: &str| {
            record.lock().unwrap().push(page.to_owned());
            Ok(())
        }))
        .with_timeout(Duration::from_millis(50));
    (browser, opened)
}

#[tokio::test]
async fn oauth_file_url_is_never_opened() {
    let (browser, opened) = recording();
    for page in [
        "file:///etc/passwd",
        "file://server/share/setup.exe",
        "search-ms:query=invoice&crumb=location:\\\\evil.example\\share",
        "ms-settings:privacy",
        "ms-msdt:/id PCWDiagnostic",
        "javascript:alert(1)",
        "vscode://ext/install?x",
        "http://evil.example/authorize",
        "http://10.0.0.5/authorize",
        "not a url",
    ] {
        let visit = browser.prepare().await.unwrap();
        let refused = visit.visit(page).await.unwrap_err();
        assert!(refused.contains("does not open it"), "{page}: {refused}");
    }
    assert!(
        opened.lock().unwrap().is_empty(),
        "opened: {:?}",
        opened.lock().unwrap()
    );
}

#[tokio::test]
async fn an_https_or_loopback_sign_in_page_is_opened() {
    let (browser, opened) = recording();
    for page in [
        "https://auth.example/authorize?client_id=x",
        "http://127.0.0.1:8080/authorize",
        "http://localhost:9000/authorize",
    ] {
        let visit = browser.prepare().await.unwrap();
        // Nobody answers the redirect here, so the visit ends at its time limit.
        let ended = visit.visit(page).await.unwrap_err();
        assert!(ended.contains("not finished"), "{page}: {ended}");
    }
    assert_eq!(opened.lock().unwrap().len(), 3);
}
