//! `web_search`'s `freshness` filter: `pd`, `pw`, `pm`, `py` (past day,
//! week, month, year) or a date range `YYYY-MM-DDtoYYYY-MM-DD`.

use talon_tool_catalog::ToolError;

/// A validated freshness filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freshness {
    /// `pd`, `pw`, `pm` or `py`.
    Shortcut(&'static str),
    /// Inclusive date range, start ≤ end, both real calendar dates.
    Range {
        /// `YYYY-MM-DD`.
        start: String,
        /// `YYYY-MM-DD`.
        end: String,
    },
}

impl Freshness {
    /// Parse a model's value. `day`/`week`/`month`/`year` are accepted as
    /// the shortcuts. The error says what is accepted.
    pub fn parse(raw: &str) -> Result<Self, ToolError> {
        let v = raw.trim().to_ascii_lowercase();
        let shortcut = match v.as_str() {
            "pd" | "day" => Some("pd"),
            "pw" | "week" => Some("pw"),
            "pm" | "month" => Some("pm"),
            "py" | "year" => Some("py"),
            _ => None,
        };
        if let Some(s) = shortcut {
            return Ok(Freshness::Shortcut(s));
        }
        let Some((start, end)) = v.split_once("to") else {
            return Err(ToolError::input(
                "freshness",
                format!(
                    "freshness must be pd, pw, pm, py or a range YYYY-MM-DDtoYYYY-MM-DD, got {raw:?}"
                ),
            ));
        };
        Self::range(start, end)
    }

    /// A range from two dates (`date_after`, `date_before`).
    pub fn range(start: &str, end: &str) -> Result<Self, ToolError> {
        let start = start.trim();
        let end = end.trim();
        for d in [start, end] {
            if !is_valid_date(d) {
                return Err(ToolError::input(
                    "freshness",
                    format!("freshness date {d:?} is not a real date in the form YYYY-MM-DD"),
                ));
            }
        }
        if start > end {
            return Err(ToolError::input(
                "freshness",
                format!(
                    "freshness range starts after it ends ({start} > {end}); put the earlier date first"
                ),
            ));
        }
        Ok(Freshness::Range {
            start: start.to_owned(),
            end: end.to_owned(),
        })
    }

    /// The wire form (`pw`, `2024-01-01to2024-06-30`).
    pub fn as_param(&self) -> String {
        match self {
            Freshness::Shortcut(s) => (*s).to_owned(),
            Freshness::Range { start, end } => format!("{start}to{end}"),
        }
    }
}

/// `YYYY-MM-DD`, month 1–12, day within the month (leap years counted).
pub(crate) fn is_valid_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    y >= 1 && (1..=days).contains(&d)
}
