//! `yaraus acl-rules`: the ACL of a Redis user that may do what the given
//! subcommands need, for the deployment the global options describe.

use crate::cli::{AclRulesArgs, GlobalArgs};
use crate::stdout::write_stdout;
use yaraus::acl::{Deployment, Part, Rules};
use yaraus::context::Context;
use yaraus::error::Result;

pub fn acl_rules(ctx: &Context, global: &GlobalArgs, args: AclRulesArgs) -> Result<i32> {
    let (targets, ns) = (ctx.targets(), ctx.namespace());
    let mut parts = args.parts.clone();
    let mut notes = Vec::new();
    if parts.is_empty() {
        parts = Part::all().to_vec();
        if args.lock_prefix.is_none() {
            parts.retain(|p| *p != Part::Lock);
            notes.push(
                "lock is left out: its keys are the lock names; give --lock-prefix P (and run \
                 `yaraus lock --prefix P`) to include it",
            );
        }
    }
    parts.sort();
    parts.dedup();
    let deployment = Deployment {
        cluster: targets.iter().any(|t| t.is_cluster()),
        sentinel: targets.iter().any(|t| t.is_sentinel()),
        select: targets.iter().any(|t| t.db() != 0),
        several_masters: targets.len() > 1,
        min_replicas: global.min_replicas,
        replicas: global.redis_replicas,
        assume_durable: args.assume_durable,
    };
    let rules = Rules::new(&parts, ns, args.lock_prefix.as_deref(), &deployment)?;
    let user = global.redis_user.as_deref().unwrap_or("yaraus");
    if user.is_empty() || user.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(yaraus::error::Error::Usage(format!(
            "--redis-user {user:?} cannot be an ACL user name; use one word"
        )));
    }
    let names: Vec<String> = parts.iter().map(|p| p.name().to_string()).collect();
    let mut out = format!(
        "# Redis ACL of a user for yaraus {} (namespace {ns}), from `yaraus acl-rules`.\n\
         # Add the password as >PASSWORD at the end for redis-cli; in users.acl, write \
         `user {user} ...` instead of `ACL SETUSER {user} ...`.\n",
        names.join(", "),
    );
    if rules.commands().any(|c| c == "config|get") {
        notes.push(
            "+config|get reads every setting, requirepass included: to leave it out, check \
             appendonly yes, appendfsync always and maxmemory-policy noeviction on every node, \
             and use --assume-durable here and in the commands",
        );
    }
    if rules.commands().any(|c| c == "info|replication") {
        notes.push(
            "+info|replication tells run how many replicas to wait for: to leave it out, give \
             --redis-replicas N or --min-replicas N here and to run",
        );
    }
    for note in notes {
        out.push_str(&format!("# {note}\n"));
    }
    out.push_str(&format!("ACL SETUSER {user} {}\n", rules.to_rules()));
    write_stdout(out.as_bytes())?;
    Ok(0)
}
