//! A shard's scripts, each one atomic step: `fence.lua`, `raise.lua`,
//! `create.lua` as specified (or as a departure in [`Rules`] changes
//! them), the reserver, and the empty restart.
//!
//! Each script returns whether it accepted (the run's OK), and nothing
//! else the run needs but the fence's hwm; the fence's count of open
//! windows is left out, since which shards get a window is the run's free
//! choice in the model (every choice is explored).

use super::*;

impl Shard {
    pub const EMPTY: Shard = Shard {
        fence: 0,
        hwm: 0,
        open: 0,
    };

    /// fence.lua for `token`: refused when the shard holds a greater token
    /// (unless `ordered` is false: the last writer wins); else the fence
    /// becomes `token` and the reply is the hwm (0: absent).
    pub fn fence(&mut self, token: u8, ordered: bool) -> Option<u8> {
        if ordered && self.fence > token {
            return None;
        }
        self.fence = token;
        Some(self.hwm)
    }

    /// raise.lua: refused unless the fence is `token` (unless `fenced` is
    /// false); else hwm = max(hwm, new).
    pub fn raise(&mut self, token: u8, new: u8, fenced: bool) -> bool {
        if fenced && self.fence != token {
            return false;
        }
        self.hwm = self.hwm.max(new);
        true
    }

    /// create.lua for the window [start, start + size): under the protocol,
    /// refused unless the fence is `token` and the hwm is present and at
    /// least the window's end. Under `NoRaise` the script records the hwm
    /// itself (hwm = max(hwm, end)) after the fence check. Returns whether
    /// the window was opened; `keep_open` keeps its ids for the reserver.
    pub fn create(
        &mut self,
        rules: Rules,
        token: u8,
        start: u8,
        size: u8,
        keep_open: bool,
    ) -> bool {
        let end = start + size;
        let fenced = self.fence == token;
        let ok = match rules {
            Rules::CreateUnfenced => self.hwm >= end,
            Rules::NoRaise => {
                if fenced {
                    self.hwm = self.hwm.max(end);
                }
                fenced
            }
            Rules::Protocol
            | Rules::CreateAfterOwnRaise
            | Rules::FenceUnordered
            | Rules::RaiseUnfenced => fenced && self.hwm >= end,
        };
        if ok && keep_open {
            self.open |= ids(start, end);
        }
        ok
    }

    /// The reserver takes the lowest id of the open window with the lowest
    /// start (its cursor); None when no window is open here.
    pub fn reserve(&mut self) -> Option<u8> {
        if self.open == 0 {
            return None;
        }
        let id = self.open.trailing_zeros() as u8;
        self.open &= !(1 << id);
        Some(id)
    }

    /// Nothing to lose: a restart would change nothing.
    pub fn is_empty(&self) -> bool {
        *self == Shard::EMPTY
    }
}

impl Ghost {
    /// A window [start, end) was created somewhere.
    pub fn created(&mut self, start: u8, end: u8) {
        let w = ids(start, end);
        self.twice |= self.created & w;
        self.created |= w;
        self.windows += 1;
    }

    /// A reserver handed `id` out.
    pub fn handed(&mut self, id: u8) {
        let bit = 1 << id;
        self.handed_twice |= self.handed & bit;
        self.handed |= bit;
    }
}
