//! Which of a run's tools each request offers the model (issue 55). While they fit, all of them.
//! Past the most a provider takes in one request ([`MOST_TOOLS`], or less when a provider's
//! refusal said so) or past their share of the model's window ([`WINDOW_SHARE_PERCENT`]), the
//! model is offered the tools the person uses most, and Switchboard's own `search_tools`; each
//! tool a search finds is offered from the next request on, appended after the ones offered
//! before, so a provider's prompt cache keeps its prefix. A tool the model names without being
//! offered it is still one of the conversation's tools, called through the same approvals.
//!
//! The search ranks by words in the tool's name, title, description and server, rarer words
//! counting for more (an inverse document frequency); a name's words count thrice.
//!
//! A provider with its own tool search (Anthropic's, for the Claude 4.5 models and later) is
//! given every other tool deferred instead, and searches them itself: Switchboard's search is
//! then not offered, unless the provider refuses its own.

use std::collections::{HashMap, HashSet};

use crate::mcp::catalogue::CatalogueTool;
use crate::providers::ToolSpec;

/// The most tools one request carries when nothing else is known: OpenAI's cap, the lowest of
/// the APIs Switchboard speaks that has one.
pub const MOST_TOOLS: usize = 128;
/// The share of the model's window the tools' definitions may fill before the model is offered
/// a search instead (the MCP client guidance: 1–5 %).
pub const WINDOW_SHARE_PERCENT: u64 = 5;
/// The tools the person uses most, offered beside the search.
pub const KEPT: usize = 8;
/// The most tools one search finds.
pub const FOUND_PER_SEARCH: usize = 5;

/// How the provider's own tool search is named among the tools offered.
pub const PROVIDER_SEARCH: &str = "Anthropic · Tool Search (the provider's own)";

/// What a run offers.
#[derive(Debug, Clone)]
pub struct Offer {
    /// Indices into the run's tools, in the order offered; `None` while every tool is.
    chosen: Option<Vec<usize>>,
    /// The most tools a request may carry.
    most: usize,
    /// Why the model is not offered every tool.
    why: String,
    /// The provider searches the tools not offered itself ([`Offer::deferred`]).
    provider_searches: bool,
}

/// The run's tools that are Switchboard's own search (offered only when tools are chosen), its
/// reader of kept results (offered only when a result was cut) and its loader of skills
/// (offered with every request, chosen or not): by index.
#[derive(Debug, Clone, Copy, Default)]
pub struct Own {
    pub search: Option<usize>,
    pub read_result: Option<usize>,
    pub skill: Option<usize>,
}

impl Offer {
    /// The offer for a run of `tools` (the conversation's, and Switchboard's own) to a model
    /// with `window` tokens (when known); `favoured` are the tools the person uses most, most
    /// used first, as (server, tool).
    pub fn new(
        tools: &[CatalogueTool],
        own: Own,
        window: Option<u64>,
        favoured: &[(String, String)],
    ) -> Offer {
        let mut offer = Offer {
            chosen: None,
            most: MOST_TOOLS,
            why: String::new(),
            provider_searches: false,
        };
        if own.search.is_none() {
            return offer;
        }
        let servers_tools = servers_tools(tools, own);
        let over_share = window.and_then(|w| {
            let tokens: usize = servers_tools.iter().map(|&i| spec_tokens(&tools[i])).sum();
            let share = usize::try_from(w / 100 * WINDOW_SHARE_PERCENT).unwrap_or(usize::MAX);
            (tokens > share).then_some((tokens, w))
        });
        // One place is kept for Switchboard's reader of cut results, offered beside the rest.
        if servers_tools.len() >= MOST_TOOLS {
            offer.choose(
                tools,
                own,
                favoured,
                format!(
                    "{} tools are more than a request carries (at most {MOST_TOOLS})",
                    servers_tools.len()
                ),
            );
        } else if let Some((tokens, window)) = over_share {
            offer.choose(
                tools,
                own,
                favoured,
                format!(
                    "the {} tools' definitions (about {tokens} tokens) are more than \
                     {WINDOW_SHARE_PERCENT} % of the model's window of {window} tokens",
                    servers_tools.len()
                ),
            );
        }
        offer
    }

    /// Whether the model is offered a choice of the tools (and a search), not every one.
    pub fn is_chosen(&self) -> bool {
        self.chosen.is_some()
    }

    /// When `searches` (the provider has its own tool search) and the model is offered a
    /// choice: the rest go deferred with each request, for the provider's search, in place of
    /// Switchboard's.
    #[must_use]
    pub fn with_provider_search(mut self, own: Own, searches: bool) -> Self {
        if let Some(chosen) = self.chosen.as_mut().filter(|_| searches) {
            chosen.retain(|&i| Some(i) != own.search);
            self.provider_searches = true;
            self.why
                .push_str("; the provider's own tool search finds the rest");
        }
        self
    }

    /// Whether the provider searches the tools not offered itself.
    pub fn provider_searches(&self) -> bool {
        self.provider_searches
    }

    /// The provider refused its own search (the model does not take it): Switchboard's is
    /// offered instead. `false` when it was not in use.
    pub fn without_provider_search(&mut self, own: Own) -> bool {
        if !std::mem::take(&mut self.provider_searches) {
            return false;
        }
        if let Some(chosen) = &mut self.chosen {
            if let Some(search) = own.search.filter(|s| !chosen.contains(s)) {
                chosen.push(search);
            }
        }
        if let Some(at) = self.why.find("; the provider's own tool search") {
            self.why.truncate(at);
        }
        true
    }

    /// The tools the provider may find with its own search: every server tool not offered
    /// (none unless [`Offer::provider_searches`]).
    pub fn deferred(&self, tools: &[CatalogueTool], own: Own) -> Vec<usize> {
        match &self.chosen {
            Some(chosen) if self.provider_searches => servers_tools(tools, own)
                .into_iter()
                .filter(|i| !chosen.contains(i))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Why the model is offered a choice; empty while it is offered every tool.
    pub fn why(&self) -> &str {
        &self.why
    }

    /// After a provider refused a request for carrying more than `most` tools: the model is
    /// offered a choice under that. `false` when that changes nothing (the refusal stands).
    pub fn narrow(
        &mut self,
        tools: &[CatalogueTool],
        own: Own,
        favoured: &[(String, String)],
        most: usize,
    ) -> bool {
        // Counted with the reader of cut results, which may go with any request.
        let offered = self.offered(tools, own, true).len();
        if offered <= most.max(1) || most < 3 {
            return false;
        }
        self.most = most;
        match &mut self.chosen {
            Some(chosen) => {
                // The search stays (Switchboard's, unless the provider searches itself), and
                // room for the reader; the newest found go first.
                chosen.truncate(most - 2);
                // The search and the loader of skills stay.
                let search = own.search.filter(|_| !self.provider_searches);
                for keep in [own.skill, search].into_iter().flatten() {
                    if !chosen.contains(&keep) {
                        chosen.pop();
                        chosen.push(keep);
                    }
                }
            }
            None => self.choose(
                tools,
                own,
                favoured,
                format!("the provider takes at most {most} tools in one request"),
            ),
        }
        true
    }

    /// Chooses the favoured tools (as many as fit beside the search) and the search.
    fn choose(
        &mut self,
        tools: &[CatalogueTool],
        own: Own,
        favoured: &[(String, String)],
        why: String,
    ) {
        // Beside the search and the reader of cut results.
        let room = KEPT.min(self.most.saturating_sub(3));
        let mut chosen: Vec<usize> = favoured
            .iter()
            .filter_map(|(server, tool)| {
                tools
                    .iter()
                    .position(|t| &t.server == server && &t.tool == tool)
            })
            .filter(|i| {
                Some(*i) != own.search && Some(*i) != own.read_result && Some(*i) != own.skill
            })
            .take(room)
            .collect();
        chosen.dedup();
        chosen.extend(own.skill);
        chosen.extend(own.search);
        self.chosen = Some(chosen);
        self.why = why;
    }

    /// The indices of the tools a request offers, in order: every tool (less the search), or
    /// the chosen ones; the reader of kept results last when `cut` (a result was cut).
    pub fn offered(&self, tools: &[CatalogueTool], own: Own, cut: bool) -> Vec<usize> {
        let mut offered = match &self.chosen {
            Some(chosen) => chosen.clone(),
            None => {
                let mut all = servers_tools(tools, own);
                all.extend(own.skill);
                all
            }
        };
        if cut {
            offered.extend(own.read_result);
        }
        offered
    }

    /// The specs of [`Offer::offered`].
    pub fn specs(&self, tools: &[CatalogueTool], own: Own, cut: bool) -> Vec<ToolSpec> {
        self.offered(tools, own, cut)
            .into_iter()
            .map(|i| super::tools::spec(&tools[i]))
            .collect()
    }

    /// The specs of [`Offer::deferred`].
    pub fn deferred_specs(&self, tools: &[CatalogueTool], own: Own) -> Vec<ToolSpec> {
        self.deferred(tools, own)
            .into_iter()
            .map(|i| super::tools::spec(&tools[i]))
            .collect()
    }

    /// Searches `tools` for `query`: the best [`FOUND_PER_SEARCH`] at most, best first. Those
    /// not offered yet are offered from the next request on, as room allows (the oldest found
    /// make room first); returns what was found, and which of it is new.
    pub fn search(
        &mut self,
        tools: &[CatalogueTool],
        own: Own,
        query: &str,
    ) -> (Vec<usize>, Vec<usize>) {
        let found = rank(tools, own, query, FOUND_PER_SEARCH);
        let Some(chosen) = &mut self.chosen else {
            return (found, Vec::new());
        };
        let mut new = Vec::new();
        for &i in &found {
            if !chosen.contains(&i) {
                chosen.push(i);
                new.push(i);
            }
        }
        // Over the cap (less the reader's place): the earliest found (after the favoured and
        // the search) leave first.
        while chosen.len() + 1 > self.most {
            let first_found = own
                .search
                .and_then(|s| chosen.iter().position(|&i| i == s))
                .map_or(0, |p| p + 1);
            if first_found >= chosen.len() {
                break;
            }
            chosen.remove(first_found);
        }
        (found, new)
    }
}

/// The run's tools that come from servers: every tool but Switchboard's search and reader.
fn servers_tools(tools: &[CatalogueTool], own: Own) -> Vec<usize> {
    (0..tools.len())
        .filter(|i| ![own.search, own.read_result, own.skill].contains(&Some(*i)))
        .collect()
}

/// About how many tokens a tool's definition takes (a token is about four characters).
fn spec_tokens(tool: &CatalogueTool) -> usize {
    (tool.wire_name.len() + tool.description.len() + tool.input_schema.to_string().len()) / 4 + 8
}

/// The words of `text`, lowercased: split at anything not a letter or digit, and at a change
/// from lower to upper case (`getWeather` is "get" and "weather").
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            out.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_numeric();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        out.push(word);
    }
    out
}

/// The `limit` tools that best match `query`, best first; none match nothing.
pub fn rank(tools: &[CatalogueTool], own: Own, query: &str, limit: usize) -> Vec<usize> {
    let wanted: HashSet<String> = words(query)
        .into_iter()
        .filter(|w| w.chars().count() > 1 || w.chars().all(char::is_numeric))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let candidates = servers_tools(tools, own);
    // Each candidate's words: its name's (counted thrice), then the rest's.
    let documents: Vec<(usize, HashSet<String>, HashSet<String>)> = candidates
        .iter()
        .map(|&i| {
            let t = &tools[i];
            let name: HashSet<String> = words(&t.tool)
                .into_iter()
                .chain(words(t.title.as_deref().unwrap_or_default()))
                .collect();
            let rest: HashSet<String> = words(&t.description)
                .into_iter()
                .chain(words(&t.server))
                .collect();
            (i, name, rest)
        })
        .collect();
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for (_, name, rest) in &documents {
        for w in wanted.iter() {
            if name.contains(w) || rest.contains(w) || prefixed(name, w) {
                *frequency.entry(w.as_str()).or_default() += 1;
            }
        }
    }
    let n = documents.len() as f64;
    let weight = |w: &str| {
        let df = frequency.get(w).copied().unwrap_or(0) as f64;
        ((n + 1.0) / (df + 0.5)).ln().max(0.01)
    };
    let mut scored: Vec<(f64, usize)> = documents
        .iter()
        .filter_map(|(i, name, rest)| {
            let score: f64 = wanted
                .iter()
                .map(|w| {
                    let in_name = if name.contains(w) {
                        3.0
                    } else if prefixed(name, w) {
                        2.0
                    } else {
                        0.0
                    };
                    let in_rest = if rest.contains(w) { 1.0 } else { 0.0 };
                    (in_name + in_rest) * weight(w)
                })
                .sum();
            (score > 0.0).then_some((score, *i))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().take(limit).map(|(_, i)| i).collect()
}

/// Whether a word of `words` starts with `w` (of three letters or more): "forecast" finds
/// "forecasts", "weather" finds "weatherapi".
fn prefixed(words: &HashSet<String>, w: &str) -> bool {
    w.len() >= 3 && words.iter().any(|x| x.len() > w.len() && x.starts_with(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(server: &str, name: &str, description: &str) -> CatalogueTool {
        CatalogueTool {
            wire_name: format!("{server}__{name}"),
            server: server.into(),
            tool: name.into(),
            display_name: name.into(),
            title: None,
            description: description.into(),
            input_schema: json!({"type": "object"}),
            hash: String::new(),
            annotations: None,
        }
    }

    /// 2,000 generated tools, the weather tool among them, and the search last.
    fn many() -> (Vec<CatalogueTool>, Own) {
        let nouns = [
            "invoice", "ticket", "user", "order", "file", "report", "alert", "build",
        ];
        let verbs = [
            "create", "list", "delete", "update", "get", "archive", "export", "sync",
        ];
        let mut tools: Vec<CatalogueTool> = (0..1999)
            .map(|i| {
                let (v, n) = (
                    verbs[i % verbs.len()],
                    nouns[(i / verbs.len()) % nouns.len()],
                );
                tool(
                    &format!("s{}", i % 10),
                    &format!("{v}_{n}_{i}"),
                    &format!("{v}s a {n} in system {i}"),
                )
            })
            .collect();
        tools.push(tool(
            "weatherly",
            "getForecast",
            "Forecasts the weather for a city over the next days",
        ));
        tools.push(tool("switchboard/built-in", "search_tools", "finds tools"));
        let own = Own {
            search: Some(tools.len() - 1),
            read_result: None,
            skill: None,
        };
        (tools, own)
    }

    #[test]
    fn words_split_at_case_and_punctuation() {
        assert_eq!(
            words("getWeather_forecast-API v2"),
            ["get", "weather", "forecast", "api", "v2"]
        );
    }

    #[test]
    fn two_thousand_tools_are_offered_as_the_favoured_and_a_search_and_what_it_finds_is_appended() {
        let (tools, own) = many();
        let favoured = vec![("s3".to_owned(), "update_invoice_3".to_owned())];
        let mut offer = Offer::new(&tools, own, None, &favoured);
        assert!(offer.is_chosen());
        assert!(
            offer.why().starts_with("2000 tools are more than"),
            "{}",
            offer.why()
        );
        let first = offer.offered(&tools, own, false);
        assert_eq!(first, [3, own.search.unwrap()]);

        let (found, new) = offer.search(&tools, own, "weather forecast for Paris");
        assert_eq!(found[0], 1999, "the weather tool first");
        assert!(new.contains(&1999));
        let second = offer.offered(&tools, own, false);
        assert_eq!(second[..2], first[..], "what was offered keeps its place");
        assert!(second.contains(&1999));

        // Searching again finds it again but offers it once.
        let (_, new) = offer.search(&tools, own, "forecast");
        assert!(new.is_empty());
        assert_eq!(offer.offered(&tools, own, false), second);
    }

    #[test]
    fn a_provider_that_searches_itself_gets_the_rest_deferred_and_no_search_of_ours_until_it_refuses(
    ) {
        let (tools, own) = many();
        let favoured = vec![("s3".to_owned(), "update_invoice_3".to_owned())];
        let mut offer = Offer::new(&tools, own, None, &favoured).with_provider_search(own, true);
        assert!(offer.provider_searches());
        assert_eq!(offer.offered(&tools, own, false), [3], "no search of ours");
        let deferred = offer.deferred(&tools, own);
        assert_eq!(deferred.len(), 1999, "every other server tool");
        assert!(!deferred.contains(&3) && !deferred.contains(&own.search.unwrap()));
        assert!(offer.without_provider_search(own));
        assert_eq!(offer.offered(&tools, own, false), [3, own.search.unwrap()]);
        assert!(offer.deferred(&tools, own).is_empty());
        assert!(!offer.without_provider_search(own), "once");
        // Every tool offered: nothing deferred, whatever the provider can do.
        let few = Offer::new(&tools[..10], Own::default(), None, &[])
            .with_provider_search(Own::default(), true);
        assert!(!few.provider_searches() && few.deferred(&tools[..10], Own::default()).is_empty());
    }

    #[test]
    fn a_few_tools_are_all_offered_unless_their_definitions_crowd_the_window() {
        let (mut tools, own) = many();
        tools.truncate(40);
        tools.push(tool("switchboard/built-in", "search_tools", "finds tools"));
        let own = Own {
            search: Some(40),
            ..own
        };
        let offer = Offer::new(&tools, own, Some(128_000), &[]);
        assert!(!offer.is_chosen());
        assert_eq!(offer.offered(&tools, own, false).len(), 40);
        // 40 tools of about 24 tokens each: more than 5 % of an 8k window (409 tokens).
        let small = Offer::new(&tools, own, Some(8_192), &[]);
        assert!(small.is_chosen());
        assert!(
            small.why().contains("5 % of the model's window of 8192"),
            "{}",
            small.why()
        );
    }

    #[test]
    fn a_refusal_for_too_many_tools_narrows_the_offer_once() {
        let (mut tools, _) = many();
        tools.truncate(100);
        tools.push(tool("switchboard/built-in", "search_tools", "finds tools"));
        let own = Own {
            search: Some(100),
            read_result: None,
            skill: None,
        };
        let mut offer = Offer::new(&tools, own, None, &[]);
        assert!(!offer.is_chosen(), "100 tools are under 128");
        assert!(offer.narrow(&tools, own, &[], 64));
        assert!(offer.is_chosen());
        assert_eq!(offer.offered(&tools, own, false), [100]);
        assert!(
            !offer.narrow(&tools, own, &[], 64),
            "nothing more to narrow"
        );
        // Found tools stay under the cap, the earliest found leaving first.
        for q in [
            "invoice", "ticket", "user", "order", "file", "report", "alert", "build", "sync",
        ] {
            offer.search(&tools, own, q);
        }
        assert!(offer.offered(&tools, own, false).len() <= 64);
        assert_eq!(
            offer.offered(&tools, own, false)[0],
            100,
            "the search stays first"
        );
    }

    #[test]
    fn a_search_of_nothing_finds_nothing() {
        let (tools, own) = many();
        assert!(rank(&tools, own, "", 8).is_empty());
        assert!(rank(&tools, own, "?!", 8).is_empty());
        assert!(rank(&tools, own, "zebra", 8).is_empty());
    }
}
