//! A database with one damaged page is not written to: the check at open finds the damage
//! before anything is written (a new conversation would have been), says so, and leaves the
//! file byte for byte as it was. A process that only reads does not read every page first (a
//! search of a large home answers at once): it opens the file, writes nothing, and the read
//! that meets the damage reports it. One about to migrate the file checks it in full all the same.

use std::path::Path;
use std::time::Duration;

use switchboard_core::store::{OpenCheck, Store, StoreError};

/// A database of 300 conversations with one page in the middle damaged (as a failing disk
/// would), not its header; returns the damaged bytes.
async fn damaged_database(path: &Path) -> Vec<u8> {
    {
        let store = Store::open(path, Duration::from_secs(1)).unwrap();
        for i in 0..300 {
            store
                .create_conversation(format!("Conversation {i} {}", "words ".repeat(40)))
                .await
                .unwrap();
        }
    }
    // Damage one page in the middle of the file (as a failing disk would), not its header.
    let mut bytes = std::fs::read(path).unwrap();
    let page = 4096;
    assert!(bytes.len() > page * 6, "{} bytes", bytes.len());
    let start = page * 3;
    for (i, byte) in bytes[start..start + 512].iter_mut().enumerate() {
        *byte = u8::try_from(i % 251).unwrap() ^ 0x5a;
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
}

#[tokio::test]
async fn damaged_page_is_found_at_open_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    let bytes = damaged_database(&path).await;

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

#[tokio::test]
async fn a_process_that_only_reads_skips_the_page_check_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    let bytes = damaged_database(&path).await;

    let store = Store::open_checking(&path, Duration::from_secs(1), OpenCheck::Header)
        .expect("opened without reading every page");
    // Reading every conversation meets the damaged page and says so.
    let err = store
        .list_conversations()
        .await
        .expect_err("the damage was read");
    assert!(
        err.to_string().contains("malformed") || matches!(err, StoreError::Corrupt { .. }),
        "{err}"
    );
    drop(store);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file was written to"
    );
}

#[tokio::test]
async fn a_database_about_to_be_migrated_is_checked_in_full_even_by_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.db");
    damaged_database(&path).await;
    // As if an older version had written it: the open would migrate it.
    let mut bytes = std::fs::read(&path).unwrap();
    let version = u32::from_be_bytes(bytes[60..64].try_into().unwrap());
    bytes[60..64].copy_from_slice(&(version - 1).to_be_bytes());
    std::fs::write(&path, &bytes).unwrap();

    let Err(err) = Store::open_checking(&path, Duration::from_secs(1), OpenCheck::Header) else {
        panic!("a damaged database was opened to be migrated");
    };
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file was written to"
    );
}
