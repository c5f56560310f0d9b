//! Skills' switches and uses (issue 61): which skills are switched off for every conversation,
//! and the conversations whose model loaded a skill (from the record of its calls of
//! Switchboard's own `load_skill`). The skills themselves are folders, not rows.

use std::collections::HashMap;

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError};

/// A skill's switch for every conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillSwitch {
    pub enabled: bool,
    /// For a server's skill: the hash of its files' URIs and digests the person approved.
    pub approved: Option<String>,
    /// For one of the person's skills whose scripts the model may ask to run: the digest of
    /// those scripts when the person allowed it ([`crate::skills::scripts::digest`]).
    pub scripts: Option<String>,
}

/// A conversation that used a skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SkillUse {
    pub conversation_id: String,
    pub title: String,
    /// When its model last loaded the skill (ms since the epoch).
    #[ts(type = "number")]
    pub at: i64,
}

impl Store {
    /// Each skill's switch for every conversation (a skill not listed is on).
    ///
    /// # Errors
    /// A failed query.
    pub async fn skill_switches(&self) -> Result<HashMap<String, SkillSwitch>, StoreError> {
        self.call(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT name, enabled, approved, scripts FROM skill_switches")?;
            let rows = stmt.query_map([], |row| {
                Ok((
                    row.get(0)?,
                    SkillSwitch {
                        enabled: row.get(1)?,
                        approved: row.get(2)?,
                        scripts: row.get(3)?,
                    },
                ))
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    /// Switches a skill on or off for every conversation; `approved` is what a server's skill
    /// was approved as. Its scripts' allowance is kept as it was.
    ///
    /// # Errors
    /// A failed write.
    pub async fn set_skill_switch(
        &self,
        name: String,
        switch: SkillSwitch,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO skill_switches (name, enabled, approved) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (name) DO UPDATE \
                 SET enabled = excluded.enabled, approved = excluded.approved",
                params![name, switch.enabled, switch.approved],
            )?;
            Ok(())
        })
        .await
    }

    /// Lets the model ask to run a skill's scripts as they are now (`Some`, their digest), or
    /// not (`None`). A skill with no switch yet stays on.
    ///
    /// # Errors
    /// A failed write.
    pub async fn set_skill_scripts(
        &self,
        name: String,
        scripts: Option<String>,
    ) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute(
                "INSERT INTO skill_switches (name, enabled, scripts) VALUES (?1, 1, ?2) \
                 ON CONFLICT (name) DO UPDATE SET scripts = excluded.scripts",
                params![name, scripts],
            )?;
            Ok(())
        })
        .await
    }

    /// Forgets a removed skill's switch (a skill added again under its name starts on).
    ///
    /// # Errors
    /// A failed write.
    pub async fn forget_skill_switch(&self, name: String) -> Result<(), StoreError> {
        self.call(move |conn| {
            conn.execute("DELETE FROM skill_switches WHERE name = ?1", [name])?;
            Ok(())
        })
        .await
    }

    /// The conversations whose model loaded the skill `name` through `tool` of `server`
    /// (Switchboard's own), newest first.
    ///
    /// # Errors
    /// A failed query.
    pub async fn skill_uses(
        &self,
        server: String,
        tool: String,
        name: String,
    ) -> Result<Vec<SkillUse>, StoreError> {
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT r.conversation_id, c.title, MAX(COALESCE(r.started_at, 0)) AS at \
                 FROM tool_runs r JOIN conversations c ON c.id = r.conversation_id \
                 WHERE r.server = ?1 AND r.tool = ?2 AND r.decision = 'allowed' \
                   AND r.is_error = 0 AND c.lane_of IS NULL \
                   AND json_valid(r.arguments) AND json_extract(r.arguments, '$.name') = ?3 \
                 GROUP BY r.conversation_id ORDER BY at DESC LIMIT 200",
            )?;
            let rows = stmt.query_map(params![server, tool, name], |row| {
                Ok(SkillUse {
                    conversation_id: row.get(0)?,
                    title: row.get(1)?,
                    at: row.get(2)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
