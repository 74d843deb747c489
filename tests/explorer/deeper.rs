//! The table of a model's deeper explorations (its `deeper.rs`: ignored
//! tests, run by hand in release), written once for every model: one row
//! per case, the failures gathered so that one run reports them all, and
//! the filter `<MODEL>_MODEL_CASES=words`, which runs only the cases whose
//! name contains the words.
//!
//! A case the filter leaves out gets a row saying so: it is the reader's
//! choice, as a test-name filter is. A filter that leaves out every case
//! fails the test, though: a run that explored nothing must not pass.

/// The rows so far, and what failed.
pub struct Table {
    filter_var: &'static str,
    filter: Option<String>,
    columns: usize,
    rows: Vec<String>,
    failures: Vec<String>,
    ran: usize,
}

impl Table {
    /// A table with these column names, filtered by the environment
    /// variable `filter_var` (every case runs when it is unset).
    pub fn new(filter_var: &'static str, columns: &[&str]) -> Table {
        Table {
            filter_var,
            filter: std::env::var(filter_var).ok(),
            columns: columns.len(),
            rows: vec![
                format!("| {} |", columns.join(" | ")),
                format!("|{}", "---|".repeat(columns.len())),
            ],
            failures: Vec::new(),
            ran: 0,
        }
    }

    /// Whether the case named `name` runs: no filter, or one its name
    /// contains. A case that runs counts as run.
    pub fn selected(&mut self, name: &str) -> bool {
        let selected = self.filter.as_ref().is_none_or(|only| name.contains(only));
        if selected {
            self.ran += 1;
        }
        selected
    }

    /// Runs the case named `name` if the filter selects it (`explore`
    /// returns its row, or what went wrong), else adds a row saying it was
    /// left out.
    pub fn case(&mut self, name: &str, explore: impl FnOnce() -> Result<String, String>) {
        if !self.selected(name) {
            let cells = " |".repeat(self.columns.saturating_sub(2));
            self.rows.push(format!(
                "| {name} | not selected by {} |{cells}",
                self.filter_var
            ));
            return;
        }
        match explore() {
            Ok(row) => self.rows.push(row),
            Err(failure) => self.failures.push(failure),
        }
    }

    /// A row of its own (a case that is not one exploration).
    pub fn row(&mut self, row: String) {
        self.rows.push(row);
    }

    /// Prints the table; fails if a case failed, or if the filter left out
    /// every case.
    pub fn finish(self) {
        println!("{}", self.rows.join("\n"));
        assert!(
            self.ran > 0,
            "{}={:?} matches no case: nothing was explored",
            self.filter_var,
            self.filter.as_deref().unwrap_or_default()
        );
        assert!(self.failures.is_empty(), "{:#?}", self.failures);
    }
}
