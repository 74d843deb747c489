//! The counterexamples of the `TwoPhase` tests, one step per line (each line
//! is words the step's narration contains: `explorer::guided`), written
//! once. The three runs begin alike: P1 creates the sequence, hands out 1
//! on nodes 1 and 2 while node 3's phase 2 is late, node 1 loses its data
//! and P2's read marks it. They differ in how tokens are named (`Greatest`
//! adopts its read's mark, `OfView` and `Final` draw a new token for the
//! view) and in what P2 does from its creation on, so each is built from
//! the shared prefix and its own steps ([`steps`]).

/// `a` then `b`, as one array of `C = A + B` steps (checked when the
/// constant is built, at compile time).
const fn steps<const A: usize, const B: usize, const C: usize>(
    a: [&'static str; A],
    b: [&'static str; B],
) -> [&'static str; C] {
    assert!(A + B == C, "a run's length is the sum of its parts");
    let mut out = [""; C];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    while i < C {
        out[i] = b[i - A];
        i += 1;
    }
    out
}

/// Steps 1 to 10 of every run: P1 reads [unborn:T1 x3], creates, and its
/// phase 1 succeeds on every node; P2 starts.
const P1_CREATES: [&str; 10] = [
    "P1 starts call 1",
    "node 1 executes P1's READ",
    "node 2 executes P1's READ",
    "node 3 executes P1's READ",
    "P1 stops waiting, counts node 1 unborn:T1, node 2 unborn:T1, node 3 unborn:T1: creates",
    "node 1 executes P1's CAS",
    "node 2 executes P1's CAS",
    "node 3 executes P1's CAS",
    "P1 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
    "P2 starts call 1",
];

/// The counterexample to the `TwoPhase` rules (`Greatest`), 29 steps: P1's
/// creation is T1, P2's read marks node 1 T3, and P2 adopts the older
/// creation T1, twice.
pub const FAILED_CREATION_RUN: [&str; 29] = steps(
    P1_CREATES,
    [
        "node 1 executes a CAS(creating:T1 -> 0)",
        "node 2 executes a CAS(creating:T1 -> 0)",
        "P1 stops waiting, counts node 1 0, node 2 0:",
        "node 1 executes P1's proposal 1",
        "node 2 executes P1's proposal 1",
        "P1 stops waiting, counts node 1 accepted 1, node 2 accepted 1:",
        "node 1 loses",
        "node 1 executes P2's READ",
        "P2 stops waiting, counts node 1 unborn:T3, node 2 creating:T1, node 3 creating:T1: creates",
        "node 1 executes P2's CAS(unborn:T3 -> creating:T1)",
        "P2 stops waiting, with no reply",
        "P2 stops waiting, counts node 1 creating:T1, node 2 1, node 3 creating:T1: creates",
        "P2 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
        "node 1 executes a CAS(creating:T1 -> 0)",
        "node 3 executes a CAS(creating:T1 -> 0)",
        "P2 stops waiting, counts node 1 0, node 3 0:",
        "node 1 executes P2's proposal 1",
        "node 3 executes P2's proposal 1",
        "P2 stops waiting, counts node 1 accepted 1, node 3 accepted 1",
    ],
);

/// Steps 1 to 19 with the tokens named as under `OfView` and `Final`:
/// P1's creation draws T2 for its view of marks T1 instead of taking T1,
/// P1's second read is T3, P2's read T4. Step 19 is P2's creation from the
/// view [unborn:T4, creating:T2, creating:T2].
const UP_TO_P2_CREATES: [&str; 19] = steps(
    P1_CREATES,
    [
        "node 1 executes a CAS(creating:T2 -> 0)",
        "node 2 executes a CAS(creating:T2 -> 0)",
        "P1 stops waiting, counts node 1 0, node 2 0:",
        "node 1 executes P1's proposal 1",
        "node 2 executes P1's proposal 1",
        "P1 stops waiting, counts node 1 accepted 1, node 2 accepted 1:",
        "node 1 loses",
        "node 1 executes P2's READ",
        "P2 stops waiting, counts node 1 unborn:T4, node 2 creating:T2, node 3 creating:T2: creates",
    ],
);

/// [`FAILED_CREATION_RUN`] with the tokens named as under `Final` (and
/// `OfView`). From step 19 on it is the `Greatest` run: P2 adopts the
/// older creation T2 from the view [unborn:T4, creating:T2, creating:T2], and
/// later from [creating:T2, 1, creating:T2].
pub const FAILED_CREATION_RUN_OF_VIEWS: [&str; 29] = steps(
    UP_TO_P2_CREATES,
    [
        "node 1 executes P2's CAS(unborn:T4 -> creating:T2)",
        "P2 stops waiting, with no reply",
        "P2 stops waiting, counts node 1 creating:T2, node 2 1, node 3 creating:T2: creates",
        "P2 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
        "node 1 executes a CAS(creating:T2 -> 0)",
        "node 3 executes a CAS(creating:T2 -> 0)",
        "P2 stops waiting, counts node 1 0, node 3 0:",
        "node 1 executes P2's proposal 1",
        "node 3 executes P2's proposal 1",
        "P2 stops waiting, counts node 1 accepted 1, node 3 accepted 1",
    ],
);

/// Steps 1 to 21 under `OfView`: P2 draws T5 for its view instead of
/// adopting T2, its phase 1 prepares node 1, and it stops waiting with no
/// reply (node 2 holds 1: that phase 1 failed).
const UP_TO_P2_PHASE_1_FAILS: [&str; 21] = steps(
    UP_TO_P2_CREATES,
    [
        "node 1 executes P2's CAS(unborn:T4 -> creating:T5)",
        "P2 stops waiting, with no reply",
    ],
);

/// The `FAILED_CREATION_RUN` under `OfView`, up to the step that no longer
/// happens: P2's view [creating:T5, 1, creating:T2] at step 22.
pub const BLOCKED_RUN: [&str; 22] = steps(
    UP_TO_P2_PHASE_1_FAILS,
    ["P2 stops waiting, counts node 1 creating:T5, node 2 1, node 3 creating:T2: creates"],
);

/// The counterexample to `CreationIds::OfView`, 30 steps: the blocked run up
/// to P2's failed phase 1 (step 21), then that phase 1's late CAS to node
/// 3, and the adoption of T5 beside the holder of 1.
pub const LATE_PHASE_1_RUN: [&str; 30] = steps(
    UP_TO_P2_PHASE_1_FAILS,
    [
        "node 3 executes a CAS(creating:T2 -> creating:T5)",
        "P2 stops waiting, counts node 1 creating:T5, node 2 1, node 3 creating:T5: creates with id T5",
        "P2 stops waiting, counts node 1 ok, node 2 ok, node 3 ok",
        "node 1 executes a CAS(creating:T5 -> 0)",
        "node 3 executes a CAS(creating:T5 -> 0)",
        "P2 stops waiting, counts node 1 0, node 3 0:",
        "node 1 executes P2's proposal 1",
        "node 3 executes P2's proposal 1",
        "P2 stops waiting, counts node 1 accepted 1, node 3 accepted 1",
    ],
);
