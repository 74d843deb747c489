//! The variables yaraus sets in the environment of the COMMAND it runs
//! (`run`, `lock`, `index`): named once here, set by commands/*.rs, and
//! listed in the ENVIRONMENT section of each one's man page, so that a
//! variable cannot be set under one name and documented under another.

pub const WORKER_ID: &str = "YARAUS_WORKER_ID";
pub const CLIENT_ID: &str = "YARAUS_CLIENT_ID";
pub const LOCK_NAME: &str = "YARAUS_LOCK_NAME";
pub const FENCING_TOKEN: &str = "YARAUS_FENCING_TOKEN";
pub const INDEX: &str = "YARAUS_INDEX";
pub const REPLICAS: &str = "YARAUS_REPLICAS";
pub const RANK: &str = "YARAUS_RANK";

/// What COMMAND gets from the subcommand `name`, with what each is.
#[cfg(test)]
pub fn of(name: &str) -> &'static [(&'static str, &'static str)] {
    match name {
        "run" => &[
            (
                WORKER_ID,
                "The leased worker id (also in place of --replacement in COMMAND's arguments).",
            ),
            (
                CLIENT_ID,
                "The client id that holds the lease, as stats and list name the holder.",
            ),
        ],
        "lock" => &[
            (LOCK_NAME, "NAME, the lock's name."),
            (
                FENCING_TOKEN,
                "The fencing token: greater than any handed out before for NAME (also in \
                 place of --replacement in COMMAND's arguments).",
            ),
        ],
        "index" => &[
            (
                INDEX,
                "This replica's index, 0-based (also <index> in COMMAND's arguments).",
            ),
            (REPLICAS, "How many replicas run (also <replicas>)."),
            (RANK, "This replica's rank, 1-based (also <rank>)."),
        ],
        _ => &[],
    }
}
