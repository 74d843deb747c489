//! Listening on pub/sub channels, for the wake-ups of waiters
//! (src/claim/wake.rs): a [`Listener`] yields each message ([`Heard`]: its
//! channel and payload) and ends when its connection is gone.
//!
//! Two kinds of connection sit behind it, because Redis has two kinds of
//! channel:
//!
//! * **one server** (or the master Sentinel names): a RESP2 `aio::PubSub`
//!   that `SUBSCRIBE`s; the channel is plain pub/sub, which every node of a
//!   replicated server would relay, but only the master publishes on it;
//! * **Cluster**: a cluster connection of its own, in RESP3 (push messages
//!   are how redis-rs hands pub/sub to a cluster connection), that
//!   `SSUBSCRIBE`s: the channel carries the key's hash tag, so redis-rs
//!   routes the subscription to the master of the key's slot, and a
//!   `SPUBLISH` there reaches it without being broadcast over the cluster
//!   bus. redis-rs subscribes again after a reconnection (a failover, a slot
//!   moved); messages published in between are lost, which the waiter's
//!   fallback poll covers.
//!
//! Either connection closes when the [`Listener`] is dropped.

use futures_util::{Stream, StreamExt};
use redis::RedisResult;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A live subscription to some channels: yields every message.
pub struct Listener {
    messages: Pin<Box<dyn Stream<Item = Heard> + Send>>,
}

/// One message: the channel it came on, and what it said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heard {
    pub channel: Vec<u8>,
    pub payload: Vec<u8>,
}

impl Listener {
    /// `SUBSCRIBE channels…` on a connection of its own to `client`.
    pub(super) async fn plain(client: &redis::Client, channels: &[&str]) -> RedisResult<Listener> {
        let mut pubsub = client.get_async_pubsub().await?;
        pubsub.subscribe(channels).await?;
        let (sink, stream) = pubsub.split();
        Ok(Listener {
            // The sink is kept with the stream: dropping it would close
            // the connection.
            messages: Box::pin(stream.map(move |msg| {
                let _keep = &sink;
                Heard {
                    channel: msg.get_channel_name().as_bytes().to_vec(),
                    payload: msg.get_payload_bytes().to_vec(),
                }
            })),
        })
    }

    /// `SSUBSCRIBE channels…` on a Cluster connection of its own (the
    /// channels share a hash tag, hence a slot).
    pub(super) async fn sharded(
        builder: redis::cluster::ClusterClientBuilder,
        channels: &[&str],
    ) -> RedisResult<Listener> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let client = builder
            .use_protocol(redis::ProtocolVersion::RESP3)
            .push_sender(tx)
            .build()?;
        let mut conn = client.get_async_connection().await?;
        conn.ssubscribe(channels).await?;
        let messages = futures_util::stream::unfold((rx, conn), |(mut rx, conn)| async move {
            loop {
                // Only the messages: the confirmations of (re)subscribing
                // and the disconnections redis-rs reports are not wake-ups.
                let push: redis::PushInfo = rx.recv().await?;
                if push.kind == redis::PushKind::SMessage {
                    let mut data = push.data.into_iter().map(|v| match v {
                        redis::Value::BulkString(bytes) => bytes,
                        _ => Vec::new(),
                    });
                    let channel = data.next().unwrap_or_default();
                    let payload = data.next().unwrap_or_default();
                    return Some((Heard { channel, payload }, (rx, conn)));
                }
            }
        });
        Ok(Listener {
            messages: Box::pin(messages),
        })
    }
}

impl Stream for Listener {
    type Item = Heard;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Heard>> {
        self.messages.as_mut().poll_next(cx)
    }
}
