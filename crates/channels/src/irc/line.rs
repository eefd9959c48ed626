//! The IRC line grammar (RFC 1459 / 2812 with IRCv3 message tags), for
//! lines a server sends: untrusted input, so bounded, never panicking,
//! and every refusal a typed [`LineError`]. Building outgoing lines
//! refuses what would break framing (CR, LF, NUL) instead of passing it.

use std::fmt;

/// The longest line taken: 8191 bytes of IRCv3 tags plus the 512 bytes of
/// the message proper.
pub const MAX_LINE_BYTES: usize = 8191 + 512;
/// The most parameters a message carries (RFC 2812: 15).
pub const MAX_PARAMS: usize = 15;

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrcMessage {
    /// The source (`nick!user@host` or a server name), without the `:`.
    pub prefix: Option<String>,
    /// The command, upper-cased (`PRIVMSG`, `PING`, `001`).
    pub command: String,
    /// The parameters, the trailing one last (without its `:`).
    pub params: Vec<String>,
}

/// Why a line is not an IRC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LineError {
    /// Nothing but spaces.
    #[error("an empty line")]
    Empty,
    /// Longer than [`MAX_LINE_BYTES`].
    #[error("a line of {0} bytes (at most {MAX_LINE_BYTES})")]
    TooLong(usize),
    /// A NUL, CR or LF inside the line.
    #[error("a line with a NUL, CR or LF inside")]
    ControlCharacter,
    /// A prefix or tags with nothing after them.
    #[error("a line with no command")]
    NoCommand,
    /// A command that is neither letters nor three digits.
    #[error("a command that is neither letters nor three digits: {0:?}")]
    BadCommand(String),
    /// More than [`MAX_PARAMS`] parameters.
    #[error("more than {MAX_PARAMS} parameters")]
    TooManyParams,
}

impl IrcMessage {
    /// The nick of the prefix (`nick` of `nick!user@host`).
    pub fn nick(&self) -> Option<&str> {
        let p = self.prefix.as_deref()?;
        Some(p.split(['!', '@']).next().unwrap_or(p))
    }

    /// Parameter `i`.
    pub fn param(&self, i: usize) -> Option<&str> {
        self.params.get(i).map(String::as_str)
    }

    /// Whether the command is a numeric error reply (400-599).
    pub fn is_error_numeric(&self) -> bool {
        self.command.len() == 3
            && self
                .command
                .parse::<u16>()
                .is_ok_and(|n| (400..600).contains(&n))
    }
}

/// Parse one line as a server sends it (the trailing CR LF may be there
/// or not).
pub fn parse_line(line: &str) -> Result<IrcMessage, LineError> {
    if line.len() > MAX_LINE_BYTES {
        return Err(LineError::TooLong(line.len()));
    }
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.contains(['\0', '\r', '\n']) {
        return Err(LineError::ControlCharacter);
    }
    let mut rest = line.trim_start_matches(' ');
    if rest.is_empty() {
        return Err(LineError::Empty);
    }
    // IRCv3 tags: not used, skipped whole.
    if let Some(tags) = rest.strip_prefix('@') {
        rest = tags.split_once(' ').map(|(_, r)| r).unwrap_or("");
        rest = rest.trim_start_matches(' ');
    }
    let mut prefix = None;
    if let Some(p) = rest.strip_prefix(':') {
        let (p, r) = p.split_once(' ').unwrap_or((p, ""));
        prefix = Some(p.to_owned());
        rest = r.trim_start_matches(' ');
    }
    if rest.is_empty() {
        return Err(LineError::NoCommand);
    }
    let (command, mut rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let valid = (!command.is_empty() && command.bytes().all(|b| b.is_ascii_alphabetic()))
        || (command.len() == 3 && command.bytes().all(|b| b.is_ascii_digit()));
    if !valid {
        return Err(LineError::BadCommand(command.chars().take(32).collect()));
    }
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(' ');
        if rest.is_empty() {
            break;
        }
        if params.len() == MAX_PARAMS {
            return Err(LineError::TooManyParams);
        }
        if let Some(trailing) = rest.strip_prefix(':') {
            params.push(trailing.to_owned());
            break;
        }
        let (p, r) = rest.split_once(' ').unwrap_or((rest, ""));
        params.push(p.to_owned());
        rest = r;
    }
    Ok(IrcMessage {
        prefix,
        command: command.to_ascii_uppercase(),
        params,
    })
}

/// A CTCP message inside a PRIVMSG text (`\x01ACTION waves\x01`): the
/// command and its argument.
pub fn parse_ctcp(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('\u{1}')?;
    let inner = inner.strip_suffix('\u{1}').unwrap_or(inner);
    Some(inner.split_once(' ').unwrap_or((inner, "")))
}

/// Why an outgoing line cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OutError {
    /// A target with a space, comma, control character, or empty.
    BadTarget,
    /// Text with a NUL or CR.
    BadText,
}

impl fmt::Display for OutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutError::BadTarget => {
                "an IRC target is one `#channel` or nick: no spaces, commas or control characters"
            }
            OutError::BadText => "IRC text cannot carry NUL or CR characters",
        })
    }
}

/// Check a target (`#channel` or nick).
pub(crate) fn check_target(target: &str) -> Result<(), OutError> {
    if target.is_empty()
        || target.len() > 200
        || target.starts_with(':')
        || target
            .chars()
            .any(|c| c == ' ' || c == ',' || c.is_control())
    {
        return Err(OutError::BadTarget);
    }
    Ok(())
}

/// The PRIVMSG lines (without CR LF) that carry `text` to `target`: one
/// per text line, each cut at `chunk` bytes on a character boundary. An
/// empty line is sent as a single space (IRC drops empty texts).
pub(crate) fn privmsg_lines(
    target: &str,
    text: &str,
    chunk: usize,
) -> Result<Vec<String>, OutError> {
    check_target(target)?;
    if text.contains(['\0', '\r']) {
        return Err(OutError::BadText);
    }
    let chunk = chunk.max(4);
    let mut out = Vec::new();
    for line in text.split('\n') {
        let mut rest = line;
        if rest.is_empty() {
            out.push(format!("PRIVMSG {target} : "));
            continue;
        }
        while !rest.is_empty() {
            let mut end = rest.len().min(chunk);
            while !rest.is_char_boundary(end) {
                end -= 1;
            }
            out.push(format!("PRIVMSG {target} :{}", &rest[..end]));
            rest = &rest[end..];
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_servers_send() {
        let m = parse_line(":alice!a@host PRIVMSG #talon :hello there\r\n").unwrap();
        assert_eq!(m.nick(), Some("alice"));
        assert_eq!(m.command, "PRIVMSG");
        assert_eq!(m.params, vec!["#talon", "hello there"]);
        let m = parse_line("PING :irc.example").unwrap();
        assert_eq!((m.prefix, m.command.as_str()), (None, "PING"));
        let m = parse_line("@time=x;a=b :srv 001 talon :Welcome").unwrap();
        assert_eq!(m.command, "001");
        assert_eq!(m.param(1), Some("Welcome"));
        let m = parse_line(":srv 433 * talon :Nickname already in use").unwrap();
        assert!(m.is_error_numeric());
        let m = parse_line(":srv MODE talon +i").unwrap();
        assert_eq!(m.params, vec!["talon", "+i"]);
    }

    #[test]
    fn refuses_what_is_not_a_line() {
        assert_eq!(parse_line("   "), Err(LineError::Empty));
        assert_eq!(parse_line(":only-prefix"), Err(LineError::NoCommand));
        assert_eq!(
            parse_line("PRIV MSG"),
            Ok(IrcMessage {
                prefix: None,
                command: "PRIV".into(),
                params: vec!["MSG".into()]
            })
        );
        assert!(matches!(parse_line("12 x"), Err(LineError::BadCommand(_))));
        assert!(matches!(
            parse_line("PRIVMSG a\0b"),
            Err(LineError::ControlCharacter)
        ));
        assert!(matches!(
            parse_line(&"A".repeat(MAX_LINE_BYTES + 1)),
            Err(LineError::TooLong(_))
        ));
        let many = format!("CMD {}", "p ".repeat(16));
        assert_eq!(parse_line(&many), Err(LineError::TooManyParams));
        // Multibyte text never splits a character.
        assert!(parse_line(":é PRIVMSG #c :é").is_ok());
    }

    #[test]
    fn outgoing_lines_keep_framing() {
        assert_eq!(
            privmsg_lines("#c", "a\nb", 400).unwrap(),
            vec!["PRIVMSG #c :a", "PRIVMSG #c :b"]
        );
        let long = "é".repeat(10);
        let lines = privmsg_lines("#c", &long, 5).unwrap();
        assert!(lines.iter().all(|l| l.starts_with("PRIVMSG #c :é")));
        assert_eq!(lines.len(), 5);
        assert_eq!(privmsg_lines("#c x", "a", 400), Err(OutError::BadTarget));
        assert_eq!(privmsg_lines("#c", "a\rQUIT", 400), Err(OutError::BadText));
        assert_eq!(
            parse_ctcp("\u{1}ACTION waves\u{1}"),
            Some(("ACTION", "waves"))
        );
        assert_eq!(parse_ctcp("plain"), None);
    }
}
