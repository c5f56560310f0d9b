//! Elicitation (form mode): a server asks the person for input while it works, with a message
//! and a flat form (text, numbers, yes/no, choices). This module owns the form as Switchboard
//! shows it ([`ElicitationRequest`], made from rmcp's schema types), the checking of an answer
//! against it (in Rust: the window only asks), and the [`ElicitationBroker`] that hands requests
//! to whoever shows them (the window) and their answers back to the server.
//!
//! Nothing is accepted on the person's behalf: with nobody to show the form to, the request is
//! declined, and a form nobody answers is cancelled after [`ANSWER_TIMEOUT`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    ElicitRequestParams, ElicitationSchema, EnumSchema, MultiSelectEnumSchema,
    PrimitiveSchemaDefinition, SingleSelectEnumSchema, StringFormat,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// How long a form waits for the person before it is cancelled.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest text a field takes, whatever the server allows.
const MAX_TEXT_CHARS: usize = 10_000;
/// At most this many forms of one server are open at once; more are declined at once.
pub const MAX_OPEN_PER_SERVER: usize = 3;
/// A form with more fields than this is declined (nobody fills in a hundred fields).
pub const MAX_FIELDS: usize = 50;
/// The longest a field's name may be (it is the answer's key, so it cannot be cut).
const MAX_NAME_CHARS: usize = 200;
/// What of a server's texts is shown: the message, each label and description, the choices.
const MAX_MESSAGE_CHARS: usize = 4_000;
const MAX_LABEL_CHARS: usize = 500;
const MAX_OPTIONS: usize = 500;
/// The longest address a URL-mode request may name.
const MAX_URL_CHARS: usize = 8_192;

/// A server's question, as the window shows it. Every text in it is the server's: shown as
/// text only.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ElicitationRequest {
    pub id: String,
    pub server: String,
    pub message: String,
    pub fields: Vec<ElicitField>,
    /// URL mode: the server asks the person to visit this page (an out-of-band sign-in or
    /// payment) instead of filling in fields. Opened in the browser only when they click, by
    /// Rust ([`ElicitationBroker::visit`]); the window never opens it itself.
    pub url: Option<UrlVisit>,
}

/// The page of a URL-mode request: the whole address, and its host as the URL parser spells
/// it (a look-alike internationalised name in its `xn--` form), which the window shows large.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct UrlVisit {
    pub url: String,
    pub host: String,
    /// The server's name for this request (2025-11-25), which its
    /// `notifications/elicitation/complete` names when the visit is done.
    #[serde(skip)]
    #[ts(skip)]
    pub elicitation_id: String,
}

impl UrlVisit {
    /// The page, if it may be opened: `https:`, or `http:` on this computer's loopback.
    ///
    /// # Errors
    /// Why it is refused, for a person.
    pub fn of(raw: &str, elicitation_id: &str) -> Result<Self, String> {
        if raw.chars().count() > MAX_URL_CHARS {
            return Err("the address is too long".into());
        }
        super::pages::secure_or_loopback(raw)
            .map_err(|why| format!("the page “{}” {why}", crate::text::one_line(raw, 120)))?;
        let parsed = url::Url::parse(raw).map_err(|e| e.to_string())?;
        Ok(UrlVisit {
            url: parsed.to_string(),
            host: parsed.host_str().unwrap_or_default().to_owned(),
            elicitation_id: elicitation_id.to_owned(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ElicitField {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    #[serde(flatten)]
    pub kind: FieldKind,
    /// What the form starts with.
    pub default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FieldKind {
    Text {
        /// `email`, `uri`, `date` or `date-time`.
        format: Option<&'static str>,
        min_length: Option<u32>,
        max_length: Option<u32>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    Choice {
        options: Vec<ChoiceOption>,
    },
    MultiChoice {
        options: Vec<ChoiceOption>,
        #[ts(type = "number | null")]
        min_items: Option<u64>,
        #[ts(type = "number | null")]
        max_items: Option<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ChoiceOption {
    pub value: String,
    pub label: String,
}

/// What the person did with a form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitationAnswer {
    /// Sent the form with these values.
    Accept { content: Map<String, Value> },
    /// Said no.
    Decline,
    /// Dismissed it without choosing.
    Cancel,
}

impl ElicitationRequest {
    /// What a server's `elicitation/create` asks for: a form, or a page to visit; `None` for
    /// a page that may not be opened (not `https:`, nor `http:` on loopback) or a mode
    /// Switchboard does not know.
    pub fn from_rmcp(id: String, server: &str, params: &ElicitRequestParams) -> Option<Self> {
        match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => Some(ElicitationRequest {
                id,
                server: server.to_owned(),
                message: message.clone(),
                fields: fields_of(requested_schema),
                url: None,
            }),
            ElicitRequestParams::UrlElicitationParams {
                message,
                url,
                elicitation_id,
                ..
            } => {
                match UrlVisit::of(url, elicitation_id) {
                    Ok(visit) => Some(ElicitationRequest {
                        id,
                        server: server.to_owned(),
                        message: message.clone(),
                        fields: Vec::new(),
                        url: Some(visit),
                    }),
                    Err(why) => {
                        tracing::warn!(server, "an MCP server asked the person to visit a page that is not opened: {why}");
                        None
                    }
                }
            }
            _ => None,
        }
    }

    /// Why this form is not shown at all, if it is too big to be a real question.
    pub fn refusal(&self) -> Option<String> {
        if self.fields.len() > MAX_FIELDS {
            return Some(format!(
                "it has {} fields (at most {MAX_FIELDS} are shown)",
                self.fields.len()
            ));
        }
        self.fields
            .iter()
            .any(|f| f.name.chars().count() > MAX_NAME_CHARS)
            .then(|| format!("a field's name is longer than {MAX_NAME_CHARS} characters"))
    }

    /// The form with the server's texts cut to what a person can read: the message, each
    /// label and description, the number of choices and each choice's label.
    #[must_use]
    pub fn bounded(mut self) -> Self {
        self.message = cut(&self.message, MAX_MESSAGE_CHARS);
        for field in &mut self.fields {
            for text in [&mut field.title, &mut field.description]
                .into_iter()
                .flatten()
            {
                *text = cut(text, MAX_LABEL_CHARS);
            }
            if let Some(Value::String(default)) = &mut field.default {
                *default = cut(default, MAX_TEXT_CHARS);
            }
            if let FieldKind::Choice { options } | FieldKind::MultiChoice { options, .. } =
                &mut field.kind
            {
                options.truncate(MAX_OPTIONS);
                for option in options {
                    option.label = cut(&option.label, MAX_LABEL_CHARS);
                }
            }
        }
        self
    }

    /// Each field's default, where it has one.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| Some((f.name.clone(), f.default.clone()?)))
            .collect()
    }

    /// Checks an answer against the form: every required field given, each value of its
    /// field's type and within its limits, no field the form does not have. Returns the
    /// values as they go to the server (whole numbers as integers).
    ///
    /// # Errors
    /// What is wrong, naming the field as the form shows it.
    pub fn check(&self, content: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        if let Some(extra) = content
            .keys()
            .find(|k| !self.fields.iter().any(|f| &f.name == *k))
        {
            return Err(format!("the form has no field “{extra}”"));
        }
        let mut checked = Map::new();
        for field in &self.fields {
            let label = field.title.as_deref().unwrap_or(&field.name);
            match content.get(&field.name) {
                None | Some(Value::Null) => {
                    if field.required {
                        return Err(format!("“{label}” is required"));
                    }
                }
                Some(Value::String(s)) if s.is_empty() && !field.required => {}
                Some(value) => {
                    let value = check_value(&field.kind, value)
                        .map_err(|problem| format!("“{label}” {problem}"))?;
                    checked.insert(field.name.clone(), value);
                }
            }
        }
        Ok(checked)
    }
}

fn fields_of(schema: &ElicitationSchema) -> Vec<ElicitField> {
    let required = schema.required.clone().unwrap_or_default();
    let mut names: Vec<&String> = match &schema.property_order {
        Some(order) => order
            .iter()
            .filter(|n| schema.properties.contains_key(*n))
            .collect(),
        None => Vec::new(),
    };
    for name in schema.properties.keys() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let (title, description, kind, default) = describe(&schema.properties[name]);
            ElicitField {
                name: name.clone(),
                title,
                description,
                required: required.contains(name),
                kind,
                default,
            }
        })
        .collect()
}

type Described = (Option<String>, Option<String>, FieldKind, Option<Value>);

fn text(t: Option<&std::borrow::Cow<'static, str>>) -> Option<String> {
    t.map(|t| t.to_string())
}

fn options(values: &[String]) -> Vec<ChoiceOption> {
    values
        .iter()
        .map(|v| ChoiceOption {
            value: v.clone(),
            label: v.clone(),
        })
        .collect()
}

fn titled(values: &[rmcp::model::ConstTitle]) -> Vec<ChoiceOption> {
    values
        .iter()
        .map(|c| ChoiceOption {
            value: c.const_.clone(),
            label: c.title.clone(),
        })
        .collect()
}

fn strings(values: Option<&Vec<String>>) -> Option<Value> {
    values.map(|v| Value::Array(v.iter().cloned().map(Value::String).collect()))
}

fn describe(property: &PrimitiveSchemaDefinition) -> Described {
    match property {
        PrimitiveSchemaDefinition::String(s) => (
            text(s.title.as_ref()),
            text(s.description.as_ref()),
            FieldKind::Text {
                format: s.format.map(|f| match f {
                    StringFormat::Email => "email",
                    StringFormat::Uri => "uri",
                    StringFormat::Date => "date",
                    _ => "date-time",
                }),
                min_length: s.min_length,
                max_length: s.max_length,
            },
            s.default.clone().map(Value::String),
        ),
        PrimitiveSchemaDefinition::Number(n) => (
            text(n.title.as_ref()),
            text(n.description.as_ref()),
            FieldKind::Number {
                integer: false,
                minimum: n.minimum,
                maximum: n.maximum,
            },
            n.default.and_then(Number::from_f64).map(Value::Number),
        ),
        PrimitiveSchemaDefinition::Integer(i) => (
            text(i.title.as_ref()),
            text(i.description.as_ref()),
            FieldKind::Number {
                integer: true,
                #[allow(clippy::cast_precision_loss)] // limits a person types against
                minimum: i.minimum.map(|m| m as f64),
                #[allow(clippy::cast_precision_loss)]
                maximum: i.maximum.map(|m| m as f64),
            },
            i.default.map(Value::from),
        ),
        PrimitiveSchemaDefinition::Boolean(b) => (
            text(b.title.as_ref()),
            text(b.description.as_ref()),
            FieldKind::Boolean,
            b.default.map(Value::Bool),
        ),
        PrimitiveSchemaDefinition::Enum(e) => describe_enum(e),
        // A kind newer than this build: the person types it as text.
        _ => unknown_kind(),
    }
}

fn unknown_kind() -> Described {
    let kind = FieldKind::Text {
        format: None,
        min_length: None,
        max_length: None,
    };
    (None, None, kind, None)
}

fn describe_enum(e: &EnumSchema) -> Described {
    let choice = |options| FieldKind::Choice { options };
    match e {
        EnumSchema::Single(SingleSelectEnumSchema::Untitled(u)) => (
            text(u.title.as_ref()),
            text(u.description.as_ref()),
            choice(options(&u.enum_)),
            u.default.clone().map(Value::String),
        ),
        EnumSchema::Single(SingleSelectEnumSchema::Titled(t)) => (
            text(t.title.as_ref()),
            text(t.description.as_ref()),
            choice(titled(&t.one_of)),
            t.default.clone().map(Value::String),
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Untitled(u)) => (
            text(u.title.as_ref()),
            text(u.description.as_ref()),
            FieldKind::MultiChoice {
                options: options(&u.items.enum_),
                min_items: u.min_items,
                max_items: u.max_items,
            },
            strings(u.default.as_ref()),
        ),
        EnumSchema::Multi(MultiSelectEnumSchema::Titled(t)) => (
            text(t.title.as_ref()),
            text(t.description.as_ref()),
            FieldKind::MultiChoice {
                options: titled(&t.items.any_of),
                min_items: t.min_items,
                max_items: t.max_items,
            },
            strings(t.default.as_ref()),
        ),
        EnumSchema::Legacy(l) => {
            let labels = l.enum_names.clone().unwrap_or_else(|| l.enum_.clone());
            let options = l
                .enum_
                .iter()
                .zip(labels.iter().chain(std::iter::repeat(&String::new())))
                .map(|(value, label)| ChoiceOption {
                    value: value.clone(),
                    label: if label.is_empty() {
                        value.clone()
                    } else {
                        label.clone()
                    },
                })
                .collect();
            (
                text(l.title.as_ref()),
                text(l.description.as_ref()),
                choice(options),
                l.default.clone().map(Value::String),
            )
        }
        _ => unknown_kind(),
    }
}

fn check_value(kind: &FieldKind, value: &Value) -> Result<Value, String> {
    match kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
        } => {
            let s = value.as_str().ok_or("must be text")?;
            let chars = s.chars().count();
            if chars > MAX_TEXT_CHARS {
                return Err(format!("is longer than {MAX_TEXT_CHARS} characters"));
            }
            if let Some(min) = min_length.filter(|m| chars < *m as usize) {
                return Err(format!("needs at least {min} characters"));
            }
            if let Some(max) = max_length.filter(|m| chars > *m as usize) {
                return Err(format!("takes at most {max} characters"));
            }
            check_format(*format, s)?;
            Ok(Value::String(s.to_owned()))
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let n = match value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|n| n.is_finite())
            .ok_or("must be a number")?;
            if *integer && n.fract() != 0.0 {
                return Err("must be a whole number".into());
            }
            if let Some(min) = minimum.filter(|m| n < *m) {
                return Err(format!("must be at least {min}"));
            }
            if let Some(max) = maximum.filter(|m| n > *m) {
                return Err(format!("must be at most {max}"));
            }
            #[allow(clippy::cast_possible_truncation)] // whole and checked above
            Ok(if *integer {
                Value::from(n as i64)
            } else {
                Number::from_f64(n).map_or(Value::Null, Value::Number)
            })
        }
        FieldKind::Boolean => value
            .as_bool()
            .map(Value::Bool)
            .ok_or_else(|| "must be yes or no".into()),
        FieldKind::Choice { options } => {
            let s = value.as_str().ok_or("must be one of its choices")?;
            if options.iter().any(|o| o.value == s) {
                Ok(Value::String(s.to_owned()))
            } else {
                Err("must be one of its choices".into())
            }
        }
        FieldKind::MultiChoice {
            options,
            min_items,
            max_items,
        } => {
            let chosen = value.as_array().ok_or("must be a list of its choices")?;
            let mut kept = Vec::new();
            for item in chosen {
                let s = item.as_str().ok_or("must be a list of its choices")?;
                if !options.iter().any(|o| o.value == s) {
                    return Err(format!("has no choice “{s}”"));
                }
                if !kept.contains(&s) {
                    kept.push(s);
                }
            }
            let count = kept.len() as u64;
            if let Some(min) = min_items.filter(|m| count < *m) {
                return Err(format!("needs at least {min} choices"));
            }
            if let Some(max) = max_items.filter(|m| count > *m) {
                return Err(format!("takes at most {max} choices"));
            }
            Ok(Value::Array(
                kept.into_iter().map(|s| Value::String(s.into())).collect(),
            ))
        }
    }
}

fn check_format(format: Option<&str>, s: &str) -> Result<(), String> {
    let ok = match format {
        None => true,
        Some("email") => s.split_once('@').is_some_and(|(a, b)| {
            !a.is_empty() && b.contains('.') && !s.contains(char::is_whitespace)
        }),
        Some("uri") => url::Url::parse(s).is_ok(),
        Some("date") => is_date(s),
        Some(_) => s.len() > 10 && is_date(&s[..10]) && s.as_bytes()[10] == b'T',
    };
    if ok {
        Ok(())
    } else {
        Err(match format {
            Some("email") => "must be an email address".into(),
            Some("uri") => "must be an address such as https://example.com".into(),
            Some("date") => "must be a date (YYYY-MM-DD)".into(),
            _ => "must be a date and time (YYYY-MM-DDTHH:MM)".into(),
        })
    }
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    matches!(parts.as_slice(), [y, m, d]
        if y.len() == 4 && m.len() == 2 && d.len() == 2
        && [y, m, d].iter().all(|p| p.chars().all(|c| c.is_ascii_digit()))
        && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
        && (1..=31).contains(&d.parse::<u32>().unwrap_or(0)))
}

/// Who shows a server's form to the person and returns what they did.
pub trait Elicitor: Send + Sync {
    fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> futures_util::future::BoxFuture<'static, ElicitationAnswer>;

    /// The server says the visit it asked for (`elicitation_id`) is done
    /// (`notifications/elicitation/complete`): a request for it still open can close.
    fn completed(&self, _server: &str, _elicitation_id: &str) {}
}

/// The window's side of elicitation: requests go to the one listener (the window, which
/// shows each as a form) and wait for [`ElicitationBroker::answer`]. Without a listener a
/// request is declined; unanswered, it is cancelled after [`ANSWER_TIMEOUT`].
#[derive(Clone, Default)]
pub struct ElicitationBroker {
    inner: Arc<BrokerInner>,
}

#[derive(Default)]
struct BrokerInner {
    listener: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ElicitationRequest>>>,
    pending: Mutex<HashMap<String, Pending>>,
    timeout: Mutex<Option<Duration>>,
    /// Where the ids of forms closed without the window's answer go.
    closed: Mutex<Option<tokio::sync::mpsc::UnboundedSender<String>>>,
}

impl BrokerInner {
    /// Takes form `id` out of the open list without the window's answer (the server said it
    /// is done, it timed out, its call stopped) and tells the window to take it down.
    fn close(&self, id: &str) -> Option<Pending> {
        let open = lock(&self.pending).remove(id)?;
        if let Some(closed) = lock(&self.closed).as_ref() {
            let _ = closed.send(id.to_owned());
        }
        Some(open)
    }
}

struct Pending {
    request: ElicitationRequest,
    answer: tokio::sync::oneshot::Sender<ElicitationAnswer>,
}

impl ElicitationBroker {
    /// Requests from now on go to the returned receiver (replacing any earlier listener, as
    /// when the window reloads); those still open are sent to it again.
    pub fn listen(&self) -> tokio::sync::mpsc::UnboundedReceiver<ElicitationRequest> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for pending in lock(&self.inner.pending).values() {
            let _ = tx.send(pending.request.clone());
        }
        *lock(&self.inner.listener) = Some(tx);
        rx
    }

    /// The ids of forms closed from now on without the window's answer — their server said
    /// the page is done, they timed out, their call stopped — for the window to take down
    /// (replacing any earlier listener, as [`ElicitationBroker::listen`] does).
    pub fn listen_closed(&self) -> tokio::sync::mpsc::UnboundedReceiver<String> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        *lock(&self.inner.closed) = Some(tx);
        rx
    }

    /// Unanswered forms are cancelled after `timeout` instead of [`ANSWER_TIMEOUT`].
    #[must_use]
    pub fn with_timeout(self, timeout: Duration) -> Self {
        *lock(&self.inner.timeout) = Some(timeout);
        self
    }

    /// The person's answer to the form `id`, checked against it first.
    ///
    /// # Errors
    /// [`FormError::Closed`]: no such form is open; [`FormError::Unfit`]: the values do not
    /// fit it (the form stays open).
    pub fn answer(&self, id: &str, answer: ElicitationAnswer) -> Result<(), FormError> {
        let mut pending = lock(&self.inner.pending);
        let open = pending.get(id).ok_or(FormError::Closed)?;
        let answer = match answer {
            ElicitationAnswer::Accept { content } => ElicitationAnswer::Accept {
                content: open.request.check(&content).map_err(FormError::Unfit)?,
            },
            other => other,
        };
        if let Some(open) = pending.remove(id) {
            let _ = open.answer.send(answer);
        }
        Ok(())
    }

    /// The page of the open URL-mode request `id`, for Rust to open in the browser on the
    /// person's click; the request is then answered `accept` (they went to the page).
    ///
    /// # Errors
    /// [`FormError::Closed`]: no such request is open; [`FormError::NotAPage`]: it is a form.
    pub fn visit(&self, id: &str) -> Result<UrlVisit, FormError> {
        lock(&self.inner.pending)
            .get(id)
            .ok_or(FormError::Closed)?
            .request
            .url
            .clone()
            .ok_or(FormError::NotAPage)
    }

    /// The forms open now.
    pub fn open(&self) -> Vec<ElicitationRequest> {
        lock(&self.inner.pending)
            .values()
            .map(|p| p.request.clone())
            .collect()
    }
}

/// Why an answer to a server's request was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormError {
    /// It is not open: answered already, cancelled, out of time, or its server stopped asking.
    #[error("this request is no longer open (its server stopped asking)")]
    Closed,
    /// The values do not fit the form (which field, and why); the form stays open.
    #[error("{0}")]
    Unfit(String),
    /// It asks for values, not a visit to a page.
    #[error("this request is a form, not a page to visit")]
    NotAPage,
}

/// `text` cut to `max` characters, ending with "…" when it was cut.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(max.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Elicitor for ElicitationBroker {
    /// A page request the server says is done is answered `accept` for the person (they did
    /// what it asked, elsewhere), and the window told to take it down.
    fn completed(&self, server: &str, elicitation_id: &str) {
        if elicitation_id.is_empty() {
            return;
        }
        let done = lock(&self.inner.pending)
            .iter()
            .find(|(_, p)| {
                p.request.server == server
                    && p.request
                        .url
                        .as_ref()
                        .is_some_and(|u| u.elicitation_id == elicitation_id)
            })
            .map(|(id, _)| id.clone());
        if let Some(open) = done.and_then(|id| self.inner.close(&id)) {
            tracing::info!(
                server,
                "an MCP server says the page it asked the person to visit is done"
            );
            let _ = open.answer.send(ElicitationAnswer::Accept {
                content: Map::new(),
            });
        }
    }

    fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> futures_util::future::BoxFuture<'static, ElicitationAnswer> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            if let Some(why) = request.refusal() {
                tracing::warn!(server = %request.server, "an MCP server's form was declined: {why}");
                return ElicitationAnswer::Decline;
            }
            let request = request.bounded();
            let id = request.id.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            {
                // Counted and taken in one step, so a burst of forms cannot slip past the cap.
                let mut pending = lock(&inner.pending);
                let open_here = pending
                    .values()
                    .filter(|p| p.request.server == request.server)
                    .count();
                if open_here >= MAX_OPEN_PER_SERVER {
                    tracing::warn!(server = %request.server, "an MCP server asked for another form while {open_here} were open; declined");
                    return ElicitationAnswer::Decline;
                }
                pending.insert(
                    id.clone(),
                    Pending {
                        request: request.clone(),
                        answer: tx,
                    },
                );
            }
            let shown = {
                let listener = lock(&inner.listener);
                listener
                    .as_ref()
                    .is_some_and(|l| l.send(request.clone()).is_ok())
            };
            if !shown {
                lock(&inner.pending).remove(&id);
                tracing::info!(server = %request.server, "an MCP server asked for input with no window to show it; declined");
                return ElicitationAnswer::Decline;
            }
            let timeout = lock(&inner.timeout).unwrap_or(ANSWER_TIMEOUT);
            // Taken down however this ends, its call stopped (this future dropped) included:
            // a form whose call is gone must not stay open, nor count against its server.
            let _open = Opened {
                inner: &inner,
                id: &id,
            };
            let answer = tokio::time::timeout(timeout, rx).await;
            match answer {
                Ok(Ok(answer)) => answer,
                _ => ElicitationAnswer::Cancel,
            }
        })
    }
}

/// A form in the broker's open list, closed when dropped if it still is.
struct Opened<'a> {
    inner: &'a BrokerInner,
    id: &'a str,
}

impl Drop for Opened<'_> {
    fn drop(&mut self) {
        self.inner.close(self.id);
    }
}

/// An elicitor, or none: what a server connection is given. Shown in `Debug` only as whether
/// there is one.
#[derive(Clone, Default)]
pub struct Elicitation(pub Option<Arc<dyn Elicitor>>);

impl std::fmt::Debug for Elicitation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Elicitation(on)"
        } else {
            "Elicitation(off)"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The form of the official conformance suite's defaults test, as a server sends it.
    fn request() -> ElicitationRequest {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "message": "Please accept with defaults",
            "requestedSchema": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "default": "John Doe", "description": "<b>Your</b> name"},
                "age": {"type": "integer", "default": 30, "minimum": 0, "maximum": 150},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "email": {"type": "string", "format": "email"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1}
            }}
        }))
        .unwrap();
        ElicitationRequest::from_rmcp("e1".into(), "srv", &params).unwrap()
    }

    #[test]
    fn a_form_keeps_every_field_with_its_kind_and_default() {
        let form = request();
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names.len(), 7, "{names:?}");
        assert_eq!(
            Value::Object(form.defaults()),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": true})
        );
        let age = form.fields.iter().find(|f| f.name == "age").unwrap();
        assert!(matches!(age.kind, FieldKind::Number { integer: true, .. }));
        assert!(
            form.fields
                .iter()
                .find(|f| f.name == "name")
                .unwrap()
                .required
        );
        assert_eq!(
            form.check(&form.defaults()).unwrap(),
            form.defaults(),
            "the defaults pass as they are"
        );
    }

    #[test]
    fn an_answer_that_does_not_fit_the_form_says_which_field_and_why() {
        let form = request();
        let with = |k: &str, v: Value| {
            let mut c = form.defaults();
            c.insert(k.into(), v);
            form.check(&c)
        };
        assert_eq!(
            with("age", json!(30.5)).unwrap_err(),
            "“age” must be a whole number"
        );
        assert_eq!(
            with("age", json!(200)).unwrap_err(),
            "“age” must be at most 150"
        );
        assert_eq!(
            with("status", json!("gone")).unwrap_err(),
            "“status” must be one of its choices"
        );
        assert_eq!(
            with("email", json!("nope")).unwrap_err(),
            "“email” must be an email address"
        );
        assert_eq!(
            with("tags", json!(["a", "b"])).unwrap_err(),
            "“tags” takes at most 1 choices"
        );
        assert_eq!(
            with("extra", json!(1)).unwrap_err(),
            "the form has no field “extra”"
        );
        assert_eq!(with("name", Value::Null).unwrap_err(), "“name” is required");
        assert_eq!(
            with("age", json!("42")).unwrap()["age"],
            json!(42),
            "typed digits become a number"
        );
        assert!(
            with("email", json!("")).unwrap().get("email").is_none(),
            "an empty optional field is left out"
        );
    }

    #[tokio::test]
    async fn the_broker_declines_with_no_window_and_passes_a_checked_answer_back() {
        let broker = ElicitationBroker::default();
        assert_eq!(broker.elicit(request()).await, ElicitationAnswer::Decline);
        let mut window = broker.listen();
        let asking = tokio::spawn({
            let broker = broker.clone();
            async move { broker.elicit(request()).await }
        });
        let shown = window.recv().await.unwrap();
        assert_eq!(shown.id, "e1");
        let mut bad = shown.defaults();
        bad.insert("age".into(), json!(-1));
        assert!(matches!(
            broker.answer("e1", ElicitationAnswer::Accept { content: bad }),
            Err(FormError::Unfit(why)) if why.to_lowercase().contains("age")
        ));
        assert_eq!(
            broker.open().len(),
            1,
            "a refused answer leaves the form open"
        );
        broker
            .answer(
                "e1",
                ElicitationAnswer::Accept {
                    content: shown.defaults(),
                },
            )
            .unwrap();
        assert!(matches!(
            asking.await.unwrap(),
            ElicitationAnswer::Accept { .. }
        ));
        assert_eq!(
            broker.answer("e1", ElicitationAnswer::Decline),
            Err(FormError::Closed)
        );
    }

    #[tokio::test]
    async fn a_form_whose_call_stopped_is_no_longer_open() {
        let broker = ElicitationBroker::default();
        let mut window = broker.listen();
        let mut closed = broker.listen_closed();
        let asking = tokio::spawn({
            let broker = broker.clone();
            async move { broker.elicit(request()).await }
        });
        let shown = window.recv().await.unwrap();
        assert_eq!(broker.open().len(), 1);
        asking.abort();
        let _ = asking.await;
        assert!(broker.open().is_empty());
        assert_eq!(closed.recv().await.as_deref(), Some(shown.id.as_str()));
        assert_eq!(
            broker.answer(&shown.id, ElicitationAnswer::Decline),
            Err(FormError::Closed)
        );
        // One the window answered is not reported closed.
        let asking = tokio::spawn({
            let broker = broker.clone();
            async move { broker.elicit(request()).await }
        });
        let shown = window.recv().await.unwrap();
        broker
            .answer(&shown.id, ElicitationAnswer::Decline)
            .unwrap();
        asking.await.unwrap();
        assert!(closed.try_recv().is_err());
    }

    #[tokio::test]
    async fn an_unanswered_form_is_cancelled() {
        let broker = ElicitationBroker::default().with_timeout(Duration::from_millis(50));
        let _window = broker.listen();
        assert_eq!(broker.elicit(request()).await, ElicitationAnswer::Cancel);
        assert!(broker.open().is_empty());
    }

    fn page(id: &str, url: &str, elicitation_id: &str) -> Option<ElicitationRequest> {
        let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "url", "message": "Sign in to <b>Pay</b>", "url": url, "elicitationId": elicitation_id,
        }))
        .unwrap();
        ElicitationRequest::from_rmcp(id.into(), "pay", &params)
    }

    #[test]
    fn a_page_is_shown_only_if_it_may_be_opened() {
        let shown = page("p1", "https://xn--pypal-4ve.com/login?a=1", "e").unwrap();
        let visit = shown.url.unwrap();
        assert_eq!(visit.host, "xn--pypal-4ve.com");
        assert!(shown.fields.is_empty());
        assert!(page("p2", "http://localhost:9/done", "e").is_some());
        assert!(page("p3", "http://[::1]:9/done", "e").is_some());
        for refused in [
            "http://example.com/",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ms-settings:",
        ] {
            assert!(page("p4", refused, "e").is_none(), "{refused}");
        }
        let long = format!("https://example.com/{}", "a".repeat(MAX_URL_CHARS));
        assert!(page("p5", &long, "e").is_none());
    }

    #[tokio::test]
    async fn a_page_is_visited_by_id_and_closed_when_its_server_says_it_is_done() {
        let broker = ElicitationBroker::default();
        let mut window = broker.listen();
        let mut closed = broker.listen_closed();
        let asking = tokio::spawn({
            let broker = broker.clone();
            async move {
                broker
                    .elicit(page("p1", "https://pay.example.com/", "el-7").unwrap())
                    .await
            }
        });
        let shown = window.recv().await.unwrap();
        assert_eq!(
            broker.visit(&shown.id).unwrap().url,
            "https://pay.example.com/"
        );
        assert_eq!(broker.visit("nope"), Err(FormError::Closed));
        // Another server's word, or another request's, closes nothing.
        broker.completed("other", "el-7");
        broker.completed("pay", "el-8");
        assert_eq!(broker.open().len(), 1);
        assert!(closed.try_recv().is_err());
        broker.completed("pay", "el-7");
        // The window is told to take it down.
        assert_eq!(closed.recv().await.as_deref(), Some(shown.id.as_str()));
        assert_eq!(
            asking.await.unwrap(),
            ElicitationAnswer::Accept {
                content: Map::new()
            }
        );
        assert!(broker.open().is_empty());
        // A form is not a page.
        let form = tokio::spawn({
            let broker = broker.clone();
            async move { broker.elicit(request()).await }
        });
        let shown = window.recv().await.unwrap();
        assert_eq!(broker.visit(&shown.id), Err(FormError::NotAPage));
        broker
            .answer(&shown.id, ElicitationAnswer::Decline)
            .unwrap();
        assert_eq!(form.await.unwrap(), ElicitationAnswer::Decline);
    }
}
