//! A table as the reports print it and as the pages draw it: aligned
//! columns of text for the terminal, rows of cells for an HTML `<table>`,
//! both from the one table, so a page shows what the terminal printed.

use serde::Serialize;

/// A table with the lines of text around it (`dbload compare`, `dbload
/// sweep`): what the lines above say, the heading and rows, which columns
/// hold figures, and what follows the table.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Table {
    pub above: Vec<String>,
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Per column: a figure, aligned right (a page's `num` cell).
    pub right: Vec<bool>,
    /// The row a page marks (a sweep's best point).
    pub marked: Option<usize>,
    pub below: Vec<String>,
}

impl Table {
    /// A table headed `head`, its columns where `right(column)` holds
    /// aligned right.
    pub fn new(head: Vec<String>, right: impl Fn(usize) -> bool) -> Table {
        let right = (0..head.len()).map(right).collect();
        Table { above: Vec::new(), head, rows: Vec::new(), right, marked: None, below: Vec::new() }
    }

    /// The text form: the lines above, a blank line, the aligned columns,
    /// then a blank line and the lines below if there are any.
    pub fn text(&self) -> String {
        let mut out: String = self.above.iter().map(|l| format!("{l}\n")).collect();
        if !self.above.is_empty() {
            out.push('\n');
        }
        let rows: Vec<Vec<String>> = std::iter::once(self.head.clone()).chain(self.rows.iter().cloned()).collect();
        out += &columns(&rows, "", |c| self.right.get(c).copied().unwrap_or(false));
        if !self.below.is_empty() {
            out.push('\n');
            out.extend(self.below.iter().map(|l| format!("{l}\n")));
        }
        out
    }
}

/// `rows` (the first the heading) as aligned columns, each line after
/// `indent`; the columns where `right(column)` holds are aligned right.
pub fn columns(rows: &[Vec<String>], indent: &str, right: impl Fn(usize) -> bool) -> String {
    let width = |c: usize| rows.iter().map(|row| row.get(c).map_or(0, |cell| cell.chars().count())).max();
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len)).filter_map(width).collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| if right(c) { format!("{cell:>w$}") } else { format!("{cell:<w$}") })
            .collect();
        out += indent;
        out += cells.join("  ").trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_aligns_figures_right_between_the_lines_around_it() {
        let mut t = Table::new(vec!["figure".into(), "A".into(), "verdict".into()], |c| c == 1);
        t.rows.push(vec!["rows/s".into(), "100".into(), "worse".into()]);
        t.rows.push(vec!["p99 ms".into(), "2.50".into(), "-".into()]);
        t.above.push("A: a.json".into());
        assert_eq!(t.text(), "A: a.json\n\nfigure     A  verdict\nrows/s   100  worse\np99 ms  2.50  -\n");
        t.below.push("Best: A".into());
        assert!(t.text().ends_with("p99 ms  2.50  -\n\nBest: A\n"), "{}", t.text());
    }
}
