//! The walk of a model beside the servers: the exhaustive prefix and the
//! seeded random walks, each step compared (see `mod.rs`).

use super::{Nodes, Replay};
use std::collections::HashSet;
use std::fmt::Write as _;
use yaraus_models::explorer::System;

/// How far a test walks its model.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Every state reachable within this many steps is visited (each
    /// through the first run found to it).
    pub depth: usize,
    /// Every transition out of a state within this many steps is taken
    /// too (at most `depth`): a step into a state that a shorter run
    /// reached first (a refusal where a lost reply led already) is
    /// compared as well. Each costs a replay of its run.
    pub transitions: usize,
    /// Random walks after the prefix (`CONFORMANCE_WALKS` overrides).
    pub walks: usize,
    /// The longest random walk, in steps.
    pub steps: usize,
}

type State<R> = <<R as Replay>::Model as System>::State;
type Event<R> = <<R as Replay>::Model as System>::Event;

/// Walks `r`'s model under `plan` and compares each step with the servers;
/// panics at the first difference. Returns how many steps it compared.
pub fn walk<R: Replay>(r: &mut R, plan: Plan) -> usize {
    let seed = env_number("CONFORMANCE_SEED").unwrap_or_else(|| fastrand::u64(..));
    let walks = env_number("CONFORMANCE_WALKS").map_or(plan.walks, |n| n as usize);
    eprintln!(
        "conformance {}: depth {}, {walks} walks of up to {} steps, CONFORMANCE_SEED={seed}",
        r.name(),
        plan.depth,
        plan.steps
    );
    let mut nodes = Nodes::start(r.nodes());
    let mut compared = 0;
    let prefix = prefix_runs(r.model(), plan.depth, plan.transitions);
    for run in &prefix {
        compared += replay(r, &mut nodes, run, &Origin::Prefix);
    }
    eprintln!(
        "conformance {}: the prefix compared {compared} steps in {} runs",
        r.name(),
        prefix.len()
    );
    let mut rng = fastrand::Rng::with_seed(seed);
    for w in 0..walks {
        let run = random_run(r.model(), &mut rng, plan.steps);
        compared += replay(r, &mut nodes, &run, &Origin::Walk { seed, walk: w });
    }
    compared
}

/// Replays `runs` of `r`'s model (each from the initial state) beside the
/// servers, each step compared as [`walk`] compares it: runs a family
/// chooses because the prefix, which reaches each state once, may never
/// take their last transition (its state was reached first by another
/// run). Returns how many steps it compared.
pub fn replay_runs<R: Replay>(r: &mut R, runs: &[Vec<Event<R>>]) -> usize {
    eprintln!("conformance {}: {} chosen runs", r.name(), runs.len());
    let mut nodes = Nodes::start(r.nodes());
    let mut compared = 0;
    for (i, run) in runs.iter().enumerate() {
        compared += replay(r, &mut nodes, run, &Origin::Chosen(i));
    }
    compared
}

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value}: not a number")),
    )
}

enum Origin {
    Prefix,
    Chosen(usize),
    Walk { seed: u64, walk: usize },
}

/// The events `m` can take in `s`.
fn enabled<M: System>(m: &M, s: &M::State) -> Vec<(M::Event, M::State)> {
    let mut candidates = Vec::new();
    m.candidates(s, &mut candidates);
    candidates
        .into_iter()
        .filter_map(|e| m.apply(s, e, None).map(|next| (e, next)))
        .collect()
}

/// One run to each state within `depth` steps of the initial one, breadth
/// first, and one run through each transition out of a state within
/// `transitions` steps; only the longest of each chain (its prefixes are
/// compared on the way).
fn prefix_runs<M: System>(m: &M, depth: usize, transitions: usize) -> Vec<Vec<M::Event>> {
    assert!(
        transitions <= depth,
        "transitions {transitions} beyond depth {depth}"
    );
    let initial = m.initial();
    let mut seen: HashSet<M::State> = HashSet::from([initial]);
    let mut frontier: Vec<(Vec<M::Event>, M::State)> = vec![(Vec::new(), initial)];
    let mut runs = Vec::new();
    for level in 0..depth {
        let mut next = Vec::new();
        for (run, s) in frontier {
            let mut extended = false;
            for (e, after) in enabled(m, &s) {
                let mut longer = run.clone();
                longer.push(e);
                if seen.insert(after) {
                    next.push((longer, after));
                    extended = true;
                } else if level < transitions {
                    runs.push(longer);
                    extended = true;
                }
            }
            if !extended && !run.is_empty() {
                runs.push(run);
            }
        }
        frontier = next;
    }
    runs.extend(frontier.into_iter().map(|(run, _)| run));
    runs
}

fn random_run<M: System>(m: &M, rng: &mut fastrand::Rng, steps: usize) -> Vec<M::Event> {
    let mut s = m.initial();
    let mut run = Vec::new();
    while run.len() < steps {
        let choices = enabled(m, &s);
        if choices.is_empty() {
            break;
        }
        let (e, after) = choices[rng.usize(..choices.len())];
        run.push(e);
        s = after;
    }
    run
}

/// Replays `run` from empty servers, comparing every step.
fn replay<R: Replay>(r: &mut R, nodes: &mut Nodes, run: &[Event<R>], origin: &Origin) -> usize {
    nodes.reset();
    let mut s = r.model().initial();
    r.setup(nodes, &s);
    compare_state(r, nodes, &s, run, 0, origin);
    for (i, &e) in run.iter().enumerate() {
        let after = r
            .model()
            .apply(&s, e, None)
            .expect("the run replays in the model");
        let expected = r.expected(&s, e, &after);
        let answered = r.perform(nodes, &s, e);
        if expected != answered {
            fail(
                r,
                run,
                i + 1,
                origin,
                &format!("the model expects the answer {expected:?}\nRedis answered {answered:?}"),
            );
        }
        s = after;
        compare_state(r, nodes, &s, run, i + 1, origin);
    }
    run.len()
}

fn compare_state<R: Replay>(
    r: &mut R,
    nodes: &mut Nodes,
    s: &State<R>,
    run: &[Event<R>],
    step: usize,
    origin: &Origin,
) {
    let expected = r.project(s);
    let held = r.observe(nodes);
    if expected != held {
        let what = format!("the model's state projects to {expected:?}\nthe servers hold {held:?}");
        fail(r, run, step, origin, &what);
    }
}

fn fail<R: Replay>(r: &R, run: &[Event<R>], step: usize, origin: &Origin, what: &str) -> ! {
    let m = r.model();
    let mut story = format!("{}\n", m.start());
    let mut s = m.initial();
    for (i, &e) in run[..step].iter().enumerate() {
        let mut words = String::new();
        s = m.apply(&s, e, Some(&mut words)).expect("the run replays");
        let _ = writeln!(story, "{:>3}. {words}  {}", i + 1, m.show(&s));
    }
    let replay = match origin {
        Origin::Prefix => "the exhaustive prefix (no seed needed)".to_string(),
        Origin::Chosen(i) => format!("chosen run {i} (no seed needed)"),
        Origin::Walk { seed, walk } => format!("walk {walk} of CONFORMANCE_SEED={seed}"),
    };
    panic!(
        "conformance {}: step {step} differs, in {replay}\n{story}{what}\n",
        r.name()
    );
}
