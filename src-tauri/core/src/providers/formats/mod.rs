//! Pure wire mappings, one file per API family: build the request body, turn each streamed
//! chunk into [`super::ProviderEvent`]s. No I/O here, so every quirk is tested offline.

pub mod openai;
