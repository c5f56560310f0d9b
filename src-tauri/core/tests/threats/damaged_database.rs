//! A database with one damaged page is not written to: the check at open finds the damage
//! before anything is written (a new conversation would have been), says so, and leaves the
//! file byte for byte as it was.

use std::time::Duration;

use switchboard_core::store::{Store, StoreError};

#[tokio::test]
async fn damaged_page_is_found_at_open_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    {
        let store = Store::open(&path, Duration::from_secs(1)).unwrap();
        for i in 0..300 {
            store
                .create_conversation(format!("Conversation {i} {}", "words ".repeat(40)))
                .await
                .unwrap();
        }
    }
    // Damage one page in the middle of the file (as a failing disk would), not its header.
    let mut bytes = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(bytes.len() > page * 6, "{} bytes", bytes.len());
    let start = page * 3;
    for (i, byte) in bytes[start..start + 512].iter_mut().enumerate() {
        *byte = u8::try_from(i % 251).unwrap() ^ 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();

    let Err(err) = Store::open(&path, Duration::from_secs(1)) else {
        panic!("a damaged database was opened");
    };
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains("left untouched"), "{err}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file was written to"
    );
    let wal = dir.path().join("switchboard.db-wal");
    assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);
}
