//! A server's resources, resource templates and prompts — the MCP server features beside its
//! tools (issue 17) — and the completion of their arguments: each list read whole within
//! [`LIST_LIMITS`], a resource read, a prompt got with its arguments, an argument completed,
//! each within a time limit. Only what the server declared at `initialize` is asked for: a
//! server without the `resources` capability lists no resources, and is not sent the request.
//!
//! What these return is the server's, and hostile like a tool's result: whoever shows it
//! escapes it (the terminal, the sanitised window).

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, ErrorCode, GetPromptRequestParams,
    GetPromptResult, Prompt, ReadResourceRequestParams, ReadResourceResult, Reference, Resource,
    ResourceTemplate, ServerCapabilities,
};
use rmcp::service::ServiceError;
use serde_json::{Map, Value};

use super::server::McpError;
use super::server::{McpServer, LIST_LIMITS};

/// What an argument being completed belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completing {
    /// An argument of the prompt of this name.
    Prompt(String),
    /// A variable of the resource template with this `uriTemplate`.
    Template(String),
}

impl McpServer {
    /// What the server declared it offers, at `initialize`.
    pub(super) fn declared(&self, offers: impl Fn(&ServerCapabilities) -> bool) -> bool {
        self.peer()
            .peer_info()
            .is_some_and(|info| offers(&info.capabilities))
    }

    /// Whether the server declared resources.
    pub fn offers_resources(&self) -> bool {
        self.declared(|c| c.resources.is_some())
    }

    /// Whether the server declared prompts.
    pub fn offers_prompts(&self) -> bool {
        self.declared(|c| c.prompts.is_some())
    }

    /// Whether the server declared that it completes arguments.
    pub fn offers_completions(&self) -> bool {
        self.declared(|c| c.completions.is_some())
    }

    /// Every resource the server lists (none if it declared no resources).
    ///
    /// # Errors
    /// The server failed or went away; [`McpError::ListTooLong`] past a limit.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, McpError> {
        if !self.offers_resources() {
            return Ok(Vec::new());
        }
        self.all_pages(
            "resources",
            &LIST_LIMITS,
            |params| async move {
                let page = self.peer().list_resources(Some(params)).await?;
                Ok((page.resources, page.next_cursor))
            },
            |_, _| true,
        )
        .await
    }

    /// Every resource template the server lists (none if it declared no resources). A server
    /// that has resources but does not know `resources/templates/list` lists none.
    ///
    /// # Errors
    /// As [`McpServer::list_resources`].
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, McpError> {
        if !self.offers_resources() {
            return Ok(Vec::new());
        }
        self.all_pages(
            "resource templates",
            &LIST_LIMITS,
            |params| async move {
                match self.peer().list_resource_templates(Some(params)).await {
                    Ok(page) => Ok((page.resource_templates, page.next_cursor)),
                    Err(ServiceError::McpError(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                        Ok((Vec::new(), None))
                    }
                    Err(e) => Err(e),
                }
            },
            |_, _| true,
        )
        .await
    }

    /// Reads one resource.
    ///
    /// # Errors
    /// [`McpError::Timeout`] after `timeout`; the server refused (no such resource) or failed.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult, McpError> {
        let params = ReadResourceRequestParams::new(uri.to_owned());
        self.within(timeout, self.peer().read_resource(params))
            .await
    }

    /// Every prompt the server lists (none if it declared no prompts).
    ///
    /// # Errors
    /// As [`McpServer::list_resources`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, McpError> {
        if !self.offers_prompts() {
            return Ok(Vec::new());
        }
        self.all_pages(
            "prompts",
            &LIST_LIMITS,
            |params| async move {
                let page = self.peer().list_prompts(Some(params)).await?;
                Ok((page.prompts, page.next_cursor))
            },
            |_, _| true,
        )
        .await
    }

    /// The messages of one prompt, given its arguments (strings, as MCP has them).
    ///
    /// # Errors
    /// [`McpError::Timeout`] after `timeout`; the server refused (no such prompt, a required
    /// argument missing) or failed.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(name.to_owned());
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        self.within(timeout, self.peer().get_prompt(params)).await
    }

    /// What the server suggests for an argument of a prompt or a resource template, given what
    /// has been typed of it (`value`) and the arguments already chosen (`context`). A server
    /// that does not complete suggests nothing.
    ///
    /// # Errors
    /// [`McpError::Timeout`] after `timeout`; the server failed.
    pub async fn complete(
        &self,
        completing: Completing,
        argument: &str,
        value: &str,
        context: HashMap<String, String>,
        timeout: Duration,
    ) -> Result<Vec<String>, McpError> {
        if !self.offers_completions() {
            return Ok(Vec::new());
        }
        let reference = match completing {
            Completing::Prompt(name) => Reference::for_prompt(name),
            Completing::Template(uri) => Reference::for_resource(uri),
        };
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            params = params.with_context(CompletionContext::with_arguments(context));
        }
        let answer = self.within(timeout, self.peer().complete(params)).await?;
        // MCP allows 100 values at most; a server that sends more is cut there.
        let mut values = answer.completion.values;
        values.truncate(rmcp::model::CompletionInfo::MAX_VALUES);
        Ok(values)
    }

    /// One request, given up on after `timeout`.
    async fn within<T>(
        &self,
        timeout: Duration,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        match tokio::time::timeout(timeout, request).await {
            Ok(answer) => answer.map_err(|e| self.service_error(&e)),
            Err(_) => Err(McpError::Timeout {
                server: self.name().to_owned(),
                after: timeout,
            }),
        }
    }
}

/// What a running server offers beside its tools, as its Servers entry shows it: every text
/// the server wrote with its hidden characters written out, descriptions cut to
/// [`DESCRIPTION_CHARS`].
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, ts_rs::TS)]
pub struct ServerOffers {
    pub resources: Vec<OfferedResource>,
    pub templates: Vec<OfferedTemplate>,
    pub prompts: Vec<OfferedPrompt>,
}

/// A resource a server lists.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct OfferedResource {
    pub uri: String,
    /// Its title, else its name.
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// In bytes, where the server says.
    pub size: Option<u64>,
}

/// A resource template a server lists: resources made from arguments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct OfferedTemplate {
    pub uri_template: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
}

/// A prompt a server lists, with its arguments.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct OfferedPrompt {
    /// What `prompts/get` takes.
    pub name: String,
    /// Its title, else its name.
    pub title: String,
    pub description: Option<String>,
    pub arguments: Vec<OfferedArgument>,
}

/// An argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct OfferedArgument {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// The most of a description a Servers entry shows.
pub const DESCRIPTION_CHARS: usize = 500;

/// A server's text, safe to show: hidden characters written out, on one line, cut.
fn shown(text: &str, max_chars: usize) -> String {
    crate::text::escape_hidden(&crate::text::one_line(text, max_chars)).into_owned()
}

fn shown_description(text: Option<&String>) -> Option<String> {
    text.map(|t| shown(t, DESCRIPTION_CHARS))
        .filter(|t| !t.is_empty())
}

impl McpServer {
    /// Everything the server offers beside its tools, listed now.
    ///
    /// # Errors
    /// As [`McpServer::list_resources`].
    pub async fn offers(&self) -> Result<ServerOffers, McpError> {
        const NAME_CHARS: usize = 200;
        let resources = self.list_resources().await?;
        let templates = self.list_resource_templates().await?;
        let prompts = self.list_prompts().await?;
        Ok(ServerOffers {
            resources: resources
                .iter()
                .map(|r| OfferedResource {
                    uri: shown(&r.uri, 2_000),
                    name: shown(r.title.as_ref().unwrap_or(&r.name), NAME_CHARS),
                    description: shown_description(r.description.as_ref()),
                    mime_type: r.mime_type.as_deref().map(|m| shown(m, NAME_CHARS)),
                    size: r.size,
                })
                .collect(),
            templates: templates
                .iter()
                .map(|t| OfferedTemplate {
                    uri_template: shown(&t.uri_template, 2_000),
                    name: shown(t.title.as_ref().unwrap_or(&t.name), NAME_CHARS),
                    description: shown_description(t.description.as_ref()),
                    mime_type: t.mime_type.as_deref().map(|m| shown(m, NAME_CHARS)),
                })
                .collect(),
            prompts: prompts
                .iter()
                .map(|p| OfferedPrompt {
                    name: p.name.clone(),
                    title: shown(p.title.as_ref().unwrap_or(&p.name), NAME_CHARS),
                    description: shown_description(p.description.as_ref()),
                    arguments: p
                        .arguments
                        .iter()
                        .flatten()
                        .map(|a| OfferedArgument {
                            name: a.name.clone(),
                            description: shown_description(a.description.as_ref()),
                            required: a.required == Some(true),
                        })
                        .collect(),
                })
                .collect(),
        })
    }
}
