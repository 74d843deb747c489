//! What a waiter hears (src/claim/wake.rs): its subscriptions, on every
//! master and to every channel of its claim, and what each message means
//! to it.

use crate::store::{Heard, Listener, Store};
use crate::timing::wake::MAJORITY_WAIT;
use futures_util::StreamExt;
use futures_util::stream::SelectAll;

/// Once woken alone on one of several masters, waits (at most
/// [`MAJORITY_WAIT`]) until `needed` of them, a majority, have told it so:
/// each master's release pops its place and publishes, and an attempt sent
/// while the release is still on its way to the others would take a
/// minority, give it back, and so wake the next waiter, which could then
/// overtake it. (Several channels on one master, the shards of a pool, make
/// one master: any one release frees an id.)
pub(super) async fn majority_freed(
    messages: &mut SelectAll<Listener>,
    needed: usize,
    channels: &[String],
    own: &[u8],
) {
    let mut told = 1;
    let _ = tokio::time::timeout(MAJORITY_WAIT, async {
        while told < needed {
            match messages.next().await {
                Some(heard)
                    if woken_by(&heard, claim_channel(channels, &heard), own) == Wake::Alone =>
                {
                    told += 1
                }
                Some(_) => {}
                None => return,
            }
        }
    })
    .await;
}

/// The claim channel of `channels` that `heard` came on, or the first when
/// it came on a waiter's own.
pub(super) fn claim_channel<'a>(channels: &'a [String], heard: &Heard) -> &'a str {
    channels
        .iter()
        .find(|name| heard.channel == name.as_bytes())
        .unwrap_or(&channels[0])
}

/// Subscribes to each group of `channels` on every store at once (one
/// subscription per group); the stores that could not are left out.
/// Returns the subscriptions, and how many stores have one.
pub(super) async fn listen_all(
    stores: &[&Store],
    groups: &[Vec<String>],
) -> (SelectAll<Listener>, usize) {
    let tries = stores.iter().map(|store| async move {
        let mut listening = Vec::new();
        for group in groups {
            let names: Vec<&str> = group.iter().map(String::as_str).collect();
            if let Ok(listener) = store.listen(&names).await {
                listening.push(listener);
            }
        }
        listening
    });
    let per_store = futures_util::future::join_all(tries).await;
    let masters = per_store.iter().filter(|l| !l.is_empty()).count();
    (per_store.into_iter().flatten().collect(), masters)
}

/// What a message means to a waiter.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Wake {
    /// Its own channel: it was chosen.
    Alone,
    /// The claim's channel, from someone else: everyone was woken.
    WithEveryone,
    /// Its own undo, heard on the claim's channel.
    No,
}

pub(super) fn woken_by(heard: &Heard, channel: &str, own: &[u8]) -> Wake {
    if heard.channel != channel.as_bytes() {
        Wake::Alone
    } else if !own.is_empty() && heard.payload == own {
        Wake::No
    } else {
        Wake::WithEveryone
    }
}
