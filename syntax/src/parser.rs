//! Parsing: tokens → syntax tree plus every error. Never fails: broken text gives a tree with
//! `Error` nodes and a list of errors, each with a range, a stable code and a message that
//! says what was expected and what was found.

use crate::progress::{Progress, Stage, TOKENS_PER_RECORD};
use std::cell::Cell;
use std::rc::Rc;

use lalrpop_util::{ErrorRecovery, ParseError};

use crate::ast::{self, Literal, LiteralKind, Name, Span};
use crate::lexer::{self, TokenKind, WordClass};
use crate::numbers;

#[allow(clippy::all, clippy::unwrap_used, unused_parens, missing_debug_implementations)]
mod generated {
    lalrpop_util::lalrpop_mod!(pub grammar);
}

/// Tokens as the grammar sees them: trivia removed, words classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
    Ident(&'a str),
    Prim(&'a str),
    Seq,
    Map,
    Optional,
    SparseTensor,
    Opaque,
    FloatWord(&'a str),
    SignedFloatWord(&'a str),
    Int(&'a str),
    Float(&'a str),
    Str(&'a str),
    Arrow,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    LAngle,
    RAngle,
    Comma,
    Colon,
    Eq,
    Dot,
    At,
    Question,
    /// `b"…"` (source text, quotes and escapes included).
    Bytes(&'a str),
    /// The numbers of a `{…}` list, commas and trivia included, and how many there are.
    Numbers(&'a str, u32),
    /// The `#@` that opens an annotation, and the end of its line.
    AnnStart,
    AnnEnd,
}

/// Deepest bracket nesting accepted. onnx's own parser overflows its stack near 15,000
/// levels; no real model comes close to this limit.
pub const MAX_NESTING: usize = 512;

/// Syntax errors reported at most per text. Past them the rest of the text is not read:
/// each error costs its message and the parser's recovery, and a hostile text of ten
/// megabytes held millions (two gigabytes, seconds). Compilers stop early too (clang after
/// 20 errors); a person reads the first few.
pub const MAX_ERRORS: usize = 1000;

/// A syntax error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// Stable kebab-case code, e.g. `unexpected-token`.
    pub code: &'static str,
    pub message: String,
    pub span: Span,
    /// Secondary places, each with what it is (the bracket an unexpected closer or the end
    /// of the text leaves open).
    pub related: Vec<(Span, String)>,
}

/// The result of parsing: always a tree (possibly partial), plus every error found.
#[derive(Clone, Debug)]
pub struct Parse<T> {
    pub tree: Option<T>,
    pub errors: Vec<SyntaxError>,
    /// Float lists already read while scanning (see [`numbers::ReadFloats`]).
    pub floats: numbers::ReadFloats,
}

pub(crate) fn name(text: &str, quoted: bool, l: usize, r: usize) -> Name {
    read_something();
    let text = if quoted { lexer::unquote(text) } else { text.to_owned() };
    Name { text, quoted, span: Span::new(l, r), bytes: None }
}

/// A name written as a byte string. A bad escape was already reported by `tokens`.
pub(crate) fn byte_name(literal: &str, l: usize, r: usize) -> Name {
    read_something();
    let bytes = lexer::unescape_bytes(literal).unwrap_or_default();
    Name { text: String::from_utf8_lossy(&bytes).into_owned(), quoted: true, span: Span::new(l, r), bytes: Some(bytes) }
}

/// A `?` dimension (read, for [`Capped`]'s sign of life, as names and literals are).
pub(crate) fn unknown_dim(l: usize, r: usize) -> ast::Dim {
    read_something();
    ast::Dim::Unknown(Span::new(l, r))
}

/// The `Numbers` token as a tree node.
pub(crate) fn number_run(count: u32, l: usize, r: usize) -> ast::NumberRun {
    read_something();
    ast::NumberRun { start: l as u32, end: r as u32, count }
}

pub(crate) fn literal(kind: LiteralKind, text: &str, l: usize, r: usize) -> Literal {
    read_something();
    let text = if kind == LiteralKind::String { lexer::unquote(text) } else { text.to_owned() };
    Literal { kind, text, span: Span::new(l, r) }
}

type Triple<'a> = (usize, Tok<'a>, usize);

thread_local! {
    /// Names, literals and number lists the grammar has read on this thread: the parser's
    /// sign of life for [`Capped`]. While recovering from an error the generated parser
    /// drops tokens, keeping each, until one fits again; a text that never fits again (lines
    /// of `y = = = ,` without a graph around them) would have all its tokens kept so.
    static READ: Cell<u64> = const { Cell::new(0) };
}

fn read_something() {
    READ.with(|r| r.set(r.get().wrapping_add(1)));
}

/// How many tokens the parser may take without reading a name, a literal or a number list
/// before the rest of the text is taken as unreadable. A model has a name every few tokens;
/// only error recovery, dropping tokens, goes this long without one.
const MAX_TOKENS_UNREAD: usize = 100_000;

/// How often (in tokens) [`Capped`] looks whether the parser has read something.
const UNREAD_STRIDE: usize = 1024;

/// Turns lexer tokens into parser tokens as the parser pulls them, reporting lexical errors
/// and the nesting limit. Error tokens are left out of the stream (their error is already
/// reported). A `{…}` list of numbers becomes one `Numbers` token: tensors of millions of
/// values then cost the parser three tokens, and the values are read once, when lowering.
///
/// Lexed on demand rather than all before parsing: a text that stops at [`MAX_ERRORS`]
/// errors (10 MB of `y = = = ,` lines) is then never held as tokens whole, which took some
/// forty bytes of tokens for each byte of such a text. Lexed a batch at a time
/// ([`LEX_AHEAD`] tokens): lexing and parsing in turns of one token each cost the parse a
/// sixth more time (their code and tables crowd each other out of the caches).
struct Lexing<'a> {
    source: &'a str,
    lexer: lexer::Tokens<'a>,
    stream: Stream<'a>,
    /// Lexical errors and the nesting limit, in the order met.
    errors: Vec<SyntaxError>,
    floats: numbers::ReadFloats,
    progress: Option<&'a Progress>,
    /// Lexer tokens seen, to record the position every so many.
    seen: usize,
    /// Where lexing stopped at [`MAX_ERRORS`] lexical errors (a run of error tokens gives
    /// the parser nothing, so the parser's count would not stop it).
    cut: Option<usize>,
    /// How many of `errors` lie before the last token handed out (lexing runs ahead).
    handed_errors: usize,
}

/// Parser tokens lexed ahead of the parser at a time.
const LEX_AHEAD: usize = 4096;

impl<'a> Lexing<'a> {
    fn new(source: &'a str, progress: Option<&'a Progress>, depth: usize) -> Lexing<'a> {
        // Brackets open around the text (when it is one node of a bigger text): stand-ins
        // that no closer matches, so the nesting limit counts as in the whole text.
        let stream = Stream { out: std::collections::VecDeque::new(), open: vec![0; depth], too_deep: None };
        Lexing {
            source,
            lexer: lexer::tokens(source),
            stream,
            errors: Vec::new(),
            floats: numbers::ReadFloats::default(),
            progress,
            seen: 0,
            cut: None,
            handed_errors: 0,
        }
    }

    /// Lexical errors before `position`, where the parser has come to: the ones that count
    /// toward [`MAX_ERRORS`] (those lexed ahead do not, yet).
    fn errors_before(&mut self, position: usize) -> usize {
        while self.errors.get(self.handed_errors).is_some_and(|e| (e.span.start as usize) < position) {
            self.handed_errors += 1;
        }
        self.handed_errors
    }

    /// The next parser token, lexing as far as it takes; `None` at the end of the text or
    /// where it nests too deep.
    fn next_triple(&mut self) -> Option<Triple<'a>> {
        if self.stream.out.is_empty() {
            self.lex_ahead();
        }
        self.stream.out.pop_front()
    }

    /// Lexes up to [`LEX_AHEAD`] parser tokens into `stream.out`, stopping at the end of the
    /// text, the nesting limit or the lexical error cap.
    fn lex_ahead(&mut self) {
        while self.stream.out.len() < LEX_AHEAD {
            if self.stream.too_deep.is_some() || self.cut.is_some() {
                return;
            }
            let Some(token) = self.lexer.next() else { return };
            if self.errors.len() >= MAX_ERRORS {
                self.cut = Some(token.start as usize);
                return;
            }
            self.lex(token);
        }
    }

    /// Turns one lexer token into the parser tokens it gives (none, one, or several),
    /// queued in `stream.out`.
    fn lex(&mut self, token: lexer::Token) {
        let (source, errors) = (self.source, &mut self.errors);
        self.seen += 1;
        // Every so many tokens, and at every `{` (a number list can be most of the text).
        if let Some(p) = self.progress
            && (self.seen.is_multiple_of(TOKENS_PER_RECORD) || token.kind == TokenKind::LBrace)
        {
            p.reached(token.start as usize);
        }
        match token.kind {
            TokenKind::Annotation => {
                // Annotations are one lexer token each; their content is lexed again as
                // ordinary tokens between an `AnnStart` and an `AnnEnd`.
                let (start, end) = (token.start as usize, token.end as usize);
                self.stream.push((start, Tok::AnnStart, start + 2), errors);
                let body = token.start + 2;
                for inner in lexer::lex(&source[start + 2..end]) {
                    // A second `#@` on the line is a comment inside the annotation.
                    if inner.kind != TokenKind::Annotation {
                        let inner = lexer::Token { start: inner.start + body, end: inner.end + body, ..inner };
                        if let Some(triple) = convert_token(source, inner, errors) {
                            self.stream.push(triple, errors);
                        }
                    }
                }
                self.stream.push((end, Tok::AnnEnd, end), errors);
            }
            TokenKind::LBrace => {
                self.stream.push((token.start as usize, Tok::LBrace, token.end as usize), errors);
                if let Some(list) = numbers::scan_list(source, token.end as usize) {
                    if let (Some(values), Ok(start)) = (list.floats, u32::try_from(list.first)) {
                        self.floats.insert(start, values);
                    }
                    let text = &source[list.first..list.last_end];
                    self.stream.push((list.first, Tok::Numbers(text, list.count), list.last_end), errors);
                    self.stream.push((list.close, Tok::RBrace, list.close + 1), errors);
                    self.lexer.skip_to(list.close + 1);
                }
            }
            _ => {
                if let Some(triple) = convert_token(source, token, errors) {
                    self.stream.push(triple, errors);
                }
            }
        }
    }
}

/// Parser tokens with the bracket depth, which is capped. The depth is the number of
/// brackets open, each closed only by its own kind: a stray `)` inside `{ … }` (which the
/// parser skips while recovering) must not count as closing something, or a text of stray
/// closers could nest without limit (and recursive passes overflow their stacks).
struct Stream<'a> {
    /// Parser tokens made and not yet handed out (an annotation or a number list makes
    /// several at once).
    out: std::collections::VecDeque<Triple<'a>>,
    open: Vec<u8>,
    /// Where the text nested past [`MAX_NESTING`] and lexing stopped.
    too_deep: Option<usize>,
}

impl<'a> Stream<'a> {
    /// Queues `triple` if [`Stream::admit`] lets it through.
    fn push(&mut self, triple: Triple<'a>, errors: &mut Vec<SyntaxError>) {
        if self.admit(&triple, errors) {
            self.out.push_back(triple);
        }
    }

    /// Counts the brackets `triple` opens or closes; whether it may be handed out (not past
    /// the nesting limit, where the stream ends).
    fn admit(&mut self, triple: &Triple<'a>, errors: &mut Vec<SyntaxError>) -> bool {
        if self.too_deep.is_some() {
            return false;
        }
        match triple.1 {
            Tok::LParen => self.open.push(b')'),
            Tok::LBracket => self.open.push(b']'),
            Tok::LBrace => self.open.push(b'}'),
            Tok::LAngle => self.open.push(b'>'),
            Tok::RParen | Tok::RBracket | Tok::RBrace | Tok::RAngle => {
                let closer = match triple.1 {
                    Tok::RParen => b')',
                    Tok::RBracket => b']',
                    Tok::RBrace => b'}',
                    _ => b'>',
                };
                // Only the innermost bracket's own closer closes it: a stray or mismatched
                // closer closes nothing here, so the count never falls below the nesting
                // the parser may be in (a wrong text is cut sooner, never later).
                if self.open.last() == Some(&closer) {
                    self.open.pop();
                }
            }
            _ => {}
        }
        if self.open.len() > MAX_NESTING {
            errors.push(SyntaxError {
                code: "nesting-too-deep",
                message: format!("nesting deeper than {MAX_NESTING} levels; the rest of the text is not read"),
                span: Span::new(triple.0, triple.2),
                related: Vec::new(),
            });
            self.too_deep = Some(triple.0);
            return false;
        }
        true
    }
}

/// A lexer token as the grammar sees it; `None` for trivia and error tokens (whose error is
/// reported here).
fn convert_token<'a>(source: &'a str, token: lexer::Token, errors: &mut Vec<SyntaxError>) -> Option<Triple<'a>> {
    let text = token.text(source);
    let span = Span { start: token.start, end: token.end };
    let (l, r) = (token.start as usize, token.end as usize);
    let tok = match token.kind {
        TokenKind::Whitespace | TokenKind::Comment | TokenKind::DocComment | TokenKind::Annotation => return None,
        TokenKind::ByteString => {
            if let Err(at) = lexer::unescape_bytes(text) {
                let start = token.start + at as u32 - 1;
                errors.push(SyntaxError {
                    code: "bad-escape",
                    message: "unknown escape; byte strings know \\n \\r \\t \\0 \\\\ \\\" and \\xNN".to_owned(),
                    span: Span { start, end: (start + 2).min(token.end) },
                    related: Vec::new(),
                });
            }
            Tok::Bytes(text)
        }
        TokenKind::String => Tok::Str(text),
        TokenKind::Int => Tok::Int(text),
        TokenKind::Float => Tok::Float(text),
        TokenKind::SignedFloatWord => Tok::SignedFloatWord(text),
        TokenKind::Ident => match lexer::classify_word(text) {
            WordClass::PrimType => Tok::Prim(text),
            WordClass::FloatWord => Tok::FloatWord(text),
            WordClass::Plain => Tok::Ident(text),
            WordClass::TypeCtor => match text {
                "seq" => Tok::Seq,
                "map" => Tok::Map,
                "optional" => Tok::Optional,
                "sparse_tensor" => Tok::SparseTensor,
                _ => Tok::Opaque,
            },
        },
        TokenKind::Arrow => Tok::Arrow,
        TokenKind::LParen => Tok::LParen,
        TokenKind::RParen => Tok::RParen,
        TokenKind::LBracket => Tok::LBracket,
        TokenKind::RBracket => Tok::RBracket,
        TokenKind::LBrace => Tok::LBrace,
        TokenKind::RBrace => Tok::RBrace,
        TokenKind::LAngle => Tok::LAngle,
        TokenKind::RAngle => Tok::RAngle,
        TokenKind::Comma => Tok::Comma,
        TokenKind::Colon => Tok::Colon,
        TokenKind::Eq => Tok::Eq,
        TokenKind::Dot => Tok::Dot,
        TokenKind::At => Tok::At,
        TokenKind::Question => Tok::Question,
        TokenKind::UnterminatedString => {
            errors.push(SyntaxError {
                code: "unterminated-string",
                message: "this string has no closing quote".to_owned(),
                span,
                related: Vec::new(),
            });
            return None;
        }
        TokenKind::BadExponent => {
            errors.push(SyntaxError {
                code: "bad-number",
                message: format!("'{text}' has an exponent without digits"),
                span,
                related: Vec::new(),
            });
            return None;
        }
        TokenKind::LoneMinus => {
            errors.push(SyntaxError {
                code: "lone-minus",
                message: "'-' must be followed directly by a number, inf or nan".to_owned(),
                span,
                related: Vec::new(),
            });
            return None;
        }
        TokenKind::Unknown => {
            let what = match text {
                "\0" => "a NUL byte".to_owned(),
                t if !t.is_ascii() => format!("'{t}' (only ASCII is allowed outside strings)"),
                t => format!("'{t}'"),
            };
            errors.push(SyntaxError {
                code: "unexpected-character",
                message: format!("unexpected character {what}"),
                span,
                related: Vec::new(),
            });
            return None;
        }
    };
    Some((l, tok, r))
}

/// How a terminal of the grammar reads in a message.
fn describe_terminal(terminal: &str) -> String {
    let t = terminal.trim_matches('"');
    match t {
        "ident" => "a name".to_owned(),
        "prim" => "an element type".to_owned(),
        "integer" | "number" | "string" | "inf/nan" | "-inf/nan" => t.replace("inf/nan", "inf or nan"),
        "bytes" => "a byte string b\"…\"".to_owned(),
        "numbers" => "numbers".to_owned(),
        "#@" => "an annotation '#@'".to_owned(),
        "end of annotation" => "the end of the annotation line".to_owned(),
        other => format!("'{other}'"),
    }
}

fn describe_found(tok: &Tok<'_>) -> String {
    match tok {
        Tok::Ident(s) => format!("name '{s}'"),
        Tok::Prim(s) => format!("type '{s}'"),
        Tok::FloatWord(s) | Tok::SignedFloatWord(s) => format!("'{s}'"),
        Tok::Int(s) | Tok::Float(s) => format!("number {s}"),
        Tok::Str(s) => format!("string {s}"),
        Tok::Seq => "'seq'".to_owned(),
        Tok::Map => "'map'".to_owned(),
        Tok::Optional => "'optional'".to_owned(),
        Tok::SparseTensor => "'sparse_tensor'".to_owned(),
        Tok::Opaque => "'opaque'".to_owned(),
        Tok::Arrow => "'=>'".to_owned(),
        Tok::LParen => "'('".to_owned(),
        Tok::RParen => "')'".to_owned(),
        Tok::LBracket => "'['".to_owned(),
        Tok::RBracket => "']'".to_owned(),
        Tok::LBrace => "'{'".to_owned(),
        Tok::RBrace => "'}'".to_owned(),
        Tok::LAngle => "'<'".to_owned(),
        Tok::RAngle => "'>'".to_owned(),
        Tok::Comma => "','".to_owned(),
        Tok::Colon => "':'".to_owned(),
        Tok::Eq => "'='".to_owned(),
        Tok::Dot => "'.'".to_owned(),
        Tok::At => "'@'".to_owned(),
        Tok::Question => "'?'".to_owned(),
        Tok::Bytes(s) => format!("byte string {s}"),
        Tok::Numbers(_, n) => format!("a list of {n} number{}", if *n == 1 { "" } else { "s" }),
        Tok::AnnStart => "'#@'".to_owned(),
        Tok::AnnEnd => "the end of the annotation line".to_owned(),
    }
}

fn expected_list(expected: &[String]) -> String {
    let mut items: Vec<String> = expected.iter().map(|e| describe_terminal(e)).collect();
    items.dedup();
    match items.len() {
        0 => "nothing more".to_owned(),
        1 => items.remove(0),
        n if n <= 6 => {
            let last = items.pop().unwrap_or_default();
            format!("{} or {last}", items.join(", "))
        }
        _ => format!("{}, …", items[..5].join(", ")),
    }
}

fn convert(error: ParseError<usize, Tok<'_>, ()>, source_len: usize) -> SyntaxError {
    match error {
        ParseError::UnrecognizedToken { token: (l, tok, r), expected } => SyntaxError {
            code: "unexpected-token",
            message: format!("expected {}, found {}", expected_list(&expected), describe_found(&tok)),
            span: Span::new(l, r),
            related: Vec::new(),
        },
        ParseError::UnrecognizedEof { location, expected } => SyntaxError {
            code: "unexpected-end",
            message: format!("expected {}, found the end of the text", expected_list(&expected)),
            span: Span::new(location.min(source_len), location.min(source_len)),
            related: Vec::new(),
        },
        ParseError::ExtraToken { token: (l, tok, r) } => SyntaxError {
            code: "trailing-text",
            message: format!("text after the end of the model: {}", describe_found(&tok)),
            span: Span::new(l, r),
            related: Vec::new(),
        },
        ParseError::InvalidToken { location } => SyntaxError {
            code: "unexpected-character",
            message: "invalid token".to_owned(),
            span: Span::new(location, location),
            related: Vec::new(),
        },
        ParseError::User { .. } => SyntaxError {
            code: "syntax-error",
            message: "syntax error".to_owned(),
            span: Span::new(0, 0),
            related: Vec::new(),
        },
    }
}

/// Where the grammar's recovery rules put the errors they recovered from: converted at once
/// (a recovery carries the list of every token that was expected, kilobytes each) and
/// counted, with the lexer's errors, for the token stream to stop at [`MAX_ERRORS`].
#[derive(Debug)]
pub struct Recovered {
    errors: Vec<SyntaxError>,
    count: Rc<Cell<usize>>,
    len: usize,
}

impl Recovered {
    pub(crate) fn push(&mut self, recovery: ErrorRecovery<usize, Tok<'_>, ()>) {
        self.count.set(self.count.get() + 1);
        self.errors.push(convert(recovery.error, self.len));
    }

    /// A keyword the grammar reads as a name (`@initializers`) that is not the word
    /// expected there.
    pub(crate) fn expected_word(&mut self, span: Span, word: &str, why: &str) {
        self.count.set(self.count.get() + 1);
        self.errors.push(SyntaxError {
            code: "unexpected-token",
            message: format!("expected `{word}` here: {why}"),
            span,
            related: Vec::new(),
        });
    }
}

/// The token stream as the parser reads it: ends early, where it stands, once
/// [`MAX_ERRORS`] errors (the lexer's and the parser's) have been counted.
struct Capped<'a> {
    lexing: Lexing<'a>,
    /// The parser's errors so far.
    count: Rc<Cell<usize>>,
    /// Where the stream was cut at the error cap.
    cut: Option<usize>,
    /// Tokens handed to the parser, to record the position every so many.
    passed: usize,
    /// [`READ`] when last seen, and the tokens handed out since it changed.
    read: (u64, usize),
    /// Where the stream was cut because the parser read nothing for [`MAX_TOKENS_UNREAD`]
    /// tokens.
    unread: Option<usize>,
}

impl<'a> Iterator for Capped<'a> {
    type Item = Triple<'a>;

    fn next(&mut self) -> Option<Triple<'a>> {
        if self.cut.is_some() {
            return None;
        }
        let next = self.lexing.next_triple()?;
        self.passed += 1;
        if let Some(p) = self.lexing.progress
            && self.passed.is_multiple_of(TOKENS_PER_RECORD)
        {
            p.reached(next.0);
        }
        if self.count.get() + self.lexing.errors_before(next.0) >= MAX_ERRORS {
            self.cut = Some(next.0);
            return None;
        }
        // Looked at every so many tokens, not each (the parser's hot path).
        if self.passed.is_multiple_of(UNREAD_STRIDE) {
            let read = READ.with(Cell::get);
            if read == self.read.0 {
                self.read.1 += UNREAD_STRIDE;
                if self.read.1 > MAX_TOKENS_UNREAD {
                    self.unread = Some(next.0);
                    self.cut = Some(next.0);
                    return None;
                }
            } else {
                self.read = (read, 0);
            }
        }
        Some(next)
    }
}

/// Runs a generated parser over a text's tokens, with the error cap, and gathers every
/// error in text order.
fn run<'a, T>(
    source: &'a str,
    progress: Option<&'a Progress>,
    depth: usize,
    parse: impl FnOnce(&mut Recovered, &mut Capped<'a>) -> Result<T, ParseError<usize, Tok<'a>, ()>>,
) -> Parse<T> {
    if let Some(p) = progress {
        p.enter(Stage::Parsing);
    }
    let count = Rc::new(Cell::new(0));
    let mut recovered = Recovered { errors: Vec::new(), count: count.clone(), len: source.len() };
    let read = (READ.with(Cell::get), 0);
    let mut stream =
        Capped { lexing: Lexing::new(source, progress, depth), count, cut: None, passed: 0, read, unread: None };
    let result = parse(&mut recovered, &mut stream);
    let Capped { lexing, cut, unread, .. } = stream;
    let cut = cut.or(lexing.cut);
    let (mut errors, floats, too_deep) = (lexing.errors, lexing.floats, lexing.stream.too_deep);
    errors.append(&mut recovered.errors);
    let tree = match result {
        Ok(tree) => Some(tree),
        Err(e) => {
            errors.push(convert(e, source.len()));
            None
        }
    };
    errors.sort_by_key(|e| (e.span.start, e.span.end));
    point_at_open_brackets(source, &mut errors);
    if let Some(at) = too_deep {
        // The text ends there only because it was not read further: what the parser said
        // about that end (a bracket never closed) is not about the text, and would hide the
        // nesting limit behind "found the end of the text". The parser never saw the real
        // end of the text, so an end it reports is this one.
        errors.retain(|e| e.code == "nesting-too-deep" || (e.code != "unexpected-end" && (e.span.start as usize) < at));
    }
    if let Some(at) = cut {
        // What the parser said about the text ending where it was cut is not about the text.
        errors.retain(|e| (e.span.start as usize) < at);
        errors.truncate(MAX_ERRORS);
        errors.push(match unread {
            Some(_) => SyntaxError {
                code: "unreadable-rest",
                message: format!(
                    "nothing in the {MAX_TOKENS_UNREAD} tokens after the error before reads as part of a model; \
                     the rest of the text is not read"
                ),
                span: Span::new(at, at),
                related: Vec::new(),
            },
            None => SyntaxError {
                code: "too-many-errors",
                message: format!("more than {MAX_ERRORS} syntax errors; the rest of the text is not read"),
                span: Span::new(at, at),
                related: Vec::new(),
            },
        });
    }
    Parse { tree, errors, floats }
}

/// A syntax error at a closing bracket of another kind than the one open there, or at the
/// end of the text, also points at the bracket left open: the cause is usually a bracket
/// closed wrongly, or never, further up. `errors` is sorted by place; one pass over the
/// tokens serves them all.
fn point_at_open_brackets(source: &str, errors: &mut [SyntaxError]) {
    let closer_at = |e: &SyntaxError| source.get(e.span.start as usize..e.span.end as usize).and_then(closer_of);
    let wanted: Vec<usize> = (0..errors.len())
        .filter(|&i| match errors[i].code {
            "unexpected-end" => true,
            "unexpected-token" => closer_at(&errors[i]).is_some(),
            _ => false,
        })
        .collect();
    if wanted.is_empty() {
        return;
    }
    // The brackets open before the current token: (its closer, where it is).
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut next = 0;
    let note = |e: &mut SyntaxError, open: &[(char, usize)]| {
        let Some(&(closer, at)) = open.last() else { return };
        let opener = &source[at..at + 1];
        let found = closer_at(e);
        if e.code == "unexpected-end" {
            e.related.push((Span::new(at, at + 1), format!("this '{opener}' is never closed")));
        } else if found != Some(closer) {
            e.related
                .push((Span::new(at, at + 1), format!("this '{opener}' is still open: it closes with '{closer}'")));
        }
    };
    for token in lexer::tokens(source) {
        while next < wanted.len() && errors[wanted[next]].span.start <= token.start {
            note(&mut errors[wanted[next]], &open);
            next += 1;
        }
        if next == wanted.len() {
            // Every error is placed: the rest of the text need not be lexed again.
            return;
        }
        let start = token.start as usize;
        match token.kind {
            TokenKind::LParen => open.push((')', start)),
            TokenKind::LBracket => open.push((']', start)),
            TokenKind::LBrace => open.push(('}', start)),
            TokenKind::LAngle => open.push(('>', start)),
            // Only its own kind of bracket is closed, as the nesting count does.
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace | TokenKind::RAngle
                if open.last().map(|&(c, _)| c) == closer_of(token.text(source)) =>
            {
                open.pop();
            }
            _ => {}
        }
    }
    for &i in &wanted[next..] {
        note(&mut errors[i], &open);
    }
}

fn closer_of(text: &str) -> Option<char> {
    match text {
        ")" => Some(')'),
        "]" => Some(']'),
        "}" => Some('}'),
        ">" => Some('>'),
        _ => None,
    }
}

/// Parses a text holding one function (what `onnx.printer.to_text(function)` writes, as in
/// the function bodies of operator schemas).
pub fn parse_function(source: &str) -> Parse<ast::Function> {
    run(source, None, 0, |recovered, tokens| generated::grammar::FunctionParser::new().parse(recovered, tokens))
}

/// Parses a whole model file.
pub fn parse_model(source: &str) -> Parse<ast::Model> {
    run(source, None, 0, |recovered, tokens| generated::grammar::ModelParser::new().parse(recovered, tokens))
}

/// Parses the text of one value declaration that sits inside `depth` open brackets of a
/// bigger text (for [`crate::incremental`]).
pub(crate) fn parse_value_decl_at_depth(source: &str, depth: usize) -> Parse<ast::ValueDecl> {
    run(source, None, depth, |recovered, tokens| generated::grammar::ValueDeclParser::new().parse(recovered, tokens))
}

/// Parses the text of one node that sits inside `depth` open brackets of a bigger text
/// (for [`crate::incremental`]).
pub(crate) fn parse_node_at_depth(source: &str, depth: usize) -> Parse<ast::Node> {
    run(source, None, depth, |recovered, tokens| generated::grammar::NodeParser::new().parse(recovered, tokens))
}

/// [`parse_model`], recording how far it has come in `progress` (scanning, then parsing).
pub fn parse_model_with_progress(source: &str, progress: &Progress) -> Parse<ast::Model> {
    run(source, Some(progress), 0, |recovered, tokens| generated::grammar::ModelParser::new().parse(recovered, tokens))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(source: &str) -> ast::Model {
        let parse = parse_model(source);
        assert!(parse.errors.is_empty(), "{source}: {:?}", parse.errors);
        parse.tree.expect("a tree")
    }

    fn errs(source: &str) -> Vec<(&'static str, String)> {
        parse_model(source).errors.into_iter().map(|e| (e.code, e.message)).collect()
    }

    #[test]
    fn parses_a_model_with_header_functions_and_subgraphs() {
        let m = ok(r#"
            <ir_version: 8, opset_import: ["" : 18, "local" : 1], metadata_props: ["a": "b"]>
            main (float[N, 3] X, int64 k = {2}) => (float[N] Y) <float[2] w = {1, 2.5}, T> {
              [n0] T = MatMul (X, w)
              Y = If (c) <then_branch: graph = then_body () => (float[2] a) { a = Identity (X) }, x = [1, 2]>
              , = local.Sq:ov (T, , k) <t = float[2] name {1, 2}, ty = seq(float[?, "M + N"]), r: int = @ref>
            }
            <domain: "local", opset_import: ["" : 18]>
            Sq <a, b: float = 1.5> (x) => (y) { y = Mul (x, x) }
        "#);
        assert!(m.header.is_some());
        let g = m.graph.expect("graph");
        assert_eq!(g.nodes.len(), 3);
        assert_eq!(m.functions.len(), 1);
    }

    #[test]
    fn onnx_corner_cases_parse() {
        for source in [
            "g () => () {}",
            "g => () {}",
            "g (float float) => () {}",
            "g (\"float\") => () {}",
            "g (x) => (y) { y = Foo(y,) z = Foo(,) w = Foo(,x) v = Foo(x,,y) , = Foo(,) }",
            "g (x) => (y) { [] a = Foo(x) [\"my node\"] b = Foo(x) }",
            "g (x) => (y) { y = com . microsoft . Foo (x) y = .Foo(x) y = Foo:ov1(x) }",
            "g (x) => (y) { y = Foo(float, int64, seq, map, ir_version) float = Foo(x) }",
            "g (x) => (y) { y = Foo <a = 1., b = 1.e5, c = 1e-3, d = -0, e = -inf, f = NaN, g = 007> (x) }",
            "g (x) => (y) { y = Foo <a: ints = [], b = [1.5, 2], s = \"a\\\"b\"> (x) }",
            "g (x) => (y) { y = Foo <a = float[2] {1,2}, b = float[2] t = {1,2}, c = float[2] = {1}, d = float[2] {}, e = float[2] t, f = float {1}, g = float[2] float {1,2}> (x) }",
            "g (x) => (y) { y = Foo <a = float[2], b = seq(float[2]), c = sparse_tensor(float[2]), d = opaque(d, n), e = map(int64, seq(float))> (x) }",
            "g (float[-1] a, float[?] b, float[\"a b\"] c, float [N] d) => () {}",
            "g (float[2] x = {1, 2}, y) => () { }",
            "g (float[2] x =) => () <float[2] w = , float[2] e = [\"location\": \"f\", \"offset\": \"0\"]> {}",
            "g (opaque(a.b.c) x, opaque(a.b, T) y, opaque() z) => () {}",
            "# leading\ng (x) => (z) # c1\n{ # c2\n} # trailing",
            "g (x)=>(z){z=Foo(x)}",
            "g (x) => (y) { y = Foo (x) <b=2> }",
            "g (x) => (y) { y = Loop (M, \"\", v0) <body: graph = body (int64 i, bool c) => (bool c2) <float[2] one = {1,1}> { c2 = Identity (c) }> }",
        ] {
            ok(source);
        }
    }

    #[test]
    fn a_wrong_or_missing_closer_points_at_the_open_bracket() {
        let header = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float[2] x) => (float[2] y) {\n";
        let wrong = format!("{header}  t = Relu(x]\n  y = Relu(t)\n}}\n");
        let errors = parse_model(&wrong).errors;
        let open = wrong.find("Relu(").map(|i| i + 4).expect("the call");
        assert_eq!(
            errors[0].related,
            vec![(Span::new(open, open + 1), "this '(' is still open: it closes with ')'".into())]
        );
        let unclosed = format!("{header}  y = Relu(x)\n");
        let errors = parse_model(&unclosed).errors;
        let brace = header.rfind('{').expect("the body");
        assert_eq!(errors[0].code, "unexpected-end");
        assert_eq!(errors[0].related, vec![(Span::new(brace, brace + 1), "this '{' is never closed".into())]);
        // A closer of the right kind, where something else was expected, points nowhere.
        let right = format!("{header}  y = Relu(x,)\n}}\n");
        assert!(parse_model(&right).errors.iter().all(|e| e.related.is_empty()));
    }

    #[test]
    fn reading_stops_after_the_error_cap() {
        let header = "<ir_version: 8, opset_import: [\"\" : 17]>\ng (float x) => (float y) {\n";
        for (what, body) in [("grammar", "y = = = ,\n"), ("lexer", "$ "), ("strings", "\"\n")] {
            let source = format!("{header}{}y = Relu(x)\n}}\n", body.repeat(20 * MAX_ERRORS));
            let errors = parse_model(&source).errors;
            assert!(errors.len() <= MAX_ERRORS + 1, "{what}: {} errors", errors.len());
            let last = errors.last().expect("errors");
            assert_eq!(last.code, "too-many-errors", "{what}");
            assert!((last.span.start as usize) < source.len() / 2, "{what}: cut at {}", last.span.start);
        }
        // Below the cap, every error is reported and the text is read to its end.
        let source = format!("{header}{}y = Relu(x)\n}}\n", "y = = = ,\n".repeat(10));
        let errors = parse_model(&source).errors;
        assert!(errors.len() >= 10 && errors.iter().all(|e| e.code != "too-many-errors"), "{errors:?}");
    }

    #[test]
    fn errors_name_what_was_expected_and_found() {
        let e = errs("g () => {}");
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].0, "unexpected-token");
        assert!(e[0].1.contains("expected '('") && e[0].1.contains("found '{'"), "{e:?}");
        assert_eq!(errs("g () => () {} junk")[0].0, "unexpected-end");
        assert_eq!(errs("g (x) => (y) { y = Foo(x) } \"")[0].0, "unterminated-string");
        assert_eq!(errs("g (x) => (y) { y = Foo <a = - 5> (x) }")[0].0, "lone-minus");
        assert_eq!(errs("g (x) => (y) { y = Foo <a = 1e> (x) }")[0].0, "bad-number");
        assert_eq!(errs("\u{feff}g () => () {}")[0].0, "unexpected-character");
        assert_eq!(errs("g (x\0) => () {}")[0].0, "unexpected-character");
    }

    #[test]
    fn recovers_at_nodes_and_keeps_going() {
        let parse =
            parse_model("g (x) => (y) {\n a = Foo(x\n b = Bar(x)\n c = Baz(b) d = Qux(c) <a = > \n e = Ok(d)\n}");
        assert!(parse.errors.len() >= 2, "{:?}", parse.errors);
        let tree = parse.tree.expect("a tree despite the errors");
        let graph = tree.graph.expect("graph");
        let good = graph.nodes.iter().filter(|n| matches!(n, ast::NodeItem::Node(_))).count();
        assert!(good >= 2, "{:?}", graph.nodes);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("g (x) => (y) {{ y = Foo <t = {}float{}> (x) }}", "seq(".repeat(20_000), ")".repeat(20_000));
        let e = errs(&deep);
        assert!(e.iter().any(|(c, _)| *c == "nesting-too-deep"), "{:?}", &e[..e.len().min(3)]);
    }

    /// A text that never reads as a model again after its first error (lines of `y = = = ,`
    /// without a graph around them) is not kept token by token while the parser looks for a
    /// place to go on: reading stops after [`MAX_TOKENS_UNREAD`] tokens (issue 52: 20 MB of
    /// such lines held 750 MB).
    #[test]
    fn a_text_that_never_reads_again_is_not_kept_token_by_token() {
        let text = "y = = = ,\n".repeat(MAX_TOKENS_UNREAD / 4);
        let e = errs(&text);
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(e[1].0, "unreadable-rest", "{e:?}");
        // Shorter, it is read to its end.
        let short = "y = = = ,\n".repeat(MAX_TOKENS_UNREAD / 10);
        assert!(errs(&short).iter().all(|(code, _)| *code != "unreadable-rest"));
        // A valid text of many tokens between names reads whole.
        let dims = vec!["?"; MAX_TOKENS_UNREAD].join(", ");
        let wide = format!("g (float[{dims}] x) => (float y) {{ y = Identity (x) }}");
        assert_eq!(errs(&wide), Vec::new());
    }

    /// The nesting limit is what is reported, not "found the end of the text" where reading
    /// stopped (issue 52): for nested subgraphs and for nested types alike.
    #[test]
    fn too_deep_a_text_is_reported_as_too_deep_and_only_so() {
        let mut graphs = "b () => (float o) { o = Constant <value = float {1.0}> () }".to_owned();
        for k in 0..300 {
            graphs = format!("b{k} () => (float o) {{ o = If (c) <then_branch = {graphs}> }}");
        }
        let subgraphs = format!("g (bool c) => (float y) {{ y = If (c) <then_branch = {graphs}> }}");
        let types =
            format!("g ({}float{} x) => (float y) {{ y = Identity (x) }}", "seq(".repeat(1_000), ")".repeat(1_000));
        for (what, text) in [("subgraphs", &subgraphs), ("types", &types)] {
            let e = errs(text);
            assert_eq!(e.len(), 1, "{what}: {:?}", &e[..e.len().min(3)]);
            assert_eq!(e[0].0, "nesting-too-deep", "{what}");
            assert!(e[0].1.contains("512 levels"), "{what}: {}", e[0].1);
        }
    }
}
