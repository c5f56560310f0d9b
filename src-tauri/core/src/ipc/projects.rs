//! Projects (issue 62): list, create, edit and delete them, move a conversation between them,
//! and make a conversation in one.

use super::commands;
use crate::app::ProjectInput;
use crate::store::{Conversation, Project};

commands! {
    async fn list_projects(cx) -> Vec<Project> {
        Ok(cx.app.projects().list().await?)
    }

    async fn create_project(cx, project: ProjectInput) -> Project {
        Ok(cx.app.projects().create(&project).await?)
    }

    async fn update_project(cx, id: String, project: ProjectInput) -> Project {
        Ok(cx.app.projects().update(&id, &project).await?)
    }

    /// Deletes a project; its conversations stay, in no project. Resolves with how many.
    async fn delete_project(cx, id: String) -> u32 {
        Ok(cx.app.projects().delete(&id).await?)
    }

    /// Moves a conversation into a project, or out of any (`null`).
    async fn move_conversation(cx, conversation_id: String, project_id: Option<String>) -> Conversation {
        Ok(cx
            .app
            .projects()
            .move_conversation(&conversation_id, project_id.as_deref())
            .await?)
    }

    /// A new conversation in a project, from the project's profile (else the default one).
    async fn create_conversation_in(cx, project_id: String, title: Option<String>) -> Conversation {
        Ok(cx.app.create_conversation_in(title.as_deref(), None, &project_id).await?)
    }
}
