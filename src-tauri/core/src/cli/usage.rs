//! `switchboard usage`: what the models were asked and what it cost, by day (UTC), provider and
//! model, since a day (the last 30 days unless `--since` says), with `--json` for scripts.

use std::io::Write;
use std::sync::Arc;

use clap::Args;

use super::output::{json_out, write_table, CliError};
use crate::price::usd;
use crate::App;

#[derive(Debug, Args)]
pub(crate) struct UsageArgs {
    /// The first day counted, YYYY-MM-DD (UTC); the last 30 days otherwise.
    #[arg(long, value_name = "DATE", value_parser = since_day)]
    since: Option<i64>,
    #[arg(long)]
    json: bool,
}

/// Midnight UTC of `YYYY-MM-DD`, in milliseconds since 1970.
pub(super) fn since_day(text: &str) -> Result<i64, String> {
    chrono::NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc().timestamp_millis())
        .ok_or_else(|| format!("“{text}” is not a day written YYYY-MM-DD"))
}

pub(crate) async fn run(
    app: &Arc<App>,
    args: UsageArgs,
    out: &mut impl Write,
) -> Result<(), CliError> {
    const THIRTY_DAYS_MS: i64 = 30 * 24 * 60 * 60 * 1000;
    let since = args
        .since
        .unwrap_or_else(|| crate::store::now_ms() - THIRTY_DAYS_MS);
    let report = app.usage().since(since).await?;
    if args.json {
        return json_out(out, &report);
    }
    if report.days.is_empty() {
        writeln!(out, "No model was asked anything in that time.")?;
        return Ok(());
    }
    let cost = |total: &crate::store::UsageTotal| {
        let priced = usd(u64::try_from(total.cost_pico).unwrap_or(0));
        match (total.unpriced, total.unpriced == total.requests) {
            (0, _) => priced,
            (_, true) => "no price".to_owned(),
            (n, false) => format!("{priced} + {n} unpriced"),
        }
    };
    let rows: Vec<[String; 7]> = report
        .days
        .iter()
        .map(|d| {
            [
                d.day.clone(),
                crate::text::one_line(&d.provider, 30),
                crate::text::one_line(&d.model, 40),
                d.total.requests.to_string(),
                in_tokens(&d.total),
                d.total.output_tokens.to_string(),
                cost(&d.total),
            ]
        })
        .collect();
    write_table(
        out,
        ["DAY", "PROVIDER", "MODEL", "REQUESTS", "IN", "OUT", "COST"],
        &rows,
    )?;
    writeln!(
        out,
        "In all: {} requests, {} tokens in, {} out, {}.",
        report.total.requests,
        in_tokens(&report.total),
        report.total.output_tokens,
        cost(&report.total)
    )?;
    Ok(())
}

/// Input tokens, with those read from the provider's cache in brackets when there were any.
fn in_tokens(total: &crate::store::UsageTotal) -> String {
    match total.cached_input_tokens {
        0 => total.input_tokens.to_string(),
        cached => format!("{} ({cached} cached)", total.input_tokens),
    }
}
