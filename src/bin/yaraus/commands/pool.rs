//! `init`, `stats` and `list`: the one-shot companions of `run`.

use crate::cli::{InitArgs, ListArgs, ListFormat, StatsArgs, StatsFormat};
use crate::stdout::{unless_closed, write_stdout, write_stdout_unless_closed};
use std::io::Write;
use yaraus::context::PoolContext;
use yaraus::error::{Error, Result};
use yaraus::lease::{self, HolderClock, InitOutcome, ListEntry, Listing, PoolInit, Stats};

pub async fn init(ctx: &PoolContext, args: InitArgs) -> Result<i32> {
    lease::validate_range(args.min, args.max)?;
    if let Some(n) = args.shards {
        lease::validate_shards(n, args.min, args.max)?;
    }
    // Reaching the server is waited for up to --wait, the work (millions of
    // ids, perhaps) is let finish. Done again after a fault: a pool half
    // built is under a temporary key that expires, and growing it again
    // finishes the job.
    let outcome = ctx
        .patience()
        .retry_work(
            &server(ctx),
            async |_| ctx.connect().await,
            async |mut store| {
                let range = (args.min, args.max);
                lease::init_pool(&mut store, &ctx.keys, range, args.shards, args.force).await
            },
        )
        .await?;
    let PoolInit { outcome, name } = outcome;
    // The report is the command's result, not a log line: on stdout, so
    // that `--quiet` (which silences log lines) keeps it and a script can
    // read it.
    let report = match outcome {
        InitOutcome::Created { min, max } => {
            format!("initialized: ids {min}..{max} in {name}\n")
        }
        InitOutcome::Already { min, max } => {
            format!("already initialized: ids {min}..{max} in {name}\n")
        }
        InitOutcome::Resized {
            from,
            to,
            added,
            removed,
        } => format!(
            "resized {name} from {}..{} to {}..{}: {added} ids added, {removed} removed\n",
            from.0, from.1, to.0, to.1
        ),
    };
    write_stdout(report.as_bytes())?;
    Ok(0)
}

/// What a pool command waits for, in log lines.
fn server(ctx: &PoolContext) -> String {
    format!("Redis at {}", ctx.target.display())
}

pub async fn stats(ctx: &PoolContext, args: StatsArgs) -> Result<i32> {
    let stats = ctx
        .patience()
        .retry_work(
            &server(ctx),
            async |_| ctx.connect().await,
            async |mut store| lease::stats(&mut store, &ctx.keys).await,
        )
        .await?;
    let text = match args.format {
        StatsFormat::Json => {
            serde_json::to_string_pretty(&stats).map_err(|e| Error::Output(e.to_string()))? + "\n"
        }
        StatsFormat::Prometheus => prometheus(&stats, &ctx.keys.ids),
    };
    write_stdout_unless_closed(text.as_bytes())?;
    Ok(0)
}

/// The Prometheus text exposition format: counters for the Go tool's event
/// counts, gauges for the rest, each labelled with the pool.
fn prometheus(stats: &Stats, pool: &str) -> String {
    let label = yaraus::metrics::escape_label_value(pool);
    let mut out = String::new();
    for (i, (name, value)) in stats.figures().into_iter().enumerate() {
        let kind = if i < 8 || name == "wait_shortfall" || name == "clock_step_back" {
            "counter"
        } else {
            "gauge"
        };
        let help = match name {
            "client_id_count" => "Client ids handed out.",
            "client_get_id_count" => "Attempts to lease an id.",
            "client_get_id_success" => "Attempts to lease an id that succeeded.",
            "get_id_no_available_id" => "Attempts to lease an id that found none free.",
            "extend_ttl_count" => "Lease renewals attempted.",
            "extend_ttl_success" => "Lease renewals that succeeded.",
            "extend_ttl_ownership_error" => "Lease renewals that found the id taken.",
            "extend_ttl_expire_warning" => "Lease renewals of an id that had already expired.",
            "unusing_ids" => "Ids free now.",
            "using_ids" => "Ids leased now.",
            "using_ttl_max" => "Longest remaining lease, seconds.",
            "using_ttl_mid" => "Median remaining lease, seconds.",
            "wait_shortfall" => "Writes fewer than a majority of the connected replicas confirmed.",
            "clock_step_back" => "Renewals that found their host's wall clock stepped back.",
            _ => "Shortest remaining lease, seconds.",
        };
        let metric = if kind == "counter" {
            format!("yaraus_{name}_total")
        } else {
            format!("yaraus_{name}")
        };
        out.push_str(&format!(
            "# HELP {metric} {help}\n# TYPE {metric} {kind}\n{metric}{{pool=\"{label}\"}} {value}\n"
        ));
    }
    // The range, as the JSON's `min` and `max`: a pool made by the Go tool
    // has none recorded, and then only the HELP and TYPE lines say so.
    for (name, bound, help) in [
        ("min", stats.min, "Smallest worker id of the pool."),
        ("max", stats.max, "Largest worker id of the pool."),
    ] {
        let metric = format!("yaraus_{name}");
        out.push_str(&format!("# HELP {metric} {help}\n# TYPE {metric} gauge\n"));
        if let Some(bound) = bound {
            out.push_str(&format!("{metric}{{pool=\"{label}\"}} {bound}\n"));
        }
    }
    // Each leased id's holder's clock offset and its error bound, as the
    // JSON's `clock_offsets`, in seconds as Prometheus has durations.
    type Pick = fn(&HolderClock) -> Option<i64>;
    let per_holder: [(&str, &str, Pick); 2] = [
        (
            "yaraus_clock_offset_seconds",
            "A leased id's holder's wall clock minus the server's, as last measured.",
            |h| h.offset_ms,
        ),
        (
            "yaraus_clock_error_seconds",
            "The error bound of yaraus_clock_offset_seconds.",
            |h| h.error_ms,
        ),
    ];
    shard_figures(&mut out, stats, &label);
    for (metric, help, pick) in per_holder {
        out.push_str(&format!("# HELP {metric} {help}\n# TYPE {metric} gauge\n"));
        for holder in &stats.clock_offsets {
            if let Some(ms) = pick(holder) {
                out.push_str(&format!(
                    "{metric}{{pool=\"{label}\",id=\"{}\"}} {}\n",
                    holder.id,
                    ms as f64 / 1000.0
                ));
            }
        }
    }
    out
}

/// A sharded pool's ids per shard, labelled with the shard's ids key.
fn shard_figures(out: &mut String, stats: &Stats, label: &str) {
    if stats.shards.is_empty() {
        return;
    }
    type Pick = fn(&lease::ShardFigures) -> i64;
    let figures: [(&str, &str, Pick); 2] = [
        (
            "yaraus_shard_unusing_ids",
            "Ids free now, in one shard.",
            |s| s.unusing_ids,
        ),
        (
            "yaraus_shard_using_ids",
            "Ids leased now, in one shard.",
            |s| s.using_ids,
        ),
    ];
    for (metric, help, pick) in figures {
        out.push_str(&format!("# HELP {metric} {help}\n# TYPE {metric} gauge\n"));
        for shard in &stats.shards {
            let key = yaraus::metrics::escape_label_value(&shard.key);
            out.push_str(&format!(
                "{metric}{{pool=\"{label}\",shard=\"{key}\"}} {}\n",
                pick(shard)
            ));
        }
    }
}

pub async fn list(ctx: &PoolContext, args: ListArgs) -> Result<i32> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut first = true;
    let format = args.format;
    let header = match format {
        ListFormat::Json => "[".to_string(),
        ListFormat::Table => format!(
            "{:>10}  {:<5}  {:>10}  {:<24}  {:<32}  {}",
            "ID", "USING", "TTL", "EXPIRE_AT", "CLIENT_ID", "CLOCK_OFFSET"
        ),
    };
    let which = if args.using {
        Listing::Using
    } else {
        Listing::All
    };
    // Tried again only while nothing has been printed: a listing that
    // fails half-way ends with its error, not with a second copy.
    let listed = ctx
        .patience()
        .retry_work(
            &server(ctx),
            async |_| ctx.connect().await,
            async |mut store| {
                let result = lease::list(&mut store, &ctx.keys, which, |entry: ListEntry| {
                    if first {
                        writeln!(out, "{header}")?;
                    }
                    match format {
                        ListFormat::Json => {
                            if !first {
                                out.write_all(b",\n")?;
                            }
                            serde_json::to_writer(&mut out, &entry)?;
                        }
                        ListFormat::Table => writeln!(
                            out,
                            "{:>10}  {:<5}  {:>10.3}  {:<24}  {:<32}  {}",
                            entry.id,
                            if entry.using { "yes" } else { "no" },
                            entry.ttl,
                            entry.expire_at.as_deref().unwrap_or("-"),
                            entry.client_id.as_deref().unwrap_or("-"),
                            clock_offset(&entry)
                        )?,
                    }
                    first = false;
                    Ok(())
                })
                .await;
                match result {
                    Err(e) if first => Err(e),
                    other => Ok(other),
                }
            },
        )
        .await?;
    listed?;
    // The header comes with the first row, so that a listing that fails
    // prints nothing but its error; a listing without rows still gets it, so
    // that an empty table reads as one (and a script can skip a first line).
    let tail = match (format, first) {
        (ListFormat::Json, true) => "[]\n".to_string(),
        (ListFormat::Json, false) => "\n]\n".to_string(),
        (ListFormat::Table, true) => format!("{header}\n"),
        (ListFormat::Table, false) => String::new(),
    };
    out.write_all(tail.as_bytes())
        .and_then(|_| out.flush())
        .or_else(unless_closed)?;
    Ok(0)
}

/// A list row's clock offset: `+12ms±3`, or `-` when never measured.
fn clock_offset(entry: &ListEntry) -> String {
    match (entry.clock_offset_ms, entry.clock_error_ms) {
        (Some(ms), Some(err)) => format!("{ms:+}ms±{err}"),
        _ => "-".into(),
    }
}
