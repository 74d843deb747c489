//! What each script does to the keys, and what it answers: the model's
//! reading of `src/lease/*.lua` and of `init`'s sequence of them.

use super::*;

impl State {
    pub fn slot(&self, id: u8) -> &Slot {
        &self.ids[id as usize - 1]
    }

    fn slot_mut(&mut self, id: u8) -> &mut Slot {
        &mut self.ids[id as usize - 1]
    }

    /// The present ids in the order acquire takes them (the sorted set's:
    /// score, then member name, which sorts like the number).
    pub fn by_score(&self) -> Vec<u8> {
        let mut ids: Vec<u8> = (1..=IDS as u8)
            .filter(|&id| self.slot(id).present)
            .collect();
        ids.sort_by_key(|&id| (self.slot(id).score, id));
        ids
    }

    /// The present ids whose lease runs, by number.
    pub fn live(&self) -> Vec<u8> {
        (1..=IDS as u8)
            .filter(|&id| self.slot(id).present && self.slot(id).score == Score::Live)
            .collect()
    }

    /// The largest id present (what `init` measures: the pool is `1..=k`,
    /// but for a hole two inits racing may leave).
    pub fn top(&self) -> u8 {
        (1..=IDS as u8)
            .filter(|&id| self.slot(id).present)
            .max()
            .unwrap_or(0)
    }

    /// A score after every score given so far ([`Score::At`] ranks are
    /// renumbered after each step).
    fn fresh(&self) -> Score {
        let most = self
            .ids
            .iter()
            .filter_map(|slot| match slot.score {
                Score::At(r) => Some(r),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        Score::At(most + 1)
    }

    /// Ranks `1..=k` in the same order, so that equal orders are one state.
    pub(super) fn renumber(&mut self) {
        let mut ranks: Vec<u8> = self
            .ids
            .iter()
            .filter_map(|slot| match slot.score {
                Score::At(r) => Some(r),
                _ => None,
            })
            .collect();
        ranks.sort_unstable();
        for slot in &mut self.ids {
            if let Score::At(r) = slot.score {
                slot.score = Score::At(ranks.iter().position(|&x| x == r).unwrap() as u8 + 1);
            }
        }
    }

    /// Removes the present ids among `lo..=hi` (`shrink.lua`), their
    /// holders' leases taken; how many there were. Their records stay.
    fn remove(&mut self, lo: u8, hi: u8) -> u8 {
        let mut removed = 0;
        for id in lo..=hi.min(IDS as u8) {
            let slot = self.slot_mut(id);
            if slot.present {
                removed += 1;
            }
            slot.present = false;
            slot.score = Score::Never;
            slot.owner = None;
            for client in &mut self.clients {
                if let Phase::Holding {
                    id: held, in_force, ..
                } = &mut client.phase
                    && *held == id
                {
                    *in_force = false;
                }
            }
        }
        removed
    }

    /// `resize.lua` for `1..=to`: the leased ids outside it with their
    /// owners; records the range unless refused.
    fn decide(&mut self, to: u8, force: bool) -> (bool, Vec<(u8, Who)>) {
        let leased: Vec<(u8, Who)> = self
            .live()
            .into_iter()
            .filter(|&id| id > to)
            .map(|id| (id, who(self.slot(id).owner)))
            .collect();
        let recorded = leased.is_empty() || force;
        if recorded {
            self.range = to;
        }
        (recorded, leased)
    }
}

/// An owner as the scripts name it (an owner is always a client).
fn who(owner: Option<u8>) -> Who {
    Who::Client(owner.expect("a leased id has an owner"))
}

fn raise(record: Option<Record>, horizon: u8, writer: u8) -> Record {
    Record {
        horizon: record.map_or(horizon, |r| r.horizon.max(horizon)),
        writer,
    }
}

impl Model {
    /// The state after `e` and what its script answers; `None` when `e` is
    /// not possible in `s`.
    pub fn step(&self, s: &State, e: Event) -> Option<(State, Reply)> {
        if s.left == 0 {
            return None;
        }
        let mut n = *s;
        n.left -= 1;
        let reply = match e {
            Event::Acquire { c, lasts, horizon } => self.acquire(&mut n, c, lasts, horizon)?,
            Event::Renew { c, lasts, horizon } => self.renew(&mut n, c, lasts, horizon)?,
            Event::Release { c, how } => self.release(&mut n, c, how)?,
            Event::Init { to, force } => Reply::Init(self.init(&mut n, to, force)),
            Event::Decide { to, force } => {
                if n.pending.is_some() || to >= n.top() {
                    return None;
                }
                let top = n.top();
                let (recorded, leased) = n.decide(to, force);
                if recorded {
                    n.pending = Some((to + 1, top));
                }
                Reply::Decided { recorded, leased }
            }
            Event::Shrink => {
                let (lo, hi) = n.pending.take()?;
                if n.range != lo - 1 && !Flaw::unchecked_removal(self.flaw) {
                    Reply::Overtaken
                } else {
                    Reply::Shrunk(n.remove(lo, hi))
                }
            }
        };
        n.renumber();
        if n.broken.is_none() {
            n.broken = self.lowered(s, &n, e);
        }
        Some((n, reply))
    }

    fn acquire(&self, n: &mut State, c: u8, lasts: bool, horizon: u8) -> Option<Reply> {
        let client = &mut n.clients[c as usize];
        if client.phase != Phase::Idle {
            return None;
        }
        if !client.named {
            client.named = true;
            n.counters.client_id_count += 1;
        }
        n.counters.get_id_count += 1;
        let head = n.by_score()[0];
        if n.slot(head).score == Score::Live {
            n.counters.get_id_no_available_id += 1;
            return Some(Reply::Exhausted {
                client: Who::Client(c),
            });
        }
        let score = if lasts { Score::Live } else { n.fresh() };
        let slot = n.slot_mut(head);
        let found = slot.record;
        slot.score = score;
        slot.owner = Some(c);
        slot.record = Some(raise(found, horizon, c));
        n.counters.get_id_success += 1;
        let client = &mut n.clients[c as usize];
        client.last_horizon = horizon;
        client.phase = Phase::Holding {
            id: head,
            found,
            in_force: lasts,
            lost: false,
        };
        Some(Reply::Leased {
            client: Who::Client(c),
            id: head,
            lasts,
            found,
        })
    }

    fn renew(&self, n: &mut State, c: u8, lasts: bool, horizon: u8) -> Option<Reply> {
        let client = n.clients[c as usize];
        let Phase::Holding {
            id,
            found,
            lost: false,
            ..
        } = client.phase
        else {
            return None;
        };
        n.counters.extend_ttl_count += 1;
        if horizon < client.last_horizon {
            n.counters.clock_step_back += 1;
        }
        n.clients[c as usize].last_horizon = horizon;
        let slot = *n.slot(id);
        let ours = slot.present && slot.owner == Some(c);
        // The flaw: the owner check gone, the id's presence still checked.
        let writes = ours || (self.flaw == Some(Flaw::RenewAnyOwner) && slot.present);
        if !writes {
            n.counters.extend_ttl_ownership_error += 1;
            n.clients[c as usize].phase = Phase::Holding {
                id,
                found,
                in_force: false,
                lost: true,
            };
            return Some(Reply::Refused {
                owner: slot.owner.map(Who::Client),
            });
        }
        if !ours {
            n.broken
                .get_or_insert(Violation::ForeignWrite { id, client: c });
        }
        if slot.score != Score::Live {
            n.counters.extend_ttl_expire_warning += 1;
        }
        let score = if lasts { Score::Live } else { n.fresh() };
        let s = n.slot_mut(id);
        s.score = score;
        s.record = Some(raise(slot.record, horizon, c));
        n.counters.extend_ttl_success += 1;
        n.clients[c as usize].phase = Phase::Holding {
            id,
            found,
            in_force: lasts,
            lost: false,
        };
        Some(Reply::Extended { lasts })
    }

    fn release(&self, n: &mut State, c: u8, how: How) -> Option<Reply> {
        let Phase::Holding { id, found, .. } = n.clients[c as usize].phase else {
            return None;
        };
        n.clients[c as usize].phase = Phase::Idle;
        let slot = *n.slot(id);
        let ours = slot.present && slot.owner == Some(c);
        // The flaw: the owner check gone, the id's presence still checked.
        let writes = ours || (self.flaw == Some(Flaw::ReleaseAnyOwner) && slot.present);
        if !writes {
            return Some(Reply::Released(false));
        }
        if how == How::Leftover && slot.score != Score::Live {
            return Some(Reply::Released(false));
        }
        if !ours {
            n.broken
                .get_or_insert(Violation::ForeignWrite { id, client: c });
        }
        let score = n.fresh();
        let s = n.slot_mut(id);
        s.score = score;
        s.record = match how {
            How::Ended(now) => s.record.map(|r| Record {
                horizon: match (self.flaw, found) {
                    (Some(Flaw::EndedBelowFound), _) | (_, None) => now,
                    (_, Some(f)) => f.horizon.max(now),
                },
                writer: r.writer,
            }),
            How::Unused | How::Leftover => found,
            How::Untouched => s.record,
        };
        Some(Reply::Released(true))
    }

    /// The property of records: a step that lowers one is its owner's
    /// release, and then not below what the owner's lease found.
    fn lowered(&self, s: &State, n: &State, e: Event) -> Option<Violation> {
        let horizon = |r: Option<Record>| r.map(|r| r.horizon);
        for id in 1..=IDS as u8 {
            let after = horizon(n.slot(id).record);
            if after >= horizon(s.slot(id).record) {
                continue;
            }
            let allowed = match e {
                Event::Release { c, .. } => matches!(
                    s.clients[c as usize].phase,
                    Phase::Holding { id: held, found, .. }
                        if held == id && s.slot(id).owner == Some(c) && after >= horizon(found)
                ),
                _ => false,
            };
            if !allowed {
                return Some(Violation::RecordLowered { id });
            }
        }
        None
    }
}

/// Two clients in force on `id`.
pub(super) fn shared(s: &State, id: u8) -> Option<Violation> {
    let in_force = s
        .clients
        .iter()
        .filter(
            |c| matches!(c.phase, Phase::Holding { id: held, in_force: true, .. } if held == id),
        )
        .count();
    (in_force > 1).then_some(Violation::SharedId { id })
}

/// The pool not its recorded range, though no init is in flight.
pub(super) fn out_of_range(s: &State) -> Option<Violation> {
    if s.pending.is_some() {
        return None;
    }
    (1..=IDS as u8).find_map(|id| match (s.slot(id).present, id <= s.range) {
        (false, true) => Some(Violation::LostId { id }),
        (true, false) => Some(Violation::StrayId { id }),
        _ => None,
    })
}

impl Model {
    /// `yaraus init` to `1..=to` (`src/lease/init.rs`): nothing when the
    /// pool is that already; else from the recorded range, or the one
    /// measured when the count says an init was cut short, decide, add the
    /// whole range (score 0 for the ids it lacked), remove those beyond.
    fn init(&self, n: &mut State, to: u8, force: bool) -> InitReply {
        let held = n.ids.iter().filter(|slot| slot.present).count() as u8;
        if n.range == to && held == to {
            return InitReply::Already { to };
        }
        let from = if held == n.range { n.range } else { n.top() };
        let (recorded, _) = n.decide(to, force);
        if !recorded {
            return InitReply::Refused;
        }
        let first = match self.flaw {
            Some(Flaw::RemovalIgnoresRangeAddsPastTheTop) => from + 1,
            _ => 1,
        };
        let mut added = 0;
        for id in first..=to {
            let slot = n.slot_mut(id);
            if !slot.present {
                slot.present = true;
                slot.score = Score::Never;
                added += 1;
            }
        }
        let removed = if from > to { n.remove(to + 1, from) } else { 0 };
        InitReply::Resized {
            from: (1, from),
            to,
            added,
            removed,
        }
    }
}
