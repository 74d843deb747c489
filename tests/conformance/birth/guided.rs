//! The model as the walk sees it: the same steps, offered with weights.
//!
//! A uniform random walk of `birth` rarely gets anywhere: a round's
//! decision comes in every subset of the replies it may count, most of
//! which allow nothing, and a round expires within three ticks; a walk
//! of sixty steps then never settles a creation nor rolls one back. So
//! each event is offered several times (the walk picks uniformly among
//! the offers): a request reaching its node and a decision counting a
//! reply from every node more often than the rest. Every run is still a
//! run of the model, step for step (`apply` is the model's); only how
//! often the walk takes each differs. A `lead` of events, taken first,
//! starts the walk later in a run (a stopped creation aged almost ripe).

use yaraus_models::explorer::System;
use yaraus_models::seq_model::birth::{Event, Model, R_NONE, State};

pub struct Guided {
    pub model: Model,
    /// Events taken first, one at a time, from the initial state.
    pub lead: Vec<Event>,
    pub pace: Pace,
}

/// How many times each kind of event is offered.
#[derive(Clone, Copy, Debug)]
pub struct Pace {
    /// A request reaching its node, by kind (read, proposal, preparation,
    /// settle, rollback: `Msg::kind`).
    pub execute: [usize; 5],
    /// A decision counting a reply from every node.
    pub decide: usize,
    /// One counting fewer (each of them).
    pub decide_fewer: usize,
    pub attempt: usize,
    pub tick: usize,
    pub lose: usize,
}

impl Pace {
    /// Requests reach their nodes soon.
    pub const PROMPT: Pace = Pace {
        execute: [4; 5],
        decide: 4,
        decide_fewer: 1,
        attempt: 2,
        tick: 2,
        lose: 1,
    };
    /// Settles and rollbacks linger while time passes: they land late,
    /// or not at all.
    pub const LATE: Pace = Pace {
        execute: [4, 4, 4, 1, 1],
        tick: 3,
        ..Pace::PROMPT
    };
}

impl Guided {
    /// How many times `e` is offered.
    fn weight(&self, e: Event) -> usize {
        let pace = self.pace;
        match e {
            Event::Decide(_, codes) if codes.contains(&R_NONE) => pace.decide_fewer,
            Event::Decide(..) => pace.decide,
            Event::Execute(x) => pace.execute[usize::from(x.kind)],
            Event::Attempt(_) => pace.attempt,
            Event::Tick => pace.tick,
            Event::Lose(_) => pace.lose,
        }
    }

    /// The lead's next event, if `s` is on it.
    fn led(&self, s: &State) -> Option<Event> {
        let mut at = self.model.initial();
        for &e in &self.lead {
            if at == *s {
                return Some(e);
            }
            at = self.model.apply(&at, e, None).expect("the lead is a run");
        }
        None
    }
}

impl System for Guided {
    type State = State;
    type Event = Event;
    type Violation = <Model as System>::Violation;

    fn rules(&self) -> String {
        self.model.rules()
    }
    fn initial(&self) -> State {
        self.model.initial()
    }
    fn candidates(&self, s: &State, out: &mut Vec<Event>) {
        if let Some(e) = self.led(s) {
            out.clear();
            out.push(e);
            return;
        }
        let mut each = Vec::new();
        self.model.candidates(s, &mut each);
        out.clear();
        for e in each {
            out.extend(std::iter::repeat_n(e, self.weight(e)));
        }
    }
    fn apply(&self, s: &State, e: Event, log: Option<&mut String>) -> Option<State> {
        self.model.apply(s, e, log)
    }
    fn violation(&self, s: &State) -> Option<Self::Violation> {
        self.model.violation(s)
    }
    fn counted(&self, s: &State) -> u32 {
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
    fn show(&self, s: &State) -> String {
        self.model.show(s)
    }
}
