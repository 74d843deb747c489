//! The arguments of `yaraus acl-rules`.

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use yaraus::acl::Part;

pub(super) const ACL_RULES_ABOUT: &str = "Print the ACL SETUSER line of a Redis user (--redis-user, \
default yaraus) that may run the given subcommands (default: all; lock only with --lock-prefix) \
and nothing else: the key patterns of the namespace and the lock prefix, read-only where the \
subcommands only read, and the commands yaraus and its Lua scripts send. Give it the same \
global options as the commands it is for (--redis, --namespace, --sentinel, --min-replicas, \
--redis-replicas): they decide what is needed (CLUSTER SLOTS for a Cluster, ROLE through \
Sentinel, SELECT for a db other than 0, WAIT and INFO for replicas).\n\n\
Paste the line into redis-cli with the user's password added as >PASSWORD, or into users.acl \
as `user NAME ...`. The line starts with `reset`, so it replaces what the user had.\n\n\
Two commands are in Redis's @dangerous category and each can be left out: INFO (for the \
replica count of run; give --min-replicas N or --redis-replicas N instead) and CONFIG GET \
(the durability check of seq, hilo and a lock over several masters, which can read every \
setting; give --assume-durable here and to those commands once you have checked the settings \
yourself).";

/// Shown after the exit table (cli/examples.rs).
pub(super) const ACL_RULES_EXAMPLES: &str = "  \
yaraus --namespace pool1 acl-rules run stats\n  \
yaraus --redis redis://a --redis redis://b --redis redis://c acl-rules --lock-prefix locks: lock\n  \
yaraus acl-rules run stats | sed '/^#/d' | { read -r rules; \
printf '%s >%s\\n' \"$rules\" \"$(cat /etc/yaraus/redis-password)\"; } | redis-cli";

#[derive(Args, Debug)]
pub struct AclRulesArgs {
    /// The subcommands the user will run. [default: all of them]
    #[arg(value_name = "SUBCOMMAND", value_parser = part_parser())]
    pub parts: Vec<Part>,

    /// The --prefix of the locks: lock keys are the lock names, so a rule
    /// needs their common prefix.
    #[arg(long, value_name = "P")]
    pub lock_prefix: Option<String>,

    /// Leave CONFIG GET out: the commands will run with --assume-durable.
    #[arg(long)]
    pub assume_durable: bool,
}

/// The subcommand names [`Part`] knows, as clap's possible values.
fn part_parser() -> impl TypedValueParser<Value = Part> {
    let names: Vec<&'static str> = Part::all().iter().map(|p| p.name()).collect();
    PossibleValuesParser::new(names).map(|name| Part::named(&name).expect("a listed name"))
}
