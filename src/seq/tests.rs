//! The sequence's own bookkeeping, without a node.

use super::MajoritySequence;

#[test]
fn the_floor_only_rises() {
    let mut seq = MajoritySequence::new("k");
    assert_eq!(seq.guess(), None);
    seq.observe(7);
    seq.observe(3);
    assert_eq!(seq.guess(), Some(8));
    seq.observe(u64::MAX);
    assert_eq!(seq.guess(), None);
}
