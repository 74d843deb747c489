//! A waiter's subscription: a connection of its own, subscribed to the
//! shared channel and (waking one) to its own, and the messages it was
//! delivered and has not read yet, as the waiter's connection buffers them.

use crate::common::server::RedisServer;
use std::collections::VecDeque;

/// One message as a subscriber hears it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub channel: String,
    pub payload: String,
}

pub struct Listener {
    conn: redis::Connection,
    /// The server's id of the connection, for `CLIENT KILL ID`.
    id: i64,
    /// Delivered, not read yet, oldest first.
    pub unread: VecDeque<Message>,
}

impl Listener {
    /// Subscribes a connection of its own to `channels`, as the waiter's
    /// `Wakeups::arm` does; returns once the server counts it on each.
    pub fn subscribe(server: &RedisServer, channels: &[&str]) -> Listener {
        let mut conn = server.conn();
        let id: i64 = redis::cmd("CLIENT")
            .arg("ID")
            .query(&mut conn)
            .expect("CLIENT ID");
        let command = redis::cmd("SUBSCRIBE").arg(channels).get_packed_command();
        conn.send_packed_command(&command).expect("SUBSCRIBE");
        for _ in channels {
            let confirmed = conn.recv_response().expect("SUBSCRIBE's confirmation");
            assert!(
                redis::Msg::from_value(&confirmed).is_none(),
                "a message before the subscription: {confirmed:?}"
            );
        }
        Listener {
            conn,
            id,
            unread: VecDeque::new(),
        }
    }

    /// Takes in every message published before now: a PING on the
    /// subscribed connection is answered after whatever the server queued
    /// for it earlier, so that once its `pong` is read nothing published by
    /// a step that has returned is still on its way.
    pub fn catch_up(&mut self) {
        self.ping();
        self.read_to_pong();
    }

    /// The first half of [`catch_up`](Self::catch_up), so that several
    /// connections wait for their `pong`s at once.
    pub fn ping(&mut self) {
        let ping = redis::cmd("PING").get_packed_command();
        self.conn.send_packed_command(&ping).expect("PING");
    }

    /// The second half: the messages before the `pong`.
    pub fn read_to_pong(&mut self) {
        loop {
            let value = self.conn.recv_response().expect("a subscriber's reply");
            match redis::Msg::from_value(&value) {
                Some(msg) => self.unread.push_back(Message {
                    channel: msg.get_channel_name().to_string(),
                    payload: msg.get_payload().expect("a message's payload"),
                }),
                None => return,
            }
        }
    }

    /// The connection is gone (the waiter died, its subscription closed,
    /// or it took its place and unsubscribed), with what it buffered.
    /// Closed from the server's side, so that the server has forgotten the
    /// subscriber when this returns: a socket closed by the client is only
    /// noticed at the server's next read, and a release in between would
    /// still count it.
    pub fn close(self, admin: &mut redis::Connection) {
        let killed: i64 = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("ID")
            .arg(self.id)
            .query(admin)
            .expect("CLIENT KILL ID");
        assert_eq!(killed, 1, "the subscriber's connection was already gone");
    }
}
