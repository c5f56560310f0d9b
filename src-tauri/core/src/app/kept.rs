//! A few things the window names by token (a bundle the person chose, a server a link
//! proposed): kept under a fresh token, the oldest forgotten once there are too many, so a
//! flood of them holds little.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

pub(super) struct Kept<T> {
    /// By token, with the order they came in.
    items: Mutex<HashMap<String, (u64, T)>>,
    limit: usize,
}

impl<T> Kept<T> {
    pub(super) fn new(limit: usize) -> Self {
        Self {
            items: Mutex::default(),
            limit,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, (u64, T)>> {
        self.items.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `item` and returns its token.
    pub(super) fn keep(&self, item: T) -> String {
        let token = uuid::Uuid::new_v4().to_string();
        let mut items = self.lock();
        let next = items.values().map(|(n, _)| n + 1).max().unwrap_or(0);
        if items.len() >= self.limit {
            let oldest = items
                .iter()
                .min_by_key(|(_, (n, _))| *n)
                .map(|(t, _)| t.clone());
            if let Some(oldest) = oldest {
                items.remove(&oldest);
            }
        }
        items.insert(token.clone(), (next, item));
        token
    }

    /// The item kept under `token`, left kept.
    pub(super) fn get(&self, token: &str) -> Option<T>
    where
        T: Clone,
    {
        self.lock().get(token).map(|(_, item)| item.clone())
    }

    /// The item kept under `token`, taken away, when `wanted` says so.
    pub(super) fn take_if(&self, token: &str, wanted: impl Fn(&T) -> bool) -> Option<T> {
        let mut items = self.lock();
        if !items.get(token).is_some_and(|(_, item)| wanted(item)) {
            return None;
        }
        items.remove(token).map(|(_, item)| item)
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;

    #[test]
    fn the_oldest_is_forgotten_past_the_limit() {
        let kept = Kept::new(2);
        let a = kept.keep("a");
        let b = kept.keep("b");
        let c = kept.keep("c");
        assert_eq!(kept.get(&a), None);
        assert_eq!(kept.get(&b), Some("b"));
        assert_eq!(kept.take_if(&c, |s| *s == "x"), None);
        assert_eq!(kept.take_if(&c, |s| *s == "c"), Some("c"));
        assert_eq!(kept.get(&c), None);
    }
}
