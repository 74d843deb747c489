//! The shell completions come from the same clap definitions as the parser
//! (`yaraus completions SHELL`); the man pages are checked by a unit test of
//! the binary (`src/bin/yaraus/cli/man/`).

use crate::common;

#[test]
fn completions_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = common::yaraus()
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        for word in ["init", "run", "stats", "list", "redis", "interval"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
}
