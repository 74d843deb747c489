//! `yaraus health`: one look at every node, or with `--wait` the gate of a
//! rolling maintenance (heal what is ripe, look again every second, until
//! all is held or the bound).

mod prometheus;
mod show;

use crate::cli::{HealthArgs, HealthFormat};
use crate::stdout::write_stdout_unless_closed;
use std::time::Duration;
use tokio::time::Instant;
use yaraus::base::duration::shown;
use yaraus::context::Context;
use yaraus::error::Result;
use yaraus::health::{Survey, exit_code};
use yaraus::seq::sweep;
use yaraus::store::Quorum;
use yaraus::timing::health::LOOK_EVERY;

pub async fn health(ctx: &Context, args: HealthArgs) -> Result<i32> {
    // Several masters vote, and a node that may forget a write must not;
    // a single pool server is as durable as its replicas, not its fsync.
    let several = ctx.targets().len() > 1;
    let ctx = &ctx.clone().requiring_durable(several);
    let mut quorum = ctx.quorum(ctx.timeouts().sequence_request())?;
    // A node at fault is a finding, not the end of the command.
    quorum.put_in_service();
    let survey = match args.wait {
        None => Survey::take(ctx, &mut quorum).await?,
        Some(bound) => gate(ctx, &mut quorum, bound).await?,
    };
    let findings = survey.findings();
    let text = match args.format {
        HealthFormat::Table => show::table(&survey, &findings),
        HealthFormat::Json => show::json(&survey, &findings),
        HealthFormat::Prometheus => prometheus::exposition(&survey, &findings),
    };
    write_stdout_unless_closed(text.as_bytes())?;
    Ok(exit_code(&findings))
}

/// Looks, heals what a heal pass may, and looks again every
/// [`LOOK_EVERY`] until nothing is found or `bound` has passed; the last
/// survey.
async fn gate(ctx: &Context, quorum: &mut Quorum, bound: Duration) -> Result<Survey> {
    let started = Instant::now();
    let deadline = started + bound;
    let mut said = Vec::new();
    loop {
        let survey = Survey::take(ctx, quorum).await?;
        let findings = survey.findings();
        if findings.is_empty() {
            if !said.is_empty() {
                log::info!("all held, after {}", shown(round_ms(started.elapsed())));
            }
            return Ok(survey);
        }
        if Instant::now() >= deadline {
            return Ok(survey);
        }
        sweep::heal_found(quorum, survey.census.clone()).await;
        // Each thing once, when it starts or changes state; many alike
        // (a wiped node lacks every counter) in one line.
        let mut now: Vec<(String, &str, usize, &str)> = Vec::new();
        for f in &findings {
            match now
                .iter_mut()
                .find(|(s, st, _, _)| *s == f.subject && *st == f.state)
            {
                Some(group) => group.2 += 1,
                None => now.push((f.subject.clone(), f.state, 1, &f.text)),
            }
        }
        for (subject, state, count, text) in &now {
            if !said.contains(&(subject.clone(), *state)) {
                match count {
                    1 => log::info!("waiting for {subject}: {text}"),
                    n => log::info!("waiting for {subject}: {n} counters alike, as {text}"),
                }
            }
        }
        said = now.into_iter().map(|(s, st, _, _)| (s, st)).collect();
        let pause = LOOK_EVERY.min(deadline.saturating_duration_since(Instant::now()));
        tokio::time::sleep(pause).await;
    }
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}
