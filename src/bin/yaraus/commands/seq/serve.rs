//! `yaraus seq serve`: the RESP front of the majority sequence (the server
//! itself is [`yaraus::seq::serve`]; this file is flags in, one line out).
//!
//! At start it checks what can be checked before any client arrives, so
//! that a mistake is one line and an exit status rather than an error on
//! every request: the URLs and namespace, every node that answers for
//! durability (a node that does not persist every write is refused unless
//! `--allow-volatile`; one that does not answer is checked on first
//! contact), and the listen address. Then it prints the address it listens
//! on (the port it got, for `--listen HOST:0`) and serves until SIGTERM or
//! SIGINT, which drain and exit 0; a second signal exits at once.
//!
//! Under systemd (`Type=notify`, packaging/systemd/yaraus-seq-serve@.service)
//! it says `READY=1` once it listens and catches the signals, and
//! `STOPPING=1` at the first one; without `NOTIFY_SOCKET` these do nothing.

use crate::cli::SeqServeArgs;
use crate::settings::credentials;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use yaraus::context::Context;
use yaraus::error::{Error, Result};
use yaraus::metrics::{Kind, Metrics, http};
use yaraus::seq::SeqKeys;
use yaraus::seq::serve::{Config, ServeMetrics, Server};
use yaraus::supervise::Signals;
use yaraus::timing::serve::RETIRE_AFTER;

pub async fn serve(ctx: &Context, args: SeqServeArgs) -> Result<i32> {
    let metrics_args = args.metrics.clone();
    http::with_metrics(
        metrics_args.metrics_listen.as_deref(),
        Kind::SeqServe,
        |metrics| serve_with(ctx, args, metrics),
    )
    .await
}

async fn serve_with(ctx: &Context, args: SeqServeArgs, metrics: Metrics) -> Result<i32> {
    // Before the first wait: a scrape never sees the page without them.
    let metrics = ServeMetrics::register(&metrics);
    let mut quorum = ctx.quorum(ctx.timeouts().sequence_request())?;
    quorum.prepare_all().await?;
    quorum.put_in_service();

    let listener = TcpListener::bind(&args.listen).await.map_err(|e| {
        Error::Usage(format!(
            "cannot listen on {}: {e}; give another --listen HOST:PORT (port 0 picks a free one)",
            args.listen
        ))
    })?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error::State(format!("cannot read the address listened on: {e}")))?;
    let line = format!(
        "seq serve: listening on {addr} (RESP2, RESP3), {} nodes, namespace {}",
        ctx.targets().len(),
        ctx.namespace()
    );
    // A port picked by the system must reach the user even with --quiet.
    if args.listen.ends_with(":0") {
        log::warn!("{line}");
    } else {
        log::info!("{line}");
    }

    let mut signals =
        Signals::stopping().map_err(|e| Error::State(format!("cannot catch signals: {e}")))?;
    let (count_tx, mut count) = watch::channel(0u32);
    tokio::spawn(async move {
        let mut n = 0;
        loop {
            let sig = signals.recv().await;
            n += 1;
            log::info!("seq serve: {sig}, stopping: finishing the rounds in flight");
            if n == 1 {
                let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
            }
            let _ = count_tx.send(n);
        }
    });
    let password = args.requirepass.filter(|p| !p.is_empty());
    if let Some(p) = &password
        && credentials::in_argv(p)
    {
        credentials::warn_on_command_line("--requirepass", "set YARAUS_SEQ_PASSWORD instead");
    }
    let config = Config {
        quorum,
        keys: SeqKeys::new(ctx.namespace()),
        timeout: ctx.timeouts().timeout(),
        max_clients: u64::from(args.max_clients),
        idle_timeout: (args.idle_timeout > Duration::ZERO).then_some(args.idle_timeout),
        max_batch: args.max_batch,
        password,
        durable: ctx.requires_durable(),
        metrics,
        retire_after: args.retire_after.unwrap_or(RETIRE_AFTER),
    };
    // Listening, and the signals caught: a client may come, a stop drains.
    if let Err(e) = sd_notify::notify(&[sd_notify::NotifyState::Ready]) {
        log::warn!("seq serve: cannot tell systemd it is ready (NOTIFY_SOCKET): {e}");
    }
    let mut first = count.clone();
    let stop = async move {
        let _ = first.wait_for(|&n| n >= 1).await;
    };
    tokio::select! {
        () = Server::run(listener, config, stop) => {
            log::info!("seq serve: stopped");
            Ok(0)
        }
        _ = count.wait_for(|&n| n >= 2) => Err(Error::Interrupted(sigint_number())),
    }
}

/// The signal number a forced stop reports (SIGINT, as after Ctrl-C twice).
fn sigint_number() -> i32 {
    nix::sys::signal::Signal::SIGINT as i32
}
