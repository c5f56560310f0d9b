//! Conversation commands: the list, one conversation's page of messages and what it shows in
//! part, its title, prompt, draft and model, and its branches.

use super::commands;
use crate::app::{ConversationDetail, Draft, ProfileChoice};
use crate::mcp::results::ResultView;
use crate::store::{Conversation, MessagePage, SwitchedBranch};

commands! {
    async fn list_conversations(cx) -> Vec<Conversation> {
        Ok(cx.app.conversations().list().await?)
    }

    async fn create_conversation(cx, title: Option<String>, profile: Option<ProfileChoice>) -> Conversation {
        Ok(cx
            .app
            .create_conversation(title.as_deref(), None, &profile.unwrap_or_default())
            .await?)
    }

    /// What the model is told before this conversation; blank for nothing.
    async fn set_system_prompt(cx, id: String, system_prompt: String) -> Conversation {
        Ok(cx.app.conversations().set_system_prompt(&id, &system_prompt).await?)
    }

    /// Keeps what the composer of this conversation holds (an empty draft: forgets it).
    async fn save_draft(cx, id: String, draft: Draft) -> () {
        Ok(cx.app.save_draft(&id, &draft).await?)
    }

    async fn rename_conversation(cx, id: String, title: String) -> Conversation {
        Ok(cx.app.conversations().rename(&id, &title).await?)
    }

    /// Deletes the conversation if nobody used it (made by New, left with nothing in it): the
    /// window calls it when the person leaves one. True when it went.
    async fn discard_if_unused(cx, id: String) -> bool {
        Ok(cx.app.conversations().discard_if_unused(&id).await?)
    }

    async fn delete_conversation(cx, id: String) -> () {
        Ok(cx.app.delete_conversation(&id).await?)
    }

    async fn get_conversation(cx, id: String) -> ConversationDetail {
        Ok(cx.app.conversations().get(&id).await?)
    }

    /// The page of messages before `before` (a page's `older`), as the person scrolls back.
    async fn get_older_messages(cx, id: String, before: i64, limit: Option<u32>) -> MessagePage {
        Ok(cx.app.conversations().older_messages(&id, before, limit).await?)
    }

    /// The whole text of a message a page showed in part (a long tool result).
    async fn get_message_text(cx, id: String, message_id: String) -> String {
        Ok(cx.app.conversations().message_text(&id, &message_id).await?)
    }

    /// What a tool card shows beyond a result's text (images, audio, links, structured
    /// content).
    async fn get_tool_result_view(cx, id: String, message_id: String, call_id: String) -> ResultView {
        Ok(cx.app.conversations().tool_result_view(&id, &message_id, &call_id).await?)
    }

    /// `null` provider clears the choice: the Settings default applies.
    async fn set_conversation_model(cx, id: String, provider: Option<String>, model: Option<String>) -> Conversation {
        Ok(cx
            .app
            .conversations()
            .set_model(&id, provider.as_deref(), model.as_deref())
            .await?)
    }

    /// Deletes a question and everything that answered it; refused while the conversation
    /// answers. Resolves with the ids of the messages deleted.
    async fn delete_turn(cx, id: String, message_id: String) -> Vec<String> {
        Ok(cx.app.delete_turn(&id, &message_id).await?)
    }

    /// Shows branch `position` (from 0) where `message_id` is the first message shown; refused
    /// while the conversation answers.
    async fn switch_branch(cx, id: String, message_id: String, position: i64) -> SwitchedBranch {
        Ok(cx.app.switch_branch(&id, &message_id, position).await?)
    }

    /// Shows message `message_id` (a search hit), switching to the branch that holds it;
    /// returns its number. Refused while the conversation answers.
    async fn reveal_message(cx, id: String, message_id: String) -> i64 {
        Ok(cx.app.reveal_message(&id, &message_id).await?)
    }
}
