//! The wake-ups' pure parts: what a message means to a waiter, and the
//! place its attempts carry.

use super::*;
use crate::store::Heard;

fn heard(channel: &str, payload: &str) -> Heard {
    Heard {
        channel: channel.as_bytes().to_vec(),
        payload: payload.as_bytes().to_vec(),
    }
}

#[test]
fn a_waiter_is_woken_alone_on_its_channel_and_never_by_its_own_undo() {
    let (channel, own) = ("ns:wake:l", b"f00d".as_slice());
    assert_eq!(
        woken_by(&heard("ns:wake:l:f00d", ""), channel, own),
        Wake::Alone
    );
    assert_eq!(
        woken_by(&heard(channel, ""), channel, own),
        Wake::WithEveryone
    );
    assert_eq!(
        woken_by(&heard(channel, "beef"), channel, own),
        Wake::WithEveryone
    );
    assert_eq!(woken_by(&heard(channel, "f00d"), channel, own), Wake::No);
    // A waiter without a place (wake-all) hears every message.
    assert_eq!(
        woken_by(&heard(channel, ""), channel, b""),
        Wake::WithEveryone
    );
}

#[test]
fn only_a_listening_waiter_that_wakes_one_carries_a_place() {
    let channel = Channel::new("ns", "l", false).unwrap();
    assert_eq!(channel.queue(), Some("ns:queue:l"));
    let mut wakeups = Wakeups::new(channel.clone(), WakePolicy::Queue);
    wakeups.place = Some(Place {
        member: "f00d".into(),
        arrival_us: 7,
    });
    assert_eq!(wakeups.queued("q"), None, "wake-all: no queue");
    let mut wakeups =
        Wakeups::new(channel, WakePolicy::Queue).waking_one(Duration::from_millis(1500));
    wakeups.place = Some(Place {
        member: "f00d".into(),
        arrival_us: 7,
    });
    assert_eq!(
        wakeups.queued("q"),
        None,
        "not listening: not woken on its channel"
    );
    wakeups.state = State::Listening(SelectAll::new());
    let queued = wakeups.queued("q").unwrap();
    assert_eq!((queued.queue, queued.place()), ("q", "7:1500:f00d".into()));
    assert!(wakeups.queues());
    assert_eq!(wakeups.waker_arg(), "f00d");
    wakeups.disarm();
    assert_eq!((wakeups.queued("q"), wakeups.waker_arg()), (None, ""));
    assert!(!wakeups.queues());
}
