//! A scratch directory for the children of yaraus: where their scripts live
//! and where they write what they saw (pids, ids, heartbeats).

use std::fs;
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::{EVENT, wait_until};

/// Where the children write what they saw, and where their scripts live.
pub struct Scratch {
    dir: TempDir,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix("yaraus-run-")
            .tempdir()
            .expect("scratch directory");
        Scratch { dir }
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The path of `name` as a command-line argument.
    pub fn arg(&self, name: &str) -> String {
        self.path(name).to_str().expect("UTF-8 path").to_string()
    }

    /// Writes a shell script; returns its path.
    pub fn script(&self, name: &str, body: &str) -> String {
        fs::write(self.path(name), body).expect("write script");
        self.arg(name)
    }

    pub fn read(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.path(name)).ok()
    }

    pub fn exists(&self, name: &str) -> bool {
        self.path(name).exists()
    }

    pub fn touch(&self, name: &str) {
        fs::write(self.path(name), "").expect("touch");
    }

    /// The complete lines (ending in a newline) of `name` so far.
    pub fn lines(&self, name: &str) -> Vec<String> {
        let text = self.read(name).unwrap_or_default();
        let complete = match text.rfind('\n') {
            Some(i) => &text[..=i],
            None => "",
        };
        complete.lines().map(str::to_string).collect()
    }

    /// Waits until `name` holds at least `n` complete lines; returns them all.
    pub fn wait_lines(&self, name: &str, n: usize) -> Vec<String> {
        let mut lines = Vec::new();
        wait_until(&format!("{n} line(s) in {name}"), EVENT, || {
            lines = self.lines(name);
            lines.len() >= n
        });
        lines
    }

    pub fn wait_line(&self, name: &str) -> String {
        self.wait_lines(name, 1).remove(0)
    }
}
