//! Rules on tool calls: what `policy.json` (beside `mcp.json`) and an organisation's managed
//! policy file say may run, asks, or is blocked — per server, per tool, and by tests on the
//! call's arguments — and which servers' content is untrusted or reviewed before the model
//! reads it. Owns the file's shape, its checking (a bad rule is refused with where and why; a
//! file is taken whole or not at all), and judging one call against the rules. Pure: reading
//! the files is [`crate::app`]'s, combining a rule's word with standing approvals and what the
//! turn has read is [`super::judge`]'s.
//!
//! **Which rule decides.** A rule applies to a call when its server and tool name the call's
//! (a missing tool: every tool of the server; server `*`: every server) and every test in its
//! `when` holds. Of the rules that apply, the most specific wins: a named tool over a whole
//! server over every server, then more tests over fewer; at equal specificity the strictest
//! outcome (block, then ask, then allow). The managed file's rules are judged apart and the
//! stricter of its word and the person's stands, so the person can tighten, never loosen.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The name of the rules file, in the config folder and the managed folder.
pub const FILE_NAME: &str = "policy.json";

/// What a rule does to the calls it applies to.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ts_rs::TS,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Runs without asking.
    Allow,
    /// Asks the person every time.
    Ask,
    /// Never offered to the model; a call that names it anyway is refused.
    Block,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Allow => "allow",
            Outcome::Ask => "ask",
            Outcome::Block => "block",
        }
    }
}

/// A test on one argument. Written as an object with one key: `{"inside": ["~/notes"]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Test {
    /// A path that lies inside one of these folders, once `~`, `..` and symlinks are resolved.
    Inside(Vec<String>),
    /// A URL whose host is one of these (`*.example.com`: any name under example.com).
    Host(Vec<String>),
    /// A string that matches this regular expression whole.
    Matches(String),
    /// A number within these bounds (each inclusive, each optional).
    Range {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        min: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        max: Option<f64>,
    },
    /// A value equal to one of these.
    OneOf(Vec<Value>),
    /// The test inside does not hold.
    Not(Box<Test>),
}

/// One rule of a policy file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// A server's name in mcp.json, or `*` for every server.
    pub server: String,
    /// One tool of the server; every tool when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
    /// Tests on the call's arguments, each by the argument's name or a JSON pointer
    /// (`/options/path`); all must hold for the rule to apply.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(optional, as = "Option<BTreeMap<String, Test>>")]
    pub when: BTreeMap<String, Test>,
    pub outcome: Outcome,
    /// Why the rule exists, in the person's words: shown with every decision it makes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub note: Option<String>,
}

/// A server, or one of its tools, named by a list (untrusted content, results reviewed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool: Option<String>,
}

impl Target {
    fn names(&self, server: &str, tool: &str) -> bool {
        names_server(&self.server, server) && self.tool.as_deref().is_none_or(|t| t == tool)
    }
}

/// The whole of a policy file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicyFile {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<Rule>>")]
    pub rules: Vec<Rule>,
    /// Sources of untrusted content (web fetchers, mail and chat readers, search): once a turn
    /// has read from one, another server's tools that are not read-only ask.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<Target>>")]
    pub untrusted: Vec<Target>,
    /// Results the person sees, and may cut or withhold, before the model reads them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<Target>>")]
    pub review: Vec<Target>,
    /// The managed file only: the servers that may be added or run at all (`None`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub allowed_servers: Option<Vec<String>>,
}

/// A rule or file refused: where in the file, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{place}: {why}")]
pub struct PolicyError {
    /// `rules[2].when.path`, or `line 4, column 7` for JSON that does not parse.
    pub place: String,
    pub why: String,
}

impl PolicyError {
    fn at(place: impl Into<String>, why: impl Into<String>) -> Self {
        Self {
            place: place.into(),
            why: why.into(),
        }
    }
}

impl PolicyFile {
    /// Parses and checks a file's text whole: any bad rule refuses all of it.
    ///
    /// # Errors
    /// Where and why the text is not a policy.
    pub fn parse(text: &str) -> Result<PolicyFile, PolicyError> {
        if text.trim().is_empty() {
            return Ok(PolicyFile::default());
        }
        let file: PolicyFile = serde_json::from_str(text).map_err(|e| {
            PolicyError::at(
                format!("line {}, column {}", e.line(), e.column()),
                e.to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })?;
        file.compile(Source::User)?;
        Ok(file)
    }

    /// The file as written: two-space JSON with a final newline, for a readable diff.
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into());
        text.push('\n');
        text
    }

    /// Checks every rule and readies it for judging.
    ///
    /// # Errors
    /// Where and why a rule is refused.
    pub fn compile(&self, source: Source) -> Result<Compiled, PolicyError> {
        let mut rules = Vec::with_capacity(self.rules.len());
        for (i, rule) in self.rules.iter().enumerate() {
            let place = format!("rules[{i}]");
            if rule.server.trim().is_empty() {
                return Err(PolicyError::at(
                    format!("{place}.server"),
                    "name a server, or * for every server",
                ));
            }
            if rule.tool.as_deref().is_some_and(|t| t.trim().is_empty()) {
                return Err(PolicyError::at(
                    format!("{place}.tool"),
                    "name a tool, or leave the key out for every tool of the server",
                ));
            }
            let mut tests = Vec::with_capacity(rule.when.len());
            for (argument, test) in &rule.when {
                let at = format!("{place}.when.{argument}");
                if argument.is_empty() {
                    return Err(PolicyError::at(at, "name an argument or a JSON pointer"));
                }
                tests.push((argument.clone(), CompiledTest::of(test, &at)?));
            }
            rules.push(CompiledRule {
                index: i,
                rule: rule.clone(),
                tests,
            });
        }
        for (list, targets) in [("untrusted", &self.untrusted), ("review", &self.review)] {
            for (i, t) in targets.iter().enumerate() {
                if t.server.trim().is_empty() {
                    return Err(PolicyError::at(
                        format!("{list}[{i}].server"),
                        "name a server, or * for every server",
                    ));
                }
            }
        }
        if source == Source::User && self.allowed_servers.is_some() {
            return Err(PolicyError::at(
                "allowedServers",
                "only an organisation's managed policy file can restrict which servers may be added",
            ));
        }
        Ok(Compiled {
            source,
            rules,
            untrusted: self.untrusted.clone(),
            review: self.review.clone(),
            allowed_servers: self.allowed_servers.clone(),
        })
    }
}

/// Whose file a rule is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "RuleSource")]
pub enum Source {
    /// The person's `policy.json`.
    User,
    /// An organisation's managed policy file.
    Managed,
}

#[derive(Debug, Clone)]
enum CompiledTest {
    Inside(Vec<PathBuf>),
    Host(Vec<String>),
    Matches(regex::Regex),
    Range(Option<f64>, Option<f64>),
    OneOf(Vec<Value>),
    Not(Box<CompiledTest>),
}

impl CompiledTest {
    fn of(test: &Test, at: &str) -> Result<CompiledTest, PolicyError> {
        Ok(match test {
            Test::Inside(folders) => {
                if folders.is_empty() {
                    return Err(PolicyError::at(at, "name at least one folder"));
                }
                let mut resolved = Vec::new();
                for f in folders {
                    let expanded = expand_home(f);
                    if !expanded.is_absolute() {
                        return Err(PolicyError::at(
                            at,
                            format!("“{f}” is not a whole path (start it with / or ~)"),
                        ));
                    }
                    resolved.push(resolve(&expanded));
                }
                CompiledTest::Inside(resolved)
            }
            Test::Host(hosts) => {
                if hosts.is_empty() {
                    return Err(PolicyError::at(at, "name at least one host"));
                }
                let mut out = Vec::new();
                for h in hosts {
                    let bare = h.trim().trim_start_matches("*.");
                    let refused = || {
                        PolicyError::at(
                            at,
                            format!("“{h}” is not a host name (example.com or *.example.com)"),
                        )
                    };
                    if bare.is_empty() || bare.contains(['/', ':', '*', ' ', '@', '\\']) {
                        return Err(refused());
                    }
                    out.push(host_pattern(h).ok_or_else(refused)?);
                }
                CompiledTest::Host(out)
            }
            Test::Matches(pattern) => {
                let whole = format!("^(?:{pattern})$");
                let re = regex::RegexBuilder::new(&whole)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| {
                        PolicyError::at(at, format!("the pattern does not compile: {e}"))
                    })?;
                CompiledTest::Matches(re)
            }
            Test::Range { min, max } => {
                if min.is_none() && max.is_none() {
                    return Err(PolicyError::at(at, "give min, max or both"));
                }
                if let (Some(lo), Some(hi)) = (min, max) {
                    if lo > hi {
                        return Err(PolicyError::at(at, format!("min {lo} is above max {hi}")));
                    }
                }
                CompiledTest::Range(*min, *max)
            }
            Test::OneOf(values) => {
                if values.is_empty() {
                    return Err(PolicyError::at(at, "name at least one value"));
                }
                CompiledTest::OneOf(values.clone())
            }
            Test::Not(inner) => CompiledTest::Not(Box::new(CompiledTest::of(inner, at)?)),
        })
    }

    /// Whether the test holds for `value`, as a rule with outcome `outcome` reads it. A value
    /// the test cannot judge — a path that cannot be resolved, or that resolves one way by its
    /// words and another by the disk's links; a URL whose host a server could read otherwise;
    /// a value of the wrong type — holds for a rule that blocks or asks and not for one that
    /// allows: doubt never lets a call run. So does a list: for a block or an ask one item is
    /// enough, for an allow every item must hold.
    fn holds(&self, value: &Value, cwd: Option<&Path>, outcome: Outcome) -> bool {
        let strict = outcome != Outcome::Allow;
        let judged = |v: &Value| self.judge(v, cwd).unwrap_or(strict);
        match value {
            Value::Array(items) if !matches!(self.innermost(), CompiledTest::OneOf(_)) => {
                if items.is_empty() {
                    false
                } else if strict {
                    items.iter().any(judged)
                } else {
                    items.iter().all(judged)
                }
            }
            v => judged(v),
        }
    }

    /// The test under any `not`s.
    fn innermost(&self) -> &CompiledTest {
        match self {
            CompiledTest::Not(inner) => inner.innermost(),
            other => other,
        }
    }

    /// Whether the test holds for one value: `None` when it cannot tell.
    fn judge(&self, value: &Value, cwd: Option<&Path>) -> Option<bool> {
        match self {
            CompiledTest::Inside(folders) => {
                let text = value.as_str()?;
                // As the disk resolves it (links followed), and by its words alone (as a
                // server that tidies `..` before it opens the path): both must agree.
                let by_disk = resolve_argument(text, cwd)?;
                let by_words = words_of_argument(text, cwd)?;
                let inside = |p: &Path| folders.iter().any(|f| p.starts_with(f));
                let (disk, words) = (inside(&by_disk), inside(&by_words));
                (disk == words).then_some(disk)
            }
            CompiledTest::Host(hosts) => {
                let host = host_of(value.as_str()?)?;
                Some(hosts.iter().any(|h| host_matches(h, &host)))
            }
            CompiledTest::Matches(re) => Some(re.is_match(value.as_str()?)),
            CompiledTest::Range(min, max) => {
                let n = value.as_f64()?;
                Some(min.is_none_or(|lo| n >= lo) && max.is_none_or(|hi| n <= hi))
            }
            CompiledTest::OneOf(values) => Some(values.iter().any(|v| same_value(v, value))),
            CompiledTest::Not(inner) => inner.judge(value, cwd).map(|held| !held),
        }
    }
}

/// Two JSON values the same, numbers by their value (`1` and `1.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[derive(Debug, Clone)]
struct CompiledRule {
    index: usize,
    rule: Rule,
    tests: Vec<(String, CompiledTest)>,
}

impl CompiledRule {
    fn specificity(&self) -> (u8, usize) {
        let named = u8::from(self.rule.server != "*") + 2 * u8::from(self.rule.tool.is_some());
        (named, self.tests.len())
    }

    fn names(&self, server: &str, tool: &str) -> bool {
        names_server(&self.rule.server, server)
            && self.rule.tool.as_deref().is_none_or(|t| t == tool)
    }

    fn applies(&self, arguments: Option<&Value>, cwd: Option<&Path>) -> bool {
        self.tests.iter().all(|(argument, test)| {
            arguments
                .and_then(|a| argument_at(a, argument))
                .is_some_and(|v| test.holds(v, cwd, self.rule.outcome))
        })
    }
}

fn names_server(pattern: &str, server: &str) -> bool {
    pattern == "*" || pattern.eq_ignore_ascii_case(server)
}

/// An argument by its name, or by a JSON pointer when it starts with `/`.
fn argument_at<'v>(arguments: &'v Value, argument: &str) -> Option<&'v Value> {
    if argument.starts_with('/') {
        arguments.pointer(argument)
    } else {
        arguments.get(argument)
    }
}

/// A policy file checked and ready to judge calls.
#[derive(Debug, Clone)]
pub struct Compiled {
    source: Source,
    rules: Vec<CompiledRule>,
    untrusted: Vec<Target>,
    review: Vec<Target>,
    allowed_servers: Option<Vec<String>>,
}

impl Default for Compiled {
    fn default() -> Self {
        Self {
            source: Source::User,
            rules: Vec::new(),
            untrusted: Vec::new(),
            review: Vec::new(),
            allowed_servers: None,
        }
    }
}

/// The rule that decided a call, in words a person reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct RuleHit {
    pub outcome: Outcome,
    pub source: Source,
    /// Its place in its file (`rules[2]`).
    pub index: usize,
    /// "rule 3 of policy.json: ask before fs · write_file when path is not inside ~/notes".
    pub said: String,
    /// Whether the rule names the tool itself (not every tool of a server, or of all).
    #[serde(skip)]
    #[ts(skip)]
    pub names_tool: bool,
    /// The rule alone in words ("block every tool of shell"), without its place.
    #[serde(skip)]
    #[ts(skip)]
    pub words: String,
}

impl Compiled {
    /// The rule that decides a call of `tool` on `server` with `arguments`, if any applies.
    pub fn judge(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<&Value>,
        cwd: Option<&Path>,
    ) -> Option<RuleHit> {
        let mut best: Option<&CompiledRule> = None;
        for rule in &self.rules {
            if !rule.names(server, tool) {
                continue;
            }
            let better = best.is_none_or(|b| {
                (rule.specificity(), rule.rule.outcome) > (b.specificity(), b.rule.outcome)
            });
            if better && rule.applies(arguments, cwd) {
                best = Some(rule);
            }
        }
        best.map(|r| self.hit(r))
    }

    /// Whether an unconditional rule blocks every call of `tool` (it is then not offered). A
    /// block that depends on arguments, or one a more specific rule overrides, does not.
    pub fn blocks_outright(&self, server: &str, tool: &str) -> Option<RuleHit> {
        if self.server_refused(server) {
            return Some(RuleHit {
                outcome: Outcome::Block,
                source: self.source,
                index: 0,
                said: format!(
                    "{}: “{server}” is not among the servers it allows",
                    self.source.file_words()
                ),
                names_tool: false,
                words: format!("only the servers it lists, not “{server}”"),
            });
        }
        let best = self
            .rules
            .iter()
            .filter(|r| r.names(server, tool))
            .max_by_key(|r| (r.specificity(), r.rule.outcome))?;
        (best.rule.outcome == Outcome::Block && best.tests.is_empty()).then(|| self.hit(best))
    }

    /// Whether the managed list of allowed servers leaves `server` out.
    pub fn server_refused(&self, server: &str) -> bool {
        self.allowed_servers
            .as_ref()
            .is_some_and(|allowed| !allowed.iter().any(|a| a.eq_ignore_ascii_case(server)))
    }

    pub fn is_untrusted(&self, server: &str, tool: &str) -> bool {
        self.untrusted.iter().any(|t| t.names(server, tool))
    }

    pub fn is_reviewed(&self, server: &str, tool: &str) -> bool {
        self.review.iter().any(|t| t.names(server, tool))
    }

    fn hit(&self, rule: &CompiledRule) -> RuleHit {
        RuleHit {
            outcome: rule.rule.outcome,
            source: self.source,
            index: rule.index,
            said: format!(
                "rule {} of {}: {}",
                rule.index + 1,
                self.source.file_words(),
                describe(&rule.rule)
            ),
            names_tool: rule.rule.tool.is_some(),
            words: describe(&rule.rule),
        }
    }
}

impl Source {
    fn file_words(self) -> &'static str {
        match self {
            Source::User => "your policy.json",
            Source::Managed => "your organisation's policy",
        }
    }
}

/// A rule in words: "ask before fs · write_file when path is not inside ~/notes".
pub fn describe(rule: &Rule) -> String {
    let verb = match rule.outcome {
        Outcome::Allow => "allow",
        Outcome::Ask => "ask before",
        Outcome::Block => "block",
    };
    let what = match (rule.server.as_str(), rule.tool.as_deref()) {
        ("*", None) => "every tool".to_owned(),
        ("*", Some(t)) => format!("{t} of any server"),
        (s, None) => format!("every tool of {s}"),
        (s, Some(t)) => format!("{s} · {t}"),
    };
    let mut said = format!("{verb} {what}");
    let tests: Vec<String> = rule
        .when
        .iter()
        .map(|(arg, test)| format!("{arg} {}", describe_test(test)))
        .collect();
    if !tests.is_empty() {
        said.push_str(" when ");
        said.push_str(&tests.join(" and "));
    }
    if let Some(note) = rule.note.as_deref().filter(|n| !n.trim().is_empty()) {
        said.push_str(&format!(" (“{}”)", note.trim()));
    }
    crate::text::escape_hidden(&said).into_owned()
}

fn describe_test(test: &Test) -> String {
    match test {
        Test::Inside(f) => format!("is inside {}", f.join(", ")),
        Test::Host(h) => format!("is on {}", h.join(", ")),
        Test::Matches(p) => format!("matches /{p}/"),
        Test::Range { min, max } => match (min, max) {
            (Some(lo), Some(hi)) => format!("is from {lo} to {hi}"),
            (Some(lo), None) => format!("is at least {lo}"),
            (None, Some(hi)) => format!("is at most {hi}"),
            (None, None) => "is any number".into(),
        },
        Test::OneOf(v) => format!(
            "is one of {}",
            v.iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Test::Not(inner) => match inner.as_ref() {
            Test::Inside(f) => format!("is not inside {}", f.join(", ")),
            Test::Host(h) => format!("is not on {}", h.join(", ")),
            other => format!("does not hold: {}", describe_test(other)),
        },
    }
}

/// `~` and `~/…` as the home folder.
pub fn expand_home(path: &str) -> PathBuf {
    let home = || dirs::home_dir().unwrap_or_default();
    if path == "~" {
        home()
    } else if let Some(rest) = path.strip_prefix("~/") {
        home().join(rest)
    } else {
        PathBuf::from(path)
    }
}

/// An argument's path as it would be opened: `~` expanded, a relative one taken from `cwd`
/// (none: not resolvable), then [`resolve`]d.
pub fn resolve_argument(path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    whole_argument(path, cwd).map(|whole| resolve(&whole))
}

/// An argument's path by its words alone: `~` expanded, a relative one taken from `cwd`,
/// `.` and `..` taken away without reading the disk (as Node's `path.resolve` does).
fn words_of_argument(path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    whole_argument(path, cwd).map(|whole| lexical(&whole))
}

/// An argument's path made whole, as written: a `file://` prefix dropped, `~` expanded, a
/// relative one taken from `cwd`. `None` for an empty path, one with a NUL, or a relative one
/// with no `cwd`.
fn whole_argument(path: &str, cwd: Option<&Path>) -> Option<PathBuf> {
    let path = path.strip_prefix("file://").unwrap_or(path);
    if path.is_empty() || path.contains('\0') {
        return None;
    }
    let expanded = expand_home(path);
    if expanded.is_absolute() {
        Some(expanded)
    } else {
        Some(cwd?.join(expanded))
    }
}

/// A whole path as the system would reach it: the longest part of it that exists with every
/// symlink and `..` followed (as the file system does), then the rest taken word by word.
pub fn resolve(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    let base = loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            break real;
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => {
                // Nothing of it exists (or it ends in `..`): words only.
                break lexical(path);
            }
        }
    };
    let mut out = base;
    for name in rest.into_iter().rev() {
        out.push(name);
    }
    lexical(&out)
}

/// `.` and `..` taken away by their words alone.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The host of a URL (or of `host/path` without a scheme), lower-case, an international name
/// in its `xn--` form. `None` for text whose host another parser could read otherwise: a
/// backslash, a user name before the host, a control character or a space.
fn host_of(text: &str) -> Option<String> {
    if text
        .chars()
        .any(|c| c == '\\' || c.is_control() || c.is_whitespace())
    {
        return None;
    }
    let parsed = url::Url::parse(text)
        .ok()
        .filter(|u| u.host_str().is_some())
        .or_else(|| url::Url::parse(&format!("https://{text}")).ok())?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return None;
    }
    parsed
        .host_str()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
}

/// A host pattern as [`host_of`] spells hosts: `*.` kept, the name in its `xn--` form.
fn host_pattern(pattern: &str) -> Option<String> {
    let (wild, bare) = match pattern.trim().strip_prefix("*.") {
        Some(bare) => ("*.", bare),
        None => ("", pattern.trim()),
    };
    let host = url::Url::parse(&format!("https://{bare}/")).ok()?;
    let host = host.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    Some(format!("{wild}{host}"))
}

fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|sub| sub.ends_with('.') && sub.len() > 1),
        None => pattern == host,
    }
}

/// Words for a path argument that lies outside a server's roots, or `None` when every path
/// argument lies inside one (or the server has no roots, or the call names no path). Path
/// arguments are found by name: `path`, `paths`, `file`, `directory`, `source`, `destination`
/// and names ending in `path`, `file` or `dir`.
pub fn path_outside_roots(
    arguments: Option<&Value>,
    roots: &[PathBuf],
    cwd: Option<&Path>,
) -> Option<String> {
    if roots.is_empty() {
        return None;
    }
    let roots: Vec<PathBuf> = roots.iter().map(|r| resolve(r)).collect();
    path_arguments(arguments)
        .find(|v| !resolve_argument(v, cwd).is_some_and(|p| roots.iter().any(|r| p.starts_with(r))))
        .map(|v| crate::text::escape_hidden(v).into_owned())
}

/// The first path argument (found as [`path_outside_roots`] finds them) that lies inside one of
/// `folders` by the disk or by its words.
pub fn path_inside(arguments: Option<&Value>, folders: &[PathBuf]) -> Option<String> {
    if folders.is_empty() {
        return None;
    }
    let folders: Vec<PathBuf> = folders.iter().map(|f| resolve(f)).collect();
    path_arguments(arguments)
        .find(|v| {
            [resolve_argument(v, None), words_of_argument(v, None)]
                .iter()
                .flatten()
                .any(|p| folders.iter().any(|f| p.starts_with(f)))
        })
        .map(|v| crate::text::escape_hidden(v).into_owned())
}

/// The text of each path argument (found by its name, [`is_path_name`]), a list's items one by
/// one.
fn path_arguments(arguments: Option<&Value>) -> impl Iterator<Item = &str> {
    let map = match arguments {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    };
    map.into_iter()
        .flatten()
        .filter(|(key, _)| is_path_name(key))
        .flat_map(|(_, value)| match value {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        })
}

fn is_path_name(key: &str) -> bool {
    const WORDS: [&str; 9] = [
        "path",
        "paths",
        "file",
        "files",
        "directory",
        "dir",
        "folder",
        "source",
        "destination",
    ];
    const ENDINGS: [&str; 8] = [
        "_path",
        "Path",
        "_file",
        "File",
        "_dir",
        "Dir",
        "_directory",
        "Directory",
    ];
    WORDS.contains(&key.to_ascii_lowercase().as_str()) || ENDINGS.iter().any(|e| key.ends_with(e))
}

/// The rule a dialog offers to make from a call: allow the tool, when each path argument lies
/// inside the folder that holds it now and each URL argument is on its host now.
/// `None` when a path or URL argument cannot be pinned down (a relative path, a host another
/// parser could read otherwise): a rule without its test would allow far more than the call.
pub fn suggest(server: &str, tool: &str, arguments: Option<&Value>) -> Option<Rule> {
    let mut when = BTreeMap::new();
    if let Some(Value::Object(map)) = arguments {
        for (key, value) in map {
            let Some(text) = value.as_str() else { continue };
            if is_path_name(key) {
                let folder = resolve_argument(text, None)
                    .and_then(|p| p.parent().map(Path::to_path_buf))
                    .filter(|f| f.parent().is_some())?;
                when.insert(
                    key.clone(),
                    Test::Inside(vec![folder.to_string_lossy().into_owned()]),
                );
            } else if is_url_name(key) {
                let host = host_of(text).filter(|_| text.contains("://"))?;
                when.insert(key.clone(), Test::Host(vec![host]));
            }
        }
    }
    Some(Rule {
        server: server.to_owned(),
        tool: Some(tool.to_owned()),
        when,
        outcome: Outcome::Allow,
        note: None,
    })
}

fn is_url_name(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    matches!(k.as_str(), "url" | "uri" | "href" | "link" | "endpoint")
        || key.ends_with("_url")
        || key.ends_with("Url")
        || key.ends_with("URL")
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
