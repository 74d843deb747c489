//! (doc to come)

use crate::explorer::check;
use crate::model::{Model, Rules, Spread, Watch};

#[test]
fn probe() {
    for (shards, runs, spread) in [
        (2, 3, Spread::One),
        (2, 3, Spread::Either),
        (3, 3, Spread::One),
    ] {
        let m = Model {
            spread,
            ..Model::new(Rules::Protocol, shards, runs, 1)
        };
        check("probe", &m);
    }
    let m = Model {
        spread: Spread::Either,
        size: 2,
        watch: Watch::Ids,
        ..Model::new(Rules::Protocol, 2, 2, 1)
    };
    check("probe ids", &m);
    for rules in [
        Rules::CreateUnfenced,
        Rules::NoRaise,
        Rules::CreateAfterOwnRaise,
        Rules::FenceUnordered,
        Rules::RaiseUnfenced,
    ] {
        let m = Model {
            spread: Spread::Either,
            ..Model::new(rules, 2, 2, 1)
        };
        check("variant", &m);
    }
    check("two restarts", &Model::new(Rules::Protocol, 2, 2, 2));
    check("one shard", &Model::new(Rules::Protocol, 1, 2, 1));
}
