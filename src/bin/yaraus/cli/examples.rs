//! The examples that `--help` shows after the exit table of `yaraus`,
//! `init`, `run`, `stats`, `list` and `completions`, and that the man pages
//! turn into their EXAMPLES section (cli/man). The other subcommands keep
//! theirs in their own exit-status text, beside their options.
//!
//! One text serves both, so the page and `--help` cannot drift apart;
//! [`with_examples`] puts an exit table and examples together in the form
//! the man pages read: blocks apart by a blank line, the examples under
//! `Examples:`, one command a line, indented two spaces.

/// An exit table followed by `examples` (lines indented two spaces).
pub(super) fn with_examples(exit_status: &str, examples: &str) -> String {
    format!("{exit_status}\n\nExamples:\n{examples}")
}

pub(super) const YARAUS: &str = "  \
yaraus init --min 1 --max 1023
  yaraus run -- ./katsubushi -worker-id=<>       # a unique worker id in place of <>
  yaraus lock nightly-backup --ttl 30s --wait 5m -- ./backup.sh
  YARAUS_REDIS=redis://redis.internal:6379/0 YARAUS_NAMESPACE=pool1 yaraus stats";

pub(super) const INIT: &str = "  \
yaraus init --min 1 --max 1023
  yaraus --redis redis://redis.internal:6379/0 --namespace pool1 init --max 4095   # grow it
  yaraus --redis redis+cluster://n1:7000,n2:7000,n3:7000 init --shards 6   # 2 on each master";

pub(super) const RUN: &str = "  \
yaraus run -- ./katsubushi -worker-id=<>
  yaraus run --replacement @ID@ -- ./worker --id @ID@
  yaraus run --min 1 --max 1023 --wait 5m -- ./worker   # YARAUS_WORKER_ID in its environment";

pub(super) const STATS: &str = "  \
yaraus stats
  yaraus stats --format prometheus > /var/lib/node_exporter/textfile/yaraus.prom";

pub(super) const LIST: &str = "  \
yaraus list --format table --using
  yaraus list | jq -r '.[] | select(.using) | \"\\(.id) \\(.client_id)\"'";

pub(super) const COMPLETIONS: &str = "  \
yaraus completions bash > /etc/bash_completion.d/yaraus
  yaraus completions zsh > \"${fpath[1]}/_yaraus\"
  yaraus completions fish > ~/.config/fish/completions/yaraus.fish";
