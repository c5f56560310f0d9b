//! The window's one way out: a link opens in the browser only when it is `https:`, `http:` or
//! `mailto:`, and only after the person saw the whole address (a look-alike host in its `xn--`
//! form) outside the webview and said yes. Anything else opens nothing and asks nothing.

use std::sync::Mutex;

use switchboard_core::links;
use switchboard_core::policy::confirm::Allowance;

use super::scripted::Asked;

#[tokio::test]
async fn link_to_a_local_file_or_program_is_never_opened() {
    let opened = Mutex::new(Vec::<String>::new());
    let person = Asked::new(true);
    for link in [
        "file:///etc/passwd",
        "file://server/share/setup.exe",
        "javascript:alert(document.cookie)",
        "search-ms:query=invoice",
        "ms-msdt:/id PCWDiagnostic",
        "smb://evil.example/share",
        "tauri://localhost/",
    ] {
        let refused = links::open(link, person.as_ref(), &|url| {
            opened.lock().unwrap().push(url.to_owned());
            Ok(())
        })
        .await;
        assert!(refused.is_err(), "{link}");
    }
    assert!(person.seen().is_empty(), "nobody was asked");
    assert!(opened.lock().unwrap().is_empty());
}

#[tokio::test]
async fn look_alike_link_opens_only_after_its_real_host_is_shown() {
    let link = "https://p\u{430}ypal.com/signin";
    for yes in [false, true] {
        let opened = Mutex::new(Vec::<String>::new());
        let person = Asked::new(yes);
        let done = links::open(link, person.as_ref(), &|url| {
            opened.lock().unwrap().push(url.to_owned());
            Ok(())
        })
        .await
        .unwrap();
        assert_eq!(done, yes);
        let seen = person.seen();
        let [Allowance::OpenLink { url }] = seen.as_slice() else {
            panic!("{seen:?}");
        };
        assert_eq!(url, "https://xn--pypal-4ve.com/signin");
        assert!(seen[0].title().contains("xn--pypal-4ve.com"));
        let expected: &[&str] = if yes { &[url.as_str()] } else { &[] };
        assert_eq!(*opened.lock().unwrap(), expected);
    }
}
