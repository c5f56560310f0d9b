//! Memory (issue 62): the facts kept across conversations, listed (every memory's, each with
//! the conversation it came from), added, edited and deleted; and a project's memory switched
//! (the person's own is a setting).

use super::commands;
use crate::store::{Memory, Project};

commands! {
    /// Every memory's facts, newest first.
    async fn list_memories(cx) -> Vec<Memory> {
        Ok(cx.app.memory().list(None, true).await?)
    }

    /// Keeps a fact the person wrote, in a project's memory or (`null`) their own.
    async fn add_memory(cx, project_id: Option<String>, text: String) -> Memory {
        Ok(cx.app.memory().add(project_id.as_deref(), &text).await?)
    }

    async fn update_memory(cx, id: String, text: String) -> Memory {
        Ok(cx.app.memory().edit(&id, &text).await?)
    }

    async fn delete_memory(cx, id: String) -> () {
        Ok(cx.app.memory().delete(&id).await?)
    }

    /// Switches a project's memory on or off.
    async fn set_project_memory(cx, project_id: String, on: bool) -> Project {
        Ok(cx.app.set_project_memory(&project_id, on).await?)
    }
}
