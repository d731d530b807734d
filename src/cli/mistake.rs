//! A command line clap refused, read from clap's structured error (its kind
//! and context), not from its rendered text: `dbload run` and `dbload sweep`
//! parse command lines of their own making (a run file's part, a sweep's
//! point) and must say in one line what was wrong and which option, in
//! their own terms, whatever clap's wording.

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// What clap refused, in one line, and the option at fault when it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistake {
    /// E.g. "unexpected argument `--batch-sise` (did you mean `--batch-size`?)".
    pub message: String,
    /// The option at fault as given (`--batch-sise`), without its value name.
    pub option: Option<String>,
}

impl Mistake {
    pub fn of(e: &clap::Error) -> Mistake {
        let context = |kind: ContextKind| {
            e.get(kind).and_then(|v| match v {
                ContextValue::String(s) => Some(s.clone()),
                ContextValue::Strings(list) => Some(list.join(", ")),
                ContextValue::StyledStr(s) => Some(s.to_string()),
                ContextValue::Number(n) => Some(n.to_string()),
                _ => None,
            })
        };
        let arg = context(ContextKind::InvalidArg);
        let value = context(ContextKind::InvalidValue);
        let mut message = match (e.kind(), &arg, &value) {
            (ErrorKind::UnknownArgument, Some(arg), _) => format!("unexpected argument `{arg}`"),
            (ErrorKind::InvalidValue | ErrorKind::ValueValidation, Some(arg), Some(value)) => {
                format!("invalid value `{value}` for `{arg}`")
            }
            (ErrorKind::MissingRequiredArgument, Some(arg), _) => format!("missing `{arg}`"),
            (ErrorKind::ArgumentConflict, Some(arg), _) => match context(ContextKind::PriorArg) {
                Some(prior) => format!("`{arg}` cannot be used with `{prior}`"),
                None => format!("`{arg}` cannot be used with the other options given"),
            },
            (kind, Some(arg), _) => format!("{}: `{arg}`", kind.as_str().unwrap_or("refused")),
            (kind, None, _) => kind.as_str().unwrap_or("refused").to_string(),
        };
        if let Some(why) = std::error::Error::source(e) {
            message.push_str(&format!(": {why}"));
        }
        if let Some(valid) = context(ContextKind::ValidValue) {
            message.push_str(&format!(" (possible values: {valid})"));
        }
        if let Some(suggested) = context(ContextKind::SuggestedArg) {
            message.push_str(&format!(" (did you mean `{suggested}`?)"));
        }
        // `--batch-size <BATCH_SIZE>`: the option, without its value's name.
        let option = arg.map(|a| a.split([' ', '=']).next().unwrap_or(&a).to_string());
        Mistake { message, option }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::Parser;

    fn mistake(line: &str) -> Mistake {
        Mistake::of(&Cli::try_parse_from(line.split(' ')).expect_err(line))
    }

    #[test]
    fn each_kind_says_what_and_which_option() {
        let m = mistake("dbload ingest --batch-sise 10");
        assert_eq!(m.option.as_deref(), Some("--batch-sise"));
        assert_eq!(m.message, "unexpected argument `--batch-sise` (did you mean `--batch-size`?)");
        let m = mistake("dbload ingest --batch-size ten");
        assert_eq!(m.option.as_deref(), Some("--batch-size"));
        assert!(m.message.starts_with("invalid value `ten` for `--batch-size <"), "{}", m.message);
        let m = mistake("dbload ingest --method carrier-pigeon");
        assert!(m.message.contains("`carrier-pigeon`") && m.message.contains("(possible values: "), "{}", m.message);
        let m = mistake("dbload ingest --rows 1 --rows 2");
        assert_eq!(m.option.as_deref(), Some("--rows"), "{m:?}");
        assert!(m.message.contains("`--rows"), "{}", m.message);
    }
}
