//! `switchboard provider …`: add, list, remove, test providers and list their models. Keys never
//! appear on a command line: `--key-from-env VAR` reads one from the environment once and
//! stores it in the keychain.

use std::io::Write;

use clap::{builder::NonEmptyStringValueParser, Subcommand};
use secrecy::SecretString;

use super::output::{json_out, list_out, CliError};
use crate::app::NewProvider;
use crate::price;
use crate::provider_config::{preset_by_id, Preset, ProviderKind, PRESETS};
use crate::App;

#[derive(Debug, Subcommand)]
pub(crate) enum ProviderCommand {
    /// Add a provider.
    Add(AddArgs),
    /// List providers.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider and its key.
    Remove { name: String },
    /// Ask a provider for its models and say what worked or exactly what failed.
    Test { name: String },
    /// Say whether a model takes images (attached images are sent only to models that do):
    /// `on`, `off`, or `auto` (as its family is known to).
    Images {
        name: String,
        model: String,
        #[arg(value_parser = ["on", "off", "auto"])]
        takes: String,
    },
    /// Set what a model costs, in dollars per million tokens (`--input` and `--output`
    /// together, `--cached` for cached input), `--none` to forget it; with neither, show it.
    Price(PriceArgs),
    /// Every model with a price: yours, or what its provider's model list says.
    Prices {
        #[arg(long)]
        json: bool,
    },
    /// Set how many tokens a model's window holds (what Switchboard fits each request into),
    /// `--forget` to forget yours and one learned from a refusal; with neither, say what it is
    /// and whose word that is.
    Window {
        name: String,
        model: String,
        #[arg(conflicts_with = "forget")]
        tokens: Option<u64>,
        #[arg(long)]
        forget: bool,
        #[arg(long)]
        json: bool,
    },
    /// Say how a model is given tools: `native` (its API's own tool calling), `prompted`
    /// (described in its system prompt and called in text, for a model without tool calling
    /// of its own), `off` (none), or `auto` (forget your word); with none of these, say how
    /// and whose word that is.
    Tools {
        name: String,
        model: String,
        #[arg(value_parser = ["native", "prompted", "off", "auto"])]
        mode: Option<String>,
        /// Print JSON instead of a sentence.
        #[arg(long)]
        json: bool,
    },
    /// Every model whose window is known from you, a provider's refusal or its model list.
    Windows {
        #[arg(long)]
        json: bool,
    },
    /// Fetch a model onto a local provider's machine (Ollama), with a progress line on a
    /// terminal; `--json` prints each step as a line of JSON. Ctrl-C stops it (the server
    /// keeps what it fetched and goes on from there next time).
    Pull {
        name: String,
        model: String,
        #[arg(long)]
        json: bool,
    },
    /// Delete an installed model from a local provider's machine (Ollama).
    Rm {
        name: String,
        model: String,
        #[arg(long)]
        json: bool,
    },
    /// List the models a provider offers.
    Models {
        name: String,
        /// Print JSON instead of one id per line.
        #[arg(long)]
        json: bool,
    },
}

/// The arguments of `add`.
#[derive(Debug, clap::Args)]
pub(crate) struct AddArgs {
    /// A name for it, such as "OpenAI" or "Local Ollama".
    name: String,
    /// What kind of API it speaks.
    #[arg(long, value_enum, required_unless_present = "preset")]
    kind: Option<ProviderKind>,
    /// A known host (openai, groq, lm_studio, llama_cpp, vllm, …): sets the kind and address.
    #[arg(long, conflicts_with = "kind", value_parser = preset_id)]
    preset: Option<&'static Preset>,
    /// Where it listens; defaults to the preset's or kind's usual address.
    #[arg(long)]
    base_url: Option<String>,
    /// The model to use unless a conversation picks another.
    #[arg(long)]
    model: Option<String>,
    /// Read the API key from this environment variable (once) and store it in the keychain.
    #[arg(long, value_name = "VAR")]
    key_from_env: Option<String>,
}

/// The arguments of `price`.
#[derive(Debug, clap::Args)]
pub(crate) struct PriceArgs {
    name: String,
    model: String,
    #[arg(long, value_name = "USD", value_parser = NonEmptyStringValueParser::new(), requires = "output", conflicts_with = "none")]
    input: Option<String>,
    #[arg(long, value_name = "USD", value_parser = NonEmptyStringValueParser::new(), requires = "input")]
    output: Option<String>,
    #[arg(long, value_name = "USD", value_parser = NonEmptyStringValueParser::new(), requires = "input")]
    cached: Option<String>,
    #[arg(long)]
    none: bool,
    #[arg(long)]
    json: bool,
}

fn preset_id(id: &str) -> Result<&'static Preset, String> {
    preset_by_id(id).ok_or_else(|| {
        let known: Vec<&str> = PRESETS.iter().map(|p| p.id).collect();
        format!("unknown preset; known: {}", known.join(", "))
    })
}

pub(crate) async fn run(
    app: &App,
    command: ProviderCommand,
    out: &mut impl Write,
) -> Result<(), CliError> {
    match command {
        ProviderCommand::Add(args) => add(app, args, out).await,
        ProviderCommand::List { json } => list(app, json, out).await,
        ProviderCommand::Remove { name } => remove(app, name, out).await,
        ProviderCommand::Price(args) => price(app, args, out).await,
        ProviderCommand::Prices { json } => prices(app, json, out).await,
        ProviderCommand::Window {
            name,
            model,
            tokens,
            forget,
            json,
        } => window(app, name, model, tokens, forget, json, out).await,
        ProviderCommand::Windows { json } => windows(app, json, out).await,
        ProviderCommand::Tools {
            name,
            model,
            mode,
            json,
        } => tools(app, name, model, mode, json, out).await,
        ProviderCommand::Images { name, model, takes } => {
            images(app, name, model, takes, out).await
        }
        ProviderCommand::Test { name } => test(app, name, out).await,
        ProviderCommand::Models { name, json } => models(app, name, json, out).await,
        ProviderCommand::Pull { name, model, json } => pull(app, name, model, json, out).await,
        ProviderCommand::Rm { name, model, json } => {
            app.providers().remove_model(&name, &model).await?;
            if json {
                json_out(
                    out,
                    &serde_json::json!({"removed": model.trim(), "provider": name.trim()}),
                )?;
            } else {
                writeln!(out, "Removed “{}” from “{}”.", model.trim(), name.trim())?;
            }
            Ok(())
        }
    }
}

async fn add(app: &App, args: AddArgs, out: &mut impl Write) -> Result<(), CliError> {
    let AddArgs {
        name,
        kind,
        preset,
        base_url,
        model,
        key_from_env,
    } = args;
    let kind = match (kind, preset) {
        (Some(kind), _) => kind,
        (None, Some(p)) => p.kind,
        (None, None) => unreachable!("clap requires --kind or --preset"),
    };
    let base_url = base_url.or_else(|| {
        preset
            .filter(|p| !p.base_url.is_empty())
            .map(|p| p.base_url.to_owned())
    });
    let api_key = match key_from_env {
        None => None,
        Some(var) => Some(read_key(&var)?),
    };
    let provider = app
        .providers()
        .add(NewProvider {
            name,
            kind: Some(kind.as_str().to_owned()),
            base_url,
            default_model: model,
            api_key,
        })
        .await?;
    writeln!(
        out,
        "Added provider “{}” ({}, {}){}.",
        provider.name,
        kind.info().label,
        provider.base_url,
        if provider.has_key {
            "; its key is in the OS keychain"
        } else {
            ""
        }
    )?;
    Ok(())
}

async fn list(app: &App, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let providers = app.providers().list().await?;
    let keychain = app.keychain_status().await;
    if !keychain.available && !providers.is_empty() {
        super::terminal::say!(
            "switchboard: {} — the KEY column cannot be checked.",
            keychain.message
        );
    }
    list_out(
        out,
        json,
        &providers,
        "No providers yet. Add one with: switchboard provider add NAME --kind KIND",
        ["NAME", "KIND", "BASE URL", "MODEL", "KEY"],
        |p| {
            [
                p.name.clone(),
                p.kind.as_str().to_owned(),
                p.base_url.clone(),
                p.default_model.clone().unwrap_or_else(|| "-".into()),
                if p.has_key { "stored" } else { "none" }.to_owned(),
            ]
        },
    )?;
    Ok(())
}

async fn remove(app: &App, name: String, out: &mut impl Write) -> Result<(), CliError> {
    app.remove_provider(&name).await?;
    writeln!(out, "Removed provider “{}” and its key.", name.trim())?;
    Ok(())
}

async fn price(app: &App, args: PriceArgs, out: &mut impl Write) -> Result<(), CliError> {
    let PriceArgs {
        name,
        model,
        input,
        output,
        cached,
        none,
        json,
    } = args;
    let now = match (input.is_some() || output.is_some(), none) {
        (true, _) => {
            // Read as the window's form reads it; a refusal names the flag and value.
            let typed = (input.as_deref(), output.as_deref(), cached.as_deref());
            let price = price::typed(typed.0, typed.1, typed.2).map_err(|e| {
                let given = match e.field() {
                    "input" => typed.0,
                    "output" => typed.1,
                    _ => typed.2,
                };
                CliError::Usage(format!("--{} {}: {e}", e.field(), given.unwrap_or("")))
            })?;
            app.usage().set_price(&name, &model, price).await?
        }
        (false, true) => app.usage().set_price(&name, &model, None).await?,
        (false, false) => app.usage().price(&name, &model).await?,
    };
    if json {
        return json_out(out, &now);
    }
    match now {
        Some(p) => writeln!(out, "{}", price_line(&p))?,
        None => writeln!(
            out,
            "“{}” of “{}” has no price: its answers show tokens only.",
            model.trim(),
            name.trim()
        )?,
    }
    Ok(())
}

async fn prices(app: &App, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let prices = app.usage().prices().await?;
    if json {
        return json_out(out, &prices);
    }
    if prices.is_empty() {
        writeln!(out, "No model has a price yet.")?;
    }
    for p in &prices {
        writeln!(out, "{}", price_line(p))?;
    }
    Ok(())
}

async fn window(
    app: &App,
    name: String,
    model: String,
    tokens: Option<u64>,
    forget: bool,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let now = match (tokens, forget) {
        (Some(tokens), _) => {
            app.providers()
                .set_window(&name, &model, Some(tokens))
                .await?
        }
        (None, true) => app.providers().set_window(&name, &model, None).await?,
        (None, false) => app.providers().window(&name, &model).await?,
    };
    if json {
        return json_out(out, &now);
    }
    match now {
        Some(w) => writeln!(out, "{}", window_line(&w))?,
        None => writeln!(
            out,
            "The window of “{}” of “{}” is not known yet: set it with `switchboard provider \
                 window {} {} TOKENS`, or it is learned the first time the provider refuses a \
                 request over it.",
            model.trim(),
            name.trim(),
            shell_word(name.trim()),
            shell_word(model.trim())
        )?,
    }
    Ok(())
}

async fn windows(app: &App, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let windows = app.providers().windows().await?;
    if json {
        return json_out(out, &windows);
    }
    if windows.is_empty() {
        writeln!(out, "No model's window is recorded yet.")?;
    }
    for w in &windows {
        writeln!(out, "{}", window_line(w))?;
    }
    Ok(())
}

async fn tools(
    app: &App,
    name: String,
    model: String,
    mode: Option<String>,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    use crate::app::ToolModeSource;
    use crate::providers::ToolMode;
    let providers = app.providers();
    let now = match mode.as_deref() {
        None => providers.tool_mode(&name, &model).await?,
        Some(word) => {
            providers
                .set_tool_mode(&name, &model, ToolMode::parse(word))
                .await?
        }
    };
    if json {
        return json_out(out, &now);
    }
    let how = match now.mode {
        ToolMode::Native => "calls tools through its API's own tool calling",
        ToolMode::Prompted => "is given tools in its system prompt and calls them in text",
        ToolMode::Off => "is given no tools",
    };
    let whose = match now.source {
        ToolModeSource::Person => "your word",
        ToolModeSource::Learned => "learned from its server",
        ToolModeSource::Default => "the default",
    };
    writeln!(
        out,
        "“{}” of “{}” {how} ({whose}).",
        model.trim(),
        name.trim()
    )?;
    Ok(())
}

async fn images(
    app: &App,
    name: String,
    model: String,
    takes: String,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let takes = match takes.as_str() {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    };
    app.set_model_takes_images(&name, &model, takes).await?;
    let now = app.model_media(&name, &model).await?;
    writeln!(
        out,
        "“{}” of “{}” {} images{}.",
        model.trim(),
        name.trim(),
        if now.images.is_some() {
            "takes"
        } else {
            "does not take"
        },
        if takes.is_none() {
            " (as its family is known to)"
        } else {
            ""
        }
    )?;
    Ok(())
}

async fn test(app: &App, name: String, out: &mut impl Write) -> Result<(), CliError> {
    let report = app.providers().test(&name).await?;
    writeln!(out, "{}", report.message)?;
    for model in report.models.iter().take(10) {
        writeln!(out, "  {}", model.id)?;
    }
    if report.models.len() > 10 {
        writeln!(out, "  … and {} more", report.models.len() - 10)?;
    }
    if !report.ok {
        return Err(CliError::Failed);
    }
    Ok(())
}

async fn models(app: &App, name: String, json: bool, out: &mut impl Write) -> Result<(), CliError> {
    let models = app.providers().models(&name).await?;
    if json {
        json_out(out, &models)?;
    } else {
        for model in models {
            // A local model's details after its id: size, family, parameters, quantisation,
            // window, and what it takes.
            let mut about: Vec<String> = Vec::new();
            if let Some(local) = &model.local {
                about.extend(local.size_bytes.map(bytes));
                about.extend(local.family.clone());
                about.extend(local.parameters.clone());
                about.extend(local.quantisation.clone());
            }
            about.extend(model.window.map(|w| format!("{w} tokens")));
            about.extend(
                model
                    .takes_tools
                    .map(|t| if t { "calls tools" } else { "no tool calling" }.to_owned()),
            );
            about.extend(
                model
                    .takes_images
                    .filter(|t| *t)
                    .map(|_| "images".to_owned()),
            );
            if about.is_empty() {
                writeln!(out, "{}", model.id)?;
            } else {
                writeln!(out, "{}\t{}", model.id, about.join(" · "))?;
            }
        }
    }
    Ok(())
}

async fn pull(
    app: &App,
    name: String,
    model: String,
    json: bool,
    out: &mut impl Write,
) -> Result<(), CliError> {
    use std::io::IsTerminal;
    let line = !json && std::io::stderr().is_terminal();
    let mut failed_write = None;
    let pulled = app
        .providers()
        .pull_model(&name, &model, |step| {
            if json {
                let written = serde_json::to_string(step)
                    .map_err(std::io::Error::other)
                    .and_then(|text| writeln!(out, "{text}"));
                if let Err(e) = written {
                    failed_write.get_or_insert(e);
                }
            } else if line {
                // One line, written over as the download goes (the server's words escaped).
                let mut err = std::io::stderr().lock();
                let _ = write!(err, "\r\x1b[2K{}", pull_line(step));
                let _ = err.flush();
            }
        })
        .await;
    if line {
        eprintln!();
    }
    if let Some(e) = failed_write {
        return Err(e.into());
    }
    pulled?;
    if !json {
        writeln!(out, "Fetched “{}” onto “{}”.", model.trim(), name.trim())?;
    }
    Ok(())
}

/// A download's step as one line: the server's words, then bytes, share, speed and time left.
fn pull_line(step: &crate::app::PullProgress) -> String {
    // One line: the server's line breaks and tabs are spaces, its hidden characters escaped.
    let flat: String = step
        .status
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(80)
        .collect();
    let mut line = crate::text::escape_hidden(&flat).into_owned();
    if let (Some(done), Some(total)) = (step.completed, step.total) {
        #[allow(clippy::cast_precision_loss)]
        let share = if total > 0 {
            done as f64 * 100.0 / total as f64
        } else {
            0.0
        };
        line.push_str(&format!(
            "  {} / {}  {share:.0}%",
            bytes(done),
            bytes(total)
        ));
    }
    if let Some(speed) = step.bytes_per_second {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        line.push_str(&format!(" · {}/s", bytes(speed.max(0.0) as u64)));
    }
    if let Some(left) = step.seconds_left {
        line.push_str(&format!(" · {} left", seconds(left)));
    }
    line
}

/// Bytes in decimal units, as Ollama writes them (`4.7 GB`).
fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    #[allow(clippy::cast_precision_loss)]
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// A time left as `42 s`, `3 min 5 s` or `1 h 20 min`.
fn seconds(left: f64) -> String {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let s = left.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

fn read_key(var: &str) -> Result<SecretString, CliError> {
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Ok(SecretString::from(value.trim().to_owned())),
        Ok(_) => Err(CliError::KeyVariable(format!(
            "the variable {var} is empty"
        ))),
        Err(std::env::VarError::NotPresent) => Err(CliError::KeyVariable(format!(
            "the variable {var} is not set"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(CliError::KeyVariable(format!(
            "the variable {var} is not valid text"
        ))),
    }
}

/// One model's window for a person: its tokens, and whose word it is.
fn window_line(w: &crate::store::ModelWindow) -> String {
    format!(
        "“{}” of “{}”: {} tokens (said by {})",
        w.model, w.provider, w.tokens, w.said_by
    )
}

/// `word` as one shell word, quoted when it needs it.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One model's price for a person: dollars per million tokens, and whose word it is.
fn price_line(p: &crate::store::ModelPrice) -> String {
    let cached = p
        .price
        .cached_input
        .map(|c| format!(", cached input ${}", price::usd_per_million(c)))
        .unwrap_or_default();
    format!(
        "“{}” of “{}”: input ${}, output ${}{cached} per million tokens (said by {}).",
        p.model,
        p.provider,
        price::usd_per_million(p.price.input),
        price::usd_per_million(p.price.output),
        p.said_by
    )
}
