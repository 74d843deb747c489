//! Several independent Redis masters, and asking all of them at once.
//!
//! Both the majority sequence and the Redlock lock talk to N masters that know
//! nothing of each other, and both need the same three things, kept here:
//!
//! * a [`Node`] per master (`node.rs`): its [`super::Store`] (timeouts,
//!   one connection shared by every clone, error sorting) and whether it
//!   keeps every write, checked on each new connection and when a
//!   long-running caller asks;
//! * the majority, `N/2 + 1`;
//! * [`gather`]: send one request to every node concurrently, bound each by a
//!   timeout, and stop waiting as soon as the outcome is decided. A node that
//!   is down or frozen then costs at most the timeout, and a healthy majority
//!   decides without waiting for it. The requests are futures polled in one
//!   task, so a caller can drop the whole round (a signal arrived) and nothing
//!   keeps running behind its back.

use super::{Node, Target, Timeouts};
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

/// N independent masters: no replication between them, each may fail alone.
#[derive(Clone)]
pub struct Quorum {
    nodes: Vec<Node>,
    /// The nodes' labels, shared: every round names its nodes in messages.
    labels: Arc<[String]>,
    request_timeout: Duration,
}

impl Quorum {
    /// A quorum over `targets`. Each request to a node is bounded by
    /// `request_timeout` (dialing is bounded by it too). `require_durable`:
    /// [`Node::prepare`] checks each node once; otherwise it does
    /// nothing. Nothing is dialed yet.
    pub fn new(
        targets: &[Target],
        request_timeout: Duration,
        require_durable: bool,
    ) -> Result<Quorum> {
        if targets.is_empty() {
            return Err(Error::Usage(format!(
                "no Redis server given ({} URL)",
                Setting::Redis
            )));
        }
        for (i, a) in targets.iter().enumerate() {
            if targets[..i].iter().any(|b| b.display() == a.display()) {
                return Err(Error::Usage(format!(
                    "Redis at {} is given twice: each {} must be a different, independent master",
                    a.display(),
                    Setting::Redis
                )));
            }
        }
        let timeouts = Timeouts::per_request(request_timeout);
        let nodes = targets
            .iter()
            .map(|t| Node::new(t, timeouts, require_durable))
            .collect::<Result<Vec<_>>>()?;
        let labels = nodes.iter().map(|n| n.label().to_string()).collect();
        Ok(Quorum {
            nodes,
            labels,
            request_timeout,
        })
    }

    /// How many masters.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Prepares every node that answers ([`Node::prepare`]) before anything
    /// is written to any: a node that must be refused (not durable, or
    /// refusing our password) then stops the command before it left a trace
    /// on the others. Waits for a majority to be ready, and the others for a
    /// grace period ([`gather`]); a node that does not answer is checked on
    /// first contact later.
    pub async fn prepare_all(&mut self) -> Result<()> {
        if self.nodes.iter().all(Node::is_prepared) {
            return Ok(());
        }
        let m = self.majority();
        let labels = self.labels();
        let limit = self.round_timeout();
        let futures: Vec<_> = self.nodes.iter_mut().map(Node::prepare).collect();
        let replies = gather(futures, &labels, limit, |replies| {
            replies.iter().filter(|r| matches!(r, Some(Ok(())))).count() >= m
        })
        .await;
        match replies
            .into_iter()
            .flatten()
            .find_map(|r| r.err().filter(Error::is_fatal))
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// From now on, a fault of one node (it refuses our password or a
    /// command, or does not keep every write) costs that node's vote, not
    /// the call (`node.rs`): for a long-running caller, once its start-up
    /// check ([`prepare_all`](Self::prepare_all)) has passed. A one-shot
    /// command leaves it off, so that what is misconfigured stops it at once.
    pub fn put_in_service(&self) {
        self.nodes.iter().for_each(Node::put_in_service);
    }

    /// How many of them make a majority: `N/2 + 1`.
    pub fn majority(&self) -> usize {
        majority(self.nodes.len())
    }

    /// The bound on one request to one node.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// The bound on one node's part of a round: a (re)dial and a request, or
    /// a persistence check and a request.
    pub fn round_timeout(&self) -> Duration {
        self.request_timeout * 2
    }

    /// Scripts every node loads before its first request ([`Node::prepare`],
    /// in the round trip of the durability check when there is one).
    ///
    /// Why: a round settles on a majority, and the stragglers get a grace
    /// period and are then dropped; redis-rs does not send a request whose
    /// caller is gone. A script the node does not know yet costs it three
    /// round trips (`NOSCRIPT`, `SCRIPT LOAD`, `EVALSHA`) where the others
    /// take one, so its release, say, could be dropped unsent and leave the
    /// key there until its ttl.
    pub fn preload(&mut self, scripts: &[&'static str]) {
        let scripts: Arc<[&'static str]> = Arc::from(scripts);
        for node in &mut self.nodes {
            node.preload(&scripts);
        }
    }

    /// The URLs, passwords hidden, in the order given.
    pub fn labels(&self) -> Arc<[String]> {
        Arc::clone(&self.labels)
    }

    pub fn nodes_mut(&mut self) -> &mut [Node] {
        &mut self.nodes
    }
}

/// `N/2 + 1`.
pub fn majority(n: usize) -> usize {
    n / 2 + 1
}

/// One outcome per node of a round: `None` when the round was decided before
/// that node answered.
pub type Replies<T> = Vec<Option<Result<T>>>;

/// Polls `futures` (one per node, in node order) concurrently until each has
/// finished or `decided` says the replies so far settle the round. Each future
/// is bounded by `limit`; one that runs out gives [`Error::Unavailable`]
/// naming `labels[i]`.
///
/// Once the round is decided, the stragglers get a grace period as long as
/// the round has taken so far: a healthy node that was only a little slower
/// (still dialing, say) still gets the write, so that a lock usually sits on
/// every master, not on a bare majority; a frozen node costs at most twice
/// what the majority took. Futures still running after that are dropped,
/// which cancels them.
pub async fn gather<F, T>(
    futures: Vec<F>,
    labels: &[String],
    limit: Duration,
    mut decided: impl FnMut(&[Option<Result<T>>]) -> bool,
) -> Replies<T>
where
    F: Future<Output = Result<T>>,
{
    let started = tokio::time::Instant::now();
    let mut pending: Vec<Option<Pin<Box<tokio::time::Timeout<F>>>>> = futures
        .into_iter()
        .map(|f| Some(Box::pin(tokio::time::timeout(limit, f))))
        .collect();
    let mut replies: Replies<T> = pending.iter().map(|_| None).collect();
    let mut poll_all = |cx: &mut std::task::Context<'_>, replies: &mut Replies<T>| {
        let mut progress = false;
        for (i, slot) in pending.iter_mut().enumerate() {
            let Some(fut) = slot else { continue };
            if let Poll::Ready(outcome) = fut.as_mut().poll(cx) {
                replies[i] = Some(outcome.unwrap_or_else(|_| {
                    Err(Error::Unavailable(format!(
                        "Redis at {} did not answer within {}",
                        labels.get(i).map(String::as_str).unwrap_or("?"),
                        crate::base::duration::shown(limit)
                    )))
                }));
                *slot = None;
                progress = true;
            }
        }
        (progress, pending.iter().all(Option::is_none))
    };
    let mut all_done = false;
    std::future::poll_fn(|cx| {
        let (progress, done) = poll_all(cx, &mut replies);
        all_done = done;
        if done || (progress && decided(&replies)) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    if !all_done {
        let grace = tokio::time::sleep(started.elapsed());
        tokio::pin!(grace);
        std::future::poll_fn(|cx| {
            let (_, done) = poll_all(cx, &mut replies);
            if done || grace.as_mut().poll(cx).is_ready() {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
    }
    replies
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majorities() {
        assert_eq!(
            (1..=7).map(majority).collect::<Vec<_>>(),
            [1, 2, 2, 3, 3, 4, 4]
        );
    }

    #[tokio::test]
    async fn gather_stops_when_decided_and_bounds_each_future() {
        let labels: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let futures: Vec<Pin<Box<dyn Future<Output = Result<u32>>>>> = vec![
            Box::pin(async { Ok(1) }),
            Box::pin(async { Ok(2) }),
            Box::pin(async {
                std::future::pending::<()>().await;
                Ok(3)
            }),
        ];
        let replies = gather(futures, &labels, Duration::from_secs(3600), |r| {
            r.iter().flatten().filter(|x| x.is_ok()).count() >= 2
        })
        .await;
        assert!(matches!(replies[0], Some(Ok(1))));
        assert!(matches!(replies[1], Some(Ok(2))));
        assert!(replies[2].is_none());

        let futures: Vec<Pin<Box<dyn Future<Output = Result<u32>>>>> = vec![
            Box::pin(async { Ok(1) }),
            Box::pin(async {
                std::future::pending::<()>().await;
                Ok(2)
            }),
        ];
        let replies = gather(futures, &labels, Duration::from_millis(20), |_| false).await;
        assert!(matches!(replies[0], Some(Ok(1))));
        match &replies[1] {
            Some(Err(Error::Unavailable(m))) => assert!(m.contains("Redis at b"), "{m}"),
            other => panic!("{:?}", other.as_ref().map(|r| r.is_ok())),
        }
    }
}
