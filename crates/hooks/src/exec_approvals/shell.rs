//! A POSIX `sh` command-line analyser for the exec allowlist.
//!
//! It splits a command into the simple commands it would run (across `;`,
//! `&`, `&&`, `||`, `|`, `|&`, newlines and `( … )` subshells) and gives
//! each one's words after quote removal (single and double quotes,
//! backslash escapes, line continuations). It never runs or expands
//! anything: whatever it cannot pin down statically ends the analysis with
//! an [`Segment::Opaque`] segment, which never matches an allowlist entry.
//! Opaque are: command substitution (`$( … )`, backticks, also inside
//! double quotes), `${ … }`, `$'…'` / `$"…"`, arithmetic `(( … ))`,
//! redirections and here-documents (`<`, `>`, `<<`, `&>`, `2>&1`, …),
//! assignment prefixes (`PATH=/x cmd`), reserved words (`if`, `for`, `{`,
//! `!`, …), builtins that run a string or another command (`eval`, `.`,
//! `source`, `exec`, `command`, `builtin`, `trap`, `alias`), a command word
//! that would be expanded (`$x`, `*`, `~`), unbalanced parentheses, an
//! empty command before an operator, and an unterminated quote or escape.

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The text after quote removal.
    pub text: String,
    /// Whether the shell passes `text` unchanged: false when an unquoted
    /// glob (`*`, `?`, `[`), brace, leading `~` or a parameter (`$x`) would
    /// be expanded at run time.
    pub exact: bool,
}

/// Why part of a command cannot be analysed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpaqueReason {
    /// `$( … )`, backticks or `$(( … ))`.
    CommandSubstitution,
    /// `${ … }`, `$'…'` or `$"…"`.
    Expansion,
    /// A redirection or here-document.
    Redirection,
    /// `NAME=value` before (or instead of) the command.
    Assignment,
    /// A reserved word (`if`, `for`, `{`, `!`, `[[`, …) or `(( … ))`.
    Compound,
    /// A builtin that runs a string or another command (`eval`, `.`,
    /// `source`, `exec`, `command`, `builtin`, `trap`, `alias`).
    Evaluates,
    /// The command word itself would be expanded (`$x`, `*`, `~`).
    DynamicCommand,
    /// An unterminated quote or escape, an unbalanced parenthesis or an
    /// empty command before an operator.
    Syntax,
}

impl OpaqueReason {
    /// A short explanation for people.
    pub fn describe(self) -> &'static str {
        match self {
            OpaqueReason::CommandSubstitution => "command substitution",
            OpaqueReason::Expansion => "a ${…}, $'…' or $\"…\" expansion",
            OpaqueReason::Redirection => "a redirection or here-document",
            OpaqueReason::Assignment => "a variable assignment before the command",
            OpaqueReason::Compound => "a compound command or reserved word",
            OpaqueReason::Evaluates => "a builtin that runs a string or another command",
            OpaqueReason::DynamicCommand => "a command name that is expanded at run time",
            OpaqueReason::Syntax => "a syntax the analyser does not accept",
        }
    }
}

/// One piece of the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A simple command: the program and its arguments (never empty).
    Command {
        /// `argv[0]` is the program as written (always exact).
        argv: Vec<Word>,
    },
    /// Something that cannot be analysed; the analysis stops here.
    Opaque {
        /// Why.
        reason: OpaqueReason,
    },
}

/// The simple commands a command line would run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// In order; an [`Segment::Opaque`] segment, if any, is the last one.
    pub segments: Vec<Segment>,
}

impl Analysis {
    /// Whether every segment is a simple command (nothing opaque) and there
    /// is at least one.
    pub fn is_complete(&self) -> bool {
        !self.segments.is_empty()
            && self
                .segments
                .iter()
                .all(|s| matches!(s, Segment::Command { .. }))
    }

    /// The first opaque reason, if any.
    pub fn opaque_reason(&self) -> Option<OpaqueReason> {
        self.segments.iter().find_map(|s| match s {
            Segment::Opaque { reason } => Some(*reason),
            Segment::Command { .. } => None,
        })
    }
}

/// Reserved words that start a compound command or change its meaning.
const RESERVED: &[&str] = &[
    "!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while",
];

/// Builtins that run a string or another command chosen at run time.
const EVALUATES: &[&str] = &[
    ".", "alias", "builtin", "command", "eval", "exec", "source", "trap",
];

/// Analyse `command` as `/bin/sh -c` would parse it. Never panics.
pub fn analyze(command: &str) -> Analysis {
    let mut parser = Parser {
        chars: command.chars().collect(),
        pos: 0,
        segments: Vec::new(),
        current: Vec::new(),
        depth: 0,
        state: State::Start,
    };
    if let Err(reason) = parser.run() {
        parser.segments.push(Segment::Opaque { reason });
    }
    Analysis {
        segments: parser.segments,
    }
}

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `;` or `&`.
    Sequence,
    /// A newline.
    Newline,
    /// `&&`, `||`, `|`, `|&`: a command must precede and follow.
    Binary,
    Open,
    Close,
}

/// Where the parser is in the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// At the start of a list: a command may follow, or nothing.
    Start,
    /// After `&&`, `||`, `|` or `(`: a command must follow.
    NeedCommand,
    /// Reading the words of a simple command.
    InCommand,
    /// After `)`: only an operator or another `)` may follow.
    AfterGroup,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    segments: Vec<Segment>,
    current: Vec<Word>,
    depth: usize,
    state: State,
}

impl Parser {
    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn run(&mut self) -> Result<(), OpaqueReason> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => self.pos += 1,
                '\n' => {
                    self.pos += 1;
                    self.operator(Op::Newline)?;
                }
                '#' => {
                    // At the start of a word a comment runs to the end of
                    // the line (inside a word `#` is read by `word`).
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ';' => {
                    if matches!(self.peek(1), Some(';' | '&')) {
                        return Err(OpaqueReason::Compound);
                    }
                    self.pos += 1;
                    self.operator(Op::Sequence)?;
                }
                '&' => match self.peek(1) {
                    Some('&') => {
                        self.pos += 2;
                        self.operator(Op::Binary)?;
                    }
                    Some('>') => return Err(OpaqueReason::Redirection),
                    _ => {
                        self.pos += 1;
                        self.operator(Op::Sequence)?;
                    }
                },
                '|' => {
                    self.pos += if matches!(self.peek(1), Some('|' | '&')) {
                        2
                    } else {
                        1
                    };
                    self.operator(Op::Binary)?;
                }
                '(' => {
                    if self.peek(1) == Some('(') {
                        return Err(OpaqueReason::Compound);
                    }
                    self.pos += 1;
                    self.operator(Op::Open)?;
                }
                ')' => {
                    self.pos += 1;
                    self.operator(Op::Close)?;
                }
                '<' | '>' => return Err(OpaqueReason::Redirection),
                _ => {
                    if self.state == State::AfterGroup {
                        return Err(OpaqueReason::Syntax);
                    }
                    let word = self.word()?;
                    if word.assignment && self.current.is_empty() {
                        return Err(OpaqueReason::Assignment);
                    }
                    self.current.push(Word {
                        text: word.text,
                        exact: word.exact,
                    });
                    self.state = State::InCommand;
                }
            }
        }
        if self.state == State::InCommand {
            self.finish_command()?;
        }
        if self.depth != 0 || self.state == State::NeedCommand {
            return Err(OpaqueReason::Syntax);
        }
        Ok(())
    }

    /// Close the current simple command and check its command word.
    fn finish_command(&mut self) -> Result<(), OpaqueReason> {
        let argv = std::mem::take(&mut self.current);
        let Some(program) = argv.first() else {
            return Err(OpaqueReason::Syntax);
        };
        if RESERVED.contains(&program.text.as_str()) {
            return Err(OpaqueReason::Compound);
        }
        if !program.exact || program.text.is_empty() {
            return Err(OpaqueReason::DynamicCommand);
        }
        if EVALUATES.contains(&program.text.as_str()) {
            return Err(OpaqueReason::Evaluates);
        }
        self.segments.push(Segment::Command { argv });
        Ok(())
    }

    fn operator(&mut self, op: Op) -> Result<(), OpaqueReason> {
        use State::{AfterGroup, InCommand, NeedCommand, Start};
        self.state = match (op, self.state) {
            (Op::Sequence | Op::Newline | Op::Binary | Op::Close, InCommand) => {
                self.finish_command()?;
                match op {
                    Op::Binary => NeedCommand,
                    Op::Close => self.close()?,
                    _ => Start,
                }
            }
            (Op::Sequence | Op::Newline, AfterGroup) => Start,
            (Op::Newline, Start) => Start,
            // `a &&` then a newline: the command may follow on the next line.
            (Op::Newline, NeedCommand) => NeedCommand,
            (Op::Binary, AfterGroup) => NeedCommand,
            (Op::Open, Start | NeedCommand) => {
                self.depth += 1;
                NeedCommand
            }
            (Op::Close, Start | AfterGroup) => self.close()?,
            _ => return Err(OpaqueReason::Syntax),
        };
        Ok(())
    }

    fn close(&mut self) -> Result<State, OpaqueReason> {
        self.depth = self.depth.checked_sub(1).ok_or(OpaqueReason::Syntax)?;
        Ok(State::AfterGroup)
    }

    /// Read one word (the caller saw a word character).
    fn word(&mut self) -> Result<WordBuf, OpaqueReason> {
        let mut w = WordBuf::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>' => break,
                '\\' => match self.peek(1) {
                    Some('\n') => self.pos += 2,
                    Some(next) => {
                        w.push_quoted(next);
                        self.pos += 2;
                    }
                    None => return Err(OpaqueReason::Syntax),
                },
                '\'' => {
                    self.pos += 1;
                    w.push_started();
                    loop {
                        match self.peek(0) {
                            None => return Err(OpaqueReason::Syntax),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(c) => {
                                w.push_quoted(c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    w.push_started();
                    self.double_quoted(&mut w)?;
                }
                '`' => return Err(OpaqueReason::CommandSubstitution),
                '$' => self.dollar(&mut w, false)?,
                _ => {
                    w.push_unquoted(c);
                    self.pos += 1;
                }
            }
        }
        Ok(w)
    }

    /// The inside of `"…"` (the opening quote is consumed).
    fn double_quoted(&mut self, w: &mut WordBuf) -> Result<(), OpaqueReason> {
        loop {
            match self.peek(0) {
                None => return Err(OpaqueReason::Syntax),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('`') => return Err(OpaqueReason::CommandSubstitution),
                Some('$') => self.dollar(w, true)?,
                Some('\\') => match self.peek(1) {
                    Some('\n') => self.pos += 2,
                    Some(next @ ('$' | '`' | '"' | '\\')) => {
                        w.push_quoted(next);
                        self.pos += 2;
                    }
                    Some(_) => {
                        w.push_quoted('\\');
                        self.pos += 1;
                    }
                    None => return Err(OpaqueReason::Syntax),
                },
                Some(c) => {
                    w.push_quoted(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// A `$` (at `self.pos`), unquoted or inside double quotes.
    fn dollar(&mut self, w: &mut WordBuf, quoted: bool) -> Result<(), OpaqueReason> {
        match self.peek(1) {
            Some('(') => Err(OpaqueReason::CommandSubstitution),
            Some('{') => Err(OpaqueReason::Expansion),
            Some('\'' | '"') if !quoted => Err(OpaqueReason::Expansion),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                // `$name`: its value is unknown.
                self.pos += 1;
                while self
                    .peek(0)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                {
                    self.pos += 1;
                }
                w.push_dynamic();
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                self.pos += 2;
                w.push_dynamic();
                Ok(())
            }
            _ => {
                // A lone `$` is literal.
                w.push_quoted('$');
                w.plain_name = false;
                self.pos += 1;
                Ok(())
            }
        }
    }
}

/// A word being read.
struct WordBuf {
    text: String,
    exact: bool,
    started: bool,
    /// Every character so far is an unquoted name character.
    plain_name: bool,
    /// The word starts with an unquoted `NAME=`.
    assignment: bool,
}

impl WordBuf {
    fn new() -> Self {
        WordBuf {
            text: String::new(),
            exact: true,
            started: false,
            plain_name: true,
            assignment: false,
        }
    }

    /// Quotes were opened (an empty `''` is still a word).
    fn push_started(&mut self) {
        self.started = true;
        self.plain_name = false;
    }

    fn push_quoted(&mut self, c: char) {
        self.push_started();
        self.text.push(c);
    }

    /// A parameter expansion: the word's value is unknown.
    fn push_dynamic(&mut self) {
        self.push_started();
        self.exact = false;
    }

    fn push_unquoted(&mut self, c: char) {
        if self.plain_name && !self.assignment {
            if c == '='
                && !self.text.is_empty()
                && !self.text.starts_with(|d: char| d.is_ascii_digit())
            {
                self.assignment = true;
            } else if !(c.is_ascii_alphanumeric() || c == '_') {
                self.plain_name = false;
            }
        }
        if (!self.started && c == '~') || matches!(c, '*' | '?' | '[' | '{' | '}') {
            self.exact = false;
        }
        self.started = true;
        self.text.push(c);
    }
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;
