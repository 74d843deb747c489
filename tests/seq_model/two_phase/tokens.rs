//! The bookkeeping of the `TwoPhase` state: requests in flight, and the
//! numbering of tokens (see "Tokens" in `mod.rs`). A state is normalized
//! after every step: requests that can no longer change anything are
//! forgotten, ranked tokens are renumbered by rank without gaps, unranked
//! ones by who sent their READs and where, and the requests are sorted.
//! Two states that differ only by the numbering are then equal, which is
//! what keeps the search within reach.

use super::*;

impl State {
    pub fn msgs(&self) -> &[Msg] {
        &self.msgs[..usize::from(self.len)]
    }

    pub fn push(&mut self, msg: Msg) {
        let len = usize::from(self.len);
        assert!(len < CAP, "more than {CAP} requests in flight");
        self.msgs[len] = msg;
        self.len += 1;
    }

    pub fn remove_at(&mut self, i: usize) {
        let len = usize::from(self.len);
        self.msgs.copy_within(i + 1..len, i);
        self.msgs[len - 1] = EMPTY;
        self.len -= 1;
    }

    pub fn retain(&mut self, keep: impl Fn(&State, Msg) -> bool) {
        let mut out = 0;
        for i in 0..usize::from(self.len) {
            let x = self.msgs[i];
            if keep(self, x) {
                self.msgs[out] = x;
                out += 1;
            }
        }
        for slot in &mut self.msgs[out..usize::from(self.len)] {
            *slot = EMPTY;
        }
        self.len = out as u8;
    }

    /// Whether some request in flight may still set node n to `c`, or
    /// (`CreationIds::OfView`) a creation from an interned view, whose id a
    /// proposer that reads that view again draws again.
    fn may_become(&self, n: u8, c: u8) -> bool {
        let interned =
            is_prepared(c) && self.views.iter().any(|v| *v != NO_VIEW && v[N] == token(c));
        interned
            || self.msgs().iter().any(|x| {
                x.node == n
                    && ((is_mark(c) && x.kind == READ && x.a == token(c))
                        || (x.kind == CAS && x.b == c))
            })
    }

    /// Whether a request whose round is over may still change its node.
    fn may_change(&self, x: Msg, no_more_losses: bool) -> bool {
        let c = self.nodes[usize::from(x.node)];
        match x.kind {
            // Only a missing key is written.
            READ => c == MISSING || !no_more_losses,
            // Without a loss, a holder's counter only grows.
            PROPOSE => !(no_more_losses && holder(c) && c >= x.a),
            // Tokens are unique: `from` comes back only through a request
            // (or a view read again).
            _ => x.a != x.b && (c == x.a || self.may_become(x.node, x.a)),
        }
    }

    /// Applies a renumbering of ranked tokens everywhere.
    fn map_tokens(&mut self, f: &[u8; TOKENS as usize]) {
        self.nodes = self.nodes.map(|c| map_cell(c, f));
        for x in &mut self.msgs[..usize::from(self.len)] {
            match x.kind {
                READ if x.a < UNRANKED => x.a = f[usize::from(x.a)],
                CAS => {
                    x.a = map_cell(x.a, f);
                    x.b = map_cell(x.b, f);
                }
                _ => {}
            }
        }
        for pr in &mut self.p {
            match pr.phase {
                CREATING => {
                    pr.view = pr.view.map(|c| map_cell(c, f));
                    pr.id = f[usize::from(pr.id)];
                }
                READING => {
                    for h in &mut pr.hist {
                        let mut out = *h & 0xffff_ffff;
                        for t in 0..TOKENS {
                            let to = f[usize::from(t)];
                            if *h >> (32 + t) & 1 != 0 {
                                out |= 1 << (32 + to);
                            }
                            if *h >> (48 + t) & 1 != 0 {
                                out |= 1 << (48 + to);
                            }
                        }
                        *h = out;
                    }
                }
                _ => {}
            }
        }
        for v in &mut self.views {
            if *v != NO_VIEW {
                for c in &mut v[..N] {
                    *c = map_cell(*c, f);
                }
                v[N] = f[usize::from(v[N])];
            }
        }
        let old = self.names.ranked;
        for t in 0..usize::from(self.tokens) {
            let to = usize::from(f[t]);
            if to < usize::from(TOKENS) {
                self.names.ranked[to] = old[t];
            }
        }
    }

    /// The ranked tokens referenced anywhere (bit t).
    fn referenced(&self) -> u32 {
        let cell = |c: u8| if has_token(c) { 1 << token(c) } else { 0 };
        let mut used = 0u32;
        for &c in &self.nodes {
            used |= cell(c);
        }
        for x in self.msgs() {
            match x.kind {
                READ if x.a < UNRANKED => used |= 1 << x.a,
                CAS => used |= cell(x.a) | cell(x.b),
                _ => {}
            }
        }
        for pr in &self.p {
            match pr.phase {
                CREATING => {
                    used |= pr.view.iter().fold(1 << pr.id, |u, &c| u | cell(c));
                }
                READING => {
                    for h in pr.hist {
                        used |= (h >> 32) as u32 & 0xffff;
                        used |= (h >> 48) as u32 & 0xffff;
                    }
                }
                _ => {}
            }
        }
        used
    }

    /// Makes the first mark of unranked token `label` rank r among the
    /// ranked tokens (r = 0: below all of them).
    pub fn rank(&mut self, label: u8, r: u8) -> u8 {
        assert!(self.tokens < TOKENS - 1, "tokens outgrew the model");
        let mut f = [0; TOKENS as usize];
        for (t, slot) in f.iter_mut().enumerate() {
            *slot = if (t as u8) < r { t as u8 } else { t as u8 + 1 };
        }
        self.map_tokens(&f);
        for x in &mut self.msgs[..usize::from(self.len)] {
            if x.kind == READ && x.a == UNRANKED + label {
                x.a = r;
            }
        }
        self.names.ranked[usize::from(r)] = self.names.unranked[usize::from(label)];
        self.tokens += 1;
        r
    }

    /// `CreationIds::OfView`: the id of a creation from `view` (all N keys,
    /// no holder): the view's interned id, else a fresh token (ranked
    /// lowest: the order plays no part), interned. Returns the view
    /// renumbered with it.
    pub fn intern(&mut self, view: [u8; N]) -> ([u8; N], u8) {
        if let Some(v) = self.views.iter().find(|v| v[..N] == view) {
            return (view, v[N]);
        }
        assert!(self.tokens < TOKENS - 1, "tokens outgrew the model");
        let mut f = [0; TOKENS as usize];
        for (t, slot) in f.iter_mut().enumerate() {
            *slot = t as u8 + 1;
        }
        self.map_tokens(&f);
        self.tokens += 1;
        self.names.minted += 1;
        self.names.ranked[0] = self.names.minted;
        let view = view.map(|c| map_cell(c, &f));
        let slot = self
            .views
            .iter_mut()
            .find(|v| **v == NO_VIEW)
            .expect("more interned views than VIEWS");
        *slot = [view[0], view[1], view[2], 0];
        (view, 0)
    }

    /// Forgets the interned views that no proposer can read again (a token
    /// of the view is nowhere else) or whose id is nowhere else (a fresh
    /// token stands for it).
    fn prune_views(&mut self) {
        let used = self.referenced();
        let there = |c: u8| !has_token(c) || used & (1 << token(c)) != 0;
        for v in &mut self.views {
            if *v != NO_VIEW && !(v[..N].iter().all(|&c| there(c)) && used & (1 << v[N]) != 0) {
                *v = NO_VIEW;
            }
        }
        self.views.sort_unstable();
    }

    /// A label for a new unranked token, named for the narration.
    pub fn mint(&mut self) -> u8 {
        let label = self
            .msgs()
            .iter()
            .filter(|x| x.kind == READ && x.a >= UNRANKED)
            .map(|x| x.a - UNRANKED + 1)
            .max()
            .unwrap_or(0);
        assert!(label < LABELS, "unranked tokens outgrew the model");
        self.names.minted += 1;
        self.names.unranked[usize::from(label)] = self.names.minted;
        UNRANKED + label
    }

    /// Forgets the requests that can no longer change anything and the
    /// tokens no longer anywhere, and numbers the rest canonically, so that
    /// equal situations are equal states.
    pub fn normalize(&mut self, no_more_losses: bool) {
        // A request may be the only way another's `from` comes back: prune
        // against the requests as they were, until nothing changes.
        loop {
            let before = *self;
            self.retain(|_, x| x.who != NONE || before.may_change(x, no_more_losses));
            self.prune_views();
            if self.len == before.len && self.views == before.views {
                break;
            }
        }
        // Ranked tokens: keep the order, close the gaps.
        let used = self.referenced();
        let mut f = [0; TOKENS as usize];
        let mut next = 0;
        for (t, slot) in f.iter_mut().enumerate() {
            if used & (1 << t) != 0 {
                *slot = next;
                next += 1;
            } else {
                *slot = TOKENS;
            }
        }
        if next != self.tokens || used != (1 << next) - 1 {
            self.map_tokens(&f);
            self.tokens = next;
        }
        // Unranked tokens: numbered by who sent their READs, and where.
        let mut sig = [(u8::MAX, 0u8, 0u8); LABELS as usize];
        for x in self.msgs() {
            if x.kind == READ && x.a >= UNRANKED {
                let l = usize::from(x.a - UNRANKED);
                sig[l].0 = x.who;
                sig[l].1 |= 1 << x.node;
                sig[l].2 = l as u8;
            }
        }
        if sig.iter().any(|s| s.1 != 0) {
            sig.sort_unstable_by_key(|s| (s.1 == 0, s.0, s.1));
            let mut g = [0u8; LABELS as usize];
            let old = self.names.unranked;
            for (new, s) in sig.iter().enumerate() {
                if s.1 != 0 {
                    g[usize::from(s.2)] = new as u8;
                    self.names.unranked[new] = old[usize::from(s.2)];
                }
            }
            for x in &mut self.msgs[..usize::from(self.len)] {
                if x.kind == READ && x.a >= UNRANKED {
                    x.a = UNRANKED + g[usize::from(x.a - UNRANKED)];
                }
            }
        }
        let len = usize::from(self.len);
        self.msgs[..len].sort_unstable();
        self.views.sort_unstable();
    }

    /// The state with P1 and P2 swapped (not normalized).
    pub fn mirrored(&self) -> State {
        let mut t = *self;
        t.p.swap(0, 1);
        for x in &mut t.msgs[..usize::from(t.len)] {
            if x.who != NONE {
                x.who = 1 - x.who;
            }
        }
        t
    }

    /// A token's name in the narration.
    pub fn token_name(&self, t: u8) -> String {
        format!("T{}", self.names.ranked[usize::from(t)])
    }

    pub fn label_name(&self, a: u8) -> String {
        if a >= UNRANKED {
            format!("T{}", self.names.unranked[usize::from(a - UNRANKED)])
        } else {
            self.token_name(a)
        }
    }

    pub fn cell_text(&self, c: u8) -> String {
        if c == MISSING {
            "MISSING".to_string()
        } else if is_mark(c) {
            format!("unborn:{}", self.token_name(token(c)))
        } else if is_prepared(c) {
            format!("creating:{}", self.token_name(token(c)))
        } else {
            c.to_string()
        }
    }

    /// The ranked tokens, lowest first.
    pub fn order_text(&self) -> String {
        (0..self.tokens)
            .map(|t| self.token_name(t))
            .collect::<Vec<_>>()
            .join(" < ")
    }

    pub fn initial_names(count: u8) -> Names {
        let mut ranked = [0; TOKENS as usize];
        for (t, slot) in ranked.iter_mut().enumerate() {
            *slot = t as u8 + 1;
        }
        Names {
            ranked,
            unranked: [0; LABELS as usize],
            minted: count,
        }
    }
}
