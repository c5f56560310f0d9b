//! What every verb of the command line prints and fails with: `--json` output, plain tables,
//! and [`CliError`], the command line's typed error (a usage mistake, the app's own error, a
//! failure already printed), which `main` turns into an exit code.

use std::io::Write;

use crate::CoreError;

/// `value` as pretty JSON and a newline (every `--json`).
pub(crate) fn json_out(
    out: &mut impl Write,
    value: &impl serde::Serialize,
) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| CliError::Output(e.to_string()))?;
    writeln!(out)?;
    Ok(())
}

/// A list as `--json` prints it; else a table of `header` with one `row` for each item, or
/// the sentence `none` when there are none.
pub(crate) fn list_out<T: serde::Serialize, const N: usize>(
    out: &mut impl Write,
    json: bool,
    items: &[T],
    none: &str,
    header: [&str; N],
    row: impl Fn(&T) -> [String; N],
) -> Result<(), CliError> {
    if json {
        return json_out(out, &items);
    }
    if items.is_empty() {
        writeln!(out, "{none}")?;
        return Ok(());
    }
    let rows: Vec<[String; N]> = items.iter().map(row).collect();
    write_table(out, header, &rows)?;
    Ok(())
}

pub(crate) fn write_table<const N: usize>(
    out: &mut impl Write,
    header: [&str; N],
    rows: &[[String; N]],
) -> std::io::Result<()> {
    let mut widths = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    writeln!(out, "{}", line(header.to_vec()))?;
    for row in rows {
        writeln!(out, "{}", line(row.iter().map(String::as_str).collect()))?;
    }
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    #[error(transparent)]
    Core(#[from] CoreError),
    #[error("Cannot read the API key: {0}")]
    KeyVariable(String),
    #[error("Cannot write the output: {0}")]
    Output(String),
    #[error("{0}")]
    Usage(String),
    /// The failure was already printed as the command's output.
    #[error("the command failed (said above)")]
    Failed,
    #[error(transparent)]
    ShellCommand(#[from] crate::shell_command::ShellCommandError),
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Output(e.to_string())
    }
}
