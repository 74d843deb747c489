//! The requests in flight of a model's state, kept in a fixed array so the
//! state stays `Copy` and hashes by value: the first `len` slots hold them,
//! the rest always hold the message type's empty value, so that two states
//! with the same requests are the same state. The models of this folder
//! share it (each names its own message type and array).

pub trait InFlight {
    type Msg: Copy + PartialEq;
    /// What an unused slot holds.
    const EMPTY: Self::Msg;

    /// How many slots are used, and the slots.
    fn slots(&self) -> (u8, &[Self::Msg]);
    fn slots_mut(&mut self) -> (&mut u8, &mut [Self::Msg]);

    fn msgs(&self) -> &[Self::Msg] {
        let (len, msgs) = self.slots();
        &msgs[..usize::from(len)]
    }

    fn push(&mut self, msg: Self::Msg) {
        let (len, msgs) = self.slots_mut();
        let n = usize::from(*len);
        assert!(
            n < msgs.len(),
            "more than {} requests in flight",
            msgs.len()
        );
        msgs[n] = msg;
        *len += 1;
    }

    /// Takes one `msg` out; false when none is in flight.
    fn remove(&mut self, msg: Self::Msg) -> bool {
        let (len, msgs) = self.slots_mut();
        let n = usize::from(*len);
        match msgs[..n].iter().position(|&x| x == msg) {
            Some(i) => {
                msgs.copy_within(i + 1..n, i);
                msgs[n - 1] = Self::EMPTY;
                *len -= 1;
                true
            }
            None => false,
        }
    }

    /// Keeps the requests `keep` says, in their order.
    fn retain(&mut self, keep: impl Fn(Self::Msg) -> bool) {
        let (len, msgs) = self.slots_mut();
        let n = usize::from(*len);
        let mut out = 0;
        for i in 0..n {
            let x = msgs[i];
            if keep(x) {
                msgs[out] = x;
                out += 1;
            }
        }
        for slot in &mut msgs[out..n] {
            *slot = Self::EMPTY;
        }
        *len = out as u8;
    }
}
