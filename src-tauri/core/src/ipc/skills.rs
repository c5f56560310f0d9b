//! Skills (issue 61): the Skills page's list, a skill in full, adding one from a folder or a
//! `.zip` the person picks in a native dialog, writing one to a `.zip`, removing one, and a
//! skill's switch for every conversation or for one, and whether its scripts may be run; a
//! conversation's skills for its panel.

use super::commands;
use crate::app::{ConversationSkill, SkillDetail};
use crate::skills::Skill;

const ZIP: (&str, &str) = ("Skill (.zip)", "zip");

commands! {
    async fn list_skills(cx) -> Vec<Skill> {
        Ok(cx.app.skills().await?)
    }

    async fn skill_detail(cx, name: String) -> SkillDetail {
        Ok(cx.app.skill_detail(&name).await?)
    }

    /// Asks for a skill's folder (`from_zip` false) or `.zip` and keeps the skill; `null` when
    /// the dialog was closed.
    async fn add_skill(cx, from_zip: bool) -> Option<Skill> {
        let chosen = if from_zip {
            cx.host.choose_file("Add a skill from a .zip", None, ZIP).await
        } else {
            cx.host.choose_folder("Add a skill: its folder (with a SKILL.md)").await
        };
        let Some(path) = chosen else {
            return Ok(None);
        };
        Ok(Some(cx.app.add_skill(path).await?))
    }

    async fn remove_skill(cx, name: String) -> () {
        Ok(cx.app.remove_skill(&name).await?)
    }

    /// Asks where to write the skill's `.zip` and writes it; the path, or `null` when closed.
    async fn export_skill(cx, name: String) -> Option<String> {
        let suggested = format!("{name}.zip");
        let Some(path) = cx.host.choose_file("Export the skill", Some(&suggested), ZIP).await else {
            return Ok(None);
        };
        cx.app.export_skill(&name, path.clone()).await?;
        Ok(Some(path.display().to_string()))
    }

    /// Switches a skill on or off for one conversation, or (`conversationId` null) for every
    /// conversation; switching a server's skill on sends the `approval` it was shown with.
    async fn set_skill_enabled(cx, name: String, enabled: bool, conversation_id: Option<String>, approval: Option<String>) -> () {
        Ok(cx
            .app
            .set_skill_enabled(&name, enabled, conversation_id.as_deref(), approval.as_deref())
            .await?)
    }

    /// Lets the model ask to run a skill's scripts (each run asks, in a sandbox), or no
    /// longer; allowing sends the `filesDigest` of the skill as it was shown, and holds for
    /// those files.
    async fn set_skill_scripts(cx, name: String, allowed: bool, as_shown: Option<String>) -> () {
        Ok(cx.app.set_skill_scripts(&name, allowed, as_shown.as_deref()).await?)
    }

    async fn conversation_skills(cx, conversation_id: String) -> Vec<ConversationSkill> {
        Ok(cx.app.conversation_skills(&conversation_id).await?)
    }
}
