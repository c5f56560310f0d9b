//! Profiles (issue 18): list, create, edit, copy, delete, choose the default, export to and
//! import from a JSON file the person picks, and put one on a conversation.

use super::commands;
use crate::app::ImportedProfile;
use crate::store::{export_file_name, Conversation, ExportFormat, Profile, ProfileFields};

const KIND: (&str, &str) = ("Switchboard profile (JSON)", "json");

commands! {
    async fn list_profiles(cx) -> Vec<Profile> {
        Ok(cx.app.profiles().list().await?)
    }

    async fn create_profile(cx, name: String, fields: ProfileFields) -> Profile {
        Ok(cx.app.profiles().create(&name, fields).await?)
    }

    async fn update_profile(cx, id: String, name: String, fields: ProfileFields) -> Profile {
        Ok(cx.app.profiles().update(&id, &name, fields).await?)
    }

    async fn duplicate_profile(cx, id: String) -> Profile {
        Ok(cx.app.profiles().duplicate(&id).await?)
    }

    async fn delete_profile(cx, id: String) -> () {
        Ok(cx.app.profiles().delete(&id).await?)
    }

    /// Makes a profile the one new conversations start from; `null`: none is.
    async fn set_default_profile(cx, id: Option<String>) -> () {
        Ok(cx.app.profiles().set_default(id.as_deref()).await?)
    }

    /// Asks where to save the profile's JSON and writes it; the path, or `null` when the person
    /// closed the dialog.
    async fn export_profile(cx, id: String) -> Option<String> {
        let profile = cx.app.profiles().get(&id).await?;
        let name = export_file_name(&profile.name, ExportFormat::Json);
        let Some(path) = cx.host.choose_file("Export the profile", Some(&name), KIND).await else {
            return Ok(None);
        };
        cx.app.profiles().write(&profile.id, path.clone()).await?;
        Ok(Some(path.display().to_string()))
    }

    /// Asks for a profile's JSON file and keeps the profile; `null` when the dialog was closed.
    async fn import_profile(cx) -> Option<ImportedProfile> {
        let Some(path) = cx.host.choose_file("Import a profile", None, KIND).await else {
            return Ok(None);
        };
        Ok(Some(cx.app.profiles().import_file(path).await?))
    }

    /// Puts a profile on a conversation (its prompt, model and tools from the next message);
    /// `null`: it follows no profile and keeps what it has.
    async fn set_conversation_profile(cx, conversation_id: String, profile_id: Option<String>) -> Conversation {
        Ok(cx
            .app
            .profiles()
            .set_conversation_profile(&conversation_id, profile_id.as_deref())
            .await?)
    }
}
