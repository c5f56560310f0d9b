//! Asking the model: one answer streamed into a new assistant message, written to the database
//! at least every `checkpoint_every` while it grows and in full at the end; text reaches the
//! window only once it is written.

use std::time::Instant;

use futures_util::StreamExt;

use super::{Answer, End, Run};
use crate::agent::{history, status};
use crate::events::{RunEvent, StopReason};
use crate::providers::{
    ChatRequest, FinishReason, ProviderError, ProviderEvent, ToolCall, ToolChoice,
};
use crate::store::{
    Finish, MessageStatus, MessageUpdate, NewMessage, Role, StoreError, UsagePurpose,
};

impl Run<'_> {
    /// Streams one answer. `ToolChoice::None` is the last answer at the round cap: tools stay
    /// listed (Anthropic refuses a history with tool blocks when `tools` is absent) but are
    /// forbidden, and a call made anyway is dropped.
    ///
    /// # Errors
    /// How the run ends when the answer did not complete: stopped, or the provider failed (the
    /// partial answer stays saved, marked).
    pub async fn ask_model(
        &mut self,
        choice: ToolChoice,
        status_text: &str,
    ) -> Result<Answer, End> {
        let (messages, mut summary) = match self.history_for_model().await {
            Ok(read) => read,
            Err(e) => return Err(self.ctx.failed(&e.to_string())),
        };
        self.ctx.status(status_text);
        let mut start = NewMessage::text(Role::Assistant, "");
        start.status = MessageStatus::Streaming;
        start.provider = Some(self.ctx.setup.provider_name.clone());
        start.model = Some(self.ctx.setup.model.clone());
        start.given = Some(self.ctx.setup.given.clone()).filter(|g| !g.is_empty());
        let request = ChatRequest {
            model: self.ctx.setup.model.clone(),
            system: match &summary {
                Some(summary) => Some(crate::agent::summary::with_summary(
                    self.ctx.setup.system.as_deref(),
                    &summary.text,
                )),
                None => self.ctx.setup.system.clone(),
            },
            messages,
            tool_choice: choice,
            load_window: self.ctx.setup.load_window,
            keep_alive: self.ctx.setup.keep_alive.clone(),
            ..ChatRequest::default()
        };
        // Results kept from before the window was known (earlier turns, or earlier in this run
        // before a refusal taught it) are fitted to it before the request is sent.
        let mut request =
            crate::agent::fit::results_to_share(&request, self.ctx.result_cap()).unwrap_or(request);
        // The reader of kept results is offered once a result the model has was cut.
        request.tools = self.ctx.specs(has_cut_result(&request));
        request.deferred_tools = self.ctx.deferred_specs();
        // A history over the window: its oldest turns summarised (or left out).
        let window = self.ctx.window();
        let mut used = self.counter.measure(&request, window);
        if let Some(window) = window {
            let over = |tokens: u64| {
                usize::try_from(tokens).unwrap_or(usize::MAX) > crate::agent::fit::budget(window)
            };
            let estimate = crate::agent::fit::request_tokens(&request) as u64;
            if over(used.tokens) || over(estimate) {
                #[allow(clippy::cast_precision_loss)]
                let scale = used.tokens as f64 / estimate.max(1) as f64;
                let (fitted, made) = self
                    .fit_history(request, summary.as_ref(), window, scale)
                    .await;
                request = fitted;
                // A refusal fitted again starts from what is in force now.
                summary = made.or(summary);
                let needed = used.tokens.max(estimate);
                used = self.counter.measure(&request, Some(window));
                used.needed = Some(needed).filter(|n| *n > used.tokens);
            }
        }
        let measured = used.tokens;
        used.given = Some(self.ctx.setup.given.clone()).filter(|g| !g.is_empty());
        self.ctx.emit(RunEvent::ContextUsed { used: used.clone() });
        let kept = self
            .ctx
            .services
            .store
            .set_context_use(self.ctx.setup.conversation_id.clone(), used)
            .await;
        if let Err(e) = kept {
            tracing::warn!(error = %e, "what the model was given could not be kept");
        }
        // Kept to fit and ask again, once, when the provider refuses it for a window smaller
        // than the one planned for.
        let mut unfitted = Some(request.clone());
        // Asked again, fitted after a refusal: what was measured is not what was sent.
        let mut refitted = false;
        let mut stream = self.ctx.provider().stream(request, self.ctx.cancel.clone());
        // The request goes out while the answer's row is written; an event that comes before
        // the row is there waits for it.
        let mut early = None;
        let started = {
            let saving = self.save(start);
            tokio::pin!(saving);
            loop {
                tokio::select! {
                    saved = &mut saving => break saved,
                    next = stream.next(), if early.is_none() => early = Some(next),
                }
            }
        };
        let started = match started {
            Ok(started) => started,
            Err(e) => return Err(self.ctx.failed(&e.to_string())),
        };
        let id = started.id.clone();
        self.ctx.emit(RunEvent::AnswerStarted { message: started });
        let mut got = Streamed::default();
        // Text is shown only once it is written: deltas wait in `got.unshown` until the next
        // checkpoint (the first one at once, then at most every `checkpoint_every`), so an app
        // killed mid-answer loses nothing the person saw.
        let every = self.ctx.setup.limits.checkpoint_every;
        let mut written_at: Option<Instant> = None;
        let mut unsaved = None;
        let ended = loop {
            // `None`: the time to write the text waiting has come (the checkpoint is below).
            let next = match (early.take(), written_at) {
                (Some(next), _) => Some(next),
                (None, Some(at)) if got.has_unshown() => tokio::select! {
                    biased;
                    next = stream.next() => Some(next),
                    () = tokio::time::sleep_until((at + every).into()) => None,
                },
                _ => Some(stream.next().await),
            };
            match next {
                None => {}
                Some(None) => break Ok(()),
                Some(Some(Err(e))) => match self
                    .fitted_again(&e, &got, &mut unfitted, summary.as_ref())
                    .await
                {
                    Some(fitted) => {
                        stream = fitted;
                        refitted = true;
                    }
                    None => break Err(e),
                },
                Some(Some(Ok(event))) => self.take(event, &mut got),
            }
            if got.has_unshown() && written_at.is_none_or(|at| at.elapsed() >= every) {
                if let Err(e) = self.checkpoint(&id, &mut got).await {
                    unsaved = Some(e);
                    break Ok(());
                }
                written_at = Some(Instant::now());
            }
        };
        if let Some(e) = unsaved {
            // Nothing more is asked of the model, and nothing unsaved is shown: the answer
            // stops at the text last written.
            drop(stream);
            let said = cannot_write(&e);
            let marked = MessageUpdate {
                status: Some(MessageStatus::Error),
                error: Some(said.clone()),
                ..MessageUpdate::default()
            };
            let _ = self.ctx.services.store.update_message(id, marked).await;
            return Err(self.ctx.failed(&said));
        }
        if choice == ToolChoice::None && !got.calls.is_empty() {
            tracing::warn!(
                n = got.calls.len(),
                "the model asked for tools after they were forbidden; dropped"
            );
            got.calls.clear();
        }
        if let Err(ProviderError::ContextTooLong {
            window: Some(window),
            ..
        }) = &ended
        {
            // The provider said how large the model's window is: from now on it is known.
            self.ctx.learn_window(*window).await;
        }
        // What the provider counted calibrates the counts of the next requests.
        if let (Some(reported), false) = (got.input_tokens, refitted) {
            self.counter
                .calibrate(measured, u64::try_from(reported).unwrap_or(0));
        }
        let (update, end) = self.finish(ended, &got);
        let saved = self
            .ctx
            .services
            .store
            .update_message(id.clone(), update)
            .await;
        self.ctx
            .record_usage(UsagePurpose::Answer, Some(&id), got.tokens())
            .await;
        self.ctx.record_offered(&id).await;
        match saved {
            Ok(saved) => {
                self.show(&id, &mut got);
                self.remember(&saved);
                self.ctx.emit(RunEvent::MessageSaved { message: saved });
            }
            Err(e) => return Err(self.ctx.failed(&cannot_write(&e))),
        }
        match end {
            Some(end) => Err(end),
            None => Ok(Answer {
                message_id: id,
                calls: got.calls,
                retry_of: None,
            }),
        }
    }

    /// After the provider refused the request, before anything of the answer came, for what
    /// can be fitted: over a window it names (the window is kept for the model, and the tool
    /// results cut to their share of it), or for carrying too many tools (the model is offered
    /// a choice of them and a search). The fitted request's stream, when fitting changes what
    /// is sent, once per request (`unfitted` is taken); `None`: the refusal stands.
    async fn fitted_again(
        &self,
        refusal: &ProviderError,
        got: &Streamed,
        unfitted: &mut Option<ChatRequest>,
        summary: Option<&crate::store::Summary>,
    ) -> Option<crate::providers::EventStream> {
        if !got.text.is_empty() || !got.calls.is_empty() {
            return None;
        }
        let fitted = match refusal {
            ProviderError::ContextTooLong {
                window: Some(window),
                ..
            } => {
                let share = crate::mcp::results::share_of_window(*window);
                let base = unfitted.as_ref()?;
                let cut = crate::agent::fit::results_to_share(base, share);
                self.ctx
                    .learned_share
                    .store(share, std::sync::atomic::Ordering::Relaxed);
                self.ctx.learn_window(*window).await;
                let mut fitted = cut.unwrap_or_else(|| base.clone());
                fitted.tools = self.ctx.specs(has_cut_result(&fitted));
                if crate::agent::fit::request_tokens(&fitted) > crate::agent::fit::budget(*window) {
                    fitted = self.fit_history(fitted, summary, *window, 1.0).await.0;
                }
                if fitted == *base {
                    return None;
                }
                self.ctx.status(&format!(
                    "The model takes {window} tokens: fitting the request to it, and asking again…"
                ));
                tracing::info!(
                    window,
                    "fitting a refused request to the window the provider named"
                );
                fitted
            }
            ProviderError::TooManyTools { max, .. } => {
                let request = unfitted.as_ref()?;
                let most = max.unwrap_or_else(|| {
                    crate::agent::offer::MOST_TOOLS.min(request.tools.len() / 2)
                });
                let ctx = &self.ctx;
                let narrowed =
                    ctx.offer()
                        .narrow(&ctx.setup.tools, ctx.own, &ctx.setup.favoured, most);
                if !narrowed {
                    return None;
                }
                let mut fitted = request.clone();
                fitted.tools = ctx.specs(has_cut_result(&fitted));
                fitted.deferred_tools = ctx.deferred_specs();
                ctx.status(&format!(
                    "The provider takes at most {most} tools in one request: offering {} and a \
                     search for the rest, and asking again…",
                    fitted.tools.len().saturating_sub(1)
                ));
                ctx.say_offered(&[]);
                tracing::info!(
                    most,
                    "offering a choice of tools after a refusal for too many"
                );
                fitted
            }
            ProviderError::Server {
                status: 400,
                message,
            } if self.ctx.offer().provider_searches() && refuses_tool_search(message) => {
                let request = unfitted.as_ref()?;
                let ctx = &self.ctx;
                ctx.offer().without_provider_search(ctx.own);
                let mut fitted = request.clone();
                fitted.tools = ctx.specs(has_cut_result(&fitted));
                fitted.deferred_tools = Vec::new();
                ctx.status(
                    "The provider refused its own tool search for this model: offering \
                     Switchboard's search instead, and asking again…",
                );
                ctx.say_offered(&[]);
                tracing::info!(%message, "the provider refused its own tool search");
                // Remembered: later runs of this model offer Switchboard's from the start.
                let remembered = ctx
                    .services
                    .store
                    .set_tool_search_refused(
                        ctx.setup.provider_name.clone(),
                        ctx.setup.model.clone(),
                    )
                    .await;
                if let Err(e) = remembered {
                    tracing::warn!(error = %e, "a refused tool search could not be remembered");
                }
                fitted
            }
            ProviderError::Server { status, message }
                if (400..500).contains(status)
                    && self.ctx.setup.tool_mode == crate::providers::ToolMode::Native
                    && self.ctx.prompted.get().is_none()
                    && unfitted.as_ref().is_some_and(|r| !r.tools.is_empty())
                    && refuses_native_tools(message) =>
            {
                let request = unfitted.as_ref()?.clone();
                let ctx = &self.ctx;
                let inner = std::sync::Arc::clone(&ctx.setup.provider);
                let prompted: std::sync::Arc<dyn crate::providers::Provider> = std::sync::Arc::new(
                    crate::providers::prompted::Prompted::held_to(inner, ctx.setup.constraint),
                );
                let _ = ctx.prompted.set(prompted);
                ctx.status(
                    "The model does not call tools through its API: describing them in its \
                     prompt, and asking again…",
                );
                tracing::info!(%message, "the server refused tools in its API: prompting them");
                // Remembered: later runs of this model give it tools by prompt from the start
                // (the person's word still wins).
                let remembered = ctx
                    .services
                    .store
                    .set_native_tools_refused(
                        ctx.setup.provider_name.clone(),
                        ctx.setup.model.clone(),
                    )
                    .await;
                if let Err(e) = remembered {
                    tracing::warn!(error = %e, "a refusal of native tools could not be remembered");
                }
                request
            }
            _ => return None,
        };
        *unfitted = None;
        Some(self.ctx.provider().stream(fitted, self.ctx.cancel.clone()))
    }

    /// The answer's last state, and how the run ends when it did not complete.
    fn finish(
        &self,
        ended: Result<(), ProviderError>,
        got: &Streamed,
    ) -> (MessageUpdate, Option<End>) {
        let mut update = MessageUpdate {
            content: Some(got.text.clone()),
            reasoning: got.reasoning(),
            input_tokens: got.input_tokens,
            output_tokens: got.output_tokens,
            cost_pico: self.ctx.cost_of(got.tokens()),
            server_blocks: (!got.server_blocks.is_empty())
                .then(|| serde_json::Value::Array(got.server_blocks.clone())),
            ..MessageUpdate::default()
        };
        let end = match ended {
            Ok(()) => {
                update.status = Some(MessageStatus::Complete);
                update.finish_reason = got.finish.map(kept_finish);
                if !got.calls.is_empty() {
                    update.tool_calls = Some(history::stored(&got.calls));
                }
                None
            }
            Err(ProviderError::Cancelled) => {
                update.status = Some(MessageStatus::Interrupted);
                update.finish_reason = Some(Finish::Stopped);
                Some((StopReason::Cancelled, None))
            }
            Err(e) => {
                let retryable =
                    e.is_retryable() || matches!(e, ProviderError::StreamInterrupted { .. });
                update.status = Some(MessageStatus::Error);
                update.error = Some(e.to_string());
                self.ctx.emit(RunEvent::Error {
                    message: e.to_string(),
                    retryable,
                });
                Some((StopReason::Error, Some(e.to_string())))
            }
        };
        (update, end)
    }

    /// Writes the answer so far, then shows what the person has not seen of it yet; what could
    /// not be written is not shown.
    ///
    /// # Errors
    /// The write failed.
    async fn checkpoint(&self, id: &str, got: &mut Streamed) -> Result<(), StoreError> {
        let checkpoint = MessageUpdate {
            content: Some(got.text.clone()),
            reasoning: got.reasoning(),
            ..MessageUpdate::default()
        };
        if let Err(e) = self
            .ctx
            .services
            .store
            .update_message(id.to_owned(), checkpoint)
            .await
        {
            tracing::warn!(error = %e, "cannot checkpoint the streaming answer");
            return Err(e);
        }
        self.show(id, got);
        Ok(())
    }

    /// Sends the deltas not shown yet, reasoning first.
    fn show(&self, id: &str, got: &mut Streamed) {
        let reasoning = std::mem::take(&mut got.unshown_reasoning);
        if !reasoning.is_empty() {
            self.ctx.emit(RunEvent::ReasoningDelta {
                message_id: id.to_owned(),
                text: reasoning,
            });
        }
        let text = std::mem::take(&mut got.unshown_text);
        if !text.is_empty() {
            self.ctx.emit(RunEvent::TextDelta {
                message_id: id.to_owned(),
                text,
            });
        }
    }

    /// Takes one provider event into `got` (text waits there to be written, then shown).
    fn take(&self, event: ProviderEvent, got: &mut Streamed) {
        match event {
            ProviderEvent::TextDelta(text) => {
                got.loading = false;
                if got.text.is_empty() {
                    self.ctx.status(status::WRITING);
                }
                got.text.push_str(&text);
                got.unshown_text.push_str(&text);
            }
            ProviderEvent::ReasoningDelta(text) => {
                if std::mem::take(&mut got.loading) {
                    self.ctx.status(status::THINKING);
                }
                got.reasoning.push_str(&text);
                got.unshown_reasoning.push_str(&text);
            }
            ProviderEvent::ToolCall(mut call) => {
                if std::mem::take(&mut got.loading) {
                    self.ctx.status(status::WRITING);
                }
                call.id = distinct_id(&got.calls, &call.id);
                got.calls.push(call);
            }
            ProviderEvent::Usage {
                input_tokens,
                output_tokens,
                cached_input_tokens,
            } => {
                got.input_tokens = input_tokens.map(saturating_i64).or(got.input_tokens);
                got.output_tokens = output_tokens.map(saturating_i64).or(got.output_tokens);
                got.cached_input_tokens = cached_input_tokens
                    .map(saturating_i64)
                    .or(got.cached_input_tokens);
            }
            ProviderEvent::Finish(reason) => got.finish = Some(reason),
            ProviderEvent::ToolWarning(w) => self.ctx.emit(RunEvent::ToolWarning {
                tool: w.tool,
                message: w.message,
            }),
            ProviderEvent::ServerBlock(block) => {
                if block["type"] == "server_tool_use" {
                    self.ctx.status("The model is searching the tools…");
                }
                got.server_blocks.push(block);
            }
            ProviderEvent::Loading => {
                got.loading = true;
                self.ctx.status(status::LOADING);
            }
        }
    }
}

/// Whether a refusal is of the provider's own tool search (a model that does not take it, a
/// request it will not search, or a deferred tool's definition it will not take — every tool
/// goes with each request then, where Switchboard's search sends only those offered): asked
/// again with Switchboard's search.
fn refuses_tool_search(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "defer_loading",
        "tool_search",
        "tool search",
        "tool_reference",
        "tools.",
        "input_schema",
    ]
    .iter()
    .any(|word| message.contains(word))
}

/// Whether a refusal says the model or server takes no tools in its API: Ollama's "does not
/// support tools", llama.cpp's "tools param requires --jinja flag", vLLM's "\"auto\" tool
/// choice requires --enable-auto-tool-choice", and the like. Not a refusal of too many tools
/// (that is [`ProviderError::TooManyTools`]) nor of one tool's schema.
fn refuses_native_tools(message: &str) -> bool {
    let message = message.to_lowercase();
    let about_tools = message.contains("tool") || message.contains("function call");
    about_tools
        && [
            "does not support tools",
            "doesn't support tools",
            "does not support tool use",
            "doesn't support tool use",
            "tools are not supported",
            "tool calling is not supported",
            "tool use is not supported",
            "function calling is not supported",
            "tools param requires",
            "enable-auto-tool-choice",
            "unsupported parameter: 'tools'",
            "unrecognized request argument supplied: tools",
        ]
        .iter()
        .any(|words| message.contains(words))
}

/// `id`, or when an earlier call of the same answer has it (some providers repeat `call_0`),
/// `id` with the first free `_2`, `_3`, … after it (`call_1`, `call_2`, … when there is none): each call then has its own
/// approval, decision and result, and the answer replayed to the provider stays consistent.
fn distinct_id(earlier: &[ToolCall], id: &str) -> String {
    let taken = |candidate: &str| earlier.iter().any(|c| c.id == candidate);
    let base = if id.is_empty() { "call" } else { id };
    if !id.is_empty() && !taken(id) {
        return id.to_owned();
    }
    let first = if id.is_empty() { 1 } else { 2 };
    (first..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken(candidate))
        .unwrap_or_default()
}

/// What a stream has produced so far.
#[derive(Default)]
struct Streamed {
    text: String,
    reasoning: String,
    /// Received but not written and shown yet.
    unshown_text: String,
    unshown_reasoning: String,
    calls: Vec<ToolCall>,
    /// Blocks the provider ran itself (its own tool search), kept with the answer.
    server_blocks: Vec<serde_json::Value>,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    cached_input_tokens: Option<i64>,
    finish: Option<FinishReason>,
    /// The status line says the model is loading: the first thing it sends says otherwise.
    loading: bool,
}

impl Streamed {
    fn tokens(&self) -> super::usage::Tokens {
        super::usage::Tokens {
            input: self.input_tokens,
            output: self.output_tokens,
            cached_input: self.cached_input_tokens,
        }
    }

    fn has_unshown(&self) -> bool {
        !self.unshown_text.is_empty() || !self.unshown_reasoning.is_empty()
    }

    fn reasoning(&self) -> Option<String> {
        Some(self.reasoning.clone()).filter(|r| !r.is_empty())
    }
}

/// Why the answer ended, as the store keeps it.
fn kept_finish(reason: FinishReason) -> Finish {
    match reason {
        FinishReason::Stop => Finish::Stop,
        FinishReason::ToolCalls => Finish::ToolCalls,
        FinishReason::Length => Finish::Length,
        FinishReason::ContentFilter => Finish::ContentFilter,
        FinishReason::Other => Finish::Other,
    }
}

fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Whether a tool result `request` carries reached the model cut.
fn has_cut_result(request: &ChatRequest) -> bool {
    request.messages.iter().any(|m| {
        matches!(m, crate::providers::ChatMessage::Tool { content, .. }
            if crate::mcp::results::was_cut(content))
    })
}

/// What the conversation says when the answer cannot be written.
fn cannot_write(e: &StoreError) -> String {
    format!(
        "Switchboard cannot write to its database: {}. The answer stops at the last text it \
         saved; nothing after that point was shown.",
        e.why_not_written()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_of_tools_in_the_api_is_told_from_other_refusals() {
        for refusal in [
            "registry.ollama.ai/library/gemma3:1b does not support tools",
            "tools param requires --jinja flag",
            "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            "This model does not support tool use",
            "Function calling is not supported by this model (tools)",
        ] {
            assert!(refuses_native_tools(refusal), "{refusal}");
        }
        for other in [
            "Invalid schema for function 'read': 'object' is not valid under any of the given schemas",
            "tools: too many tools, at most 128",
            "model not found",
            "this model does not support images",
        ] {
            assert!(!refuses_native_tools(other), "{other}");
        }
    }

    #[test]
    fn repeated_or_missing_call_ids_are_made_distinct() {
        let mut calls: Vec<ToolCall> = Vec::new();
        for id in ["call_0", "call_0", "call_0", "", "", "call_0_2x"] {
            let id = distinct_id(&calls, id);
            calls.push(ToolCall::new(id, "t".into(), "{}".into()));
        }
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "call_0",
                "call_0_2",
                "call_0_3",
                "call_1",
                "call_2",
                "call_0_2x"
            ]
        );
    }
}
