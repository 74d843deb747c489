//! How the command line spells each [`Setting`] that the library's messages
//! name: the library says what a value is, the binary says which flag set
//! it (registered once at start, [`yaraus::base::setting::name_settings`]).

use yaraus::base::setting::Setting;

/// The flag that sets `setting`.
pub fn flag(setting: Setting) -> &'static str {
    match setting {
        Setting::Redis => "--redis",
        Setting::Sentinel => "--sentinel",
        Setting::Tls => "--tls-*",
        Setting::PasswordFile => "--redis-password-file",
        Setting::MinReplicas => "--min-replicas",
        Setting::Replicas => "--redis-replicas",
        Setting::Namespace => "--namespace",
        Setting::Timeout => "--timeout",
        Setting::Wait => "--wait",
        Setting::AllowVolatile => "--allow-volatile",
        Setting::AssumeDurable => "--assume-durable",
        Setting::Min => "--min",
        Setting::Max => "--max",
        Setting::Expire => "--expire",
        Setting::Interval => "--interval",
        Setting::Delay => "--delay",
        Setting::KillAfter => "--kill-after",
        Setting::Skew => "--skew",
        Setting::Ttl => "--ttl",
        Setting::Limit => "--limit",
        Setting::Token => "--token",
        Setting::Prefix => "--prefix",
        Setting::LockPrefix => "--lock-prefix",
        Setting::Batch => "--batch",
        Setting::WindowSize => "--window-size",
        Setting::MinOpen => "--min-open",
        Setting::MaxClockWait => "--max-clock-wait",
        Setting::MaxClockOffset => "--max-clock-offset",
        Setting::StopOnClockStep => "--stop-on-clock-step",
        Setting::Force => "--force",
        Setting::Shards => "--shards",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every long flag (and visible alias) of the whole command tree.
    fn every_flag(cmd: &clap::Command, into: &mut Vec<String>) {
        for arg in cmd.get_arguments() {
            into.extend(
                arg.get_long_and_visible_aliases()
                    .into_iter()
                    .flatten()
                    .map(|l| format!("--{l}")),
            );
        }
        for sub in cmd.get_subcommands() {
            every_flag(sub, into);
        }
    }

    #[test]
    fn every_setting_is_named_after_a_flag_that_exists() {
        let mut flags = Vec::new();
        every_flag(&super::super::Cli::command(), &mut flags);
        for setting in Setting::ALL {
            let name = flag(setting);
            let found = match name.strip_suffix('*') {
                Some(stem) => flags.iter().any(|f| f.starts_with(stem)),
                None => flags.iter().any(|f| f == name),
            };
            assert!(
                found,
                "{setting:?} is named {name}, which no subcommand takes"
            );
        }
    }
}
