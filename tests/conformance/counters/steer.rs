//! A model with its random walks steered towards the steps that do
//! something.
//!
//! The walk draws uniformly among the events a state allows, and most of
//! them are decisions: one per subset of the replies a round may count
//! (8 to 27 for a read of three nodes), most of which count too few to do
//! anything. A repair needs a dozen particular steps in a row (a loss, a
//! pass that marks, the quarantine's ticks, a pass that finds the mark
//! ripe, a fresh read, the repair), which uniform walks never took in a
//! thousand. [`Steered`] is the same model, whose `candidates` list every
//! *fruitful* event several times: the same states, events and runs, the
//! walk's draw weighted. The exhaustive prefix is unchanged (it visits each
//! state once, however often an event is listed).

use yaraus_models::explorer::System;

/// How many times a fruitful event is listed.
const WEIGHT: usize = 6;

/// `model`, with `fruitful` events listed [`WEIGHT`] times.
pub struct Steered<M: System> {
    pub model: M,
    /// Whether event `e` from `s` to `after` does something worth weighting.
    pub fruitful: fn(&M, &M::State, M::Event, &M::State) -> bool,
}

impl<M: System> System for Steered<M> {
    type State = M::State;
    type Event = M::Event;
    type Violation = M::Violation;

    fn rules(&self) -> String {
        self.model.rules()
    }

    fn initial(&self) -> M::State {
        self.model.initial()
    }

    fn candidates(&self, s: &M::State, out: &mut Vec<M::Event>) {
        self.model.candidates(s, out);
        let mut more = Vec::new();
        for &e in out.iter() {
            let after = self.model.apply(s, e, None);
            if after.is_some_and(|after| (self.fruitful)(&self.model, s, e, &after)) {
                more.extend(std::iter::repeat_n(e, WEIGHT - 1));
            }
        }
        out.extend(more);
    }

    fn apply(&self, s: &M::State, e: M::Event, log: Option<&mut String>) -> Option<M::State> {
        self.model.apply(s, e, log)
    }

    fn canon(&self, s: M::State) -> M::State {
        self.model.canon(s)
    }

    fn violation(&self, s: &M::State) -> Option<M::Violation> {
        self.model.violation(s)
    }

    fn counted(&self, s: &M::State) -> u32 {
        self.model.counted(s)
    }

    fn counted_name(&self) -> &'static str {
        self.model.counted_name()
    }

    fn limit(&self) -> usize {
        self.model.limit()
    }

    fn start(&self) -> String {
        self.model.start()
    }

    fn show(&self, s: &M::State) -> String {
        self.model.show(s)
    }
}
