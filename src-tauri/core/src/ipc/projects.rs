//! Projects (issue 62): list, create, edit and delete them, move a conversation between them,
//! make a conversation in one, and its knowledge files: listed, added from the native picker
//! (read, split and indexed with progress told to the window) and removed.

use super::{commands, Sink};
use crate::app::{AddedFiles, FilesProgress, ImportedProject, ProjectInput};
use crate::store::{export_file_name, Conversation, ExportFormat, Project, ProjectFile};

const KIND: (&str, &str) = ("Switchboard project (JSON)", "json");

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

    async fn list_project_files(cx, project_id: String) -> Vec<ProjectFile> {
        Ok(cx.app.projects().files(&project_id).await?)
    }

    /// Opens the native picker (several files at once) and adds what the person chose to the
    /// project, telling `on_progress` of each file as it is read and of the end; `null` when
    /// they closed the picker.
    async fn add_project_files(cx, project_id: String, on_progress: Sink<FilesProgress>) -> Option<AddedFiles> {
        // Checked first: no picker for a project that is not there.
        let project = cx.app.projects().get(&project_id).await?;
        let paths = cx.host.choose_files("Add files to the project").await;
        if paths.is_empty() {
            return Ok(None);
        }
        let told = move |p: FilesProgress| {
            on_progress.send(&p);
        };
        Ok(Some(cx.app.projects().add_files(&project.id, paths, &told).await?))
    }

    async fn remove_project_file(cx, project_id: String, name: String) -> () {
        Ok(cx.app.projects().remove_file(&project_id, &name).await?)
    }

    /// Asks where to save the project's export (settings, files, conversations) and writes it;
    /// the path, or `null` when the person closed the dialog.
    async fn export_project(cx, id: String) -> Option<String> {
        let project = cx.app.projects().get(&id).await?;
        let name = export_file_name(&project.name, ExportFormat::Json);
        let Some(path) = cx.host.choose_file("Export the project", Some(&name), KIND).await else {
            return Ok(None);
        };
        cx.app.write_project(&project.id, path.clone()).await?;
        Ok(Some(path.display().to_string()))
    }

    /// Asks for a project's export and keeps it as a new project; `null` when the dialog was
    /// closed.
    async fn import_project(cx) -> Option<ImportedProject> {
        let Some(path) = cx.host.choose_file("Import a project", None, KIND).await else {
            return Ok(None);
        };
        Ok(Some(cx.app.import_project_file(path).await?))
    }
}
