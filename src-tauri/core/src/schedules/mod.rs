//! Scheduled runs (issue 61): a prompt sent on a time rule, unattended. This module owns what a
//! schedule is ([`Schedule`], [`NewSchedule`]), its time rules ([`TimeRule`]: every N minutes,
//! every N days at a time of day — on weekdays only, if asked — or once), when a rule is next
//! due in the person's time zone ([`TimeRule::next_after`], which lets jiff carry a time that a
//! clock change skips or repeats), what a late run is ([`due_now`]: run once, however many
//! times it was missed, or skip, as the schedule says), and the lock that makes one process per
//! home the one that runs schedules ([`RunnerLock`]). Running one is [`crate::app`]'s.

pub mod timer;

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use jiff::civil::{Date, Time, Weekday};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::input::InvalidInput;

/// The shortest period of an `every` rule.
pub const MIN_EVERY_MINUTES: u32 = 5;
/// The longest period of an `every` rule: a year.
pub const MAX_EVERY_MINUTES: u32 = 366 * 24 * 60;
/// The most days between two runs of a daily rule.
pub const MAX_EVERY_DAYS: u32 = 366;
/// A run this late (the computer slept, no runner was alive) was missed: it runs once, or is
/// skipped, as the schedule says. Runners look every minute, so a run that is on time is never
/// this late.
pub const LATE_AFTER_MS: i64 = 5 * 60 * 1000;
/// How long a call that would ask waits for the person, unless the schedule says otherwise.
pub const DEFAULT_APPROVAL_WAIT_MINUTES: u32 = 30;
/// The longest a scheduled run's call may wait for the person: a day.
pub const MAX_APPROVAL_WAIT_MINUTES: u32 = 24 * 60;
/// The longest name.
pub const MAX_NAME_CHARS: usize = 80;
/// The longest prompt.
pub const MAX_PROMPT_CHARS: usize = 100_000;

/// When a schedule runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimeRule {
    /// Every `minutes`, counted from when the schedule was made.
    Every { minutes: u32 },
    /// Every `days` days (counted from the day the schedule was made) at `at` (`HH:MM`, the
    /// person's local time); with `weekdays_only`, a day that falls on a Saturday or Sunday is
    /// passed over.
    Daily {
        days: u32,
        at: String,
        #[serde(default)]
        weekdays_only: bool,
    },
    /// Once, at this moment (ms since the epoch).
    Once {
        #[ts(type = "number")]
        at: i64,
    },
}

/// What happens to a run that was missed (the computer was off or asleep at its time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS, Default)]
#[serde(rename_all = "snake_case")]
pub enum Missed {
    /// It runs once at the next start, however many times it was missed.
    #[default]
    RunOnce,
    /// It is recorded as skipped; the schedule waits for its next time.
    Skip,
}

/// A schedule as the person writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct NewSchedule {
    pub name: String,
    pub prompt: String,
    pub rule: TimeRule,
    /// The profile its conversations start from (its model, tools, system prompt and skills);
    /// `None`: the default profile.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub profile: Option<String>,
    /// A provider (and model) in place of the profile's.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub provider: Option<String>,
    #[serde(default)]
    #[ts(optional = nullable)]
    pub model: Option<String>,
    #[serde(default)]
    pub missed: Missed,
    /// How long a call that would ask waits for the person before it is denied.
    pub approval_wait_minutes: u32,
}

/// A schedule as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct Schedule {
    pub id: String,
    #[serde(flatten)]
    #[ts(flatten)]
    pub fields: NewSchedule,
    pub enabled: bool,
    /// When it was made (ms): where `every` and `daily` rules count from.
    #[ts(type = "number")]
    pub created_at: i64,
    /// When it runs next (ms); `None`: never again (a `once` that ran, or one switched off).
    #[ts(type = "number | null")]
    pub next_at: Option<i64>,
    /// The rule in words ("every day at 08:00, weekdays only").
    pub rule_text: String,
}

impl NewSchedule {
    /// The schedule with its text trimmed, or what is wrong with it.
    ///
    /// # Errors
    /// A blank or over-long name or prompt, a rule out of range, a wait out of range.
    pub fn validated(mut self) -> Result<NewSchedule, InvalidInput> {
        let name = crate::text::one_line(&self.name, MAX_NAME_CHARS + 1);
        if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
            return Err(InvalidInput::new(
                "name",
                format!("A schedule needs a name of 1 to {MAX_NAME_CHARS} characters."),
            ));
        }
        if crate::text::is_blank(&self.prompt) || self.prompt.chars().count() > MAX_PROMPT_CHARS {
            return Err(InvalidInput::new(
                "prompt",
                format!("A schedule needs a prompt of up to {MAX_PROMPT_CHARS} characters."),
            ));
        }
        self.name = name;
        self.rule.check()?;
        if let TimeRule::Daily { at, .. } = &mut self.rule {
            // Kept as the clock shows it: "8:5" is "08:05".
            *at = clock(at)?.strftime("%H:%M").to_string();
        }
        if self.approval_wait_minutes > MAX_APPROVAL_WAIT_MINUTES {
            return Err(InvalidInput::new(
                "approval_wait_minutes",
                format!("A run waits for an approval at most {MAX_APPROVAL_WAIT_MINUTES} minutes."),
            ));
        }
        for field in [&mut self.profile, &mut self.provider, &mut self.model] {
            *field = field
                .take()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty());
        }
        Ok(self)
    }
}

impl TimeRule {
    /// Reads the command line's `--every 30m|6h|1d|2d [--at HH:MM] [--weekdays]`.
    ///
    /// # Errors
    /// A period that is not a number with `m`, `h` or `d`; `--at` with a period in minutes or
    /// hours; a time that is not `HH:MM`.
    pub fn from_every(
        every: &str,
        at: Option<&str>,
        weekdays_only: bool,
    ) -> Result<TimeRule, InvalidInput> {
        let every = every.trim();
        let bad = || {
            InvalidInput::new(
                "every",
                format!("“{every}” is not a period: write a number and m, h or d (30m, 6h, 1d)."),
            )
        };
        let (number, unit) = every.split_at(every.len().saturating_sub(1));
        let n: u32 = number.trim().parse().map_err(|_| bad())?;
        let rule = match (unit, at) {
            ("d", Some(at)) => TimeRule::Daily {
                days: n,
                at: at.trim().to_owned(),
                weekdays_only,
            },
            ("d", None) if weekdays_only => TimeRule::Daily {
                days: n,
                at: "09:00".into(),
                weekdays_only,
            },
            ("m" | "h" | "d", None) => TimeRule::Every {
                minutes: n.saturating_mul(match unit {
                    "m" => 1,
                    "h" => 60,
                    _ => 24 * 60,
                }),
            },
            ("m" | "h", Some(_)) => {
                return Err(InvalidInput::new(
                    "at",
                    "--at goes with a period in days (--every 1d --at 08:00).",
                ))
            }
            _ => return Err(bad()),
        };
        if weekdays_only && !matches!(rule, TimeRule::Daily { .. }) {
            return Err(InvalidInput::new(
                "weekdays",
                "--weekdays goes with a period in days.",
            ));
        }
        rule.check()?;
        Ok(rule)
    }

    fn check(&self) -> Result<(), InvalidInput> {
        match self {
            TimeRule::Every { minutes } => {
                if !(MIN_EVERY_MINUTES..=MAX_EVERY_MINUTES).contains(minutes) {
                    return Err(InvalidInput::new(
                        "every",
                        format!("A schedule runs at most every {MIN_EVERY_MINUTES} minutes and at least once a year."),
                    ));
                }
            }
            TimeRule::Daily {
                days,
                at,
                weekdays_only,
            } => {
                if !(1..=MAX_EVERY_DAYS).contains(days) {
                    return Err(InvalidInput::new(
                        "every",
                        format!("Every 1 to {MAX_EVERY_DAYS} days."),
                    ));
                }
                if *weekdays_only && *days != 1 {
                    return Err(InvalidInput::new(
                        "weekdays",
                        "Weekdays only goes with every day (--every 1d).",
                    ));
                }
                clock(at)?;
            }
            TimeRule::Once { at } => {
                if Timestamp::from_millisecond(*at).is_err() {
                    return Err(InvalidInput::new("once", "That moment is out of range."));
                }
            }
        }
        Ok(())
    }

    /// The first time after `after` (ms) that the rule is due, for a schedule made at `made`
    /// (ms), in time zone `tz`; `None`: never.
    pub fn next_after(&self, made: i64, after: i64, tz: &TimeZone) -> Option<i64> {
        match self {
            TimeRule::Every { minutes } => {
                let period = i64::from((*minutes).max(1)) * 60_000;
                let periods = if after < made {
                    0
                } else {
                    (after - made) / period + 1
                };
                Some(made + periods * period)
            }
            TimeRule::Once { at } => (*at > after).then_some(*at),
            TimeRule::Daily {
                days,
                at,
                weekdays_only,
            } => {
                let time = clock(at).ok()?;
                let first = Timestamp::from_millisecond(made)
                    .ok()?
                    .to_zoned(tz.clone())
                    .date();
                let start = Timestamp::from_millisecond(after)
                    .ok()?
                    .to_zoned(tz.clone())
                    .date();
                let mut day = if start < first { first } else { start };
                // Two periods and a weekend cover every case; a year bounds the walk.
                for _ in 0..(2 * MAX_EVERY_DAYS + 7) {
                    let counted = day_number(day) - day_number(first);
                    let weekday_ok = !*weekdays_only
                        || !matches!(day.weekday(), Weekday::Saturday | Weekday::Sunday);
                    if counted % i64::from((*days).max(1)) == 0 && weekday_ok {
                        // A time a clock change skips is carried forward; one it repeats is
                        // its first (jiff's "compatible" reading).
                        let when = day.to_datetime(time).to_zoned(tz.clone()).ok()?;
                        let ms = when.timestamp().as_millisecond();
                        if ms > after {
                            return Some(ms);
                        }
                    }
                    day = day.tomorrow().ok()?;
                }
                None
            }
        }
    }

    /// The rule in words.
    pub fn text(&self, tz: &TimeZone) -> String {
        match self {
            TimeRule::Every { minutes } => match *minutes {
                m if m % (24 * 60) == 0 && m / (24 * 60) == 1 => "every day".into(),
                m if m % (24 * 60) == 0 => format!("every {} days", m / (24 * 60)),
                60 => "every hour".into(),
                m if m % 60 == 0 => format!("every {} hours", m / 60),
                m => format!("every {m} minutes"),
            },
            TimeRule::Daily {
                days,
                at,
                weekdays_only,
            } => {
                let every = match days {
                    1 => "every day".to_owned(),
                    n => format!("every {n} days"),
                };
                let weekdays = if *weekdays_only {
                    ", weekdays only"
                } else {
                    ""
                };
                format!("{every} at {at}{weekdays}")
            }
            TimeRule::Once { at } => match moment_text(*at, tz) {
                Some(when) => format!("once, {when}"),
                None => "once".into(),
            },
        }
    }
}

/// A moment (ms) as "2026-12-07 08:00" in time zone `tz`; `None` when it is out of range.
pub fn moment_text(ms: i64, tz: &TimeZone) -> Option<String> {
    let t = Timestamp::from_millisecond(ms).ok()?;
    Some(
        t.to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
    )
}

/// `HH:MM` as a time of day.
fn clock(text: &str) -> Result<Time, InvalidInput> {
    let bad = || {
        InvalidInput::new(
            "at",
            format!("“{text}” is not a time of day: write HH:MM (08:00)."),
        )
    };
    let (h, m) = text.trim().split_once(':').ok_or_else(bad)?;
    let digits = |t: &str| (1..=2).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return Err(bad());
    }
    let (h, m): (i8, i8) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    Time::new(h, m, 0, 0).map_err(|_| bad())
}

/// Days since 1970-01-01 of a civil date.
fn day_number(day: Date) -> i64 {
    let epoch = Date::constant(1970, 1, 1);
    day.duration_since(epoch).as_secs().div_euclid(86_400)
}

/// Reads "YYYY-MM-DD HH:MM" (or `T` between) as a moment in time zone `tz`.
///
/// # Errors
/// It is not such a date and time.
pub fn moment(text: &str, tz: &TimeZone) -> Result<i64, InvalidInput> {
    let bad = || {
        InvalidInput::new(
            "once",
            format!("“{text}” is not a date and time: write YYYY-MM-DD HH:MM."),
        )
    };
    let civil: jiff::civil::DateTime = text.trim().replace(' ', "T").parse().map_err(|_| bad())?;
    let zoned = civil.to_zoned(tz.clone()).map_err(|_| bad())?;
    Ok(zoned.timestamp().as_millisecond())
}

/// What a runner does with a schedule due at `due` (ms), seen at `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueNow {
    /// Not yet.
    Wait,
    /// Run it now (`late`: it was missed, and runs once for all its missed times).
    Run { late: bool },
    /// It was missed and the schedule skips missed runs.
    Skip,
}

/// Whether a schedule next due at `due` runs at `now`.
pub fn due_now(due: i64, now: i64, missed: Missed) -> DueNow {
    if due > now {
        DueNow::Wait
    } else if now - due <= LATE_AFTER_MS {
        DueNow::Run { late: false }
    } else {
        match missed {
            Missed::RunOnce => DueNow::Run { late: true },
            Missed::Skip => DueNow::Skip,
        }
    }
}

/// The person's time zone (UTC when the system's cannot be read).
pub fn local_zone() -> TimeZone {
    TimeZone::try_system().unwrap_or(TimeZone::UTC)
}

/// Held by the one process of a home that runs its schedules: the window while it is open,
/// else a `schedule run-due` the system's scheduler started. The OS lets go of a dead
/// process's lock. (Each run is also claimed in the database, so two runners that met could
/// not run one time twice; the lock decides which of them asks the person.)
#[derive(Debug)]
pub struct RunnerLock {
    _file: File,
}

/// The lock's file.
pub fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("schedules.lock")
}

impl RunnerLock {
    /// Takes the lock, or `None` when another process holds it.
    ///
    /// # Errors
    /// The file cannot be opened.
    pub fn try_take(data_dir: &Path) -> std::io::Result<Option<RunnerLock>> {
        crate::paths::create_private_dirs(data_dir)?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path(data_dir))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(RunnerLock { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, tz: &TimeZone) -> i64 {
        moment(text, tz).unwrap()
    }

    fn show(ms: i64, tz: &TimeZone) -> String {
        Timestamp::from_millisecond(ms)
            .unwrap()
            .to_zoned(tz.clone())
            .strftime("%Y-%m-%d %H:%M %a")
            .to_string()
    }

    #[test]
    fn periods_read_as_the_command_line_writes_them() {
        assert_eq!(
            TimeRule::from_every("30m", None, false).unwrap(),
            TimeRule::Every { minutes: 30 }
        );
        assert_eq!(
            TimeRule::from_every("6h", None, false).unwrap(),
            TimeRule::Every { minutes: 360 }
        );
        assert_eq!(
            TimeRule::from_every("1d", Some("08:00"), true).unwrap(),
            TimeRule::Daily {
                days: 1,
                at: "08:00".into(),
                weekdays_only: true
            }
        );
        for bad in ["1m", "m", "5x", "-5m", "30m --at"] {
            assert!(TimeRule::from_every(bad, None, false).is_err(), "{bad}");
        }
        assert!(TimeRule::from_every("6h", Some("08:00"), false).is_err());
        assert!(TimeRule::from_every("1d", Some("25:00"), false).is_err());
        assert!(TimeRule::from_every("30m", None, true).is_err());
        assert!(TimeRule::from_every("7d", Some("08:00"), true).is_err());
        assert!(TimeRule::from_every("1d", Some("+8:00"), false).is_err());
    }

    #[test]
    fn an_every_rule_counts_from_when_it_was_made() {
        let tz = TimeZone::UTC;
        let rule = TimeRule::Every { minutes: 30 };
        let made = at("2026-12-07 10:07", &tz);
        assert_eq!(
            show(rule.next_after(made, made, &tz).unwrap(), &tz),
            "2026-12-07 10:37 Mon"
        );
        let later = at("2026-12-07 13:00", &tz);
        assert_eq!(
            show(rule.next_after(made, later, &tz).unwrap(), &tz),
            "2026-12-07 13:07 Mon"
        );
    }

    #[test]
    fn a_daily_rule_passes_over_weekends_and_counts_its_days() {
        let tz = TimeZone::UTC;
        let made = at("2026-12-04 12:00", &tz); // a Friday, after 08:00
        let weekdays = TimeRule::Daily {
            days: 1,
            at: "08:00".into(),
            weekdays_only: true,
        };
        assert_eq!(
            show(weekdays.next_after(made, made, &tz).unwrap(), &tz),
            "2026-12-07 08:00 Mon"
        );
        let every_other = TimeRule::Daily {
            days: 2,
            at: "08:00".into(),
            weekdays_only: false,
        };
        // Counted from the day it was made: the 4th, 6th, 8th…
        assert_eq!(
            show(every_other.next_after(made, made, &tz).unwrap(), &tz),
            "2026-12-06 08:00 Sun"
        );
        let early = at("2026-12-04 07:00", &tz);
        let daily = TimeRule::Daily {
            days: 1,
            at: "08:00".into(),
            weekdays_only: false,
        };
        assert_eq!(
            show(daily.next_after(early, early, &tz).unwrap(), &tz),
            "2026-12-04 08:00 Fri"
        );
    }

    #[test]
    fn a_time_a_clock_change_skips_runs_just_after_it() {
        let tz = TimeZone::get("Europe/Lisbon").unwrap();
        // Lisbon's clocks went from 01:00 to 02:00 on 2026-03-29.
        let made = at("2026-03-28 12:00", &tz);
        let rule = TimeRule::Daily {
            days: 1,
            at: "01:30".into(),
            weekdays_only: false,
        };
        let first = rule.next_after(made, made, &tz).unwrap();
        assert_eq!(show(first, &tz), "2026-03-29 02:30 Sun");
        let second = rule.next_after(made, first, &tz).unwrap();
        assert_eq!(show(second, &tz), "2026-03-30 01:30 Mon");
    }

    #[test]
    fn once_is_due_once() {
        let tz = TimeZone::UTC;
        let when = at("2026-12-07 18:00", &tz);
        let rule = TimeRule::Once { at: when };
        assert_eq!(rule.next_after(0, when - 1, &tz), Some(when));
        assert_eq!(rule.next_after(0, when, &tz), None);
    }

    #[test]
    fn a_late_run_runs_once_or_is_skipped_as_the_schedule_says() {
        let due = 1_000_000_000;
        assert_eq!(due_now(due, due - 1, Missed::RunOnce), DueNow::Wait);
        assert_eq!(
            due_now(due, due + 60_000, Missed::Skip),
            DueNow::Run { late: false }
        );
        let hours_late = due + 3 * 3_600_000;
        assert_eq!(
            due_now(due, hours_late, Missed::RunOnce),
            DueNow::Run { late: true }
        );
        assert_eq!(due_now(due, hours_late, Missed::Skip), DueNow::Skip);
    }

    #[test]
    fn one_process_holds_the_runners_lock() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunnerLock::try_take(dir.path()).unwrap();
        assert!(first.is_some());
        assert!(RunnerLock::try_take(dir.path()).unwrap().is_none());
        drop(first);
        assert!(RunnerLock::try_take(dir.path()).unwrap().is_some());
    }

    #[test]
    fn schedules_are_checked() {
        let ok = NewSchedule {
            name: "  morning\nnews ".into(),
            prompt: "What happened?".into(),
            rule: TimeRule::Every { minutes: 60 },
            profile: Some(" ".into()),
            provider: None,
            model: None,
            missed: Missed::RunOnce,
            approval_wait_minutes: 30,
        };
        let checked = ok.clone().validated().unwrap();
        assert_eq!(checked.name, "morning news");
        let daily = TimeRule::Daily {
            days: 1,
            at: "8:5".into(),
            weekdays_only: false,
        };
        let checked_daily = NewSchedule {
            rule: daily,
            ..ok.clone()
        }
        .validated()
        .unwrap();
        assert_eq!(
            checked_daily.rule,
            TimeRule::Daily {
                days: 1,
                at: "08:05".into(),
                weekdays_only: false
            }
        );
        assert_eq!(checked.profile, None);
        assert!(NewSchedule {
            prompt: " ".into(),
            ..ok.clone()
        }
        .validated()
        .is_err());
        assert!(NewSchedule {
            rule: TimeRule::Every { minutes: 1 },
            ..ok.clone()
        }
        .validated()
        .is_err());
        assert!(NewSchedule {
            approval_wait_minutes: 100_000,
            ..ok
        }
        .validated()
        .is_err());
    }
}
