//! The words of a narrated run: a script's outcome, the restarts
//! allowed, lists of shards, windows and ids. The search never calls them
//! (`say!` skips them when no narration is asked for).

use super::*;

impl Model {
    /// A script's request and outcome, in words.
    pub(super) fn script_words(
        &self,
        script: Script,
        run: &Run,
        sh: usize,
        ok: bool,
        before: &Shard,
        after: &Shard,
    ) -> String {
        let refused = |why: String| format!(": refused ({why})");
        match script {
            Script::Fence if ok => format!("fence: accepted, hwm {}", value_name(after.hwm)),
            Script::Fence => format!("fence{}", refused(format!("fence {}", before.fence))),
            Script::Raise if ok => format!("raise to {}: hwm {}", run.new, after.hwm),
            Script::Raise => format!(
                "raise to {}{}",
                run.new,
                refused(format!("fence {}", value_name(before.fence)))
            ),
            Script::Create => {
                let a = run.window[sh];
                let window = format!("create [{a},{})", a + self.size);
                if ok {
                    format!("{window}: opened (hwm {})", after.hwm)
                } else {
                    format!(
                        "{window}{}",
                        refused(format!(
                            "fence {}, hwm {}",
                            value_name(before.fence),
                            value_name(before.hwm)
                        ))
                    )
                }
            }
        }
    }

    /// The restarts allowed, in words.
    pub(super) fn outages(&self) -> String {
        let count = if self.restarts == UNLIMITED {
            "restarts".to_string()
        } else {
            format!("{} restart(s)", self.restarts)
        };
        match self.gate {
            Gate::Budget => count,
            Gate::KeepHighest => format!("{count} while another shard keeps the highest hwm"),
            Gate::SinceLastRaise => {
                format!("{count}, not all since the last complete raise phase")
            }
        }
    }

    /// "[0,1) [1,2)": the windows (aligned to W) whose ids `mask` holds.
    pub(super) fn window_list(&self, mask: u32) -> String {
        let w = self.size;
        let list: Vec<String> = (0..ID_LIMIT / w)
            .map(|j| j * w)
            .filter(|&a| mask & ids(a, a + w) != 0)
            .map(|a| format!("[{a},{})", a + w))
            .collect();
        if list.is_empty() {
            "none".to_string()
        } else {
            list.join(" ")
        }
    }

    /// "A, B": the shards `which` holds for.
    pub fn shard_list(&self, which: impl Fn(usize) -> bool) -> String {
        let names: Vec<String> = (0..self.shards)
            .filter(|&s| which(s))
            .map(|s| shard_name(s).to_string())
            .collect();
        names.join(", ")
    }
}

/// "0,1,4": the ids in `mask`.
pub(super) fn id_list(mask: u32) -> String {
    let ids: Vec<String> = (0..32)
        .filter(|i| mask & 1 << i != 0)
        .map(|i: u32| i.to_string())
        .collect();
    ids.join(",")
}
