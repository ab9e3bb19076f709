//! The lexer: text → tokens with byte ranges, trivia included.
//!
//! Token classes follow onnx 1.23.2's scanner (see `docs/syntax.md`): identifiers, element
//! type names, type constructors and the words inf/infinity/nan are all identifier-shaped and
//! the parser decides by context which one a word is; `-` exists only as the sign of a number
//! or of inf/nan. Where onnx crashes or silently truncates (`- 5`, `1e`, a NUL byte) the
//! lexer produces an error token with a precise range instead.

use logos::Logos;

/// What a token is. Trivia (`Whitespace`, `Comment`, `DocComment`) are tokens too, so the
/// formatter can keep every comment; the parser skips them.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[logos(error = LexError)]
pub enum TokenKind {
    #[regex(r"[ \t\n\r\x0B\x0C]+")]
    Whitespace,
    /// `# …` to the end of the line.
    #[regex(r"#[^\n]*", allow_greedy = true)]
    Comment,
    /// `## …`: a documentation comment (our dialect attaches it to the next item; onnx sees
    /// an ordinary comment).
    #[regex(r"##[^\n]*", priority = 10, allow_greedy = true)]
    DocComment,
    /// `#@ key: value, …`: an annotation. onnx reads it as a comment; we read it as fields of
    /// the next item that onnx's text cannot express (doc strings, metadata, presence, …).
    #[regex(r"#@[^\n]*", priority = 11, allow_greedy = true)]
    Annotation,

    /// `"…"` with backslash quoting the next character. Scanned by [`to_closing_quote`], not
    /// by a regex: a DFA that alternates between "plain" and "escaped" states on every
    /// character recurses once per state change in an unoptimised build, and a string of a
    /// hundred thousand escapes (an embedded tensor) overflowed the stack.
    #[token("\"", to_closing_quote)]
    String,
    /// `b"…"` with escapes `\n \r \t \\ \" \xNN`: exact bytes, for names and texts that
    /// are not valid UTF-8 or hold line breaks inside annotations (ours; onnx has none).
    #[token("b\"", to_closing_quote)]
    ByteString,
    #[regex(r"-?[0-9]+")]
    Int,
    #[regex(r"-?[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// `-inf`, `-nan`, … (the unsigned words lex as `Ident` and are classified by text).
    #[regex(r"-(?i:inf|infinity|nan)")]
    SignedFloatWord,
    /// Any identifier-shaped word: names, keywords, type names, `inf`.
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident,

    #[token("=>")]
    Arrow,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    LAngle,
    #[token(">")]
    RAngle,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("=")]
    Eq,
    #[token(".")]
    Dot,
    #[token("@")]
    At,
    #[token("?")]
    Question,

    /// A string that reaches the end of the input without its closing quote (made from
    /// [`LexError::Unterminated`]).
    UnterminatedString,
    /// A number whose exponent has no digits: `1e`, `1.5e+`.
    #[regex(r"-?[0-9]+(\.[0-9]*)?[eE][+-]?")]
    BadExponent,
    /// A `-` not followed directly by a number or inf/nan.
    #[token("-")]
    LoneMinus,
    /// Any other character: non-ASCII outside strings, NUL, `'`, `+`, `;`, …
    Unknown,
}

/// What kind of literal a token is: the parser gives one to each `Int`, `Float`, inf/nan
/// word, `String` and `ByteString` token, and the number lists' fast path
/// ([`crate::numbers`]) to each number it scans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiteralKind {
    Int,
    Float,
    /// `inf`, `-nan`, … (any letter case).
    FloatWord,
    /// A string; the literal's `text` is the unquoted value.
    String,
    /// A byte string `b"…"`; the literal's `text` is as written (escapes are decoded when
    /// lowering, where a bad escape is reported).
    Bytes,
}

/// Why logos found no token.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LexError {
    /// A character no token starts with.
    #[default]
    Unknown,
    /// A string without its closing quote: it runs to the end of the input.
    Unterminated,
}

/// Moves the lexer past the closing quote of the string just opened, a backslash quoting
/// the byte after it. (A quoted character may be several bytes long: none of its
/// continuation bytes is a quote or a backslash, so stepping one byte is enough.)
fn to_closing_quote(lex: &mut logos::Lexer<'_, TokenKind>) -> Result<(), LexError> {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr2(b'"', b'\\', &rest[i..]) {
        i += at;
        if rest[i] == b'"' {
            lex.bump(i + 1);
            return Ok(());
        }
        i += 2;
        if i >= rest.len() {
            break;
        }
    }
    lex.bump(rest.len());
    Err(LexError::Unterminated)
}

impl TokenKind {
    pub fn is_trivia(self) -> bool {
        matches!(self, TokenKind::Whitespace | TokenKind::Comment | TokenKind::DocComment)
    }

    pub fn is_error(self) -> bool {
        matches!(
            self,
            TokenKind::UnterminatedString | TokenKind::BadExponent | TokenKind::LoneMinus | TokenKind::Unknown
        )
    }
}

/// A token: its kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub start: u32,
    pub end: u32,
}

impl Token {
    pub fn text(self, source: &str) -> &str {
        &source[self.start as usize..self.end as usize]
    }
}

/// Splits the whole source into tokens, trivia and error tokens included: the tokens cover
/// the source exactly, end to end.
pub fn lex(source: &str) -> Vec<Token> {
    tokens(source).collect()
}

/// The tokens of `source`, one at a time (what [`lex`] collects). Cloning the iterator gives
/// a lookahead that costs nothing to throw away.
pub fn tokens(source: &str) -> Tokens<'_> {
    Tokens { inner: TokenKind::lexer(source) }
}

#[derive(Clone, Debug)]
pub struct Tokens<'a> {
    inner: logos::Lexer<'a, TokenKind>,
}

impl Tokens<'_> {
    /// Goes on from byte `position` (after the current token, on a character boundary).
    pub fn skip_to(&mut self, position: usize) {
        let end = self.inner.span().end;
        if position > end {
            self.inner.bump(position - end);
        }
    }
}

impl Iterator for Tokens<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        let result = self.inner.next()?;
        let span = self.inner.span();
        let kind = match result {
            Ok(kind) => kind,
            Err(LexError::Unterminated) => TokenKind::UnterminatedString,
            Err(LexError::Unknown) => TokenKind::Unknown,
        };
        // Unknown characters are reported one whole character at a time, so ranges stay on
        // UTF-8 boundaries whatever logos consumed.
        let end = if kind == TokenKind::Unknown {
            let ch_len = self.inner.source()[span.start..].chars().next().map_or(1, char::len_utf8);
            let end = span.start + ch_len;
            if end != span.end {
                self.inner.bump(end.saturating_sub(span.end));
            }
            end
        } else {
            span.end
        };
        Some(Token { kind, start: span.start as u32, end: end as u32 })
    }
}

/// How an identifier-shaped word can be read, by its text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordClass {
    /// An element type name (`float`, `int64`, …).
    PrimType,
    /// `seq`, `map`, `optional`, `sparse_tensor`, `opaque`.
    TypeCtor,
    /// `inf`, `infinity`, `nan` in any letter case.
    FloatWord,
    Plain,
}

pub const PRIM_TYPES: &[&str] = &[
    "float",
    "double",
    "float16",
    "bfloat16",
    "int2",
    "int4",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint2",
    "uint4",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "string",
    "complex64",
    "complex128",
    "float8e4m3fn",
    "float8e4m3fnuz",
    "float8e5m2",
    "float8e5m2fnuz",
    "float8e8m0",
    "float4e2m1",
    "float6e2m3",
    "float6e3m2",
];

pub const TYPE_CTORS: &[&str] = &["seq", "map", "optional", "sparse_tensor", "opaque"];

pub fn classify_word(word: &str) -> WordClass {
    if PRIM_TYPES.contains(&word) {
        WordClass::PrimType
    } else if TYPE_CTORS.contains(&word) {
        WordClass::TypeCtor
    } else if ["inf", "infinity", "nan"].iter().any(|w| w.eq_ignore_ascii_case(word)) {
        WordClass::FloatWord
    } else {
        WordClass::Plain
    }
}

/// The bytes of a `b"…"` literal, or the offset (within the literal) of a bad escape.
pub fn unescape_bytes(literal: &str) -> Result<Vec<u8>, usize> {
    let inner = literal.strip_prefix("b\"").and_then(|s| s.strip_suffix('"')).unwrap_or(literal);
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let at = i + 2;
        match bytes.get(i + 1) {
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b't') => out.push(b'\t'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'"') => out.push(b'"'),
            Some(b'x') => {
                let hex = inner.get(i + 2..i + 4).and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or(at)?;
                out.push(hex);
                i += 4;
                continue;
            }
            _ => return Err(at),
        }
        i += 2;
    }
    Ok(out)
}

/// Writes bytes as a `b"…"` literal: printable ASCII as is, the rest escaped.
pub fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("b\"");
    for &b in bytes {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

/// The text of a string literal: quotes removed, each backslash dropped and the character
/// after it kept as is (onnx's rule: there are no C escapes).
pub fn unquote(literal: &str) -> String {
    let inner = literal.strip_prefix('"').unwrap_or(literal);
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::TokenKind::*;
    use super::*;

    fn kinds(source: &str) -> Vec<(TokenKind, &str)> {
        lex(source).into_iter().filter(|t| !t.kind.is_trivia()).map(|t| (t.kind, t.text(source))).collect()
    }

    #[test]
    fn tokens_cover_the_source_exactly() {
        for source in ["g (x) => (y) { y = Foo(x) } # end", "é\0'x", "\"open", "- 5 1e 1.5e+", ""] {
            let tokens = lex(source);
            let mut at = 0;
            for t in &tokens {
                assert_eq!(t.start, at, "{source:?}: gap before {t:?}");
                at = t.end;
            }
            assert_eq!(at as usize, source.len(), "{source:?}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("007 -0 1. 2.5 1.e5 1e-3 1E+3"),
            vec![
                (Int, "007"),
                (Int, "-0"),
                (Float, "1."),
                (Float, "2.5"),
                (Float, "1.e5"),
                (Float, "1e-3"),
                (Float, "1E+3")
            ]
        );
        assert_eq!(
            kinds("1e 1.5e+ - 5"),
            vec![(BadExponent, "1e"), (BadExponent, "1.5e+"), (LoneMinus, "-"), (Int, "5")]
        );
        // Numbers do not swallow letters; the parser rejects what follows.
        assert_eq!(kinds("1x 0x10"), vec![(Int, "1"), (Ident, "x"), (Int, "0"), (Ident, "x10")]);
        assert_eq!(kinds(".5 1.5.3"), vec![(Dot, "."), (Int, "5"), (Float, "1.5"), (Dot, "."), (Int, "3")]);
    }

    #[test]
    fn words() {
        assert_eq!(
            kinds("-inf -NaN inf inference nan0"),
            vec![
                (SignedFloatWord, "-inf"),
                (SignedFloatWord, "-NaN"),
                (Ident, "inf"),
                (Ident, "inference"),
                (Ident, "nan0")
            ]
        );
        assert_eq!(classify_word("float8e4m3fn"), WordClass::PrimType);
        assert_eq!(classify_word("sparse_tensor"), WordClass::TypeCtor);
        assert_eq!(classify_word("Infinity"), WordClass::FloatWord);
        assert_eq!(classify_word("FLOAT"), WordClass::Plain);
    }

    #[test]
    fn strings_and_comments() {
        assert_eq!(kinds(r#""a\"b" "#), vec![(String, r#""a\"b""#)]);
        assert_eq!(unquote(r#""a\"b\\c\nd\q""#), "a\"b\\cndq");
        assert_eq!(kinds("\"open"), vec![(UnterminatedString, "\"open")]);
        assert_eq!(kinds("\"x\\"), vec![(UnterminatedString, "\"x\\")]);
        assert_eq!(kinds("\"#not comment\""), vec![(String, "\"#not comment\"")]);
        let all: Vec<_> = lex("Fo#o\n## doc\n(x)").into_iter().map(|t| t.kind).collect();
        assert_eq!(all, vec![Ident, Comment, Whitespace, DocComment, Whitespace, LParen, Ident, RParen]);
    }

    #[test]
    fn annotations_and_byte_strings() {
        let all: Vec<_> = lex("#@ doc: b\"a\\n\\xff\"\n# c").into_iter().map(|t| t.kind).collect();
        assert_eq!(all, vec![Annotation, Whitespace, Comment]);
        assert_eq!(kinds("b\"x\\\"y\" b"), vec![(ByteString, "b\"x\\\"y\""), (Ident, "b")]);
        assert_eq!(unescape_bytes(r#"b"a\n\xff\"\\""#), Ok(b"a\n\xff\"\\".to_vec()));
        assert_eq!(unescape_bytes(r#"b"\q""#), Err(2));
        assert_eq!(unescape_bytes(r#"b"\xZZ""#), Err(2));
        let weird = b"line\n\xff\x00\"q\\";
        assert_eq!(unescape_bytes(&escape_bytes(weird)), Ok(weird.to_vec()));
    }

    #[test]
    fn arrow_is_one_token_and_bad_characters_are_errors() {
        assert_eq!(kinds("= > =>"), vec![(Eq, "="), (RAngle, ">"), (Arrow, "=>")]);
        assert_eq!(
            kinds("é\0'+;"),
            vec![(Unknown, "é"), (Unknown, "\0"), (Unknown, "'"), (Unknown, "+"), (Unknown, ";")]
        );
    }
}
