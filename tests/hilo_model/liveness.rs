//! Goals, not invariants: that the protocol does something (without
//! faults, windows get created, and every run may succeed), and what the
//! order of tokens in FENCE is for. A safety check says nothing of a model
//! in which nothing happens; these say something happens.
//!
//! Without faults (no lost reply, no restart), among runs that overlap the
//! one with the greatest token cannot be refused: FENCE refuses only a
//! greater token, RAISE and CREATE only another fence. So some run always
//! succeeds: no state has every run over with no window created. With a
//! FENCE that takes any token (last writer wins, variant (d)), two runs
//! can each fence one shard last and both be refused at RAISE: safe
//! (`findings.rs`), but every run can fail.

use crate::hilo_model::explorer::check;
use crate::hilo_model::findings::bounded;
use crate::hilo_model::model::{Goal, Model, Rules};

/// No lost reply, no restart.
fn faultless(rules: Rules, runs: usize) -> Model {
    Model {
        losses: false,
        ..bounded(rules, 2, runs, 0)
    }
}

#[test]
fn without_faults_windows_get_created() {
    let m = Model {
        goal: Goal::Created,
        ..faultless(Rules::Protocol, 2)
    };
    let o = check("protocol without faults, a window created", &m);
    let run = o.reached.expect("a window is created");
    assert_eq!(run.len(), 7, "start, two fences, plan, two raises, create");
    let o = check("protocol without faults", &faultless(Rules::Protocol, 2));
    assert_eq!(o.most, 4, "both runs create a window on each shard");
}

#[test]
fn without_faults_some_run_always_succeeds() {
    for runs in [2, 3] {
        let m = Model {
            goal: Goal::EveryRunFailed,
            ..faultless(Rules::Protocol, runs)
        };
        let o = check(
            &format!("protocol without faults, {runs} runs, every run failed"),
            &m,
        );
        assert!(o.reached.is_none(), "every run can fail");
        assert!(o.states > 100, "the goal was not sought");
    }
}

#[test]
fn d_a_fence_taking_any_token_can_fail_every_run() {
    let m = Model {
        goal: Goal::EveryRunFailed,
        ..faultless(Rules::FenceUnordered, 2)
    };
    let o = check("(d) fence unordered, without faults, every run failed", &m);
    assert!(o.violation.is_none());
    assert!(o.reached.is_some(), "some run always succeeds");
}
