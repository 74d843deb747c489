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
//! * a [`Round`] ([`Quorum::round`]): send one request to every node
//!   concurrently, bound each by a timeout, and stop waiting as soon as the
//!   outcome is decided ([`Round::until`]) or every node answered
//!   ([`Round::all`]). A node that is down or frozen then costs at most the
//!   timeout, and a healthy majority decides without waiting for it. The
//!   requests are futures polled in one task, so a caller can drop the
//!   whole round (a signal arrived) and nothing keeps running behind its
//!   back.
//!
//! Every round of lock/, seq/, hilo/ and the serve probe is one of these:
//!
//! ```ignore
//! let replies = quorum
//!     .round(|node| async move { node.ask(&invocation).await })
//!     .until(|replies| settled(replies))
//!     .await;
//! ```

use super::node::Node;
use super::target::Target;
use crate::base::setting::Setting;
use crate::error::{Error, Result};
use crate::timing::Timeouts;
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
    /// grace period ([`Round::until`]); a node that does not answer is
    /// checked on first contact later.
    pub async fn prepare_all(&mut self) -> Result<()> {
        if self.nodes.iter().all(Node::is_prepared) {
            return Ok(());
        }
        let m = self.majority();
        let replies = self
            .round(Node::prepare)
            .until(|replies| replies.iter().filter(|r| matches!(r, Some(Ok(())))).count() >= m)
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

    /// A round: `ask` makes each node's request, in node order. Nothing is
    /// sent before the round is awaited ([`Round::until`], [`Round::all`]);
    /// each node's part is bounded by [`round_timeout`](Self::round_timeout).
    pub fn round<'q, F>(&'q mut self, mut ask: impl FnMut(&'q mut Node) -> F) -> Round<F>
    where
        F: Future,
    {
        self.round_each(std::iter::repeat(()), move |node, ()| ask(node))
    }

    /// A round in which node i's request is made of `each`'s item i
    /// (a node without one is not asked).
    pub fn round_each<'q, X, F>(
        &'q mut self,
        each: impl IntoIterator<Item = X>,
        mut ask: impl FnMut(&'q mut Node, X) -> F,
    ) -> Round<F>
    where
        F: Future,
    {
        Round {
            labels: self.labels(),
            limit: self.round_timeout(),
            futures: self
                .nodes
                .iter_mut()
                .zip(each)
                .map(|(node, x)| ask(node, x))
                .collect(),
        }
    }
}

/// One request per node, sent at once when awaited: see [`Quorum::round`].
#[must_use = "a round sends nothing until it is awaited"]
pub struct Round<F> {
    futures: Vec<F>,
    labels: Arc<[String]>,
    limit: Duration,
}

impl<F, T> Round<F>
where
    F: Future<Output = Result<T>>,
{
    /// Bounds each node's part by `limit` too, if that is shorter.
    pub fn within(mut self, limit: Duration) -> Round<F> {
        self.limit = self.limit.min(limit);
        self
    }

    /// Waits until `decided` says the replies so far settle the round, then
    /// gives the stragglers their grace period (`gather`).
    pub async fn until(self, decided: impl FnMut(&[Option<Result<T>>]) -> bool) -> Replies<T> {
        gather(self.futures, &self.labels, self.limit, decided).await
    }

    /// Waits for every node's reply, or its timeout: one outcome per node.
    pub async fn all(self) -> Vec<Result<T>> {
        self.until(|_| false)
            .await
            .into_iter()
            .map(|r| r.expect("a round that is never decided waits for every node"))
            .collect()
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
async fn gather<F, T>(
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

    fn three_nodes() -> Quorum {
        let targets: Vec<Target> = (1..=3)
            .map(|p| Target::parse(&format!("redis://127.0.0.1:{p}/0")).unwrap())
            .collect();
        Quorum::new(&targets, Duration::from_secs(60), false).unwrap()
    }

    // Nothing here dials: the requests only look at their node.
    #[tokio::test(start_paused = true)]
    async fn a_round_asks_each_node_in_order_and_within_bounds_every_part() {
        let mut quorum = three_nodes();
        let replies = quorum
            .round_each(["a", "b", "c"], |node, x| async move {
                Ok(format!("{x}@{}", node.label()))
            })
            .all()
            .await;
        let replies: Vec<String> = replies.into_iter().map(Result::unwrap).collect();
        assert_eq!(
            replies,
            [
                "a@redis://127.0.0.1:1/0",
                "b@redis://127.0.0.1:2/0",
                "c@redis://127.0.0.1:3/0"
            ]
        );

        let replies = quorum
            .round(|node| async move {
                if node.label().contains(":2/") {
                    std::future::pending::<()>().await;
                }
                Ok(())
            })
            .within(Duration::from_millis(20))
            .all()
            .await;
        assert!(replies[0].is_ok() && replies[2].is_ok());
        match &replies[1] {
            Err(Error::Unavailable(m)) => {
                assert!(
                    m.contains("127.0.0.1:2") && m.contains("within 20ms"),
                    "{m}"
                )
            }
            other => panic!("{:?}", other.as_ref().map(drop)),
        }
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
