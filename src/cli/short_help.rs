//! `-h` and `--help`: two helps from one definition. A command's `-h` shows
//! the flags most runs use, each in one sentence, so that it fits on a
//! screen (40 lines); `--help` shows every flag in full, with examples.
//! New users read `-h` first, and a 244-line `-h` hid the flags they needed
//! among the ones a peer's habit or a cluster needs.

use clap::builder::StyledStr;
use clap::Arg;

/// What `-h` ends with, in place of the examples.
pub const SEE_HELP: &str = "See --help for every option, and examples.";

/// Shows in `-h` only the flags whose long names are `longs` (and every
/// positional argument), each with the first sentence of its help; the
/// others stay in `--help` alone, which keeps every help whole.
pub fn most_used(longs: &'static [&'static str]) -> impl FnMut(Arg) -> Arg {
    move |arg| {
        let shown = arg.is_positional() || arg.get_long().is_some_and(|l| longs.contains(&l));
        if shown {
            one_sentence(arg)
        } else {
            arg.hide_short_help(true)
        }
    }
}

/// The argument with its short help cut to its first sentence, without its
/// asides in parentheses; its long help (what `--help` prints) the whole text.
fn one_sentence(arg: Arg) -> Arg {
    let Some(help) = arg.get_help().map(StyledStr::to_string) else { return arg };
    let short = first_sentence(&help);
    if short == help {
        return arg;
    }
    let long = arg.get_long_help().map_or(help, StyledStr::to_string);
    arg.help(short).long_help(long)
}

/// `text` up to its first full stop outside brackets, with what stands in
/// parentheses left out: "Rows per batch (default 10,000). Each ..." is
/// "Rows per batch".
fn first_sentence(text: &str) -> String {
    let mut short = String::with_capacity(text.len());
    let (mut parens, mut brackets) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '(' => {
                if parens == 0 {
                    short.truncate(short.trim_end().len());
                }
                parens += 1;
            }
            ')' if parens > 0 => parens -= 1,
            '[' => brackets += 1,
            ']' if brackets > 0 => brackets -= 1,
            '.' if parens == 0 && brackets == 0 && chars.peek().is_some_and(|n| n.is_whitespace()) => break,
            _ => {}
        }
        if parens == 0 && c != ')' {
            short.push(c);
        }
    }
    short.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_help_is_the_first_sentence_without_asides() {
        let text = "Rows per batch (default 10,000, e.g. 1e4). Each batch is one transaction";
        let arg = one_sentence(Arg::new("x").long("x").help(text));
        assert_eq!(arg.get_help().map(ToString::to_string).as_deref(), Some("Rows per batch"));
        assert_eq!(arg.get_long_help().map(ToString::to_string).as_deref(), Some(text));
        assert_eq!(first_sentence("Table (NAME or SCHEMA.NAME; default: the model's)"), "Table");
        assert_eq!(first_sentence("Data model [default: a. b] for rows"), "Data model [default: a. b] for rows");
    }
}
