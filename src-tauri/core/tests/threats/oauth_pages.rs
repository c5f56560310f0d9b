//! A server cannot start a browser at an address of its choosing: the sign-in page its
//! metadata names is opened only when it is `https:` (or `http:` on this computer's loopback);
//! `file:`, `search-ms:`, `ms-…:` and other schemes, or plain http across a network, are refused
//! and nothing is opened. A sign-in the webview asks for opens only once the person said yes to
//! a question (outside the webview) that names the page's host.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use switchboard_core::mcp::oauth::{Authorizer, LoopbackBrowser};
use switchboard_core::policy::confirm::ask_before_sign_in;

use super::scripted::Asked;

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

#[tokio::test]
async fn webview_sign_in_opens_nothing_until_the_person_sees_its_host() {
    let page = "https://auth.xn--exmple-cua.example/authorize?client_id=x";
    for answer in [false, true] {
        let asked = Asked::new(answer);
        let (browser, opened) = recording();
        let browser = browser.asking_first(ask_before_sign_in(asked.clone(), "notes"));
        let ended = browser.prepare().await.unwrap().visit(page).await;
        let seen = asked.seen();
        assert_eq!(seen.len(), 1, "asked once: {seen:?}");
        assert!(
            seen[0].title().contains("auth.xn--exmple-cua.example"),
            "the question names the host: {}",
            seen[0].title()
        );
        assert!(seen[0].message().contains(page), "{}", seen[0].message());
        if answer {
            assert_eq!(*opened.lock().unwrap(), [page]);
            assert!(ended.unwrap_err().contains("not finished"));
        } else {
            assert!(opened.lock().unwrap().is_empty(), "nothing opened");
            assert!(ended.unwrap_err().contains("cancelled"));
        }
    }
    // A page that may never open is refused before anyone is asked.
    let asked = Asked::new(true);
    let (browser, opened) = recording();
    let browser = browser.asking_first(ask_before_sign_in(asked.clone(), "notes"));
    let refused = browser.prepare().await.unwrap();
    assert!(refused.visit("file:///etc/passwd").await.is_err());
    assert!(asked.seen().is_empty() && opened.lock().unwrap().is_empty());
}
