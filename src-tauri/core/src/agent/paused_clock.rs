//! The loop's own clocks, tested on tokio's paused clock: a run's time limit is a timer of the
//! loop (not of a server or an HTTP client), so with a model and tools in the process the
//! test's clock is paused and moves only when every task waits on a timer (the store's work
//! on blocking threads holds it still: tokio does not move a paused clock while it runs). Ten minutes of a run pass in a few milliseconds of the machine's, and
//! how long the run took is exact, whatever the machine's load.
//!
//! The kit: [`Model`] (a provider that answers each request with the next scripted turn),
//! [`Tools`] (one server, `clock`, whose `wait` answers after the seconds asked, by the paused
//! clock, and whose `hang` never answers), and [`Bench`] (a store in memory, a conversation,
//! every call allowed, the events kept).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::tools::{CallFuture, ToolSource};
use super::{run, FixedApprover, RunLimits, RunServices, RunSetup, TurnStart};
use crate::events::{EventSink, RunEvent, StopReason};
use crate::mcp::catalogue::{Catalogue, ListedTool};
use crate::mcp::server::CallLimits;
use crate::policy::Standing;
use crate::providers::{
    ChatRequest, EventStream, FinishReason, ModelsFuture, Provider, ProviderError, ProviderEvent,
    ToolCall,
};
use crate::store::Store;

/// What the model does in one answer.
#[derive(Clone)]
enum Turn {
    /// Says this and stops.
    Says(&'static str),
    /// Calls a tool of the `clock` server with these arguments.
    Calls(&'static str, Value),
    /// Takes this long (by the paused clock) before it says anything, then says `late`.
    Thinks(Duration),
}

/// A provider in the process: each request gets the next turn (the last one again after).
struct Model {
    turns: Vec<Turn>,
    asked: AtomicUsize,
}

impl Provider for Model {
    fn stream(&self, _request: ChatRequest, cancel: CancellationToken) -> EventStream {
        let n = self.asked.fetch_add(1, Ordering::SeqCst);
        let turn = self.turns[n.min(self.turns.len() - 1)].clone();
        let events: Vec<Result<ProviderEvent, ProviderError>> = match &turn {
            Turn::Says(text) => vec![
                Ok(ProviderEvent::TextDelta((*text).to_owned())),
                Ok(ProviderEvent::Finish(FinishReason::Stop)),
            ],
            Turn::Thinks(_) => vec![
                Ok(ProviderEvent::TextDelta("late".to_owned())),
                Ok(ProviderEvent::Finish(FinishReason::Stop)),
            ],
            Turn::Calls(tool, arguments) => vec![
                Ok(ProviderEvent::ToolCall(ToolCall::new(
                    format!("call_{n}"),
                    format!("clock__{tool}"),
                    arguments.to_string(),
                ))),
                Ok(ProviderEvent::Finish(FinishReason::ToolCalls)),
            ],
        };
        let think = match turn {
            Turn::Thinks(d) => d,
            _ => Duration::ZERO,
        };
        Box::pin(
            futures_util::stream::once(async move {
                tokio::select! {
                    () = tokio::time::sleep(think) => Ok(()),
                    () = cancel.cancelled() => Err(ProviderError::Cancelled),
                }
            })
            .flat_map(move |started| match started {
                Ok(()) => futures_util::stream::iter(events.clone()),
                Err(e) => futures_util::stream::iter(vec![Err(e)]),
            }),
        )
    }

    fn list_models(&self) -> ModelsFuture<'_> {
        Box::pin(async { Ok(Vec::new()) })
    }
}

/// The `clock` server: `wait` answers after `seconds` (by the paused clock), `hang` never.
struct Tools(Arc<Vec<ListedTool>>);

impl Tools {
    fn new() -> Self {
        let tool = |name: &str| ListedTool {
            name: name.to_owned(),
            title: None,
            description: format!("{name} a while"),
            input_schema: json!({"type": "object"}),
            annotations: None,
            app: None,
            app_only: false,
        };
        Self(Arc::new(vec![tool("wait"), tool("hang")]))
    }
}

impl ToolSource for Tools {
    fn tools(&self) -> Vec<(String, Arc<Vec<ListedTool>>)> {
        vec![("clock".to_owned(), Arc::clone(&self.0))]
    }

    fn call<'a>(
        &'a self,
        server: &'a str,
        tool: &'a str,
        arguments: Map<String, Value>,
        _limits: CallLimits,
        cancel: &'a CancellationToken,
        _progress: Option<&'a crate::mcp::client::ProgressSink>,
    ) -> CallFuture<'a> {
        Box::pin(async move {
            let answers = async {
                match tool {
                    "wait" => {
                        let seconds = arguments["seconds"].as_u64().unwrap_or(0);
                        tokio::time::sleep(Duration::from_secs(seconds)).await;
                    }
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                () = answers => Ok(json!({"content": [{"type": "text", "text": "waited"}]})),
                () = cancel.cancelled() => Err(crate::mcp::server::McpError::Cancelled {
                    server: server.to_owned(),
                }),
            }
        })
    }
}

#[derive(Default)]
struct Events(Mutex<Vec<RunEvent>>);

impl EventSink for Events {
    fn send(&self, event: RunEvent) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}

/// A run's world: a store in memory with one conversation, the `clock` tools, every call
/// allowed.
struct Bench {
    store: Store,
    tools: Tools,
    events: Events,
    conversation: String,
}

impl Bench {
    async fn new() -> Self {
        let store = Store::open_in_memory().unwrap();
        let conversation = store.create_conversation("t".into()).await.unwrap().id;
        Self {
            store,
            tools: Tools::new(),
            events: Events::default(),
            conversation,
        }
    }

    /// Runs one turn of `turns` with `limits`; why it ended, and how long it took by the
    /// paused clock.
    async fn run(&self, turns: Vec<Turn>, limits: RunLimits) -> (StopReason, Duration) {
        let listed = self.tools.tools();
        let catalogue = Catalogue::build(listed.iter().map(|(s, t)| (s.as_str(), t.as_slice())));
        let setup = RunSetup {
            run_id: "run".into(),
            conversation_id: self.conversation.clone(),
            start: TurnStart::Message {
                text: "go".into(),
                attachments: Vec::new(),
            },
            provider: Arc::new(Model {
                turns,
                asked: AtomicUsize::new(0),
            }),
            provider_name: "local".into(),
            model: "m".into(),
            system: None,
            media: crate::providers::media::Media {
                images: None,
                pdfs: false,
            },
            files: crate::attachments::AttachmentFiles::new(std::env::temp_dir()),
            tools: catalogue.tools().to_vec(),
            rules: HashMap::new(),
            policy: Default::default(),
            blocked: Default::default(),
            standing: Standing {
                kept_in: self.conversation.clone(),
                ..Standing::default()
            },
            history_from: None,
            auto_approve: true,
            limits,
            price: None,
            held_back: Vec::new(),
            load_window: None,
            keep_alive: None,
            tool_mode: crate::providers::ToolMode::Native,
            require_tool: false,
            constraint: crate::providers::prompted::Constraint::None,
            window: None,
            favoured: Vec::new(),
            provider_searches_tools: false,
            skills: crate::skills::RunSkills::default(),
            project_id: None,
            memory: None,
            settings: None,
            project_roots: Vec::new(),
            given: crate::knowledge::KnowledgeUse::default(),
        };
        let services = RunServices {
            store: &self.store,
            tools: &self.tools,
            approver: &FixedApprover(super::Decision::AllowOnce),
            sink: &self.events,
            controls: &super::controls::CallControls::default(),
        };
        let began = Instant::now();
        let reason = run(setup, services, CancellationToken::new()).await;
        (reason, began.elapsed())
    }

    fn finished_with(&self) -> Option<String> {
        let events = self.events.0.lock().unwrap_or_else(PoisonError::into_inner);
        events.iter().find_map(|e| match e {
            RunEvent::RunFinished { message, .. } => message.clone(),
            _ => None,
        })
    }
}

fn limits(run_time_limit: Duration) -> RunLimits {
    RunLimits {
        run_time_limit,
        ..RunLimits::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_run_stops_at_its_time_limit_to_the_second() {
    let bench = Bench::new().await;
    let (reason, took) = bench
        .run(
            vec![Turn::Calls("hang", json!({}))],
            limits(Duration::from_secs(600)),
        )
        .await;
    assert_eq!(reason, StopReason::TimeLimit);
    assert!(
        took >= Duration::from_secs(600) && took < Duration::from_secs(601),
        "{took:?}"
    );
    let said = bench.finished_with().unwrap();
    assert!(said.contains("limit of 10 minutes"), "{said}");
}

#[tokio::test(start_paused = true)]
async fn a_run_inside_its_limit_is_not_stopped_by_it() {
    let bench = Bench::new().await;
    // `Tools` ignores a call's own limits (the supervisor's would cut a 299 s call at the
    // default 60 s): this is about the run's limit alone.
    let turns = vec![
        Turn::Calls("wait", json!({"seconds": 299})),
        Turn::Calls("wait", json!({"seconds": 299})),
        Turn::Says("done"),
    ];
    let (reason, took) = bench.run(turns, limits(Duration::from_secs(600))).await;
    assert_eq!(reason, StopReason::Completed);
    assert!(
        took >= Duration::from_secs(598) && took < Duration::from_secs(600),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_model_that_thinks_past_the_limit_is_stopped_too() {
    let bench = Bench::new().await;
    let (reason, took) = bench
        .run(
            vec![Turn::Thinks(Duration::from_secs(3_600))],
            limits(Duration::from_secs(60)),
        )
        .await;
    assert_eq!(reason, StopReason::TimeLimit);
    assert!(took < Duration::from_secs(61), "{took:?}");
}
